/**
 * "Protect me from a cheating server": a switch that runs the page's service in the
 * cut-and-choose mode, one line on what that buys, and what each mode cost on the last run of
 * each — side by side, so the price of the protection is plain.
 */
import type { RunResult, Security, ServiceInfo } from 'garblet';
import { h, replace } from './dom';
import { bytes, duration, integer } from './format';

/** What one run cost, as this browser measured it. */
interface Cost {
  /** The evaluator's wall time, from the request to the result. */
  ms: number;
  sent: number;
  received: number;
}

const MODES: { mode: Security; label: string }[] = [
  { mode: 'standard', label: 'standard' },
  { mode: 'cut-and-choose', label: 'cut-and-choose (protected)' },
];

export class Protection {
  readonly element: HTMLElement;
  private readonly checkbox = h('input', { type: 'checkbox', 'data-testid': 'protect' });
  /** Why the switch is off for this service, when it is. */
  private readonly note = h('p', { class: 'hint', 'data-testid': 'protect-note', hidden: true });
  private readonly costs = h('div', { class: 'costs', 'data-testid': 'cost-table' });
  private service?: string;
  private offered = false;
  /** Whether the user asked for protection: kept while a service that cannot give it is shown. */
  private wanted = false;
  /** The last run of each mode, by service. */
  private readonly last = new Map<string, Partial<Record<Security, Cost>>>();

  constructor() {
    this.element = h(
      'section',
      { class: 'protection' },
      h('label', { class: 'switch' }, this.checkbox, ' Protect me from a cheating server'),
      h(
        'p',
        { class: 'hint' },
        'Without it you trust the server to garble the function it names. With it the server garbles many copies of the circuit, this browser checks some and evaluates the rest, so a server that garbles a different function or cheats in any other way is caught or outvoted, except with probability 2^-40 — at the cost below.',
      ),
      this.note,
      this.costs,
    );
    this.checkbox.addEventListener('change', () => (this.wanted = this.checkbox.checked));
    this.showCosts();
  }

  /** The mode the next run asks for. */
  get security(): Security {
    return this.checkbox.checked && this.offered ? 'cut-and-choose' : 'standard';
  }

  /**
   * The page now runs `name`, described by `info` (undefined while unknown): the switch works
   * only for a service that offers the cut-and-choose mode.
   */
  showService(name: string, info: ServiceInfo | undefined): void {
    this.service = name;
    this.offered = info?.security === 'cut-and-choose';
    this.checkbox.disabled = !this.offered;
    // A ticked box must mean a protected run: off while the service cannot give it, back on
    // with one that can if the user had asked for it.
    this.checkbox.checked = this.wanted && this.offered;
    this.note.hidden = this.offered || !info;
    this.note.textContent = info && !this.offered ? `The server offers ${name} in the standard mode only: its runs are not protected.` : '';
    this.showCosts();
  }

  /** A run finished: its mode's cost replaces that mode's last one. */
  record(result: RunResult): void {
    const costs = this.last.get(result.service) ?? {};
    const e = result.stats.evaluator;
    costs[result.security] = { ms: e.wall_ms, sent: e.bytes_sent, received: e.bytes_received };
    this.last.set(result.service, costs);
    this.showCosts();
  }

  private showCosts(): void {
    const costs = (this.service && this.last.get(this.service)) || {};
    const rows = MODES.map(({ mode, label }) => {
      const c = costs[mode];
      const data = c ? { 'data-ms': c.ms, 'data-sent': c.sent, 'data-received': c.received } : {};
      const cells = c ? [duration(c.ms), bytes(c.sent), bytes(c.received)] : ['not run yet', '', ''];
      return h('tr', { 'data-testid': `cost-${mode}`, ...data }, h('th', { scope: 'row' }, label), ...cells.map((text) => h('td', {}, text)));
    });
    const both = costs.standard && costs['cut-and-choose'];
    const ratio =
      both &&
      `Protection cost ${(costs['cut-and-choose']!.ms / costs.standard!.ms).toFixed(1)}× the time and ${((costs['cut-and-choose']!.sent + costs['cut-and-choose']!.received) / (costs.standard!.sent + costs.standard!.received)).toFixed(0)}× the bytes (${integer(costs['cut-and-choose']!.sent + costs['cut-and-choose']!.received)} against ${integer(costs.standard!.sent + costs.standard!.received)}).`;
    replace(
      this.costs,
      h(
        'table',
        {},
        h('caption', {}, `Last run of each mode${this.service ? ` (${this.service})` : ''}`),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'mode'), h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col' }, 'you sent'), h('th', { scope: 'col' }, 'you received'))),
        h('tbody', {}, ...rows),
      ),
      ratio ? h('p', { class: 'hint', 'data-testid': 'cost-ratio' }, ratio) : null,
    );
  }
}
