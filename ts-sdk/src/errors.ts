/**
 * Typed errors. Every error the SDK throws is a {@link GarbletError}; switch on the subclass
 * (or on `name`) to tell a network failure from a refusal by the server or a cancelled run.
 */

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

/** A peer broke the protocol (malformed or unexpected frames, version mismatch). */
export class ProtocolError extends GarbletError {
  override name = 'ProtocolError';

  constructor(message: string, readonly code = 'protocol', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The server refused or ended the computation; `message` is the server's own. */
export class ServerError extends GarbletError {
  override name = 'ServerError';

  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/** The inputs or parameters do not fit the service. Nothing was sent; the session stays usable. */
export class InputError extends GarbletError {
  override name = 'InputError';
}

/** The operation was cancelled through its `AbortSignal`. */
export class AbortError extends GarbletError {
  override name = 'AbortError';

  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The JSON payload of errors thrown by the WebAssembly core. */
interface CoreError {
  kind: 'protocol' | 'server' | 'input';
  code: string;
  message: string;
}

/** Turns an error thrown by the WebAssembly core into a typed error. */
export function fromCoreError(e: unknown): GarbletError {
  if (e instanceof GarbletError) return e;
  const text = e instanceof Error ? e.message : String(e);
  let parsed: CoreError | undefined;
  try {
    parsed = JSON.parse(text) as CoreError;
  } catch {
    return new ProtocolError(text, 'internal', { cause: e });
  }
  switch (parsed.kind) {
    case 'server':
      return new ServerError(parsed.message, parsed.code);
    case 'input':
      return new InputError(parsed.message);
    default:
      return new ProtocolError(parsed.message, parsed.code);
  }
}

/** Serializable form, to cross a worker boundary. */
export interface ErrorData {
  name: string;
  message: string;
  code?: string;
}

export function toErrorData(e: GarbletError): ErrorData {
  return { name: e.name, message: e.message, code: (e as { code?: string }).code };
}

function isConnectionErrorCode(code: string | undefined): code is ConnectionErrorCode {
  return code === 'unreachable' || code === 'closed' || code === 'worker';
}

export function fromErrorData(d: ErrorData): GarbletError {
  switch (d.name) {
    case 'ConnectionError':
      return new ConnectionError(d.message, isConnectionErrorCode(d.code) ? d.code : 'closed');
    case 'ServerError':
      return new ServerError(d.message, d.code ?? 'internal');
    case 'InputError':
      return new InputError(d.message);
    case 'AbortError':
      return new AbortError(d.message);
    default:
      return new ProtocolError(d.message, d.code ?? 'protocol');
  }
}
