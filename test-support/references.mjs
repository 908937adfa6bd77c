/**
 * Plaintext references for the SDK and end-to-end tests, written from the textbook definitions
 * independently of the circuits they check. Plain JavaScript (typed by JSDoc), so that the SDK's
 * node:test files and the Playwright TypeScript share one copy.
 */

/**
 * @param {bigint} v
 * @returns {number} the number of one bits
 */
export function popcount(v) {
  let n = 0;
  for (; v > 0n; v >>= 1n) n += Number(v & 1n);
  return n;
}

/**
 * Levenshtein distance by the textbook dynamic programme, over code points.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function levenshtein(a, b) {
  const x = [...a];
  const y = [...b];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[y.length];
}

/** BLOSUM62 (Henikoff & Henikoff 1992) as NCBI distributes it, rows and columns in this order. */
const BLOSUM62_ORDER = 'ARNDCQEGHILKMFPSTWYV';
const BLOSUM62 = `
 4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0
-1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3
-2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3
-2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3
 0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1
-1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2
-1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2
 0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3
-2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3
-1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3
-1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1
-1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2
-1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1
-2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1
-1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2
 1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2
 0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0
-3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3
-2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1
 0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4`
  .trim()
  .split('\n')
  .map((row) => row.trim().split(/\s+/).map(Number));

/** @param {string} a @param {string} b @returns {number} */
function blosum62(a, b) {
  return BLOSUM62[BLOSUM62_ORDER.indexOf(a)][BLOSUM62_ORDER.indexOf(b)];
}

/** A gap of k residues costs 12 + 7k. */
const gapCost = (/** @type {number} */ k) => 12 + 7 * k;

/**
 * Smith–Waterman by its definition (Smith & Waterman 1981): every cell maximises over a match
 * and over gaps of every length, O(nm(n + m)) — no Gotoh recurrence, so it checks the circuit's.
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function smithWaterman(a, b) {
  const H = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  let best = 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let h = Math.max(0, H[i - 1][j - 1] + blosum62(a[i - 1], b[j - 1]));
      for (let k = 1; k <= i; k++) h = Math.max(h, H[i - k][j] - gapCost(k));
      for (let k = 1; k <= j; k++) h = Math.max(h, H[i][j - k] - gapCost(k));
      H[i][j] = h;
      best = Math.max(best, h);
    }
  }
  return best;
}
