/**
 * Helpers for the applications of Garblet's circuit library, one per application: plain values in,
 * plain values out. Each runs the service of that name in the server's default configuration;
 * pass `service` to use another one built on the same program.
 *
 * ```ts
 * const s = await Garblet.connect('ws://127.0.0.1:8080');
 * const { value: distance } = await apps.editDistance(s, 'the quick brown cat');
 * ```
 */
import { InputError } from './errors.js';
import type { Session } from './session.js';
import type { RunOptions, ServiceInfo, Stats } from './types.js';
import { negative, tooLarge } from './wording.js';

/** Run options plus the service to use. */
export interface AppOptions extends RunOptions {
  service?: string;
}

/** What you learn, and what each party measured. */
export interface AppResult<T> {
  value: T;
  stats: Stats;
}

/** Hamming distance between your bit vector and the server's (service `hamming`). */
export async function hammingDistance(session: Session, bits: boolean[] | bigint, options: AppOptions = {}): Promise<AppResult<number>> {
  const { outputs, stats } = await session.run(options.service ?? 'hamming', { y: bits }, options);
  return { value: outputs.distance.toNumber(), stats };
}

/** Whether your bit vector is within the service's distance threshold of the server's (service
 * `hamming_threshold`): you learn that bit only. */
export async function hammingWithin(session: Session, bits: boolean[] | bigint, options: AppOptions = {}): Promise<AppResult<boolean>> {
  const { outputs, stats } = await session.run(options.service ?? 'hamming_threshold', { y: bits }, options);
  return { value: outputs.within.toBoolean(), stats };
}

/** Edit distance between your text and the server's (service `levenshtein_text`: Latin-1
 * text, case-sensitive). Its length is sent along; its letters are not. For DNA use
 * {@link dnaEditDistance}. */
export async function editDistance(session: Session, text: string, options: AppOptions = {}): Promise<AppResult<number>> {
  const { outputs, stats } = await session.run(options.service ?? 'levenshtein_text', { b: text }, options);
  return { value: outputs.distance.toNumber(), stats };
}

/** Edit distance between your DNA sequence (A, C, G, T; either case) and the server's (service
 * `levenshtein`). Its length is sent along; its bases are not. */
export async function dnaEditDistance(session: Session, dna: string, options: AppOptions = {}): Promise<AppResult<number>> {
  const { outputs, stats } = await session.run(options.service ?? 'levenshtein', { b: dna }, options);
  return { value: outputs.distance.toNumber(), stats };
}

/** Smith–Waterman local-alignment score of your protein against the server's (service
 * `smith_waterman`: BLOSUM62, gap 12 + 7k). */
export async function smithWaterman(session: Session, protein: string, options: AppOptions = {}): Promise<AppResult<number>> {
  const { outputs, stats } = await session.run(options.service ?? 'smith_waterman', { protein }, options);
  return { value: outputs.score.toNumber(), stats };
}

/** AES-128 of your 16-byte blocks under the server's key (service `aes128_bp`): one session, any
 * number of blocks up to the service's limit. Returns the ciphertexts concatenated in the
 * plaintext's block order (block 0's 16 bytes first). */
export async function encryptAes(session: Session, plaintext: Uint8Array, options: AppOptions = {}): Promise<AppResult<Uint8Array>> {
  if (plaintext.length === 0 || plaintext.length % 16 !== 0) {
    throw new InputError(`AES takes whole 16-byte blocks; ${plaintext.length} bytes given`, {
      reason: 'input-length',
      input: 'plaintext',
      expected: Math.max(16, Math.ceil(plaintext.length / 16) * 16),
      got: plaintext.length,
      unit: 'bytes',
    });
  }
  const params = { ...options.params, blocks: plaintext.length / 16 };
  const { outputs, stats } = await session.run(options.service ?? 'aes128_bp', { plaintext }, { ...options, params });
  return { value: outputs.ciphertext.bytes(), stats };
}

/** Whether the server's number is greater than yours (service `millionaires`); the server learns
 * the same bit and nothing else. */
export async function serverIsGreater(session: Session, value: bigint | number, options: AppOptions = {}): Promise<AppResult<boolean>> {
  const { outputs, stats } = await session.run(options.service ?? 'millionaires', { y: value }, options);
  return { value: outputs.server_greater.toBoolean(), stats };
}

/** The least of the server's values and yours, and its index in the list server's-first (service
 * `minimum`; ties go to the lowest index). */
export async function minimum(session: Session, values: (bigint | number)[], options: AppOptions = {}): Promise<AppResult<{ value: bigint; index: number }>> {
  const service = options.service ?? 'minimum';
  const width = programParam(session, service, 'w');
  const params = { ...options.params, nb: values.length };
  const { outputs, stats } = await session.run(service, { values: packList(values, width) }, { ...options, params });
  return { value: { value: outputs.min.unsigned, index: outputs.index.toNumber() }, stats };
}

/** The payload of the server's record with your key, or 0n if there is none (service
 * `database_search`); the server learns nothing, not even whether there was a match. */
export async function lookup(session: Session, key: bigint | number, options: AppOptions = {}): Promise<AppResult<bigint>> {
  const { outputs, stats } = await session.run(options.service ?? 'database_search', { query: key }, options);
  return { value: outputs.payload.unsigned, stats };
}

/** For each of your elements, whether the server's set holds it (service `psi`): `value[i]`
 * is the answer for `elements[i]` (bit i of the `member` output). */
export async function intersect(session: Session, elements: (bigint | number)[], options: AppOptions = {}): Promise<AppResult<boolean[]>> {
  const service = options.service ?? 'psi';
  const width = programParam(session, service, 'n');
  const params = { ...options.params, nb: elements.length };
  const { outputs, stats } = await session.run(service, { set: packList(elements, width) }, { ...options, params });
  return { value: outputs.member.bitArray(), stats };
}

/** A parameter the service fixes, such as the width of its elements. */
function programParam(session: Session, service: string, name: string): number {
  const info: ServiceInfo | undefined = session.service(service);
  if (info === undefined) throw new InputError(`the server has no service '${service}'`, { reason: 'unknown-service', service });
  if (info.circuit.kind !== 'builtin' || info.circuit.params[name] === undefined) {
    throw new InputError(`service '${service}' does not fix the parameter '${name}'`, { reason: 'unknown-param', service, param: name });
  }
  return info.circuit.params[name];
}

/** Equal-width unsigned elements as one integer, element 0 in the lowest bits. */
function packList(values: (bigint | number)[], width: number): bigint {
  let packed = 0n;
  values.forEach((v, i) => {
    const x = BigInt(v);
    const max = (1n << BigInt(width)) - 1n;
    if (x < 0n || x > max) throw new InputError((x < 0n ? negative : tooLarge)(`element ${i}`, width, x), { reason: 'out-of-range', value: x, min: 0n, max, limit: max });
    packed |= x << BigInt(width * i);
  });
  return packed;
}
