/** Messages between the page and the engine's Web Worker. */
import type { RawResult, RunRequest } from './engine.js';
import type { ErrorData } from './errors.js';
import type { Progress, ServiceInfo } from './types.js';

export type ToWorker =
  | { type: 'connect'; url: string; window: number; module: WebAssembly.Module }
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
