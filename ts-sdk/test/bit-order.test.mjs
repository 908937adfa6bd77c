/**
 * The bit order of multi-block outputs, as the README documents it, read from plain
 * `session.run` results (not through the `apps` helpers, which reorder nothing):
 * - aes128_bp with k blocks: `ciphertext.bytes()` is the k ciphertexts in the plaintext's block
 *   order; as an integer, block 0 is the most significant 128 bits (bytes are big-endian).
 * - psi: bit i of `member` (`bitArray()[i]`, `(unsigned >> i) & 1`) is the answer for element i,
 *   and element i of the `set` input is bits i·n to i·n + n − 1 (element 0 lowest).
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { AES128_KEY, APP_VALUES } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { hex } from './support/util.mjs';

const live = serverAndSession();

const aes128 = (block) => createCipheriv('aes-128-ecb', Buffer.from(AES128_KEY, 'hex'), null).setAutoPadding(false).update(block);

test('aes128_bp: ciphertexts in block order, block 0 in the highest bits', async () => {
  const blocks = [randomBytes(16), randomBytes(16), randomBytes(16)];
  const { outputs } = await live.session.run('aes128_bp', { plaintext: new Uint8Array(Buffer.concat(blocks)) }, { params: { blocks: 3 } });
  const ciphertext = outputs.ciphertext;
  assert.equal(ciphertext.bits, 3 * 128);
  const expected = blocks.map(aes128);
  // bytes(): block 0's 16 bytes first.
  assert.equal(hex(ciphertext.bytes()), Buffer.concat(expected).toString('hex'));
  // As an integer: block k is bits 128·(2 − k) to 128·(3 − k) − 1.
  const mask = (1n << 128n) - 1n;
  expected.forEach((c, k) => assert.equal((ciphertext.unsigned >> BigInt(128 * (2 - k))) & mask, BigInt(`0x${c.toString('hex')}`), `block ${k}`));
  // bitArray()[i] is wire i: bit 0 is the lowest bit of the last block's last byte.
  assert.equal(ciphertext.bitArray()[0], (expected[2][15] & 1) === 1);
});

test('psi: bit i of member answers element i, element 0 in the lowest bits of the set', async () => {
  const n = 32;
  const mine = [APP_VALUES.set[2], 999n, 1000n, APP_VALUES.set[5]];
  const packed = mine.reduce((acc, v, i) => acc | (v << BigInt(n * i)), 0n);
  const { outputs } = await live.session.run('psi', { set: packed }, { params: { nb: mine.length } });
  const member = outputs.member;
  assert.equal(member.bits, mine.length);
  const expected = mine.map((v) => APP_VALUES.set.includes(v));
  assert.deepEqual(member.bitArray(), expected);
  expected.forEach((inSet, i) => assert.equal(((member.unsigned >> BigInt(i)) & 1n) === 1n, inSet, `element ${i}`));
  assert.equal(member.unsigned, 0b1001n);
});
