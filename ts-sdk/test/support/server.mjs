/**
 * Starts a real `garblet serve` (release build) on a free port with the test configuration.
 * Port 0 makes the server pick the port; it prints `listening on ADDR` on stdout when ready.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Garblet } from 'garblet';
import { renderConfig } from './server-config.mjs';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR ?? join(repoRoot, 'target');

/** The server binary: $GARBLET_BIN, or the workspace's release build. */
export const serverBinary = process.env.GARBLET_BIN ?? join(targetDir, 'release', 'garblet');

const STARTUP_TIMEOUT_MS = 30_000;

/**
 * A test server and one session connected to it for the tests of the enclosing file or
 * `describe` block: started before them, closed after. Read `.server` and `.session` in tests.
 * @param {import('garblet').ConnectOptions} [options] the connection's options
 * @returns {{ server: TestServer | undefined, session: import('garblet').Session | undefined }}
 */
export function serverAndSession(options) {
  const live = { server: undefined, session: undefined };
  before(async () => {
    live.server = await startServer();
    live.session = await Garblet.connect(live.server.url, options);
  });
  after(async () => {
    live.session?.close();
    await live.server?.kill();
  });
  return live;
}

/**
 * @param {Record<string, number>} [limits] `[limits]` values over the test defaults
 * @returns {Promise<TestServer>}
 */
export async function startServer(limits = {}) {
  return startServerWith(renderConfig(limits));
}

/**
 * A server with the configuration `config` (TOML), written into a fresh folder with `files`
 * (name → contents) beside it, for the configuration to name.
 * @param {string} config
 * @param {Record<string, string>} [files]
 * @returns {Promise<TestServer>}
 */
export async function startServerWith(config, files = {}) {
  if (!existsSync(serverBinary)) {
    throw new Error(`${serverBinary} does not exist: build it with \`cargo build --release -p garblet-server\` (or set GARBLET_BIN)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'garblet-sdk-test-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const configPath = join(dir, 'server.toml');
  writeFileSync(configPath, config);
  const child = spawn(serverBinary, ['serve', '--config', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GARBLET_LOG: process.env.GARBLET_LOG ?? 'warn' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  try {
    const address = await listeningAddress(child, () => stderr);
    return new TestServer(child, address, dir);
  } catch (e) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

function listeningAddress(child, stderr) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`garblet serve did not start within ${STARTUP_TIMEOUT_MS} ms:\n${stderr()}`)), STARTUP_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const m = /listening on (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`garblet serve exited (${signal ?? code}) before listening:\n${stderr()}`));
    });
  });
}

export class TestServer {
  constructor(child, address, dir) {
    this.child = child;
    this.address = address;
    this.dir = dir;
    this.exited = new Promise((resolve) => child.once('exit', resolve));
  }

  /** The WebSocket URL of the session endpoint. */
  get url() {
    return `ws://${this.address}/`;
  }

  /** `GET /health` as JSON. */
  async health() {
    const response = await fetch(`http://${this.address}/health`);
    return response.json();
  }

  /** Waits until the server has at most `sessions` sessions (closed sessions end asynchronously). */
  async sessionsDown(sessions, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { sessions_active } = await this.health();
      if (sessions_active <= sessions) return;
      if (Date.now() > deadline) throw new Error(`the server still has ${sessions_active} session(s) after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until the server has no session left. */
  idle(timeoutMs) {
    return this.sessionsDown(0, timeoutMs);
  }

  get running() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Kills the process at once (no graceful shutdown) and waits until it is gone. */
  async kill() {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
