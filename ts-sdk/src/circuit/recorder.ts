/**
 * The gate recorder: every operation on a traced value ends here as XOR, AND or NOT of wires.
 *
 * A wire is a number: input wires and gate outputs count up from 0, and the two constants are
 * negative ({@link ZERO}, {@link ONE}). Constants fold (x ∧ 0 = 0, x ⊕ 1 = ¬x, …), a gate already
 * built for the same inputs is reused, and ¬¬x is x, so a constant operand or a repeated
 * expression costs nothing. Gates nothing reads are dropped when the circuit is written.
 */

import { CircuitError } from './errors.js';

export type Wire = number;
export const ZERO: Wire = -1;
export const ONE: Wire = -2;

export const enum Op {
  Xor = 0,
  And = 1,
  Not = 2,
}

export class Recorder {
  /** Input wires: 0 .. inputWires − 1. */
  inputWires = 0;
  /** Gate k writes wire inputWires + k (inputs are all declared before the first gate). */
  readonly ops: Op[] = [];
  readonly as: Wire[] = [];
  readonly bs: Wire[] = [];
  private readonly built = new Map<number, Wire>();
  private readonly negation = new Map<Wire, Wire>();

  /** `maxGates`: where a trace stops, taken for a loop that never ends. */
  constructor(private readonly maxGates: number) {}

  /** `bits` fresh input wires. */
  input(bits: number): Wire[] {
    if (this.ops.length > 0) throw new Error('inputs are declared before the first gate');
    const first = this.inputWires;
    this.inputWires += bits;
    return Array.from({ length: bits }, (_, i) => first + i);
  }

  private gate(op: Op, a: Wire, b: Wire): Wire {
    // One number per (op, a, b), exact in a double while both wires are below 2^24; gates on
    // wires past that are not looked up (built again) rather than risk a collision.
    const key = a < 1 << 24 && b < 1 << 24 ? (a + 2) * 3 + op + (b + 2) * 3 * (1 << 25) : undefined;
    if (key !== undefined) {
      const found = this.built.get(key);
      if (found !== undefined) return found;
    }
    if (this.ops.length >= this.maxGates) {
      throw new CircuitError('too-large', `the circuit passed ${this.maxGates} gates: is a loop or a condition (while (x.gt(y)), if (bit)) reading a secret value? JavaScript takes every circuit value as true`);
    }
    const out = this.inputWires + this.ops.length;
    this.ops.push(op);
    this.as.push(a);
    this.bs.push(b);
    if (key !== undefined) this.built.set(key, out);
    return out;
  }

  not(a: Wire): Wire {
    if (a === ZERO) return ONE;
    if (a === ONE) return ZERO;
    const known = this.negation.get(a);
    if (known !== undefined) return known;
    const out = this.gate(Op.Not, a, a);
    this.negation.set(a, out);
    this.negation.set(out, a);
    return out;
  }

  xor(a: Wire, b: Wire): Wire {
    if (a === ZERO) return b;
    if (b === ZERO) return a;
    if (a === ONE) return this.not(b);
    if (b === ONE) return this.not(a);
    if (a === b) return ZERO;
    if (this.negation.get(a) === b) return ONE;
    return a < b ? this.gate(Op.Xor, a, b) : this.gate(Op.Xor, b, a);
  }

  and(a: Wire, b: Wire): Wire {
    if (a === ZERO || b === ZERO) return ZERO;
    if (a === ONE) return b;
    if (b === ONE) return a;
    if (a === b) return a;
    if (this.negation.get(a) === b) return ZERO;
    return a < b ? this.gate(Op.And, a, b) : this.gate(Op.And, b, a);
  }

  /** a ∨ b = a ⊕ b ⊕ (a ∧ b): one AND. */
  or(a: Wire, b: Wire): Wire {
    return this.xor(this.xor(a, b), this.and(a, b));
  }

  /** s ? a : b = b ⊕ (s ∧ (a ⊕ b)): one AND, none when the branches agree. */
  mux(s: Wire, a: Wire, b: Wire): Wire {
    return this.xor(b, this.and(s, this.xor(a, b)));
  }
}

/** The recorder of the circuit being traced; values check they belong to it. */
let active: Recorder | undefined;

export function current(): Recorder {
  if (!active) throw new CircuitError('outside-circuit', 'a circuit value was used outside its circuit function (values live only while compile() runs the function)');
  return active;
}

/** Runs `body` with `recorder` as the active one (tracing does not nest). */
export function recording<T>(recorder: Recorder, body: () => T): T {
  if (active) throw new CircuitError('outside-circuit', 'compile() was called while another circuit was being traced');
  active = recorder;
  try {
    return body();
  } finally {
    active = undefined;
  }
}
