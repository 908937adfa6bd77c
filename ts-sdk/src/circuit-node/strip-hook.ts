/**
 * A module loader hook (registered by `loadCircuitFile`): `.ts` and `.mts` files are loaded as
 * JavaScript with their types stripped by amaro, Node's own type stripper. Stripping replaces
 * each type annotation with as many spaces, so every line and column of the output is the
 * source's: stack traces, and the lines `CircuitError` reports, point into the `.ts` file as it
 * is, with no source map to apply.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import amaro from 'amaro';

interface LoadContext {
  format?: string;
}
type NextLoad = (url: string, context: LoadContext) => Promise<{ format?: string; source?: string | ArrayBuffer | Uint8Array }>;

export async function load(url: string, context: LoadContext, nextLoad: NextLoad): Promise<{ format?: string; source?: unknown; shortCircuit?: boolean }> {
  if (url.startsWith('file:') && /\.m?ts$/.test(new URL(url).pathname)) {
    const filename = fileURLToPath(url);
    const { code } = amaro.transformSync(await readFile(filename, 'utf8'), { mode: 'strip-only', filename });
    return { format: 'module', source: code, shortCircuit: true };
  }
  return nextLoad(url, context);
}
