/// <reference lib="webworker" />
/**
 * The OT helper worker: computes half of the session's base-OT multiplications while the
 * engine's worker computes the other half (the browser's one expensive step of set-up, about
 * 10 ms of curve arithmetic in one thread), and in the authenticated mode works ahead of the
 * engine on the OT extension: the PRG streams of the OTs for the server's bits, ahead of its
 * messages, and whole chunks of the browser's own random bits, drawn here. It only runs jobs
 * the engine gives it over a MessagePort (see ot-helper.ts), skipping those whose positions the
 * session has claimed meanwhile; the jobs and results hold secrets of this page's session (a
 * scalar, the streams' seeds, choice bits), which never leave the page.
 */
import { aheadJobClaimed, initSync, noteAheadClaimed, runAheadJob, runBaseOtShare } from '../wasm/garblet_core.js';
import type { FromOtHelper, ToOtHelper } from './protocol.js';

declare const self: DedicatedWorkerGlobalScope;

type Run = Extract<ToOtHelper, { type: 'run' }>;

self.onmessage = (ev: MessageEvent<{ port: MessagePort }>) => {
  const port = ev.data.port;
  let ready = false;
  // Jobs ahead wait here and run one per task, so that the messages that came meanwhile — the
  // session's notices of positions it has claimed among them — are handled before the next
  // one starts: a job the session has overtaken is skipped instead of run. The next task is
  // asked for by a message to this worker itself, which queues behind the messages already
  // there (a timer would be clamped to 4 ms once nested).
  const queue: Run[] = [];
  const tick = new MessageChannel();
  let ticking = false;
  const next = () => {
    if (ticking || queue.length === 0) return;
    ticking = true;
    tick.port2.postMessage(null);
  };
  tick.port1.onmessage = () => {
    ticking = false;
    const m = queue.shift();
    if (m) run(m);
    next();
  };
  const run = (m: Run) => {
    let reply: FromOtHelper;
    try {
      const job = new Uint8Array(m.job);
      if (m.work === 'ahead' && aheadJobClaimed(job)) {
        reply = { type: 'skipped', id: m.id };
      } else {
        const result = (m.work === 'ahead' ? runAheadJob : runBaseOtShare)(job);
        reply = { type: 'done', id: m.id, result: result.buffer as ArrayBuffer };
      }
    } catch (e) {
      reply = { type: 'failed', id: m.id, message: String((e as Error)?.message ?? e) };
    }
    port.postMessage(reply, reply.type === 'done' ? [reply.result] : []);
  };
  port.onmessage = ({ data: m }: MessageEvent<ToOtHelper>) => {
    if (m.type === 'init') {
      if (!ready) initSync({ module: m.module });
      ready = true;
    } else if (m.type === 'claimed') {
      noteAheadClaimed(new Uint8Array(m.notice));
    } else if (m.work === 'base-ots') {
      // The base OTs are on the computation's critical path: at once.
      run(m);
    } else {
      queue.push(m);
      next();
    }
  };
};
