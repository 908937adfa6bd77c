/** What every demo page is made of: a title, a lead paragraph, the roles box, the run panel. */
import type { ServiceInfo } from 'garblet';
import { service } from './connection';
import { h, replace } from './dom';
import { rolesBox } from './roles';
import type { RunPanel } from './run-panel';

export interface Page {
  /** The part after `#/` in the address. */
  path: string;
  /** The navigation label. */
  title: string;
  mount(root: HTMLElement): void;
}

/** A page's heading and lead paragraph. */
export function header(title: string, ...lead: (string | Node)[]): HTMLElement[] {
  return [h('h2', {}, title), h('p', { class: 'lead' }, ...lead)];
}

/**
 * Fills `slot` with the service's roles as the server describes them, or shows in the panel why
 * it cannot (the server is down, or offers no such service). Resolves to the description.
 */
export async function describeService(name: string, slot: HTMLElement, panel: RunPanel): Promise<ServiceInfo | undefined> {
  panel.reset();
  replace(slot, h('p', { class: 'loading' }, `Asking the server about ${name}…`));
  try {
    const info = await service(name);
    replace(slot, rolesBox(info));
    return info;
  } catch (e) {
    replace(slot, h('button', { type: 'button', class: 'secondary', 'data-testid': 'retry', onclick: () => void describeService(name, slot, panel) }, 'Ask the server again'));
    panel.showError((e as Error).message);
    return undefined;
  }
}

/** A group of radio buttons; calls `onChange` with the chosen value. */
export function choice<T extends string>(name: string, options: { value: T; label: string }[], initial: T, onChange: (value: T) => void): HTMLElement {
  return h(
    'fieldset',
    { class: 'choice' },
    ...options.map((o) =>
      h(
        'label',
        {},
        h('input', { type: 'radio', name, value: o.value, checked: o.value === initial, 'data-testid': `${name}-${o.value}`, onchange: () => onChange(o.value) }),
        ' ',
        o.label,
      ),
    ),
  );
}

/** A big result value; `data-value` holds the exact value for tests, `text` how it reads. */
export function resultValue(label: string, value: string | bigint | number, options: { text?: string; detail?: string } = {}): HTMLElement {
  return h(
    'div',
    { class: 'result-value' },
    h('span', { class: 'label' }, label),
    h('output', { 'data-testid': 'result-value', 'data-value': String(value) }, options.text ?? String(value)),
    options.detail ? h('span', { class: 'detail' }, options.detail) : null,
  );
}
