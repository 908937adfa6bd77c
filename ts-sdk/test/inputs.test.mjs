/**
 * Every way of writing an input (bigint, number, decimal and hex strings, Uint8Array, bit
 * arrays, UTF-8 text; by name, by position or bare) reaches the circuit as the same bits, and
 * the Output accessors read the result back.
 */
import assert from 'node:assert/strict';
import { createCipheriv } from 'node:crypto';
import { test } from 'node:test';
import { AES128_KEY, SERVER_OPERANDS } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { hex } from './support/util.mjs';

const MASK = (1n << 64n) - 1n;
const B = 0x0102030405060708n;
const EXPECTED_SUM = (SERVER_OPERANDS.add64 + B) & MASK;

/** Bit i of `value` at index i: Garblet's wire order. */
const bitsOf = (value, width) => Array.from({ length: width }, (_, i) => ((value >> BigInt(i)) & 1n) === 1n);

const live = serverAndSession();

const FORMS = {
  bigint: B,
  'decimal string': B.toString(),
  'hex string': `0x${B.toString(16)}`,
  'Uint8Array (big-endian bytes)': new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]),
  'boolean bit array': bitsOf(B, 64),
  '0/1 bit array': bitsOf(B, 64).map(Number),
};

for (const [form, value] of Object.entries(FORMS)) {
  test(`add64 takes its input as a ${form}`, async () => {
    const { outputs } = await live.session.run('add64', { b: value });
    assert.equal(outputs.sum.unsigned, EXPECTED_SUM);
  });
}

test('add64 takes a safe-integer number', async () => {
  const { outputs } = await live.session.run('add64', { b: 123456789 });
  assert.equal(outputs.sum.unsigned, (SERVER_OPERANDS.add64 + 123456789n) & MASK);
});

test('inputs may be given by name, by position, or bare for a one-input service', async () => {
  for (const inputs of [{ b: B }, [B], B]) {
    const { outputs } = await live.session.run('add64', inputs);
    assert.equal(outputs.sum.unsigned, EXPECTED_SUM, JSON.stringify(inputs, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
  }
});

test('a string for a bytes input is its UTF-8 encoding', async () => {
  const text = 'sixteen byte msg';
  const { outputs } = await live.session.run('aes128', { plaintext: text });
  const cipher = createCipheriv('aes-128-ecb', Buffer.from(AES128_KEY, 'hex'), null).setAutoPadding(false);
  assert.equal(hex(outputs.ciphertext.bytes()), cipher.update(Buffer.from(text, 'utf8')).toString('hex'));
});

test('Output reads a value as bigint, number, bytes, bits, string and JSON', async () => {
  const { outputs } = await live.session.run('add64', { b: 5 });
  const sum = outputs.sum;
  const expected = (SERVER_OPERANDS.add64 + 5n) & MASK;
  assert.equal(sum.name, 'sum');
  assert.equal(sum.bits, 64);
  assert.equal(sum.value, expected);
  assert.equal(sum.toString(), expected.toString());
  assert.equal(sum.hex, `0x${expected.toString(16).padStart(16, '0')}`);
  assert.deepEqual([...sum.bytes()], [...Buffer.from(expected.toString(16).padStart(16, '0'), 'hex')]);
  assert.deepEqual(sum.bitArray(), bitsOf(expected, 64));
  assert.deepEqual(JSON.parse(JSON.stringify(sum)), { name: 'sum', bits: 64, hex: sum.hex, value: expected.toString() });
  // A 64-bit value past 2^53 does not fit a number exactly.
  assert.throws(() => sum.toNumber(), RangeError);
  const small = (await live.session.run('sub64', { b: SERVER_OPERANDS.sub64 - 42n })).outputs.difference;
  assert.equal(small.toNumber(), 42);
});

test('a bare bit array, of booleans or of 0/1, is the one input of a one-input service', async () => {
  const bits = bitsOf(1n << 40n, 64);
  for (const value of [bits, bits.map(Number)]) {
    const { outputs } = await live.session.run('zero_equal', value);
    assert.equal(outputs.is_zero.toBoolean(), false);
  }
  const { outputs } = await live.session.run('zero_equal', Array(64).fill(0));
  assert.equal(outputs.is_zero.toBoolean(), true);
});
