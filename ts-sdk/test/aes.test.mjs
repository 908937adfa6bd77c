/**
 * Private AES with the Bristol `aes_128` / `aes_192` / `aes_256` circuits, checked against
 * FIPS-197's worked examples and against node:crypto under the server's key.
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { AES128_APPENDIX_B_KEY, AES128_KEY, AES192_KEY, AES256_KEY } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { fromHex, hex } from './support/util.mjs';

/** One block of AES-ECB in node:crypto: the reference nobody here wrote. */
function aesReference(keyHex, block) {
  const key = Buffer.from(keyHex, 'hex');
  const cipher = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]).toString('hex');
}

const live = serverAndSession();

const FIPS_197 = [
  { appendix: 'C.1', service: 'aes128', plaintext: '00112233445566778899aabbccddeeff', ciphertext: '69c4e0d86a7b0430d8cdb78070b4c55a' },
  { appendix: 'B', service: 'aes128_appendix_b', plaintext: '3243f6a8885a308d313198a2e0370734', ciphertext: '3925841d02dc09fbdc118597196a0b32' },
  { appendix: 'C.2', service: 'aes192', plaintext: '00112233445566778899aabbccddeeff', ciphertext: 'dda97ca4864cdfe06eaf70a0ec0d7191' },
  { appendix: 'C.3', service: 'aes256', plaintext: '00112233445566778899aabbccddeeff', ciphertext: '8ea2b7ca516745bfeafc49904b496089' },
];

for (const v of FIPS_197) {
  test(`${v.service} matches FIPS-197 Appendix ${v.appendix}`, async () => {
    const { outputs } = await live.session.run(v.service, { plaintext: fromHex(v.plaintext) });
    assert.equal(hex(outputs.ciphertext.bytes()), v.ciphertext);
    assert.equal(outputs.ciphertext.hex, `0x${v.ciphertext}`);
    // The catalog says the ciphertext is bytes: it is shown as hex, not as a 128-bit number.
    assert.deepEqual(live.session.service(v.service).outputs[0].encoding, { type: 'bytes' });
    assert.equal(outputs.ciphertext.encoding, 'bytes');
    assert.equal(String(outputs.ciphertext), `0x${v.ciphertext}`);
  });
}

test('aes128 of random blocks matches node:crypto AES-128-ECB under the server key', async () => {
  for (let i = 0; i < 8; i++) {
    const block = randomBytes(16);
    const { outputs } = await live.session.run('aes128', { plaintext: new Uint8Array(block) });
    assert.equal(hex(outputs.ciphertext.bytes()), aesReference(AES128_KEY, block), `block ${block.toString('hex')}`);
  }
});

test('aes128_appendix_b, aes192 and aes256 of random blocks match node:crypto', async () => {
  for (const [service, key] of [['aes128_appendix_b', AES128_APPENDIX_B_KEY], ['aes192', AES192_KEY], ['aes256', AES256_KEY]]) {
    const block = randomBytes(16);
    const { outputs } = await live.session.run(service, { plaintext: new Uint8Array(block) });
    assert.equal(hex(outputs.ciphertext.bytes()), aesReference(key, block), service);
  }
});

test('aes128 reports its AND gates and the bytes streamed', async () => {
  const { stats } = await live.session.run('aes128', { plaintext: new Uint8Array(16) });
  assert.equal(stats.evaluator.and_gates, live.session.service('aes128').and_gates);
  assert.equal(stats.garbler.and_gates, stats.evaluator.and_gates);
  // Half-gates: at least two 16-byte ciphertexts per AND reach the client.
  assert.ok(stats.evaluator.bytes_received >= 32 * stats.evaluator.and_gates);
  assert.equal(stats.evaluator.bytes_received, stats.garbler.bytes_sent);
});
