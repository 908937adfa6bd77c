/**
 * Talking to the Garblet server: where it is, what it offers, and one computation at a time.
 *
 * Each run opens its own session and closes it when done. A session's set-up (the hellos, and
 * the base OTs while the server already streams) costs milliseconds, and a fresh session cannot
 * have been closed under the page by the server's idle timeout, nor by an earlier cancelled run.
 * The exception is an authenticated run that a page prepared ahead ({@link PreparedAhead}): it
 * runs on the session that holds its preprocessing, and on a fresh one if the server closed
 * that session before the run reached it.
 */
import { ConnectionError, Garblet, integrity, ServerError, type Inputs, type RunOptions, type RunResult, type ServiceInfo, type Session } from 'garblet';

/** Where `garblet serve` listens when started without a configuration. */
export const DEFAULT_SERVER = 'ws://127.0.0.1:8080';

/** The server's address: `?server=ws://host:port` in the page's URL, else the default. */
export function serverUrl(): string {
  return new URLSearchParams(location.search).get('server')?.trim() || DEFAULT_SERVER;
}

/** Connecting failed: the server is down, unreachable, or refused the session. */
export class UnreachableError extends Error {
  constructor(readonly url: string, cause: unknown) {
    super(`Cannot reach the server at ${url} — ${UnreachableError.why(cause)}`, { cause });
    this.name = 'UnreachableError';
  }

  private static why(cause: unknown): string {
    if (cause instanceof ServerError) return `it refused the session: ${cause.message}`;
    // A browser does not say whether nothing listens or the server refused this page's Origin.
    if (cause instanceof ConnectionError && cause.code === 'unreachable') return 'is garblet serve running there, and does it allow this page\'s origin?';
    return String((cause as Error)?.message ?? cause);
  }
}

/**
 * `?pin` in the page's URL: the SDK checks its WebAssembly and worker scripts against the
 * package's published hashes before it starts them (README.md says how a deployment pins).
 */
function pinned(): boolean {
  return new URLSearchParams(location.search).has('pin');
}

async function connect(signal?: AbortSignal) {
  const url = serverUrl();
  try {
    return await Garblet.connect(url, { signal, integrity: pinned() ? integrity : undefined });
  } catch (e) {
    if (e instanceof ConnectionError || e instanceof ServerError) throw new UnreachableError(url, e);
    throw e;
  }
}

let catalog: Promise<ServiceInfo[]> | undefined;

/** The services the server offers (asked once per page; asked again after a failure). */
export function services(): Promise<ServiceInfo[]> {
  if (!catalog) {
    const asking = (async () => {
      const session = await connect();
      session.close();
      return session.services();
    })();
    asking.catch(() => (catalog = undefined));
    catalog = asking;
  }
  return catalog;
}

/** One service's description; rejects with a readable message if the server lacks it. */
export async function service(name: string): Promise<ServiceInfo> {
  const all = await services();
  const info = all.find((s) => s.name === name);
  if (!info) throw new Error(`The server at ${serverUrl()} offers no service '${name}' (it offers: ${all.map((s) => s.name).join(', ')}).`);
  return info;
}

/**
 * One authenticated computation prepared ahead (`Session.prepare`: its set-up and
 * preprocessing, which do not depend on the inputs) on a session of its own, parked there for
 * the page's next authenticated run of the same service, which then computes only its online
 * phase. At most one is held. A preparation that fails — the server does not offer the mode,
 * refuses the session or holds no preparations — leaves nothing held and shows nothing: the
 * next run connects afresh and computes whole.
 */
export class PreparedAhead {
  private held?: { service: string; session: Promise<Session | undefined> };

  /** Prepares one computation of `service` ahead, unless one is held for it; one for another service is dropped. */
  prepare(service: string): void {
    if (this.held?.service === service) return;
    this.drop();
    const held: { service: string; session: Promise<Session | undefined> } = { service, session: Promise.resolve(undefined) };
    held.session = (async () => {
      let session: Session | undefined;
      try {
        session = await connect();
        await session.prepare(service);
        return session;
      } catch {
        session?.close();
        if (this.held === held) this.held = undefined;
        return undefined;
      }
    })();
    this.held = held;
  }

  /**
   * The session that holds `service`'s preparation, once it is done (undefined if none is held
   * for it or it failed); it is no longer held: the caller closes it.
   */
  take(service: string): Promise<Session | undefined> {
    const held = this.held;
    if (held?.service !== service) return Promise.resolve(undefined);
    this.held = undefined;
    return held.session;
  }

  /** Closes the session of what is held, if any: the server frees its preprocessing. */
  drop(): void {
    const held = this.held;
    this.held = undefined;
    void held?.session.then((session) => session?.close());
  }
}

/**
 * Runs one computation on a session of its own, or, for an authenticated run that `ahead`
 * prepared, on the session that holds its preparation.
 */
export async function run(name: string, inputs: Inputs, options: RunOptions & { onConnected?: () => void; ahead?: PreparedAhead }): Promise<RunResult> {
  const { ahead, ...rest } = options;
  const prepared = rest.security === 'authenticated' ? await ahead?.take(name) : undefined;
  if (prepared) {
    let progressed = false;
    try {
      options.onConnected?.();
      return await prepared.run(name, inputs, {
        ...rest,
        onProgress: (p) => {
          progressed = true;
          rest.onProgress?.(p);
        },
      });
    } catch (e) {
      // The server closed the waiting session (its idle timeout, or a full house) before this
      // run reached it: nothing of the run was computed, and it runs whole on a fresh session.
      const reclaimed = e instanceof ConnectionError || (e instanceof ServerError && (e.code === 'timeout' || e.code === 'busy'));
      if (progressed || !reclaimed || rest.signal?.aborted) throw e;
    } finally {
      prepared.close();
    }
  }
  const session = await connect(options.signal);
  try {
    options.onConnected?.();
    return await session.run(name, inputs, options);
  } finally {
    session.close();
  }
}
