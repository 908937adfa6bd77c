/**
 * The application helpers (`apps.*`) against the library's services, each checked against a
 * plaintext reference (test-support/references.mjs: popcount, Wagner–Fischer, Smith–Waterman
 * over every gap length), node:crypto AES, and plain comparisons and look-ups.
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { InputError, apps } from 'garblet';
import { AES128_KEY, APP_VALUES } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { randomUint } from './support/util.mjs';
import { levenshtein, popcount, smithWaterman } from '../../test-support/references.mjs';

const live = serverAndSession();

test('hammingDistance and hammingWithin: identical, complementary and random codes', async () => {
  const x = APP_VALUES.irisCode;
  const all = (1n << 900n) - 1n;
  for (const y of [x, x ^ all, randomUint(900), x ^ 0b1011n]) {
    const expected = popcount(x ^ y);
    assert.equal((await apps.hammingDistance(live.session, y)).value, expected);
    assert.equal((await apps.hammingWithin(live.session, y)).value, expected <= APP_VALUES.hammingThreshold);
  }
  const bits = Array.from({ length: 900 }, (_, i) => ((x >> BigInt(i)) & 1n) === 1n);
  const { value, stats } = await apps.hammingDistance(live.session, bits);
  assert.equal(value, 0);
  assert.equal(stats.evaluator.and_gates, 896);
});

test('editDistance compares text with the text service; dnaEditDistance compares DNA', async () => {
  // No `service` option: text goes to levenshtein_text, whatever its letters (even ACGT only).
  for (const b of ['the quick brown fox', 'the quick brown cat!', 'Zebra', '42', 'GATTACA']) {
    assert.equal((await apps.editDistance(live.session, b)).value, levenshtein(APP_VALUES.text, b), b);
  }
  for (const b of ['A', APP_VALUES.dna, 'GCGTGGATGTGCTAGAATTTACG', 'gattaca', 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT']) {
    assert.equal((await apps.dnaEditDistance(live.session, b)).value, levenshtein(APP_VALUES.dna, b.toUpperCase()), b);
  }
  await assert.rejects(apps.dnaEditDistance(live.session, 'the fox'), InputError);
});

test('smithWaterman: against itself, a stranger and a single residue', async () => {
  for (const b of [APP_VALUES.protein, 'WWCCWWYY', 'K', 'MVHLTPEEK']) {
    assert.equal((await apps.smithWaterman(live.session, b)).value, smithWaterman(APP_VALUES.protein, b), b);
  }
});

test('encryptAes: many blocks in one session equal node:crypto AES-128-ECB', async () => {
  const plaintext = new Uint8Array(randomBytes(16 * 5));
  const cipher = createCipheriv('aes-128-ecb', Buffer.from(AES128_KEY, 'hex'), null).setAutoPadding(false);
  const expected = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const { value, stats } = await apps.encryptAes(live.session, plaintext);
  assert.deepEqual(Buffer.from(value), expected);
  assert.equal(stats.evaluator.and_gates, 5 * 5120);
  await assert.rejects(apps.encryptAes(live.session, new Uint8Array(15)), InputError);
});

test('serverIsGreater, minimum, lookup and intersect', async () => {
  const f = APP_VALUES.fortune;
  for (const y of [0n, f - 1n, f, f + 1n]) assert.equal((await apps.serverIsGreater(live.session, y)).value, f > y);

  for (const mine of [[5n], [4294967295n, 1n, 2721960n], [2721960n], [7n, 7n]]) {
    const all = [...APP_VALUES.bids, ...mine];
    const least = all.reduce((m, v) => (v < m ? v : m));
    const { value } = await apps.minimum(live.session, mine);
    assert.deepEqual(value, { value: least, index: all.indexOf(least) }, `${mine}`);
  }
  await assert.rejects(apps.minimum(live.session, [1n << 32n]), InputError);

  for (const [key, payload] of APP_VALUES.records) assert.equal((await apps.lookup(live.session, key)).value, payload);
  assert.equal((await apps.lookup(live.session, 12345n)).value, 0n);

  const mine = [APP_VALUES.set[3], 1000n, APP_VALUES.set[0], 27n, APP_VALUES.set[7]];
  assert.deepEqual((await apps.intersect(live.session, mine)).value, mine.map((v) => APP_VALUES.set.includes(v)));
});
