/// <reference lib="webworker" />
/**
 * The OT helper worker: computes half of the session's base-OT multiplications while the
 * engine's worker computes the other half (the browser's one expensive step of set-up, about
 * 10 ms of curve arithmetic in one thread). It only runs jobs the engine gives it over a
 * MessagePort (see ot-helper.ts); the jobs hold a secret scalar of this page's session, which
 * never leaves the page.
 */
import { initSync, runBaseOtShare } from '../wasm/garblet_core.js';
import type { FromOtHelper, ToOtHelper } from './protocol.js';

declare const self: DedicatedWorkerGlobalScope;

self.onmessage = (ev: MessageEvent<{ port: MessagePort }>) => {
  const port = ev.data.port;
  let ready = false;
  port.onmessage = ({ data: m }: MessageEvent<ToOtHelper>) => {
    if (m.type === 'init') {
      if (!ready) initSync({ module: m.module });
      ready = true;
      return;
    }
    let reply: FromOtHelper;
    try {
      const products = runBaseOtShare(new Uint8Array(m.job));
      reply = { type: 'done', id: m.id, products: products.buffer as ArrayBuffer };
    } catch (e) {
      reply = { type: 'failed', id: m.id, message: String((e as Error)?.message ?? e) };
    }
    port.postMessage(reply, reply.type === 'done' ? [reply.products] : []);
  };
};
