import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIPS197 } from '../../web-client/src/demo-values';
import { resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { serverUrl } from '../support/servers';

// The SDK's pinned files (ConnectOptions.integrity) in Chromium. A static server of this test
// serves the SDK as it ships (ts-sdk/dist and ts-sdk/wasm) and a page that imports it, and can
// change one byte of a file on the way: the page that pins the published values computes with
// workers started from checked bytes; a changed wasm or worker script is refused with an
// IntegrityError before any worker starts or any connection opens. The same server counts the
// WebSocket connections it is asked for, and is where the refused sessions point.

const SDK = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ts-sdk');
const PAGE = `<!doctype html><meta charset="utf-8"><title>pinned</title>
<script type="module">
  import { Garblet, integrity, hex } from '/sdk/dist/browser.js';
  window.pinned = async (url, plaintext) => {
    try {
      const session = await Garblet.connect(url, { integrity });
      const { outputs } = await session.run('aes128', { plaintext: hex(plaintext) });
      session.close();
      return { ciphertext: outputs.ciphertext.hex };
    } catch (e) {
      return { error: e.name, reason: e.reason, asset: e.asset };
    }
  };
  window.required = async (url, require, service, plaintext) => {
    let session;
    try {
      session = await Garblet.connect(url, { integrity, require });
      const result = await session.run(service, { plaintext: hex(plaintext) });
      return { ciphertext: result.outputs.ciphertext.hex, security: result.security };
    } catch (e) {
      return { error: e.name, reason: e.reason, offered: e.offered, required: e.required };
    } finally {
      session?.close();
    }
  };
  window.ready = true;
</script>`;

interface StaticServer {
  url: string;
  /** Files (paths under ts-sdk/) served with one byte changed. */
  tampered: Set<string>;
  /** WebSocket upgrades asked of this server. */
  upgrades: number;
  close(): Promise<void>;
}

async function staticServer(): Promise<StaticServer> {
  const state = { tampered: new Set<string>(), upgrades: 0 };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const rel = normalize(path.replace(/^\/sdk\//, ''));
    if (!path.startsWith('/sdk/') || rel.startsWith('..') || !/^(dist|wasm)\//.test(rel)) return res.writeHead(404).end();
    let body: Buffer;
    try {
      body = readFileSync(join(SDK, rel));
    } catch {
      return res.writeHead(404).end();
    }
    if (state.tampered.has(rel)) {
      body = Buffer.from(body);
      body[body.length >> 1] ^= 1;
    }
    const type = { '.js': 'text/javascript', '.wasm': 'application/wasm' }[extname(rel)] ?? 'application/octet-stream';
    res.writeHead(200, { 'content-type': type }).end(body);
  });
  server.on('upgrade', (_req, socket) => {
    state.upgrades++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    tampered: state.tampered,
    get upgrades() {
      return state.upgrades;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let web: StaticServer;
test.beforeAll(async () => {
  web = await staticServer();
});
test.afterAll(async () => {
  await web.close();
});

async function openPinned(page: Page): Promise<void> {
  await page.goto(web.url);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
}

const pinned = (page: Page, url: string) =>
  page.evaluate(([u, p]) => (window as unknown as { pinned: (u: string, p: string) => Promise<Record<string, string>> }).pinned(u, p), [url, FIPS197.plaintext]);

test('a page that pins the published values computes, with workers started from the checked bytes', async ({ page }) => {
  web.tampered.clear();
  await openPinned(page);
  expect(await pinned(page, serverUrl())).toEqual({ ciphertext: `0x${FIPS197.ciphertext}` });
  const workers = page.workers().map((w) => w.url());
  expect(workers).toHaveLength(3);
  for (const url of workers) expect(url).toMatch(/^blob:/);
});

for (const [asset, file] of [
  ['wasm', 'wasm/garblet_core_bg.wasm'],
  ['worker', 'dist/worker.bundle.js'],
  ['socketWorker', 'dist/socket-worker.bundle.js'],
]) {
  test(`a changed ${file} is refused before any worker starts or any connection opens`, async ({ page }) => {
    web.tampered.clear();
    web.tampered.add(file);
    const before = web.upgrades;
    await openPinned(page);
    expect(await pinned(page, web.url.replace(/^http/, 'ws'))).toEqual({ error: 'IntegrityError', reason: 'mismatch', asset });
    expect(page.workers()).toHaveLength(0);
    expect(web.upgrades).toBe(before);
  });
}

const required = (page: Page, url: string, security: string, service: string) =>
  page.evaluate(
    ([u, s, name, p]) => (window as unknown as { required: (u: string, s: string, name: string, p: string) => Promise<Record<string, string>> }).required(u, s, name, p),
    [url, security, service, FIPS197.plaintext],
  );

test("a connection that requires authenticated garbling computes in it, and a service that does not offer it is refused with a typed error", async ({ page }) => {
  web.tampered.clear();
  await openPinned(page);
  expect(await required(page, serverUrl(), 'authenticated', 'aes128')).toEqual({ ciphertext: `0x${FIPS197.ciphertext}`, security: 'authenticated' });
  // aes192 offers the standard mode only.
  expect(await required(page, serverUrl(), 'authenticated', 'aes192')).toEqual({ error: 'InputError', reason: 'security-not-offered', offered: 'standard', required: 'authenticated' });
});

test('the demo with ?pin computes with the published values, its workers from Blob URLs', async ({ page }) => {
  const url = new URL(process.env.GARBLET_E2E_WEB ?? '');
  url.searchParams.set('server', serverUrl());
  url.searchParams.set('pin', '');
  url.hash = '/aes';
  await page.goto(url.toString());
  await page.getByTestId('circuit-aes128').check();
  await waitForRoles(page);
  await page.getByTestId('plaintext').fill(FIPS197.plaintext);
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(FIPS197.ciphertext);
  const workers = page.workers().map((w) => w.url());
  expect(workers.length).toBeGreaterThan(0);
  for (const w of workers) expect(w).toMatch(/^blob:/);
});
