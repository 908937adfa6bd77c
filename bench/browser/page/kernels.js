/**
 * The evaluator's kernels in the page, without a network: AES-128 (our bitsliced wasm SIMD
 * against the `aes` crate's portable code) and the half-gates evaluator (EvalBench).
 */
import init, { benchAes, EvalBench } from '/sdk/wasm/garblet_core.js';
import { calibrate, median, pause, timeOnce, warmUp } from './timing.js';

const ready = init();

/** Blocks per call: the evaluator hashes labels in batches; this is a batch that fits in L1. */
const AES_BLOCKS = 1024;
const TRIAL_MS = 300;
const WARM_UP_MS = 500;

/**
 * Blocks per second of each AES and AND gates per second of the evaluator (over `andGates`
 * garbled in the page), medians of `trials` trials. The three run in turn within every trial, so
 * that a burst of load on this shared machine hits them alike and their ratios compare the same
 * moments.
 */
export async function kernelThroughput(andGates = 1 << 20, trials = 9) {
  await ready;
  for (const ours of [true, false]) await warmUp((n) => benchAes(ours, AES_BLOCKS, n), WARM_UP_MS);
  const rounds = {
    ours: calibrate((n) => benchAes(true, AES_BLOCKS, n), TRIAL_MS),
    crate: calibrate((n) => benchAes(false, AES_BLOCKS, n), TRIAL_MS),
  };
  const bench = new EvalBench(andGates);
  try {
    await warmUp(() => bench.run(), WARM_UP_MS); // also the first touches of the tables and labels
    const rates = { ours: [], crate: [], evaluator: [] };
    for (let t = 0; t < trials; t++) {
      for (const [name, ours] of [['ours', true], ['crate', false]]) {
        const ms = timeOnce(() => benchAes(ours, AES_BLOCKS, rounds[name]));
        rates[name].push((AES_BLOCKS * rounds[name] * 1000) / ms);
      }
      rates.evaluator.push((andGates * 1000) / timeOnce(() => bench.run()));
      await pause(0);
    }
    return { ours: median(rates.ours), crate: median(rates.crate), andPerSecond: median(rates.evaluator), bytesPerAnd: bench.bytesPerAnd(), trials: rates };
  } finally {
    bench.free();
  }
}
