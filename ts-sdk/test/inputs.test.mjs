/**
 * Every way of writing an input (bigint, number, decimal and hex strings, Uint8Array, bit
 * arrays, hex() and utf8(); by name, by position or bare) reaches the circuit as the same bits,
 * a bare string for a bytes input is refused rather than guessed, and the Output accessors read
 * the result back.
 */
import assert from 'node:assert/strict';
import { createCipheriv } from 'node:crypto';
import { test } from 'node:test';
import { hex, InputError, utf8 } from 'garblet';
import { AES128_KEY, SERVER_OPERANDS } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { hex as hexOf } from './support/util.mjs';

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

const aes128 = (bytes) => createCipheriv('aes-128-ecb', Buffer.from(AES128_KEY, 'hex'), null).setAutoPadding(false).update(bytes).toString('hex');

test('utf8() gives a bytes input the UTF-8 encoding of text', async () => {
  const text = 'sixteen byte msg';
  const { outputs } = await live.session.run('aes128', { plaintext: utf8(text) });
  assert.equal(hexOf(outputs.ciphertext.bytes()), aes128(Buffer.from(text, 'utf8')));
  // Multi-byte characters count as their UTF-8 bytes: 7 × 2 + 2 = 16.
  const accented = 'éééééééab';
  assert.equal(Buffer.byteLength(accented), 16);
  assert.equal(hexOf((await live.session.run('aes128', { plaintext: utf8(accented) })).outputs.ciphertext.bytes()), aes128(Buffer.from(accented, 'utf8')));
});

test('hex() gives a bytes input the bytes its digits spell, with or without 0x and spaces', async () => {
  const digits = '00112233445566778899aabbccddeeff';
  const expected = aes128(Buffer.from(digits, 'hex'));
  for (const written of [digits, `0x${digits}`, digits.toUpperCase(), '0011 2233 4455 6677 8899 aabb ccdd eeff']) {
    const { outputs } = await live.session.run('aes128', { plaintext: hex(written) });
    assert.equal(hexOf(outputs.ciphertext.bytes()), expected, written);
  }
  // Bare, as the one input of a one-input service: not mistaken for inputs by name.
  assert.equal(hexOf((await live.session.run('aes128', hex(digits))).outputs.ciphertext.bytes()), expected);
});

test('hex() gives an integer input its big-endian value, of any number of digits', async () => {
  for (const written of [B.toString(16), `0x${B.toString(16)}`, `0${B.toString(16)}`]) {
    assert.equal((await live.session.run('add64', { b: hex(written) })).outputs.sum.unsigned, EXPECTED_SUM, written);
  }
});

test('a bare string for a bytes input is refused, never guessed as hex or text', async () => {
  // 32 hex digits would be 16 bytes as hex and 32 as text; 16 characters are 16 bytes as text.
  for (const ambiguous of ['00112233445566778899aabbccddeeff', 'sixteen byte msg']) {
    await assert.rejects(live.session.run('aes128', { plaintext: ambiguous }), (e) => e instanceof InputError && e.reason === 'wrong-type' && e.input === 'plaintext', ambiguous);
  }
  assert.equal(live.session.closed, false);
});

test('hex() and utf8() where they do not belong are InputErrors', async () => {
  const cases = [
    ['aes128', { plaintext: hex('0011') }, { reason: 'input-length', input: 'plaintext', expected: 16, got: 2, unit: 'bytes' }],
    ['aes128', { plaintext: hex('001') }, { reason: 'not-hex', input: 'plaintext' }],
    ['aes128', { plaintext: hex('zz'.repeat(16)) }, { reason: 'not-hex', input: 'plaintext' }],
    ['add64', { b: hex('12g4') }, { reason: 'not-hex', input: 'b' }],
    ['add64', { b: utf8('12') }, { reason: 'wrong-type', input: 'b' }],
    ['levenshtein', { b: utf8('GATTACA') }, { reason: 'wrong-type', input: 'b' }],
    ['levenshtein', { b: hex('00') }, { reason: 'wrong-type', input: 'b' }],
  ];
  for (const [service, inputs, fields] of cases) {
    await assert.rejects(
      live.session.run(service, inputs),
      (e) => e instanceof InputError && Object.entries(fields).every(([k, v]) => e[k] === v),
      `${service} ${JSON.stringify(inputs)}`,
    );
  }
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
