/**
 * Typed errors. Every error the SDK throws is a {@link GarbletError}; switch on the subclass
 * (or on `name`) to tell a network failure from a refusal by the server or a cancelled run.
 */
import type { Security } from './types.js';

/** Base class of every Garblet error. */
export class GarbletError extends Error {
  // Spelled out, not `new.target.name`: minifiers rename classes, and the name is how an error
  // crosses the worker boundary (see `fromErrorData`).
  override name = 'GarbletError';
}

/**
 * Why a {@link ConnectionError} happened: `unreachable`, the socket never opened (nothing
 * listens there, or the server refused the upgrade, e.g. for this page's Origin — browsers do
 * not say which); `closed`, an open connection was lost or closed; `worker`, the SDK's own
 * Web Worker failed (its script or the wasm could not load).
 */
export type ConnectionErrorCode = 'unreachable' | 'closed' | 'worker';

/** The server could not be reached, or the connection dropped: see `code`. */
export class ConnectionError extends GarbletError {
  override name = 'ConnectionError';

  constructor(message: string, readonly code: ConnectionErrorCode, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The stable codes of Garblet's wire protocol: what an `Error` frame carries, and what every
 * error from the WebAssembly core is filed under (the table is in docs/architecture.md, "Error
 * codes"). A newer server may send a code this SDK does not know: it arrives as `protocol`,
 * with the number in `wireCode`.
 */
export type ErrorCode =
  | 'protocol'
  | 'unknown-service'
  | 'bad-request'
  | 'limit'
  | 'internal'
  | 'busy'
  | 'timeout'
  | 'version'
  | 'ot-check-failed'
  | 'output-forged'
  | 'cancelled'
  | 'garbling'
  | 'cheating-detected'
  | 'ot-parameters';

/** Values an error's check compared, by name: see the README's "Errors" for each `reason`. */
export type ErrorDetails = Readonly<Record<string, string | number>>;

/**
 * A peer broke the protocol (a malformed or unexpected frame, a version mismatch, a stream
 * that does not add up), or this side failed (`internal`). `reason` names the check that
 * failed, `details` holds what it compared (`frame` and `state` for `unexpected-frame`,
 * `expected` and `got` for lengths, `ours` and `theirs` for `version`).
 */
export class ProtocolError extends GarbletError {
  override name = 'ProtocolError';
  readonly reason: string;
  readonly details: ErrorDetails;

  constructor(message: string, readonly code: ErrorCode = 'protocol', options?: { reason?: string; details?: ErrorDetails; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options?.reason ?? code;
    this.details = options?.details ?? {};
  }
}

/**
 * The server refused or ended the computation: `code` says why (`busy`, `limit`, `timeout`,
 * `bad-request`, …), `message` is the server's own words (an `Error` frame carries nothing
 * more), `wireCode` the code's number as received.
 */
export class ServerError extends GarbletError {
  override name = 'ServerError';
  readonly wireCode: number;

  constructor(message: string, readonly code: ErrorCode, wireCode?: number) {
    super(message);
    this.wireCode = wireCode ?? WIRE_CODES[code] ?? 1;
  }
}

/**
 * The server is busy for this client — it runs its maximum of sessions, or this client's
 * address has used its share (connections, sessions, new sessions a second, AND gates an hour)
 * — and says when to try again: `retryAfter`, in seconds (like HTTP's `Retry-After`). Wait that
 * long before reconnecting; sooner is refused again. `code` is `busy`.
 */
export class BusyError extends ServerError {
  override name = 'BusyError';

  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super(message, 'busy', 6);
  }
}

/** The number of each wire code. */
const WIRE_CODES: Record<ErrorCode, number> = {
  protocol: 1,
  'unknown-service': 2,
  'bad-request': 3,
  limit: 4,
  internal: 5,
  busy: 6,
  timeout: 7,
  version: 8,
  'ot-check-failed': 9,
  'output-forged': 10,
  cancelled: 11,
  garbling: 12,
  'cheating-detected': 13,
  'ot-parameters': 14,
};

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(WIRE_CODES, code);
}

/**
 * Which check an {@link InputError} failed (the README's "Errors" lists the fields of each):
 *
 * - the service and its parameters: `unknown-service`, `unknown-param` (the client may not set
 *   it), `param-out-of-range` (`value`, `min`, `max`), `param-value` (not a non-negative
 *   integer), `invalid-params` (a rule of the program's own), `unknown-program` (this SDK's
 *   build lacks the program: update it);
 * - the inputs: `unknown-input`, `missing-input`, `input-count` (`expected`, `got` inputs),
 *   `input-length` (`expected`, `got` in `unit`s), `out-of-range` (`value`, `min`, `max` —
 *   `limit` is `max`), `not-an-integer`, `not-in-alphabet` (`symbol`), `not-hex`,
 *   `wrong-type`;
 * - the session: `busy` (a computation is running), `not-ready`, `slot-limit` (a streamed
 *   circuit wider than this client allows: `slots`, `limit`);
 * - the security mode: `security-not-offered` (the service offers less protection than the run
 *   needs: `service`, `offered`, `required`), `security-below-required` (the run asked for less
 *   than the connection's `require`: `requested`, `required`);
 * - preparing ahead (`session.prepare`): `nothing-prepared` (a run on a preparation done
 *   ahead, with none parked for its service and parameters: `service`), `phase-not-offered` (a
 *   mode that does not prepare ahead was asked to: `requested`, the mode, and `phase`),
 *   `prepared-limit` (the preparation would take what this client holds prepared ahead on the
 *   connection past its limit: `limit`, `parked`, `andGates`, all in AND gates).
 */
export type InputErrorReason =
  | 'unknown-service'
  | 'unknown-param'
  | 'param-out-of-range'
  | 'param-value'
  | 'invalid-params'
  | 'unknown-program'
  | 'unknown-input'
  | 'missing-input'
  | 'input-count'
  | 'input-length'
  | 'out-of-range'
  | 'not-an-integer'
  | 'not-in-alphabet'
  | 'not-hex'
  | 'wrong-type'
  | 'busy'
  | 'not-ready'
  | 'slot-limit'
  | 'security-not-offered'
  | 'security-below-required'
  | 'nothing-prepared'
  | 'phase-not-offered'
  | 'prepared-limit';

/** The fields an {@link InputError} may carry; which ones depends on its `reason`. */
export interface InputErrorFields {
  reason: InputErrorReason;
  /** The service asked for. */
  service?: string;
  /** The input the value was given for. */
  input?: string;
  /** The parameter at fault. */
  param?: string;
  /** The program (circuit) behind the service. */
  program?: string;
  /** The value given, where it is a number. */
  value?: number | bigint;
  /** The smallest value allowed. */
  min?: number | bigint;
  /** The largest value allowed. */
  max?: number | bigint;
  /** The limit that was passed: the largest value (`out-of-range`), wire slots (`slot-limit`), or AND gates held prepared ahead (`prepared-limit`). */
  limit?: number | bigint;
  /** How many were expected: inputs, or `unit`s of one input. */
  expected?: number;
  /** How many were given. */
  got?: number;
  /** What `expected` and `got` count. */
  unit?: 'inputs' | 'bits' | 'bytes' | 'symbols' | 'blocks';
  /** The symbol that is not in the input's alphabet. */
  symbol?: string | number;
  /** Wire slots the circuit needs (`slot-limit`). */
  slots?: number;
  /** The strongest protection the service offers (`security-not-offered`). */
  offered?: Security;
  /** The protection the run needs (`security-not-offered`) or the connection requires (`security-below-required`). */
  required?: Security;
  /** The protection the run asked for (`security-below-required`, `phase-not-offered`). */
  requested?: Security;
  /** The part of a computation asked of a mode that does not prepare ahead (`phase-not-offered`). */
  phase?: 'prepare' | 'prepared';
  /** AND gates already prepared ahead on the connection (`prepared-limit`). */
  parked?: number;
  /** AND gates of the circuit the refused preparation was for (`prepared-limit`). */
  andGates?: number;
}

/** The wire code an {@link InputError} is filed under. */
function inputCode(reason: InputErrorReason): ErrorCode {
  if (reason === 'unknown-service') return 'unknown-service';
  return reason === 'slot-limit' || reason === 'prepared-limit' ? 'limit' : 'bad-request';
}

/**
 * The inputs or parameters do not fit the service. Nothing was sent; the session stays usable.
 * `reason` names the check; the fields it compared are properties (`e.limit`, `e.expected`, …).
 */
export class InputError extends GarbletError {
  override name = 'InputError';
  readonly code: ErrorCode;
  readonly reason: InputErrorReason;
  readonly service?: string;
  readonly input?: string;
  readonly param?: string;
  readonly program?: string;
  readonly value?: number | bigint;
  readonly min?: number | bigint;
  readonly max?: number | bigint;
  readonly limit?: number | bigint;
  readonly expected?: number;
  readonly got?: number;
  readonly unit?: InputErrorFields['unit'];
  readonly symbol?: string | number;
  readonly slots?: number;
  readonly offered?: Security;
  readonly required?: Security;
  readonly requested?: Security;
  readonly phase?: InputErrorFields['phase'];
  readonly parked?: number;
  readonly andGates?: number;

  constructor(message: string, fields: InputErrorFields) {
    super(message);
    this.reason = fields.reason;
    this.code = inputCode(fields.reason);
    for (const [k, v] of Object.entries(fields)) {
      if (v !== undefined && k !== 'reason') (this as Record<string, unknown>)[k] = v;
    }
  }

  /** The fields, as the constructor takes them. */
  fields(): InputErrorFields {
    const out: Record<string, unknown> = { reason: this.reason };
    for (const k of INPUT_FIELDS) if (this[k] !== undefined) out[k] = this[k];
    return out as unknown as InputErrorFields;
  }
}

const INPUT_FIELDS = ['service', 'input', 'param', 'program', 'value', 'min', 'max', 'limit', 'expected', 'got', 'unit', 'symbol', 'slots', 'offered', 'required', 'requested', 'phase', 'parked', 'andGates'] as const;

/**
 * Why an {@link IntegrityError} happened: `mismatch`, a file's bytes do not have the pinned
 * hash; `unsupported`, this environment cannot compute one (`crypto.subtle` is missing: a page
 * served over plain `http://` from a host other than localhost is not a secure context).
 */
export type IntegrityErrorReason = 'mismatch' | 'unsupported' | 'circuit';

/**
 * A file the SDK loads on its own (its WebAssembly, a worker script) is not the one
 * `ConnectOptions.integrity` pins. Nothing of it ran and no connection was opened.
 * `asset` names the file (`wasm`, `worker`, `socketWorker`, `otWorker`), `url` is where it came
 * from, `expected` the pinned value and `actual` what its bytes hash to (same algorithm).
 *
 * With `reason` `circuit`: the circuit a service resolves to is not the one
 * `RunOptions.expectCircuit` pins. Nothing of the run was sent; the connection closes. `asset`
 * is `circuit`, `url` the service's name, `expected` the pin and `actual` the circuit's identity.
 */
export class IntegrityError extends GarbletError {
  override name = 'IntegrityError';

  constructor(
    message: string,
    readonly reason: IntegrityErrorReason,
    readonly asset: string,
    readonly url: string,
    readonly expected: string,
    readonly actual?: string,
  ) {
    super(message);
  }
}

/**
 * Which check of a cut-and-choose computation caught the server (docs/cut-and-choose.md, "The
 * exchange"): `check-circuit` (a check circuit is not the one its seed regenerates: `circuit`,
 * `what`), `evaluation-circuit` (an evaluation circuit's labels or stream do not match its
 * commitments: `circuit`, `what`), `inconsistent-input` (the server's input differs between
 * circuits: `first`, `other`), `no-valid-output`, `recovery-delta`, `recovery-input`
 * (`circuit`), `no-majority`. A newer SDK's core may name others.
 */
export type CheatingReason =
  | 'check-circuit'
  | 'evaluation-circuit'
  | 'inconsistent-input'
  | 'no-valid-output'
  | 'recovery-delta'
  | 'recovery-input'
  | 'no-majority';

/**
 * The server was caught cheating in a cut-and-choose computation (`security` `cut-and-choose`):
 * it garbled something other than the circuits it committed to, or gave circuits inconsistent
 * inputs. You get no output, the connection is closed, and the SDK tells the server why (wire
 * code `cheating-detected`, 13), so that its operator can count such reports.
 *
 * **Nothing about your input leaked by this abort.** Every check that can end a computation
 * (check circuits regenerated from their seeds, commitments, the server's input consistency)
 * depends only on what the server sent, never on your input, so whether a computation aborts
 * tells the server nothing about it (docs/cut-and-choose.md explains why, step by step). What
 * the server can do depending on your input — corrupt some evaluation circuits — is outvoted
 * instead of aborting: a result with `recovered: true` means the server cheated but the output
 * is still correct (it came through cheating recovery), and the server was not told.
 *
 * `reason` names the check that failed ({@link CheatingReason}); `details` holds what it
 * compared (`circuit`, `what`, `first`, `other`). Do not trust this server with another run.
 */
export class CheatingDetected extends GarbletError {
  override name = 'CheatingDetected';
  readonly code: ErrorCode = 'cheating-detected';
  readonly wireCode = WIRE_CODES['cheating-detected'];
  readonly reason: CheatingReason;
  readonly details: ErrorDetails;

  constructor(message: string, reason: CheatingReason, details: ErrorDetails = {}) {
    super(message);
    this.reason = reason;
    this.details = details;
  }
}

/** The operation was cancelled through its `AbortSignal`. */
export class AbortError extends GarbletError {
  override name = 'AbortError';

  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The JSON payload of errors thrown by the WebAssembly core (`ErrorReport` in wasm-core). */
interface CoreError {
  kind: 'input' | 'protocol' | 'remote' | 'cheating';
  code: string;
  wireCode: number;
  reason: string;
  message: string;
  fields: Record<string, string | number>;
}

/** The core's reasons for an InputError, and the unit each counts in. */
const CORE_INPUT_REASONS: Record<string, { reason: InputErrorReason; unit?: InputErrorFields['unit'] }> = {
  'unknown-service': { reason: 'unknown-service' },
  'unknown-param': { reason: 'unknown-param' },
  'param-out-of-range': { reason: 'param-out-of-range' },
  'param-value': { reason: 'param-value' },
  'invalid-params': { reason: 'invalid-params' },
  'unknown-program': { reason: 'unknown-program' },
  'input-bits': { reason: 'input-length', unit: 'bits' },
  'packed-bits': { reason: 'input-length', unit: 'bits' },
  'slot-limit': { reason: 'slot-limit' },
  'not-ready': { reason: 'not-ready' },
  'security-not-offered': { reason: 'security-not-offered' },
  'nothing-prepared': { reason: 'nothing-prepared' },
  'phase-not-offered': { reason: 'phase-not-offered' },
  'prepared-limit': { reason: 'prepared-limit' },
};

/** Turns an error thrown by the WebAssembly core into a typed error. */
export function fromCoreError(e: unknown): GarbletError {
  if (e instanceof GarbletError) return e;
  const text = e instanceof Error ? e.message : String(e);
  let parsed: CoreError | undefined;
  try {
    parsed = JSON.parse(text) as CoreError;
  } catch {
    return new ProtocolError(text, 'internal', { reason: 'internal', cause: e });
  }
  const code = isErrorCode(parsed.code) ? parsed.code : 'protocol';
  const fields = parsed.fields ?? {};
  switch (parsed.kind) {
    case 'remote':
      if (code === 'busy' && typeof fields.retryAfterMs === 'number') return new BusyError(parsed.message, fields.retryAfterMs / 1000);
      return new ServerError(parsed.message, code, parsed.wireCode);
    case 'input': {
      const known = CORE_INPUT_REASONS[parsed.reason] ?? { reason: 'invalid-params' };
      const num = (k: string) => (typeof fields[k] === 'number' ? (fields[k] as number) : undefined);
      const str = (k: string) => (typeof fields[k] === 'string' ? (fields[k] as string) : undefined);
      return new InputError(parsed.message, {
        reason: known.reason,
        unit: known.unit,
        service: str('service'),
        param: str('param'),
        program: str('program'),
        value: num('value'),
        min: num('min'),
        max: num('max'),
        limit: num('limit'),
        expected: num('expected') ?? num('bits'),
        got: num('got') ?? (parsed.reason === 'packed-bits' ? (num('bytes') ?? 0) * 8 : undefined),
        slots: num('slots'),
        offered: str('offered') as Security | undefined,
        // The core says what the run asked for; for this check that is what it needs.
        required: str('requested') as Security | undefined,
        // The mode asked to prepare ahead, which it does not.
        requested: str('security') as Security | undefined,
        phase: str('phase') as InputErrorFields['phase'],
        parked: num('parked'),
        // The AND gates of the preparation refused (the core's `requested`).
        andGates: parsed.reason === 'prepared-limit' ? num('requested') : undefined,
      });
    }
    case 'cheating':
      return new CheatingDetected(parsed.message, parsed.reason as CheatingReason, fields);
    default:
      return new ProtocolError(parsed.message, code, { reason: parsed.reason, details: fields });
  }
}

/** Serializable form, to cross a worker boundary. */
export interface ErrorData {
  name: string;
  message: string;
  code?: string;
  wireCode?: number;
  reason?: string;
  details?: Record<string, string | number>;
  fields?: Record<string, unknown>;
  retryAfter?: number;
}

export function toErrorData(e: GarbletError): ErrorData {
  const data: ErrorData = { name: e.name, message: e.message, code: (e as { code?: string }).code };
  if (e instanceof ServerError) data.wireCode = e.wireCode;
  if (e instanceof BusyError) data.retryAfter = e.retryAfter;
  if (e instanceof ProtocolError) Object.assign(data, { reason: e.reason, details: { ...e.details } });
  // Structured clone carries bigints, so the fields cross as they are.
  if (e instanceof InputError) data.fields = { ...e.fields() };
  if (e instanceof IntegrityError) data.fields = { reason: e.reason, asset: e.asset, url: e.url, expected: e.expected, actual: e.actual };
  if (e instanceof CheatingDetected) Object.assign(data, { reason: e.reason, details: { ...e.details } });
  return data;
}

function isConnectionErrorCode(code: string | undefined): code is ConnectionErrorCode {
  return code === 'unreachable' || code === 'closed' || code === 'worker';
}

export function fromErrorData(d: ErrorData): GarbletError {
  const code = isErrorCode(d.code) ? d.code : undefined;
  switch (d.name) {
    case 'ConnectionError':
      return new ConnectionError(d.message, isConnectionErrorCode(d.code) ? d.code : 'closed');
    case 'ServerError':
      return new ServerError(d.message, code ?? 'protocol', d.wireCode);
    case 'BusyError':
      return new BusyError(d.message, d.retryAfter ?? 0);
    case 'InputError':
      return new InputError(d.message, (d.fields ?? { reason: 'invalid-params' }) as unknown as InputErrorFields);
    case 'AbortError':
      return new AbortError(d.message);
    case 'IntegrityError': {
      const f = (d.fields ?? {}) as { reason?: IntegrityErrorReason; asset?: string; url?: string; expected?: string; actual?: string };
      return new IntegrityError(d.message, f.reason ?? 'mismatch', f.asset ?? '', f.url ?? '', f.expected ?? '', f.actual);
    }
    case 'CheatingDetected':
      return new CheatingDetected(d.message, (d.reason ?? 'check-circuit') as CheatingReason, d.details);
    default:
      return new ProtocolError(d.message, code ?? 'protocol', { reason: d.reason, details: d.details });
  }
}
