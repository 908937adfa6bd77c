#!/usr/bin/env node
/**
 * Resident memory over long computations in Chromium: `synthetic` through the SDK's browser
 * build, at each size of `--and-gates` in turn, each in a fresh browser context (so a fresh page,
 * workers and WebAssembly instance) against one `garblet serve` (release build, the embedded
 * default configuration). Once a second it samples the tab's resident memory — the sum over the
 * browser's renderer processes, which hold the page and its workers; nothing else is open — and
 * the server's process; the SDK's progress reports give the WebAssembly memory. A quantity that
 * moves with garbage collection and the allocator has a peak that grows with the number of
 * samples even when it does not grow itself: sizes between the smallest and the largest tell
 * that apart from a slow growth.
 *
 * With `--without-devtools` each size runs in a Chromium started afresh with no DevTools client
 * (undisturbed.mjs) instead of a Playwright context: Playwright's DevTools client is sent every
 * WebSocket frame, and what the browser holds for it is in the tab's memory too.
 *
 * Prints a line per size, then one JSON object: per size its AND gates, seconds, the peaks and
 * the values at the end (MiB), the tab's median and 90th percentile over the samples taken while
 * the computation ran (its last `seconds` before the page reported), and each of those against
 * the first size's. The peak of a sawtooth grows with the number of samples; the percentiles do
 * not, so they tell a higher sawtooth from a longer one.
 *
 * Usage: node bench/browser/memory.mjs [--and-gates 1000000,10000000,100000000] [--security authenticated] [--without-devtools] [--sample-ms 1000]
 *   CHROMIUM=/path/to/chrome, GARBLET_BIN=/path/to/garblet override the defaults.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, chromiumVersion } from './chromium.mjs';
import { startGarbletServer } from './garblet-server.mjs';
import { startStaticServer } from './static-server.mjs';
import { measureWithoutDevtools } from './undisturbed.mjs';

const MiB = 2 ** 20;

const { values: options } = parseArgs({
  options: {
    'and-gates': { type: 'string', default: '1000000,10000000,100000000' },
    security: { type: 'string', default: 'authenticated' },
    'without-devtools': { type: 'boolean', default: false },
    'sample-ms': { type: 'string', default: '1000' },
  },
});
const withoutDevtools = options['without-devtools'];
const sizes = options['and-gates'].split(',').map(Number);
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`--and-gates: positive integers, comma-separated (got ${options['and-gates']})`);
const sampleMs = Number(options['sample-ms']);
if (!Number.isSafeInteger(sampleMs) || sampleMs < 50) throw new Error(`--sample-ms: an integer of at least 50 (got ${options['sample-ms']})`);

/** Resident memory of process `pid` in bytes, or 0 if it is gone. */
function residentBytes(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The processes running Chromium's renderers (`--type=renderer`) of this machine. */
function rendererPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes('--type=renderer')) pids.push(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return pids;
}

/**
 * Samples the tab's and the server's resident memory every `sampleMs` until `stop()`, which
 * takes a last sample: call it while the browser still runs, as a sample of a browser closing
 * reads its processes gone. Keeps the tab's samples with their times, for its percentiles.
 */
function sampler(serverPid) {
  const peaks = { tab: 0, server: 0 };
  let last = { tab: 0, server: 0 };
  const tab = [];
  const sample = () => {
    last = { tab: rendererPids().reduce((sum, pid) => sum + residentBytes(pid), 0), server: residentBytes(serverPid) };
    peaks.tab = Math.max(peaks.tab, last.tab);
    peaks.server = Math.max(peaks.server, last.server);
    tab.push({ at: performance.now(), bytes: last.tab });
  };
  sample();
  const timer = setInterval(sample, sampleMs);
  return {
    /** Stops; `tabDuring(seconds)` gives the tab's samples of the last `seconds` before the stop. */
    stop() {
      clearInterval(timer);
      const stopped = performance.now();
      sample();
      return { peaks, end: last, tabDuring: (seconds) => tab.filter((s) => s.at >= stopped - seconds * 1000).map((s) => s.bytes) };
    },
  };
}

/** The `q` quantile of `values` (nearest rank), 0 for none. */
function quantile(values, q) {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

async function main() {
  const loadBefore = loadavg();
  const garblet = await startGarbletServer();
  const web = await startStaticServer();
  // Without DevTools each size starts a Chromium of its own; Playwright's only with them.
  const browser = withoutDevtools ? null : await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  const results = [];
  const version = browser?.version() ?? chromiumVersion();
  try {
    console.log(`Chromium ${version}${withoutDevtools ? ' (no DevTools client)' : ''}, garblet serve on ${garblet.address}, ${options.security}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    for (const andGates of sizes) {
      let run, peaks, end, tabDuring;
      if (withoutDevtools) {
        const samples = sampler(garblet.pid);
        let stopped;
        run = await measureWithoutDevtools({ garblet, web, memory: { andGates, security: options.security }, beforeClose: () => (stopped ??= samples.stop()) });
        ({ peaks, end, tabDuring } = stopped);
      } else {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${web.origin}/`);
        await page.waitForFunction(() => 'garbletBench' in window);
        const samples = sampler(garblet.pid);
        run = await page.evaluate(([server, n, security]) => window.garbletBench.syntheticWasmMemory(server, n, security), [garblet.address, andGates, options.security]);
        ({ peaks, end, tabDuring } = samples.stop());
        await context.close();
      }
      if (run.andGates !== andGates) throw new Error(`the run evaluated ${run.andGates} AND gates, not ${andGates}`);
      const mib = (b) => Number((b / MiB).toFixed(1));
      const during = tabDuring(run.seconds);
      const result = {
        and_gates: andGates,
        seconds: Number(run.seconds.toFixed(1)),
        tab_peak_mib: mib(peaks.tab),
        tab_end_mib: mib(end.tab),
        tab_p50_mib: mib(quantile(during, 0.5)),
        tab_p90_mib: mib(quantile(during, 0.9)),
        tab_samples: during.length,
        server_peak_mib: mib(peaks.server),
        server_end_mib: mib(end.server),
        wasm_peak_mib: mib(run.wasm.peak),
        wasm_end_mib: mib(run.wasm.end),
      };
      results.push(result);
      console.log(`${andGates.toLocaleString('en-US')} AND gates in ${result.seconds} s: tab ${result.tab_peak_mib} MiB at the peak, ${result.tab_end_mib} at the end, ${result.tab_p50_mib} and ${result.tab_p90_mib} at the median and the 90th percentile of ${result.tab_samples} samples; server ${result.server_peak_mib} and ${result.server_end_mib}; WebAssembly ${result.wasm_peak_mib} and ${result.wasm_end_mib}`);
    }
  } finally {
    if (browser?.isConnected()) await browser.close();
    await web.close();
    await garblet.close();
  }
  const first = results[0];
  const ratios = results.map((r) => ({
    and_gates: r.and_gates,
    ...Object.fromEntries(['tab_peak_mib', 'tab_end_mib', 'tab_p50_mib', 'tab_p90_mib', 'server_peak_mib', 'server_end_mib', 'wasm_peak_mib', 'wasm_end_mib'].map((k) => [k.replace('_mib', '_vs_first'), Number((r[k] / first[k]).toFixed(3))])),
  }));
  console.log(JSON.stringify({ security: options.security, chromium: version, devtools: !withoutDevtools, runs: results, vs_first: ratios, load_avg: { before: loadBefore, after: loadavg() } }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
