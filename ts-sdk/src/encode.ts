/**
 * Values ↔ bits, in Garblet's convention: an input or output is an unsigned integer whose bit i
 * is wire i; byte strings are big-endian integers; strings over an alphabet put their first
 * symbol in the lowest bits.
 */
import { InputError } from './errors.js';
import { bytesLength, count, lengthRange, negative, notANumber, notASignedNumber, signedOutOfRange, symbolNoun, textLength, thousands, tooLarge } from './wording.js';
import type { HexInput, InputField, Inputs, InputValue, OutputField, ServiceInfo, Utf8Input } from './types.js';

/**
 * Bytes written as hex digits, for a bytes input: `hex('00112233445566778899aabbccddeeff')`
 * (a `0x` prefix and whitespace are allowed). An integer input reads them as a big-endian number.
 */
export function hex(digits: string): HexInput {
  return { garbletInput: 'hex', digits };
}

/** Text for a bytes input, sent as its UTF-8 encoding: `utf8('sixteen byte msg')`. */
export function utf8(text: string): Utf8Input {
  return { garbletInput: 'utf8', text };
}

/** Whether `value` was made by `hex()` or `utf8()` (a plain object, so that it crosses to the worker). */
function isTyped(value: unknown): value is HexInput | Utf8Input {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { garbletInput?: unknown; digits?: unknown; text?: unknown };
  return (v.garbletInput === 'hex' && typeof v.digits === 'string') || (v.garbletInput === 'utf8' && typeof v.text === 'string');
}

/** The bytes that `hex()` digits stand for. */
function hexBytes(digits: string, name: string): Uint8Array {
  const clean = digits.replace(/\s+/g, '').replace(/^0x/i, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new InputError(`input '${name}': hex('${digits}') is not whole bytes of hex digits`, { reason: 'not-hex', input: name });
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The evaluator's fields of a service, in order. */
export function clientFields(fields: InputField[]): InputField[] {
  return fields.filter((f) => f.party === 'evaluator');
}

/** Matches the caller's inputs to the client's fields (by name, by position, or a bare value). */
export function assignInputs(fields: InputField[], inputs: Inputs): Map<string, InputValue> {
  const out = new Map<string, InputValue>();
  // An array is either the inputs by position or one bare bit array. Booleans can only be bits;
  // 0/1 numbers are bits when the service has one input and they are more than one value.
  const isBitArray =
    Array.isArray(inputs) &&
    inputs.length > 0 &&
    (inputs.every((b) => typeof b === 'boolean') || (fields.length === 1 && inputs.length > 1 && inputs.every((b) => b === 0 || b === 1)));
  if (Array.isArray(inputs) && !isBitArray) {
    if (inputs.length !== fields.length) {
      throw new InputError(`expected ${fields.length} input(s) (${fields.map((f) => f.name).join(', ')}), got ${inputs.length}`, {
        reason: 'input-count',
        expected: fields.length,
        got: inputs.length,
        unit: 'inputs',
      });
    }
    fields.forEach((f, i) => out.set(f.name, inputs[i] as InputValue));
  } else if (inputs !== null && typeof inputs === 'object' && !(inputs instanceof Uint8Array) && !Array.isArray(inputs) && !isTyped(inputs)) {
    const given = inputs as Record<string, InputValue>;
    for (const name of Object.keys(given)) {
      if (!fields.some((f) => f.name === name)) {
        throw new InputError(`unknown input '${name}' (the inputs are: ${fields.map((f) => f.name).join(', ') || 'none'})`, { reason: 'unknown-input', input: name });
      }
    }
    for (const f of fields) {
      if (!(f.name in given)) throw new InputError(`missing input '${f.name}'`, { reason: 'missing-input', input: f.name });
      out.set(f.name, given[f.name]);
    }
  } else {
    if (fields.length !== 1) {
      throw new InputError(`this service takes ${fields.length} inputs (${fields.map((f) => f.name).join(', ')}); pass them by name or as an array`, {
        reason: 'input-count',
        expected: fields.length,
        got: 1,
        unit: 'inputs',
      });
    }
    out.set(fields[0].name, inputs as InputValue);
  }
  return out;
}

/** Length of a value in its field's units (symbols or bytes), for `length_of` parameters. */
export function lengthOf(field: InputField, value: InputValue): number | undefined {
  if (isTyped(value)) {
    if (field.encoding.type !== 'bytes') return undefined;
    return value.garbletInput === 'hex' ? hexBytes(value.digits, field.name).length : new TextEncoder().encode(value.text).length;
  }
  if (typeof value === 'string') return field.encoding.type === 'symbols' ? [...value].length : undefined;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) {
    const per = field.encoding.type === 'symbols' ? field.encoding.symbol_bits : field.encoding.type === 'bytes' ? 8 : 1;
    return Math.floor(value.length / per);
  }
  return undefined;
}

/**
 * Fills in client parameters that are the length of an input the caller gave. A length outside
 * the parameter's range is the input's mistake, and is said in its terms (`input-length`, with
 * `min` and `max`), not the parameter's.
 */
export function deriveParams(service: ServiceInfo, values: Map<string, InputValue>, given: Record<string, number>): Record<string, number> {
  const params = { ...given };
  if (service.circuit.kind !== 'builtin') return params;
  for (const p of service.circuit.client_params) {
    if (p.length_of === undefined || p.name in params) continue;
    const field = service.inputs.find((f) => f.name === p.length_of);
    const value = values.get(p.length_of);
    if (field === undefined || value === undefined) continue;
    const n = lengthOf(field, value);
    if (n === undefined) continue;
    if (n < p.min || n > p.max) {
      const { encoding } = field;
      const [noun, unit]: [[string, string], 'symbols' | 'bytes' | 'bits'] =
        encoding.type === 'symbols' ? [symbolNoun(encoding.alphabet), 'symbols'] : encoding.type === 'bytes' ? [['byte', 'bytes'], 'bytes'] : [['bit', 'bits'], 'bits'];
      throw new InputError(lengthRange(field.name, noun, p.min, p.max, n), { reason: 'input-length', service: service.name, input: field.name, param: p.name, got: n, min: p.min, max: p.max, unit });
    }
    params[p.name] = n;
  }
  return params;
}

function uintBits(value: bigint, width: number, name: string, text: string = value.toString()): boolean[] {
  const max = (1n << BigInt(width)) - 1n;
  const range = { reason: 'out-of-range', input: name, value, min: 0n, max, limit: max } as const;
  if (value < 0n) throw new InputError(negative(name, width, text), range);
  if (value > max) throw new InputError(tooLarge(name, width, text), range);
  return Array.from({ length: width }, (_, i) => ((value >> BigInt(i)) & 1n) === 1n);
}

/** A signed field's bits in two's complement, from -2^(width-1) to 2^(width-1) - 1. */
function intBits(value: bigint, width: number, name: string, text: string = value.toString()): boolean[] {
  const max = width === 0 ? 0n : (1n << BigInt(width - 1)) - 1n;
  const min = width === 0 ? 0n : -max - 1n;
  if (value < min || value > max) throw new InputError(signedOutOfRange(name, width, value, text), { reason: 'out-of-range', input: name, value, min, max, limit: max });
  const u = value < 0n ? value + (1n << BigInt(width)) : value;
  return Array.from({ length: width }, (_, i) => ((u >> BigInt(i)) & 1n) === 1n);
}

/** A whole number as people write it: decimal or `0x` hex digits, `_` between them allowed; `-` and digits is a negative number. */
function parseInteger(text: string): bigint | undefined {
  const t = text.trim().replace(/_/g, '');
  return /^-?(0x[0-9a-f]+|[0-9]+)$/i.test(t) ? (t.startsWith('-') ? -BigInt(t.slice(1)) : BigInt(t)) : undefined;
}

function bytesBits(bytes: Uint8Array, width: number, name: string): boolean[] {
  if (bytes.length * 8 !== width) {
    throw new InputError(bytesLength(name, width / 8, bytes.length), { reason: 'input-length', input: name, expected: width / 8, got: bytes.length, unit: 'bytes' });
  }
  const n = bytes.length;
  return Array.from({ length: width }, (_, i) => ((bytes[n - 1 - (i >> 3)] >> (i & 7)) & 1) === 1);
}

function symbolBits(symbols: number[], bitsPer: number, width: number, name: string, alphabet: string): boolean[] {
  if (symbols.length * bitsPer !== width) {
    throw new InputError(textLength(name, alphabet, width / bitsPer, symbols.length), {
      reason: 'input-length',
      input: name,
      expected: width / bitsPer,
      got: symbols.length,
      unit: 'symbols',
    });
  }
  const size = [...alphabet].length;
  const out: boolean[] = [];
  for (const s of symbols) {
    if (!Number.isInteger(s) || s < 0 || s >= size) throw new InputError(`input '${name}': symbol ${s} is not in the alphabet`, { reason: 'not-in-alphabet', input: name, symbol: s });
    for (let b = 0; b < bitsPer; b++) out.push(((s >> b) & 1) === 1);
  }
  return out;
}

/** The bits of one input value for `field`, whose width is `field.bits`. */
export function encodeValue(field: InputField, value: InputValue): boolean[] {
  const { name, bits: width, encoding } = field;
  const integer = field.signed === true && encoding.type === 'uint' ? intBits : uintBits;
  if (typeof value === 'bigint') return integer(value, width, name);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new InputError(`input '${name}': ${value} is not an integer (use a bigint for large values)`, { reason: 'not-an-integer', input: name });
    return integer(BigInt(value), width, name);
  }
  if (Array.isArray(value)) {
    const bits = (value as (boolean | number)[]).map((b) => b === true || b === 1);
    if (!(value as unknown[]).every((b) => b === true || b === false || b === 0 || b === 1)) {
      throw new InputError(`input '${name}': a bit array holds only booleans or 0/1`, { reason: 'wrong-type', input: name });
    }
    if (bits.length !== width) throw new InputError(`${name} takes exactly ${count(width, 'bit', 'bits')}; ${thousands(bits.length)} given`, { reason: 'input-length', input: name, expected: width, got: bits.length, unit: 'bits' });
    return bits;
  }
  if (isTyped(value)) {
    if (value.garbletInput === 'hex') {
      if (encoding.type === 'bytes') return bytesBits(hexBytes(value.digits, name), width, name);
      if (encoding.type === 'uint') {
        const digits = value.digits.replace(/\s+/g, '').replace(/^0x/i, '');
        if (!/^[0-9a-fA-F]+$/.test(digits)) throw new InputError(`input '${name}': hex('${value.digits}') is not a hexadecimal number`, { reason: 'not-hex', input: name });
        return uintBits(BigInt(`0x${digits}`), width, name);
      }
      throw new InputError(`input '${name}' is text in the alphabet ${encoding.alphabet}: pass it as a plain string, not hex()`, { reason: 'wrong-type', input: name });
    }
    if (encoding.type === 'bytes') return bytesBits(new TextEncoder().encode(value.text), width, name);
    throw new InputError(
      encoding.type === 'symbols'
        ? `input '${name}' is text in the alphabet ${encoding.alphabet}: pass it as a plain string, not utf8()`
        : `input '${name}' is an integer: utf8() is for bytes inputs (pass a bigint, a number or a decimal / 0x string)`,
      { reason: 'wrong-type', input: name },
    );
  }
  if (value instanceof Uint8Array) {
    if (encoding.type === 'symbols') return symbolBits([...value], encoding.symbol_bits, width, name, encoding.alphabet);
    return bytesBits(value, width, name);
  }
  if (typeof value === 'string') {
    switch (encoding.type) {
      case 'symbols': {
        const alphabet = [...encoding.alphabet];
        const upper = alphabet.every((c) => c === c.toUpperCase());
        const symbols = [...value].map((c) => {
          const k = alphabet.indexOf(upper ? c.toUpperCase() : c);
          if (k < 0) throw new InputError(`input '${name}': '${c}' is not in the alphabet ${encoding.alphabet}`, { reason: 'not-in-alphabet', input: name, symbol: c });
          return k;
        });
        return symbolBits(symbols, encoding.symbol_bits, width, name, encoding.alphabet);
      }
      case 'bytes':
        throw new InputError(`input '${name}' takes ${width / 8} bytes and a string could be hex or text: pass hex('…') for hex digits, utf8('…') for the UTF-8 bytes of text, or a Uint8Array`, {
          reason: 'wrong-type',
          input: name,
        });
      case 'uint': {
        const v = parseInteger(value);
        if (v === undefined) throw new InputError(field.signed === true ? notASignedNumber(name, width, value) : notANumber(name, width, value), { reason: 'not-an-integer', input: name });
        return integer(v, width, name, value);
      }
    }
  }
  throw new InputError(`input '${name}': unsupported value of type ${typeof value}`, { reason: 'wrong-type', input: name });
}

/** Packs bits LSB first. */
export function packBits(bits: boolean[]): Uint8Array {
  const out = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((b, i) => {
    if (b) out[i >> 3] |= 1 << (i & 7);
  });
  return out;
}

/** An output the client learned. */
export class Output {
  /** The value as an unsigned integer (bit i is wire i). */
  readonly unsigned: bigint;

  constructor(
    readonly name: string,
    /** Width in bits. */
    readonly bits: number,
    /** `0x` and ⌈bits/4⌉ hex digits, as `garblet circuit eval` prints it. */
    readonly hex: string,
    readonly signed: boolean,
    /** `bytes` for a byte string (read it with `bytes()` or `hex`), `uint` for a number. */
    readonly encoding: 'uint' | 'bytes' = 'uint',
  ) {
    this.unsigned = BigInt(hex);
  }

  /** The value; two's complement if the output is signed. */
  get value(): bigint {
    if (this.signed && this.bits > 0 && (this.unsigned >> BigInt(this.bits - 1)) & 1n) {
      return this.unsigned - (1n << BigInt(this.bits));
    }
    return this.unsigned;
  }

  /** The value as a number; throws if it is not exactly representable. */
  toNumber(): number {
    const v = this.value;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError(`${this.name} = ${v} does not fit in a number`);
    return Number(v);
  }

  /** True for a one-bit output that is 1. */
  toBoolean(): boolean {
    return this.unsigned !== 0n;
  }

  /** Big-endian bytes, ⌈bits/8⌉ of them (e.g. an AES ciphertext). */
  bytes(): Uint8Array {
    const n = Math.ceil(this.bits / 8);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[n - 1 - i] = Number((this.unsigned >> BigInt(8 * i)) & 0xffn);
    return out;
  }

  /** The bits, bit 0 first. */
  bitArray(): boolean[] {
    return Array.from({ length: this.bits }, (_, i) => ((this.unsigned >> BigInt(i)) & 1n) === 1n);
  }

  /** The value in decimal; a byte string's as `hex`, as bytes are written. */
  toString(): string {
    return this.encoding === 'bytes' ? this.hex : this.value.toString();
  }

  toJSON(): { name: string; bits: number; hex: string; value: string } {
    return { name: this.name, bits: this.bits, hex: this.hex, value: this.toString() };
  }
}

export function outputsFrom(list: { name: string; hex: string; bits: number; signed: boolean; bytes: boolean }[]): Record<string, Output> {
  const out: Record<string, Output> = {};
  for (const o of list) out[o.name] = new Output(o.name, o.bits, o.hex, o.signed, o.bytes ? 'bytes' : 'uint');
  return out;
}

export type { OutputField };
