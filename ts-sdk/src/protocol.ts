/** Messages between the page, the engine's Web Worker and its socket worker. */
import type { RawResult, RunRequest } from './engine.js';
import type { ErrorData } from './errors.js';
import type { EvaluatorSettings } from './options.js';
import type { Progress, ServiceInfo } from './types.js';

export type ToWorker =
  /** Once, when the page creates the worker: the ports to its socket worker and its OT helper. */
  | { type: 'ports'; socket: MessagePort; otHelper: MessagePort }
  | { type: 'connect'; url: string; settings: EvaluatorSettings; module: WebAssembly.Module }
  | { type: 'run'; id: number; request: RunRequest }
  | { type: 'abort'; reason: string }
  | { type: 'close' };

export type FromWorker =
  | { type: 'ready'; catalog: ServiceInfo[] }
  | { type: 'progress'; id: number; progress: Progress }
  | { type: 'result'; id: number; result: RawResult }
  | { type: 'error'; id?: number; error: ErrorData }
  /** The session closed cleanly; the worker may serve another. */
  | { type: 'closed' };

/** The engine's worker to its socket worker; `sid` numbers the engine's sessions. */
export type ToSocket =
  | { type: 'open'; sid: number; url: string }
  | { type: 'send'; sid: number; frame: ArrayBuffer }
  | { type: 'close'; sid: number };

/** The socket worker to the engine's worker. */
export type FromSocket =
  | { type: 'open'; sid: number }
  | { type: 'failed'; sid: number; message: string }
  | { type: 'frame'; sid: number; frame: ArrayBuffer }
  /** A frame the engine sent, once the socket has taken its bytes: handed back, to be freed in the engine's heap. */
  | { type: 'sent'; sid: number; frame: ArrayBuffer }
  | { type: 'closed'; sid: number; reason: string };

/**
 * The engine's worker to its OT helper worker: a share of the base OTs (`runBaseOtShare`), work
 * ahead on the OT extension (`runAheadJob`), or a notice of the positions the session has
 * claimed, whose jobs not yet started the helper skips (`noteAheadClaimed`).
 */
export type ToOtHelper =
  | { type: 'init'; module: WebAssembly.Module }
  | { type: 'run'; id: number; job: ArrayBuffer; work: 'base-ots' | 'ahead' }
  | { type: 'claimed'; notice: ArrayBuffer };

/** The OT helper to the engine's worker: a job's result, that it skipped the job, or why not. */
export type FromOtHelper = { type: 'done'; id: number; result: ArrayBuffer } | { type: 'skipped'; id: number } | { type: 'failed'; id: number; message: string };

/**
 * A helper worker joined to this thread by a MessageChannel: the worker gets one end as its
 * first message (`{ port }`), the caller keeps the other.
 */
export function joinedByChannel(worker: Worker): { worker: Worker; port: MessagePort } {
  const { port1, port2 } = new MessageChannel();
  worker.postMessage({ port: port2 }, [port2]);
  return { worker, port: port1 };
}

/**
 * The buffer of `bytes`, to transfer rather than copy: its own when the view covers all of it
 * (what the wasm bindings return), else a copy of just those bytes.
 */
export function movableBuffer(bytes: Uint8Array): ArrayBuffer {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return (whole ? bytes.buffer : bytes.slice().buffer) as ArrayBuffer;
}
