/**
 * `garblet/circuit/node`: compiling circuit files from Node (what `npx garblet-compile` runs).
 * A `.ts` file is loaded with its types stripped in place (see strip-hook.ts), so errors name
 * its own lines.
 */

import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Circuit, CompileOptions, compileWithHash, Manifest } from '../circuit/compile.js';
import { CircuitError } from '../circuit/errors.js';

let registered = false;

/** The circuit a file exports: `exportName` (default: the default export). */
export async function loadCircuitFile(path: string, exportName = 'default'): Promise<Circuit> {
  if (!registered) {
    register(new URL('./strip-hook.js', import.meta.url));
    registered = true;
  }
  const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const found = module[exportName] as Circuit | undefined;
  if (!found || typeof found !== 'object' || typeof found.body !== 'function') {
    const circuits = Object.entries(module).filter(([, v]) => v && typeof v === 'object' && typeof (v as Circuit).body === 'function').map(([k]) => k);
    throw new CircuitError(
      'bad-declaration',
      `${path}: ${exportName === 'default' ? 'the default export' : `the export '${exportName}'`} is not a circuit (export default circuit({ inputs, outputs }, body))${circuits.length ? `; its circuits: ${circuits.join(', ')}` : ''}`,
      '',
    );
  }
  return found;
}

/** Loads and compiles a circuit file: the Bristol text and the manifest. */
export async function compileFile(path: string, exportName?: string, options?: CompileOptions): Promise<{ bristol: string; manifest: Manifest }> {
  return compileWithHash(await loadCircuitFile(path, exportName), options);
}
