#!/usr/bin/env node
/**
 * The browser benchmark: one headless Chromium page (playwright-core, the system's Chromium)
 * loads the SDK's browser build from a tiny static server and measures, against its own
 * `garblet serve` (release build):
 *
 *   - our bitsliced wasm AES and the `aes` crate's, blocks/s;
 *   - the in-page evaluator without network (EvalBench), AND gates/s;
 *   - a large `synthetic` computation through the SDK, AND gates/s, and bytes per AND;
 *   - raw WebSocket receive speed from the same server with the same frame size, bytes/s;
 *   - the latency of one private AES block, from `Garblet.connect` to the result (median of 20);
 *   - where that latency goes (protocol phases, worker start, wasm instantiation);
 *   - the whole machine's CPU during the end-to-end and the raw WebSocket measurements, and
 *     the cores the end-to-end run would need, at that CPU cost, to meet its target.
 *
 * It prints a report, then the numbers as one JSON object on its last line.
 * Usage: node bench/browser/run.mjs [--and-gates N] [--latency-runs N] [--profile] [--without-devtools]
 *   --profile adds a CPU profile of in-page aes128 sessions (self time per function).
 *   --without-devtools also runs the network measurements in a Chromium with no DevTools client
 *   attached (undisturbed.mjs): Playwright's reports every WebSocket frame, which costs most of
 *   the machine during a transfer. Informative; the targets are judged on the Playwright run.
 *   CHROMIUM=/path/to/chrome, GARBLET_BIN=/path/to/garblet override the defaults.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startGarbletServer } from './garblet-server.mjs';
import { startStaticServer } from './static-server.mjs';
import { profileAesSessions } from './profile.mjs';
import { printPhases, targetsOf } from './report.mjs';
import { measureWithoutDevtools } from './undisturbed.mjs';
import { cores, withMachineCpu } from './machine-cpu.mjs';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const { values: options } = parseArgs({
  options: {
    'and-gates': { type: 'string', default: '20000000' },
    'latency-runs': { type: 'string', default: '20' },
    profile: { type: 'boolean', default: false },
    'without-devtools': { type: 'boolean', default: false },
  },
});
const andGates = Number(options['and-gates']);
const latencyRuns = Number(options['latency-runs']);

const log = (line) => console.log(line);
const fmt = (v, digits = 3) => Number(v.toPrecision(digits)).toLocaleString('en-US');

async function main() {
  const loadBefore = loadavg();
  const garblet = await startGarbletServer();
  const web = await startStaticServer();
  const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await page.goto(`${web.origin}/`);
    await page.waitForFunction(() => 'garbletBench' in window);
    log(`Chromium ${browser.version()}, garblet serve on ${garblet.address}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    /** Calls one of the page's measurements. */
    const measure = (name, ...args) => page.evaluate(([n, a]) => window.garbletBench[n](...a), [name, args]);

    // Both AES implementations and the evaluator, interleaved trial by trial (one measurement).
    const kernels = await measure('kernelThroughput');
    const aes = { ours: kernels.ours, crate: kernels.crate };
    const evaluator = { andPerSecond: kernels.andPerSecond };
    log(`AES-128 in wasm: ours ${fmt(aes.ours)} blocks/s, aes crate ${fmt(aes.crate)} blocks/s`);
    log(`evaluator in the page (no network): ${fmt(evaluator.andPerSecond)} AND/s`);
    const { result: e2e, cpu: e2eCpu } = await withMachineCpu(() => measure('endToEndThroughput', garblet.address, andGates));
    log(`end to end, synthetic ${fmt(andGates)} ANDs: ${fmt(e2e.andPerSecond)} AND/s (${fmt(e2e.ms / 1000)} s, ${fmt(e2e.bytesPerAnd, 4)} bytes/AND)`);
    const { result: raw, cpu: rawCpu } = await withMachineCpu(() => measure('rawWebSocketThroughput', garblet.address, Math.round(andGates * e2e.bytesPerAnd), garblet.dataFrameBytes));
    log(`raw WebSocket receive, ${garblet.dataFrameBytes}-byte frames: ${fmt(raw.bytesPerSecond)} bytes/s`);
    const latency = await measure('aesLatency', garblet.address, latencyRuns);
    const first = latency.samples[0];
    log(`aes128 latency, connect to result: median ${fmt(latency.medianMs)} ms of ${latencyRuns} (first ${fmt(first.totalMs)} ms)`);

    const setup = { worker: await measure('workerTimeline', garblet.address), wasm: await measure('wasmSetup'), timeline: await measure('aesTimeline', garblet.address) };
    printPhases(log, latency, setup);
    if (options.profile) {
      log('CPU profile of in-page aes128 sessions, self time per session:');
      for (const f of (await profileAesSessions(page, garblet.address)).slice(0, 20)) log(`  ${f.msPerSession.toFixed(2).padStart(7)} ms  ${f.name.slice(0, 110)}`);
    }

    const results = {
      wasm_aes_blocks_per_s: Math.round(aes.ours),
      aes_crate_wasm_blocks_per_s: Math.round(aes.crate),
      eval_and_per_s: Math.round(evaluator.andPerSecond),
      e2e_and_per_s: Math.round(e2e.andPerSecond),
      ws_bytes_per_s: Math.round(raw.bytesPerSecond),
      bytes_per_and: Number(e2e.bytesPerAnd.toFixed(3)),
      aes128_latency_ms: Number(latency.medianMs.toFixed(2)),
    };
    let withoutDevtools;
    if (options['without-devtools']) {
      const u = await measureWithoutDevtools({ chromiumPath, chromiumArgs: CHROMIUM_ARGS, garblet, web, andGates, latencyRuns });
      withoutDevtools = { e2e_and_per_s: Math.round(u.e2eAndPerSecond), ws_bytes_per_s: Math.round(u.wsBytesPerSecond), bytes_per_and: Number(u.bytesPerAnd.toFixed(3)), aes128_latency_ms: Number(u.aes128LatencyMs.toFixed(2)) };
      log(`without DevTools attached: end to end ${fmt(u.e2eAndPerSecond)} AND/s, raw WebSocket ${fmt(u.wsBytesPerSecond)} bytes/s, aes128 latency ${fmt(u.aes128LatencyMs)} ms`);
    }
    const targets = targetsOf(results);
    for (const [name, t] of Object.entries(targets)) log(`${t.met ? 'MET   ' : 'MISSED'} ${name}: ${t.rule} (${t.detail})`);
    const machine = machineCpuReport(e2eCpu, rawCpu, andGates / targets.e2e_vs_ws.needed);
    if (machine) {
      log(`machine CPU: end to end ${fmt(machine.e2e_cpu_s)} CPU-s (${fmt(100 * machine.e2e_busy)} % of ${cores} cores busy), raw WebSocket ${fmt(machine.ws_cpu_s)} CPU-s (${fmt(100 * machine.ws_busy)} %)`);
      log(`  at that cost, end to end within its target's ${fmt(machine.e2e_target_s)} s needs ${fmt(machine.e2e_cores_needed)} cores; this machine has ${cores}`);
    }
    const loadAfter = loadavg();
    log(`load average after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
    log(JSON.stringify({ ...results, targets, machine_cpu: machine, without_devtools: withoutDevtools, load_avg: { before: loadBefore, after: loadAfter } }));
  } finally {
    await browser.close();
    await web.close();
    await garblet.close();
  }
}

/** The machine's CPU over the end-to-end and raw runs, and the cores the first needs to fit `targetSeconds`. */
function machineCpuReport(e2e, raw, targetSeconds) {
  if (!e2e || !raw) return undefined;
  const round = (v) => Number(v.toFixed(3));
  return {
    e2e_cpu_s: round(e2e.seconds),
    e2e_busy: round(e2e.busy),
    ws_cpu_s: round(raw.seconds),
    ws_busy: round(raw.busy),
    e2e_target_s: round(targetSeconds),
    e2e_cores_needed: round(e2e.seconds / targetSeconds),
    cores,
  };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
