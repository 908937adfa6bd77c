// `npm test`: installs what is missing (with the browser), builds, and runs every test suite —
// Rust, Rust under WebAssembly, the SDK's, the packed SDK in fresh Vite, Next.js and SvelteKit
// apps, and the end-to-end tests in Chromium. Runs them all even after a failure, prints a
// summary with each step's time (wall and CPU) and the load average, and exits non-zero if any
// failed.
//
// Three lanes run side by side, each one step at a time: the Rust lane (compile and run the Rust
// tests, then the WebAssembly ones), which needs nothing built; the JavaScript lane (the build,
// then the SDK's tests, the fresh apps and the browser tests); and, once the Rust tests are
// compiled, the clock lane (the server's tests against slow and abusive clients, which wait).
// The Rust and JavaScript lanes use different cargo profiles, so neither waits for the other's
// lock, and the Rust lane runs at a lower priority: on two cores it takes what the build's
// single-threaded stretches and the browser tests leave, and the JavaScript lane, whose steps
// wait for the build and whose tests time things, is not slowed by it. (Those tests' limits
// are generous, and none measures speed.)
//   npm test -- --serial        one step at a time, output as it comes (to time the steps alone)
//   npm test -- --only NAME…    just these steps (after set-up), e.g. --only 'Rust tests'
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority, loadavg, setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setup } from './setup.mjs';
import { build, root, targetDir } from './stack.mjs';

/** Runs a command in the foreground; true if it exited 0. */
const command = (cmd, args, options = {}) => () => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options, env: { ...process.env, ...options.env } }).status === 0;

/**
 * The Rust tests build in a profile of their own, `release-tests` (Cargo.toml: the release
 * build's optimisation without link-time optimisation), in target/release-tests/, not in
 * target/release/. Tests turn on features that the shipped binary and WebAssembly must not have
 * (dev-dependencies: garblet-core's insecure-switches, the circuits' testing helpers), so the
 * two builds differ; in one folder each overwrote the other's garblet-core and garblet binary,
 * and `npm run demo` after `npm test` rebuilt them, while the end-to-end tests ran a binary
 * built with the test features.
 */
const TEST_PROFILE = ['--profile', 'release-tests'];

/**
 * The server's tests against slow and abusive clients (`server/tests/abuse.rs`): more than two
 * minutes, nearly all of it spent waiting on timeouts and on clients that read at a few tens of
 * KB/s, which must get the CPU when they wake. They run in a lane of their own, beside the other
 * Rust tests and the WebAssembly ones rather than after them.
 */
const CLOCK_TESTS = { package: 'garblet-server', test: 'abuse' };

/**
 * `cargo test` arguments that select every workspace target `cargo test` runs by default but the
 * integration test `except`: the libraries' and binaries' unit tests and each integration test by
 * name (a name two packages share selects both). The doc-tests are left to `--doc`.
 */
function testTargetsExcept(except) {
  const metadata = JSON.parse(execFileSync('cargo', ['metadata', '--no-deps', '--format-version', '1'], { cwd: root, encoding: 'utf8' }));
  const tests = new Set();
  for (const pkg of metadata.packages) {
    for (const target of pkg.targets) {
      if (target.kind.includes('test') && target.test !== false && !(pkg.name === except.package && target.name === except.test)) tests.add(target.name);
    }
  }
  const shared = metadata.packages.some((pkg) => pkg.name !== except.package && pkg.targets.some((t) => t.kind.includes('test') && t.name === except.test));
  if (shared) throw new Error(`another package has an integration test named ${except.test}: selecting by name would leave it out`);
  return ['--lib', '--bins', ...[...tests].sort().flatMap((name) => ['--test', name])];
}

/**
 * Where the Rust build leaves the clock tests' executable: the clock lane runs it itself, since
 * `cargo test` holds the build folder's lock while its tests run, and the Rust tests' would keep
 * a second cargo waiting until they end.
 */
const CLOCK_TESTS_EXECUTABLE = join(targetDir, 'release-tests', 'clock-tests.json');

/** Compiles every Rust test (`cargo test --no-run`) and records the clock tests' executable. */
function buildRustTests() {
  const built = spawnSync('cargo', ['test', ...TEST_PROFILE, '--workspace', '--no-run', '--message-format=json-render-diagnostics'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 256 << 20 });
  if (built.status !== 0) return false;
  const artifact = built.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    // A package id reads `path+file:///…/server#garblet-server@0.1.0`.
    .find((m) => m.reason === 'compiler-artifact' && m.profile?.test && m.target.name === CLOCK_TESTS.test && m.package_id.includes(`#${CLOCK_TESTS.package}@`));
  if (!artifact?.executable) throw new Error(`cargo built no test executable ${CLOCK_TESTS.test} of ${CLOCK_TESTS.package}`);
  writeFileSync(CLOCK_TESTS_EXECUTABLE, JSON.stringify({ executable: artifact.executable, cwd: dirname(artifact.manifest_path) }));
  return true;
}

/** Runs the clock tests' executable as `cargo test` would: from its package's folder. */
function runClockTests() {
  const { executable, cwd } = JSON.parse(readFileSync(CLOCK_TESTS_EXECUTABLE, 'utf8'));
  console.log(`     Running ${CLOCK_TESTS.package} tests/${CLOCK_TESTS.test}.rs (${executable})`);
  return spawnSync(executable, [], { cwd, stdio: 'inherit' }).status === 0;
}

/** The steps, each with its lane; a step that needs the build is skipped if the build failed. */
const STEPS = [
  { name: 'build', lane: 'js', run: () => (build(), true) },
  // Compiling them builds the examples too: the cheating server the end-to-end tests start.
  { name: 'Rust build', lane: 'rust', run: buildRustTests },
  // --no-fail-fast: one failing test binary must not hide the results of the others. The
  // doc-tests are a cargo command of their own: `--doc` takes no other target.
  {
    name: 'Rust tests',
    lane: 'rust',
    run: () =>
      [command('cargo', ['test', ...TEST_PROFILE, '--workspace', '--no-fail-fast', ...testTargetsExcept(CLOCK_TESTS)]), command('cargo', ['test', ...TEST_PROFILE, '--workspace', '--doc'])]
        .map((run) => run())
        .every(Boolean),
  },
  // Beside the Rust lane, at the JavaScript lane's priority: its tests spend minutes waiting on
  // the clock with little CPU, and their paced clients must keep their pace.
  { name: 'Rust clock tests', lane: 'clock', after: 'Rust build', run: runClockTests },
  // Runs under node through wasm-bindgen-test-runner (.cargo/config.toml).
  { name: 'WebAssembly tests', lane: 'rust', run: command('cargo', ['test', ...TEST_PROFILE, '--target', 'wasm32-unknown-unknown', '-p', 'garblet-core']) },
  { name: 'SDK tests', lane: 'js', needsBuild: true, run: command('npm', ['run', 'test:sdk']) },
  // The packed SDK installed into new Vite, Next.js and SvelteKit apps outside the repository, computing in Chromium.
  { name: 'fresh-app test', lane: 'js', needsBuild: true, run: command('npm', ['run', 'test:app']) },
  // After the Rust build, which made their cheating server (e2e/support/cheating-server.ts).
  { name: 'end-to-end tests', lane: 'js', needsBuild: true, after: 'Rust build', run: command('npx', ['playwright', 'test'], { cwd: join(root, 'e2e'), env: { GARBLET_E2E_PREBUILT: '1' } }) },
];

/** How much less the Rust lane's processes get of a busy CPU than the JavaScript lane's (a nice value). */
const RUST_LANE_NICE = 10;

/**
 * CPU seconds (user and system) of the children this process has waited for, whole trees:
 * /proc/self/stat's cutime and cstime, in clock ticks of 1/100 s. Null off Linux.
 */
function childrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

// `node scripts/test.mjs --step NAME`: runs one step in this process and says, last, what it
// cost. The summary's CPU time of a step is this process's children's: its whole process tree.
const stepArg = process.argv.indexOf('--step');
if (stepArg >= 0) {
  const step = STEPS.find((s) => s.name === process.argv[stepArg + 1]);
  if (step.lane === 'rust' && !process.argv.includes('--serial')) {
    try {
      setPriority(Math.min(19, getPriority() + RUST_LANE_NICE)); // inherited by everything the step starts
    } catch {
      // not allowed here: same priority
    }
  }
  let ok;
  try {
    ok = step.run();
  } catch (e) {
    console.error(`[test] ${step.name}: ${e.message}`);
    ok = false;
  }
  console.log(`@@step ${JSON.stringify({ ok, cpu: childrenCpuSeconds() })}`);
  process.exit(0);
}

function minutes(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** How many of a failed step's last lines are printed again before the summary. */
const FAILED_TAIL_LINES = 40;

/**
 * Lines that report a failure — a Rust test's panic, a Playwright or node:test failure — and
 * how many lines after each are kept with it: a step's tail shows only its summary when other
 * test binaries ran after the one that failed. At most `FAILURE_LINES` lines in all.
 */
const FAILURE = /panicked at|^test .* FAILED$|^\s*✘|^not ok |^\s*\d+\) /;
const FAILURE_CONTEXT = 10;
const FAILURE_LINES = 60;

/**
 * Runs `step` in a child process (`--step`); its output is passed on, each line prefixed with
 * the step's name when `prefix` (two lanes at once). Resolves to the step's outcome, with its
 * last lines (`tail`): with two lanes a failure's report scrolls away among the other lane's
 * output, and a CI log often keeps only its end.
 */
function runStep(step, prefix) {
  const started = Date.now();
  const loadBefore = load();
  console.log(`\n[test] ── ${step.name} ── (load average ${loadBefore})`);
  return new Promise((resolve) => {
    const args = [fileURLToPath(import.meta.url), '--step', step.name, ...(serial ? ['--serial'] : [])];
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let outcome = { ok: false, cpu: null };
    const tail = [];
    const failures = [];
    let context = 0;
    const keep = (line) => {
      tail.push(line);
      if (tail.length > FAILED_TAIL_LINES) tail.shift();
      if (FAILURE.test(line)) context = FAILURE_CONTEXT + 1;
      if (context > 0 && failures.length < FAILURE_LINES) failures.push(line);
      context = Math.max(0, context - 1);
    };
    const pass = (stream, to) => {
      let rest = '';
      stream.on('data', (chunk) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop();
        for (const line of lines) {
          if (line.startsWith('@@step ')) outcome = JSON.parse(line.slice(7));
          else {
            keep(line);
            to.write(prefix ? `[${step.name}] ${line}\n` : `${line}\n`);
          }
        }
      });
      stream.on('end', () => {
        if (!rest) return;
        keep(rest);
        to.write(prefix ? `[${step.name}] ${rest}\n` : rest);
      });
    };
    pass(child.stdout, process.stdout);
    pass(child.stderr, process.stderr);
    child.on('close', (code) => {
      const ok = code === 0 && outcome.ok;
      resolve({ name: step.name, ok, outcome: ok ? 'passed' : 'FAILED', ms: Date.now() - started, cpu: outcome.cpu, load: `${loadBefore} → ${load()}`, tail, failures });
    });
  });
}

const serial = process.argv.includes('--serial');
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? process.argv.slice(onlyArg + 1).filter((a) => !a.startsWith('--')) : undefined;
const selected = STEPS.filter((s) => !only || only.includes(s.name));

const started = Date.now();
const setupStarted = Date.now();
setup({ browser: true });
const results = [{ name: 'set-up', ok: true, outcome: 'passed', ms: Date.now() - setupStarted, cpu: childrenCpuSeconds(), load: load() }];

let built = true;
/** Each step's outcome, once it ends: what a step of the other lane waits for (`after`). */
const ended = new Map();
const whenEnded = (name) => {
  if (!ended.has(name)) {
    let resolve;
    ended.set(name, Object.assign(new Promise((r) => (resolve = r)), { resolve }));
  }
  return ended.get(name);
};

/** Runs `steps` one after the other. */
async function lane(steps, prefix) {
  for (const step of steps) {
    if (step.after && selected.some((s) => s.name === step.after)) await whenEnded(step.after);
    let result;
    if (step.needsBuild && !built) result = { name: step.name, ok: false, outcome: 'skipped (the build failed)', ms: 0, cpu: 0, load: '' };
    else result = await runStep(step, prefix);
    if (step.name === 'build') built = result.ok;
    results.push(result);
    whenEnded(step.name).resolve();
  }
}

if (serial) {
  await lane(selected, false);
} else {
  const lanes = [...new Set(selected.map((s) => s.lane))].map((name) => selected.filter((s) => s.lane === name));
  await Promise.all(lanes.map((steps) => lane(steps, lanes.length > 1)));
}

const order = ['set-up', ...STEPS.map((s) => s.name)];
results.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
// A step that passed only on a retry (Playwright's "N flaky") is shown too: its failure is
// real, and the retry's log is the only record of which test it was.
const flaky = (r) => r.ok && r.tail?.some((line) => /^\s*\d+ flaky\b/.test(line));
for (const r of results.filter((r) => (!r.ok || flaky(r)) && r.tail?.length)) {
  if (r.failures?.length) {
    console.log(`\n[test] ── ${r.name}: the failures it reported ──`);
    for (const line of r.failures) console.log(line);
  }
  console.log(`\n[test] ── ${r.name} ${r.ok ? 'passed on a retry' : 'failed'}; its last ${r.tail.length} lines ──`);
  for (const line of r.tail) console.log(line);
}
console.log('\n[test] ── summary ── (wall time; CPU time of the step\'s processes; load average before → after)');
for (const r of results) {
  const cpu = r.cpu === null ? '' : `CPU ${minutes(r.cpu * 1000)}`;
  console.log(`  ${r.ok ? '✓' : '✗'} ${r.name.padEnd(20)} ${r.outcome.padEnd(28)} ${minutes(r.ms)}  ${cpu.padEnd(11)} ${r.load}`);
}
const failed = results.filter((r) => !r.ok).length;
const steps = results.length - 1; // set-up is not a step of its own
console.log(`  total ${minutes(Date.now() - started)}${serial ? '' : ' (the lanes side by side)'}`);
console.log(`steps: ${steps - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
