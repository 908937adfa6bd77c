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

/** Lets the page breathe between measurements (and the status text repaint). */
export const pause = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));
