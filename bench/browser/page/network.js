/** Measurements against the server, through the SDK's browser build (engine in a Web Worker). */
import { Garblet } from '/sdk/dist/browser.js';
import { median, now } from './timing.js';

/** Raw receive speed of `bytes` from `/bench/raw` in `frame`-byte messages. */
export function rawWebSocketThroughput(server, bytes, frame) {
  const worker = new Worker('/page/ws-throughput-worker.js');
  return new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      worker.terminate();
      if (data.error) return reject(new Error(data.error));
      if (data.bytes !== bytes) return reject(new Error(`received ${data.bytes} of ${bytes} bytes`));
      resolve({ bytesPerSecond: (data.bytes * 1000) / data.ms, ms: data.ms, messages: data.messages });
    };
    worker.postMessage({ url: `ws://${server}/bench/raw?bytes=${bytes}&frame=${frame}` });
  });
}

/**
 * One large `synthetic` computation: AND gates per second from `run` to its result, with the
 * SDK's default credit window unless `window` (bytes) is given, and the SDK's default garbling
 * (`auto`: the server's first offer) unless `garbling` names a scheme.
 */
export async function endToEndThroughput(server, andGates, window, garbling) {
  const session = await Garblet.connect(`ws://${server}/`, { ...(window && { window }), ...(garbling && { garbling }) });
  try {
    const start = now();
    const { stats } = await session.run('synthetic', 0n, { params: { and_gates: andGates } });
    const ms = now() - start;
    return { andPerSecond: (andGates * 1000) / ms, ms, bytesPerAnd: stats.evaluator.bytes_received / andGates, stats };
  } finally {
    session.close();
  }
}

/**
 * One `synthetic` computation in `security` on a fresh connection, for memory.mjs: its seconds
 * from `run` to the result, the AND gates evaluated, and the WebAssembly memory the SDK reports
 * (the largest and the last, sampled once a second).
 */
export async function syntheticWasmMemory(server, andGates, security) {
  const session = await Garblet.connect(`ws://${server}/`);
  let wasm = { peak: 0, end: 0 };
  const onProgress = (p) => {
    const bytes = p.wasmMemoryBytes ?? 0;
    wasm = { peak: Math.max(wasm.peak, bytes), end: bytes };
  };
  try {
    const start = now();
    const { stats } = await session.run('synthetic', 0n, { params: { and_gates: andGates }, security, onProgress, progressInterval: 1000 });
    return { seconds: (now() - start) / 1000, wasm, andGates: stats.evaluator.and_gates };
  } finally {
    session.close();
  }
}

function randomBlock() {
  return crypto.getRandomValues(new Uint8Array(16));
}

/** One private AES block, timed from `Garblet.connect` to the ciphertext; median of `runs`. */
export async function aesLatency(server, runs = 20) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = now();
    const session = await Garblet.connect(`ws://${server}/`);
    const connected = now();
    await session.run('aes128', { plaintext: randomBlock() });
    const done = now();
    session.close();
    samples.push({ totalMs: done - start, connectMs: connected - start, runMs: done - connected });
  }
  return { medianMs: median(samples.map((s) => s.totalMs)), samples };
}

/**
 * Private AES of one block with `service` (`aes128`, the Bristol circuit, or `aes128_bp`, the
 * library's) in the mode `security` under the garbling scheme `garbling`, each run on a fresh
 * connection: from `run` to the ciphertext (a connection's first cut-and-choose computation
 * includes its chosen OT's base OT, as the native loopback figures do), from `Garblet.connect`,
 * and the bytes each way as the evaluator counted them; `runs` runs after one not counted.
 */
export async function aesSecurityCost(server, security, garbling, runs = 12, service = 'aes128') {
  const samples = [];
  for (let i = 0; i <= runs; i++) {
    const start = now();
    const session = await Garblet.connect(`ws://${server}/`, { garbling });
    try {
      const connected = now();
      const { stats } = await session.run(service, { plaintext: randomBlock() }, { security });
      const done = now();
      if (i > 0) samples.push({ runMs: done - connected, withConnectMs: done - start, received: stats.evaluator.bytes_received, sent: stats.evaluator.bytes_sent });
    } finally {
      session.close();
    }
  }
  return samples;
}

/**
 * One private AES block on a fresh connection and again on the same connection, through
 * `server` (a relay with a round-trip time): `coldMs` from calling `Garblet.connect` to the
 * first result, `warmMs` from the second `run` to its result; medians of `runs` connections
 * after one not counted (which starts the SDK's workers: later connections take them warm, as a
 * page's second session does). What cold counts: the worker's wasm instance, the TCP connection
 * to the relay (on this machine, so the TCP handshake's round trip is not in it, nor DNS or
 * TLS), the WebSocket upgrade and the server's hello (one round trip), the base OTs, the
 * request with the OT extension and the garbled stream (one more), evaluation. `rttMs` is the
 * median time of `GET /health` through the same relay (a new TCP connection each, so one
 * request and its response: one round trip plus the server's answer).
 */
export async function aesColdWarm(server, runs = 9) {
  const samples = [];
  for (let i = 0; i <= runs; i++) {
    const start = now();
    const session = await Garblet.connect(`ws://${server}/`);
    try {
      await session.run('aes128', { plaintext: randomBlock() });
      const cold = now();
      await session.run('aes128', { plaintext: randomBlock() });
      if (i > 0) samples.push({ coldMs: cold - start, warmMs: now() - cold });
    } finally {
      session.close();
    }
  }
  const rtts = [];
  for (let i = 0; i < runs; i++) {
    const start = now();
    await fetch(`http://${server}/health`, { mode: 'no-cors', cache: 'no-store' });
    rtts.push(now() - start);
  }
  return { coldMs: median(samples.map((s) => s.coldMs)), warmMs: median(samples.map((s) => s.warmMs)), rttMs: median(rtts), samples };
}

/**
 * `endToEndThroughput` for each starting window of `windows` (bytes), `rounds` times in turn
 * (each round runs every window once, so a drift of the machine spreads over all of them); the
 * SDK's default garbling and window growth (up to its default `maxWindow`).
 */
export async function windowSweep(server, andGates, windows, rounds) {
  const runs = windows.map((window) => ({ window, andPerSecond: [] }));
  for (let round = 0; round < rounds; round++) {
    for (const r of runs) r.andPerSecond.push((await endToEndThroughput(server, andGates, r.window)).andPerSecond);
  }
  return runs.map((r) => ({ ...r, median: median(r.andPerSecond) }));
}

/**
 * Private AES with `service` on one warm connection: `runs` pairs of a standard run and an
 * authenticated run whose preprocessing `session.prepare` did just before it; milliseconds from
 * `run` to the result of each (the online phase of the authenticated one) and the bytes of each.
 */
export async function aesPreparedOnline(server, runs = 12, service = 'aes128') {
  const session = await Garblet.connect(`ws://${server}/`);
  try {
    // The connection's base OTs and the workers, before anything is timed.
    await session.run(service, { plaintext: randomBlock() });
    const samples = [];
    for (let i = 0; i < runs; i++) {
      let start = now();
      const standard = await session.run(service, { plaintext: randomBlock() });
      const standardMs = now() - start;
      await session.prepare(service);
      start = now();
      const online = await session.run(service, { plaintext: randomBlock() }, { security: 'authenticated' });
      const onlineMs = now() - start;
      if (!online.prepared) throw new Error('the authenticated run did not use the preprocessing done ahead');
      const bytes = (r) => r.stats.evaluator.bytes_sent + r.stats.evaluator.bytes_received;
      samples.push({ standardMs, onlineMs, standardBytes: bytes(standard), onlineBytes: bytes(online) });
    }
    return samples;
  } finally {
    session.close();
  }
}
