/**
 * Scale-out behind nginx, as deploy/ describes it: nginx (from apt) terminates TLS with a
 * self-signed certificate made here and balances WebSocket sessions over two `garblet serve`
 * processes with least_conn, running deploy/nginx/garblet.conf itself (see nginxSiteConfig for
 * the few lines a test changes). The CLI trusts the certificate with --ca-cert, Chromium by
 * its public key's hash (--ignore-certificate-errors-spki-list: that key only, no blanket
 * ignore). Checked: results against known answers (FIPS-197 AES, Hamming distance as popcount,
 * the synthetic circuit's zero on zero inputs), both servers in use, the client's address as
 * nginx forwards it in both servers' logs (and a forged one nowhere), one server killed
 * mid-run — its sessions end with typed errors, the others complete, new sessions go to the
 * survivor — and a certificate renewed with `nginx -s reload` while a session runs. Every wait
 * has a limit. Skipped, saying why, only where nginx cannot be installed.
 */
import { chromium, expect, test, type Browser, type Page } from '@playwright/test';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import config, { CHROMIUM } from '../playwright.config';
import { configWith, freePort } from '../../scripts/stack.mjs';
import { finishedState, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { ensureNginx, garbletRun, Garblet, makeCertificate, Nginx, nginxSiteConfig, servedFingerprint, type Certificate, type CliResult } from '../support/nginx';
import { popcount } from '../support/references';
import { serverInteger } from '../support/server-values';
import { E2E_LIMITS, openDemo } from '../support/servers';

const FIPS_KEY = '000102030405060708090a0b0c0d0e0f';
const FIPS_PLAINTEXT = '0x00112233445566778899aabbccddeeff';
const FIPS_CIPHERTEXT = '0x69c4e0d86a7b0430d8cdb78070b4c55a';
/** The address nginx connects to the servers from (proxy_bind), which they trust. */
const PROXY = '127.0.0.2';
/** Sessions long enough to be running when a server is killed (a few seconds here). */
const LONG_CLI_GATES = 3e7;
const LONG_BROWSER_GATES = 4e8;

test.describe.configure({ mode: 'serial' });

let dir: string;
let certificate: Certificate;
let servers: Garblet[] = [];
let nginx: Nginx | undefined;
let nginxPort: number;
let browser: Browser | undefined;

const wss = (host = 'localhost') => `wss://${host}:${nginxPort}/`;
const cli = (service: string, args: string[], ca = certificate.cert, timeoutMs?: number) => garbletRun(['--server', wss(), '--ca-cert', ca, service, ...args], timeoutMs);
const aes = (ca?: string) => cli('aes128', ['--input', FIPS_PLAINTEXT], ca);
const long = (ca?: string) => cli('synthetic', ['--input', '0', '--param', `and_gates=${LONG_CLI_GATES}`], ca, 90_000);

function expectCiphertext(r: CliResult): void {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim()).toBe(`ciphertext = ${FIPS_CIPHERTEXT}`);
}

function expectZero(r: CliResult): void {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim()).toBe(`out = 0x${'0'.repeat(32)}`);
}

async function metric(name: string): Promise<number[]> {
  return Promise.all(servers.map(async (s) => (s.child.exitCode === null && s.child.signalCode === null ? (await s.metrics())[name] : 0)));
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Waits until the servers together have started `n` sessions (sessions_total). */
async function sessionsStarted(n: number): Promise<void> {
  await expect.poll(async () => sum(await metric('sessions_total')), { timeout: 20_000, intervals: [50] }).toBeGreaterThanOrEqual(n);
}

/** A page of the web client, talking to the servers through nginx. */
async function demoPage(path: string): Promise<Page> {
  const page = await browser!.newPage();
  await openDemo(page, path, wss('127.0.0.1'));
  return page;
}

test.beforeAll(async () => {
  test.setTimeout(300_000); // apt-get, where nginx is missing
  const found = ensureNginx();
  test.skip('why' in found, `nginx scale-out test skipped: ${'why' in found ? found.why : ''}`);
  if (!('nginx' in found)) return;
  dir = mkdtempSync(join(tmpdir(), 'garblet-nginx-'));
  certificate = makeCertificate(dir);

  // Two servers with the end-to-end configuration, trusting nginx's address.
  let base = configWith({ listen: '127.0.0.1:0', limits: E2E_LIMITS });
  const trust = `trusted_proxies = ["${PROXY}"]`;
  base = /^#?\s*trusted_proxies = .*$/m.test(base) ? base.replace(/^#?\s*trusted_proxies = .*$/m, trust) : base.replace(/^\[server\]$/m, `[server]\n${trust}`);
  servers = await Promise.all(['a', 'b'].map((name) => Garblet.start(dir, name, base, { GARBLET_AES_KEY: FIPS_KEY })));

  nginxPort = await freePort();
  const site = nginxSiteConfig({ listen: nginxPort, upstreams: servers.map((s) => s.addr), cert: certificate.cert, key: certificate.key });
  nginx = await Nginx.start(found.nginx, dir, site, nginxPort);

  const launch = config.use!.launchOptions!;
  browser = await chromium.launch({ ...launch, executablePath: CHROMIUM, args: [...(launch.args ?? []), `--ignore-certificate-errors-spki-list=${certificate.spki}`] });
  console.log(`[nginx] ${found.nginx} at ${wss()} in front of ${servers.map((s) => s.addr).join(' and ')}; logs in ${dir}`);
});

test.afterAll(async () => {
  await browser?.close();
  await nginx?.stop();
  await Promise.all(servers.map((s) => s.stop()));
  if (dir && !test.info().errors.length) rmSync(dir, { recursive: true, force: true });
});

test('CLI and browser sessions through nginx over wss are correct and use both servers', async () => {
  // Four at once: least_conn gives each server two.
  const runs = await Promise.all([aes(), aes(), aes(), aes()].map((r) => r.done));
  runs.forEach(expectCiphertext);
  expect(Math.min(...(await metric('sessions_total'))), 'both servers took sessions').toBeGreaterThanOrEqual(1);

  // The browser: Hamming distance of a drawn iris code to the server's, as popcount of the XOR.
  const page = await demoPage('hamming');
  await waitForRoles(page);
  await page.getByTestId('iris-random').click();
  await page.getByText('Your code as hex').click();
  const mine = BigInt(await page.getByTestId('iris-hex').inputValue());
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(popcount(mine ^ serverInteger('hamming', 'x')));
  await page.close();

  // Without the certificate, the CLI does not trust nginx.
  const untrusted = await garbletRun(['--server', wss(), 'aes128', '--input', FIPS_PLAINTEXT]).done;
  expect(untrusted.code).toBe(1);
  expect(untrusted.stderr.toLowerCase()).toContain('certificate');
});

test("both servers log the client's address as nginx forwarded it, and never a forged one", async () => {
  // A client that sends its own X-Forwarded-For, through nginx and straight to a server.
  const forged = '203.0.113.66';
  const upgrade = (headers: string) => `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${headers}\r\n`;
  /** Sends the upgrade on a socket once it connects; resolves to the response head. */
  const answer = (open: (onConnect: () => void) => Socket) =>
    new Promise<string>((resolve, reject) => {
      const socket = open(() => socket.write(upgrade(`X-Forwarded-For: ${forged}\r\n`)));
      socket.setTimeout(10_000);
      let seen = '';
      socket.on('data', (chunk) => {
        seen += chunk.toString('latin1');
        if (seen.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(seen);
        }
      });
      socket.once('error', reject);
      socket.once('timeout', () => socket.destroy(new Error('no answer within 10 s')));
    });
  const before = sum(await metric('sessions_total'));
  // Node takes no end-entity certificate as its own anchor: pinned by fingerprint instead.
  const viaNginx = await answer((onConnect) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: nginxPort, servername: 'localhost', rejectUnauthorized: false }, () => {
      if (socket.getPeerCertificate().fingerprint256 !== certificate.fingerprint) socket.destroy(new Error('nginx presented another certificate'));
      else onConnect();
    });
    return socket;
  });
  const direct = await answer((onConnect) => netConnect({ host: '127.0.0.1', port: servers[0].port }, onConnect));
  expect(viaNginx).toMatch(/^HTTP\/1\.1 101 /);
  expect(direct).toMatch(/^HTTP\/1\.1 101 /);
  await sessionsStarted(before + 2);
  // Straight to the server, the forged header is ignored: the TCP peer is the client.
  await expect.poll(() => servers[0].log(), { timeout: 10_000 }).toMatch(/session\{id=\d+ peer=127\.0\.0\.1:\d+\}/);

  for (const [i, server] of servers.entries()) {
    const log = server.log();
    expect(log, `server ${i}: sessions through nginx name the client 127.0.0.1 and nginx ${PROXY}`).toMatch(new RegExp(`session\\{id=\\d+ peer=127\\.0\\.0\\.1 via ${PROXY.replace(/\./g, '\\.')}:\\d+\\}`));
    expect(log, `server ${i}: a forged X-Forwarded-For is never taken`).not.toContain(forged);
  }
});

test('a server killed mid-run: its sessions end with typed errors, new ones go to the other, nothing hangs', async () => {
  test.setTimeout(120_000);
  await expect.poll(async () => sum(await metric('sessions_active')), { timeout: 20_000 }).toBe(0);
  let started = sum(await metric('sessions_total'));

  // A long browser session first; the server it lands on is the one to kill.
  const page = await demoPage('any');
  await page.getByTestId('service').selectOption('synthetic');
  await page.getByTestId('input-evaluator').fill('0');
  await page.getByTestId('param-and_gates').fill(String(LONG_BROWSER_GATES));
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).toHaveAttribute('data-and-gates', /^[1-9]/, { timeout: 30_000 });
  await expect.poll(async () => sum(await metric('sessions_active')), { timeout: 10_000 }).toBe(1);
  const victim = (await metric('sessions_active')).findIndex((n) => n === 1);
  const survivor = 1 - victim;

  // Three long CLI sessions, one at a time so that least_conn sees each: the survivor takes
  // the first (it has none), and after that each server gets one more.
  const runs = [];
  for (let i = 0; i < 3; i++) {
    started = sum(await metric('sessions_total'));
    runs.push(long());
    await sessionsStarted(started + 1);
  }
  const active = await metric('sessions_active');
  expect(active[victim], 'the victim runs the browser session and at least one CLI session').toBeGreaterThanOrEqual(2);
  expect(active[survivor]).toBeGreaterThanOrEqual(1);
  const killedAt = Date.now();
  servers[victim].kill();

  // The browser's run: a ConnectionError (the page's words for that class), soon.
  expect(await finishedState(page, 30_000)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('The connection to the server was lost');
  await page.close();

  // The CLI runs on the victim exit 1 with the reason, soon; those on the survivor complete.
  const results = await Promise.all(runs.map((r) => r.done));
  const failed = results.filter((r) => r.code !== 0);
  for (const r of failed) {
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/garblet: the connection was lost/);
    expect(r.endedAt - killedAt, 'a killed session ends within seconds').toBeLessThan(15_000);
  }
  expect(failed.length, 'the CLI sessions the killed server ran').toBe(active[victim] - 1);
  results.filter((r) => r.code === 0).forEach(expectZero);
  console.log(`[nginx] killed server ${victim} running ${active[victim]} sessions (${active[survivor]} on the other): CLI runs ${results.map((r) => `exit ${r.code} after ${r.ms} ms`).join(', ')}; failed ones ended ${failed.map((r) => r.endedAt - killedAt).join(', ')} ms after the kill`);

  // New sessions, CLI and browser: all on the survivor, all correct.
  const survivorBefore = (await servers[survivor].metrics()).sessions_total;
  const fresh = await Promise.all([aes(), aes(), aes()].map((r) => r.done));
  fresh.forEach(expectCiphertext);
  const hamming = await demoPage('hamming');
  await waitForRoles(hamming);
  const mine = BigInt(await hamming.getByTestId('iris-hex').inputValue());
  await runToCompletion(hamming);
  expect(Number(await resultValue(hamming))).toBe(popcount(mine ^ serverInteger('hamming', 'x')));
  await hamming.close();
  expect((await servers[survivor].metrics()).sessions_total - survivorBefore).toBeGreaterThanOrEqual(4);
  expect(servers[survivor].log()).toMatch(new RegExp(`peer=127\\.0\\.0\\.1 via ${PROXY.replace(/\./g, '\\.')}:`));
});

test('nginx -s reload (SIGHUP) serves a renewed certificate; a running session goes on', async () => {
  test.setTimeout(90_000);
  const old = certificate;
  const oldCa = join(dir, 'old-ca.pem');
  copyFileSync(old.cert, oldCa);
  const started = sum(await metric('sessions_total'));
  const running = long(oldCa);
  await sessionsStarted(started + 1);

  // Renewal: a new key and certificate over the old files, then the reload signal.
  const renewed = makeCertificate(dir, old.cert, old.key);
  expect(renewed.fingerprint).not.toBe(old.fingerprint);
  const shutdowns = () => nginx!.errorLog().split('gracefully shutting down').length;
  const before = shutdowns();
  nginx!.reload();
  // New workers start with the new certificate; the old one stops accepting (and logs it), and
  // keeps only its open connections. Until then either may take a new connection.
  await expect.poll(shutdowns, { timeout: 15_000 }).toBeGreaterThan(before);
  expect(await servedFingerprint(nginxPort)).toBe(renewed.fingerprint);

  expectCiphertext(await aes(renewed.cert).done);
  const stale = await aes(oldCa).done;
  expect(stale.code).toBe(1);
  expect(stale.stderr.toLowerCase()).toContain('certificate');
  expectZero(await running.done);
  expect(nginx!.errorLog()).toMatch(/signal 1 \(SIGHUP\) received/);
});
