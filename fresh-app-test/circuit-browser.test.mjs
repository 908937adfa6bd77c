/**
 * `garblet/circuit` in Chromium, from the built package files (ts-sdk/dist/circuit/, served as
 * they ship, unbundled): a page compiles a circuit with `compile` and `compileWithHash` — the
 * same Bristol text and manifest as Node's — and gets a `CircuitError` located at the page's own
 * line, which a bundled page's stack would not give. (A fresh app compiling its own function
 * with `garblet-compile` and computing it is in fresh-app.test.mjs.)
 *
 * Run alone: `node --test fresh-app-test/circuit-browser.test.mjs` (needs the SDK built, `npm
 * run build --workspace ts-sdk`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { CHROMIUM } from '../scripts/setup.mjs';

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
