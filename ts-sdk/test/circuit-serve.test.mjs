/**
 * A circuit written in TypeScript, compiled, served by `garblet serve` from its Bristol file and
 * manifest, and computed through the SDK: the names and types as written, the values right.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Garblet, hex } from 'garblet';
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
garbler_inputs = { limit = { decimal = 1000 }, bids = { list = [3, 200, 17] } }
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
    service.inputs.map((i) => [i.name, i.party, i.bits, i.encoding.type]),
    [
      ['limit', 'garbler', 16, 'uint'],
      ['bids', 'garbler', 24, 'uint'],
      ['mine', 'evaluator', 16, 'uint'],
      ['tag', 'evaluator', 16, 'bytes'],
    ],
  );
  assert.deepEqual(
    service.outputs.map((o) => [o.name, o.bits, o.reveal, o.signed]),
    [
      ['over', 1, 'both', false],
      ['margin', 18, 'evaluator', true],
      ['total', 17, 'evaluator', false],
      ['swapped', 16, 'evaluator', false],
    ],
  );
});

test('the served circuit computes what the TypeScript says', async () => {
  for (const mine of [0n, 999n, 1000n, 1001n, 65535n]) {
    const { outputs } = await live.session.run('served', { mine, tag: hex('abcd') });
    assert.equal(outputs.over.toBoolean(), mine > 1000n, `over for ${mine}`);
    assert.equal(outputs.margin.value, mine - 1000n, `margin for ${mine}`);
    assert.equal(outputs.total.value, 3n + 200n + 17n + mine, `total for ${mine}`);
    assert.equal(outputs.swapped.hex, '0xcdab');
  }
});

test('garblet circuit stats --manifest prints the identity the catalog announces, which a page pins', async () => {
  const { circuit } = live.session.service('served');
  assert.equal(circuit.kind, 'streamed');
  const file = (name) => join(live.server.dir, name);
  const stats = JSON.parse(execFileSync(serverBinary, ['circuit', 'stats', file('served.bristol'), '--manifest', file('served.manifest.json')], { encoding: 'utf8' }));
  assert.equal(stats.circuit, `sha256:${circuit.hash}`);
  const { outputs } = await live.session.run('served', { mine: 5n, tag: hex('0102') }, { expectCircuit: `sha256:${circuit.hash}` });
  assert.equal(outputs.over.toBoolean(), false);
});
