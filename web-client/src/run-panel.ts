/**
 * The part every demo shares: the run and cancel buttons, live progress (AND gates, bytes,
 * throughput, the evaluator's WebAssembly memory), errors in the page, and what each party
 * measured. The page supplies what to run and how to show the result.
 */
import { AbortError, CheatingDetected, ConnectionError, InputError, ServerError, type Inputs, type Progress, type RoleStats, type RunResult, type Security, type Stats } from 'garblet';
import { run, UnreachableError, type PreparedAhead } from './connection';
import { h, replace } from './dom';
import { bytes, count, duration, integer } from './format';

/** One computation: a service, your inputs, and the parameters you set. */
export interface RunSpec {
  service: string;
  inputs: Inputs;
  params?: Record<string, number>;
  /** The mode to compute in (default: standard). */
  security?: Security;
  /** Where an authenticated run finds a preparation done ahead, if the page made one. */
  ahead?: PreparedAhead;
}

export interface RunPanelOptions {
  /** The run button's label. */
  label: string;
  /** Reads the page's inputs; throws an Error whose message tells the user what to fix. */
  prepare: () => RunSpec;
  /** Shows the result in `panel.result`. */
  show: (result: RunResult) => void;
  /** Called with every finished run, after `show` (the page's cost table). */
  finished?: (result: RunResult) => void;
  /** Called when a run has ended, whichever way: the page is idle again. */
  ended?: () => void;
}

type State = 'idle' | 'connecting' | 'running' | 'done' | 'cancelled' | 'error';

const STATUS_TEXT: Record<State, string> = {
  idle: '',
  connecting: 'connecting…',
  running: 'computing…',
  done: 'done',
  cancelled: 'cancelled',
  error: 'failed',
};

/** What a run in each protected mode says in place of an AND-gate count. */
const UNCOUNTED: Record<Security, string | undefined> = {
  standard: undefined,
  'cut-and-choose': 'cut-and-choose: checking and evaluating circuits',
  authenticated: 'authenticated garbling: preparing and checking the circuit with the server',
};

export class RunPanel {
  readonly element: HTMLElement;
  /** Where the page shows its result. */
  readonly result = h('div', { class: 'result', 'data-testid': 'result' });
  private readonly runButton: HTMLButtonElement;
  private readonly cancelButton = h('button', { type: 'button', class: 'secondary', 'data-testid': 'cancel', disabled: true }, 'Cancel');
  private readonly status = h('span', { class: 'status', 'data-testid': 'status', role: 'status' });
  private readonly bar = h('div', { class: 'bar-fill' });
  private readonly barTrack = h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100 }, this.bar);
  private readonly progressText = h('div', { class: 'progress-text', 'data-testid': 'progress' });
  private readonly error = h('div', { class: 'error', 'data-testid': 'error', role: 'alert', hidden: true });
  private readonly stats = h('div', { class: 'stats', 'data-testid': 'stats' });
  /** Said when a cut-and-choose run's circuits disagreed: the server cheated, the result stands. */
  private readonly recovered = h('div', { class: 'error notice recovered', 'data-testid': 'recovered', role: 'alert', hidden: true });
  private controller?: AbortController;
  /**
   * What the current run's protected mode does instead of counting AND gates as they go, if it
   * is protected: cut-and-choose checks and evaluates many circuits at a time, authenticated
   * garbling prepares the whole circuit before it evaluates it.
   */
  private uncounted?: string;

  constructor(private readonly options: RunPanelOptions) {
    this.runButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'run', onclick: () => void this.start() }, options.label);
    this.cancelButton.addEventListener('click', () => this.controller?.abort(new Error('cancelled by the user')));
    this.element = h(
      'section',
      { class: 'run-panel' },
      h('div', { class: 'controls' }, this.runButton, this.cancelButton, this.status),
      this.barTrack,
      this.progressText,
      this.error,
      this.result,
      this.recovered,
      this.stats,
    );
    this.setState('idle');
  }

  /** Back to idle, with nothing shown: for when the page switches to another service. */
  reset(): void {
    this.controller?.abort(new Error('the page switched service'));
    this.error.hidden = true;
    this.error.classList.remove('notice');
    delete this.error.dataset.kind;
    delete this.error.dataset.reason;
    this.recovered.hidden = true;
    replace(this.result);
    replace(this.stats);
    this.showProgress(undefined);
    this.setState('idle');
  }

  /** Shows an error that is not a run's (e.g. the catalog could not be loaded). */
  showError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  /** A cancelled run is the user's choice, not a failure: said in the same place, quietly. */
  private showCancelled(): void {
    this.showError('Cancelled. The session with the server was closed; you can run again.');
    this.error.classList.add('notice');
  }

  private async start(): Promise<void> {
    this.reset();
    let spec: RunSpec;
    try {
      spec = this.options.prepare();
    } catch (e) {
      this.setState('error');
      return this.showError((e as Error).message);
    }
    const controller = new AbortController();
    this.controller = controller;
    this.uncounted = spec.security === undefined ? undefined : UNCOUNTED[spec.security];
    this.setState('connecting');
    try {
      const result = await run(spec.service, spec.inputs, {
        params: spec.params,
        security: spec.security,
        ahead: spec.ahead,
        signal: controller.signal,
        onConnected: () => this.setState('running'),
        onProgress: (p) => this.showProgress(p),
      });
      this.setState('done');
      this.showComplete();
      this.options.show(result);
      if (result.recovered) this.showRecovered();
      this.showStats(result.stats, result.security, result.prepared);
      this.options.finished?.(result);
    } catch (e) {
      if (e instanceof AbortError) {
        this.setState('cancelled');
        this.showCancelled();
      } else {
        this.setState('error');
        this.showError(describe(e));
        if (e instanceof CheatingDetected) {
          this.error.dataset.kind = 'cheating';
          this.error.dataset.reason = e.reason;
        }
      }
    } finally {
      this.controller = undefined;
      this.options.ended?.();
    }
  }

  private setState(state: State): void {
    const busy = state === 'connecting' || state === 'running';
    this.element.dataset.state = state;
    this.status.textContent = STATUS_TEXT[state];
    this.runButton.disabled = busy;
    this.cancelButton.disabled = !busy;
  }

  private showProgress(p: Progress | undefined): void {
    if (p && this.element.dataset.state === 'done') return; // a late update must not undo showComplete
    // A protected run counts no gates as it goes: its bar is striped, and the text says what
    // it does instead of a count.
    const counted = this.uncounted === undefined;
    const total = counted ? (p?.andTotal ?? null) : null;
    const fraction = p && total ? Math.min(1, p.andGates / total) : 0;
    this.bar.style.width = `${(fraction * 100).toFixed(1)}%`;
    this.barTrack.classList.toggle('indeterminate', !!p && total === null);
    this.barTrack.classList.remove('complete');
    this.barTrack.setAttribute('aria-valuenow', (fraction * 100).toFixed(0));
    if (!p) {
      delete this.progressText.dataset.percent;
      return replace(this.progressText);
    }
    const seconds = p.elapsedMs / 1000;
    // With the total known, how far along first, in whole percent (never 100 before the end).
    const percent = total ? Math.min(Math.floor(fraction * 100), p.andGates < total ? 99 : 100) : undefined;
    const parts = [
      percent === undefined ? '' : `${percent} %`,
      counted ? `${count(p.andGates)}${total ? ` / ${count(total)}` : ''} AND gates` : this.uncounted,
      `${bytes(p.bytes)} received`,
      counted ? `${count(p.andPerSecond)} AND/s` : '',
      seconds > 0 ? `${bytes(p.bytes / seconds)}/s` : '',
      duration(p.elapsedMs),
      p.wasmMemoryBytes === null ? '' : `WebAssembly memory ${bytes(p.wasmMemoryBytes)}`,
    ];
    this.progressText.textContent = parts.filter(Boolean).join(' · ');
    // For tests and the curious: raw numbers, unrounded.
    this.progressText.dataset.andGates = String(p.andGates);
    if (percent === undefined) delete this.progressText.dataset.percent;
    else this.progressText.dataset.percent = String(percent);
    if (p.wasmMemoryBytes !== null) this.progressText.dataset.wasmMemory = String(p.wasmMemoryBytes);
  }

  /**
   * A finished run fills the bar at once: without a known total it was striped (indeterminate),
   * and the last progress update may still be easing the fill towards its end.
   */
  private showComplete(): void {
    this.barTrack.classList.remove('indeterminate');
    this.barTrack.classList.add('complete');
    this.bar.style.width = '100%';
    this.barTrack.setAttribute('aria-valuenow', '100');
  }

  private showRecovered(): void {
    this.recovered.textContent =
      'The server cheated: the circuits it garbled disagreed. The result above is still correct — it came through cheating recovery, and the server was not told that it was noticed.';
    this.recovered.hidden = false;
  }

  /** `prepared`: the run used preprocessing done ahead, and its figures are its online phase's. */
  private showStats(stats: Stats, security: Security, prepared: boolean): void {
    const rows: [string, (s: RoleStats) => string][] = [
      ['wall time', (s) => duration(s.wall_ms)],
      ['CPU time', (s) => (s.cpu_ms === null ? '—' : duration(s.cpu_ms))],
      ['AND gates', (s) => integer(s.and_gates)],
      ['bytes sent', (s) => `${bytes(s.bytes_sent)} (${integer(s.bytes_sent)})`],
      ['bytes received', (s) => `${bytes(s.bytes_received)} (${integer(s.bytes_received)})`],
      ['frames sent / received', (s) => `${integer(s.frames_sent)} / ${integer(s.frames_received)}`],
    ];
    replace(
      this.stats,
      h(
        'table',
        {},
        h('caption', {}, `What each party measured (${security} mode${prepared ? ', online phase only: its preprocessing was done ahead' : ''})`),
        h('thead', {}, h('tr', {}, h('th', {}), h('th', { scope: 'col' }, 'You (evaluator)'), h('th', { scope: 'col' }, 'Server (garbler)'))),
        h('tbody', {}, ...rows.map(([name, cell]) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, cell(stats.evaluator)), h('td', {}, cell(stats.garbler))))),
      ),
    );
  }
}

/** A message for the page: what went wrong, in the user's terms. */
function describe(e: unknown): string {
  if (e instanceof UnreachableError) return e.message;
  if (e instanceof CheatingDetected) {
    return `The server was caught cheating. The check that failed: ${e.reason} (${e.message}). The computation was stopped, and stopping it told the server nothing about your input: the checks do not depend on it.`;
  }
  if (e instanceof InputError) return `Your input does not fit the service: ${e.message}`;
  if (e instanceof ServerError) return `The server stopped the computation: ${e.message} (${e.code})`;
  if (e instanceof ConnectionError && e.code === 'worker') return `This browser could not start Garblet's worker: ${e.message}`;
  if (e instanceof ConnectionError) return `The connection to the server was lost: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
