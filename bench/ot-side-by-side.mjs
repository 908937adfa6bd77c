#!/usr/bin/env node
// Garblet's correlated-OT extensions beside emp-ot's, in one run: emp-ot's own SoftSpoken
// benchmark (malicious and semi-honest, k = 2, 4, 8), its own Ferret benchmark (malicious and
// semi-honest, parameter sets b11, b12, b13) and `garblet bench ot --json`, alternated, on this
// machine. Run by hand; not part of `npm test`.
//
//   node bench/ot-side-by-side.mjs --emp-ot DIR [--garblet PATH] [--rounds 3] [--log2 22]
//
// DIR is an emp-ot checkout you built yourself (Release, its default -O3 -march=native) at the
// commit below, whose build/bench_softspoken_rcot and build/bench_ferret_rcot this script runs
// through emp-ot's `run` launcher (two processes on loopback, in a private network namespace
// where `unshare` allows one). Nothing here fetches or builds emp code. PATH is a release
// `garblet` (default target/release/garblet: `cargo build --release -p garblet-server --bin
// garblet`).
//
// What is compared: emp-ot's "mali" rows (the slower party's MOTps: millions of random COTs per
// second, its set-up included) against Garblet's checked SoftSpoken⟨k⟩ in the forward direction
// (`k{k}_forward_cot_per_s`, two threads joined by channels, set-up excluded). emp-ot folds
// every chunk into one check and compares once per session, at its end; Garblet checks every
// chunk of up to 2^14 OTs and releases none before its check passed.
//
// Ferret is timed differently on the two sides. emp-ot's rate is wall time: each of its two
// processes (one thread each, one per core here) times one rcot() call of 2^log2 outputs, and
// that call includes Ferret's set-up (base OTs and the SoftSpoken or nested-Ferret bootstrap,
// run lazily on first use), the loopback round trips and the waits for the other party; the
// rate reported is the slower party's. Garblet's is thread CPU time: both roles run step by step
// on one thread, each role's work timed apart, set-up (the SoftSpoken bootstrap) excluded, over
// whole iterations (`garblet bench ot` reports its parameter set); its rate here is
// the slower role's, 1e9 / max(sender, receiver) ns per OT, so neither the network nor the
// other role's turn is in it. Garblet checks every iteration, so it is set against emp-ot's
// "mali" rows.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

/** The emp-ot commit measured, and the emp-tool it builds against: the newest pair that builds. */
const EMP_OT_COMMIT = '07a6c79274ead0578ead11ce856b15b1d87b8170';
const EMP_TOOL_COMMIT = '1eef34652bd3ea08807e1b10468bf8a4048a665f';

/**
 * emp-ot's Ferret parameter sets at that commit (emp-ot/tuning.h): its benchmark prints only
 * the tag. n = t · 2^tree_depth outputs per round before the next round's base COTs come out.
 */
const EMP_FERRET_PARAMS = {
  b11: { t: 1170, log2_k: 17, tree_depth: 11, n: 2_396_160 },
  b12: { t: 1520, log2_k: 18, tree_depth: 12, n: 6_225_920 },
  b13: { t: 1900, log2_k: 19, tree_depth: 13, n: 15_564_800 },
};

function parseArgs(argv) {
  const options = { garblet: 'target/release/garblet', rounds: 3, log2: 22 };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--emp-ot') options.empOt = resolve(value);
    else if (name === '--garblet') options.garblet = resolve(value);
    else if (name === '--rounds') options.rounds = Number(value);
    else if (name === '--log2') options.log2 = Number(value);
    else throw new Error(`unknown option ${name}`);
  }
  if (!options.empOt) throw new Error('--emp-ot DIR is required: an emp-ot checkout built at ' + EMP_OT_COMMIT);
  if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds must be a positive integer');
  if (!Number.isInteger(options.log2) || options.log2 < 10 || options.log2 > 28) throw new Error('--log2 must be an integer from 10 to 28');
  return options;
}

/** The checkout's commit, if it is a git work tree. */
function commitOf(dir) {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** One run of one of emp-ot's two-party benchmarks: both parties' output, interleaved. */
function runEmpBench(dir, bench, log2) {
  const launch = `./run ./build/${bench} ${log2}`;
  // A private network namespace keeps emp-ot's listening socket off every interface but loopback.
  const isolated = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up 2>/dev/null; ' + launch], { cwd: dir, encoding: 'utf8', timeout: 900_000 });
  const result = isolated.status === 0 ? isolated : spawnSync('sh', ['-c', launch], { cwd: dir, encoding: 'utf8', timeout: 900_000 });
  if (result.status !== 0) throw new Error(`emp-ot's ${bench} failed (${result.status}): ${result.stderr}`);
  return { stdout: result.stdout, isolated: isolated.status === 0 };
}

/** emp-ot's SoftSpoken benchmark: for each row ("SoftSpoken<4> mali"), the slower party's MOTps. */
function runEmp(dir, log2) {
  const { stdout, isolated } = runEmpBench(dir, 'bench_softspoken_rcot', log2);
  const rows = {};
  for (const m of stdout.matchAll(/SoftSpoken<(\d+)> (semi|mali) RCOT\s+([\d.]+) MOTps/g)) {
    const key = `k${m[1]}_${m[2]}`;
    const rate = Number(m[3]) * 1e6;
    rows[key] = rows[key] === undefined ? rate : Math.min(rows[key], rate);
  }
  if (Object.keys(rows).length === 0) throw new Error(`no SoftSpoken rows in emp-ot's output:\n${stdout}`);
  return { rows, isolated };
}

/**
 * emp-ot's Ferret benchmark: for each row ("Ferret b11 mali"), the slower party's MOTps and the
 * bytes per COT both ways (one party's send + recv, set-up included, its check's traffic not).
 */
function runEmpFerret(dir, log2) {
  const { stdout, isolated } = runEmpBench(dir, 'bench_ferret_rcot', log2);
  const rows = {};
  const pattern = /Ferret (b\d+) (semi|mali) RCOT\s+([\d.]+) MOTps\s+send=([\d.e+-]+) B\/COT\s+recv=([\d.e+-]+) B\/COT/g;
  for (const m of stdout.matchAll(pattern)) {
    const key = `${m[1]}_${m[2]}`;
    const rate = Number(m[3]) * 1e6;
    const bytes = Number(m[4]) + Number(m[5]);
    rows[key] = rows[key] === undefined ? { rate, bytes } : { rate: Math.min(rows[key].rate, rate), bytes: Math.max(rows[key].bytes, bytes) };
  }
  if (Object.keys(rows).length === 0) throw new Error(`no Ferret rows in emp-ot's output:\n${stdout}`);
  return { rows, isolated };
}

/** Garblet's Ferret in outputs per second of its slower role, each role on one thread. */
const garbletFerretPerS = (ours) => 1e9 / Math.max(ours.ferret_sender_cpu_ns_per_ot, ours.ferret_receiver_cpu_ns_per_ot);

function runGarblet(garblet) {
  const out = execFileSync(garblet, ['bench', 'ot', '--json'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  return JSON.parse(out);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function main() {
  const options = parseArgs(process.argv.slice(2));
  const benches = ['bench_softspoken_rcot', 'bench_ferret_rcot'];
  if (benches.some((b) => !existsSync(join(options.empOt, 'build', b))) || !existsSync(join(options.empOt, 'run'))) {
    throw new Error(`${options.empOt} lacks build/${benches.join(', build/')} or run: build emp-ot there first (emp-tool ${EMP_TOOL_COMMIT})`);
  }
  if (!existsSync(options.garblet)) throw new Error(`${options.garblet} does not exist: cargo build --release -p garblet-server --bin garblet`);
  const commit = commitOf(options.empOt);
  if (commit !== EMP_OT_COMMIT) console.error(`warning: ${options.empOt} is at ${commit ?? 'an unknown commit'}, not ${EMP_OT_COMMIT}`);

  const rounds = [];
  for (let round = 0; round < options.rounds; round++) {
    const emp = runEmp(options.empOt, options.log2);
    const ferret = runEmpFerret(options.empOt, options.log2);
    const ours = runGarblet(options.garblet);
    rounds.push({ emp, ferret, ours });
    console.error(`round ${round + 1}: emp-ot SoftSpoken<4> mali ${(emp.rows.k4_mali / 1e6).toFixed(2)} M/s, garblet k = 4 checked ${(ours.k4_forward_cot_per_s / 1e6).toFixed(2)} M/s; emp-ot Ferret b11 mali ${(ferret.rows.b11_mali?.rate / 1e6).toFixed(2)} M/s, garblet Ferret ${(garbletFerretPerS(ours) / 1e6).toFixed(2)} M/s`);
  }
  const report = {
    emp_ot_commit: commit,
    emp_tool_commit: EMP_TOOL_COMMIT,
    emp_ot_length: 2 ** options.log2 + 101,
    emp_ot_ferret_length: 2 ** options.log2,
    emp_ot_loopback_namespace: rounds.every((r) => r.emp.isolated && r.ferret.isolated),
    rounds: options.rounds,
    load_average: loadavg(),
    note: 'emp-ot checks once per session (its end()); garblet checks every chunk of up to 2^14 OTs',
  };
  for (const k of [2, 4, 8]) {
    const emp = rounds.map((r) => r.emp.rows[`k${k}_mali`]);
    const empSemi = rounds.map((r) => r.emp.rows[`k${k}_semi`]);
    const ours = rounds.map((r) => r.ours[`k${k}_forward_cot_per_s`]);
    const oursBare = rounds.map((r) => r.ours[`k${k}_unchecked_cot_per_s`]);
    Object.assign(report, {
      [`k${k}_emp_mali_per_s`]: emp,
      [`k${k}_emp_semi_per_s`]: empSemi,
      [`k${k}_garblet_checked_per_s`]: ours,
      [`k${k}_garblet_unchecked_per_s`]: oursBare,
      [`k${k}_checked_garblet_vs_emp`]: ours.map((x, i) => x / emp[i]),
      [`k${k}_checked_garblet_vs_emp_median`]: median(ours) / median(emp),
    });
  }
  // Garblet's Ferret against each of emp-ot's: rates of the slower party or role, timed as the
  // header says (emp-ot wall with set-up, Garblet per-role thread CPU without).
  const oursFerret = rounds.map((r) => garbletFerretPerS(r.ours));
  Object.assign(report, {
    ferret_note: 'emp-ot: wall rate of the slower of two processes over loopback, one rcot() call with set-up; garblet: 1e9 / max(sender, receiver) thread CPU ns per OT, set-up excluded',
    ferret_garblet_params: {
      t: rounds[0].ours.ferret_trees,
      log2_k: Math.log2(rounds[0].ours.ferret_k),
      tree_depth: rounds[0].ours.ferret_depth,
      n: rounds[0].ours.ferret_n,
      outputs_per_iteration: rounds[0].ours.ferret_outputs_per_iteration,
    },
    ferret_garblet_per_s: oursFerret,
    ferret_garblet_bytes_per_ot: rounds.map((r) => r.ours.ferret_bytes_per_ot),
  });
  for (const [tag, params] of Object.entries(EMP_FERRET_PARAMS)) {
    const emp = rounds.map((r) => r.ferret.rows[`${tag}_mali`]?.rate);
    Object.assign(report, {
      [`ferret_emp_${tag}_params`]: params,
      [`ferret_emp_${tag}_mali_per_s`]: emp,
      [`ferret_emp_${tag}_semi_per_s`]: rounds.map((r) => r.ferret.rows[`${tag}_semi`]?.rate),
      [`ferret_emp_${tag}_mali_bytes_per_ot`]: rounds.map((r) => r.ferret.rows[`${tag}_mali`]?.bytes),
      [`ferret_garblet_vs_emp_${tag}_mali`]: oursFerret.map((x, i) => x / emp[i]),
      [`ferret_garblet_vs_emp_${tag}_mali_median`]: median(oursFerret) / median(emp),
    });
  }
  console.log(JSON.stringify(report, null, 2));
}

try {
  main();
} catch (e) {
  console.error(`ot-side-by-side: ${e.message}`);
  process.exit(1);
}
