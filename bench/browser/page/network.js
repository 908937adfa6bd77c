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
 * SDK's default credit window unless `window` (bytes) is given.
 */
export async function endToEndThroughput(server, andGates, window) {
  const session = await Garblet.connect(`ws://${server}/`, window ? { window } : {});
  try {
    const start = now();
    const { stats } = await session.run('synthetic', 0n, { params: { and_gates: andGates } });
    const ms = now() - start;
    return { andPerSecond: (andGates * 1000) / ms, ms, bytesPerAnd: stats.evaluator.bytes_received / andGates, stats };
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
