/**
 * A circuit written in TypeScript, compiled, served by `garblet serve` from its Bristol file and
 * manifest, and computed through the SDK: the names and types as written, the values right.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Garblet, hex, InputError } from 'garblet';
import { compileFile } from '../dist/circuit-node/index.js';
import { serverBinary, startServerWith } from './support/server.mjs';

const source = fileURLToPath(new URL('./circuits/served.ts', import.meta.url));
const live = {};

before(async () => {
  const { bristol, manifest } = await compileFile(source);
  const config = `[server]
listen = "127.0.0.1:0"

[[service]]
name = "served"
circuit = { bristol_file = "served.bristol", manifest = "served.manifest.json" }
garbler_inputs = { limit = { decimal = 1000 }, bids = { list = [3, 200, 17] }, floor = { decimal = -100 } }
`;
  live.server = await startServerWith(config, { 'served.bristol': bristol, 'served.manifest.json': JSON.stringify(manifest) });
  live.session = await Garblet.connect(live.server.url);
});

after(async () => {
  live.session?.close();
  await live.server?.kill();
});

test('the catalog lists the inputs and outputs as the circuit declares them', () => {
  const service = live.session.service('served');
  assert.deepEqual(
    service.inputs.map((i) => [i.name, i.party, i.bits, i.encoding.type, i.signed === true]),
    [
      ['limit', 'garbler', 16, 'uint', false],
      ['bids', 'garbler', 24, 'uint', false],
      ['mine', 'evaluator', 16, 'uint', false],
      ['tag', 'evaluator', 16, 'bytes', false],
      ['floor', 'garbler', 8, 'uint', true],
      ['change', 'evaluator', 12, 'uint', true],
    ],
  );
  assert.deepEqual(
    service.outputs.map((o) => [o.name, o.bits, o.reveal, o.signed, o.encoding?.type ?? 'uint']),
    [
      ['over', 1, 'both', false, 'uint'],
      ['margin', 18, 'evaluator', true, 'uint'],
      ['total', 17, 'evaluator', false, 'uint'],
      ['swapped', 16, 'evaluator', false, 'bytes'],
      ['moved', 13, 'evaluator', true, 'uint'],
    ],
  );
});

test('the served circuit computes what the TypeScript says', async () => {
  for (const mine of [0n, 999n, 1000n, 1001n, 65535n]) {
    const { outputs } = await live.session.run('served', { mine, tag: hex('abcd'), change: 0 });
    assert.equal(outputs.over.toBoolean(), mine > 1000n, `over for ${mine}`);
    assert.equal(outputs.margin.value, mine - 1000n, `margin for ${mine}`);
    assert.equal(outputs.total.value, 3n + 200n + 17n + mine, `total for ${mine}`);
    assert.equal(outputs.swapped.hex, '0xcdab');
    // A two-byte output is bytes, not the number 52651.
    assert.equal(outputs.swapped.encoding, 'bytes');
    assert.deepEqual(outputs.swapped.bytes(), Uint8Array.of(0xcd, 0xab));
    assert.equal(String(outputs.swapped), '0xcdab');
    assert.equal(JSON.parse(JSON.stringify(outputs.swapped)).value, '0xcdab');
    assert.equal(outputs.total.encoding, 'uint');
    assert.equal(String(outputs.total), String(3n + 200n + 17n + mine));
  }
});

test("a signed input takes a negative number, the server's from its configuration", async () => {
  // The server's floor is -100; -2048 and 2047 are the ends of a 12-bit signed input.
  for (const [change, value] of [[-5, -5n], [-5n, -5n], ['-5', -5n], [-2048n, -2048n], [2047n, 2047n], ['-0x10', -16n]]) {
    const { outputs } = await live.session.run('served', { mine: 1n, tag: hex('0000'), change });
    assert.equal(outputs.moved.value, value - 100n, `moved for ${change}`);
  }
});

test("a signed input out of its range is refused in the user's terms, an unsigned one still refuses a minus sign", async () => {
  const refused = async (inputs, sentence, fields) => {
    await assert.rejects(live.session.run('served', { mine: 1n, tag: hex('0000'), change: 0, ...inputs }), (e) => {
      assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
      assert.equal(e.message, sentence);
      for (const [k, v] of Object.entries(fields)) assert.deepEqual(e[k], v, k);
      return true;
    });
  };
  await refused({ change: -2049n }, 'change takes a whole number from -2,048 to 2,047; -2049 is too small', { reason: 'out-of-range', value: -2049n, min: -2048n, max: 2047n });
  await refused({ change: '2048' }, 'change takes a whole number from -2,048 to 2,047; 2048 is too large', { reason: 'out-of-range', value: 2048n });
  await refused({ change: 'minus five' }, "change takes a whole number from -2,048 to 2,047; 'minus five' is not one (write decimal digits, or hexadecimal after 0x, after an optional minus sign)", { reason: 'not-an-integer' });
  await refused({ mine: -5 }, 'mine takes a whole number from 0 to 65,535; -5 is negative', { reason: 'out-of-range', value: -5n, min: 0n });
});

test('the command line takes --input -5 for the signed input and says what the SDK says', () => {
  const run = (...inputs) => {
    try {
      return { code: 0, out: execFileSync(serverBinary, ['run', '--server', live.server.url, 'served', ...inputs.flatMap((i) => ['--input', i]), '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
    } catch (e) {
      return { code: e.status, out: e.stdout };
    }
  };
  const ok = run('1', '0x0000', '-5');
  assert.equal(ok.code, 0, ok.out);
  const moved = JSON.parse(ok.out).outputs.find((o) => o.name === 'moved');
  assert.ok(moved, ok.out);
  assert.equal(String(moved.value), '-105', ok.out);
  const small = run('1', '0x0000', '-2049');
  assert.equal(small.code, 2);
  assert.equal(JSON.parse(small.out).error.message, 'change takes a whole number from -2,048 to 2,047; -2049 is too small');
});

test('garblet circuit stats --manifest prints the identity the catalog announces, which a page pins', async () => {
  const { circuit } = live.session.service('served');
  assert.equal(circuit.kind, 'streamed');
  const file = (name) => join(live.server.dir, name);
  const stats = JSON.parse(execFileSync(serverBinary, ['circuit', 'stats', file('served.bristol'), '--manifest', file('served.manifest.json')], { encoding: 'utf8' }));
  assert.equal(stats.circuit, `sha256:${circuit.hash}`);
  const { outputs } = await live.session.run('served', { mine: 5n, tag: hex('0102'), change: 0 }, { expectCircuit: `sha256:${circuit.hash}` });
  assert.equal(outputs.over.toBoolean(), false);
});
