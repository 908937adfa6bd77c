/**
 * `circuit(spec, body)` declares a function; `compile` runs its body once over traced inputs
 * and writes the gates it recorded as Bristol Fashion, with a manifest of the inputs' and
 * outputs' names, types, owners and recipients.
 */

import { CircuitError, captureStack } from './errors.js';
import { Op, Recorder, recording, Wire, ZERO, ONE } from './recorder.js';
import { description, Input, isType, Output, Recipient, Type, TypeDescription, typeName, ValueOf, widthOf } from './types.js';
import { Bit, describe, Int, UInt } from './values.js';

/** What a circuit returns for an output: a value, or an array of them. */
export type OutputValue = Bit | UInt | Int | readonly OutputValue[];

/** An output declaration: who learns it, or `{ to, type }` to fix its type too. */
export type OutputSpec = Recipient | Output;

export interface CircuitSpec<I extends Record<string, Input>, O extends Record<string, OutputSpec>> {
  /** The service name the manifest suggests (default: the file's name, for the CLI). */
  name?: string;
  /** Each input, in order, with its owner: `garbler(uint(64))` or `evaluator(bytes(16))`. */
  inputs: I;
  /** Each output, in order, with who learns it. */
  outputs: O;
}

export interface Circuit<I extends Record<string, Input> = Record<string, Input>, O extends Record<string, OutputSpec> = Record<string, OutputSpec>> {
  readonly spec: CircuitSpec<I, O>;
  readonly body: (inputs: { [K in keyof I]: ValueOf<I[K]['type']> }) => { [K in keyof O]: OutputValue };
  readonly where?: string;
}

/** Declares a circuit: `body` is called once, by `compile`, with traced inputs. */
export function circuit<const I extends Record<string, Input>, const O extends Record<string, OutputSpec>>(
  spec: CircuitSpec<I, O>,
  body: (inputs: { [K in keyof I]: ValueOf<I[K]['type']> }) => { [K in keyof O]: OutputValue },
): Circuit<I, O> {
  return { spec, body, where: captureStack() };
}

export interface ManifestInput {
  name: string;
  /** `garbler` (the server) or `evaluator` (the client). */
  owner: 'garbler' | 'evaluator';
  type: TypeDescription;
}

export interface ManifestOutput {
  name: string;
  /** `evaluator`, `garbler` or `both`. */
  reveal: Recipient;
  type: TypeDescription;
}

/**
 * The sidecar of a compiled circuit (`f.manifest.json` beside `f.bristol`): the Bristol file's
 * inputs and outputs in order, each with its name and type, and the SHA-256 of the Bristol text
 * it describes, which the server checks so that the two cannot drift apart.
 */
export interface Manifest {
  format: 'garblet-circuit';
  version: 1;
  name?: string;
  bristol_sha256: string;
  inputs: ManifestInput[];
  outputs: ManifestOutput[];
  gates: GateCounts;
}

export interface GateCounts {
  and: number;
  xor: number;
  inv: number;
  /** EQ and EQW lines: outputs that are a constant, an input or another output's bit. */
  copies: number;
  wires: number;
}

export interface Compiled {
  bristol: string;
  /** The manifest without `bristol_sha256` (compileWithHash adds it; hashing is async in browsers). */
  manifest: Omit<Manifest, 'bristol_sha256'>;
}

/**
 * The most gates a trace records by default before it is taken for a runaway loop (a `while`
 * on a secret condition runs for ever: JavaScript takes every circuit value as true). 2^24 is
 * about 25 times the edit distance of two 200-symbol strings.
 */
export const MAX_GATES = 1 << 24;

export interface CompileOptions {
  /** Stop with a `too-large` error past this many gates (default {@link MAX_GATES}). */
  maxGates?: number;
}

function layout(type: Type, wires: Wire[], r: Recorder): unknown {
  switch (type.kind) {
    case 'uint':
      return new UInt(r, wires, (1n << BigInt(type.bits)) - 1n);
    case 'int': {
      const half = 1n << BigInt(type.bits - 1);
      return new Int(r, wires, -half, half - 1n);
    }
    case 'bit':
      return new Bit(r, wires[0]);
    case 'bytes':
      // Byte 0 in the highest bits: a byte string is a big-endian integer on the wire (the
      // SDK's and the server's `bytes` encoding).
      return Array.from({ length: type.length }, (_, k) => new UInt(r, wires.slice((type.length - 1 - k) * 8, (type.length - k) * 8), 255n));
    case 'array': {
      const w = widthOf(type.of);
      return Array.from({ length: type.length }, (_, k) => layout(type.of, wires.slice(k * w, (k + 1) * w), r));
    }
  }
}

/** The inferred type of a returned value. */
function inferType(v: unknown, name: string, where?: string): TypeDescription {
  if (v instanceof Bit) return { kind: 'bit' };
  if (v instanceof UInt) return { kind: 'uint', bits: v.width };
  if (v instanceof Int) return { kind: 'int', bits: v.width };
  if (Array.isArray(v)) {
    if (v.length === 0) throw new CircuitError('type-mismatch', `output ${name} is an empty array`, where);
    const types = v.map((x, i) => inferType(x, `${name}[${i}]`, where));
    const first = typeName(types[0]);
    const other = types.findIndex((t) => typeName(t) !== first);
    if (other >= 0) throw new CircuitError('width-mismatch', `output ${name}: element 0 is ${first} and element ${other} is ${typeName(types[other])}; an array's elements have one type (resize them)`, where);
    return { kind: 'array', length: v.length, of: types[0] };
  }
  throw new CircuitError('type-mismatch', `output ${name} is ${describe(v)}, not a circuit value (bit, uint, int or an array of them)`, where);
}

/** The output's wires in the declared (or inferred) type's layout. */
function outputWires(v: unknown, type: TypeDescription, name: string, r: Recorder, where?: string): Wire[] {
  const mismatch = (what: string) => new CircuitError('width-mismatch', `output ${name} is declared ${typeName(type)} but the value is ${what}`, where);
  switch (type.kind) {
    case 'bit':
      if (v instanceof Bit) return [v.wire];
      throw new CircuitError('type-mismatch', `output ${name} is declared bit() but the value is ${describe(v)}`, where);
    case 'uint':
      if (!(v instanceof UInt)) throw new CircuitError('type-mismatch', `output ${name} is declared ${typeName(type)} but the value is ${describe(v)}`, where);
      if (v.width > type.bits) throw mismatch(`${v.width} bits wide (it can reach ${v.limit}); wrap(${type.bits}) keeps the low bits`);
      return Array.from({ length: type.bits }, (_, i) => v.at(i));
    case 'int':
      if (!(v instanceof Int)) throw new CircuitError('type-mismatch', `output ${name} is declared ${typeName(type)} but the value is ${describe(v)}`, where);
      if (v.width > type.bits) throw mismatch(`${v.width} bits wide (${v.low} … ${v.high}); wrap(${type.bits}) keeps the low bits`);
      return Array.from({ length: type.bits }, (_, i) => v.at(i));
    case 'bytes': {
      if (!Array.isArray(v) || v.length !== type.length) throw mismatch(describe(v));
      const bytes = v.map((b, k) => outputWires(b, { kind: 'uint', bits: 8 }, `${name}[${k}]`, r, where));
      return bytes.reverse().flat();
    }
    case 'array':
      if (!Array.isArray(v) || v.length !== type.length) throw mismatch(describe(v));
      return v.flatMap((x, k) => outputWires(x, type.of, `${name}[${k}]`, r, where));
  }
}

/**
 * Traces `c` and returns its Bristol Fashion text and manifest. Throws {@link CircuitError},
 * located at the developer's line, for what cannot be compiled.
 */
export function compile(c: Circuit, options: CompileOptions = {}): Compiled {
  if (!c || typeof c.body !== 'function' || !c.spec) throw new CircuitError('bad-declaration', 'compile() takes what circuit(spec, body) returns');
  const { spec } = c;
  if (!spec.inputs || typeof spec.inputs !== 'object') throw new CircuitError('bad-declaration', 'the circuit declares no inputs object', c.where);
  if (!spec.outputs || typeof spec.outputs !== 'object') throw new CircuitError('bad-declaration', 'the circuit declares no outputs object', c.where);
  const r = new Recorder(options.maxGates ?? MAX_GATES);
  const inputs: ManifestInput[] = [];
  const widths: number[] = [];
  const values: Record<string, unknown> = {};
  return recording(r, () => {
    for (const [name, input] of Object.entries(spec.inputs)) {
      if (isType(input)) {
        throw new CircuitError('no-owner', `input ${name} has no owner: write garbler(${typeName(description(input))}) for the server's or evaluator(${typeName(description(input))}) for the client's`, input.where ?? c.where);
      }
      if (!input || (input.owner !== 'garbler' && input.owner !== 'evaluator') || !isType(input.type)) {
        throw new CircuitError('no-owner', `input ${name} has no owner: declare it as garbler(type) or evaluator(type)`, c.where);
      }
      const w = widthOf(input.type);
      values[name] = layout(input.type, r.input(w), r);
      inputs.push({ name, owner: input.owner, type: description(input.type) });
      widths.push(w);
    }
    const returned = c.body(values as never) as Record<string, unknown>;
    if (!returned || typeof returned !== 'object') throw new CircuitError('no-recipient', `the circuit function returned ${describe(returned)}, not an object of outputs`, c.where);
    const outputs: ManifestOutput[] = [];
    const outputBits: Wire[][] = [];
    for (const [name, declared] of Object.entries(spec.outputs)) {
      const out: Output = typeof declared === 'string' ? { to: declared } : declared;
      if (!out || !['evaluator', 'garbler', 'both'].includes(out.to)) {
        throw new CircuitError('no-recipient', `output ${name}: say who learns it, 'evaluator', 'garbler' or 'both', not ${JSON.stringify(out?.to ?? declared)}`, c.where);
      }
      if (!(name in returned)) throw new CircuitError('no-recipient', `output ${name} is declared but the circuit function does not return it`, c.where);
      const type = out.type ? description(out.type) : inferType(returned[name], name, c.where);
      outputBits.push(outputWires(returned[name], type, name, r, out.type?.where ?? c.where));
      outputs.push({ name, reveal: out.to, type });
    }
    for (const name of Object.keys(returned)) {
      if (!(name in spec.outputs)) throw new CircuitError('no-recipient', `output ${name} is returned but has no recipient: add ${name}: 'evaluator' (or 'garbler', 'both') to outputs`, c.where);
    }
    const { text, gates } = writeBristol(r, widths, outputBits);
    return { bristol: text, manifest: { format: 'garblet-circuit', version: 1, name: spec.name, inputs, outputs, gates } };
  });
}

/** `compile`, with the manifest's `bristol_sha256` (Web Crypto: in browsers and Node alike). */
export async function compileWithHash(c: Circuit, options: CompileOptions = {}): Promise<{ bristol: string; manifest: Manifest }> {
  const { bristol, manifest } = compile(c, options);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(bristol));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  return { bristol, manifest: { format: manifest.format, version: manifest.version, name: manifest.name, bristol_sha256: hex, inputs: manifest.inputs, outputs: manifest.outputs, gates: manifest.gates } };
}

/**
 * The recorded gates as Bristol Fashion: the gates the outputs need, in recorded order; inputs
 * are the first wires, outputs the last. An output bit that a gate computes is written by that
 * gate; one that is a constant, an input or a bit already output is an EQ or EQW line.
 */
function writeBristol(r: Recorder, inputWidths: number[], outputs: Wire[][]): { text: string; gates: GateCounts } {
  const n = r.ops.length;
  const first = r.inputWires;
  const live = new Uint8Array(n);
  for (const bits of outputs) for (const w of bits) if (w >= first) live[w - first] = 1;
  for (let k = n - 1; k >= 0; k--) {
    if (!live[k]) continue;
    for (const w of r.ops[k] === Op.Not ? [r.as[k]] : [r.as[k], r.bs[k]]) if (w >= first) live[w - first] = 1;
  }
  const outputCount = outputs.reduce((s, o) => s + o.length, 0);
  let internal = 0;
  for (let k = 0; k < n; k++) internal += live[k];
  // Which gate writes each output wire directly (the first output position of its wire).
  const number = new Int32Array(n).fill(-1);
  const flat = outputs.flat();
  let copies = 0;
  const directly = new Map<Wire, number>();
  flat.forEach((w, i) => {
    if (w >= first && !directly.has(w)) directly.set(w, i);
    else copies++;
  });
  const wires = first + (internal - directly.size) + outputCount;
  const outBase = wires - outputCount;
  let next = first;
  for (let k = 0; k < n; k++) {
    if (!live[k]) continue;
    const position = directly.get(first + k);
    number[k] = position === undefined ? next++ : outBase + position;
  }
  const wire = (w: Wire) => (w < first ? w : number[w - first]);
  const lines: string[] = [];
  const counts = { and: 0, xor: 0, inv: 0 };
  for (let k = 0; k < n; k++) {
    if (!live[k]) continue;
    const op = r.ops[k];
    if (op === Op.Not) {
      lines.push(`1 1 ${wire(r.as[k])} ${number[k]} INV`);
      counts.inv++;
    } else {
      lines.push(`2 1 ${wire(r.as[k])} ${wire(r.bs[k])} ${number[k]} ${op === Op.And ? 'AND' : 'XOR'}`);
      if (op === Op.And) counts.and++;
      else counts.xor++;
    }
  }
  flat.forEach((w, i) => {
    if (w >= first && directly.get(w) === i) return;
    if (w === ZERO || w === ONE) lines.push(`1 1 ${w === ONE ? 1 : 0} ${outBase + i} EQ`);
    else {
      lines.push(`1 1 ${wire(w)} ${outBase + i} EQW`);
    }
  });
  const header = [`${lines.length} ${wires}`, [inputWidths.length, ...inputWidths].join(' '), [outputs.length, ...outputs.map((o) => o.length)].join(' ')];
  return { text: `${header.join('\n')}\n\n${lines.join('\n')}\n`, gates: { ...counts, copies, wires } };
}
