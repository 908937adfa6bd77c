/// <reference lib="webworker" />
/**
 * The Web Worker that runs the WebAssembly evaluator, so evaluation never blocks the page. Its
 * WebSocket lives in a socket worker of its own (socket-worker.ts), which keeps reading while
 * this one computes; frames move between the two without copies. Half of the base OTs, and
 * work ahead on the OT extension, go to an OT helper worker (ot-worker.ts). Spoken to by
 * `browser.ts`.
 */
import { initSync } from '../wasm/garblet_core.js';
import * as wasm from '../wasm/garblet_core.js';
import { Engine, type OtHelper } from './engine.js';
import { ConnectionError, fromCoreError, toErrorData, type GarbletError } from './errors.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { otHelperOver } from './ot-helper.js';
import { openSocket } from './socket-port.js';

declare const self: DedicatedWorkerGlobalScope;

let engine: Engine | undefined;
const post = (m: FromWorker) => self.postMessage(m);
const postError = (e: unknown, id?: number) => post({ type: 'error', id, error: toErrorData(fromCoreError(e) as GarbletError) });

/** The socket worker (socket-worker.ts) and the OT helper (ot-worker.ts), through the ports the page gave us. */
let socketPort: MessagePort | undefined;
let otHelperPort: MessagePort | undefined;
let otHelper: OtHelper | undefined;

self.onmessage = async (ev: MessageEvent<ToWorker>) => {
  const msg = ev.data;
  switch (msg.type) {
    case 'ports':
      socketPort = msg.socket;
      otHelperPort = msg.otHelper;
      break;
    case 'connect':
      try {
        // The socket opens in the other worker while this one instantiates the wasm.
        const opening = socketPort ? openSocket(socketPort, msg.url) : Promise.reject(new ConnectionError('the socket worker is missing', 'worker'));
        const { memory } = initSync({ module: msg.module });
        if (otHelperPort && !otHelper) otHelper = otHelperOver(otHelperPort, msg.module);
        const transport = await opening;
        engine = new Engine({ WasmEvaluator: wasm.WasmEvaluator, memory, runBaseOtShare: wasm.runBaseOtShare }, transport, msg.settings, otHelper);
        post({ type: 'ready', catalog: await engine.ready() });
      } catch (e) {
        postError(e);
      }
      break;
    case 'run':
      if (!engine) return postError(new ConnectionError('not connected', 'closed'), msg.id);
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
