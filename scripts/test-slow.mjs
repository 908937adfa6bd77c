// `npm run test:slow`: the long checks kept out of `npm test`:
// - the browser's WebAssembly memory over 10^8 AND gates against 10^6 (e2e tests tagged @slow);
// - the Rust tests marked #[ignore] for their time (`cargo test -- --ignored`): the HEKM'11 gate
//   counts at the paper's sizes (docs/performance.md), whose model and formulas `npm test`
//   checks on smaller circuits.
// Installs and builds what is missing first; exits non-zero if either failed.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setup } from './setup.mjs';
import { build, root } from './stack.mjs';

setup({ browser: true });
build();
const rust = spawnSync('cargo', ['test', '--profile', 'release-tests', '--workspace', '--no-fail-fast', '--', '--ignored'], { cwd: root, stdio: 'inherit' });
const e2e = spawnSync('npx', ['playwright', 'test'], {
  cwd: join(root, 'e2e'),
  stdio: 'inherit',
  env: { ...process.env, GARBLET_E2E_PREBUILT: '1', GARBLET_E2E_SLOW: '1' },
});
process.exit(rust.status === 0 && e2e.status === 0 ? 0 : 1);
