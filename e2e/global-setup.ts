/**
 * Builds what the tests need (unless GARBLET_E2E_PREBUILT says `npm test` just did), then starts
 * `garblet serve` with its default services on a free port and short timeouts, and the built web
 * client under `vite preview`. Tests find them through GARBLET_E2E_SERVER and GARBLET_E2E_WEB.
 * The server's AES key is FIPS-197's (unless GARBLET_AES_KEY is already set): without one it
 * would draw a random key the references could not know. Set here, it reaches every server the
 * tests start and the test workers, which compute the references from it.
 */
import { build, configWith, freePort, startServer, startWebClient } from '../scripts/stack.mjs';
import { FIPS197 } from '../web-client/src/demo-values';
import { E2E_LIMITS } from './support/servers';

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!process.env.GARBLET_E2E_PREBUILT) build();
  process.env.GARBLET_AES_KEY ??= FIPS197.key;
  const config = configWith({ listen: '127.0.0.1:0', limits: E2E_LIMITS });
  const server = await startServer({ config });
  const web = await startWebClient({ port: await freePort(), strictPort: true });
  process.env.GARBLET_E2E_SERVER = server.url;
  process.env.GARBLET_E2E_WEB = web.url;
  process.env.GARBLET_E2E_CONFIG = config;
  console.log(`[e2e] garblet serve at ${server.url}, web client at ${web.url}`);
  return async () => {
    await Promise.all([server.stop(), web.stop()]);
  };
}
