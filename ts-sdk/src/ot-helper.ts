/**
 * Both ends of the OT helper worker (ot-worker.ts): the page starts it beside the engine's
 * worker and joins them with a MessageChannel; the engine sends it jobs, which it runs in turn.
 */
import type { OtHelper } from './engine.js';
import { joinedByChannel, movableBuffer, type FromOtHelper, type ToOtHelper } from './protocol.js';

/** The helper worker and the port the engine's worker uses to talk to it. */
export function startOtHelper(script?: string): { worker: Worker; port: MessagePort } {
  return joinedByChannel(script ? new Worker(script, { type: 'module' }) : new Worker(new URL('./ot-worker.js', import.meta.url), { type: 'module' }));
}

/** The engine's side: jobs out, results back; the helper instantiates `module` first. */
export function otHelperOver(port: MessagePort, module: WebAssembly.Module): OtHelper {
  const pending = new Map<number, { resolve: (r: Uint8Array | null) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  port.onmessage = ({ data: m }: MessageEvent<FromOtHelper>) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.type === 'done') p?.resolve(new Uint8Array(m.result));
    else if (m.type === 'skipped') p?.resolve(null);
    else p?.reject(new Error(m.message));
  };
  port.postMessage({ type: 'init', module } satisfies ToOtHelper);
  const run = (work: 'base-ots' | 'ahead', job: Uint8Array): Promise<Uint8Array | null> => {
    const id = nextId++;
    const buffer = movableBuffer(job);
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      port.postMessage({ type: 'run', id, job: buffer, work } satisfies ToOtHelper, [buffer]);
    });
  };
  return {
    // The helper skips only jobs ahead; a share of the base OTs always comes back.
    baseOts: (job) => run('base-ots', job) as Promise<Uint8Array>,
    ahead: (job) => run('ahead', job),
    claimed: (notice) => {
      const buffer = movableBuffer(notice);
      port.postMessage({ type: 'claimed', notice: buffer } satisfies ToOtHelper, [buffer]);
    },
  };
}
