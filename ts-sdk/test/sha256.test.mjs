/**
 * The Bristol `sha256` compression function with SHA-256's IV as the public chaining value:
 * for a message of at most 55 bytes, compressing its one padded block is its SHA-256 digest.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { serverAndSession } from './support/server.mjs';
import { hex } from './support/util.mjs';

/** FIPS 180-4 §5.1.1: the message, 0x80, zeros, and the bit length as a 64-bit big-endian. */
function padOneBlock(message) {
  assert.ok(message.length <= 55, 'one block holds at most 55 message bytes');
  const block = new Uint8Array(64);
  block.set(message);
  block[message.length] = 0x80;
  new DataView(block.buffer).setBigUint64(56, BigInt(message.length * 8));
  return block;
}

const sha256 = (message) => createHash('sha256').update(message).digest('hex');

const live = serverAndSession();

test('sha256 of "abc" (FIPS 180-4 example) matches node:crypto', async () => {
  const message = new TextEncoder().encode('abc');
  const { outputs } = await live.session.run('sha256', { block: padOneBlock(message) });
  assert.equal(hex(outputs.digest.bytes()), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(hex(outputs.digest.bytes()), sha256(message));
});

test('sha256 of the empty message and of random messages matches node:crypto', async () => {
  for (const length of [0, 1, 31, 55]) {
    const message = randomBytes(length);
    const { outputs } = await live.session.run('sha256', { block: padOneBlock(message) });
    assert.equal(hex(outputs.digest.bytes()), sha256(message), `${length} bytes: ${message.toString('hex')}`);
  }
});
