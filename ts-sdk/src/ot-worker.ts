/// <reference lib="webworker" />
/**
 * The OT helper worker: computes half of the session's base-OT multiplications while the
 * engine's worker computes the other half (the browser's one expensive step of set-up, about
 * 10 ms of curve arithmetic in one thread), and in the authenticated mode works ahead of the
 * engine on the OT extension: the PRG streams of the OTs for the server's bits, ahead of its
 * messages, and whole chunks of the browser's own random bits, drawn here. It only runs jobs
 * the engine gives it over a MessagePort (see ot-helper.ts); the jobs and results hold secrets
 * of this page's session (a scalar, the streams' seeds, choice bits), which never leave the
 * page.
 */
import { initSync, runAheadJob, runBaseOtShare } from '../wasm/garblet_core.js';
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
      const result = (m.work === 'ahead' ? runAheadJob : runBaseOtShare)(new Uint8Array(m.job));
      reply = { type: 'done', id: m.id, result: result.buffer as ArrayBuffer };
    } catch (e) {
      reply = { type: 'failed', id: m.id, message: String((e as Error)?.message ?? e) };
    }
    port.postMessage(reply, reply.type === 'done' ? [reply.result] : []);
  };
};
