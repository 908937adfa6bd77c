// Builds and starts the pieces that `npm run demo`, `npm test` and the e2e tests share: the
// release `garblet` binary, the WebAssembly core and the SDK, the web client, and running
// `garblet serve` and `vite preview` as child processes that report where they listen.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
/** The server binary: $GARBLET_BIN, or the workspace's release build. */
export const garbletBinary = process.env.GARBLET_BIN ?? join(targetDir, 'release', 'garblet');

const STARTUP_TIMEOUT_MS = 60_000;

const say = (msg) => console.log(`[build] ${msg}`);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

/** The release server, the wasm core with the SDK, and the web client (each step skips what is up to date). */
export function build() {
  say('garblet server (cargo build --release -p garblet-server)');
  run('cargo', ['build', '--release', '-p', 'garblet-server']);
  say('WebAssembly core and TypeScript SDK (npm run build --workspace ts-sdk)');
  run('npm', ['run', 'build', '--workspace', 'ts-sdk']);
  say('web client (npm run build --workspace web-client)');
  run('npm', ['run', 'build', '--workspace', 'web-client']);
}

/** A TCP port that was free a moment ago (for tools that cannot be asked to pick one). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The server's embedded default configuration, as text. */
export function defaultConfig() {
  return execFileSync(garbletBinary, ['serve', '--print-default-config'], { encoding: 'utf8' });
}

/**
 * The default configuration with `listen`, `allowed_origins` and some `[limits]` replaced, e.g.
 * `configWith({ listen: '127.0.0.1:0', limits: { idle_timeout_secs: 10 } })`.
 * @param {{ listen?: string, allowedOrigins?: string[], limits?: Record<string, number> }} changes
 */
export function configWith({ listen, allowedOrigins, limits = {} }) {
  let text = defaultConfig();
  const set = (key, value) => {
    const line = new RegExp(`^${key}\\s*=.*$`, 'm');
    if (!line.test(text)) throw new Error(`the default configuration has no ${key} line to replace`);
    text = text.replace(line, `${key} = ${value}`);
  };
  if (listen !== undefined) set('listen', JSON.stringify(listen));
  if (allowedOrigins !== undefined) set('allowed_origins', JSON.stringify(allowedOrigins));
  for (const [key, value] of Object.entries(limits)) set(key, String(value));
  return text;
}

/** Waits for `pattern` on a child's stdout; resolves to its first group. */
function waitForLine(child, pattern, what, log) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`${what} did not start within ${STARTUP_TIMEOUT_MS / 1000} s`)), STARTUP_TIMEOUT_MS);
    const fail = (e) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n${log()}`));
    };
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const m = pattern.exec(seen.replace(/\x1b\[[0-9;]*m/g, ''));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code, signal) => fail(new Error(`${what} exited (${signal ?? `code ${code}`}) before it was ready`)));
  });
}

/** A child process that started and told us its address. */
export class Running {
  constructor(child, url, cleanup = () => {}) {
    this.child = child;
    this.url = url;
    // Startup's listeners go; its output keeps flowing (a full pipe would block the child).
    child.stdout.removeAllListeners('data');
    child.stdout.resume();
    child.removeAllListeners('exit');
    this.exited = new Promise((resolve) => child.once('exit', resolve)).finally(cleanup);
  }

  /** Stops it (SIGTERM, then SIGKILL after `graceMs`). */
  async stop(graceMs = 5000) {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * `garblet serve`: with `config` (TOML text, written to a temporary file) or, without it, the
 * embedded default. Resolves once the server listens; `url` is its ws:// address.
 * `inherit` passes the server's log through to this terminal (else it is kept for errors).
 * `binary` runs another program that takes `serve --config FILE` and says where it listens as
 * `garblet serve` does (the e2e tests' cheating server).
 * @param {{ config?: string, inherit?: boolean, env?: Record<string, string>, binary?: string }} [options]
 */
export async function startServer({ config, inherit = false, env = {}, binary = garbletBinary } = {}) {
  const args = ['serve'];
  let dir;
  if (config !== undefined) {
    dir = mkdtempSync(join(tmpdir(), 'garblet-config-'));
    writeFileSync(join(dir, 'garblet.toml'), config);
    args.push('--config', join(dir, 'garblet.toml'));
  }
  const cleanup = () => dir && rmSync(dir, { recursive: true, force: true });
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', inherit ? 'inherit' : 'pipe'], env: { ...process.env, ...env } });
  let log = '';
  child.stderr?.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
  try {
    const address = await waitForLine(child, /listening on (\S+)/, 'garblet serve', () => log);
    return new Running(child, `ws://${address}`, cleanup);
  } catch (e) {
    cleanup();
    throw e;
  }
}

/**
 * `vite preview` of the built web client on `port` (or the next free one).
 * @param {{ port?: number, strictPort?: boolean }} [options]
 */
export async function startWebClient({ port = 4173, strictPort = false } = {}) {
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const args = [vite, 'preview', '--host', '127.0.0.1', '--port', String(port)];
  if (strictPort) args.push('--strictPort');
  const child = spawn(process.execPath, args, { cwd: join(root, 'web-client'), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
  const url = await waitForLine(child, /(http:\/\/127\.0\.0\.1:\d+\/)/, 'vite preview', () => log);
  return new Running(child, url);
}
