/** The public session object: `fetch`-like promises over an engine, wherever it runs. */
import { AbortError, GarbletError, InputError } from './errors.js';
import { Output, outputsFrom } from './encode.js';
import type { RawResult, RunRequest } from './engine.js';
import { atLeast, checkedCircuitPin, checkedSecurity } from './options.js';
import type { Inputs, PrepareOptions, Progress, RunOptions, Security, ServiceInfo, Stats } from './types.js';

/** An engine in this thread or in a worker. */
export interface EngineHandle {
  run(request: RunRequest, onProgress: (p: Progress) => void): Promise<RawResult>;
  abort(reason: string): void;
  close(): void;
}

export interface RunResult {
  service: string;
  /** The outputs you learn, by name. */
  outputs: Record<string, Output>;
  /** What each party measured. */
  stats: Stats;
  /** The mode the computation ran in: what it protected you from (see {@link Security}). */
  security: Security;
  /**
   * `cut-and-choose` only: the server cheated — its evaluation circuits disagreed — and the
   * output is still correct: it came through cheating recovery. The server was not told.
   * Always false for `standard`.
   */
  recovered: boolean;
  /**
   * The run used preprocessing done ahead on this connection ({@link Session.prepare}): only
   * its online phase ran after the request. Always false outside the authenticated mode.
   */
  prepared: boolean;
}

/** A connection to a Garblet server. Runs on one session are queued, one at a time. */
export class Session {
  private queue: Promise<unknown> = Promise.resolve();
  private closedFlag = false;

  constructor(
    private readonly engine: EngineHandle,
    private readonly catalog: ServiceInfo[],
    /** The server's address. */
    readonly url: string,
    /** The least protection every run on this connection gets (`ConnectOptions.require`). */
    readonly require: Security = 'standard',
  ) {}

  /**
   * The services the server offers, with each input's shape (for default parameters). The
   * server sent its catalog in its hello, so this answers at once (no round trip).
   */
  services(): ServiceInfo[] {
    return [...this.catalog];
  }

  /** One service's description, or undefined if the server has no service of that name. At once, like `services()`. */
  service(name: string): ServiceInfo | undefined {
    return this.catalog.find((s) => s.name === name);
  }

  /**
   * Computes `service` on your `inputs` and the server's, and resolves to the outputs you learn.
   * Aborting through `options.signal` rejects with an `AbortError` and closes the session.
   * The run computes in `options.security`, or the connection's `require`: a mode below
   * `require`, or above what the service offers, rejects with an `InputError` before anything
   * of the run is sent.
   */
  run(service: string, inputs: Inputs, options: RunOptions = {}): Promise<RunResult> {
    const task = this.queue.then(() => this.runNow(service, inputs, options));
    this.queue = task.catch(() => undefined);
    return task;
  }

  private async runNow(service: string, inputs: Inputs, options: RunOptions): Promise<RunResult> {
    const { signal } = options;
    const expectCircuit = checkedCircuitPin(options.expectCircuit);
    const security = this.securityFor(service, checkedSecurity('security', options.security));
    if (signal?.aborted) throw new AbortError(reasonOf(signal));
    const onAbort = () => this.engine.abort(reasonOf(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const request: RunRequest = { service, inputs, params: options.params ?? {}, progressInterval: options.progressInterval ?? 100, expectCircuit, security };
      const raw = await this.engine.run(request, options.onProgress ?? (() => {}));
      return { service: raw.service, outputs: outputsFrom(raw.outputs), stats: raw.stats, security: raw.security, recovered: raw.recovered, prepared: raw.prepared };
    } catch (e) {
      // Anything but bad inputs ends the connection (the engine closed it).
      if (!(e instanceof InputError)) this.closedFlag = true;
      throw e instanceof GarbletError ? e : new GarbletError(String(e));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Runs the input-independent part of `options.count` (default 1) authenticated computations
   * of `service` with `options.params` ahead — each its own set-up and preprocessing — and parks
   * them on this connection; resolves once all are parked. Queued with runs, one at a time. A
   * later `run` of the same service and parameters in the authenticated mode uses the oldest
   * parked one (`prepared: true` in its result), so only its online phase runs after the
   * request. Each preparation serves one run. A service that does not offer the authenticated
   * mode rejects with an `InputError` (`security-not-offered`) before anything is sent. The
   * connection holds at most 400,000 AND gates prepared ahead (the core's cap): a preparation
   * past it rejects with an `InputError` (`prepared-limit`) before anything of it is sent, and
   * what is parked stays usable. The preparations run in order and stop at the first that fails.
   */
  prepare(service: string, options: PrepareOptions = {}): Promise<void> {
    const count = options.count ?? 1;
    if (!Number.isInteger(count) || count < 1) {
      const reason = Number.isInteger(count) ? 'out-of-range' : 'not-an-integer';
      return Promise.reject(new InputError(`prepare's count must be a positive integer, not ${String(count)}`, { reason, value: typeof count === 'number' ? count : undefined, min: 1 }));
    }
    // One queued task for all of them: a large count holds one promise, not one per preparation.
    const task = this.queue.then(async () => {
      for (let i = 0; i < count; i++) await this.prepareNow(service, options);
    });
    this.queue = task.catch(() => undefined);
    return task;
  }

  private async prepareNow(service: string, options: PrepareOptions): Promise<void> {
    const security = this.securityFor(service, 'authenticated');
    const { signal } = options;
    if (signal?.aborted) throw new AbortError(reasonOf(signal));
    const onAbort = () => this.engine.abort(reasonOf(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const request: RunRequest = { service, inputs: {}, params: options.params ?? {}, progressInterval: 1e9, security, prepare: true };
      await this.engine.run(request, () => {});
    } catch (e) {
      if (!(e instanceof InputError)) this.closedFlag = true;
      throw e instanceof GarbletError ? e : new GarbletError(String(e));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The mode a run of `service` computes in: `requested`, or the connection's `require`. Throws
   * an InputError, before anything is sent, for a mode below `require` or one the service does
   * not offer (an unknown service is the engine's to refuse).
   */
  private securityFor(service: string, requested: Security | undefined): Security {
    if (requested !== undefined && !atLeast(requested, this.require)) {
      throw new InputError(`this run asks for ${requested} security, below the ${this.require} this connection requires`, {
        reason: 'security-below-required',
        requested,
        required: this.require,
      });
    }
    const security = requested ?? this.require;
    const info = this.service(service);
    if (info && !atLeast(info.security, security)) {
      throw new InputError(`service '${service}' offers ${info.security} security; this run requires ${security}`, {
        reason: 'security-not-offered',
        service,
        offered: info.security,
        required: security,
      });
    }
    return security;
  }

  /** Closes the connection; pending runs reject with a `ConnectionError`. */
  close(): void {
    this.closedFlag = true;
    this.engine.close();
  }

  get closed(): boolean {
    return this.closedFlag;
  }
}

export function reasonOf(signal?: AbortSignal): string {
  const r = signal?.reason as unknown;
  if (r instanceof Error) return r.message;
  return typeof r === 'string' ? r : 'the operation was aborted';
}
