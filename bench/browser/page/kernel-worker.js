/**
 * One set of kernel trials in a worker of its own (see kernels.js): our AES, the `aes` crate's,
 * the evaluators (with the sessions' garbling hash, and with the fixed-key hash it replaced) and
 * the correlated-OT extension (SoftSpoken at every k, its receiver and its sender timed apart,
 * with its checks and without) take turns within every trial, so that a burst of load on this
 * shared machine hits them alike.
 */
// The core built with its timing exports (the SDK's own build has none: see build-wasm.mjs).
import init, { benchAes, EvalBench, OtBench } from '/bench-wasm/garblet_core.js';
import { calibrate, pause, timeOnce, warmUp } from './timing.js';

/** SoftSpoken's k measured. */
const OT_KS = [1, 2, 4, 8];
/** The protocol's chunk: OTs per receiver message. */
const OT_CHUNK = 1 << 14;
/** Correlated OTs per trial at each k: 16 chunks, 4 at k = 8 (32 AES blocks per OT). */
const otsAt = (k) => (k === 8 ? 1 << 16 : 1 << 18);
/** Blocks per call: the evaluator hashes labels in batches; this is a batch that fits in L1. */
const AES_BLOCKS = 1024;
const TRIAL_MS = 300;
const WARM_UP_MS = 500;

self.onmessage = async ({ data: { andGates, trials } }) => {
  try {
    await init(); // compiled here: nothing of another instance's code or layout is shared
    for (const ours of [true, false]) await warmUp((n) => benchAes(ours, AES_BLOCKS, n), WARM_UP_MS);
    const rounds = {
      ours: calibrate((n) => benchAes(true, AES_BLOCKS, n), TRIAL_MS),
      crate: calibrate((n) => benchAes(false, AES_BLOCKS, n), TRIAL_MS),
    };
    // The evaluators by the name of their rates: the sessions' hash, and the fixed-key one.
    const evaluators = {
      evaluator: new EvalBench(andGates, 'half-gates', false),
      evaluatorThreeHalves: new EvalBench(andGates, 'three-halves', false),
      evaluatorFixedKey: new EvalBench(andGates, 'half-gates', true),
      evaluatorThreeHalvesFixedKey: new EvalBench(andGates, 'three-halves', true),
    };
    try {
      // Also the first touches of the tables and labels.
      for (const bench of Object.values(evaluators)) await warmUp(() => bench.run(), WARM_UP_MS);
      // The extension by the name of its rates: k, with the checks or bare.
      const extensions = {};
      for (const k of OT_KS) for (const checked of [true, false]) extensions[`ot${k}${checked ? 'Checked' : 'Unchecked'}`] = { k, bench: new OtBench(k, checked) };
      for (const e of Object.values(extensions)) await warmUp(() => extend(e.bench, OT_CHUNK), WARM_UP_MS / 4);
      const rates = { ours: [], crate: [] };
      for (const name of Object.keys(evaluators)) rates[name] = [];
      for (const name of Object.keys(extensions)) {
        rates[`${name}Receiver`] = [];
        rates[`${name}Sender`] = [];
      }
      for (let t = 0; t < trials; t++) {
        for (const [name, ours] of [['ours', true], ['crate', false]]) {
          const ms = timeOnce(() => benchAes(ours, AES_BLOCKS, rounds[name]));
          rates[name].push((AES_BLOCKS * rounds[name] * 1000) / ms);
        }
        for (const [name, bench] of Object.entries(evaluators)) rates[name].push((andGates * 1000) / timeOnce(() => bench.run()));
        for (const [name, { k, bench }] of Object.entries(extensions)) {
          const ots = otsAt(k);
          const { receiverMs, senderMs } = extend(bench, ots);
          rates[`${name}Receiver`].push((ots * 1000) / receiverMs);
          rates[`${name}Sender`].push((ots * 1000) / senderMs);
        }
        await pause(0);
      }
      const uploadBytesPerOt = Object.fromEntries(OT_KS.map((k) => [k, messageBytesPerOt(extensions[`ot${k}Checked`].bench)]));
      self.postMessage({ rates, uploadBytesPerOt, bytesPerAnd: evaluators.evaluator.bytesPerAnd(), bytesPerAndThreeHalves: evaluators.evaluatorThreeHalves.bytesPerAnd() });
    } finally {
      for (const bench of Object.values(evaluators)) bench.free();
    }
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};

/**
 * `ots` correlated OTs in chunks of the protocol's size: each chunk's choice bits drawn
 * untimed, then the receiver's work and the sender's, each timed by itself.
 */
function extend(bench, ots) {
  let receiverMs = 0;
  let senderMs = 0;
  for (let done = 0; done < ots; done += OT_CHUNK) {
    bench.choose(Math.min(OT_CHUNK, ots - done));
    const start = performance.now();
    bench.receive();
    const received = performance.now();
    bench.send();
    receiverMs += received - start;
    senderMs += performance.now() - received;
  }
  return { receiverMs, senderMs };
}

/** The receiver's upload per OT in a full chunk, checks and padding included. */
function messageBytesPerOt(bench) {
  bench.choose(OT_CHUNK);
  bench.receive();
  bench.send();
  return bench.messageLen() / OT_CHUNK;
}
