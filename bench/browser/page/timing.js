/** Timing helpers for the benchmark page. */

export const now = () => performance.now();

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Milliseconds one call of `fn` takes. */
export function timeOnce(fn) {
  const start = now();
  fn();
  return now() - start;
}

/**
 * How many repetitions `unit(n)` needs to take about `targetMs`: doubles `n` until one call
 * takes a tenth of the target, then scales.
 */
export function calibrate(unit, targetMs) {
  let n = 1;
  for (;;) {
    const ms = timeOnce(() => unit(n));
    if (ms >= targetMs / 10) return Math.max(1, Math.round((n * targetMs) / ms));
    n *= 2;
  }
}

/**
 * Runs `unit(n)` with growing `n` for at least `totalMs`, yielding between calls. WebAssembly
 * starts in V8's baseline compiler and moves a hot function to the optimizing one in the
 * background; a call in progress keeps the code it started with. A kernel whose optimized code
 * came late (a busy machine delays background compiles) would be timed partly in baseline code:
 * the likeliest reading of two runs in about twenty where the `aes` crate measured ~40 % slow
 * and the AES ratio read 2.8×. `kernel_trials` in the report shows whether it happens again.
 */
export async function warmUp(unit, totalMs) {
  const start = now();
  for (let n = 1; now() - start < totalMs; n = Math.min(2 * n, 1 << 10)) {
    unit(n);
    await pause(0);
  }
}

/** Lets the page breathe between measurements (and the status text repaint). */
export const pause = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));
