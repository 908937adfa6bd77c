/**
 * `expectCircuit` pins the circuit a run computes: the right identity runs (checked against
 * FIPS-197), another one is refused before the run sends anything and ends the connection, and a
 * malformed pin is a TypeError that leaves the connection usable.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Garblet, IntegrityError } from 'garblet';
import { serverAndSession } from './support/server.mjs';
import { fromHex, hex } from './support/util.mjs';

const live = serverAndSession();
const plaintext = fromHex('00112233445566778899aabbccddeeff');
const FIPS_197_C1 = '69c4e0d86a7b0430d8cdb78070b4c55a';

function announced(service) {
  const { circuit } = live.session.service(service);
  assert.equal(circuit.kind, 'streamed');
  return `sha256:${circuit.hash}`;
}

test('the circuit the catalog announces runs, in either case of hex digits', async () => {
  for (const pin of [announced('aes128'), announced('aes128').toUpperCase().replace('SHA256:', 'sha256:')]) {
    const { outputs } = await live.session.run('aes128', { plaintext }, { expectCircuit: pin });
    assert.equal(hex(outputs.ciphertext.bytes()), FIPS_197_C1);
  }
});

test('a malformed pin is a TypeError and the connection stays usable', async () => {
  for (const pin of ['', 'sha256:', `sha256:${'0'.repeat(63)}`, `md5:${'0'.repeat(64)}`, 42]) {
    await assert.rejects(live.session.run('aes128', { plaintext }, { expectCircuit: pin }), TypeError, String(pin));
  }
  const { outputs } = await live.session.run('aes128', { plaintext });
  assert.equal(hex(outputs.ciphertext.bytes()), FIPS_197_C1);
});

test('another circuit is refused before the run starts, and the connection ends', async () => {
  // A connection of its own: the refusal closes it.
  const other = await Garblet.connect(live.server.url);
  const pin = `sha256:${'ab'.repeat(32)}`;
  const error = await other.run('aes128', { plaintext }, { expectCircuit: pin }).then(
    () => assert.fail('a run of another circuit than the pinned one completed'),
    (e) => e,
  );
  assert.ok(error instanceof IntegrityError, String(error));
  assert.equal(error.reason, 'circuit');
  assert.equal(error.asset, 'circuit');
  assert.equal(error.url, 'aes128');
  assert.equal(error.expected, pin);
  assert.equal(error.actual, announced('aes128'));
  await assert.rejects(other.run('aes128', { plaintext }));
});
