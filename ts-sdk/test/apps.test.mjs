/**
 * The application helpers (`apps.*`) against the library's services, each checked against a
 * reference computed here: popcount, Wagner–Fischer, Smith–Waterman over every gap length,
 * node:crypto AES, and plain comparisons and look-ups.
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Garblet, InputError, apps } from 'garblet';
import { AES128_KEY, APP_VALUES } from './support/server-config.mjs';
import { startServer } from './support/server.mjs';
import { randomUint } from './support/util.mjs';

let server;
let session;
before(async () => {
  server = await startServer();
  session = await Garblet.connect(server.url);
});
after(async () => {
  session?.close();
  await server?.kill();
});

const popcount = (v) => [...v.toString(2)].filter((c) => c === '1').length;

function levenshtein(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1), row[j] + 1, next[j - 1] + 1);
    row = next;
  }
  return row[b.length];
}

// BLOSUM62 (Henikoff & Henikoff 1992), rows and columns in the order ARNDCQEGHILKMFPSTWYV.
const AMINO = 'ARNDCQEGHILKMFPSTWYV';
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

/** Smith–Waterman with gap(k) = 12 + 7k, maximising over every gap length (HEKM'11 §6). */
function smithWaterman(a, b) {
  const s = (x, y) => BLOSUM62[AMINO.indexOf(x)][AMINO.indexOf(y)];
  const H = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  let best = 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.max(0, H[i - 1][j - 1] + s(a[i - 1], b[j - 1]));
      for (let k = 1; k <= i; k++) v = Math.max(v, H[i - k][j] - (12 + 7 * k));
      for (let k = 1; k <= j; k++) v = Math.max(v, H[i][j - k] - (12 + 7 * k));
      H[i][j] = v;
      best = Math.max(best, v);
    }
  }
  return best;
}

test('hammingDistance and hammingWithin: identical, complementary and random codes', async () => {
  const x = APP_VALUES.irisCode;
  const all = (1n << 900n) - 1n;
  for (const y of [x, x ^ all, randomUint(900), x ^ 0b1011n]) {
    const expected = popcount(x ^ y);
    assert.equal((await apps.hammingDistance(session, y)).value, expected);
    assert.equal((await apps.hammingWithin(session, y)).value, expected <= APP_VALUES.hammingThreshold);
  }
  const bits = Array.from({ length: 900 }, (_, i) => ((x >> BigInt(i)) & 1n) === 1n);
  const { value, stats } = await apps.hammingDistance(session, bits);
  assert.equal(value, 0);
  assert.equal(stats.evaluator.and_gates, 896);
});

test('editDistance: DNA and text of any length, the length set from the string', async () => {
  for (const b of ['A', APP_VALUES.dna, 'GCGTGGATGTGCTAGAATTTACG', 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT']) {
    assert.equal((await apps.editDistance(session, b)).value, levenshtein(APP_VALUES.dna, b), b);
  }
  for (const b of ['the quick brown fox', 'the quick brown cat!', 'Zebra', '42']) {
    assert.equal((await apps.editDistance(session, b, { service: 'levenshtein_text' })).value, levenshtein(APP_VALUES.text, b), b);
  }
});

test('smithWaterman: against itself, a stranger and a single residue', async () => {
  for (const b of [APP_VALUES.protein, 'WWCCWWYY', 'K', 'MVHLTPEEK']) {
    assert.equal((await apps.smithWaterman(session, b)).value, smithWaterman(APP_VALUES.protein, b), b);
  }
});

test('encryptAes: many blocks in one session equal node:crypto AES-128-ECB', async () => {
  const plaintext = new Uint8Array(randomBytes(16 * 5));
  const cipher = createCipheriv('aes-128-ecb', Buffer.from(AES128_KEY, 'hex'), null).setAutoPadding(false);
  const expected = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const { value, stats } = await apps.encryptAes(session, plaintext);
  assert.deepEqual(Buffer.from(value), expected);
  assert.equal(stats.evaluator.and_gates, 5 * 5120);
  await assert.rejects(apps.encryptAes(session, new Uint8Array(15)), InputError);
});

test('serverIsGreater, minimum, lookup and intersect', async () => {
  const f = APP_VALUES.fortune;
  for (const y of [0n, f - 1n, f, f + 1n]) assert.equal((await apps.serverIsGreater(session, y)).value, f > y);

  for (const mine of [[5n], [4294967295n, 1n, 2721960n], [2721960n], [7n, 7n]]) {
    const all = [...APP_VALUES.bids, ...mine];
    const least = all.reduce((m, v) => (v < m ? v : m));
    const { value } = await apps.minimum(session, mine);
    assert.deepEqual(value, { value: least, index: all.indexOf(least) }, `${mine}`);
  }
  await assert.rejects(apps.minimum(session, [1n << 32n]), InputError);

  for (const [key, payload] of APP_VALUES.records) assert.equal((await apps.lookup(session, key)).value, payload);
  assert.equal((await apps.lookup(session, 12345n)).value, 0n);

  const mine = [APP_VALUES.set[3], 1000n, APP_VALUES.set[0], 27n, APP_VALUES.set[7]];
  assert.deepEqual((await apps.intersect(session, mine)).value, mine.map((v) => APP_VALUES.set.includes(v)));
});
