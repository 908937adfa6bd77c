// `npm run fuzz`: runs every fuzz target (fuzz/README.md) for a short while — 30 seconds each by
// default — starting from its committed corpus, and prints one JSON line per target (executions
// and their rate, coverage, crashes). Kept out of `npm test`: that replays the corpora and the crash regressions
// without libFuzzer. Installs what is missing (a nightly toolchain, cargo-fuzz) and skips what is
// present.
//
//   npm run fuzz                                  every target, 30 s each
//   npm run fuzz -- --seconds 1800 --runs 10000000 ws_reader bristol
//                                                 the long run: until 10^7 executions or 30 min
//   npm run fuzz -- --record                      record the starting corpora again (after a protocol
//                                                 change), with the stable toolchain; no fuzzing
//   npm run fuzz -- --cmin garbler_session        minimise corpora (in the build they run with)
//   npm run fuzz -- --asan garbler_session        a session target with AddressSanitizer
//
// New inputs that reach new code are added to fuzz/corpus/<target>/ (minimise before
// committing, with --cmin);
// a crashing input is written to fuzz/libfuzzer/artifacts/<target>/ and the run goes on with
// the next target; copy it to fuzz/regressions/<target>/ with the fix.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root, run } from './setup.mjs';

const TARGETS = ['ws_reader', 'http_head', 'protocol_frame', 'garbler_session', 'evaluator_session', 'bristol', 'config', 'values'];
// Inputs longer than this are cut. A session target's input is a mutation program (a header and
// a few mutations of 7 bytes and their payloads, fuzz/src/mutation.rs), not traffic.
const MAX_LEN = { ws_reader: 16_384, bristol: 16_384, config: 16_384 };
// Seconds before an input counts as a hang. A configuration input may be the whole default one,
// whose services (SHA-256's 135,841-gate circuit among them) take seconds to build under the
// sanitizer on a busy machine: legitimate work, not a hang.
const TIMEOUT = { config: 60 };
// The session targets run two whole sessions an input, so their speed is what limits them. They
// build without AddressSanitizer and comparison tracing — each of which halved their rate; safe
// Rust gives AddressSanitizer little to find, and their inputs name frames and edits rather than
// bytes for comparisons to guide — in a folder of their own, so that running them and the other
// targets in turn does not rebuild everything. libFuzzer favours the faster inputs (a
// cut-and-choose computation is about ten times slower than a standard one). --asan builds them
// as the others.
const SESSION_TARGETS = ['garbler_session', 'evaluator_session'];
const SESSION_BUILD = ['--sanitizer', 'none', '--no-trace-compares', '--target-dir', 'fuzz/libfuzzer/target/sessions'];
const SESSION_FLAGS = ['-entropic_scale_per_exec_time=1'];

function options(argv) {
  const o = { seconds: 30, runs: 0, targets: [], record: false, cmin: false, asan: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--record') o.record = true;
    else if (argv[i] === '--cmin') o.cmin = true;
    else if (argv[i] === '--asan') o.asan = true;
    else if (argv[i] === '--seconds') o.seconds = Number(argv[++i]);
    else if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else if (TARGETS.includes(argv[i])) o.targets.push(argv[i]);
    else throw new Error(`unknown argument ${argv[i]}: targets are ${TARGETS.join(', ')}`);
  }
  if (!(o.seconds > 0)) throw new Error('--seconds takes a positive number');
  if (o.targets.length === 0) o.targets = TARGETS;
  return o;
}

function tools() {
  const has = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  if (!has('cargo', ['+nightly', '--version'])) {
    console.log('[fuzz] installing the nightly toolchain (libFuzzer needs it)');
    run('rustup', ['toolchain', 'install', 'nightly', '--profile', 'minimal']);
  }
  if (!has('cargo', ['fuzz', '--version'])) {
    console.log('[fuzz] installing cargo-fuzz (a few minutes, once)');
    run('cargo', ['install', 'cargo-fuzz']);
  }
}

/** cargo-fuzz's build options for `target`. */
function build(target, { asan }) {
  return SESSION_TARGETS.includes(target) && !asan ? SESSION_BUILD : [];
}

/** Runs one target; resolves to its figures from libFuzzer's last status line. */
function fuzz(target, opts) {
  const { seconds, runs } = opts;
  const corpus = join(root, 'fuzz', 'corpus', target);
  mkdirSync(corpus, { recursive: true });
  const before = readdirSync(corpus).length;
  const args = ['+nightly', 'fuzz', 'run', ...build(target, opts), '--fuzz-dir', 'fuzz/libfuzzer', target, corpus, '--',
    `-max_total_time=${seconds}`, `-timeout=${TIMEOUT[target] ?? 10}`, '-rss_limit_mb=2048', `-max_len=${MAX_LEN[target] ?? 4096}`, '-print_final_stats=1'];
  if (SESSION_TARGETS.includes(target)) args.push(...SESSION_FLAGS);
  if (runs > 0) args.push(`-runs=${runs}`);
  return new Promise((resolve) => {
    const child = spawn('cargo', args, { cwd: root, stdio: ['ignore', 'inherit', 'pipe'] });
    let tail = '';
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      tail = (tail + chunk.toString()).slice(-20_000);
    });
    child.on('close', (code) => {
      const last = (re) => [...tail.matchAll(re)].pop();
      const status = last(/#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/g);
      const done = last(/Done (\d+) runs in (\d+) second/g);
      const rate = last(/stat::average_exec_per_sec:\s+(\d+)/g);
      const crashed = /(panicked at|==\d+==ERROR|deadly signal|Test unit written to)/.test(tail);
      resolve({
        target,
        executions: Number(done?.[1] ?? status?.[1] ?? 0),
        seconds: Number(done?.[2] ?? seconds),
        perSecond: Number(rate?.[1] ?? 0),
        coverage: Number(status?.[2] ?? 0),
        features: Number(status?.[3] ?? 0),
        corpus: { before, after: readdirSync(corpus).length },
        crashed,
        exit: code,
      });
    });
  });
}

const opts = options(process.argv.slice(2));
if (opts.record) {
  // fuzz/src/bin/record.rs: replaces the named seeds, keeps what the fuzzer added. Built in the
  // Rust tests' profile (scripts/test.mjs), whose build it shares.
  run('cargo', ['run', '--profile', 'release-tests', '-p', 'garblet-fuzz', '--bin', 'garblet-fuzz-record']);
  process.exit(0);
}
tools();
if (!existsSync(join(root, 'fuzz', 'libfuzzer', 'Cargo.toml'))) throw new Error('fuzz/libfuzzer is missing');
if (opts.cmin) {
  for (const target of opts.targets) {
    run('cargo', ['+nightly', 'fuzz', 'cmin', ...build(target, opts), '--fuzz-dir', 'fuzz/libfuzzer', target, join(root, 'fuzz', 'corpus', target), '--', `-max_len=${MAX_LEN[target] ?? 4096}`]);
  }
  process.exit(0);
}
const results = [];
for (const target of opts.targets) {
  const r = await fuzz(target, opts);
  console.log(JSON.stringify(r));
  results.push(r);
}
const failed = results.filter((r) => r.crashed || r.exit !== 0);
console.log(`[fuzz] ${results.length - failed.length} of ${results.length} targets ran clean${failed.length ? `; failing: ${failed.map((r) => r.target).join(', ')}` : ''}`);
process.exit(failed.length ? 1 : 0);
