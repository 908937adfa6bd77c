/**
 * One authenticated `synthetic` run through the SDK's engine, as the SDK's worker runs it
 * (ts-sdk/src/worker.ts), with `helper` 'ahead': the OT helper working ahead on the OT
 * extension; 'declined': the helper turning every such job down (it then takes only its half
 * of the base OTs, and the engine does all of the extension itself); 'none': no helper at all,
 * the engine doing everything in its one worker, as on a page that has no worker to spare.
 * Posts the run's wall time from the request to the result, the engine's time in its own calls
 * and the server's CPU time.
 */
import { Engine } from '/sdk/dist/engine.js';
import { otHelperOver } from '/sdk/dist/ot-helper.js';
import { openSocket } from '/sdk/dist/socket-port.js';
import { initSync } from '/sdk/wasm/garblet_core.js';
import * as wasm from '/sdk/wasm/garblet_core.js';

let socketPort;
let otHelperPort;
let otHelper;

self.onmessage = async ({ data: { ports, module, url, andGates, helper: mode } }) => {
  if (ports) {
    [socketPort, otHelperPort] = ports;
    return;
  }
  try {
    otHelper ??= otHelperOver(otHelperPort, module);
    const opening = openSocket(socketPort, url);
    initSync({ module });
    const transport = await opening;
    const helpers = { ahead: otHelper, declined: { baseOts: otHelper.baseOts, ahead: () => Promise.reject(new Error('turned down')) }, none: undefined };
    const engine = new Engine(wasm, transport, { window: 4 << 20 }, helpers[mode]);
    await engine.ready();
    const start = performance.now();
    const { stats } = await engine.run({ service: 'synthetic', inputs: { evaluator: 0n }, params: { and_gates: andGates }, progressInterval: 1e9, security: 'authenticated' }, () => {});
    const wallMs = performance.now() - start;
    engine.close();
    self.postMessage({ wallMs, engineMs: stats.evaluator.cpu_ms, serverMs: stats.garbler.cpu_ms, andGates: stats.evaluator.and_gates });
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
