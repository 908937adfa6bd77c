/**
 * `npm run bench:browser -- --without-devtools`: the network measurements in a Chromium started
 * directly, with no DevTools client attached (Playwright attaches one, and it reports every
 * WebSocket frame); `--per-worker`, the authenticated engine's work per worker there instead;
 * memory.mjs's `--without-devtools`, one long `synthetic` run. The page (page/undisturbed.js)
 * posts its results to a one-shot HTTP endpoint here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.mjs';

/** How long the page may take, the memory benchmark's long runs included. */
const TIMEOUT_MS = 1_800_000;

/**
 * Runs page/undisturbed.html against `garblet`; resolves to what the page reports. Calls
 * `beforeClose`, if given, once the page has reported (or failed), before Chromium is closed.
 */
export async function measureWithoutDevtools({ garblet, web, andGates = 0, latencyRuns = 0, linkRuns = 0, rounds, relays = [], sweepWindows = [], perWorkerAndGates = 0, memory, beforeClose }) {
  let report;
  const reported = new Promise((resolve) => (report = resolve));
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.writeHead(200, { 'Access-Control-Allow-Origin': '*' }).end();
      report(JSON.parse(body));
    });
  });
  await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const query = new URLSearchParams({
    server: garblet.address,
    andGates: String(andGates),
    latencyRuns: String(latencyRuns),
    frame: String(garblet.dataFrameBytes),
    linkRuns: String(linkRuns),
    rounds: String(rounds),
    links: relays.map((r) => r.address).join(','),
    sweep: sweepWindows.join(','),
    perWorker: String(perWorkerAndGates),
    memoryAndGates: String(memory?.andGates ?? 0),
    security: memory?.security ?? '',
    report: `http://127.0.0.1:${collector.address().port}/`,
  });
  const profile = mkdtempSync(join(tmpdir(), 'garblet-chromium-'));
  const chrome = spawn(chromiumPath, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, `${web.origin}/page/undisturbed.html?${query}`], { stdio: 'ignore' });
  const exited = new Promise((resolve) => chrome.once('exit', resolve));
  let timer;
  try {
    const result = await Promise.race([reported, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the page reported nothing in time')), TIMEOUT_MS)))]);
    if (result.error) throw new Error(`the page failed: ${result.error}`);
    return result;
  } finally {
    clearTimeout(timer);
    // While Chromium still runs: a caller sampling its processes stops here, not on a browser
    // half gone.
    beforeClose?.();
    chrome.kill('SIGKILL');
    collector.close();
    // Chromium's helper processes may still write to the profile for a moment after it died.
    await exited;
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      console.warn(`left ${profile} behind: ${e.message}`);
    }
  }
}
