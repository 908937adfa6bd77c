/**
 * One set of kernel trials in a worker of its own (see kernels.js): our AES, the `aes` crate's,
 * the evaluators (with the sessions' garbling hash, and with the fixed-key hash it replaced) and
 * the OT receiver (with and without the KOS check) take turns within every trial, so that a burst
 * of load on this shared machine hits them alike.
 */
// The core built with its timing exports (the SDK's own build has none: see build-wasm.mjs).
import init, { benchAes, benchOtReceiver, EvalBench } from '/bench-wasm/garblet_core.js';
import { calibrate, pause, timeOnce, warmUp } from './timing.js';

/** Correlated OTs per trial of the OT receiver: 16 of the protocol's chunks. */
const OTS = 1 << 18;
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
      for (const checked of [true, false]) await warmUp(() => benchOtReceiver(OTS, checked), WARM_UP_MS / 2);
      const rates = { ours: [], crate: [], otChecked: [], otUnchecked: [] };
      for (const name of Object.keys(evaluators)) rates[name] = [];
      for (let t = 0; t < trials; t++) {
        for (const [name, ours] of [['ours', true], ['crate', false]]) {
          const ms = timeOnce(() => benchAes(ours, AES_BLOCKS, rounds[name]));
          rates[name].push((AES_BLOCKS * rounds[name] * 1000) / ms);
        }
        for (const [name, bench] of Object.entries(evaluators)) rates[name].push((andGates * 1000) / timeOnce(() => bench.run()));
        rates.otChecked.push((OTS * 1000) / timeOnce(() => benchOtReceiver(OTS, true)));
        rates.otUnchecked.push((OTS * 1000) / timeOnce(() => benchOtReceiver(OTS, false)));
        await pause(0);
      }
      self.postMessage({ rates, bytesPerAnd: evaluators.evaluator.bytesPerAnd(), bytesPerAndThreeHalves: evaluators.evaluatorThreeHalves.bytesPerAnd() });
    } finally {
      for (const bench of Object.values(evaluators)) bench.free();
    }
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};
