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
import { reasonOf, Session } from './session.js';
import type { ConnectOptions } from './types.js';

export * from './api.js';

let initialised = false;

function loadWasm(): void {
  if (initialised) return;
  initSync({ module: readFileSync(new URL('../wasm/garblet_core_bg.wasm', import.meta.url)) });
  initialised = true;
}

function openSocket(url: string, signal?: AbortSignal): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError(reasonOf(signal)));
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 << 20 });
    } catch (e) {
      return reject(new ConnectionError(`cannot connect to ${url}: ${(e as Error).message}`, { cause: e }));
    }
    ws.binaryType = 'nodebuffer';
    const onAbort = () => {
      ws.terminate();
      reject(new AbortError(reasonOf(signal)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('open', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(ws);
    });
    ws.once('error', (e) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new ConnectionError(`cannot connect to ${url}: ${e.message}`, { cause: e }));
    });
  });
}

function transportOf(ws: WebSocket): Transport {
  const t: Transport = {
    send: (frame) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    },
    close: () => ws.close(),
  };
  ws.on('message', (data: Buffer) => t.onFrame?.(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
  ws.on('close', (code, reason) => t.onClose?.(reason.toString() || `code ${code}`));
  ws.on('error', (e) => t.onClose?.(e.message));
  return t;
}

export const Garblet = {
  /** Connects to a Garblet server (`ws://` or `wss://`) and completes the hello and base OTs. */
  async connect(url: string, options: ConnectOptions = {}): Promise<Session> {
    loadWasm();
    const ws = await openSocket(url, options.signal);
    const engine = new Engine(wasm, transportOf(ws), options.window ?? 4 << 20);
    const onAbort = () => engine.abort(reasonOf(options.signal));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const catalog = await engine.ready();
      return new Session(engine, catalog, url);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  },
};
