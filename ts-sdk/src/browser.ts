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
import { AbortError, ConnectionError, fromErrorData, GarbletError } from './errors.js';
import { checkIntegrity, verifyAsset, type AssetIntegrity, type AssetName } from './integrity.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { reasonOf, Session, type EngineHandle } from './session.js';
import { checkedSecurity, evaluatorSettings, type EvaluatorSettings } from './options.js';
import { startOtHelper } from './ot-helper.js';
import { startSocketWorker } from './socket-port.js';
import type { ConnectOptions, Progress, ServiceInfo } from './types.js';

export * from './api.js';

/**
 * What a session's workers are started from: the WebAssembly module, and for each worker script
 * either its own URL (its module graph loads as it is) or a Blob URL of its checked bytes.
 * `key` tells apart assets loaded under different pins, whose workers must not be shared.
 */
interface Assets {
  key: string;
  module: WebAssembly.Module;
  scripts?: { worker: string; socketWorker: string; otWorker: string };
}

let unpinned: Promise<Assets> | undefined;
const pinned = new Map<string, Promise<Assets>>();

/** The evaluator's WebAssembly, compiled once per page and shared by every session's worker. */
function assets(integrity?: AssetIntegrity): Promise<Assets> {
  if (!integrity) {
    unpinned ??= WebAssembly.compileStreaming(fetch(new URL('../wasm/garblet_core_bg.wasm', import.meta.url))).then((module) => ({ key: '', module }));
    return unpinned;
  }
  const key = JSON.stringify([integrity.wasm, integrity.worker, integrity.socketWorker, integrity.otWorker]);
  let loading = pinned.get(key);
  if (!loading) {
    loading = verifiedAssets(key, integrity);
    pinned.set(key, loading);
    // A failed check is not remembered: the next connect fetches again.
    loading.catch(() => pinned.delete(key));
  }
  return loading;
}

/**
 * Fetches the SDK's four files, checks each against `integrity`, and only if all match compiles
 * the WebAssembly and makes Blob URLs of the worker scripts, from the bytes that were checked.
 * Each URL is spelled out so that bundlers copy the files (they copy them as they are).
 */
async function verifiedAssets(key: string, integrity: AssetIntegrity): Promise<Assets> {
  const urls: Record<AssetName, URL> = {
    wasm: new URL('../wasm/garblet_core_bg.wasm', import.meta.url),
    worker: new URL('./worker.bundle.js', import.meta.url),
    socketWorker: new URL('./socket-worker.bundle.js', import.meta.url),
    otWorker: new URL('./ot-worker.bundle.js', import.meta.url),
  };
  const names = Object.keys(urls) as AssetName[];
  const bytes = await Promise.all(
    names.map(async (name) => {
      const url = urls[name].href;
      const body = url.startsWith('data:') ? dataUrlBytes(url) : await fetchBytes(url);
      await verifyAsset(name, url, body, integrity[name]);
      return body;
    }),
  );
  const checked = Object.fromEntries(names.map((name, i) => [name, bytes[i]])) as Record<AssetName, ArrayBuffer>;
  const script = (name: AssetName) => URL.createObjectURL(new Blob([checked[name]], { type: 'text/javascript' }));
  return {
    key,
    module: await WebAssembly.compile(checked.wasm),
    scripts: { worker: script('worker'), socketWorker: script('socketWorker'), otWorker: script('otWorker') },
  };
}

async function fetchBytes(url: string): Promise<ArrayBuffer> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new ConnectionError(`cannot load ${url}: ${(e as Error).message}`, 'worker', { cause: e });
  }
  if (!response.ok) throw new ConnectionError(`cannot load ${url}: HTTP ${response.status}`, 'worker');
  return response.arrayBuffer();
}

/**
 * The bytes of a `data:` URL, read here rather than fetched: a bundler inlines a small file as
 * one (Vite does, under 4 KiB: the socket worker's bundle), and fetching it would need a
 * Content-Security-Policy to allow `connect-src data:` for what is no connection at all.
 */
function dataUrlBytes(url: string): ArrayBuffer {
  const comma = url.indexOf(',');
  if (comma < 0) throw new ConnectionError(`cannot read ${url.slice(0, 40)}…: not a data: URL`, 'worker');
  const meta = url.slice(5, comma);
  const data = url.slice(comma + 1);
  const bytes = meta.endsWith(';base64') ? Uint8Array.from(atob(decodeURIComponent(data)), (c) => c.charCodeAt(0)) : new TextEncoder().encode(decodeURIComponent(data));
  return bytes.buffer as ArrayBuffer;
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

function startWorkers(scripts: Assets['scripts']): Workers {
  const engine = scripts ? new Worker(scripts.worker, { type: 'module' }) : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const socket = startSocketWorker(scripts?.socketWorker);
  const otHelper = startOtHelper(scripts?.otWorker);
  engine.postMessage({ type: 'ports', socket: socket.port, otHelper: otHelper.port } satisfies ToWorker, [socket.port, otHelper.port]);
  return { engine, socket: socket.worker, otHelper: otHelper.worker };
}

function terminate(workers: Workers): void {
  workers.engine.terminate();
  workers.socket.terminate();
  workers.otHelper.terminate();
}

/**
 * The workers of a cleanly closed session, kept for the next `connect` from the same assets:
 * starting a worker (a thread, its module graph) costs tens of milliseconds, a large part of a
 * small computation's latency. One set is enough for the usual connect–run–close sequence.
 */
let warmWorkers: { key: string; workers: Workers } | undefined;

function takeWorkers(assets: Assets): Workers {
  const warm = warmWorkers?.key === assets.key ? warmWorkers.workers : undefined;
  if (warm) warmWorkers = undefined;
  return warm ?? startWorkers(assets.scripts);
}

function keepWarm(key: string, workers: Workers): void {
  if (warmWorkers) terminate(workers);
  else warmWorkers = { key, workers };
}

class WorkerEngine implements EngineHandle {
  private readonly workers: Workers;
  private readonly worker: Worker;
  private nextId = 1;
  private readonly runs = new Map<number, { resolve: (r: RawResult) => void; reject: (e: GarbletError) => void; onProgress: (p: Progress) => void }>();
  private connecting?: { resolve: (c: ServiceInfo[]) => void; reject: (e: GarbletError) => void };
  private failure?: GarbletError;
  /** Whether the worker finished connecting: only such a worker can be closed cleanly and reused. */
  private connected = false;
  /** Closed cleanly: the worker goes warm when it says 'closed', instead of being terminated. */
  private keepWorker = false;

  constructor(private readonly assets: Assets) {
    this.workers = takeWorkers(assets);
    this.worker = this.workers.engine;
    this.worker.onmessage = (ev: MessageEvent<FromWorker>) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => this.fail(new ConnectionError(`the Garblet worker failed: ${ev.message}`, 'worker'));
    // Without its socket worker the engine would wait for a socket for ever. (Without the OT
    // helper it computes the base OTs alone: see Engine.shareBaseOts.)
    this.workers.socket.onerror = (ev) => this.fail(new ConnectionError(`the Garblet socket worker failed: ${ev.message}`, 'worker'));
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  connect(url: string, settings: EvaluatorSettings): Promise<ServiceInfo[]> {
    return new Promise((resolve, reject) => {
      this.connecting = { resolve, reject };
      this.post({ type: 'connect', url, settings, module: this.assets.module });
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
        if (this.keepWorker) keepWarm(this.assets.key, this.workers);
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
  /**
   * Connects to a Garblet server (`ws://`, `wss://`, or a path on this page's host) and completes
   * the hellos (the base OTs wait for the first run). With `options.integrity`, the SDK's files
   * are checked first: nothing starts and nothing connects unless all of them match. With
   * `options.require`, every run on the session gets at least that protection.
   */
  async connect(url: string, options: ConnectOptions = {}): Promise<Session> {
    const { signal } = options;
    const settings = evaluatorSettings(options);
    const required = checkedSecurity('require', options.require) ?? 'standard';
    const integrity = options.integrity === undefined ? undefined : checkIntegrity(options.integrity);
    if (signal?.aborted) throw new AbortError(reasonOf(signal));
    let loaded: Assets;
    try {
      loaded = await assets(integrity);
    } catch (e) {
      throw e instanceof GarbletError ? e : new ConnectionError(`the SDK's WebAssembly could not load: ${(e as Error).message}`, 'worker', { cause: e });
    }
    const engine = new WorkerEngine(loaded);
    const onAbort = () => engine.abort(reasonOf(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const target = socketUrl(url);
      const catalog = await engine.connect(target, settings);
      return new Session(engine, catalog, target, required);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  },
};
