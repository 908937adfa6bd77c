/** Any service the server offers, with a form made from its catalog entry. */
import type { InputField, InputValue, ParamInfo, ServiceInfo } from 'garblet';
import { services } from '../connection';
import { h, replace } from '../dom';
import { integer, parseHex } from '../format';
import { header, type Page } from '../page';
import { Protection } from '../protection';
import { alphabetName, lengthParam, plural, rolesBox, sizeOf } from '../roles';
import { RunPanel, type RunSpec } from '../run-panel';

/** One form field: its element, and how to read it into an SDK input value and parameters. */
interface Control {
  element: HTMLElement;
  /** The value; throws an Error that tells the user what to fix (an empty field included). */
  read(): InputValue;
  /** A parameter this input sets (a list's length), if any. */
  param?: () => [string, number];
}

/**
 * A list input: a number field of `count × width` bits holding `count` equal-width values, the
 * first in the lowest bits, where `count` is a parameter you may set (a set's or a bid list's
 * length) and `width` one the service fixes. The catalog does not mark lists as such; this is
 * how they read from it (psi's `set`: nb × n bits; minimum's `values`: nb × w bits).
 */
interface ListShape {
  count: ParamInfo;
  width: number;
}

export function listShape(info: ServiceInfo, field: InputField): ListShape | undefined {
  if (info.circuit.kind !== 'builtin' || field.encoding.type !== 'uint') return undefined;
  const settable = new Set(info.circuit.client_params.map((p) => p.name));
  const fixed = Object.entries(info.circuit.params).filter(([name]) => !settable.has(name));
  for (const count of info.circuit.client_params) {
    if (count.length_of !== undefined || count.default < 1 || field.bits % count.default !== 0) continue;
    const width = field.bits / count.default;
    if (width > 1 && fixed.some(([, v]) => v === width)) return { count, width };
  }
  return undefined;
}

/**
 * A decimal or 0x-hex unsigned integer that fits in `width` bits, or an Error naming `what`, in
 * the words the SDK uses for a single value (its InputError messages, which the page shows).
 */
function parseUint(text: string, width: number, what: string): bigint {
  const t = text.trim().replace(/_/g, '');
  const takes = `${what} takes a whole number from 0 to ${((1n << BigInt(width)) - 1n).toLocaleString('en-US')}`;
  if (/^-(0x[0-9a-f]+|[0-9]+)$/i.test(t)) throw new Error(`${takes}; ${text.trim()} is negative`);
  if (!/^(0x[0-9a-f]+|[0-9]+)$/i.test(t)) throw new Error(`${takes}; '${text.trim()}' is not one (write decimal digits, or hexadecimal after 0x)`);
  const v = BigInt(t);
  if (v >> BigInt(width) !== 0n) throw new Error(`${takes}; ${text.trim()} is too large`);
  return v;
}

export function inputControl(info: ServiceInfo, field: InputField): Control {
  const input = h('input', { type: 'text', spellcheck: 'false', 'data-testid': `input-${field.name}`, 'aria-label': field.name });
  const label = (hint: string) => h('label', { class: 'field' }, h('code', {}, field.name), h('span', { class: 'hint', 'data-testid': `hint-${field.name}` }, hint), input);
  const empty = (what: string) => new Error(`${field.name} is empty: enter ${what}.`);
  const list = listShape(info, field);
  if (list) {
    const { count, width } = list;
    const min = Math.max(1, count.min);
    input.placeholder = 'e.g. 17, 42, 0x2a';
    return {
      element: label(`a list of ${width}-bit unsigned integers, ${integer(min)} to ${integer(count.max)} of them, separated by commas or spaces; its length sets ${count.name} (${integer(field.bits)} bits with ${integer(count.default)})`),
      read: () => {
        const items = input.value.split(/[\s,;]+/).filter(Boolean);
        if (items.length === 0) throw empty(`a list of numbers, e.g. 17, 42`);
        if (items.length < min || items.length > count.max) throw new Error(`${field.name}: ${plural(items.length, 'value', 'values')} given; this service takes ${integer(min)} to ${integer(count.max)}.`);
        // The first value in the lowest bits.
        return items.reduce((acc, item, i) => acc | (parseUint(item, width, `${field.name}, value ${i + 1}`) << BigInt(i * width)), 0n);
      },
      param: () => [count.name, input.value.split(/[\s,;]+/).filter(Boolean).length],
    };
  }
  switch (field.encoding.type) {
    case 'uint':
      if (field.signed) {
        const max = (1n << BigInt(field.bits - 1)) - 1n;
        input.placeholder = 'e.g. -250 or 1200';
        return {
          element: label(`a signed integer of ${plural(field.bits, 'bit', 'bits')}, ${(-max - 1n).toLocaleString('en-US')} to ${max.toLocaleString('en-US')}: decimal, or hex after 0x, after a minus sign if negative`),
          read: () => {
            if (!input.value.trim()) throw empty('a number, negative or not');
            // The SDK reads the sign and the digits, and refuses a value out of range in the
            // same words as the command line.
            return input.value.trim();
          },
        };
      }
      input.placeholder = 'decimal, or hex after 0x';
      return {
        element: label(`an unsigned integer of ${plural(field.bits, 'bit', 'bits')}: decimal, or hex after 0x`),
        read: () => {
          if (!input.value.trim()) throw empty('a number (decimal, or hex after 0x)');
          // The SDK reads decimal and 0x digits, and says what is wrong in the same words as
          // the command line.
          return input.value.trim();
        },
      };
    case 'bytes': {
      const n = field.bits / 8;
      input.classList.add('hex');
      input.placeholder = `${2 * n} hex digits`;
      return {
        element: label(`${plural(n, 'byte', 'bytes')} (${integer(field.bits)} bits) as ${2 * n} hex digits`),
        read: () => {
          if (!input.value.trim()) throw empty(`${plural(n, 'byte', 'bytes')} as ${2 * n} hex digits`);
          const bytes = parseHex(input.value);
          if (!bytes) throw new Error(`${field.name}: write whole bytes as hex digits (0-9, a-f).`);
          // The SDK checks the length, in the words the command line uses.
          return bytes;
        },
      };
    }
    case 'symbols': {
      const { alphabet, symbol_bits } = field.encoding;
      const length = lengthParam(info, field);
      const size = length ? `any length from ${integer(Math.max(1, length.min))} to ${integer(length.max)}` : sizeOf(field);
      return {
        element: label(`${alphabetName(alphabet)}, ${size} (${plural(symbol_bits, 'bit', 'bits')} a character)`),
        read: () => {
          if (!input.value) throw empty(`some ${alphabetName(alphabet)}`);
          return input.value;
        },
      };
    }
  }
}

function paramControl(p: ParamInfo, setBy?: string): { element: HTMLElement; read(): number | undefined } {
  if (setBy) {
    return { element: h('p', { class: 'hint' }, h('code', {}, p.name), ` is the number of values in ${setBy}: set from your list.`), read: () => undefined };
  }
  if (p.length_of) {
    return { element: h('p', { class: 'hint' }, h('code', {}, p.name), ` is the length of ${p.length_of}: set from what you type.`), read: () => undefined };
  }
  const input = h('input', { type: 'number', min: p.min, max: p.max, value: p.default, 'data-testid': `param-${p.name}`, 'aria-label': p.name });
  return {
    element: h('label', { class: 'field' }, h('code', {}, p.name), h('span', { class: 'hint' }, `${p.doc} (${integer(p.min)} to ${integer(p.max)})`), input),
    read: () => {
      const v = Number(input.value);
      if (!Number.isSafeInteger(v) || v < p.min || v > p.max) throw new Error(`${p.name} must be an integer from ${p.min} to ${p.max}.`);
      return v;
    },
  };
}

function mount(root: HTMLElement): void {
  const picker = h('select', { 'data-testid': 'service', 'aria-label': 'service' });
  const doc = h('p', { class: 'doc' });
  const roles = h('div');
  const form = h('div', { class: 'form' });
  let prepare: () => RunSpec = () => {
    throw new Error('Pick a service first.');
  };
  const protection = new Protection();
  const panel = new RunPanel({
    label: 'Run privately',
    prepare: () => prepare(),
    show: (result) => {
      const rows = Object.values(result.outputs).map((o) => {
        // A byte string (the catalog says so) in hexadecimal whatever its width; otherwise as the
        // command line prints it: up to 64 bits a number, anything wider hexadecimal, which is
        // how such a value is written and compared.
        const number = o.encoding !== 'bytes' && o.bits <= 64;
        return h('tr', { 'data-testid': `output-${o.name}`, 'data-value': o.value.toString() }, h('th', { scope: 'row' }, h('code', {}, o.name)), h('td', { class: number ? 'num' : 'hex', 'data-testid': `shown-${o.name}` }, number ? o.value.toString() : o.hex), h('td', { class: 'hex' }, number ? o.hex : ''));
      });
      panel.result.replaceChildren(h('table', { class: 'outputs' }, h('thead', {}, h('tr', {}, h('th', {}, 'output'), h('th', {}, 'value'), h('th', {}, 'hex'))), h('tbody', {}, ...rows)));
    },
    finished: (result) => protection.record(result),
  });

  const show = (info: ServiceInfo) => {
    panel.reset();
    protection.showService(info.name, info);
    doc.textContent = info.doc;
    replace(roles, rolesBox(info));
    const inputs = info.inputs.filter((f) => f.party === 'evaluator').map((f) => ({ field: f, control: inputControl(info, f) }));
    const setBy = (p: ParamInfo) => inputs.find((i) => listShape(info, i.field)?.count.name === p.name)?.field.name;
    const params = info.circuit.kind === 'builtin' ? info.circuit.client_params.map((p) => ({ param: p, control: paramControl(p, setBy(p)) })) : [];
    replace(
      form,
      inputs.length ? h('h3', {}, 'Your inputs') : h('p', { class: 'hint' }, 'This service takes no input from you.'),
      ...inputs.map((i) => i.control.element),
      params.length ? h('h3', {}, 'Parameters you may set') : null,
      ...params.map((p) => p.control.element),
    );
    prepare = () => {
      const values: Record<string, InputValue> = {};
      for (const { field, control } of inputs) values[field.name] = control.read();
      const chosen: Record<string, number> = {};
      for (const { param, control } of params) {
        const v = control.read();
        if (v !== undefined) chosen[param.name] = v;
      }
      for (const { control } of inputs) {
        const set = control.param?.();
        if (set) chosen[set[0]] = set[1];
      }
      return { service: info.name, inputs: values, params: chosen, security: protection.security };
    };
  };

  root.append(
    ...header('Run any service', 'Every service this server offers, with a form made from what its catalog says each input is. The same SDK call runs them all: ', h('code', {}, 'session.run(name, inputs, { params, signal, onProgress })'), '.'),
    h('label', { class: 'field' }, 'Service ', picker),
    doc,
    roles,
    form,
    protection.element,
    panel.element,
  );

  services().then(
    (all) => {
      replace(picker, ...all.map((s) => h('option', { value: s.name }, s.name)));
      const byName = new Map(all.map((s) => [s.name, s]));
      picker.addEventListener('change', () => show(byName.get(picker.value)!));
      show(all[0]);
    },
    (e: Error) => panel.showError(e.message),
  );
}

export const anyServicePage: Page = { path: 'any', title: 'Any service', mount };
