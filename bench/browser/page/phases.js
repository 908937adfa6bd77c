/**
 * Where the time of one private AES block goes. The SDK's engine is driven here in the page's
 * own thread over a WebSocket whose frames are time-stamped, so the protocol's phases show:
 * socket open, the crossing hellos, the request, the base OT and OT extension (while the garbled
 * stream arrives), the label corrections, evaluation, Done. Frames that arrive while the thread
 * computes are stamped when it gets to them.
 * The same steps in a worker, fresh (as a first `Garblet.connect`) and warm, show what it adds.
 */
import { Engine } from '/sdk/dist/engine.js';
import { otHelperOver, startOtHelper } from '/sdk/dist/ot-helper.js';
import { startSocketWorker } from '/sdk/dist/socket-port.js';
import init, * as wasm from '/sdk/wasm/garblet_core.js';
import { median, now } from './timing.js';
import { openSocket } from './socket.js';

const WASM_URL = '/sdk/wasm/garblet_core_bg.wasm';
const FRAME = { hello: 0x01, compute: 0x02, otChunk: 0x03, serverHello: 0x81, data: 0x83, done: 0x84, corrections: 0x85 };

/** A transport over a page WebSocket that records when each frame passes and how long the engine spends on it. */
class TimedTransport {
  constructor(ws, t0) {
    this.ws = ws;
    this.t0 = t0;
    this.marks = {};
    this.engineMs = { serverHello: 0, data: 0, corrections: 0, done: 0 };
    this.dataFrames = 0;
    ws.onmessage = (ev) => this.received(new Uint8Array(ev.data));
    ws.onclose = (ev) => this.onClose?.(ev.reason || `code ${ev.code}`);
  }

  mark(name) {
    this.marks[name] ??= now() - this.t0;
  }

  send(frame) {
    if (frame[0] === FRAME.hello) this.mark('helloSent');
    if (frame[0] === FRAME.compute) this.mark('computeSent');
    if (frame[0] === FRAME.otChunk) this.marks.otSent = now() - this.t0;
    this.ws.send(frame);
  }

  close() {
    this.ws.close();
  }

  received(frame) {
    const type = frame[0];
    const start = now();
    if (type === FRAME.serverHello) this.mark('serverHello');
    if (type === FRAME.data) {
      this.mark('firstData');
      this.marks.lastData = start - this.t0;
      this.dataFrames++;
    }
    if (type === FRAME.corrections) this.mark('corrections');
    if (type === FRAME.done) this.mark('done');
    this.onFrame?.(frame);
    const spent = now() - start;
    if (type === FRAME.serverHello) this.engineMs.serverHello += spent;
    if (type === FRAME.data) this.engineMs.data += spent;
    if (type === FRAME.corrections) this.engineMs.corrections += spent;
    if (type === FRAME.done) this.engineMs.done += spent;
  }
}

/** One aes128 run in this thread, in `security`; milliseconds from the start to each phase boundary. */
async function timedAesRun(server, security) {
  const t0 = now();
  const ws = await openSocket(`ws://${server}/`);
  const transport = new TimedTransport(ws, t0);
  transport.mark('socketOpen');
  const engine = new Engine(wasm, transport, { window: 4 << 20 });
  await engine.ready();
  transport.mark('ready');
  const request = { service: 'aes128', inputs: { plaintext: crypto.getRandomValues(new Uint8Array(16)) }, params: {}, progressInterval: 1e9, security };
  await engine.run(request, () => {});
  transport.mark('result');
  engine.close();
  return { ...transport.marks, engineMs: transport.engineMs, dataFrames: transport.dataFrames };
}

function medianOf(runs, pick) {
  return median(runs.map(pick));
}

/** The median timeline of `runs` in-thread aes128 runs. */
export async function aesTimeline(server, runs = 15, security = 'standard') {
  await init();
  const all = [];
  for (let i = 0; i < runs; i++) all.push(await timedAesRun(server, security));
  const marks = ['socketOpen', 'helloSent', 'serverHello', 'ready', 'computeSent', 'otSent', 'firstData', 'lastData', 'corrections', 'done', 'result'];
  const timeline = Object.fromEntries(marks.map((m) => [m, medianOf(all, (r) => r[m])]));
  const engineMs = Object.fromEntries(Object.keys(all[0].engineMs).map((k) => [k, medianOf(all, (r) => r.engineMs[k])]));
  return { timeline, engineMs, dataFrames: all[0].dataFrames, runs: all };
}

/**
 * One authenticated `synthetic` computation of `andGates` AND gates with the SDK's engine on
 * this thread (for a CPU profile of it) and its OT helper in a worker, as the SDK pairs them:
 * the engine's time in its own calls, in milliseconds.
 */
export async function authenticatedInPage(server, andGates) {
  const { memory } = await init();
  const module = await WebAssembly.compileStreaming(fetch(WASM_URL));
  const ws = await openSocket(`ws://${server}/`);
  const transport = new TimedTransport(ws, now());
  const helper = startOtHelper();
  try {
    const engine = new Engine({ WasmEvaluator: wasm.WasmEvaluator, memory, runBaseOtShare: wasm.runBaseOtShare }, transport, { window: 4 << 20 }, otHelperOver(helper.port, module));
    await engine.ready();
    const request = { service: 'synthetic', inputs: { evaluator: 0n }, params: { and_gates: andGates }, progressInterval: 1e9, security: 'authenticated' };
    const { stats } = await engine.run(request, () => {});
    engine.close();
    return stats.evaluator.cpu_ms;
  } finally {
    helper.worker.terminate();
  }
}

/** Runs one aes128 session in `worker`; milliseconds from `t0` (absolute) to each step. */
function workerSession(worker, module, server, t0) {
  return new Promise((resolve) => {
    worker.onmessage = ({ data }) => resolve(Object.fromEntries(Object.entries(data).map(([k, t]) => [k, t - t0])));
    worker.postMessage({ module, url: `ws://${server}/`, plaintext: crypto.getRandomValues(new Uint8Array(16)) });
  });
}

/**
 * The OT helper's share of the authenticated mode's work: `rounds` triples of `synthetic` runs
 * with `andGates` AND gates on fresh connections, one with the helper working ahead on both OT
 * directions, one with it turning those jobs down, and one with no helper (helper-worker.js),
 * in the SDK's three workers kept warm; medians of each. `engineMs` is the engine worker's own work, the measure of
 * what a second worker takes off it whatever the machine's spare cores; `wallMs` also shows
 * whether the machine had a core for the helper (here the server and Chromium's own threads
 * share two).
 */
export async function helperShare(server, andGates, rounds = 3) {
  const module = await WebAssembly.compileStreaming(fetch(WASM_URL));
  const worker = new Worker('/page/helper-worker.js', { type: 'module' });
  const socket = startSocketWorker();
  const otHelper = startOtHelper();
  worker.postMessage({ ports: [socket.port, otHelper.port] }, [socket.port, otHelper.port]);
  const run = (helper) =>
    new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => (data.error ? reject(new Error(data.error)) : resolve(data));
      worker.postMessage({ module, url: `ws://${server}/`, andGates, helper });
    });
  try {
    const runs = { ahead: [], alone: [], none: [] };
    for (let i = 0; i < rounds; i++) {
      runs.ahead.push(await run('ahead'));
      runs.alone.push(await run('declined'));
      runs.none.push(await run('none'));
    }
    const medians = (rs) => ({ wallMs: median(rs.map((r) => r.wallMs)), engineMs: median(rs.map((r) => r.engineMs)), serverMs: median(rs.map((r) => r.serverMs)) });
    return { andGates, ahead: medians(runs.ahead), alone: medians(runs.alone), none: medians(runs.none), runs };
  } finally {
    worker.terminate();
    socket.worker.terminate();
    otHelper.worker.terminate();
  }
}

/**
 * One aes128 session the way the SDK's worker runs it: in fresh workers (engine, socket, OT
 * helper) each time, as `Garblet.connect` starts them, and in ones kept warm; medians of `runs`, milliseconds
 * from the start (`new Worker`, or posting to the warm worker) to each step.
 */
export async function workerTimeline(server, runs = 10) {
  const module = await WebAssembly.compileStreaming(fetch(WASM_URL));
  const start = () => performance.timeOrigin + now();
  // The engine's worker, its socket worker and its OT helper, as the SDK starts them
  // (ts-sdk/src/browser.ts).
  const startPair = () => {
    const worker = new Worker('/page/timed-worker.js', { type: 'module' });
    const socket = startSocketWorker();
    const otHelper = startOtHelper();
    worker.postMessage({ ports: [socket.port, otHelper.port] }, [socket.port, otHelper.port]);
    return { worker, terminate: () => (worker.terminate(), socket.worker.terminate(), otHelper.worker.terminate()) };
  };
  const fresh = [];
  for (let i = 0; i < runs; i++) {
    const t0 = start();
    const pair = startPair();
    fresh.push(await workerSession(pair.worker, module, server, t0));
    pair.terminate();
  }
  const warmPair = startPair();
  await workerSession(warmPair.worker, module, server, start());
  const warm = [];
  for (let i = 0; i < runs; i++) warm.push(await workerSession(warmPair.worker, module, server, start()));
  warmPair.terminate();
  const medians = (all) => Object.fromEntries(Object.keys(all[0]).map((k) => [k, medianOf(all, (r) => r[k])]));
  return { fresh: medians(fresh), warm: medians(warm) };
}

/** Compiling the wasm (once per page in the SDK) and instantiating it (once per session's worker). */
export async function wasmSetup(runs = 10) {
  const start = now();
  const module = await WebAssembly.compileStreaming(fetch(WASM_URL));
  const compileMs = now() - start;
  // Instantiation calls no import: stubs stand in for the bindings.
  const imports = {};
  for (const i of WebAssembly.Module.imports(module)) (imports[i.module] ??= {})[i.name] = () => {};
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    new WebAssembly.Instance(module, imports);
    samples.push(now() - t);
  }
  return { compileMs, instantiateMs: median(samples), bytes: (await (await fetch(WASM_URL)).arrayBuffer()).byteLength };
}
