// After `tsc`: bundles each worker script into one self-contained file (dist/*.bundle.js, no
// imports, so that one hash covers all the code a worker runs) and writes the Subresource
// Integrity values (SHA-384) of the files the SDK loads on its own — its WebAssembly and those
// bundles — to dist/integrity.json and dist/integrity-values.js (exported by the package as
// `integrity`).
//
// `--check` builds nothing: it recomputes the values from the files and exits non-zero where
// they differ from dist/integrity.json. `--compare FILE` does the same against another
// integrity.json (a published release's), after a rebuild: `npm run reproduce`.
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = dirname(dirname(fileURLToPath(import.meta.url)));

/** Each asset's file, as src/integrity.ts's ASSET_FILES says (a test checks they agree). */
export const ASSET_FILES = {
  wasm: 'wasm/garblet_core_bg.wasm',
  worker: 'dist/worker.bundle.js',
  socketWorker: 'dist/socket-worker.bundle.js',
  otWorker: 'dist/ot-worker.bundle.js',
};

/** The SRI value (`sha384-<base64>`) of a file. */
export const sri = (path) => `sha384-${createHash('sha384').update(readFileSync(path)).digest('base64')}`;

/** The values the files in `dir` (the package's folder) have now. */
export const integrityOf = (dir = sdk) => Object.fromEntries(Object.entries(ASSET_FILES).map(([name, file]) => [name, sri(join(dir, file))]));

/** Differences between two sets of values, one line each; none when they agree. */
export function differences(expected, actual) {
  return Object.keys(ASSET_FILES)
    .filter((name) => expected[name] !== actual[name])
    .map((name) => `${name} (${ASSET_FILES[name]}): expected ${expected[name]}, got ${actual[name]}`);
}

async function bundle() {
  const { build } = await import('rolldown');
  for (const name of ['worker', 'socket-worker', 'ot-worker']) {
    await build({
      // Paths relative to the package, so that nothing of this machine's layout reaches the bytes.
      cwd: sdk,
      input: `dist/${name}.js`,
      platform: 'browser',
      logLevel: 'warn',
      output: { file: `dist/${name}.bundle.js`, format: 'esm', sourcemap: false, minify: false },
      write: true,
    });
  }
}

function write() {
  const values = integrityOf();
  writeFileSync(join(sdk, 'dist', 'integrity.json'), `${JSON.stringify(values, null, 2)}\n`);
  writeFileSync(join(sdk, 'dist', 'integrity-values.js'), `export const integrity = Object.freeze(${JSON.stringify(values, null, 2)});\n`);
  copyFileSync(join(sdk, 'src', 'integrity-values.d.ts'), join(sdk, 'dist', 'integrity-values.d.ts'));
  return values;
}

function compare(file) {
  const expected = JSON.parse(readFileSync(file, 'utf8'));
  const diff = differences(expected, integrityOf());
  if (diff.length) {
    console.error(`[integrity] these files differ from ${file}:\n  ${diff.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`[integrity] every file matches ${file}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--compare');
  if (process.argv.includes('--check')) compare(join(sdk, 'dist', 'integrity.json'));
  else if (at > 0) compare(process.argv[at + 1]);
  else {
    await bundle();
    for (const [name, value] of Object.entries(write())) console.log(`[integrity] ${name.padEnd(12)} ${value}`);
  }
}
