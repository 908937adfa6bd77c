/**
 * Garblet for browsers: the engine runs in a Web Worker; the browser's WebSocket lives in a
 * second, small worker that only moves frames, so the socket is read while the engine computes;
 * a third takes half of the base OTs.
 *
 * ```ts
 * const s = await Garblet.connect('ws://localhost:8080');
 * const { outputs } = await s.run('aes128', { plaintext: block }, { onProgress: console.log });
 * ```
 */
import type { RawResult, RunRequest } from './engine.js';
import { AbortError, ConnectionError, fromErrorData, type GarbletError } from './errors.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { reasonOf, Session, type EngineHandle } from './session.js';
import { evaluatorSettings, type EvaluatorSettings } from './options.js';
import { startOtHelper } from './ot-helper.js';
import { startSocketWorker } from './socket-port.js';
import type { ConnectOptions, Progress, ServiceInfo } from './types.js';

export * from './api.js';

let compiled: Promise<WebAssembly.Module> | undefined;

/** The evaluator's WebAssembly, compiled once per page and shared by every session's worker. */
function wasmModule(): Promise<WebAssembly.Module> {
  compiled ??= WebAssembly.compileStreaming(fetch(new URL('../wasm/garblet_core_bg.wasm', import.meta.url)));
  return compiled;
}

/** `ws://host/path` from a relative path or an http(s) URL. */
function socketUrl(url: string): string {
  if (/^wss?:\/\//.test(url)) return url;
  const base = typeof location !== 'undefined' ? location.href : 'http://localhost/';
  const u = new URL(url, base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

/**
 * The engine's worker and its two helpers, each joined to it by a MessageChannel: the socket
 * worker (socket-worker.ts) and the OT helper (ot-worker.ts).
 */
interface Workers {
  engine: Worker;
  socket: Worker;
  otHelper: Worker;
}

function startWorkers(): Workers {
  const engine = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const socket = startSocketWorker();
  const otHelper = startOtHelper();
  engine.postMessage({ type: 'ports', socket: socket.port, otHelper: otHelper.port } satisfies ToWorker, [socket.port, otHelper.port]);
  return { engine, socket: socket.worker, otHelper: otHelper.worker };
}

function terminate(workers: Workers): void {
  workers.engine.terminate();
  workers.socket.terminate();
  workers.otHelper.terminate();
}

/**
 * The workers of a cleanly closed session, kept for the next `connect`: starting a worker (a
 * thread, its module graph) costs tens of milliseconds, a large part of a small computation's
 * latency. One pair is enough for the usual connect–run–close sequence.
 */
let warmWorkers: Workers | undefined;

function takeWorkers(): Workers {
  const workers = warmWorkers ?? startWorkers();
  warmWorkers = undefined;
  return workers;
}

function keepWarm(workers: Workers): void {
  if (warmWorkers) terminate(workers);
  else warmWorkers = workers;
}

class WorkerEngine implements EngineHandle {
  private readonly workers = takeWorkers();
  private readonly worker = this.workers.engine;
  private nextId = 1;
  private readonly runs = new Map<number, { resolve: (r: RawResult) => void; reject: (e: GarbletError) => void; onProgress: (p: Progress) => void }>();
  private connecting?: { resolve: (c: ServiceInfo[]) => void; reject: (e: GarbletError) => void };
  private failure?: GarbletError;
  /** Whether the worker finished connecting: only such a worker can be closed cleanly and reused. */
  private connected = false;
  /** Closed cleanly: the worker goes warm when it says 'closed', instead of being terminated. */
  private keepWorker = false;

  constructor() {
    this.worker.onmessage = (ev: MessageEvent<FromWorker>) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => this.fail(new ConnectionError(`the Garblet worker failed: ${ev.message}`, 'worker'));
    // Without its socket worker the engine would wait for a socket for ever. (Without the OT
    // helper it computes the base OTs alone: see Engine.shareBaseOts.)
    this.workers.socket.onerror = (ev) => this.fail(new ConnectionError(`the Garblet socket worker failed: ${ev.message}`, 'worker'));
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  connect(url: string, settings: EvaluatorSettings, module: WebAssembly.Module): Promise<ServiceInfo[]> {
    return new Promise((resolve, reject) => {
      this.connecting = { resolve, reject };
      this.post({ type: 'connect', url, settings, module });
    });
  }

  run(request: RunRequest, onProgress: (p: Progress) => void): Promise<RawResult> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.runs.set(id, { resolve, reject, onProgress });
      this.post({ type: 'run', id, request });
    });
  }

  abort(reason: string): void {
    // Once ended, the worker may already serve another session: say nothing more to it.
    if (this.failure) return;
    this.post({ type: 'abort', reason });
    this.fail(new AbortError(reason));
  }

  close(): void {
    if (this.failure) return;
    this.keepWorker = this.connected;
    this.post({ type: 'close' });
    this.fail(new ConnectionError('the session was closed', 'closed'));
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'ready':
        this.connected = true;
        this.connecting?.resolve(m.catalog);
        this.connecting = undefined;
        break;
      case 'progress':
        this.runs.get(m.id)?.onProgress(m.progress);
        break;
      case 'result':
        this.runs.get(m.id)?.resolve(m.result);
        this.runs.delete(m.id);
        break;
      case 'error': {
        const error = fromErrorData(m.error);
        if (m.id !== undefined && this.runs.has(m.id)) {
          this.runs.get(m.id)?.reject(error);
          this.runs.delete(m.id);
        } else {
          this.fail(error);
        }
        break;
      }
      case 'closed':
        if (this.keepWorker) keepWarm(this.workers);
        break;
    }
  }

  private fail(error: GarbletError): void {
    if (this.failure) return;
    this.failure = error;
    this.connecting?.reject(error);
    this.connecting = undefined;
    for (const r of this.runs.values()) r.reject(error);
    this.runs.clear();
    // Let the worker send its last frames (an abort's Error frame) before it goes.
    if (!this.keepWorker) setTimeout(() => terminate(this.workers), 1000);
  }
}

export const Garblet = {
  /** Connects to a Garblet server (`ws://`, `wss://`, or a path on this page's host) and completes the hellos (the base OTs wait for the first run). */
  async connect(url: string, options: ConnectOptions = {}): Promise<Session> {
    const { signal } = options;
    const settings = evaluatorSettings(options);
    if (signal?.aborted) throw new AbortError(reasonOf(signal));
    const module = await wasmModule();
    const engine = new WorkerEngine();
    const onAbort = () => engine.abort(reasonOf(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const target = socketUrl(url);
      const catalog = await engine.connect(target, settings, module);
      return new Session(engine, catalog, target);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  },
};
