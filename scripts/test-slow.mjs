// `npm run test:slow`: the long checks kept out of `npm test` — the browser's WebAssembly memory
// over 10^8 AND gates (e2e tests tagged @slow). Installs and builds what is missing first.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setup } from './setup.mjs';
import { build, root } from './stack.mjs';

setup({ browser: true });
build();
const e2e = spawnSync('npx', ['playwright', 'test'], {
  cwd: join(root, 'e2e'),
  stdio: 'inherit',
  env: { ...process.env, GARBLET_E2E_PREBUILT: '1', GARBLET_E2E_SLOW: '1' },
});
process.exit(e2e.status ?? 1);
