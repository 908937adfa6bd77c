/**
 * The SDK as a web developer meets it: `npm pack` in ts-sdk/, a Vite + TypeScript app made from
 * create-vite's template (template/, its lockfile checked in) in a temporary folder outside the
 * repository, `npm ci`, `npm install ./garblet-x.y.z.tgz`, and the app computing in Chromium
 * against a real `garblet serve`:
 * - its `tsc` (strict, skipLibCheck off) accepts the package's types;
 * - under `vite dev`, with the package pre-bundled as Vite does by default, the workers and the
 *   wasm still load from the package;
 * - from `vite build`, served by `vite preview`;
 * - and under Vite 7 with the one line the README asks of older Vite (vite7/ over template/).
 * The app's results are checked against plaintext references: the edit distance from the
 * server's configured text, AES from node:crypto under the key the test gives the server.
 *
 * Run alone: `npm run test:app` (needs the release server: `cargo build --release -p
 * garblet-server`; packing builds the SDK). GARBLET_KEEP_APP=1 keeps the temporary folder.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { parse } from 'smol-toml';
import { CHROMIUM } from '../scripts/setup.mjs';
import { configWith, freePort, Running, startServer } from '../scripts/stack.mjs';
import { levenshtein } from '../test-support/references.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(dirname(here), 'ts-sdk');
const SETUP_TIMEOUT_MS = 10 * 60_000;
const say = (msg) => console.log(`[fresh-app] ${msg}`);

/** Runs a command to completion; its output is shown only if it fails. */
function sh(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

let work;
let tarball;
let server;
let browser;
const key = randomBytes(16).toString('hex');
const config = configWith({ listen: '127.0.0.1:0' });

/** The app's inputs (in its URL) and what it must report. */
const text = 'the quick brown cat';
const block = randomBytes(16);
const blocks = randomBytes(32);
const aes128 = (bytes) => createCipheriv('aes-128-ecb', Buffer.from(key, 'hex'), null).setAutoPadding(false).update(bytes);
const services = parse(config).service;
const serverText = services.find((s) => s.name === 'levenshtein_text').garbler_inputs.a.text;
const EXPECTED = {
  services: services.length,
  aesInputs: ['key:128', 'plaintext:128'],
  distance: levenshtein(serverText, text),
  ciphertext: `0x${aes128(block).toString('hex')}`,
  ciphertexts: aes128(blocks).toString('hex'),
  andGates: 2 * 5120,
};

before(
  async () => {
    work = mkdtempSync(join(tmpdir(), 'garblet-fresh-app-'));
    say(`npm pack in ts-sdk/ (its prepack builds what is not up to date), into ${work}`);
    sh('npm', ['pack', '--pack-destination', work], sdk);
    const packed = readdirSync(work).filter((f) => /^garblet-\d+\.\d+\.\d+.*\.tgz$/.test(f));
    assert.equal(packed.length, 1, `one tarball: ${packed}`);
    tarball = join(work, packed[0]);
    server = await startServer({ config, env: { GARBLET_AES_KEY: key } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      env: { ...process.env, XDG_CONFIG_HOME: join(work, 'chromium-config'), XDG_CACHE_HOME: join(work, 'chromium-cache') },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  },
  { timeout: SETUP_TIMEOUT_MS },
);

after(async () => {
  await browser?.close();
  await server?.stop();
  if (work && !process.env.GARBLET_KEEP_APP) rmSync(work, { recursive: true, force: true });
  else if (work) say(`kept ${work}`);
});

/** A new app from template/ (then `overlay`'s files over it): `npm ci`, then the tarball installed. */
function createApp(name, overlay) {
  const app = join(work, name);
  cpSync(join(here, 'template'), app, { recursive: true });
  if (overlay) cpSync(join(here, overlay), app, { recursive: true });
  say(`${name}: npm ci`);
  sh('npm', ['ci', '--no-audit', '--no-fund'], app);
  say(`${name}: npm install ${tarball}`);
  sh('npm', ['install', '--no-audit', '--no-fund', tarball], app);
  return app;
}

/** `vite` (dev) or `vite preview` in `app` on a free port, until `body` is done. */
async function withVite(app, command, body) {
  const port = await freePort();
  const args = [join(app, 'node_modules', 'vite', 'bin', 'vite.js'), ...(command === 'dev' ? [] : [command]), '--host', '127.0.0.1', '--port', String(port), '--strictPort'];
  const child = spawn(process.execPath, args, { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`vite ${command} did not start within 60 s:\n${log}`)), 60_000);
    const seen = (chunk) => {
      log += chunk;
      const m = /Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(log.replace(/\x1b\[[0-9;]*m/g, ''));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', (chunk) => (log += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`vite ${command} exited (${code}):\n${log}`));
    });
  });
  const vite = new Running(child, url);
  try {
    return await body(url);
  } finally {
    await vite.stop();
  }
}

/** Opens the app, waits for its result and checks it; returns what the page loaded. */
async function computeIn(url) {
  const page = await browser.newPage();
  const problems = [];
  const workers = [];
  const requests = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('worker', (w) => workers.push(new URL(w.url()).pathname));
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  try {
    const query = new URLSearchParams({ server: server.url, text, block: block.toString('hex'), blocks: blocks.toString('hex') });
    await page.goto(`${url}?${query}`);
    await page.waitForFunction(() => document.querySelector('#result')?.dataset.state !== 'running', null, { timeout: 60_000 });
    const state = await page.$eval('#result', (el) => el.dataset.state);
    const result = await page.textContent('#result');
    assert.equal(state, 'done', `the app failed: ${result}`);
    assert.deepEqual(JSON.parse(result), EXPECTED);
    assert.deepEqual(problems, [], 'no errors in the console');
  } finally {
    await page.close();
  }
  return { workers, requests };
}

describe('a fresh Vite 8 + TypeScript app (create-vite template, no configuration)', () => {
  let app;
  before(() => (app = createApp('vite8')), { timeout: SETUP_TIMEOUT_MS });

  test('the installed package holds its README, CHANGELOG, licence, dist/ and wasm/', () => {
    const installed = join(app, 'node_modules', 'garblet');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.name, 'garblet');
    assert.equal(manifest.license, 'MIT OR Apache-2.0');
    assert.equal(manifest.type, 'module');
    for (const file of ['README.md', 'CHANGELOG.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'dist/browser.js', 'dist/browser.d.ts', 'dist/worker.js', 'dist/socket-worker.js', 'dist/ot-worker.js', 'wasm/garblet_core_bg.wasm']) {
      assert.ok(existsSync(join(installed, file)), file);
    }
    assert.match(readFileSync(join(installed, 'README.md'), 'utf8'), new RegExp(`## Versions`));
  });

  test("tsc accepts the app and the package's types under strict, without skipLibCheck", () => {
    // create-vite's tsconfig.json has /* comments */.
    const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, ''));
    assert.equal(tsconfig.compilerOptions.strict, true);
    assert.equal(tsconfig.compilerOptions.skipLibCheck, false);
    sh(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], app);
  });

  test('vite dev: the package is pre-bundled, its workers and wasm still load, the results are right', async () => {
    const { workers, requests } = await withVite(app, 'dev', computeIn);
    assert.ok(requests.some((p) => p.startsWith('/node_modules/.vite/deps/garblet.js')), `garblet was pre-bundled: ${requests.join(' ')}`);
    assert.ok(requests.includes('/node_modules/garblet/wasm/garblet_core_bg.wasm'), `the wasm came from the package: ${requests.join(' ')}`);
    assert.deepEqual(workers.sort(), ['ot-worker', 'socket-worker', 'worker'].map((w) => `/node_modules/garblet/dist/${w}.js`));
  });

  test('vite build (after tsc) and vite preview: the results are right', async () => {
    sh('npm', ['run', 'build'], app);
    const { workers, requests } = await withVite(app, 'preview', computeIn);
    assert.ok(requests.some((p) => /^\/assets\/garblet_core_bg-[\w-]+\.wasm$/.test(p)), `the wasm is a built asset: ${requests.join(' ')}`);
    assert.equal(workers.length, 3, `three workers: ${workers.join(' ')}`);
    assert.ok(workers.every((w) => w.startsWith('/assets/')), workers.join(' '));
  });
});

describe("a Vite 7 app with the README's one line for older Vite (optimizeDeps.exclude)", () => {
  let app;
  before(() => (app = createApp('vite7', 'vite7')), { timeout: SETUP_TIMEOUT_MS });

  test('vite dev: the results are right', async () => {
    assert.match(readFileSync(join(app, 'node_modules', 'vite', 'package.json'), 'utf8'), /"version": "7\./);
    const { workers } = await withVite(app, 'dev', computeIn);
    assert.equal(workers.length, 3, workers.join(' '));
  });
});
