/**
 * Subresource Integrity for the files the SDK loads on its own. A page pins its own scripts
 * with `<script integrity>`, but browsers have no such attribute for `new Worker()` nor for a
 * fetched WebAssembly module: with `ConnectOptions.integrity`, the SDK fetches those files,
 * hashes them with `crypto.subtle` and runs only bytes that match.
 */
import { IntegrityError } from './errors.js';

/** The files the browser SDK loads at run time: its WebAssembly and its three worker scripts. */
export type AssetName = 'wasm' | 'worker' | 'socketWorker' | 'otWorker';

/** An SRI value (`sha384-<base64>`, or several separated by spaces) for each of the SDK's files. */
export type AssetIntegrity = Readonly<Record<AssetName, string>>;

/**
 * Each file, as a path in the package. The worker scripts are self-contained bundles (no
 * imports), so that one hash covers all the code a worker runs.
 */
export const ASSET_FILES: Readonly<Record<AssetName, string>> = Object.freeze({
  wasm: 'wasm/garblet_core_bg.wasm',
  worker: 'dist/worker.bundle.js',
  socketWorker: 'dist/socket-worker.bundle.js',
  otWorker: 'dist/ot-worker.bundle.js',
});

const ASSET_NAMES = Object.keys(ASSET_FILES) as AssetName[];

/** SRI's hash algorithms, weakest first, with their names in Web Crypto. */
const ALGORITHMS: Record<string, string> = { sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
const STRENGTH = Object.keys(ALGORITHMS);

/** One SRI value's strongest algorithm and the digests (base64) given for it. */
interface Pinned {
  algorithm: string;
  digests: string[];
}

/**
 * Parses an SRI value as browsers do: space-separated `alg-base64[?options]` tokens, of which
 * only the strongest algorithm counts, and any of its digests matches. Throws a TypeError for a
 * value with no token of sha256, sha384 or sha512.
 */
function parse(name: string, value: unknown): Pinned {
  const tokens = typeof value === 'string' ? value.trim().split(/\s+/) : [];
  const parsed = tokens.flatMap((t) => {
    const m = /^(sha256|sha384|sha512)-([A-Za-z0-9+/]+={0,2})(\?.*)?$/.exec(t);
    return m ? [{ algorithm: m[1], digest: m[2] }] : [];
  });
  if (parsed.length === 0) throw new TypeError(`integrity.${name} must be an SRI value such as 'sha384-<base64>', not ${JSON.stringify(value)}`);
  const algorithm = parsed.reduce((best, p) => (STRENGTH.indexOf(p.algorithm) > STRENGTH.indexOf(best) ? p.algorithm : best), parsed[0].algorithm);
  return { algorithm, digests: parsed.filter((p) => p.algorithm === algorithm).map((p) => p.digest) };
}

/**
 * `options.integrity` checked: an object with an SRI value for each of the SDK's files. Throws a
 * TypeError otherwise, before anything is fetched.
 */
export function checkIntegrity(integrity: unknown): AssetIntegrity {
  if (typeof integrity !== 'object' || integrity === null) throw new TypeError('integrity must be an object with an SRI value for each of wasm, worker, socketWorker and otWorker');
  for (const name of ASSET_NAMES) parse(name, (integrity as Record<string, unknown>)[name]);
  return integrity as AssetIntegrity;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** The SRI value of `bytes` under `algorithm` (`sha384` by default). */
export async function integrityOf(bytes: BufferSource, algorithm = 'sha384'): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new TypeError('crypto.subtle is not available');
  return `${algorithm}-${base64(new Uint8Array(await subtle.digest(ALGORITHMS[algorithm], bytes)))}`;
}

/**
 * Resolves if `bytes` (the file `asset`, from `url`) match the pinned SRI value `expected`;
 * rejects with an IntegrityError if they do not, or if no digest can be computed here.
 */
export async function verifyAsset(asset: AssetName, url: string, bytes: BufferSource, expected: string): Promise<void> {
  const pinned = parse(asset, expected);
  if (!globalThis.crypto?.subtle) {
    throw new IntegrityError(`cannot check the integrity of ${url}: crypto.subtle is not available (a secure context is needed)`, 'unsupported', asset, url, expected);
  }
  const actual = await integrityOf(bytes, pinned.algorithm);
  const digest = actual.slice(pinned.algorithm.length + 1);
  if (!pinned.digests.includes(digest)) {
    throw new IntegrityError(`${url} does not match its pinned integrity: expected ${expected}, got ${actual}`, 'mismatch', asset, url, expected, actual);
  }
}
