/**
 * "Protect me from a cheating server": a switch that runs the page's service in a protected
 * mode — authenticated garbling where the service offers it (recommended: it protects both
 * sides, for a fraction of cut-and-choose's cost), or cut-and-choose — one line on what each
 * buys, and what each mode cost on the last run of each, side by side, so the price of the
 * protection is plain. An authenticated run on preprocessing done ahead has a row of its own:
 * its cost is its online phase's.
 */
import { SECURITY_MODES, type RunResult, type Security, type ServiceInfo } from 'garblet';
import { h, replace } from './dom';
import { bytes, duration, integer } from './format';

/** What one run cost, as this browser measured it. */
interface Cost {
  /** The evaluator's wall time, from the request to the result. */
  ms: number;
  sent: number;
  received: number;
}

type Protected = Exclude<Security, 'standard'>;

/** A row of the cost table: a mode, or the authenticated mode's online phase alone. */
type Row = Security | 'authenticated-online';

/** The protected modes, recommended first, with what each buys. */
const PROTECTED: { mode: Protected; label: string; hint: string }[] = [
  {
    mode: 'authenticated',
    label: 'authenticated garbling (recommended)',
    hint: 'Both sides prepare the circuit together, each checking the other: a server that garbles a different function or cheats in any other way is caught before this page uses any output, except with probability 2^-40. It costs a few times the standard mode.',
  },
  {
    mode: 'cut-and-choose',
    label: 'cut-and-choose',
    hint: 'The server garbles many copies of the circuit, this browser checks some and evaluates the rest: a cheating server is caught or outvoted, except with probability 2^-40. It streams any size of circuit in little memory, at tens of times the standard mode’s cost.',
  },
];

const LABELS: Record<Row, string> = {
  standard: 'standard',
  authenticated: 'authenticated (protected)',
  'authenticated-online': 'authenticated, online phase only (prepared ahead)',
  'cut-and-choose': 'cut-and-choose (protected)',
};

export class Protection {
  readonly element: HTMLElement;
  private readonly checkbox = h('input', { type: 'checkbox', 'data-testid': 'protect' });
  /** Which protected mode a protected run uses. */
  private readonly radios = new Map<Protected, HTMLInputElement>();
  private readonly hint = h('p', { class: 'hint', 'data-testid': 'protect-hint' });
  /** Why the switch is off for this service, when it is. */
  private readonly note = h('p', { class: 'hint', 'data-testid': 'protect-note', hidden: true });
  private readonly costs = h('div', { class: 'costs', 'data-testid': 'cost-table' });
  private service?: string;
  /** The modes the current service offers. */
  private offered: Security[] = ['standard'];
  /** Whether the user asked for protection: kept while a service that cannot give it is shown. */
  private wanted = false;
  /** The protected mode the user picked last, kept across services that offer it. */
  private preferred: Protected = 'authenticated';
  /** The last run of each mode, by service. */
  private readonly last = new Map<string, Partial<Record<Row, Cost>>>();
  /** Called when the mode the next run asks for may have changed (the page's preparation ahead). */
  onChange?: () => void;

  constructor() {
    const modes = PROTECTED.map(({ mode, label }) => {
      const radio = h('input', { type: 'radio', name: 'protection', value: mode, 'data-testid': `protect-${mode}` });
      radio.addEventListener('change', () => {
        this.preferred = mode;
        this.showChoice();
        this.onChange?.();
      });
      this.radios.set(mode, radio);
      return h('label', {}, radio, ' ', label);
    });
    this.element = h(
      'section',
      { class: 'protection' },
      h('label', { class: 'switch' }, this.checkbox, ' Protect me from a cheating server'),
      h('fieldset', { class: 'choice', 'data-testid': 'protect-modes' }, ...modes),
      this.hint,
      h('p', { class: 'hint' }, 'Without protection you trust the server to garble the function it names.'),
      this.note,
      this.costs,
    );
    this.checkbox.addEventListener('change', () => {
      this.wanted = this.checkbox.checked;
      this.showChoice();
      this.onChange?.();
    });
    this.showChoice();
    this.showCosts();
  }

  /** The mode the next run asks for. */
  get security(): Security {
    return this.checkbox.checked ? (this.choice() ?? 'standard') : 'standard';
  }

  /** The protected mode a run would use: the preferred one where offered, else any offered. */
  private choice(): Protected | undefined {
    if (this.offered.includes(this.preferred)) return this.preferred;
    return PROTECTED.map((p) => p.mode).find((mode) => this.offered.includes(mode));
  }

  /**
   * The page now runs `name`, described by `info` (undefined while unknown): the switch works
   * only for a service that offers a protected mode, and each mode only where it is offered.
   */
  showService(name: string, info: ServiceInfo | undefined): void {
    this.service = name;
    // A service offers its mode and every one before it.
    this.offered = info ? SECURITY_MODES.slice(0, SECURITY_MODES.indexOf(info.security) + 1) : ['standard'];
    const any = this.choice() !== undefined;
    this.checkbox.disabled = !any;
    // A ticked box must mean a protected run: off while the service cannot give it, back on
    // with one that can if the user had asked for it.
    this.checkbox.checked = this.wanted && any;
    this.note.hidden = any || !info;
    this.note.textContent = info && !any ? `The server offers ${name} in the standard mode only: its runs are not protected.` : '';
    this.showChoice();
    this.showCosts();
    this.onChange?.();
  }

  /**
   * A run finished: its mode's cost replaces that mode's last one (an authenticated run on
   * preprocessing done ahead, its online phase's row).
   */
  record(result: RunResult): void {
    const costs = this.last.get(result.service) ?? {};
    const e = result.stats.evaluator;
    const row: Row = result.prepared ? 'authenticated-online' : result.security;
    costs[row] = { ms: e.wall_ms, sent: e.bytes_sent, received: e.bytes_received };
    this.last.set(result.service, costs);
    this.showCosts();
  }

  /** The radios show the mode a protected run would use; the hint says what it buys. */
  private showChoice(): void {
    const chosen = this.choice();
    for (const [mode, radio] of this.radios) {
      radio.disabled = !this.offered.includes(mode);
      radio.checked = mode === chosen;
    }
    const hint = PROTECTED.find((p) => p.mode === chosen)?.hint;
    this.hint.textContent = hint ?? '';
    this.hint.hidden = !hint;
  }

  private showCosts(): void {
    const costs = (this.service && this.last.get(this.service)) || {};
    const modes = (['standard', 'authenticated', 'authenticated-online', 'cut-and-choose'] as Row[]).filter((mode) => (mode !== 'authenticated-online' && this.offered.includes(mode)) || costs[mode]);
    const rows = modes.map((mode) => {
      const c = costs[mode];
      const data = c ? { 'data-ms': c.ms, 'data-sent': c.sent, 'data-received': c.received } : {};
      const cells = c ? [duration(c.ms), bytes(c.sent), bytes(c.received)] : ['not run yet', '', ''];
      return h('tr', { 'data-testid': `cost-${mode}`, ...data }, h('th', { scope: 'row' }, LABELS[mode]), ...cells.map((text) => h('td', {}, text)));
    });
    const standard = costs.standard;
    const total = (c: Cost) => c.sent + c.received;
    const labels: [Row, string][] = [...PROTECTED.map(({ mode, label }): [Row, string] => [mode, label.replace(' (recommended)', '')]), ['authenticated-online', 'authenticated garbling’s online phase (prepared ahead)']];
    const ratios = labels.flatMap(([mode, label]) => {
      const c = costs[mode];
      if (!c || !standard) return [];
      return [`${label} cost ${(c.ms / standard.ms).toFixed(1)}× the time and ${(total(c) / total(standard)).toFixed(1)}× the bytes (${integer(total(c))} against ${integer(total(standard))})`];
    });
    replace(
      this.costs,
      h(
        'table',
        {},
        h('caption', {}, `Last run of each mode${this.service ? ` (${this.service})` : ''}`),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'mode'), h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col' }, 'you sent'), h('th', { scope: 'col' }, 'you received'))),
        h('tbody', {}, ...rows),
      ),
      ratios.length ? h('p', { class: 'hint', 'data-testid': 'cost-ratio' }, `Protection: ${ratios.join('; ')}.`) : null,
    );
  }
}
