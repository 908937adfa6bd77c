/// <reference lib="webworker" />
/**
 * The Web Worker that owns the WebSocket and the WebAssembly evaluator, so evaluation never
 * blocks the page and garbled data never crosses threads. Spoken to by `browser.ts`.
 */
import { initSync } from '../wasm/garblet_core.js';
import * as wasm from '../wasm/garblet_core.js';
import { Engine, type Transport } from './engine.js';
import { ConnectionError, fromCoreError, toErrorData, type GarbletError } from './errors.js';
import type { FromWorker, ToWorker } from './protocol.js';

declare const self: DedicatedWorkerGlobalScope;

let engine: Engine | undefined;
const post = (m: FromWorker) => self.postMessage(m);
const postError = (e: unknown, id?: number) => post({ type: 'error', id, error: toErrorData(fromCoreError(e) as GarbletError) });

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch (e) {
      return reject(new ConnectionError(`cannot connect to ${url}: ${(e as Error).message}`));
    }
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new ConnectionError(`cannot connect to ${url}`));
    ws.onclose = (ev) => reject(new ConnectionError(`cannot connect to ${url} (code ${ev.code})`));
  });
}

function transportOf(ws: WebSocket): Transport {
  const t: Transport = {
    send: (frame) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    },
    close: () => ws.close(),
  };
  ws.onmessage = (ev) => t.onFrame?.(new Uint8Array(ev.data as ArrayBuffer));
  ws.onclose = (ev) => t.onClose?.(ev.reason || `code ${ev.code}`);
  ws.onerror = () => t.onClose?.('network error');
  return t;
}

self.onmessage = async (ev: MessageEvent<ToWorker>) => {
  const msg = ev.data;
  switch (msg.type) {
    case 'connect':
      try {
        const { memory } = initSync({ module: msg.module });
        const ws = await openSocket(msg.url);
        engine = new Engine({ WasmEvaluator: wasm.WasmEvaluator, memory }, transportOf(ws), msg.window);
        post({ type: 'ready', catalog: await engine.ready() });
      } catch (e) {
        postError(e);
      }
      break;
    case 'run':
      if (!engine) return postError(new ConnectionError('not connected'), msg.id);
      engine.run(msg.request, (progress) => post({ type: 'progress', id: msg.id, progress })).then(
        (result) => post({ type: 'result', id: msg.id, result }),
        (e) => postError(e, msg.id),
      );
      break;
    case 'abort':
      engine?.abort(msg.reason);
      break;
    case 'close':
      engine?.close();
      engine = undefined;
      // The worker stays, warm, for the page's next session. The acknowledgement waits a turn so
      // that this session's last messages (a closed run's rejection, posted from a microtask)
      // go before it: after 'closed', nothing of this session follows.
      setTimeout(() => post({ type: 'closed' }));
      break;
  }
};
