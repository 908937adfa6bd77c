// Installs what this checkout needs and skips what is already there:
//   the wasm32 Rust target (rustup, in ~/.rustup), wasm-bindgen-cli at the version Cargo.toml
//   pins (cargo install, into ~/.cargo/bin: it compiles for about 4 minutes, once), npm packages
//   (npm ci, into node_modules/), a Python virtual environment (.venv) with the `websockets` the
//   WebSocket conformance test runs as a client, and (with --browser) Debian's Chromium and nginx
//   for the browser tests — system packages, installed with apt-get as root (through sudo when
//   not root). Checks first that Node is recent enough for the web tools (Vite 8: 20.19).
// Usage: node scripts/setup.mjs [--browser]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const CHROMIUM = process.env.GARBLET_CHROMIUM ?? '/usr/bin/chromium';

const say = (msg) => console.log(`[setup] ${msg}`);
const output = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
};
export const run = (cmd, args, options = {}) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });

/** Vite 8 (the demo app, the SDK's fresh-app tests) and SvelteKit need it; the SDK itself runs on Node 20. */
const NODE_MIN = [20, 19];

function nodeVersion() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < NODE_MIN[0] || (major === NODE_MIN[0] && minor < NODE_MIN[1])) {
    throw new Error(`Node ${process.versions.node} is too old: the repository's tools need Node ${NODE_MIN.join('.')} or later`);
  }
}

function wasmTarget() {
  const installed = output('rustup', ['target', 'list', '--installed']);
  if (installed === null) throw new Error('rustup is not installed: see https://rustup.rs');
  if (installed.split('\n').includes('wasm32-unknown-unknown')) return say('wasm32 target: present');
  say('adding the wasm32-unknown-unknown target');
  run('rustup', ['target', 'add', 'wasm32-unknown-unknown']);
}

function wasmBindgen() {
  const pinned = readFileSync(join(root, 'Cargo.toml'), 'utf8').match(/wasm-bindgen\s*=\s*"=([0-9.]+)"/)?.[1];
  if (!pinned) throw new Error('Cargo.toml does not pin wasm-bindgen with "=x.y.z"');
  const have = output('wasm-bindgen', ['--version'])?.split(' ')[1];
  if (have === pinned) return say(`wasm-bindgen ${pinned}: present`);
  say(`installing wasm-bindgen-cli ${pinned} into ~/.cargo/bin (cargo install: about 4 minutes, once)`);
  // No --locked: one of its pinned dependencies is no longer on the registry.
  run('cargo', ['install', 'wasm-bindgen-cli', '--version', pinned]);
}

function npmPackages() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  if (existsSync(marker) && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs)) {
    return say('npm packages: present');
  }
  say('installing npm packages');
  run('npm', existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']);
}

/** The Python `websockets` that e2e/peers/websockets_peer.py runs on, pinned. */
const WEBSOCKETS = '17.4';
const VENV = join(root, '.venv');

/** Installs a Debian package with apt-get (through sudo unless root). */
function aptInstall(pkg) {
  const root_ = process.getuid?.() === 0;
  const apt = (args) => (root_ ? run('apt-get', args) : run('sudo', ['apt-get', ...args]));
  try {
    apt(['install', '-y', '--no-install-recommends', pkg]);
  } catch {
    apt(['update']);
    apt(['install', '-y', '--no-install-recommends', pkg]);
  }
}

function pythonPeer() {
  const python = join(VENV, 'bin', 'python');
  if (existsSync(python) && output(python, ['-c', 'import websockets; print(websockets.__version__)']) === WEBSOCKETS) {
    return say(`Python websockets ${WEBSOCKETS}: present (.venv)`);
  }
  if (!existsSync(python)) {
    if (output('python3', ['-c', 'import ensurepip, venv']) === null) {
      say('installing python3-venv from Debian');
      aptInstall('python3-venv');
    }
    say('creating the Python virtual environment .venv');
    run('python3', ['-m', 'venv', VENV]);
  }
  say(`installing Python websockets ${WEBSOCKETS} into .venv`);
  run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `websockets==${WEBSOCKETS}`]);
}

function chromium() {
  if (existsSync(CHROMIUM)) return say(`Chromium: ${CHROMIUM}`);
  say('installing Chromium from Debian (apt-get, as root)');
  aptInstall('chromium');
}

/** nginx, for the scale-out test that runs deploy/nginx/garblet.conf (e2e/tests/nginx.spec.ts). */
function nginx() {
  const found = output('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx']);
  if (found) return say(`nginx: ${found.split('\n')[0]}`);
  say('installing nginx from Debian (apt-get, as root)');
  aptInstall('nginx');
}

export function setup({ browser = false } = {}) {
  nodeVersion();
  wasmTarget();
  wasmBindgen();
  npmPackages();
  pythonPeer();
  if (browser) {
    chromium();
    nginx();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  setup({ browser: process.argv.includes('--browser') });
}
