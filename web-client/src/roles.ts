/**
 * "Who holds what, who learns what" for a service, read from the server's catalog — so the page
 * says what the server actually computes, not what the page assumes.
 */
import type { InputField, OutputField, ParamInfo, ServiceInfo } from 'garblet';
import { h } from './dom';
import { integer } from './format';

/** `n` and a noun, singular for 1: "1 bit", "900 bits". */
export function plural(n: number, one: string, many: string): string {
  return `${integer(n)} ${n === 1 ? one : many}`;
}

/** How big a value is, in its encoding's units: "900 bits", "16 bytes", "100 symbols of ACGT". */
export function sizeOf(field: InputField): string {
  const { encoding, bits } = field;
  switch (encoding.type) {
    case 'uint':
      return plural(bits, 'bit', 'bits');
    case 'bytes':
      return plural(bits / 8, 'byte', 'bytes');
    case 'symbols':
      return `${integer(bits / encoding.symbol_bits)} ${alphabetName(encoding.alphabet, bits / encoding.symbol_bits)}`;
  }
}

/** "symbols of ACGT", or "Latin-1 characters" for the 256-character byte alphabet; singular for `n` = 1. */
export function alphabetName(alphabet: string, n = 2): string {
  const latin1 = [...alphabet].length === 256;
  if (n === 1) return latin1 ? 'Latin-1 character' : `symbol of ${alphabet}`;
  return latin1 ? 'Latin-1 characters' : `symbols of ${alphabet}`;
}

/** The client parameter that is the length of `field`, if any (the client's string lengths). */
export function lengthParam(info: ServiceInfo, field: InputField): ParamInfo | undefined {
  return info.circuit.kind === 'builtin' ? info.circuit.client_params.find((p) => p.length_of === field.name && field.party === 'evaluator') : undefined;
}

function inputItem(info: ServiceInfo, field: InputField): HTMLElement {
  const length = lengthParam(info, field);
  const size = length ? `any length from ${integer(length.min)} to ${integer(length.max)}` : sizeOf(field);
  return h('li', {}, h('code', {}, field.name), ` — ${size}`);
}

function outputItem(output: OutputField): HTMLElement {
  return h('li', {}, h('code', {}, output.name), ` — ${integer(output.bits)} bit${output.bits === 1 ? '' : 's'}${output.signed ? ', signed' : ''}`);
}

function list(items: HTMLElement[], none: string): HTMLElement {
  return items.length ? h('ul', {}, ...items) : h('p', { class: 'none' }, none);
}

/** Public parameters fixed by the service: both parties build the same circuit from them. */
function publicParams(info: ServiceInfo): string | undefined {
  if (info.circuit.kind !== 'builtin') return undefined;
  const settable = new Set(info.circuit.client_params.map((p) => p.name));
  const fixed = Object.entries(info.circuit.params).filter(([name]) => !settable.has(name));
  return fixed.length ? fixed.map(([k, v]) => `${k} = ${integer(v)}`).join(', ') : undefined;
}

export function rolesBox(info: ServiceInfo): HTMLElement {
  const inputs = (party: string) => info.inputs.filter((f) => f.party === party).map((f) => inputItem(info, f));
  const learns = (who: 'evaluator' | 'garbler') => info.outputs.filter((o) => o.reveal === who || o.reveal === 'both').map(outputItem);
  const params = publicParams(info);
  const shared = info.inputs.filter((f) => f.party !== 'garbler' && f.party !== 'evaluator');
  return h(
    'section',
    { class: 'roles', 'data-testid': 'roles' },
    h(
      'div',
      { class: 'party server' },
      h('h3', {}, 'Server', h('small', {}, ' garbles')),
      h('h4', {}, 'holds, secret'),
      list(inputs('garbler'), 'no input'),
      h('h4', {}, 'learns'),
      list(learns('garbler'), 'nothing'),
    ),
    h(
      'div',
      { class: 'party you' },
      h('h3', {}, 'You', h('small', {}, ' this browser evaluates')),
      h('h4', {}, 'hold, secret'),
      list(inputs('evaluator'), 'no input'),
      h('h4', {}, 'learn'),
      list(learns('evaluator'), 'nothing'),
    ),
    h(
      'p',
      { class: 'public' },
      'Public to both: the circuit',
      info.and_gates ? ` (${integer(info.and_gates)} AND gates by default)` : '',
      params ? `, ${params}` : '',
      shared.length ? `, and the inputs ${shared.map((f) => f.name).join(', ')}` : '',
      '. Neither side sees the other’s input.',
    ),
  );
}
