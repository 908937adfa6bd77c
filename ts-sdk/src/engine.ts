/**
 * The engine: drives the WebAssembly evaluator session over a transport (a WebSocket). It runs
 * wherever the socket lives — in a Web Worker in the browser, in the main thread under Node —
 * so garbled data never crosses a thread boundary.
 */
import { AbortError, ConnectionError, fromCoreError, GarbletError, InputError, IntegrityError } from './errors.js';
import { assignInputs, clientFields, deriveParams, encodeValue, packBits } from './encode.js';
import type { EvaluatorSettings } from './options.js';
import type { InputField, Inputs, Progress, Security, ServiceInfo, Stats } from './types.js';

/** A message channel to the server: one binary message per frame. */
export interface Transport {
  send(frame: Uint8Array): void;
  close(): void;
  onFrame?: (frame: Uint8Array) => void;
  onClose?: (reason: string) => void;
}

/** Another thread with its own wasm instance: the OT helper worker. */
export interface OtHelper {
  /** Runs a share of the base OTs (`runBaseOtShare`). */
  baseOts(job: Uint8Array): Promise<Uint8Array>;
  /**
   * Works ahead on the OT extension: streams' sums, whole chunks of random choices
   * (`runAheadJob`); `null` if the helper skipped the job, its positions claimed already.
   */
  ahead(job: Uint8Array): Promise<Uint8Array | null>;
  /** Passes on a notice of the positions the session has claimed (`noteAheadClaimed`). */
  claimed(notice: Uint8Array): void;
}

/**
 * The evaluator session of the WebAssembly core (`WasmEvaluator` in the generated bindings, which
 * the entry points pass in and the compiler checks against this). Spelled out here so that the
 * SDK's published types never reach the generated declarations, which need the newest `lib`
 * (`Symbol.dispose`) and would not compile in an app without `skipLibCheck`.
 */
export interface WasmEvaluator {
  free(): void;
  abort(message: string): void;
  catalog(): string | undefined;
  completeBaseOtShare(products: Uint8Array): void;
  handle(frame: Uint8Array): void;
  hasDeferredWork(): boolean;
  pollEvent(): string | undefined;
  pollTransmit(): Uint8Array | undefined;
  progress(): string;
  shape(service: string, params: string): string;
  start(service: string, params: string, bits: Uint8Array, bitCount: number, security?: string): void;
  prepare(service: string, params: string): void;
  takeBaseOtShare(count: number): Uint8Array | undefined;
  supplyAhead(result: Uint8Array): void;
}

/** The generated bindings the engine needs. */
export interface WasmApi {
  WasmEvaluator: new (window: number, garbling?: string, maxWindow?: number, postAhead?: (bytes: Uint8Array, claimed: boolean) => void) => WasmEvaluator;
  /** Runs a base-OT share in this thread: when the OT helper does not answer. */
  runBaseOtShare?: (job: Uint8Array) => Uint8Array;
  /** The instance's linear memory, for progress reports. */
  memory?: WebAssembly.Memory;
}

export interface RunRequest {
  service: string;
  inputs: Inputs;
  params: Record<string, number>;
  progressInterval: number;
  /** The circuit the run must compute (`RunOptions.expectCircuit`), checked before it starts. */
  expectCircuit?: string;
  /** The mode the run computes in, which the session checked the service offers. */
  security: Security;
  /**
   * Only the preprocessing, parked on the connection for a later run of the same service and
   * parameters (the authenticated mode; `inputs` unused).
   */
  prepare?: boolean;
}

/** A finished run, before outputs are wrapped (it must cross a worker boundary as is). */
export interface RawResult {
  service: string;
  outputs: { name: string; hex: string; bits: number; signed: boolean; bytes: boolean }[];
  stats: Stats;
  /** The mode the computation ran in. */
  security: Security;
  /** Cut-and-choose only: circuits disagreed (the server cheated) and cheating recovery gave the output. */
  recovered: boolean;
  /** The run used preprocessing done ahead on this connection. */
  prepared: boolean;
}

interface Pending {
  resolve: (r: RawResult) => void;
  reject: (e: GarbletError) => void;
  onProgress: (p: Progress) => void;
  interval: number;
  started: number;
  lastReport: number;
}

const now = () => performance.now();

/** How long the OT helper may take with its half of the base OTs (milliseconds of work). */
const OT_HELPER_TIMEOUT_MS = 1000;

/**
 * Runs `f` as a new task, after what is already waiting: `setImmediate` under Node (where
 * `setTimeout(f, 0)` waits at least a millisecond), a MessageChannel message in browsers.
 */
const soon: (f: () => void) => void = (() => {
  const immediate = (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate;
  if (immediate) return immediate;
  const channel = new MessageChannel();
  const queue: (() => void)[] = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (f: () => void) => {
    queue.push(f);
    channel.port2.postMessage(null);
  };
})();

export class Engine {
  private readonly evaluator: WasmEvaluator;
  private readonly memory?: WebAssembly.Memory;
  private readonly runBaseOtShare?: (job: Uint8Array) => Uint8Array;
  private catalog?: ServiceInfo[];
  private failure?: GarbletError;
  private run_?: Pending;
  private readyWaiters: { resolve: (c: ServiceInfo[]) => void; reject: (e: GarbletError) => void }[] = [];
  /** `flush` has yielded once before the deferred work (see there). */
  private yielded = false;

  constructor(
    wasm: WasmApi,
    private readonly transport: Transport,
    { window, maxWindow, garbling }: EvaluatorSettings,
    /** Takes half of the base OTs and works ahead on the OT extension, where there is one (a browser's OT helper worker). */
    private readonly otHelper?: OtHelper,
  ) {
    this.evaluator = new wasm.WasmEvaluator(window, garbling, maxWindow, otHelper && ((bytes, claimed) => (claimed ? otHelper.claimed(bytes) : this.workAhead(otHelper, bytes))));
    this.memory = wasm.memory;
    this.runBaseOtShare = wasm.runBaseOtShare;
    transport.onFrame = (frame) => this.onFrame(frame);
    transport.onClose = (reason) => this.fail(new ConnectionError(`the connection closed${reason ? `: ${reason}` : ''}`, 'closed'));
    this.flush();
  }

  /** The catalog, once the hellos have crossed (the base OTs wait for the first run). */
  ready(): Promise<ServiceInfo[]> {
    if (this.catalog) return Promise.resolve(this.catalog);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /** Runs one computation; the caller makes sure runs do not overlap. */
  run(request: RunRequest, onProgress: (p: Progress) => void): Promise<RawResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.run_) return Promise.reject(new InputError('a computation is already running on this connection', { reason: 'busy' }));
    const service = this.catalog?.find((s) => s.name === request.service);
    if (!service) {
      const names = (this.catalog ?? []).map((s) => s.name).join(', ');
      return Promise.reject(new InputError(`the server has no service '${request.service}' (it has: ${names})`, { reason: 'unknown-service', service: request.service }));
    }
    try {
      if (request.prepare) {
        const paramsJson = JSON.stringify(deriveParams(service, new Map(), request.params));
        this.evaluator.prepare(service.name, paramsJson);
        return new Promise((resolve, reject) => {
          const t = now();
          this.run_ = { resolve, reject, onProgress, interval: request.progressInterval, started: t, lastReport: t };
          this.flush();
        });
      }
      const values = assignInputs(clientFields(service.inputs), request.inputs);
      const params = deriveParams(service, values, request.params);
      const paramsJson = JSON.stringify(params);
      const shape = JSON.parse(this.evaluator.shape(service.name, paramsJson)) as { inputs: InputField[]; circuit: string };
      if (request.expectCircuit !== undefined && request.expectCircuit !== shape.circuit) {
        // The server offers another function than the page pinned: nothing is sent, and the
        // connection to that server ends.
        const error = new IntegrityError(`service '${service.name}' computes circuit ${shape.circuit}, not the pinned ${request.expectCircuit}`, 'circuit', 'circuit', service.name, request.expectCircuit, shape.circuit);
        this.fail(error);
        return Promise.reject(error);
      }
      const bits = clientFields(shape.inputs).flatMap((f) => {
        const v = values.get(f.name);
        if (v === undefined) throw new InputError(`missing input '${f.name}'`, { reason: 'missing-input', input: f.name });
        return encodeValue(f, v);
      });
      this.evaluator.start(service.name, paramsJson, packBits(bits), bits.length, request.security);
    } catch (e) {
      return Promise.reject(fromCoreError(e));
    }
    return new Promise((resolve, reject) => {
      const t = now();
      this.run_ = { resolve, reject, onProgress, interval: request.progressInterval, started: t, lastReport: t };
      this.flush();
    });
  }

  /**
   * Cancels the current run; the connection closes (the protocol has no partial undo). The
   * session queues an Error frame (code `cancelled`) that tells the server why.
   */
  abort(reason: string): void {
    if (this.failure) return;
    this.evaluator.abort(reason);
    try {
      for (let f = this.evaluator.pollTransmit(); f; f = this.evaluator.pollTransmit()) this.transport.send(f);
    } catch {
      // Nothing more to send.
    }
    this.fail(new AbortError(reason));
  }

  close(): void {
    this.fail(new ConnectionError('the session was closed', 'closed'));
  }

  private onFrame(frame: Uint8Array): void {
    if (this.failure) return;
    try {
      this.evaluator.handle(frame);
    } catch (e) {
      this.flush();
      this.fail(fromCoreError(e));
      return;
    }
    this.flush();
    if (this.failure) return;
    this.drainEvents();
    this.reportProgress(false);
  }

  /**
   * Sends what the session has to say. The session does its deferred work in `pollTransmit`
   * once everything queued is out — after a run's request, the base OTs (first run only) and
   * the OT extension; in the authenticated mode, each segment's first round behind the message
   * the server waits for — and the engine yields to the event loop first, so that what was
   * sent is on its way even where a socket sends only when its thread is free (a page's own
   * WebSocket), and the server computes meanwhile. If that work fails, the session's Error
   * frame still goes to the server.
   */
  private flush(): void {
    try {
      for (;;) {
        if (this.evaluator.hasDeferredWork()) {
          if (!this.yielded) {
            this.yielded = true;
            this.shareBaseOts();
            soon(() => this.failure || this.flush());
            return;
          }
          this.yielded = false;
        }
        const f = this.evaluator.pollTransmit();
        if (!f) return;
        this.transport.send(f);
      }
    } catch (e) {
      try {
        for (let f = this.evaluator.pollTransmit(); f; f = this.evaluator.pollTransmit()) this.transport.send(f);
      } catch {
        // Nothing more to send.
      }
      this.fail(fromCoreError(e));
    }
  }

  /**
   * Gives half of the base OTs to the helper, if there is one and they are still to do. If
   * the helper fails, or has not answered in OT_HELPER_TIMEOUT_MS (a worker that did not load,
   * a machine too busy to run it), this thread computes that half itself: the run never waits
   * for ever on a helper.
   */
  private shareBaseOts(): void {
    const job = this.otHelper && this.runBaseOtShare && this.evaluator.takeBaseOtShare(64);
    if (!job || !this.otHelper) return;
    let settled = false;
    const complete = (products: () => Uint8Array) => {
      if (settled || this.failure) return;
      settled = true;
      clearTimeout(timer);
      try {
        this.evaluator.completeBaseOtShare(products());
      } catch (e) {
        this.flush();
        return this.fail(fromCoreError(e));
      }
      this.flush();
    };
    const inThisThread = () => complete(() => this.runBaseOtShare!(job));
    const timer = setTimeout(inThisThread, OT_HELPER_TIMEOUT_MS);
    this.otHelper.baseOts(job.slice()).then((products) => complete(() => products), inThisThread);
  }

  /**
   * Hands the OT helper a job of work ahead on the OT extension (streams' sums, or a whole chunk
   * of random choices): the session posts them as soon as they exist, even in the middle of a
   * call (so this only passes the job on), and takes each result back between its calls. It
   * never waits for them: what it needs before its result came, it computes itself; if the
   * helper fails, all of it.
   */
  private workAhead(helper: OtHelper, job: Uint8Array): void {
    helper.ahead(job).then(
      (result) => {
        if (this.failure || !result) return;
        try {
          this.evaluator.supplyAhead(result);
        } catch (e) {
          this.fail(fromCoreError(e));
        }
      },
      () => {},
    );
  }

  private drainEvents(): void {
    for (let text = this.evaluator.pollEvent(); text; text = this.evaluator.pollEvent()) {
      const event = JSON.parse(text) as { type: 'ready' } | ({ type: 'finished' } & RawResult);
      if (event.type === 'ready') {
        const services = (JSON.parse(this.evaluator.catalog() ?? '{"services":[]}') as { services: ServiceInfo[] }).services;
        // A server that does not say what a service offers (an older one) offers the standard mode.
        this.catalog = services.map((s) => ({ ...s, security: s.security ?? 'standard' }));
        for (const w of this.readyWaiters.splice(0)) w.resolve(this.catalog);
      } else if (this.run_) {
        this.reportProgress(true, event.stats.evaluator.and_gates);
        const run = this.run_;
        this.run_ = undefined;
        run.resolve({ service: event.service, outputs: event.outputs, stats: event.stats, security: event.security ?? 'standard', recovered: event.recovered ?? false, prepared: event.prepared ?? false });
      }
    }
  }

  /**
   * Reports progress to the run's listener, at most every `interval` ms unless `final`. The
   * final report counts the run's AND gates from its result (`andGates`): the core counts only
   * the standard mode's gates as they stream, so a cut-and-choose run's live count stays 0.
   */
  private reportProgress(final: boolean, andGates?: number): void {
    const run = this.run_;
    if (!run) return;
    const t = now();
    if (!final && t - run.lastReport < run.interval) return;
    run.lastReport = t;
    const p = JSON.parse(this.evaluator.progress()) as { andGates: number; andTotal: number | null; bytesReceived: number };
    const elapsedMs = t - run.started;
    run.onProgress({
      andGates: Math.max(p.andGates, andGates ?? 0),
      andTotal: p.andTotal,
      bytes: p.bytesReceived,
      elapsedMs,
      andPerSecond: elapsedMs > 0 ? (p.andGates * 1000) / elapsedMs : 0,
      wasmMemoryBytes: this.memory?.buffer.byteLength ?? null,
    });
  }

  /** Ends everything with `error`: pending connect and run reject, the socket closes. */
  private fail(error: GarbletError): void {
    if (this.failure) return;
    this.failure = error;
    for (const w of this.readyWaiters.splice(0)) w.reject(error);
    const run = this.run_;
    this.run_ = undefined;
    run?.reject(error);
    this.evaluator.free();
    this.transport.close();
  }
}
