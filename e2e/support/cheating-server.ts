/**
 * A server that cheats in the cut-and-choose mode: `server/examples/cheating_serve.rs`, which is
 * `garblet serve` whose every session's garbler deviates as GARBLET_DEVIATION says. It exists
 * only in the test profile's build (garblet-core's `insecure-switches`, through the server's
 * dev-dependencies): `npm test` has built it with the Rust tests (`cargo test --workspace`
 * builds the examples); a standalone `npx playwright test` builds it here, in the same profile.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { configWith, root, startServer } from '../../scripts/stack.mjs';
import { E2E_LIMITS } from './servers';

/** What the server does wrong (the example's documentation says what each one is). */
export type Deviation = 'tables' | 'one-circuit' | 'other-circuit' | 'other-circuit-0' | 'input' | 'corrections' | 'none';

/** The profile `npm test` builds the Rust tests in (scripts/test.mjs). */
const TEST_PROFILE = ['--config', 'profile.release-tests.inherits="release"', '--profile', 'release-tests'];

const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
export const cheatingServeBinary = join(targetDir, 'release-tests', 'examples', 'cheating_serve');

/**
 * Makes sure the example is built: after `npm test`'s Rust tests (GARBLET_E2E_PREBUILT) it is
 * there; otherwise cargo brings it up to date (nothing to do when it is).
 */
export function buildCheatingServe(): void {
  if (process.env.GARBLET_E2E_PREBUILT && existsSync(cheatingServeBinary)) return;
  console.log('[e2e] cheating server (cargo build --profile release-tests -p garblet-server --example cheating_serve)');
  execFileSync('cargo', ['build', ...TEST_PROFILE, '-p', 'garblet-server', '--example', 'cheating_serve'], { cwd: root, stdio: 'inherit' });
}

/** The cheating server with the default services and the e2e limits, on a free port. */
export function startCheatingServer(deviation: Deviation) {
  return startServer({ config: configWith({ listen: '127.0.0.1:0', limits: E2E_LIMITS }), binary: cheatingServeBinary, env: { GARBLET_DEVIATION: deviation } });
}
