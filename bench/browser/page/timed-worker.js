/**
 * The SDK worker's steps for one session (see ts-sdk/src/worker.ts: open the socket in the
 * socket worker, instantiate the wasm, the hellos, one run with the base OTs shared with the
 * OT helper), each followed by
 * a timestamp for the page. Times are absolute (timeOrigin + now) so that the page can compare
 * them with its own. A worker kept for several sessions shows what a warm worker saves.
 */
import { Engine } from '/sdk/dist/engine.js';
import { otHelperOver } from '/sdk/dist/ot-helper.js';
import { openSocket } from '/sdk/dist/socket-port.js';
import { initSync } from '/sdk/wasm/garblet_core.js';
import * as wasm from '/sdk/wasm/garblet_core.js';

const clock = () => performance.timeOrigin + performance.now();
const modulesLoaded = clock();

let socketPort;
let otHelperPort;
let otHelper;

self.onmessage = async ({ data: { ports, module, url, plaintext } }) => {
  if (ports) {
    [socketPort, otHelperPort] = ports;
    return;
  }
  otHelper ??= otHelperOver(otHelperPort, module);
  const marks = { modulesLoaded, messageReceived: clock() };
  const opening = openSocket(socketPort, url);
  initSync({ module });
  marks.wasmInstantiated = clock();
  const transport = await opening;
  marks.socketOpen = clock();
  const engine = new Engine(wasm, transport, { window: 4 << 20 }, otHelper);
  await engine.ready();
  marks.ready = clock();
  await engine.run({ service: 'aes128', inputs: { plaintext }, params: {}, progressInterval: 1e9 }, () => {});
  marks.result = clock();
  engine.close();
  self.postMessage(marks);
};
