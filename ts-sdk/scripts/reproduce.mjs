// `npm run reproduce`: rebuilds the files the SDK loads on its own from the sources here and
// compares their integrity values with a reference — by default the dist/integrity.json there
// was before the rebuild; with `--against FILE`, another one (a published package's
// dist/integrity.json, with this repository checked out at that release's commit).
//
// The WebAssembly is compiled in a new, empty target folder, so that nothing cargo cached takes
// part; the TypeScript is compiled and the workers bundled again. Takes a few minutes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { differences, integrityOf } from './integrity.mjs';

const sdk = dirname(dirname(fileURLToPath(import.meta.url)));
const at = process.argv.indexOf('--against');
const referenceFile = at > 0 ? process.argv[at + 1] : join(sdk, 'dist', 'integrity.json');
const reference = JSON.parse(readFileSync(referenceFile, 'utf8'));

const target = mkdtempSync(join(tmpdir(), 'garblet-reproduce-'));
const run = (args, env = {}) => execFileSync(process.execPath, args, { cwd: sdk, stdio: 'inherit', env: { ...process.env, ...env } });
try {
  run([join(sdk, 'scripts', 'build-wasm.mjs')], { CARGO_TARGET_DIR: target });
} finally {
  rmSync(target, { recursive: true, force: true });
}
rmSync(join(sdk, 'dist'), { recursive: true, force: true });
run([createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', '.']);
run([join(sdk, 'scripts', 'integrity.mjs')]);

const diff = differences(reference, integrityOf());
if (diff.length) {
  console.error(`[reproduce] the rebuilt files differ from ${referenceFile}:\n  ${diff.join('\n  ')}`);
  process.exit(1);
}
console.log(`[reproduce] the rebuilt files match ${referenceFile}`);
