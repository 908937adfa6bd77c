/**
 * The Bristol arithmetic circuits (adder64, sub64, mult64, signed divide64, zero_equal) against
 * BigInt, with the server's operands from the test configuration.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SERVER_OPERANDS } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';
import { randomUint, toSigned, toUnsigned } from './support/util.mjs';

const MASK = (1n << 64n) - 1n;
/** Operands that find carries, borrows and overflow, and a few random ones. */
const EDGE_CASES = [0n, 1n, 2n, 1000n, (1n << 32n) - 1n, 1n << 63n, MASK, ...Array.from({ length: 4 }, () => randomUint(64))];

const live = serverAndSession();

const cases = [
  { service: 'add64', output: 'sum', reference: (a, b) => (a + b) & MASK },
  { service: 'sub64', output: 'difference', reference: (a, b) => (a - b) & MASK },
  { service: 'mult64', output: 'product', reference: (a, b) => (a * b) & MASK },
];

for (const { service, output, reference } of cases) {
  test(`${service} matches BigInt`, async () => {
    const a = SERVER_OPERANDS[service];
    for (const b of EDGE_CASES) {
      const { outputs } = await live.session.run(service, { b });
      assert.equal(outputs[output].unsigned, reference(a, b), `${service}(a, ${b})`);
    }
  });
}

test('divide64 is signed division rounding towards zero, as BigInt division', async () => {
  const a = toSigned(SERVER_OPERANDS.divide64, 64);
  assert.ok(a < 0n, 'the server operand is negative');
  for (const b of [1n, -1n, 7n, -7n, 1000003n, 3n << 40n, -(1n << 62n), toSigned(randomUint(64), 64) | 1n]) {
    const { outputs } = await live.session.run('divide64', { b: toUnsigned(b, 64) });
    // The catalog does not mark the quotient signed: read its bits as two's complement.
    assert.equal(toSigned(outputs.quotient.unsigned, 64), a / b, `${a} / ${b}`);
  }
});

test('zero_equal tells 0 from everything else', async () => {
  for (const a of [0n, 1n, 1n << 63n, MASK, randomUint(64) | 1n]) {
    const { outputs } = await live.session.run('zero_equal', a);
    assert.equal(outputs.is_zero.toBoolean(), a === 0n, `zero_equal(${a})`);
    assert.equal(outputs.is_zero.bits, 1);
  }
});
