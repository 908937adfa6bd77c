/**
 * `garblet/circuit` in Chromium, from the built package files (ts-sdk/dist/ and wasm/, served
 * as they ship, unbundled):
 * - a page compiles a circuit with `compile` and `compileWithHash` — the same Bristol text and
 *   manifest as Node's — and gets a `CircuitError` located at the page's own line;
 * - a developer's function, written to a new .ts file, compiled by `garblet-compile`, served by
 *   `garblet serve` from the two files it wrote, and computed by a page through the SDK, with
 *   the inputs and outputs named and typed as the function wrote them.
 *
 * Run alone: `node --test fresh-app-test/circuit-browser.test.mjs` (needs the SDK built, `npm
 * run build --workspace ts-sdk`, and the server, `cargo build --release -p garblet-server` or
 * GARBLET_BIN).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { CHROMIUM } from '../scripts/setup.mjs';
import { startServer } from '../scripts/stack.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const sdk = join(root, 'ts-sdk');
const library = join(sdk, 'dist', 'circuit');

/** The page's module: a circuit compiled twice, and one with a width mismatch on line 16. */
const PAGE_JS = `import { circuit, compile, compileWithHash, evaluator, garbler, uint } from './circuit/index.js';

const richer = circuit(
  { inputs: { server: garbler(uint(64)), client: evaluator(uint(64)) }, outputs: { serverIsRicher: 'both' } },
  ({ server, client }) => ({ serverIsRicher: server.gt(client) }),
);
const plain = compile(richer);
const hashed = await compileWithHash(richer);

const broken = circuit(
  { inputs: { a: garbler(uint(8)), b: evaluator(uint(8)) }, outputs: { x: 'evaluator' } },
  ({ a, b }) => {
    const sum = a.add(b);
    // The next line mixes 9 and 8 bits.
    const x =
      sum.xor(a);
    return { x };
  },
);
let error;
try {
  compile(broken);
} catch (e) {
  error = { name: e.name, reason: e.reason, line: e.location?.line, file: e.location?.file };
}
window.result = { plain, hashed, error };
`;

const PAGE_HTML = '<!doctype html><meta charset="utf-8"><title>circuit</title><script type="module" src="/page.js"></script>';

let server;
let browser;
let origin;

before(async () => {
  server = createServer((request, response) => {
    const path = new URL(request.url, 'http://x').pathname;
    const send = (type, body) => response.writeHead(200, { 'content-type': type }).end(body);
    if (path === '/') return send('text/html', PAGE_HTML);
    if (path === '/page.js') return send('text/javascript', PAGE_JS);
    if (path === '/favicon.ico') return response.writeHead(204).end();
    if (path === '/app.html') return send('text/html', '<!doctype html><meta charset="utf-8"><title>app</title><script type="module" src="/app.js"></script>');
    if (path === '/app.js') return send('text/javascript', APP_JS);
    if (path.startsWith('/sdk/')) {
      // The package's dist/ and wasm/, as an app's server would serve them.
      const file = normalize(join(sdk, path.slice('/sdk/'.length)));
      const kind = file.endsWith('.wasm') ? 'application/wasm' : file.endsWith('.js') ? 'text/javascript' : undefined;
      if (kind && (file.startsWith(join(sdk, 'dist')) || file.startsWith(join(sdk, 'wasm')))) {
        try {
          return send(kind, readFileSync(file));
        } catch {
          // Not there: a 404 below.
        }
      }
    }
    if (path.startsWith('/circuit/')) {
      const file = normalize(join(library, path.slice('/circuit/'.length)));
      if (file.startsWith(library) && file.endsWith('.js')) {
        try {
          return send('text/javascript', readFileSync(file));
        } catch {
          // Not there: a 404 below.
        }
      }
    }
    response.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

test('a page compiles a circuit with the built library, as Node does, and errors name its line', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  await page.goto(origin);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
  const { plain, hashed, error } = await page.evaluate(() => window.result);
  assert.deepEqual(problems, []);

  const { circuit, compileWithHash, evaluator, garbler, uint } = await import(join(library, 'index.js'));
  const richer = circuit(
    { inputs: { server: garbler(uint(64)), client: evaluator(uint(64)) }, outputs: { serverIsRicher: 'both' } },
    ({ server, client }) => ({ serverIsRicher: server.gt(client) }),
  );
  const node = await compileWithHash(richer);
  assert.equal(plain.bristol, node.bristol);
  assert.equal(hashed.manifest.bristol_sha256, node.manifest.bristol_sha256);
  assert.deepEqual(hashed.manifest, node.manifest);
  assert.equal(plain.manifest.gates.and, 64);

  assert.deepEqual(error, { name: 'CircuitError', reason: 'width-mismatch', line: 16, file: `${origin}/page.js` });
  await page.close();
});

/** The developer's function: a file of their own, as they would write it. */
const FORTUNE_TS = `import { circuit, evaluator, garbler, int, uint } from 'garblet/circuit';

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
);
`;

/** The app: the SDK from the package's files, the service by the name it was configured with. */
const APP_JS = `import { Garblet } from '/sdk/dist/browser.js';

const server = new URL(location.href).searchParams.get('server');
const session = await Garblet.connect(server);
const service = session.service('fortune');
const results = [];
for (const mine of [5n, 1000000n]) {
  const { outputs } = await session.run('fortune', { mine });
  results.push(Object.fromEntries(Object.entries(outputs).map(([name, o]) => [name, { value: String(o.value), bits: o.bits, signed: o.signed }])));
}
session.close();
window.result = { inputs: service.inputs.map((i) => [i.name, i.party, i.bits]), outputs: service.outputs.map((o) => [o.name, o.bits, o.signed]), results };
`;

test('a function written in TypeScript, compiled, served and computed by a page, with its names and types', async () => {
  const dir = mkdtempSync(join(root, 'fresh-app-test', '.circuit-app-'));
  let garblet;
  const page = await browser.newPage();
  try {
    // Inside the repository, so that `garblet/circuit` resolves to the workspace's package.
    writeFileSync(join(dir, 'fortune.ts'), FORTUNE_TS);
    const printed = execFileSync(process.execPath, [join(sdk, 'bin', 'garblet-compile.mjs'), join(dir, 'fortune.ts')], { encoding: 'utf8' });
    assert.match(printed, /garbler_inputs = \{ fortune = \{ env = "FORTUNE" \} \}/);
    const config = `[server]
listen = "127.0.0.1:0"

[[service]]
name = "fortune"
circuit = { bristol_file = ${JSON.stringify(join(dir, 'fortune.bristol'))}, manifest = ${JSON.stringify(join(dir, 'fortune.manifest.json'))} }
garbler_inputs = { fortune = { env = "FORTUNE" } }
`;
    garblet = await startServer({ config, env: { FORTUNE: '123456' } });
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    await page.goto(`${origin}/app.html?server=${encodeURIComponent(garblet.url)}`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000 });
    const { inputs, outputs, results } = await page.evaluate(() => window.result);
    assert.deepEqual(problems, []);
    assert.deepEqual(inputs, [
      ['fortune', 'garbler', 32],
      ['mine', 'evaluator', 32],
    ]);
    assert.deepEqual(outputs, [
      ['iAmRicher', 1, false],
      ['difference', 33, true],
      ['total', 33, false],
    ]);
    assert.deepEqual(results, [
      { iAmRicher: { value: '0', bits: 1, signed: false }, difference: { value: String(5 - 123456), bits: 33, signed: true }, total: { value: String(5 + 123456), bits: 33, signed: false } },
      { iAmRicher: { value: '1', bits: 1, signed: false }, difference: { value: String(1000000 - 123456), bits: 33, signed: true }, total: { value: String(1000000 + 123456), bits: 33, signed: false } },
    ]);
  } finally {
    await page.close();
    await garblet?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
