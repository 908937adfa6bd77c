/**
 * The evaluator's kernels in the page, without a network: AES-128 (our bitsliced wasm SIMD
 * against the `aes` crate's portable code), the half-gates and three-halves evaluators
 * (EvalBench, with the sessions' garbling hash and with the fixed-key one it replaced) and the
 * correlated-OT extension, SoftSpoken at k = 1, 2, 4, 8, receiver and sender apart, with its
 * checks and without (OtBench).
 *
 * The trials run in three workers in turn, each compiling and instantiating the module itself,
 * and the results are medians over all of them. In a few runs a page measured our AES 7–20 %
 * slow in every one of its trials while its evaluator, which runs the same AES, was not: a
 * property of that one instance (its memory or stack layout, most likely) that we could not pin
 * down. Spread over three instances, one such instance no longer decides a median.
 */
import { median } from './timing.js';

const WORKERS = 3;

/** Blocks per second of each AES and AND gates per second of the evaluator, medians. */
export async function kernelThroughput(andGates = 1 << 20, trialsPerWorker = 3) {
  const byWorker = [];
  for (let w = 0; w < WORKERS; w++) byWorker.push(await trialsInWorker(andGates, trialsPerWorker));
  const all = (name) => byWorker.flatMap((r) => r.rates[name]);
  return {
    ours: median(all('ours')),
    crate: median(all('crate')),
    andPerSecond: median(all('evaluator')),
    threeHalvesAndPerSecond: median(all('evaluatorThreeHalves')),
    fixedKeyAndPerSecond: median(all('evaluatorFixedKey')),
    threeHalvesFixedKeyAndPerSecond: median(all('evaluatorThreeHalvesFixedKey')),
    // OT/s of each k's receiver and sender, with the checks and without.
    ot: Object.fromEntries(
      [1, 2, 4, 8].map((k) => [
        k,
        {
          receiver: median(all(`ot${k}CheckedReceiver`)),
          sender: median(all(`ot${k}CheckedSender`)),
          uncheckedReceiver: median(all(`ot${k}UncheckedReceiver`)),
          uncheckedSender: median(all(`ot${k}UncheckedSender`)),
          uploadBytesPerOt: byWorker[0].uploadBytesPerOt[k],
        },
      ]),
    ),
    bytesPerAnd: byWorker[0].bytesPerAnd,
    threeHalvesBytesPerAnd: byWorker[0].bytesPerAndThreeHalves,
    trials: Object.fromEntries(Object.keys(byWorker[0].rates).map((name) => [name, all(name)])),
  };
}

function trialsInWorker(andGates, trials) {
  const worker = new Worker('/page/kernel-worker.js', { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      worker.terminate();
      if (data.error) reject(new Error(data.error));
      else resolve(data);
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(`kernel worker: ${e.message}`));
    };
    worker.postMessage({ andGates, trials });
  });
}
