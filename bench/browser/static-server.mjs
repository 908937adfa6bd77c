/**
 * A tiny static HTTP server for the benchmark page: `/` is page/index.html, `/page/…` the
 * page's scripts, `/sdk/…` the SDK's browser build (ts-sdk/dist and ts-sdk/wasm) and
 * `/bench-wasm/…` the core built with its timing exports (bench/browser/wasm), for the kernels.
 * WebAssembly must be served as application/wasm for `compileStreaming`; files may be cached,
 * as a deployed SDK would be, so that each session's worker does not fetch its modules again.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const sdk = fileURLToPath(new URL('../../ts-sdk/', import.meta.url));

const ROOTS = {
  '/page/': join(here, 'page'),
  '/sdk/dist/': join(sdk, 'dist'),
  '/sdk/wasm/': join(sdk, 'wasm'),
  '/bench-wasm/': join(here, 'wasm'),
};

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

/** The file behind a URL path, or undefined; never a file outside the roots. */
function fileFor(path) {
  if (path === '/' || path === '/index.html') return join(here, 'page', 'index.html');
  for (const [prefix, dir] of Object.entries(ROOTS)) {
    if (!path.startsWith(prefix)) continue;
    const file = normalize(join(dir, decodeURIComponent(path.slice(prefix.length))));
    return file.startsWith(dir + sep) ? file : undefined;
  }
  return undefined;
}

/** Serves on a free port of 127.0.0.1; resolves to `{ origin, close }`. */
export function startStaticServer() {
  const server = createServer((req, res) => {
    const file = fileFor(new URL(req.url, 'http://localhost').pathname);
    let size;
    try {
      size = file && statSync(file).isFile() ? statSync(file).size : undefined;
    } catch {
      size = undefined;
    }
    if (size === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': size, 'Cache-Control': 'max-age=3600' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ origin: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(done)) });
    });
  });
}
