/**
 * `npm run demo` as people stop it: Ctrl-C reaches the demo script itself, but `kill` of the npm
 * process ends only npm's shell. Either way the demo's `garblet serve` and web client must go too,
 * not stay behind holding their ports. (The global set-up built everything: GARBLET_PREBUILT.)
 */
import { expect, test } from '@playwright/test';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, root } from '../../scripts/stack.mjs';

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

// SIGTERM, which npm usually passes to the shell it runs the script in; SIGKILL, which it cannot
// (and which it sometimes failed to pass on under load): the shell stays, its parent gone.
for (const signal of ['SIGTERM', 'SIGKILL'] as const) test(`kill -${signal.slice(3)} of the npm running \`npm run demo\` stops its server and its web client`, async () => {
  const [serverPort, webPort] = [await freePort(), await freePort()];
  // A process group of its own, for the clean-up after a failure.
  const npm = spawn('npm', ['run', 'demo'], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GARBLET_PORT: String(serverPort), WEB_PORT: String(webPort), GARBLET_PREBUILT: '1' } });
  let output = '';
  npm.stderr.on('data', (chunk) => (output += chunk));
  try {
    await new Promise<void>((resolve, reject) => {
      npm.stdout.on('data', (chunk) => {
        output += chunk;
        if (output.includes('Ctrl-C stops both')) resolve();
      });
      npm.once('exit', (code) => reject(new Error(`npm run demo exited (${code}) before it was ready:\n${output}`)));
    });
    const web = Number(/web client\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(output)?.[1]);
    expect(await listening(serverPort), output).toBe(true);
    expect(await listening(web), output).toBe(true);
    npm.kill(signal);
    await expect.poll(async () => (await listening(serverPort)) || (await listening(web)), { timeout: 20_000, message: `both ports close:\n${output}` }).toBe(false);
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // all gone
    }
  }
});
