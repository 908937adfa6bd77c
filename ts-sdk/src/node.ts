/**
 * Garblet for Node.js: the engine runs in this thread, over the `ws` WebSocket client.
 * `import { Garblet } from 'garblet'` picks this file under Node and `browser.ts` elsewhere.
 */
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { initSync } from '../wasm/garblet_core.js';
import * as wasm from '../wasm/garblet_core.js';
import { Engine, type Transport } from './engine.js';
import { AbortError, ConnectionError } from './errors.js';
import { checkIntegrity, verifyAsset, type AssetIntegrity } from './integrity.js';
import { checkedSecurity, evaluatorSettings } from './options.js';
import { reasonOf, Session } from './session.js';
import type { ConnectOptions } from './types.js';

export * from './api.js';

/** The WebAssembly core's bytes and the instance made from them, once per process. */
let core: { url: string; bytes: Buffer<ArrayBuffer>; memory: WebAssembly.Memory } | undefined;

/**
 * Instantiates the WebAssembly core once per process; returns its linear memory. With
 * `integrity`, the bytes the instance was made from are checked first.
 */
async function loadWasm(integrity?: AssetIntegrity): Promise<WebAssembly.Memory> {
  if (!core) {
    const url = new URL('../wasm/garblet_core_bg.wasm', import.meta.url);
    const bytes = readFileSync(url);
    if (integrity) await verifyAsset('wasm', url.href, bytes, integrity.wasm);
    core ??= { url: url.href, bytes, memory: initSync({ module: bytes }).memory };
  } else if (integrity) {
    await verifyAsset('wasm', core.url, core.bytes, integrity.wasm);
  }
  return core.memory;
}

/**
 * The engine's transport over a `ws` socket. It listens from the moment the socket exists and
 * holds what arrives until the engine is attached: `ws` can emit a frame that came with the
 * handshake response before the code awaiting `open` resumes, and a server that refuses a
 * session (Busy) sends its Error frame right away; unheard, it would leave only a bare close.
 */
class SocketTransport implements Transport {
  onFrame?: (frame: Uint8Array) => void;
  onClose?: (reason: string) => void;
  private held: (() => void)[] | undefined = [];

  constructor(private readonly ws: WebSocket) {
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer) => this.deliver(() => this.onFrame?.(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))));
    ws.on('close', (code, reason) => this.deliver(() => this.onClose?.(reason.toString() || `code ${code}`)));
    ws.on('error', (e) => this.deliver(() => this.onClose?.(e.message)));
  }

  send(frame: Uint8Array): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  close(): void {
    this.ws.close();
  }

  /** The engine listens now: delivers what arrived before, then everything as it comes. */
  attached(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) event();
  }

  private deliver(event: () => void): void {
    if (this.held) this.held.push(event);
    else event();
  }
}

function openTransport(url: string, signal?: AbortSignal): Promise<SocketTransport> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError(reasonOf(signal)));
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 << 20 });
    } catch (e) {
      return reject(new ConnectionError(`cannot connect to ${url}: ${(e as Error).message}`, 'unreachable', { cause: e }));
    }
    const transport = new SocketTransport(ws);
    const onAbort = () => {
      ws.terminate();
      reject(new AbortError(reasonOf(signal)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('open', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(transport);
    });
    ws.once('error', (e) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new ConnectionError(`cannot connect to ${url}: ${e.message}`, 'unreachable', { cause: e }));
    });
  });
}

export const Garblet = {
  /**
   * Connects to a Garblet server (`ws://` or `wss://`) and completes the hellos (the base OTs
   * wait for the first run). With `options.integrity`, the WebAssembly file is checked first
   * (Node has no workers to check); a mismatch rejects with an IntegrityError before connecting.
   * With `options.require`, every run on the session gets at least that protection.
   */
  async connect(url: string, options: ConnectOptions = {}): Promise<Session> {
    const settings = evaluatorSettings(options);
    const required = checkedSecurity('require', options.require) ?? 'standard';
    const memory = await loadWasm(options.integrity === undefined ? undefined : checkIntegrity(options.integrity));
    const transport = await openTransport(url, options.signal);
    const engine = new Engine({ WasmEvaluator: wasm.WasmEvaluator, memory }, transport, settings);
    transport.attached();
    const onAbort = () => engine.abort(reasonOf(options.signal));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const catalog = await engine.ready();
      return new Session(engine, catalog, url, required);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  },
};
