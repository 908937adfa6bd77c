/**
 * Declared types: what an input is, and optionally what an output must be. Each remembers where
 * it was written, so that a mistake in a declaration is reported at its line.
 */

import { CircuitError } from './errors.js';
import { Bit, here, Int, UInt } from './values.js';

/** A type as the manifest records it. */
export type TypeDescription =
  | { kind: 'uint'; bits: number }
  | { kind: 'int'; bits: number }
  | { kind: 'bit' }
  | { kind: 'bytes'; length: number }
  | { kind: 'array'; length: number; of: TypeDescription };

export interface UIntType {
  readonly kind: 'uint';
  readonly bits: number;
  readonly where?: string;
}
export interface IntType {
  readonly kind: 'int';
  readonly bits: number;
  readonly where?: string;
}
export interface BitType {
  readonly kind: 'bit';
  readonly where?: string;
}
export interface BytesType {
  readonly kind: 'bytes';
  readonly length: number;
  readonly where?: string;
}
export interface ArrayType<T extends Type = Type> {
  readonly kind: 'array';
  readonly length: number;
  readonly of: T;
  readonly where?: string;
}
export type Type = UIntType | IntType | BitType | BytesType | ArrayType;

/** The traced value of a declared type. */
export type ValueOf<T> = T extends UIntType ? UInt : T extends IntType ? Int : T extends BitType ? Bit : T extends BytesType ? UInt[] : T extends ArrayType<infer E> ? ValueOf<E>[] : never;

function count(n: number, what: string, at: string | undefined, max = 1 << 24): void {
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CircuitError('bad-declaration', `${what} must be a whole number from 1 to ${max}, not ${String(n)}`, at);
}

/** An unsigned integer of `bits` bits (0 … 2^bits − 1). */
export function uint(bits: number): UIntType {
  const where = here();
  count(bits, 'uint(bits)', where);
  return { kind: 'uint', bits, where };
}
/** A two's-complement integer of `bits` bits (−2^(bits−1) … 2^(bits−1) − 1). */
export function int(bits: number): IntType {
  const where = here();
  count(bits, 'int(bits)', where);
  return { kind: 'int', bits, where };
}
/** One bit (a boolean). */
export function bit(): BitType {
  return { kind: 'bit', where: here() };
}
/** A byte string of `length` bytes, traced as an array of 8-bit unsigned integers. */
export function bytes(length: number): BytesType {
  const where = here();
  count(length, 'bytes(length)', where);
  return { kind: 'bytes', length, where };
}
/** `length` values of type `of`, traced as a JavaScript array. */
export function array<T extends Type>(of: T, length: number): ArrayType<T> {
  const where = here();
  count(length, 'array(of, length)', where);
  if (!isType(of)) throw new CircuitError('bad-declaration', 'array(of, length): `of` is not a type (uint(8), int(16), bit(), bytes(4), array(…))', where);
  return { kind: 'array', length, of, where };
}

export function isType(t: unknown): t is Type {
  return typeof t === 'object' && t !== null && ['uint', 'int', 'bit', 'bytes', 'array'].includes((t as Type).kind);
}

/** Bits a value of `t` takes. */
export function widthOf(t: Type): number {
  switch (t.kind) {
    case 'uint':
    case 'int':
      return t.bits;
    case 'bit':
      return 1;
    case 'bytes':
      return 8 * t.length;
    case 'array':
      return t.length * widthOf(t.of);
  }
}

export function description(t: Type): TypeDescription {
  switch (t.kind) {
    case 'uint':
    case 'int':
      return { kind: t.kind, bits: t.bits };
    case 'bit':
      return { kind: 'bit' };
    case 'bytes':
      return { kind: 'bytes', length: t.length };
    case 'array':
      return { kind: 'array', length: t.length, of: description(t.of) };
  }
}

export function typeName(t: TypeDescription): string {
  switch (t.kind) {
    case 'uint':
    case 'int':
      return `${t.kind}(${t.bits})`;
    case 'bit':
      return 'bit()';
    case 'bytes':
      return `bytes(${t.length})`;
    case 'array':
      return `array(${typeName(t.of)}, ${t.length})`;
  }
}

/** The party that holds an input. */
export type Owner = 'garbler' | 'evaluator';
/** Who learns an output. */
export type Recipient = 'evaluator' | 'garbler' | 'both';

export interface Input<T extends Type = Type> {
  readonly owner: Owner;
  readonly type: T;
  readonly where?: string;
}

/** An input the server (the garbler) holds. */
export function garbler<T extends Type>(type: T): Input<T> {
  return owned('garbler', type);
}
/** An input the client (the evaluator: the browser) holds. */
export function evaluator<T extends Type>(type: T): Input<T> {
  return owned('evaluator', type);
}

function owned<T extends Type>(owner: Owner, type: T): Input<T> {
  const where = here();
  if (!isType(type)) throw new CircuitError('bad-declaration', `${owner}(type): ${String(type)} is not a type (uint(8), int(16), bit(), bytes(4), array(…))`, where);
  return { owner, type, where };
}

/** An output: who learns it and, optionally, the type it must have (else the value's own). */
export interface Output {
  readonly to: Recipient;
  readonly type?: Type;
}
