/**
 * Starts `garblet serve` (release build) for the benchmark: the embedded default services on a
 * free port, with the raw-throughput WebSocket endpoint on; and `garblet relay`, the server's
 * emulated network link, in front of it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const serverBinary = process.env.GARBLET_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, 'target'), 'release', 'garblet');

/**
 * The default configuration, listening on a free port, with `/bench/raw` enabled and, if
 * `maxWindowBytes` is given, that credit window allowed (the default allows the SDK's 4 MiB).
 */
function benchConfig(maxWindowBytes) {
  const defaults = execFileSync(serverBinary, ['serve', '--print-default-config'], { encoding: 'utf8' });
  const replace = (text, pattern, line) => {
    if (!pattern.test(text)) throw new Error(`the default configuration has no line matching ${pattern} to replace`);
    return text.replace(pattern, line);
  };
  const text = replace(defaults, /^listen = .*$/m, 'listen = "127.0.0.1:0"\nraw_throughput_endpoint = true');
  return maxWindowBytes ? replace(text, /^max_window_bytes = \d+/m, `max_window_bytes = ${maxWindowBytes}`) : text;
}

/**
 * Resolves to `{ address, dataFrameBytes, pid, close }` once the server prints `listening on
 * ADDR`; `dataFrameBytes` is the garbled stream per Data frame, for a raw transfer of the same
 * frames, and `pid` the server's process (to sample its memory).
 */
export async function startGarbletServer({ maxWindowBytes } = {}) {
  if (!existsSync(serverBinary)) {
    throw new Error(`${serverBinary} does not exist: run \`cargo build --release -p garblet-server\` (or set GARBLET_BIN)`);
  }
  const text = benchConfig(maxWindowBytes);
  const dataFrameBytes = Number(/^data_frame_bytes = (\d+)/m.exec(text)?.[1] ?? 65536);
  const dir = mkdtempSync(join(tmpdir(), 'garblet-bench-'));
  const config = join(dir, 'bench.toml');
  writeFileSync(config, text);
  const { address, pid, close } = await startChild(['serve', '--config', config], /listening on (\S+)/, () => rmSync(dir, { recursive: true, force: true }));
  return { address, dataFrameBytes, pid, close };
}

/**
 * Starts `garblet relay` in front of `upstream` (HOST:PORT) with the emulated link `link`
 * (RATE,RTT, e.g. `1gbit,10ms`: server/src/link.rs); resolves to `{ address, link, close }`.
 */
export function startRelay(upstream, link) {
  return startChild(['relay', '--listen', '127.0.0.1:0', '--to', upstream, '--link', link], /relaying (\S+) ->/).then((relay) => ({ ...relay, link }));
}

/**
 * Runs the server binary with `args` until it prints `ready` (its group 1 is the address);
 * resolves to `{ address, pid, close }`, and `close` kills it.
 */
async function startChild(args, ready, cleanUp = () => {}) {
  const child = spawn(serverBinary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GARBLET_LOG: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const close = async () => {
    child.kill('SIGKILL');
    await exited;
    cleanUp();
  };
  const address = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const m = ready.exec(stdout);
      if (m) resolve(m[1]);
    });
    exited.then((code) => reject(new Error(`garblet ${args[0]} exited (${code}) before it was ready:\n${stderr}`)));
  }).catch(async (e) => {
    await close();
    throw e;
  });
  return { address, pid: child.pid, close };
}
