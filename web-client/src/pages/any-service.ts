/** Any service the server offers, with a form made from its catalog entry. */
import type { InputField, InputValue, ParamInfo, ServiceInfo } from 'garblet';
import { services } from '../connection';
import { h, replace } from '../dom';
import { integer, parseHex } from '../format';
import { header, type Page } from '../page';
import { alphabetName, lengthParam, rolesBox, sizeOf } from '../roles';
import { RunPanel, type RunSpec } from '../run-panel';

/** One form field: its element, and how to read it into an SDK input value. */
interface Control {
  element: HTMLElement;
  read(): InputValue;
}

function inputControl(info: ServiceInfo, field: InputField): Control {
  const input = h('input', { type: 'text', spellcheck: 'false', 'data-testid': `input-${field.name}`, 'aria-label': field.name });
  const label = (hint: string) => h('label', { class: 'field' }, h('code', {}, field.name), h('span', { class: 'hint' }, hint), input);
  switch (field.encoding.type) {
    case 'uint':
      input.value = '0';
      input.placeholder = 'decimal, or hex with 0x';
      return { element: label(`unsigned integer, ${sizeOf(field)}`), read: () => input.value.trim() };
    case 'bytes': {
      const n = field.bits / 8;
      input.value = '00'.repeat(n);
      input.classList.add('hex');
      return {
        element: label(`${integer(n)} bytes as ${2 * n} hex digits`),
        read: () => {
          const bytes = parseHex(input.value);
          if (!bytes) throw new Error(`${field.name}: write whole bytes as hex digits.`);
          return bytes;
        },
      };
    }
    case 'symbols': {
      const length = lengthParam(info, field);
      const size = length ? `any length from ${length.min} to ${length.max}` : sizeOf(field);
      return { element: label(`${alphabetName(field.encoding.alphabet)}, ${size}`), read: () => input.value };
    }
  }
}

function paramControl(p: ParamInfo): { element: HTMLElement; read(): number | undefined } {
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
  const panel = new RunPanel({
    label: 'Run privately',
    prepare: () => prepare(),
    show: (result) => {
      const rows = Object.values(result.outputs).map((o) =>
        h('tr', { 'data-testid': `output-${o.name}`, 'data-value': o.value.toString() }, h('th', { scope: 'row' }, h('code', {}, o.name)), h('td', { class: 'num' }, o.value.toString()), h('td', { class: 'hex' }, o.hex)),
      );
      panel.result.replaceChildren(h('table', { class: 'outputs' }, h('thead', {}, h('tr', {}, h('th', {}, 'output'), h('th', {}, 'value'), h('th', {}, 'hex'))), h('tbody', {}, ...rows)));
    },
  });

  const show = (info: ServiceInfo) => {
    panel.reset();
    doc.textContent = info.doc;
    replace(roles, rolesBox(info));
    const inputs = info.inputs.filter((f) => f.party === 'evaluator').map((f) => ({ field: f, control: inputControl(info, f) }));
    const params = info.circuit.kind === 'builtin' ? info.circuit.client_params.map((p) => ({ param: p, control: paramControl(p) })) : [];
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
      return { service: info.name, inputs: values, params: chosen };
    };
  };

  root.append(
    ...header('Run any service', 'Every service this server offers, with a form made from what its catalog says each input is. The same SDK call runs them all: ', h('code', {}, 'session.run(name, inputs, { params, signal, onProgress })'), '.'),
    h('label', { class: 'field' }, 'Service ', picker),
    doc,
    roles,
    form,
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
