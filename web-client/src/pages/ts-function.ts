/**
 * A function written in TypeScript, compiled by garblet-compile and served by the demo server
 * as `budget` (circuits/compiled/): its source, its inputs and outputs as the manifest types
 * them, and a run with your input.
 */
import source from '../../../circuits/compiled/budget.ts?raw';
import manifestText from '../../../circuits/compiled/budget.manifest.json?raw';
import type { InputValue } from 'garblet';
import { h, replace } from '../dom';
import { describeService, header, type Page } from '../page';
import { RunPanel } from '../run-panel';
import { inputControl } from './any-service';

const SERVICE = 'budget';

type TypeDesc = { kind: 'uint' | 'int'; bits: number } | { kind: 'bit' } | { kind: 'bytes'; length: number } | { kind: 'array'; length: number; of: TypeDesc };

interface Manifest {
  inputs: { name: string; owner: 'garbler' | 'evaluator'; type: TypeDesc }[];
  outputs: { name: string; reveal: 'evaluator' | 'garbler' | 'both'; type: TypeDesc }[];
}

const manifest = JSON.parse(manifestText) as Manifest;

/** A type as the function wrote it: `int(32)`, `bytes(16)`, `array(uint(8), 3)`. */
function typeName(t: TypeDesc): string {
  switch (t.kind) {
    case 'uint':
    case 'int':
      return `${t.kind}(${t.bits})`;
    case 'bit':
      return 'bit';
    case 'bytes':
      return `bytes(${t.length})`;
    case 'array':
      return `array(${typeName(t.of)}, ${t.length})`;
  }
}

/** A value as its type reads: signed numbers signed, bytes as hex, a bit as true or false. */
function shown(t: TypeDesc, value: bigint, hex: string): string {
  if (t.kind === 'bytes') return hex;
  if (t.kind === 'bit') return value === 1n ? 'true' : 'false';
  return value.toString();
}

const WHO = { garbler: 'the server', evaluator: 'you', both: 'both' } as const;

function mount(root: HTMLElement): void {
  const roles = h('div');
  const form = h('div', { class: 'form' });
  let read: () => Record<string, InputValue> = () => {
    throw new Error('The server has not described the service yet.');
  };
  const panel = new RunPanel({
    label: 'Run privately',
    prepare: () => ({ service: SERVICE, inputs: read() }),
    show: (result) => {
      const rows = manifest.outputs.map((o) => {
        const out = result.outputs[o.name];
        return h(
          'tr',
          { 'data-testid': `output-${o.name}`, 'data-value': out.value.toString() },
          h('th', { scope: 'row' }, h('code', {}, o.name)),
          h('td', {}, h('code', {}, typeName(o.type))),
          h('td', { class: o.type.kind === 'bytes' ? 'hex' : 'num', 'data-testid': `shown-${o.name}` }, shown(o.type, out.value, out.hex)),
        );
      });
      panel.result.replaceChildren(h('table', { class: 'outputs' }, h('thead', {}, h('tr', {}, h('th', {}, 'output'), h('th', {}, 'type'), h('th', {}, 'value'))), h('tbody', {}, ...rows)));
    },
  });
  const signature = h(
    'table',
    { class: 'outputs', 'data-testid': 'signature' },
    h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'type'), h('th', {}, 'whose'))),
    h(
      'tbody',
      {},
      ...manifest.inputs.map((i) => h('tr', { 'data-testid': `type-${i.name}` }, h('th', { scope: 'row' }, h('code', {}, i.name)), h('td', {}, h('code', {}, typeName(i.type))), h('td', {}, `input of ${WHO[i.owner]}`))),
      ...manifest.outputs.map((o) => h('tr', { 'data-testid': `type-${o.name}` }, h('th', { scope: 'row' }, h('code', {}, o.name)), h('td', {}, h('code', {}, typeName(o.type))), h('td', {}, `output to ${WHO[o.reveal]}`))),
    ),
  );

  root.append(
    ...header(
      'Your function in TypeScript',
      'The server runs a function written in TypeScript: ',
      h('code', {}, 'garblet-compile'),
      ' traced it once into a circuit (Bristol Fashion) and a manifest that names and types its inputs and outputs, and ',
      h('code', {}, 'garblet serve'),
      ' offers it as the service ',
      h('code', {}, SERVICE),
      '. Your input stays in this browser; the server’s balance stays on the server.',
    ),
    h('pre', { class: 'source', 'data-testid': 'source' }, h('code', {}, source)),
    signature,
    roles,
    form,
    panel.element,
  );
  void describeService(SERVICE, roles, panel).then((info) => {
    if (!info) return;
    const inputs = info.inputs.filter((f) => f.party === 'evaluator').map((f) => ({ field: f, control: inputControl(info, f) }));
    replace(form, h('h3', {}, 'Your input'), ...inputs.map((i) => i.control.element));
    read = () => Object.fromEntries(inputs.map(({ field, control }) => [field.name, control.read()]));
  });
}

export const tsFunctionPage: Page = { path: 'function', title: 'Your function', mount };
