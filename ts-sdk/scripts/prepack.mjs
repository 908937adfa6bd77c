// Runs before `npm pack` and `npm publish`: the package ships dist/ (the compiled SDK) and wasm/
// (the WebAssembly core and its bindings), which git does not hold, so they are built here.
// Each is skipped when it is already newer than everything it is built from (file times: a
// cheap check; `npm run build` rebuilds both whatever the times say).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(sdk);
const say = (msg) => console.log(`[prepack] ${msg}`);

/** Modification times of `path`'s files (all of them, recursively, for a folder); none if it is missing. */
function times(path) {
  if (!existsSync(path)) return [];
  const stat = statSync(path);
  if (!stat.isDirectory()) return [stat.mtimeMs];
  return readdirSync(path).flatMap((name) => times(join(path, name)));
}

/** Whether every output exists and is newer than every input. */
function upToDate(outputs, inputs) {
  if (!outputs.every((o) => existsSync(o))) return false;
  return Math.min(...outputs.flatMap(times)) >= Math.max(0, ...inputs.flatMap(times));
}

const run = (cmd, args) => execFileSync(cmd, args, { cwd: sdk, stdio: 'inherit' });

// What the wasm build reads: the core, the circuit library it links, the workspace's manifests,
// lockfile, toolchain and target flags.
const wasmOutputs = ['garblet_core.js', 'garblet_core.d.ts', 'garblet_core_bg.wasm'].map((f) => join(sdk, 'wasm', f));
const wasmInputs = ['wasm-core/src', 'wasm-core/Cargo.toml', 'circuits/src', 'circuits/Cargo.toml', 'Cargo.toml', 'Cargo.lock', 'rust-toolchain.toml', '.cargo/config.toml'].map((p) => join(root, p));
if (!existsSync(join(root, 'wasm-core'))) {
  // Outside the workspace (an unpacked copy of the package): nothing to build it from.
  if (!wasmOutputs.every((o) => existsSync(o))) throw new Error('wasm/ is missing and there is no wasm-core/ beside the SDK to build it from');
  say('wasm/: kept (no Rust workspace here)');
} else if (upToDate(wasmOutputs, wasmInputs)) {
  say('wasm/: up to date');
} else {
  say('wasm/: building (node scripts/build-wasm.mjs)');
  run(process.execPath, [join(sdk, 'scripts', 'build-wasm.mjs')]);
}

// What tsc reads: the sources, its configuration and the wasm bindings' declarations.
// (A declaration in src/, integrity-values.d.ts, describes a file the integrity step writes.)
const sources = readdirSync(join(sdk, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
const distOutputs = sources.flatMap((f) => ['.js', '.d.ts'].map((ext) => join(sdk, 'dist', basename(f, '.ts') + ext)));
const distInputs = [join(sdk, 'src'), join(sdk, 'tsconfig.json'), join(sdk, 'wasm', 'garblet_core.d.ts')];
if (upToDate(distOutputs, distInputs)) {
  say('dist/: up to date');
} else {
  // From scratch, so that the files of a source that is gone do not ship.
  say('dist/: compiling (tsc -p .)');
  rmSync(join(sdk, 'dist'), { recursive: true, force: true });
  run(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', '.']);
}

// The workers' bundles and the integrity values of what ships: from the files as they are now,
// every time (a second or two), so that they can never describe other files.
say('dist/: worker bundles and integrity values (node scripts/integrity.mjs)');
run(process.execPath, [join(sdk, 'scripts', 'integrity.mjs')]);

// The licence texts live once, at the repository's root; the package ships copies.
for (const licence of ['LICENSE-MIT', 'LICENSE-APACHE']) {
  if (existsSync(join(root, licence))) copyFileSync(join(root, licence), join(sdk, licence));
  else if (!existsSync(join(sdk, licence))) throw new Error(`${licence} is missing`);
}
