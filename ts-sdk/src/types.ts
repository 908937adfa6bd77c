/** Shapes of the data the SDK exchanges: the catalog, inputs, progress, results. */
import type { AssetIntegrity } from './integrity.js';

/** How an input's value is written. */
export type Encoding =
  | { type: 'uint' }
  | { type: 'bytes' }
  | { type: 'symbols'; alphabet: string; symbol_bits: number };

/** One input of a service. */
export interface InputField {
  name: string;
  /** Whose input it is: the server's (`garbler`) or yours (`evaluator`). */
  party: 'garbler' | 'evaluator';
  bits: number;
  encoding: Encoding;
  /** A `uint` field read in two's complement: it takes negative numbers. Absent when false. */
  signed?: boolean;
}

/** One output of a service. */
export interface OutputField {
  name: string;
  bits: number;
  /** Who learns it: `evaluator` (you), `garbler` (the server) or `both`. */
  reveal: 'evaluator' | 'garbler' | 'both';
  signed: boolean;
  /** `{ type: 'bytes' }` for a byte string (shown as hex whatever its width). Absent for a number. */
  encoding?: { type: 'bytes' };
}

/** A parameter the client may set. `length_of` names an input whose length it is. */
export interface ParamInfo {
  name: string;
  doc: string;
  default: number;
  min: number;
  max: number;
  length_of?: string;
}

export type CircuitInfo =
  | { kind: 'builtin'; program: string; params: Record<string, number>; client_params: ParamInfo[] }
  | { kind: 'streamed'; hash: string; max_live: number };

/**
 * What a computation protects you (the browser) from. Every mode protects the server from a
 * browser that deviates; they differ in what they protect the browser from:
 * - `standard`: one garbled circuit. Your input stays private, but you trust the server to
 *   garble the function the service names.
 * - `cut-and-choose`: Lindell's protocol (Lindell 2013). A server that garbles another function,
 *   or cheats in any other way, is caught (`CheatingDetected`) or outvoted except with
 *   probability about 2^-40. It costs more: for AES-128 about 25 times the bytes and over ten
 *   times the CPU time of a standard run (docs/cut-and-choose.md).
 * - `authenticated`: authenticated garbling (Wang–Ranellucci–Katz 2017; Katz–Ranellucci–
 *   Rosulek–Wang 2018). Each side is protected from a malicious other: a server that cheats is
 *   caught (`CheatingDetected`) before any output is used, except with probability about
 *   2^-40, and whether a run stops does not depend on your input. No cheating recovery: a
 *   caught server gives no output. It costs a few times a standard run
 *   (docs/authenticated.md).
 *
 * A service offers its mode and every one before it in this list.
 */
export type Security = 'standard' | 'cut-and-choose' | 'authenticated';

/** A service the server offers. Inputs and outputs are for the default parameters. */
export interface ServiceInfo {
  name: string;
  doc: string;
  circuit: CircuitInfo;
  inputs: InputField[];
  outputs: OutputField[];
  and_gates?: number | null;
  /**
   * The strongest protection the service offers you; it offers every weaker one too. A server
   * that does not say (an older one) offers `standard`.
   */
  security: Security;
}

/** What one party measured. */
export interface RoleStats {
  wall_ms: number;
  /**
   * CPU time: the server's thread's; the evaluator's, the time its engine spent computing in its
   * own calls (JavaScript has no CPU clock of a thread). Null from a party that cannot tell.
   */
  cpu_ms: number | null;
  bytes_sent: number;
  bytes_received: number;
  and_gates: number;
  frames_sent: number;
  frames_received: number;
}

export interface Stats {
  evaluator: RoleStats;
  garbler: RoleStats;
}

/** Progress of a run, reported at most every `progressInterval` ms and at the end. */
export interface Progress {
  /**
   * AND gates evaluated so far. A cut-and-choose run reports 0 until its last report, which
   * counts the computation's AND gates (one circuit's, as its `stats` do).
   */
  andGates: number;
  /** Null when the total is not known in advance. */
  andTotal: number | null;
  /** Bytes received from the server in this run. */
  bytes: number;
  elapsedMs: number;
  /** AND gates per second so far. */
  andPerSecond: number;
  /**
   * Bytes of WebAssembly memory the evaluator holds, or null where unknown. Linear memory only
   * grows, so a number that stays flat while gates stream through means bounded memory.
   */
  wasmMemoryBytes: number | null;
}

/**
 * Hex digits for a bytes input, made with `hex('00112233…')`: byte 0 is the first two digits. An
 * integer input reads them as a big-endian number.
 */
export interface HexInput {
  readonly garbletInput: 'hex';
  readonly digits: string;
}

/** Text for a bytes input, made with `utf8('…')`: its UTF-8 encoding, byte 0 first. */
export interface Utf8Input {
  readonly garbletInput: 'utf8';
  readonly text: string;
}

/**
 * A value for one input:
 * - `bigint` or `number`: an integer (bit i is wire i), negative only for a signed input, which
 *   is sent in two's complement;
 * - `Uint8Array`: bytes, big-endian (byte 0 is the most significant), e.g. an AES block;
 * - `hex('…')` or `utf8('…')`: bytes written as hex digits, or as text to encode in UTF-8;
 * - `boolean[]` or `(0|1)[]`: the bits themselves, bit 0 first;
 * - `string`: text in the input's alphabet (DNA, protein) for a symbol input, or a decimal /
 *   `0x` hexadecimal integer (after a minus sign for a negative one) for an integer input. A bare string is never taken for a bytes
 *   input: say which you mean with `hex()` or `utf8()`.
 */
export type InputValue = bigint | number | Uint8Array | boolean[] | number[] | string | HexInput | Utf8Input;

/** Inputs by field name, positionally, or one bare value for a single-input service. */
export type Inputs = Record<string, InputValue> | InputValue[] | InputValue;

export interface ConnectOptions {
  /** Cancels connecting. */
  signal?: AbortSignal;
  /**
   * Credit window in bytes to start with: how far the server may stream ahead (default 4 MiB,
   * or `maxWindow` if that is smaller). A whole number from 64 KiB up.
   */
  window?: number;
  /**
   * The most the credit window may grow to, in bytes (default 32 MiB; the server's
   * `max_window_bytes` caps it too). On a long network path the session doubles its window
   * while the stream waits for credit; this bounds the memory that growth may take. Set it to
   * `window` for a fixed window. A whole number from 64 KiB up, not below `window`.
   */
  maxWindow?: number;
  /**
   * The garbling schemes to accept: `'half-gates'` (32 bytes per AND gate), `'three-halves'`
   * (about 24.6 bytes per AND, more computation) or `'auto'` (default: either, the server's
   * configuration picks). A server that offers none of them refuses with code `garbling`.
   */
  garbling?: Garbling;
  /**
   * Subresource Integrity values (`sha384-<base64>`) of the files the SDK loads on its own: its
   * WebAssembly and its three worker scripts. Given, the SDK fetches each file, hashes it and
   * runs only those bytes (workers from Blob URLs, the wasm compiled from the checked bytes);
   * a file that does not match rejects with an `IntegrityError` before any worker starts or any
   * connection opens. The package's own values are exported as `integrity` and written to its
   * `dist/integrity.json`. Absent (the default), the files load as they are, unchecked.
   */
  integrity?: AssetIntegrity;
  /**
   * The least protection every run on this connection gets: `'standard'` (the default),
   * `'cut-and-choose'` or `'authenticated'`. A run may ask for more (`RunOptions.security`), never for less. A run of
   * a service whose catalog entry (`security`) offers less rejects with an `InputError` (reason
   * `security-not-offered`) before anything of it is sent; the connection stays usable.
   */
  require?: Security;
}

/** A garbling scheme, or `'auto'` for either. */
export type Garbling = 'half-gates' | 'three-halves' | 'auto';

/** Options of {@link Session.prepare}. */
export interface PrepareOptions {
  /** Parameters the service lets the client set, as the runs that will use the preparations set them. */
  params?: Record<string, number>;
  /** How many computations to prepare (default 1); each serves one run. */
  count?: number;
  /** Cancels the preparation; the connection closes. */
  signal?: AbortSignal;
}

export interface RunOptions {
  /** Parameters the service lets the client set (string lengths are filled in for you). */
  params?: Record<string, number>;
  /** Cancels the run; the connection closes. */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Milliseconds between progress reports (default 100). */
  progressInterval?: number;
  /**
   * The circuit this run must compute, `sha256:` and 64 hex digits: a built-in program's
   * identity (its name, parameters and library version hashed) or a streamed (Bristol)
   * circuit's topology hash, as `garblet circuit stats` prints it. If the service resolves to
   * another circuit, the run rejects with an `IntegrityError` (reason `circuit`) before
   * anything of it is sent; the session also checks a streamed circuit's gates against it.
   */
  expectCircuit?: string;
  /**
   * The protection this run gets (default: the connection's `require`). Below the connection's
   * `require`, the run rejects with an `InputError` (reason `security-below-required`); above
   * what the service offers, with one of reason `security-not-offered`. Either way nothing of
   * the run is sent and the connection stays usable.
   */
  security?: Security;
}
