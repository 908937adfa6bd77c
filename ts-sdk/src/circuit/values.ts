/**
 * Traced values: `Bit`, `UInt` and `Int`. Each operation records its gates (see recorder.ts)
 * and returns a new value; nothing is computed.
 *
 * Widths are inferred by the gadgets from value ranges: every integer carries the range its
 * value can take (an unsigned maximum; a signed minimum and maximum), and an operation's result
 * is exactly as wide as its range needs — `uint(8) + uint(8)` is 9 bits, a popcount of 900 bits
 * 10 — so nothing overflows and no bit is built that is always zero. `wrap(w)` keeps the low w
 * bits where arithmetic modulo 2^w is meant.
 */

import { CircuitError, captureStack } from './errors.js';
import { current, ONE, Recorder, Wire, ZERO } from './recorder.js';

/** A JavaScript constant where a value is expected: it costs no gates. */
export type Constant = number | bigint;

function secretUse(): never {
  throw new CircuitError(
    'secret-control-flow',
    'a secret value was used as a JavaScript number or boolean (a loop bound, a condition, an index): loops need constant bounds, and a choice between values is select(condition, a, b)',
  );
}

/** Refuses coercion to a JavaScript primitive, so a loop over a secret bound fails at once. */
abstract class Traced {
  constructor(readonly r: Recorder) {
    if (r !== current()) throw new CircuitError('outside-circuit', 'a value of another circuit was used');
  }
  [Symbol.toPrimitive](): never {
    return secretUse();
  }
  valueOf(): never {
    return secretUse();
  }
  toString(): string {
    return `[secret ${this.describe()}]`;
  }
  toJSON(): never {
    return secretUse();
  }
  abstract describe(): string;
}

/** The number of bits of a non-negative value (0 for 0). */
export function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

/** The fewest two's-complement bits that hold every value of min..max (at least 1). */
export function signedWidth(min: bigint, max: bigint): number {
  let w = 1;
  while (min < -(1n << BigInt(w - 1)) || max > (1n << BigInt(w - 1)) - 1n) w++;
  return w;
}

function checkWidth(w: number, what: string): void {
  if (!Number.isInteger(w) || w < 1 || w > 1 << 24) throw new CircuitError('bad-declaration', `${what}: a width is a whole number of bits from 1 to 2^24, not ${w}`);
}

function checkShift(k: number): void {
  if (typeof k !== 'number' || !Number.isInteger(k) || k < 0) throw new CircuitError('secret-control-flow', `a shift is by a constant whole number of bits, not ${String(k)}`);
}

function constantBits(v: bigint, width: number): Wire[] {
  return Array.from({ length: width }, (_, i) => ((v >> BigInt(i)) & 1n ? ONE : ZERO));
}

function toBigInt(c: Constant, what: string): bigint {
  if (typeof c === 'bigint') return c;
  if (typeof c !== 'number' || !Number.isSafeInteger(c)) throw new CircuitError('type-mismatch', `${what}: ${String(c)} is not a whole number (give a bigint above 2^53)`);
  return BigInt(c);
}

// ---------------------------------------------------------------------------------------------
// Gadgets on wires

/** a + b + carry over `width` bits of the (extended) operands, the top carry not built: one AND a bit but the last. */
function addWires(r: Recorder, a: (i: number) => Wire, b: (i: number) => Wire, width: number, carryIn: Wire = ZERO): Wire[] {
  const out: Wire[] = [];
  let c = carryIn;
  for (let i = 0; i < width; i++) {
    const ai = a(i);
    const bi = b(i);
    const ac = r.xor(ai, c);
    out.push(r.xor(ac, bi));
    if (i + 1 < width) c = r.xor(c, r.and(ac, r.xor(bi, c)));
  }
  return out;
}

/** [a > b] unsigned, from the low bit up: c' = a ⊕ ((a ⊕ c) ∧ (b ⊕ c)), one AND a bit. */
function greater(r: Recorder, a: (i: number) => Wire, b: (i: number) => Wire, width: number): Wire {
  let c = ZERO;
  for (let i = 0; i < width; i++) {
    const ai = a(i);
    c = r.xor(ai, r.and(r.xor(ai, c), r.xor(b(i), c)));
  }
  return c;
}

/** OR of all, as a balanced tree: n − 1 ANDs. */
function orAll(r: Recorder, bits: Wire[]): Wire {
  if (bits.length === 0) return ZERO;
  let level = bits;
  while (level.length > 1) {
    const next: Wire[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(r.or(level[i], level[i + 1]));
    if (level.length % 2) next.push(level[level.length - 1]);
    level = next;
  }
  return level[0];
}

/**
 * Σ of weighted bits (column k holds bits of weight 2^k) into `width` bits: column compression,
 * a full adder (one AND) turning three bits of a column into one and a carry into the next, a
 * half adder (one AND) for a last pair — the Wallace tree of the built-in popcount, n − H(n) ANDs
 * for n bits.
 */
function compressColumns(r: Recorder, columns: Wire[][], width: number): Wire[] {
  const out: Wire[] = [];
  let column: Wire[] = (columns[0] ?? []).filter((w) => w !== ZERO);
  for (let k = 0; k < width; k++) {
    const carries: Wire[] = [];
    // Known ones add up in the clear.
    let ones = 0;
    column = column.filter((w) => (w === ONE ? (ones++, false) : true));
    if (ones & 1) column.push(ONE);
    for (let i = 1; 2 * i <= ones; i++) carries.push(ONE);
    let queue = column;
    while (queue.length >= 3) {
      const next: Wire[] = [];
      let i = 0;
      for (; i + 3 <= queue.length; i += 3) {
        const [a, b, x] = [queue[i], queue[i + 1], queue[i + 2]];
        const ax = r.xor(a, x);
        next.push(r.xor(ax, b));
        carries.push(r.xor(x, r.and(ax, r.xor(b, x))));
      }
      queue = queue.slice(i).concat(next);
    }
    if (queue.length === 2) {
      out.push(r.xor(queue[0], queue[1]));
      carries.push(r.and(queue[0], queue[1]));
    } else {
      out.push(queue[0] ?? ZERO);
    }
    column = carries.concat((columns[k + 1] ?? []).filter((w) => w !== ZERO));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Bit

export class Bit extends Traced {
  constructor(
    r: Recorder,
    readonly wire: Wire,
  ) {
    super(r);
  }

  describe(): string {
    return 'bit';
  }

  private other(b: Bit | boolean, op: string): Wire {
    if (typeof b === 'boolean') return b ? ONE : ZERO;
    if (!(b instanceof Bit)) throw new CircuitError('type-mismatch', `bit.${op}: the operand is ${describe(b)}, not a bit (compare integers to get one)`);
    return b.wire;
  }

  and(b: Bit | boolean): Bit {
    return new Bit(this.r, this.r.and(this.wire, this.other(b, 'and')));
  }
  or(b: Bit | boolean): Bit {
    return new Bit(this.r, this.r.or(this.wire, this.other(b, 'or')));
  }
  xor(b: Bit | boolean): Bit {
    return new Bit(this.r, this.r.xor(this.wire, this.other(b, 'xor')));
  }
  not(): Bit {
    return new Bit(this.r, this.r.not(this.wire));
  }
  eq(b: Bit | boolean): Bit {
    return this.xor(b).not();
  }
  ne(b: Bit | boolean): Bit {
    return this.xor(b);
  }
  /** 0 or 1, as a 1-bit unsigned integer. */
  toUInt(): UInt {
    return new UInt(this.r, [this.wire], 1n);
  }
}

// ---------------------------------------------------------------------------------------------
// Unsigned integers

/** An unsigned integer: `bits` low first, its value at most `max`. */
export class UInt extends Traced {
  constructor(
    r: Recorder,
    readonly bits: readonly Wire[],
    /** The largest value it can have (below 2^width). */
    readonly limit: bigint,
  ) {
    super(r);
  }

  get width(): number {
    return this.bits.length;
  }

  describe(): string {
    return `uint(${this.width})`;
  }

  /** Bit i (0 above the width). */
  bit(i: number): Bit {
    checkShift(i);
    return new Bit(this.r, this.at(i));
  }

  /** The bits, low first. */
  toBits(): Bit[] {
    return this.bits.map((w) => new Bit(this.r, w));
  }

  /** @internal */
  at(i: number): Wire {
    return i < this.bits.length ? this.bits[i] : ZERO;
  }

  private operand(b: UInt | Constant, op: string): UInt {
    if (b instanceof UInt) return b;
    if ((b as unknown) instanceof Int) throw new CircuitError('type-mismatch', `uint.${op}: the operand is signed (${(b as unknown as Int).describe()}); convert this one with .toInt() or that one with .asUInt()`);
    if (typeof b !== 'number' && typeof b !== 'bigint') throw new CircuitError('type-mismatch', `uint.${op}: the operand is ${describe(b)}, not an unsigned integer`);
    const v = toBigInt(b, `uint.${op}`);
    if (v < 0n) throw new CircuitError('type-mismatch', `uint.${op}: ${v} is negative; use int values for signed arithmetic`);
    return uintConstant(this.r, v);
  }

  /** The exact sum, as wide as the largest sum needs. */
  add(b: UInt | Constant): UInt {
    const o = this.operand(b, 'add');
    const max = this.limit + o.limit;
    const w = Math.max(1, bitLength(max));
    return new UInt(this.r, addWires(this.r, (i) => this.at(i), (i) => o.at(i), w), max);
  }

  /** (a − b) mod 2^w, w the wider operand's width: unsigned subtraction wraps (use int values for negative results). */
  sub(b: UInt | Constant): UInt {
    const o = this.operand(b, 'sub');
    const w = Math.max(this.width, o.width);
    const bits = addWires(this.r, (i) => this.at(i), (i) => this.r.not(o.at(i)), w, ONE);
    return new UInt(this.r, bits, (1n << BigInt(w)) - 1n);
  }

  /** The exact product, as wide as the largest product needs (schoolbook: one AND per pair of bits). */
  mul(b: UInt | Constant): UInt {
    const o = this.operand(b, 'mul');
    const max = this.limit * o.limit;
    const w = Math.max(1, bitLength(max));
    return new UInt(this.r, multiply(this.r, this.bits, o.bits, w), max);
  }

  private sameWidth(b: UInt | Constant, op: string): UInt {
    const o = this.operand(b, op);
    if (o.width === this.width) return o;
    if (typeof b !== 'object' && o.width < this.width) return new UInt(this.r, constantBits(o.limit, this.width), o.limit);
    throw new CircuitError('width-mismatch', `uint.${op}: the operands are ${this.width} and ${o.width} bits wide; resize(w) or wrap(w) one of them first`);
  }

  and(b: UInt | Constant): UInt {
    const o = this.sameWidth(b, 'and');
    return new UInt(this.r, this.bits.map((w, i) => this.r.and(w, o.bits[i])), this.limit < o.limit ? this.limit : o.limit);
  }
  or(b: UInt | Constant): UInt {
    const o = this.sameWidth(b, 'or');
    return new UInt(this.r, this.bits.map((w, i) => this.r.or(w, o.bits[i])), (1n << BigInt(this.width)) - 1n);
  }
  xor(b: UInt | Constant): UInt {
    const o = this.sameWidth(b, 'xor');
    return new UInt(this.r, this.bits.map((w, i) => this.r.xor(w, o.bits[i])), (1n << BigInt(this.width)) - 1n);
  }
  not(): UInt {
    return new UInt(this.r, this.bits.map((w) => this.r.not(w)), (1n << BigInt(this.width)) - 1n);
  }

  /** × 2^k, k a constant: k bits wider. */
  shl(k: number): UInt {
    checkShift(k);
    return new UInt(this.r, [...constantBits(0n, k), ...this.bits], this.limit << BigInt(k));
  }
  /** ÷ 2^k rounded down, k a constant: k bits narrower. */
  shr(k: number): UInt {
    checkShift(k);
    const bits = this.bits.slice(k);
    return new UInt(this.r, bits.length ? bits : [ZERO], this.limit >> BigInt(k));
  }

  eq(b: UInt | Constant): Bit {
    const o = this.operand(b, 'eq');
    const w = Math.max(this.width, o.width);
    const diff = Array.from({ length: w }, (_, i) => this.r.xor(this.at(i), o.at(i)));
    return new Bit(this.r, this.r.not(orAll(this.r, diff)));
  }
  ne(b: UInt | Constant): Bit {
    return this.eq(b).not();
  }
  gt(b: UInt | Constant): Bit {
    const o = this.operand(b, 'gt');
    return new Bit(this.r, greater(this.r, (i) => this.at(i), (i) => o.at(i), Math.max(this.width, o.width)));
  }
  lt(b: UInt | Constant): Bit {
    return this.operand(b, 'lt').gt(this);
  }
  ge(b: UInt | Constant): Bit {
    return this.lt(b).not();
  }
  le(b: UInt | Constant): Bit {
    return this.gt(b).not();
  }
  min(b: UInt | Constant): UInt {
    const o = this.operand(b, 'min');
    return select(this.lt(o), this, o);
  }
  max(b: UInt | Constant): UInt {
    const o = this.operand(b, 'max');
    return select(this.gt(o), this, o);
  }

  /** The low w bits: the value modulo 2^w. */
  wrap(w: number): UInt {
    checkWidth(w, 'wrap');
    const cap = (1n << BigInt(w)) - 1n;
    return new UInt(this.r, Array.from({ length: w }, (_, i) => this.at(i)), this.limit < cap ? this.limit : cap);
  }
  /** Zero-extended to w bits (at least its width: wrap(w) narrows). */
  resize(w: number): UInt {
    checkWidth(w, 'resize');
    if (w < this.width) throw new CircuitError('width-mismatch', `resize(${w}): the value is ${this.width} bits wide; wrap(${w}) keeps its low ${w} bits`);
    return new UInt(this.r, Array.from({ length: w }, (_, i) => this.at(i)), this.limit);
  }
  /** The same value, signed (one bit wider). */
  toInt(): Int {
    return new Int(this.r, [...this.bits, ZERO], 0n, this.limit);
  }
  /** The number of ones (an adder tree, n − H(n) ANDs for n bits). */
  popcount(): UInt {
    return popcount(this.toBits());
  }
}

/** A constant unsigned value, just wide enough. */
export function uintConstant(r: Recorder, v: bigint): UInt {
  return new UInt(r, constantBits(v, Math.max(1, bitLength(v))), v);
}

/** The low `width` bits of a × b (two's complement alike: the low bits do not depend on signs). */
function multiply(r: Recorder, a: readonly Wire[], b: readonly Wire[], width: number): Wire[] {
  const at = (bits: readonly Wire[], i: number) => (i < bits.length ? bits[i] : ZERO);
  let acc: Wire[] = constantBits(0n, width);
  for (let j = 0; j < Math.min(b.length, width); j++) {
    if (at(b, j) === ZERO) continue;
    const partial = Array.from({ length: width }, (_, i) => (i >= j ? r.and(at(a, i - j), b[j]) : ZERO));
    // The low j bits of the partial product are zero: only the bits above take adders.
    const high = addWires(r, (i) => acc[i + j], (i) => partial[i + j], width - j);
    acc = [...acc.slice(0, j), ...high];
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------
// Signed integers

/** A two's-complement integer: `bits` low first, its value within min..max. */
export class Int extends Traced {
  constructor(
    r: Recorder,
    readonly bits: readonly Wire[],
    /** The value's range: low ≤ value ≤ high. */
    readonly low: bigint,
    readonly high: bigint,
  ) {
    super(r);
  }

  get width(): number {
    return this.bits.length;
  }

  describe(): string {
    return `int(${this.width})`;
  }

  /** @internal Bit i, sign-extended. */
  at(i: number): Wire {
    return i < this.bits.length ? this.bits[i] : this.bits[this.bits.length - 1];
  }

  toBits(): Bit[] {
    return this.bits.map((w) => new Bit(this.r, w));
  }

  /** The sign bit: [value < 0]. */
  isNegative(): Bit {
    return new Bit(this.r, this.bits[this.bits.length - 1]);
  }

  private operand(b: Int | Constant, op: string): Int {
    if (b instanceof Int) return b;
    if ((b as unknown) instanceof UInt) throw new CircuitError('type-mismatch', `int.${op}: the operand is unsigned (${(b as unknown as UInt).describe()}); convert it with .toInt()`);
    if (typeof b !== 'number' && typeof b !== 'bigint') throw new CircuitError('type-mismatch', `int.${op}: the operand is ${describe(b)}, not a signed integer`);
    return intConstant(this.r, toBigInt(b, `int.${op}`));
  }

  private ranged(bitsOf: (w: number) => Wire[], min: bigint, max: bigint): Int {
    return new Int(this.r, bitsOf(signedWidth(min, max)), min, max);
  }

  add(b: Int | Constant): Int {
    const o = this.operand(b, 'add');
    return this.ranged((w) => addWires(this.r, (i) => this.at(i), (i) => o.at(i), w), this.low + o.low, this.high + o.high);
  }
  sub(b: Int | Constant): Int {
    const o = this.operand(b, 'sub');
    return this.ranged((w) => addWires(this.r, (i) => this.at(i), (i) => this.r.not(o.at(i)), w, ONE), this.low - o.high, this.high - o.low);
  }
  neg(): Int {
    return intConstant(this.r, 0n).sub(this);
  }
  mul(b: Int | Constant): Int {
    const o = this.operand(b, 'mul');
    const corners = [this.low * o.low, this.low * o.high, this.high * o.low, this.high * o.high];
    const min = corners.reduce((x, y) => (y < x ? y : x));
    const max = corners.reduce((x, y) => (y > x ? y : x));
    return this.ranged((w) => {
      const ext = (v: Int) => Array.from({ length: w }, (_, i) => v.at(i));
      return multiply(this.r, ext(this), ext(o), w);
    }, min, max);
  }

  private sameWidth(b: Int | Constant, op: string): Int {
    const o = this.operand(b, op);
    if (o.width === this.width) return o;
    if (typeof b !== 'object' && o.width < this.width) return new Int(this.r, Array.from({ length: this.width }, (_, i) => o.at(i)), o.low, o.high);
    throw new CircuitError('width-mismatch', `int.${op}: the operands are ${this.width} and ${o.width} bits wide; resize(w) or wrap(w) one of them first`);
  }
  private full(bits: Wire[]): Int {
    const half = 1n << BigInt(this.width - 1);
    return new Int(this.r, bits, -half, half - 1n);
  }
  and(b: Int | Constant): Int {
    const o = this.sameWidth(b, 'and');
    return this.full(this.bits.map((w, i) => this.r.and(w, o.bits[i])));
  }
  or(b: Int | Constant): Int {
    const o = this.sameWidth(b, 'or');
    return this.full(this.bits.map((w, i) => this.r.or(w, o.bits[i])));
  }
  xor(b: Int | Constant): Int {
    const o = this.sameWidth(b, 'xor');
    return this.full(this.bits.map((w, i) => this.r.xor(w, o.bits[i])));
  }
  not(): Int {
    return new Int(this.r, this.bits.map((w) => this.r.not(w)), -1n - this.high, -1n - this.low);
  }
  shl(k: number): Int {
    checkShift(k);
    return new Int(this.r, [...constantBits(0n, k), ...this.bits], this.low << BigInt(k), this.high << BigInt(k));
  }
  /** Arithmetic shift: ÷ 2^k rounded toward −∞. */
  shr(k: number): Int {
    checkShift(k);
    const min = this.low >> BigInt(k);
    const max = this.high >> BigInt(k);
    const w = signedWidth(min, max);
    return new Int(this.r, Array.from({ length: w }, (_, i) => this.at(i + k)), min, max);
  }

  /** Both at one width with the sign bit flipped: unsigned order is then signed order. */
  private keys(o: Int): [(i: number) => Wire, (i: number) => Wire, number] {
    const w = Math.max(this.width, o.width);
    const key = (v: Int) => (i: number) => (i === w - 1 ? this.r.not(v.at(i)) : v.at(i));
    return [key(this), key(o), w];
  }
  eq(b: Int | Constant): Bit {
    const o = this.operand(b, 'eq');
    const w = Math.max(this.width, o.width);
    const diff = Array.from({ length: w }, (_, i) => this.r.xor(this.at(i), o.at(i)));
    return new Bit(this.r, this.r.not(orAll(this.r, diff)));
  }
  ne(b: Int | Constant): Bit {
    return this.eq(b).not();
  }
  gt(b: Int | Constant): Bit {
    const [ka, kb, w] = this.keys(this.operand(b, 'gt'));
    return new Bit(this.r, greater(this.r, ka, kb, w));
  }
  lt(b: Int | Constant): Bit {
    return this.operand(b, 'lt').gt(this);
  }
  ge(b: Int | Constant): Bit {
    return this.lt(b).not();
  }
  le(b: Int | Constant): Bit {
    return this.gt(b).not();
  }
  min(b: Int | Constant): Int {
    const o = this.operand(b, 'min');
    return select(this.lt(o), this, o);
  }
  max(b: Int | Constant): Int {
    const o = this.operand(b, 'max');
    return select(this.gt(o), this, o);
  }

  /** The low w bits, read as a w-bit signed value. */
  wrap(w: number): Int {
    checkWidth(w, 'wrap');
    const half = 1n << BigInt(w - 1);
    const fits = this.low >= -half && this.high < half;
    return new Int(this.r, Array.from({ length: w }, (_, i) => this.at(i)), fits ? this.low : -half, fits ? this.high : half - 1n);
  }
  /** Sign-extended to w bits (at least its width: wrap(w) narrows). */
  resize(w: number): Int {
    checkWidth(w, 'resize');
    if (w < this.width) throw new CircuitError('width-mismatch', `resize(${w}): the value is ${this.width} bits wide; wrap(${w}) keeps its low ${w} bits`);
    return new Int(this.r, Array.from({ length: w }, (_, i) => this.at(i)), this.low, this.high);
  }
  /** The same bits read as unsigned (a negative value becomes 2^width + value). */
  asUInt(): UInt {
    return new UInt(this.r, this.bits, this.low >= 0n ? this.high : (1n << BigInt(this.width)) - 1n);
  }
}

/** A constant signed value, just wide enough. */
export function intConstant(r: Recorder, v: bigint): Int {
  return new Int(r, constantBits(BigInt.asUintN(signedWidth(v, v), v), signedWidth(v, v)), v, v);
}

// ---------------------------------------------------------------------------------------------
// Functions over values

/** Anything `select` chooses between: values, and arrays and objects of them. */
export type Selectable = Bit | UInt | Int | readonly Selectable[] | { readonly [key: string]: Selectable };

export function describe(v: unknown): string {
  if (v instanceof Traced) return v.describe();
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v === null ? 'null' : typeof v;
}

/**
 * `condition ? a : b` for secret conditions: both branches are computed, and the result costs
 * one AND per bit (a multiplexer) — a branch is never cheaper than both of its sides.
 * Integers of different widths give the wider type; arrays and objects go element by element.
 */
export function select<T extends Selectable>(condition: Bit, a: T, b: T): T;
export function select(condition: Bit, a: UInt | Constant, b: UInt | Constant): UInt;
export function select(condition: Bit, a: Int | Constant, b: Int | Constant): Int;
export function select(condition: Bit, a: unknown, b: unknown): unknown {
  if (!(condition instanceof Bit)) throw new CircuitError('type-mismatch', `select: the condition is ${describe(condition)}, not a bit (compare values to get one)`);
  const r = condition.r;
  const mux = (x: Wire, y: Wire) => r.mux(condition.wire, x, y);
  if (typeof a === 'number' || typeof a === 'bigint') a = b instanceof Int ? intConstant(r, toBigInt(a, 'select')) : uintConstant(r, toBigInt(a, 'select'));
  if (typeof b === 'number' || typeof b === 'bigint') b = a instanceof Int ? intConstant(r, toBigInt(b, 'select')) : uintConstant(r, toBigInt(b, 'select'));
  if (a instanceof Bit && b instanceof Bit) return new Bit(r, mux(a.wire, b.wire));
  if (a instanceof UInt && b instanceof UInt) {
    const w = Math.max(a.width, b.width);
    return new UInt(r, Array.from({ length: w }, (_, i) => mux(a.at(i), b.at(i))), a.limit > b.limit ? a.limit : b.limit);
  }
  if (a instanceof Int && b instanceof Int) {
    const w = Math.max(a.width, b.width);
    return new Int(r, Array.from({ length: w }, (_, i) => mux(a.at(i), b.at(i))), a.low < b.low ? a.low : b.low, a.high > b.high ? a.high : b.high);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) throw new CircuitError('width-mismatch', `select: the arrays have ${a.length} and ${b.length} elements`);
    return a.map((x, i) => select(condition, x, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !(a instanceof Traced) && !(b instanceof Traced)) {
    const keys = Object.keys(a);
    if (keys.join() !== Object.keys(b).join()) throw new CircuitError('type-mismatch', 'select: the objects have different keys');
    return Object.fromEntries(keys.map((k) => [k, select(condition, (a as Record<string, Selectable>)[k], (b as Record<string, Selectable>)[k])]));
  }
  throw new CircuitError('type-mismatch', `select: cannot choose between ${describe(a)} and ${describe(b)}`);
}

/** The number of set bits: an adder tree, n − H(n) ANDs (H(n): the ones in n's binary form). */
export function popcount(bits: readonly Bit[]): UInt {
  const r = current();
  const wires = bits.map((b) => {
    if (!(b instanceof Bit)) throw new CircuitError('type-mismatch', `popcount: ${describe(b)} is not a bit`);
    return b.wire;
  });
  const w = Math.max(1, bitLength(BigInt(wires.length)));
  return new UInt(r, compressColumns(r, [wires], w), BigInt(wires.length));
}

/** The sum of many unsigned values in one adder tree (cheaper than adding them one by one). */
export function sum(values: readonly (UInt | Constant)[]): UInt {
  const r = current();
  let max = 0n;
  const columns: Wire[][] = [];
  for (const v of values) {
    const u = v instanceof UInt ? v : typeof v === 'number' || typeof v === 'bigint' ? uintConstant(r, toBigInt(v, 'sum')) : undefined;
    if (!u) throw new CircuitError('type-mismatch', `sum: ${describe(v)} is not an unsigned integer`);
    max += u.limit;
    u.bits.forEach((w, k) => (columns[k] ??= []).push(w));
  }
  return new UInt(r, compressColumns(r, columns, Math.max(1, bitLength(max))), max);
}

/** For declarations: where in the developer's file a type or input was written. */
export function here(): string | undefined {
  return captureStack();
}

/** A known value as a circuit value: `constant(true)` a bit, `constant(5)` a uint, `constant(-3)` an int. */
export function constant(value: boolean): Bit;
export function constant(value: Constant): UInt | Int;
export function constant(value: boolean | Constant): Bit | UInt | Int {
  const r = current();
  if (typeof value === 'boolean') return new Bit(r, value ? ONE : ZERO);
  const v = toBigInt(value, 'constant');
  return v < 0n ? intConstant(r, v) : uintConstant(r, v);
}
