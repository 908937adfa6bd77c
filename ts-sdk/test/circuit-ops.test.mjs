/**
 * `garblet/circuit`'s operations, compiled in-process with `compile()` (as a browser would) and
 * evaluated in the clear against BigInt arithmetic on random and edge inputs; what each costs in
 * AND gates; and the widths the gadgets infer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { array, bit, bytes, circuit, compile, constant, evaluator, garbler, int, popcount, select, sum, uint } from '../dist/circuit/index.js';
import { bristolEvaluator } from './support/bristol.mjs';
import { randomUint } from './support/util.mjs';

/** Compiles `body` over a garbler's `a` and an evaluator's `b` of the given types. */
function build(ta, tb, outputs, body) {
  const c = circuit({ inputs: { a: garbler(ta), b: evaluator(tb) }, outputs: Object.fromEntries(Object.keys(outputs).map((k) => [k, 'evaluator'])) }, body);
  const { bristol, manifest } = compile(c);
  return { run: bristolEvaluator(bristol).run, manifest };
}

const mask = (w) => (1n << BigInt(w)) - 1n;
const signed = (v, w) => BigInt.asIntN(w, v);
const edges = (w) => [0n, 1n, mask(w), mask(w) - 1n, 1n << BigInt(w - 1), mask(w - 1)];

/** Random and edge pairs of w-bit values. */
function pairs(w, n = 60) {
  const e = edges(w);
  const out = [];
  for (const x of e) for (const y of e) out.push([x, y]);
  for (let i = 0; i < n; i++) out.push([randomUint(w), randomUint(w)]);
  return out;
}

test('unsigned arithmetic, bit operations and comparisons agree with BigInt', () => {
  const ops = {
    add: (a, b) => a.add(b),
    sub: (a, b) => a.sub(b),
    mul: (a, b) => a.mul(b),
    and: (a, b) => a.and(b),
    or: (a, b) => a.or(b),
    xor: (a, b) => a.xor(b),
    not: (a) => a.not(),
    shl3: (a) => a.shl(3),
    shr3: (a) => a.shr(3),
    eq: (a, b) => a.eq(b).toUInt(),
    ne: (a, b) => a.ne(b).toUInt(),
    lt: (a, b) => a.lt(b).toUInt(),
    le: (a, b) => a.le(b).toUInt(),
    gt: (a, b) => a.gt(b).toUInt(),
    ge: (a, b) => a.ge(b).toUInt(),
    min: (a, b) => a.min(b),
    max: (a, b) => a.max(b),
    pick: (a, b) => select(a.bit(0), a, b),
    plus7: (a) => a.add(7),
    times5: (a) => a.mul(5),
    popcount: (a) => a.popcount(),
    wrapped: (a, b) => a.add(b).wrap(12),
  };
  const w = 12;
  const m = mask(w);
  const expect = {
    add: (a, b) => a + b,
    sub: (a, b) => (a - b) & m,
    mul: (a, b) => a * b,
    and: (a, b) => a & b,
    or: (a, b) => a | b,
    xor: (a, b) => a ^ b,
    not: (a) => ~a & m,
    shl3: (a) => a << 3n,
    shr3: (a) => a >> 3n,
    eq: (a, b) => BigInt(a === b),
    ne: (a, b) => BigInt(a !== b),
    lt: (a, b) => BigInt(a < b),
    le: (a, b) => BigInt(a <= b),
    gt: (a, b) => BigInt(a > b),
    ge: (a, b) => BigInt(a >= b),
    min: (a, b) => (a < b ? a : b),
    max: (a, b) => (a > b ? a : b),
    pick: (a, b) => (a & 1n ? a : b),
    plus7: (a) => a + 7n,
    times5: (a) => a * 5n,
    popcount: (a) => BigInt([...a.toString(2)].filter((c) => c === '1').length),
    wrapped: (a, b) => (a + b) & m,
  };
  const { run, manifest } = build(uint(w), uint(w), ops, ({ a, b }) => Object.fromEntries(Object.entries(ops).map(([k, f]) => [k, f(a, b)])));
  const widths = Object.fromEntries(manifest.outputs.map((o) => [o.name, o.type.bits ?? 1]));
  assert.deepEqual([widths.add, widths.mul, widths.shl3, widths.shr3, widths.popcount, widths.plus7, widths.times5], [13, 24, 15, 9, 4, 13, 15], 'each result as wide as its range');
  for (const [a, b] of pairs(w)) {
    const got = run([a, b]);
    Object.keys(ops).forEach((k, i) => assert.equal(got[i], expect[k](a, b), `${k}(${a}, ${b})`));
  }
});

test('signed arithmetic and comparisons agree with BigInt', () => {
  const w = 10;
  const ops = {
    add: (a, b) => a.add(b),
    sub: (a, b) => a.sub(b),
    mul: (a, b) => a.mul(b),
    neg: (a) => a.neg(),
    shr2: (a) => a.shr(2),
    shl2: (a) => a.shl(2),
    lt: (a, b) => a.lt(b).toUInt(),
    ge: (a, b) => a.ge(b).toUInt(),
    eq: (a, b) => a.eq(b).toUInt(),
    min: (a, b) => a.min(b),
    minus3: (a) => a.add(-3),
    negative: (a) => a.isNegative().toUInt(),
  };
  const expect = {
    add: (a, b) => a + b,
    sub: (a, b) => a - b,
    mul: (a, b) => a * b,
    neg: (a) => -a,
    shr2: (a) => a >> 2n,
    shl2: (a) => a << 2n,
    lt: (a, b) => BigInt(a < b),
    ge: (a, b) => BigInt(a >= b),
    eq: (a, b) => BigInt(a === b),
    min: (a, b) => (a < b ? a : b),
    minus3: (a) => a - 3n,
    negative: (a) => BigInt(a < 0n),
  };
  const { run, manifest } = build(int(w), int(w), ops, ({ a, b }) => Object.fromEntries(Object.entries(ops).map(([k, f]) => [k, f(a, b)])));
  const types = manifest.outputs.map((o) => o.type);
  for (const [ua, ub] of pairs(w)) {
    const [a, b] = [signed(ua, w), signed(ub, w)];
    const got = run([ua, ub]);
    Object.keys(ops).forEach((k, i) => {
      const value = types[i].kind === 'int' ? signed(got[i], types[i].bits) : got[i];
      assert.equal(value, expect[k](a, b), `${k}(${a}, ${b})`);
    });
  }
});

test('bits, arrays and byte strings keep their layout; select chooses element by element', () => {
  const { run, manifest } = build(bytes(4), array(uint(3), 4), { reversed: 0, sums: 0, first: 0, either: 0 }, ({ a, b }) => ({
    reversed: [...a].reverse(),
    sums: b.map((x, k) => x.add(a[k].wrap(3))),
    first: a[0].bit(7),
    either: select(b[0].gt(b[1]), b.slice(0, 2), b.slice(2, 4)),
  }));
  assert.deepEqual(
    manifest.outputs.map((o) => o.type),
    [
      { kind: 'array', length: 4, of: { kind: 'uint', bits: 8 } },
      { kind: 'array', length: 4, of: { kind: 'uint', bits: 4 } },
      { kind: 'bit' },
      { kind: 'array', length: 2, of: { kind: 'uint', bits: 3 } },
    ],
  );
  for (let i = 0; i < 50; i++) {
    const bs = [...Array(4)].map(() => Number(randomUint(8)));
    const elems = [...Array(4)].map(() => Number(randomUint(3)));
    // bytes: byte 0 in the highest bits; arrays: element 0 in the lowest.
    const a = bs.reduce((v, x) => (v << 8n) | BigInt(x), 0n);
    const b = elems.reduce((v, x, k) => v | (BigInt(x) << BigInt(3 * k)), 0n);
    const [reversed, sums, first, either] = run([a, b]);
    const unpack = (v, w, n) => [...Array(n)].map((_, k) => Number((v >> BigInt(w * k)) & mask(w)));
    assert.deepEqual(unpack(reversed, 8, 4), [...bs].reverse());
    assert.deepEqual(unpack(sums, 4, 4), elems.map((x, k) => x + (bs[k] & 7)));
    assert.equal(first, BigInt(bs[0] >> 7));
    assert.deepEqual(unpack(either, 3, 2), elems[0] > elems[1] ? elems.slice(0, 2) : elems.slice(2, 4));
  }
});

test('sum and popcount are adder trees as wide as the total', () => {
  const { run, manifest } = build(array(uint(4), 9), array(bit(), 7), { total: 0, ones: 0 }, ({ a, b }) => ({ total: sum(a), ones: popcount(b) }));
  assert.deepEqual(manifest.outputs.map((o) => o.type.bits), [8, 3]);
  for (let i = 0; i < 50; i++) {
    const a = randomUint(36);
    const b = randomUint(7);
    const nibbles = [...Array(9)].map((_, k) => (a >> BigInt(4 * k)) & 15n);
    assert.deepEqual(run([a, b]), [nibbles.reduce((x, y) => x + y), BigInt([...b.toString(2)].filter((c) => c === '1').length)]);
  }
});

/** ANDs of `body` over two uint(32) inputs. */
function ands(body) {
  return compile(circuit({ inputs: { a: garbler(uint(32)), b: evaluator(uint(32)) }, outputs: { out: 'evaluator' } }, body)).manifest.gates.and;
}

test('XOR and NOT are free, adders and comparators take one AND a bit, and constant operands fold', () => {
  assert.equal(ands(({ a, b }) => ({ out: a.xor(b).not() })), 0);
  assert.equal(ands(({ a, b }) => ({ out: a.add(b) })), 32, 'a 33-bit sum: one AND a bit');
  assert.equal(ands(({ a, b }) => ({ out: a.add(b).wrap(32) })), 31, 'modulo 2^32: the top carry is never built');
  assert.equal(ands(({ a, b }) => ({ out: a.lt(b) })), 32);
  assert.equal(ands(({ a, b }) => ({ out: a.eq(b) })), 31);
  assert.equal(ands(({ a, b }) => ({ out: select(a.lt(b), a, b) })), 64, 'a multiplexer: one AND a bit');
  assert.equal(ands(({ a }) => ({ out: a.and(0xffff) })), 0, 'a constant mask');
  assert.equal(ands(({ a }) => ({ out: a.mul(8) })), 0, 'a power of two is a shift');
  assert.equal(ands(({ a }) => ({ out: a.mul(1).add(0) })), 0);
  assert.equal(ands(({ a }) => ({ out: a.xor(a).or(a.and(a)) })), 0, 'a ⊕ a = 0, a ∧ a = a');
  assert.equal(ands(({ a }) => ({ out: a.eq(a) })), 0);
  assert.equal(ands(({ a }) => ({ out: constant(5).add(constant(7)) })), 0, 'constants add in the clear');
  assert.equal(ands(({ a, b }) => ({ out: [a.lt(b), a.lt(b)] })), 32, 'a repeated expression is built once');
});
