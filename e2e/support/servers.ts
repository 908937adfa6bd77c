/** Where the tests find the server and the web client, and private servers for failure tests. */
import type { Page } from '@playwright/test';
import { configWith, startServer } from '../../scripts/stack.mjs';

/** Short timeouts: a test that leaves a session hanging must not hold the server for a minute. */
export const E2E_LIMITS = { handshake_timeout_secs: 5, idle_timeout_secs: 15, shutdown_grace_secs: 1 };

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with playwright test (the global setup sets it)`);
  return value;
}

/** The shared server's ws:// address. */
export const serverUrl = () => env('GARBLET_E2E_SERVER');
/** The shared server's configuration (TOML text). */
export const serverConfig = () => env('GARBLET_E2E_CONFIG');

/** Opens a demo page (`#/path`) talking to `server` (default: the shared one). */
export async function openDemo(page: Page, path: string, server = serverUrl()): Promise<void> {
  const url = new URL(env('GARBLET_E2E_WEB'));
  url.searchParams.set('server', server);
  url.hash = `/${path}`;
  await page.goto(url.toString());
}

/**
 * A server of the test's own, with the default services, to stop or kill mid-test;
 * `allowedOrigins` replaces the default list (localhost pages on any port), `limits` adds to the
 * tests' own, and the services in `standardOnly` offer the standard mode only (their `security`
 * line taken out).
 */
export function startPrivateServer({ allowedOrigins, limits = {}, standardOnly = [] }: { allowedOrigins?: string[]; limits?: Record<string, number>; standardOnly?: string[] } = {}) {
  let config = configWith({ listen: '127.0.0.1:0', allowedOrigins, limits: { ...E2E_LIMITS, ...limits } });
  for (const name of standardOnly) {
    // From the service's name to its security line, within the one [[service]] table.
    const line = new RegExp(`(\\nname = "${name}"\\n(?:(?!\\[\\[service\\]\\])[\\s\\S])*?)\\nsecurity = "[a-z-]+"`);
    if (!line.test(config)) throw new Error(`the default configuration's ${name} has no security line to take out`);
    config = config.replace(line, '$1');
  }
  return startServer({ config });
}
