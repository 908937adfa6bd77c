#!/usr/bin/env node
// Garblet's authenticated garbling beside emp-ag2pc's (Wang–Ranellucci–Katz 2017), in one run:
// emp-ag2pc's own test programs (private AES-128, a circuit of 2^20 ANDs, SHA-256, 2^20 AND
// triples) and `garblet bench malicious --json`, alternated, on this machine. Run by hand; not
// part of `npm test`.
//
//   node bench/ag2pc-side-by-side.mjs --emp-ag2pc DIR [--garblet PATH] [--rounds 3] [--log2 20] [--peer-only]
//
// DIR is an emp-ag2pc checkout you built yourself (Release, its default -O3 -march=native) at the
// commit below, against the emp-tool and emp-ot below, both installed (cmake
// -DCMAKE_INSTALL_PREFIX=PREFIX) into a prefix of their own: emp-ag2pc at this commit does not
// configure against emp-tool's reorganised main line. Then, in DIR:
//
//   cmake -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=PREFIX . &&
//   make -C build test_aes test_simple_circuit test_sha256 test_triple
//
// This script runs build/bin/test_{aes,simple_circuit,sha256,triple} through emp-ag2pc's `run`
// launcher (two processes on loopback, ports 12345 and up, in a private network namespace where
// `unshare` allows one; there the loopback interface's counters also give the bytes both parties
// sent, TCP/IP headers included). Nothing here fetches or builds emp code. PATH is a release
// `garblet` (default target/release/garblet: `cargo build --release -p garblet-server --bin
// garblet`); --peer-only skips it.
//
// What is compared: private AES-128 (Bristol's AES-non-expanded, 6,800 ANDs) as emp-ag2pc's
// test_aes times it, in its four phases — set-up (the constructor: base OTs), function-
// independent (authenticated AND triples), function-dependent (the authenticated garbled
// tables), online (inputs, evaluation, outputs to both) — each phase the slower party's, the total
// the sum of the party that started its clock last, against Garblet's
// Garblet's private AES-128 in the authenticated mode on a fresh loopback connection (wall time
// from connecting to the result, bytes both ways: `loopback_aes128_authenticated_*`). AND throughput:
// emp-ag2pc's test_simple_circuit, which evaluates test/ands.txt relative to its working
// directory, run in a temporary directory holding 2^log2 independent ANDs written the way
// emp-ag2pc's test/generate_circuit.cpp writes them (128-bit inputs and output), all phases but
// the set-up, against Garblet's `authenticated_synthetic_and_per_cpu_s` (10^7 ANDs, both parties
// in one thread: AND gates per second of both parties' CPU, where emp-ag2pc's two processes run
// at once on two cores, so the comparison favours emp-ag2pc by up to 2×). Beside it, for context:
// SHA-256 (Bristol's sha-256, 22,272 ANDs, its output checked by the program) and test_triple's
// rate for 2^20 authenticated AND triples alone (the function-independent phase). AND counts are
// read from the programs' own output. Keys Garblet's report does not have come back as null.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The emp-ag2pc commit measured (its v0.3.0), and the emp-tool and emp-ot it builds against:
 * the heads of their v0.3.x maintenance branches, the newest pair it builds with. */
const EMP_AG2PC_COMMIT = '356cfd824772af9334ac9a994d1eec17ab5f565a';
const EMP_TOOL_COMMIT = '30e4f51465537ec2c807ad4b01dec7820416d7f2';
const EMP_OT_COMMIT = '7c253b3f503122b47f8abe6b6da6379b1208228f';

/** test_triple's fixed batch: `int N = 1<<20` in its source. */
const TRIPLES = 2 ** 20;

/** Garblet's figures, from `garblet bench malicious --json`: private AES-128 in the authenticated
 * mode on a fresh loopback connection (the median wall time from connecting to the result, and
 * the bytes both ways), and the authenticated `synthetic` computation's AND gates per second —
 * its two parties in one thread, one after the other, so per second of both parties' CPU. */
const OUR_FIGURES = {
  'authenticated.aes128_fresh.wall_ms': (r) => r.loopback_aes128_authenticated_with_connect_ms_median,
  'authenticated.aes128_fresh.bytes': (r) => sum(r.loopback_aes128_authenticated_bytes_to_client_median, r.loopback_aes128_authenticated_bytes_to_server_median),
  'authenticated.synthetic.and_per_s': (r) => r.authenticated_synthetic_and_per_cpu_s,
};
const OUR_KEYS = Object.keys(OUR_FIGURES);

function sum(a, b) {
  return typeof a === 'number' && typeof b === 'number' ? a + b : null;
}

function parseArgs(argv) {
  const options = { garblet: 'target/release/garblet', rounds: 3, log2: 20, peerOnly: false };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    if (name === '--peer-only') {
      options.peerOnly = true;
      i -= 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--emp-ag2pc') options.empAg2pc = resolve(value);
    else if (name === '--garblet') options.garblet = resolve(value);
    else if (name === '--rounds') options.rounds = Number(value);
    else if (name === '--log2') options.log2 = Number(value);
    else throw new Error(`unknown option ${name}`);
  }
  if (!options.empAg2pc) throw new Error('--emp-ag2pc DIR is required: an emp-ag2pc checkout built at ' + EMP_AG2PC_COMMIT);
  if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds must be a positive integer');
  if (!Number.isInteger(options.log2) || options.log2 < 10 || options.log2 > 24) throw new Error('--log2 must be an integer from 10 to 24');
  return options;
}

/** The checkout's commit, if it is a git work tree. */
function commitOf(dir) {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** The loopback interface's transmit byte count, read from /proc (sysfs keeps the namespace it was
 * mounted in). */
const LO_TX = "sed -n 's/^ *lo: *//p' /proc/net/dev | awk '{print $9}'";

/** Seconds one program may run. `timeout` signals its whole process group: `run` and both parties. */
const PROGRAM_TIMEOUT_S = 300;

/** Tries of one program: emp's channel set-up, which listens anew on one port for every channel,
 * now and then leaves party 1 waiting in accept() for a connection that never comes. */
const TRIES = 3;

/**
 * One of emp-ag2pc's programs through its `run` launcher. In a private network namespace the
 * loopback interface carries only this run, so its transmit counter before and after is what
 * both parties sent. `| cat` waits for both parties: `run` returns when party 2 does.
 */
function runPeer(dir, program, cwd = dir) {
  const launch = `timeout ${PROGRAM_TIMEOUT_S} ${dir}/run ${dir}/build/bin/${program} | cat`;
  const load_before = loadavg();
  const isolated = spawnSync(
    'unshare',
    ['-rn', 'sh', '-c', `ip link set lo up 2>/dev/null || exit 97; echo "@lo ${'$'}(${LO_TX})"; ${launch}; echo "@lo ${'$'}(${LO_TX})"`],
    { cwd, encoding: 'utf8', timeout: 900_000, maxBuffer: 1 << 24 },
  );
  const ok = isolated.status === 0;
  const result = ok ? isolated : spawnSync('sh', ['-c', launch], { cwd, encoding: 'utf8', timeout: 900_000, maxBuffer: 1 << 24 });
  const load_after = loadavg();
  if (result.status !== 0) throw new Error(`emp-ag2pc's ${program} failed (${result.status}): ${result.stderr}`);
  let bytes = null;
  if (ok) {
    const counters = [...result.stdout.matchAll(/^@lo (\d+)$/gm)].map((m) => Number(m[1]));
    if (counters.length === 2) bytes = counters[1] - counters[0];
  }
  return { stdout: result.stdout, isolated: ok, loopback_bytes: bytes, load_before, load_after };
}

/**
 * test_aes / test_sha256 / test_simple_circuit (emp-ag2pc's test/single_execution.h): each party
 * prints "n1 n2 n3 ANDs" and then "one time:", "inde:", "dep:", "online:" with its party number
 * and microseconds. A phase's time is the slower party's. The totals are the sums of the party
 * that started its clock last, the smaller: the other party's set-up includes waiting for it
 * (`run` starts party 1 50 ms after party 2, and each parses its circuit before its clock).
 */
function parsePhases(stdout, program) {
  const phases = { setup: 'one time', function_independent: 'inde', function_dependent: 'dep', online: 'online' };
  const byParty = { 1: {}, 2: {} };
  for (const m of stdout.matchAll(/^(one time|inde|dep|online):\s+([12])\s+([\d.eE+]+)\s*$/gm)) byParty[m[2]][m[1]] = Number(m[3]) / 1000;
  const out = {};
  for (const [key, label] of Object.entries(phases)) {
    const values = [byParty[1][label], byParty[2][label]];
    if (values.some((v) => v === undefined || !Number.isFinite(v))) throw new Error(`${program}: no "${label}:" line for both parties in:\n${stdout}`);
    out[`${key}_ms`] = Math.max(...values);
  }
  const sums = [1, 2].map((p) => Object.values(phases).reduce((s, label) => s + byParty[p][label], 0));
  const last = sums[0] <= sums[1] ? 1 : 2;
  out.total_ms = sums[last - 1];
  out.after_setup_ms = sums[last - 1] - byParty[last]['one time'];
  out.by_party_ms = byParty;
  const shape = stdout.match(/^(\d+) (\d+) (\d+) (\d+)\s*$/m);
  out.and_gates = shape ? Number(shape[4]) : null;
  if (/^BAD!/m.test(stdout)) throw new Error(`${program}: emp-ag2pc reported a wrong output (BAD!)`);
  out.output_checked = /^GOOD!/m.test(stdout);
  return out;
}

/**
 * test_triple: each party prints microseconds-per-triple × 1000 (ns per triple) and its
 * channels' byte count, one number a line; the two parties' lines may interleave, so the byte
 * counts (integers of at least 10^5 for 2^20 triples) are told from the times by size.
 */
function parseTriple(stdout) {
  const numbers = [...stdout.matchAll(/^([\d.eE+-]+)\s*$/gm)].map((m) => Number(m[1])).filter(Number.isFinite);
  const bytes = numbers.filter((x) => Number.isInteger(x) && x >= 1e5);
  const ns = numbers.filter((x) => !(Number.isInteger(x) && x >= 1e5));
  if (ns.length !== 2 || bytes.length !== 2) throw new Error(`test_triple: expected two times and two byte counts in:\n${stdout}`);
  const slower = Math.max(...ns);
  return { triples: TRIPLES, ns_per_and: slower, and_per_s: 1e9 / slower, bytes_per_party: bytes, bytes_per_and: (bytes[0] + bytes[1]) / TRIPLES };
}

/**
 * A working directory for test_simple_circuit: test/ands.txt with `ands` independent ANDs of
 * input wires 0 and n1, as emp-ag2pc's test/generate_circuit.cpp writes its circuits.
 */
function andCircuit(ands) {
  const [n1, n2, n3] = [128, 128, 128];
  const dir = mkdtempSync(join(tmpdir(), 'ag2pc-ands-'));
  mkdirSync(join(dir, 'test'));
  const lines = [`${ands} ${Math.max(n1 + n2 + ands, n1 + n2 + n3)} `, `${n1} ${n2} ${n3}`];
  for (let i = 0; i < ands; i++) lines.push(`2 1 0 ${n1} ${n1 + n2 + i} AND`);
  writeFileSync(join(dir, 'test', 'ands.txt'), lines.join('\n') + '\n');
  return dir;
}

/** A timed circuit's phases, AND rates and bytes. */
function circuitRow(run, program) {
  const phases = parsePhases(run.stdout, program);
  return {
    ...phases,
    and_per_s_after_setup: phases.and_gates ? phases.and_gates / (phases.after_setup_ms / 1000) : null,
    and_per_s_total: phases.and_gates ? phases.and_gates / (phases.total_ms / 1000) : null,
    loopback_bytes: run.loopback_bytes,
    loopback_bytes_per_and: run.loopback_bytes !== null && phases.and_gates ? run.loopback_bytes / phases.and_gates : null,
    load_before: run.load_before,
    load_after: run.load_after,
  };
}

/** A program run and parsed, tried again when it hung or printed too little. */
function measure(dir, program, parse, cwd = dir) {
  for (let attempt = 1; ; attempt++) {
    const run = runPeer(dir, program, cwd);
    try {
      return { run, row: { ...parse(run), tries: attempt } };
    } catch (e) {
      if (attempt === TRIES) throw e;
      console.error(`warning: ${program}, try ${attempt} of ${TRIES}: ${e.message.split('\n')[0]}`);
    }
  }
}

function runEmp(dir, andsDir) {
  const aes = measure(dir, 'test_aes', (r) => circuitRow(r, 'test_aes'));
  const ands = measure(dir, 'test_simple_circuit', (r) => circuitRow(r, 'test_simple_circuit'), andsDir);
  const sha = measure(dir, 'test_sha256', (r) => circuitRow(r, 'test_sha256'));
  const triple = measure(dir, 'test_triple', (r) => ({ ...parseTriple(r.stdout), loopback_bytes: r.loopback_bytes, load_before: r.load_before, load_after: r.load_after }));
  return {
    aes128: aes.row,
    ands: ands.row,
    sha256: sha.row,
    triples: triple.row,
    isolated: [aes, ands, sha, triple].every((m) => m.run.isolated),
  };
}

/** A number, or null for anything else (a key the report lacks). */
function finite(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function runGarblet(garblet) {
  const load_before = loadavg();
  const out = execFileSync(garblet, ['bench', 'malicious', '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const load_after = loadavg();
  const report = JSON.parse(out);
  const values = Object.fromEntries(OUR_KEYS.map((key) => [key, finite(OUR_FIGURES[key](report))]));
  return { values, load_before, load_after };
}

const median = (xs) => {
  const ys = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  return ys.length === 0 ? null : ys[Math.floor(ys.length / 2)];
};
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b !== 0 ? a / b : null);

function main() {
  const options = parseArgs(process.argv.slice(2));
  for (const program of ['test_aes', 'test_sha256', 'test_triple']) {
    if (!existsSync(join(options.empAg2pc, 'build', 'bin', program))) {
      throw new Error(`${options.empAg2pc} has no build/bin/${program}: build emp-ag2pc there first (emp-tool ${EMP_TOOL_COMMIT}, emp-ot ${EMP_OT_COMMIT})`);
    }
  }
  if (!existsSync(join(options.empAg2pc, 'run'))) throw new Error(`${options.empAg2pc} has no run launcher`);
  if (!options.peerOnly && !existsSync(options.garblet)) throw new Error(`${options.garblet} does not exist: cargo build --release -p garblet-server --bin garblet`);
  const commit = commitOf(options.empAg2pc);
  if (commit !== EMP_AG2PC_COMMIT) console.error(`warning: ${options.empAg2pc} is at ${commit ?? 'an unknown commit'}, not ${EMP_AG2PC_COMMIT}`);

  const andsDir = andCircuit(2 ** options.log2);
  const rounds = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const emp = runEmp(options.empAg2pc, andsDir);
      const ours = options.peerOnly ? null : runGarblet(options.garblet);
      rounds.push({ emp, ours });
      const aesOurs = ours?.values['authenticated.aes128_fresh.wall_ms'];
      console.error(
        `round ${round + 1}: emp-ag2pc AES-128 ${emp.aes128.total_ms.toFixed(1)} ms, 2^${options.log2} ANDs ${(emp.ands.and_per_s_after_setup / 1e6).toFixed(3)} M AND/s after set-up; ` +
          `garblet AES-128 ${typeof aesOurs === 'number' ? aesOurs.toFixed(1) + ' ms' : 'n/a'}`,
      );
    }
  } finally {
    rmSync(andsDir, { recursive: true, force: true });
  }

  const missing = options.peerOnly ? OUR_KEYS : OUR_KEYS.filter((key) => rounds.every((r) => r.ours.values[key] === null));
  const col = (f) => rounds.map(f);
  const peerAes = col((r) => r.emp.aes128.total_ms);
  const peerAnd = col((r) => r.emp.ands.and_per_s_after_setup);
  const oursAes = col((r) => r.ours?.values['authenticated.aes128_fresh.wall_ms'] ?? null);
  const oursBytes = col((r) => r.ours?.values['authenticated.aes128_fresh.bytes'] ?? null);
  const oursAnd = col((r) => r.ours?.values['authenticated.synthetic.and_per_s'] ?? null);
  const report = {
    emp_ag2pc_commit: commit,
    emp_tool_commit: EMP_TOOL_COMMIT,
    emp_ot_commit: EMP_OT_COMMIT,
    garblet_checkout_commit: commitOf(dirname(dirname(fileURLToPath(import.meta.url)))),
    garblet: options.peerOnly ? null : options.garblet,
    emp_loopback_namespace: rounds.every((r) => r.emp.isolated),
    rounds: options.rounds,
    note:
      'emp-ag2pc phases are the slower party\'s, its totals the party that started its clock last; its bytes are the loopback ' +
      'interface\'s, both parties together with TCP/IP headers (null outside a private namespace). ' +
      `Its AND/s is 2^${options.log2} independent ANDs over all phases but the set-up.` +
      (missing.length ? ` Not in garblet's report (null): ${missing.join(', ')}.` : ''),
    peer: col((r) => r.emp),
    ours: col((r) => r.ours),
    aes128_ms_peer: peerAes,
    aes128_ms_ours: oursAes,
    aes128_bytes_peer: col((r) => r.emp.aes128.loopback_bytes),
    aes128_bytes_ours: oursBytes,
    aes128_ms_peer_over_ours: peerAes.map((x, i) => ratio(x, oursAes[i])),
    aes128_ms_peer_over_ours_median: ratio(median(peerAes), median(oursAes)),
    and_per_s_peer: peerAnd,
    and_per_s_peer_with_setup: col((r) => r.emp.ands.and_per_s_total),
    and_per_s_peer_sha256: col((r) => r.emp.sha256.and_per_s_after_setup),
    and_per_s_peer_triples_only: col((r) => r.emp.triples.and_per_s),
    and_per_s_ours: oursAnd,
    and_per_s_ours_over_peer: oursAnd.map((x, i) => ratio(x, peerAnd[i])),
    and_per_s_ours_over_peer_median: ratio(median(oursAnd), median(peerAnd)),
    load_average_end: loadavg(),
  };
  console.log(JSON.stringify(report, null, 2));
}

try {
  main();
} catch (e) {
  console.error(`ag2pc-side-by-side: ${e.message}`);
  process.exit(1);
}
