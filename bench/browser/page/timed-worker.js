/**
 * The SDK worker's steps for one session (see ts-sdk/src/worker.ts: instantiate the wasm, open
 * the socket, the hellos, one run with the base OT), each followed by a timestamp for the page. Times are
 * absolute (timeOrigin + now) so that the page can compare them with its own. A worker kept for
 * several sessions shows what a warm worker saves.
 */
import { Engine } from '/sdk/dist/engine.js';
import { initSync } from '/sdk/wasm/garblet_core.js';
import * as wasm from '/sdk/wasm/garblet_core.js';
import { openSocket } from './socket.js';

const clock = () => performance.timeOrigin + performance.now();
const modulesLoaded = clock();

function transportOf(ws) {
  const t = { send: (frame) => ws.send(frame), close: () => ws.close() };
  ws.onmessage = (ev) => t.onFrame?.(new Uint8Array(ev.data));
  ws.onclose = (ev) => t.onClose?.(ev.reason || `code ${ev.code}`);
  return t;
}

self.onmessage = async ({ data: { module, url, plaintext } }) => {
  const marks = { modulesLoaded, messageReceived: clock() };
  initSync({ module });
  marks.wasmInstantiated = clock();
  const ws = await openSocket(url);
  marks.socketOpen = clock();
  const engine = new Engine(wasm, transportOf(ws), 4 << 20);
  await engine.ready();
  marks.ready = clock();
  await engine.run({ service: 'aes128', inputs: { plaintext }, params: {}, progressInterval: 1e9 }, () => {});
  marks.result = clock();
  engine.close();
  self.postMessage(marks);
};
