// `npm test`: installs what is missing (with the browser), builds, and runs every test suite —
// Rust, Rust under WebAssembly, the SDK's, the packed SDK in a fresh Vite app, and the
// end-to-end tests in Chromium. Runs them all even after a failure, prints a summary, and exits
// non-zero if any failed.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setup } from './setup.mjs';
import { build, root } from './stack.mjs';

/** Runs a command in the foreground; true if it exited 0. */
const command = (cmd, args, options = {}) => () => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options, env: { ...process.env, ...options.env } }).status === 0;

/**
 * The Rust tests build release code in a profile of their own (target/release-tests/), not in
 * target/release/. Tests turn on features that the shipped binary and WebAssembly must not have
 * (dev-dependencies: garblet-core's insecure-switches, the circuits' testing helpers), so the
 * two builds differ; in one folder each overwrote the other's garblet-core and garblet binary,
 * and `npm run demo` after `npm test` rebuilt them, while the end-to-end tests ran a binary
 * built with the test features. The first run compiles the dependencies once more.
 */
const TEST_PROFILE = ['--config', 'profile.release-tests.inherits="release"', '--profile', 'release-tests'];

const STEPS = [
  { name: 'build', run: () => (build(), true) },
  // --no-fail-fast: one failing test binary must not hide the results of the others.
  { name: 'Rust tests', run: command('cargo', ['test', ...TEST_PROFILE, '--workspace', '--no-fail-fast']) },
  // Runs under node through wasm-bindgen-test-runner (.cargo/config.toml).
  { name: 'WebAssembly tests', run: command('cargo', ['test', ...TEST_PROFILE, '--target', 'wasm32-unknown-unknown', '-p', 'garblet-core']) },
  { name: 'SDK tests', needsBuild: true, run: command('npm', ['run', 'test:sdk']) },
  // The packed SDK installed into a new Vite app outside the repository, computing in Chromium.
  { name: 'fresh-app test', needsBuild: true, run: command('npm', ['run', 'test:app']) },
  { name: 'end-to-end tests', needsBuild: true, run: command('npx', ['playwright', 'test'], { cwd: join(root, 'e2e'), env: { GARBLET_E2E_PREBUILT: '1' } }) },
];

function minutes(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

const started = Date.now();
setup({ browser: true });
const results = [];
let built = true;
for (const step of STEPS) {
  if (step.needsBuild && !built) {
    results.push({ name: step.name, outcome: 'skipped (the build failed)', ok: false, ms: 0 });
    continue;
  }
  console.log(`\n[test] ── ${step.name} ──`);
  const t = Date.now();
  let ok;
  try {
    ok = step.run();
  } catch (e) {
    console.error(`[test] ${step.name}: ${e.message}`);
    ok = false;
  }
  if (step.name === 'build') built = ok;
  results.push({ name: step.name, outcome: ok ? 'passed' : 'FAILED', ok, ms: Date.now() - t });
}

console.log('\n[test] ── summary ──');
for (const r of results) console.log(`  ${r.ok ? '✓' : '✗'} ${r.name.padEnd(20)} ${r.outcome.padEnd(28)} ${minutes(r.ms)}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`  total ${minutes(Date.now() - started)}`);
console.log(`steps: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
