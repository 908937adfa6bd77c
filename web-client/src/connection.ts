/**
 * Talking to the Garblet server: where it is, what it offers, and one computation at a time.
 *
 * Each run opens its own session and closes it when done. A session's set-up (the hellos, and
 * the base OTs while the server already streams) costs milliseconds, and a fresh session cannot
 * have been closed under the page by the server's idle timeout, nor by an earlier cancelled run.
 */
import { ConnectionError, Garblet, integrity, ServerError, type Inputs, type RunOptions, type RunResult, type ServiceInfo } from 'garblet';

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

/** Runs one computation on a session of its own. */
export async function run(name: string, inputs: Inputs, options: RunOptions & { onConnected?: () => void }): Promise<RunResult> {
  const session = await connect(options.signal);
  try {
    options.onConnected?.();
    return await session.run(name, inputs, options);
  } finally {
    session.close();
  }
}
