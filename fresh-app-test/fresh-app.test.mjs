/**
 * The SDK as a web developer meets it: `npm pack` in ts-sdk/, new apps in a temporary folder
 * outside the repository — each from its framework's own starter (its lockfile checked in), with
 * app/compute.ts copied in as the app's code — `npm ci`, `npm install ./garblet-x.y.z.tgz`, and
 * the app computing in Chromium against a real `garblet serve`:
 * - Vite 8 + TypeScript (create-vite's template, no configuration): its `tsc` (strict,
 *   skipLibCheck off) accepts the package's types; `vite dev`, with the package pre-bundled as
 *   Vite does by default; `vite build` served by `vite preview` under the SDK README's
 *   Content-Security-Policy, with and without `integrity`;
 * - Vite 7 with the one line the README asks of older Vite (vite7/ over template/);
 * - Next.js (create-next-app, app router): the SDK in a client component loaded without server
 *   rendering, under `next dev` and `next build` + `next start`, with the README's
 *   next.config.mjs and its CSP (and `integrity` in production);
 * - SvelteKit (`sv create`, `ssr = false` on the page): `vite dev` and `vite build` +
 *   `vite preview`, with the README's vite.config.ts and its CSP (and `integrity` in
 *   production).
 * The Vite 8 app also writes a function of its own (fortune.ts, importing `garblet/circuit`),
 * compiles it with the package's `npx garblet-compile`, has a second `garblet serve` serve the
 * two files it wrote, and computes it from a page of its own under `vite dev`, pinned to the
 * circuit id `garblet circuit stats` prints, with the names and types the function gave.
 * The README shows each framework's files as they are here (a test compares them). The apps'
 * results are checked against plaintext references: the edit distance from the server's
 * configured text, AES from node:crypto under the key the test gives the server; a CSP
 * violation or any other console error fails the run.
 *
 * Run alone: `npm run test:app` (needs the release server: `cargo build --release -p
 * garblet-server`; packing builds the SDK). GARBLET_KEEP_APP=1 keeps the temporary folder.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { parse } from 'smol-toml';
import { CHROMIUM } from '../scripts/setup.mjs';
import { configWith, freePort, garbletBinary, startServer } from '../scripts/stack.mjs';
import { levenshtein } from '../test-support/references.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(dirname(here), 'ts-sdk');
const SETUP_TIMEOUT_MS = 10 * 60_000;
const START_TIMEOUT_MS = 120_000;
const say = (msg) => console.log(`[fresh-app] ${msg}`);

/** Runs a command to completion; its output is shown only if it fails. */
function sh(cmd, args, cwd, env = {}) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/**
 * The blocks of ts-sdk/README.md that stand for a file of these apps: a fenced block right after
 * `<!-- fresh-app-test: PATH -->`, by PATH (relative to fresh-app-test/, or `csp` for the
 * Content-Security-Policy of a static app).
 */
function readmeBlocks() {
  const readme = readFileSync(join(sdk, 'README.md'), 'utf8');
  const blocks = new Map();
  for (const m of readme.matchAll(/<!-- fresh-app-test: (\S+) -->\s*\n```[a-z]*\n([\s\S]*?)```/g)) blocks.set(m[1], m[2]);
  return blocks;
}

let work;
let tarball;
let server;
let browser;
const key = randomBytes(16).toString('hex');
const config = configWith({ listen: '127.0.0.1:0' });
const README = readmeBlocks();

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

/**
 * A new app from `starter` (then `overlay`'s files over it), with app/compute.ts copied to
 * `computeAt`: `npm ci`, then the tarball installed.
 */
function createApp(name, { starter, overlay, computeAt }) {
  const app = join(work, name);
  cpSync(join(here, starter), app, { recursive: true });
  if (overlay) cpSync(join(here, overlay), app, { recursive: true });
  cpSync(join(here, 'app', 'compute.ts'), join(app, computeAt));
  say(`${name}: npm ci`);
  sh('npm', ['ci', '--no-audit', '--no-fund'], app);
  say(`${name}: npm install ${tarball}`);
  sh('npm', ['install', '--no-audit', '--no-fund', tarball], app);
  return app;
}

/**
 * Runs `node BIN ARGS…` in `app` (a framework's dev or production server) on `port` until
 * `body(url)` is done; ready once it answers HTTP at all.
 */
async function withServer(app, bin, args, port, body, env = {}) {
  const url = `http://127.0.0.1:${port}/`;
  // A process group of its own: Next.js runs its server in a child process, which goes with it.
  const child = spawn(process.execPath, [join(app, 'node_modules', ...bin.split('/')), ...args], {
    cwd: app,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', NEXT_TELEMETRY_DISABLED: '1', GARBLET_SERVER: server.url, ...env },
  });
  let log = '';
  child.stdout.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
  child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // already gone
    }
  };
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}) before it answered`);
      if (Date.now() > deadline) throw new Error(`did not answer within ${START_TIMEOUT_MS / 1000} s`);
      try {
        await fetch(url, { signal: AbortSignal.timeout(5000) });
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    return await body(url);
  } catch (e) {
    e.message += `\n--- ${bin} ${args.join(' ')} said ---\n${log}`;
    throw e;
  } finally {
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

const vite = (app, command, body, env) => freePort().then((port) => withServer(app, 'vite/bin/vite.js', [...(command === 'dev' ? [] : [command]), '--host', '127.0.0.1', '--port', String(port), '--strictPort'], port, body, env));
const next = (app, command, body) => freePort().then((port) => withServer(app, 'next/dist/bin/next', [command, '--hostname', '127.0.0.1', '--port', String(port)], port, body));

/**
 * Opens the app, waits for its result and checks it; returns the workers and requests the page
 * made and the Content-Security-Policy it was served with. `integrity` turns on the SDK's pins.
 */
async function computeIn(url, { integrity = false } = {}) {
  const page = await browser.newPage();
  const problems = [];
  const workers = [];
  const requests = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('worker', (w) => workers.push(w.url().startsWith('blob:') ? 'blob:' : new URL(w.url()).pathname));
  page.on('request', (r) => requests.push(r.url().startsWith('data:') ? 'data:' : new URL(r.url()).pathname));
  try {
    const query = new URLSearchParams({ server: server.url, text, block: block.toString('hex'), blocks: blocks.toString('hex') });
    if (integrity) query.set('integrity', '');
    const response = await page.goto(`${url}?${query}`, { timeout: START_TIMEOUT_MS });
    await page.waitForFunction(() => document.querySelector('#result')?.dataset.state === 'done' || document.querySelector('#result')?.dataset.state === 'failed', null, { timeout: START_TIMEOUT_MS });
    const state = await page.$eval('#result', (el) => el.dataset.state);
    const result = await page.textContent('#result');
    assert.equal(state, 'done', `the app failed: ${result}; console: ${problems.join(' | ')}`);
    assert.deepEqual(JSON.parse(result), EXPECTED);
    assert.deepEqual(problems, [], 'no errors in the console (a CSP violation is one)');
    return { workers, requests, csp: response.headers()['content-security-policy'] };
  } finally {
    await page.close();
  }
}

/** The CSP a Garblet app needs, as the README words it: the SDK's own sources are in it. */
function assertGarbletCsp(csp) {
  assert.ok(csp, 'the page was served with a Content-Security-Policy');
  const directive = (name) => csp.split(';').map((d) => d.trim().split(/\s+/)).find(([n]) => n === name)?.slice(1) ?? [];
  assert.ok(directive('connect-src').includes("'self'") && directive('connect-src').includes(server.url), csp);
  assert.ok(directive('worker-src').includes("'self'") && directive('worker-src').includes('blob:'), csp);
  assert.ok(directive('script-src').includes("'wasm-unsafe-eval'"), csp);
}

/** The README shows `files` (paths under fresh-app-test/) exactly as the apps use them. */
function assertReadmeShows(files) {
  for (const file of files) {
    assert.ok(README.has(file), `ts-sdk/README.md has a block for ${file}`);
    assert.equal(README.get(file), readFileSync(join(here, file), 'utf8'), `ts-sdk/README.md shows ${file} as it is`);
  }
}

/** The app's own function, as a developer writes it in a file of their own. */
const FORTUNE_TS = `import { circuit, evaluator, garbler, uint } from 'garblet/circuit'

export default circuit(
  {
    inputs: { fortune: garbler(uint(32)), mine: evaluator(uint(32)) },
    outputs: { iAmRicher: 'evaluator', difference: 'evaluator', total: 'evaluator' },
  },
  ({ fortune, mine }) => ({
    iAmRicher: mine.gt(fortune),
    difference: mine.toInt().sub(fortune.toInt()),
    total: fortune.add(mine),
  }),
)
`;

/**
 * The page that computes it: the service by the name it was configured with, each run pinned
 * to ?circuit=, and one run pinned to another circuit, which must be refused.
 */
const FORTUNE_PAGE = {
  'fortune.html': '<!doctype html><meta charset="utf-8"><title>fortune</title><link rel="icon" href="/favicon.svg"><pre id="result"></pre><script type="module" src="/fortune/main.ts"></script>\n',
  'fortune/main.ts': `import { Garblet, GarbletError } from 'garblet'

const query = new URLSearchParams(location.search)
const server = query.get('server')!
const expectCircuit = query.get('circuit')!

async function learn() {
  const session = await Garblet.connect(server)
  const service = session.service('fortune')
  if (!service) throw new Error('the server has no fortune service')
  const results = []
  try {
    for (const mine of [5n, 1000000n]) {
      const { outputs } = await session.run('fortune', { mine }, { expectCircuit })
      results.push(Object.fromEntries(Object.entries(outputs).map(([name, o]) => [name, { value: String(o.value), bits: o.bits, signed: o.signed }])))
    }
  } finally {
    session.close()
  }
  const other = await Garblet.connect(server)
  let refused
  try {
    await other.run('fortune', { mine: 1n }, { expectCircuit: 'sha256:' + '0'.repeat(64) })
  } catch (e) {
    refused = e instanceof GarbletError ? { name: e.name, reason: e.reason } : String(e)
  } finally {
    other.close()
  }
  return {
    inputs: service.inputs.map((i) => [i.name, i.party, i.bits]),
    outputs: service.outputs.map((o) => [o.name, o.bits, o.signed]),
    results,
    refused,
  }
}

const result = document.querySelector<HTMLPreElement>('#result')!
learn().then(
  (learned) => {
    result.textContent = JSON.stringify(learned)
    result.dataset.state = 'done'
  },
  (e) => {
    result.textContent = JSON.stringify({ error: String(e) })
    result.dataset.state = 'failed'
  },
)
`,
};

describe('a fresh Vite 8 + TypeScript app (create-vite template, no configuration)', () => {
  let app;
  before(() => (app = createApp('vite8', { starter: 'template', computeAt: 'src/compute.ts' })), { timeout: SETUP_TIMEOUT_MS });

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
    const { workers, requests } = await vite(app, 'dev', computeIn);
    assert.ok(requests.some((p) => p.startsWith('/node_modules/.vite/deps/garblet.js')), `garblet was pre-bundled: ${requests.join(' ')}`);
    assert.ok(requests.includes('/node_modules/garblet/wasm/garblet_core_bg.wasm'), `the wasm came from the package: ${requests.join(' ')}`);
    assert.deepEqual(workers.sort(), ['ot-worker', 'socket-worker', 'worker'].map((w) => `/node_modules/garblet/dist/${w}.js`));
  });

  test("vite build (after tsc), vite preview under the README's CSP: the results are right, with and without integrity", async () => {
    sh('npm', ['run', 'build'], app);
    // The CSP as the README gives it for a static app, for this test's server; a preview
    // server's headers come from vite.config.ts (csp/ over the app).
    cpSync(join(here, 'csp'), app, { recursive: true });
    const csp = README.get('csp').trim().replace('wss://garblet.example.com', server.url);
    await vite(
      app,
      'preview',
      async (url) => {
        const plain = await computeIn(url);
        assert.equal(plain.csp, csp);
        assert.ok(plain.requests.some((p) => /^\/assets\/garblet_core_bg-[\w-]+\.wasm$/.test(p)), `the wasm is a built asset: ${plain.requests.join(' ')}`);
        assert.equal(plain.workers.length, 3, `three workers: ${plain.workers.join(' ')}`);
        assert.ok(plain.workers.every((w) => w.startsWith('/assets/')), plain.workers.join(' '));
        const pinned = await computeIn(url, { integrity: true });
        assert.deepEqual(pinned.workers, ['blob:', 'blob:', 'blob:'], 'with integrity the workers start from Blob URLs of the checked bytes');
      },
      { GARBLET_CSP: csp },
    );
    assertGarbletCsp(csp);
  });
  test('its own function: fortune.ts compiled by npx garblet-compile, served, computed under vite dev with its names and types, pinned', async () => {
    writeFileSync(join(app, 'fortune.ts'), FORTUNE_TS);
    // The package's bin, with the amaro it depends on, as the tarball installed them.
    const printed = sh('npx', ['--no', 'garblet-compile', 'fortune.ts'], app);
    assert.match(printed, /garbler_inputs = \{ fortune = \{ env = "FORTUNE" \} \}/);
    const bristol = join(app, 'fortune.bristol');
    const manifest = join(app, 'fortune.manifest.json');
    const { circuit } = JSON.parse(sh(garbletBinary, ['circuit', 'stats', bristol, '--manifest', manifest], app));
    assert.match(circuit, /^sha256:[0-9a-f]{64}$/);
    for (const [file, content] of Object.entries(FORTUNE_PAGE)) {
      mkdirSync(dirname(join(app, file)), { recursive: true });
      writeFileSync(join(app, file), content);
    }
    const fortune = await startServer({
      config: `[server]
listen = "127.0.0.1:0"

[[service]]
name = "fortune"
circuit = { bristol_file = ${JSON.stringify(bristol)}, manifest = ${JSON.stringify(manifest)} }
garbler_inputs = { fortune = { env = "FORTUNE" } }
`,
      env: { FORTUNE: '123456' },
    });
    try {
      await vite(app, 'dev', async (url) => {
        const page = await browser.newPage();
        const problems = [];
        page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
        page.on('pageerror', (e) => problems.push(e.message));
        try {
          await page.goto(`${url}fortune.html?${new URLSearchParams({ server: fortune.url, circuit })}`, { timeout: START_TIMEOUT_MS });
          await page.waitForFunction(() => document.querySelector('#result')?.dataset.state, null, { timeout: START_TIMEOUT_MS });
          const text = await page.textContent('#result');
          assert.equal(await page.$eval('#result', (el) => el.dataset.state), 'done', text);
          const { inputs, outputs, results, refused } = JSON.parse(text);
          assert.deepEqual(inputs, [
            ['fortune', 'garbler', 32],
            ['mine', 'evaluator', 32],
          ]);
          assert.deepEqual(outputs, [
            ['iAmRicher', 1, false],
            ['difference', 33, true],
            ['total', 33, false],
          ]);
          const expected = (mine) => ({
            iAmRicher: { value: mine > 123456 ? '1' : '0', bits: 1, signed: false },
            difference: { value: String(mine - 123456), bits: 33, signed: true },
            total: { value: String(mine + 123456), bits: 33, signed: false },
          });
          assert.deepEqual(results, [expected(5), expected(1000000)]);
          assert.deepEqual(refused, { name: 'IntegrityError', reason: 'circuit' });
          assert.deepEqual(problems, []);
        } finally {
          await page.close();
        }
      });
    } finally {
      await fortune.stop();
    }
  });
});

describe("a Vite 7 app with the README's one line for older Vite (optimizeDeps.exclude)", () => {
  let app;
  before(() => (app = createApp('vite7', { starter: 'template', overlay: 'vite7', computeAt: 'src/compute.ts' })), { timeout: SETUP_TIMEOUT_MS });

  test('vite dev: the results are right', async () => {
    assert.match(readFileSync(join(app, 'node_modules', 'vite', 'package.json'), 'utf8'), /"version": "7\./);
    const { workers } = await vite(app, 'dev', computeIn);
    assert.equal(workers.length, 3, workers.join(' '));
  });
});

describe('a Next.js app (create-next-app, app router): the SDK in a client component loaded without server rendering', () => {
  let app;
  before(() => (app = createApp('nextjs', { starter: 'nextjs', computeAt: 'app/compute.ts' })), { timeout: SETUP_TIMEOUT_MS });

  test('the README shows its next.config.mjs and client component as they are', () => {
    assertReadmeShows(['nextjs/next.config.mjs', 'nextjs/app/garblet-result.tsx']);
  });

  test("next dev, under the README's CSP: the results are right", async () => {
    const { csp } = await next(app, 'dev', computeIn);
    assertGarbletCsp(csp);
  });

  test("next build and next start, under the README's CSP with integrity: the results are right", async () => {
    sh(process.execPath, [join(app, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], app, { NEXT_TELEMETRY_DISABLED: '1', GARBLET_SERVER: server.url });
    const { csp, workers } = await next(app, 'start', (url) => computeIn(url, { integrity: true }));
    assertGarbletCsp(csp);
    assert.deepEqual(workers, ['blob:', 'blob:', 'blob:'], 'with integrity the workers start from Blob URLs of the checked bytes');
  });
});

describe('a SvelteKit app (sv create, ssr = false on the page)', () => {
  let app;
  before(() => (app = createApp('sveltekit', { starter: 'sveltekit', computeAt: 'src/lib/compute.ts' })), { timeout: SETUP_TIMEOUT_MS });

  test('the README shows its vite.config.ts and page options as they are', () => {
    assertReadmeShows(['sveltekit/vite.config.ts', 'sveltekit/src/routes/+page.ts']);
  });

  test("vite dev, under the README's CSP: the results are right", async () => {
    const { csp } = await vite(app, 'dev', computeIn);
    assertGarbletCsp(csp);
  });

  test("vite build and vite preview, under the README's CSP with integrity: the results are right", async () => {
    sh('npm', ['run', 'build'], app, { GARBLET_SERVER: server.url });
    const { csp, workers } = await vite(app, 'preview', (url) => computeIn(url, { integrity: true }));
    assertGarbletCsp(csp);
    assert.deepEqual(workers, ['blob:', 'blob:', 'blob:'], 'with integrity the workers start from Blob URLs of the checked bytes');
  });
});
