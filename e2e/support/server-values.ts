/**
 * The server's own inputs as its configuration sets them — the references are computed from
 * what the server really holds, read from the TOML it was started with.
 */
import { parse } from 'smol-toml';
import { serverConfig } from './servers';

interface ValueSource {
  list?: (number | string)[];
  hex?: string;
  decimal?: number | string;
  text?: string;
  env?: string;
  random?: boolean;
}

interface ServiceEntry {
  name: string;
  circuit: { params?: Record<string, number> };
  inputs?: { name?: string; party: string; value?: ValueSource }[];
  garbler_inputs?: Record<string, ValueSource>;
}

function services(): ServiceEntry[] {
  return (parse(serverConfig()) as unknown as { service: ServiceEntry[] }).service;
}

function source(service: string, input: string): ValueSource {
  const entry = services().find((s) => s.name === service);
  if (!entry) throw new Error(`the server's configuration has no service ${service}`);
  const value = entry.garbler_inputs?.[input] ?? entry.inputs?.find((i) => i.name === input)?.value;
  if (!value) throw new Error(`service ${service} has no configured value for ${input}`);
  return value;
}

/**
 * As the server reads it. An `env` value is the variable the server was started with (the
 * global setup sets the AES keys); unset, the server would have drawn it at random, unknowable.
 */
function textOf(v: ValueSource): string {
  if (v.env !== undefined) {
    const set = process.env[v.env];
    if (set !== undefined) return set;
    throw new Error(`${v.env} is unset: the server drew that value at random (global-setup.ts sets the keys)`);
  }
  const text = v.hex ?? v.text ?? (v.decimal !== undefined ? String(v.decimal) : undefined);
  if (text === undefined) throw new Error(`unsupported value source ${JSON.stringify(v)}`);
  return text;
}

/** An integer input (`hex` with or without 0x, or `decimal`). */
export function serverInteger(service: string, input: string): bigint {
  const v = source(service, input);
  if (v.decimal !== undefined) return BigInt(v.decimal);
  const t = textOf(v).replace(/_/g, '');
  return BigInt(t.startsWith('0x') ? t : `0x${t}`);
}

/** A byte-string input written as hex digits (an AES key). */
export function serverBytes(service: string, input: string): Buffer {
  return Buffer.from(textOf(source(service, input)).replace(/^0x/, ''), 'hex');
}

/** A string input over an alphabet (`text = "…"`). */
export function serverText(service: string, input: string): string {
  return textOf(source(service, input));
}

/** A built-in service's fixed public parameter (`circuit.params`). */
export function serverParam(service: string, name: string): number {
  const entry = services().find((s) => s.name === service);
  const value = entry?.circuit.params?.[name];
  if (value === undefined) throw new Error(`service ${service} fixes no parameter ${name}`);
  return Number(value);
}

/** A list input (`list = [...]`): a set, a list of bids. */
export function serverList(service: string, input: string): bigint[] {
  const v = source(service, input);
  if (!v.list) throw new Error(`service ${service}: ${input} is not a list`);
  return v.list.map((x) => BigInt(x));
}
