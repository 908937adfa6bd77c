#!/usr/bin/env node
/**
 * The browser benchmark: one headless Chromium page (playwright-core, the system's Chromium)
 * loads the SDK's browser build from a tiny static server and measures, against its own
 * `garblet serve` (release build):
 *
 *   - our bitsliced wasm AES and the `aes` crate's, blocks/s;
 *   - the in-page evaluator without network (EvalBench), AND gates/s;
 *   - the evaluator's speed for both garbling schemes, half-gates and three-halves;
 *   - a large `synthetic` computation through the SDK, AND gates/s, and bytes per AND, with a
 *     16 MiB credit window (E2E_WINDOW) for each garbling scheme, and once more with the SDK's
 *     defaults (its default window, the server's first scheme);
 *   - raw WebSocket receive speed from the same server with the same frame size, bytes/s;
 *   - those two alternately, `--rounds` times (3), each reported as the median of its runs;
 *   - the latency of one private AES block, from `Garblet.connect` to the result (median of 20);
 *   - private AES in the standard mode, the authenticated mode and under cut-and-choose (both schemes), each run on a
 *     fresh connection: from `run` to the result, and the bytes each way (median and p99 of
 *     `--cnc-runs`, 12), the library's circuit (`aes128_bp`) beside the Bristol one in the
 *     standard and the authenticated mode, then, on one warm connection, standard runs beside
 *     authenticated runs whose preprocessing was done ahead (`session.prepare`), for each
 *     circuit; then the OT helper's share of the authenticated mode's work: `synthetic` with
 *     `--helper-and-gates` AND gates (10^6) with the helper working ahead on the OT extension,
 *     with it turning those jobs down, and with no helper at all (one worker: the per-worker
 *     figure), alternately, `--rounds` of each (the engine's own time per AND gate, and the wall
 *     time); `--only-cut-and-choose` measures that alone;
 *   - `--only-kernels` measures the kernels alone (AES, the evaluators, the OT extension), with
 *     their targets;
 *   - `--per-worker` measures the authenticated engine's throughput per worker against our wasm
 *     AES's bound, alone, in a Chromium with no DevTools client attached (undisturbed.mjs);
 *   - with `--link RATE,RTT` (repeatable), the same through `garblet relay`'s emulated link:
 *     cold (from `Garblet.connect`) and warm (a second run on the connection), and the RTT;
 *   - where that latency goes (protocol phases, worker start, wasm instantiation);
 *   - the whole machine's CPU during the end-to-end and the raw WebSocket measurements, and
 *     the cores the end-to-end run would need, at that CPU cost, to meet its target.
 *
 * It prints a report, then the numbers as one JSON object on its last line.
 * Usage: node bench/browser/run.mjs [--and-gates N] [--rounds N] [--latency-runs N] [--cnc-runs N] [--helper-and-gates N] [--only-cut-and-choose] [--only-kernels] [--per-worker] [--profile] [--without-devtools]
 *          [--link RATE,RTT ...] [--link-runs N] [--window-sweep MIB,MIB,...]
 *   --profile adds CPU profiles of in-page aes128 sessions in the standard and the authenticated mode (self time per function), and of an in-page engine
 *   computing authenticated `synthetic` (--helper-and-gates) with its OT helper in a worker, also after --only-cut-and-choose.
 *   --without-devtools also runs the network measurements in a Chromium with no DevTools client
 *   attached (undisturbed.mjs): Playwright's reports every WebSocket frame, which costs most of
 *   the machine during a transfer. Informative; the targets are judged on the Playwright run.
 *   --window-sweep 1,2,4,8,16,32 runs end to end there for each starting window (MiB), `--rounds`
 *   times in turn, and picks the smallest window within 90 % of the best one's rate (it implies
 *   --without-devtools).
 *   CHROMIUM=/path/to/chrome, GARBLET_BIN=/path/to/garblet override the defaults.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.mjs';
import { startGarbletServer, startRelay } from './garblet-server.mjs';
import { startStaticServer } from './static-server.mjs';
import { profileAesSessions, profileAuthenticatedEngine } from './profile.mjs';
import { kernelTargetsOf, linkFigures, linkTargetsOf, printPhases, printTimeline, sweepFigures, targetsOf } from './report.mjs';
import { measureWithoutDevtools } from './undisturbed.mjs';
import { cores, withMachineCpu } from './machine-cpu.mjs';

/**
 * The credit window of the measured end-to-end runs. With DevTools attached (Playwright), the
 * socket's thread spends ~3 ns per received byte reporting frames, so a credit grant waits
 * behind several milliseconds of queued frames; 4 MiB then leaves the server idle now and then.
 * Paired runs here: 16 MiB was faster in 6 of 6 pairs, 4.40 against 4.16 M AND/s on average.
 * The default window's speed is reported beside it.
 */
const E2E_WINDOW = 16 << 20;

const { values: options } = parseArgs({
  options: {
    'and-gates': { type: 'string', default: '20000000' },
    rounds: { type: 'string', default: '3' },
    'latency-runs': { type: 'string', default: '20' },
    'cnc-runs': { type: 'string', default: '12' },
    'helper-and-gates': { type: 'string', default: '1000000' },
    'only-cut-and-choose': { type: 'boolean', default: false },
    'only-kernels': { type: 'boolean', default: false },
    'per-worker': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'without-devtools': { type: 'boolean', default: false },
    link: { type: 'string', multiple: true, default: [] },
    'link-runs': { type: 'string', default: '9' },
    'window-sweep': { type: 'string' },
  },
});
const andGates = Number(options['and-gates']);
const latencyRuns = Number(options['latency-runs']);
const cncRuns = Number(options['cnc-runs']);
const helperAndGates = Number(options['helper-and-gates']);
if (!(cncRuns >= 1)) throw new Error('--cnc-runs must be at least 1');
const rounds = Number(options.rounds);
if (!(rounds >= 1)) throw new Error('--rounds must be at least 1');
const links = options.link;
const linkRuns = Number(options['link-runs']);
const sweepWindows = options['window-sweep']?.split(',').map((mib) => Math.round(Number(mib) * (1 << 20))) ?? [];
if (sweepWindows.some((w) => !(w > 0))) throw new Error('--window-sweep takes window sizes in MiB, e.g. 1,2,4,8,16,32');
const runWithoutDevtools = options['without-devtools'] || sweepWindows.length > 0;
/** The two garbling schemes, as `ConnectOptions.garbling` names them and as the report's keys do. */
const SCHEMES = [
  ['three-halves', 'three_halves'],
  ['half-gates', 'half_gates'],
];

const log = (line) => console.log(line);
const fmt = (v, digits = 3) => Number(v.toPrecision(digits)).toLocaleString('en-US');

/** Builds the core with its timing exports into bench/browser/wasm/ (the SDK's build has none). */
function buildBenchWasm() {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  execFileSync(process.execPath, [join(root, 'ts-sdk', 'scripts', 'build-wasm.mjs'), '--bench'], { cwd: root, stdio: 'inherit' });
}

async function main() {
  buildBenchWasm();
  const loadBefore = loadavg();
  const garblet = await startGarbletServer({ maxWindowBytes: Math.max(E2E_WINDOW, ...sweepWindows) });
  const relays = [];
  for (const link of links) relays.push(await startRelay(garblet.address, link));
  const web = await startStaticServer();
  if (options['per-worker']) {
    try {
      log(JSON.stringify({ ...(await perWorker(garblet, web)), load_avg: { before: loadBefore, after: loadavg() } }));
    } finally {
      await web.close();
      await garblet.close();
    }
    return;
  }
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await page.goto(`${web.origin}/`);
    await page.waitForFunction(() => 'garbletBench' in window);
    log(`Chromium ${browser.version()}, garblet serve on ${garblet.address}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    /** Calls one of the page's measurements. */
    const measure = (name, ...args) => page.evaluate(([n, a]) => window.garbletBench[n](...a), [name, args]);
    if (options['only-cut-and-choose']) {
      log(JSON.stringify({ ...(await securityCosts(measure, garblet.address)), load_avg: { before: loadBefore, after: loadavg() } }));
      if (options.profile) await logProfiles(page, garblet.address);
      return;
    }

    // Both AES implementations and the evaluator, interleaved trial by trial (one measurement).
    const kernels = await measure('kernelThroughput');
    const aes = { ours: kernels.ours, crate: kernels.crate };
    const evaluator = { andPerSecond: kernels.andPerSecond };
    log(`AES-128 in wasm: ours ${fmt(aes.ours)} blocks/s, aes crate ${fmt(aes.crate)} blocks/s`);
    log(`evaluator in the page (no network): ${fmt(evaluator.andPerSecond)} AND/s half-gates, ${fmt(kernels.threeHalvesAndPerSecond)} AND/s three-halves`);
    log(`  with the fixed-key hash instead: ${fmt(kernels.fixedKeyAndPerSecond)} and ${fmt(kernels.threeHalvesFixedKeyAndPerSecond)} AND/s`);
    for (const [k, ot] of Object.entries(kernels.ot)) {
      log(`SoftSpoken k = ${k} in the page: receiver ${fmt(ot.receiver)} OT/s checked, ${fmt(ot.uncheckedReceiver)} bare; sender ${fmt(ot.sender)} checked, ${fmt(ot.uncheckedSender)} bare; upload ${fmt(ot.uploadBytesPerOt, 4)} bytes/OT`);
    }
    const kernelResults = {
      wasm_aes_blocks_per_s: Math.round(aes.ours),
      aes_crate_wasm_blocks_per_s: Math.round(aes.crate),
      eval_and_per_s: Math.round(evaluator.andPerSecond),
      three_halves_eval_and_per_s: Math.round(kernels.threeHalvesAndPerSecond),
      fixed_key_eval_and_per_s: Math.round(kernels.fixedKeyAndPerSecond),
      three_halves_fixed_key_eval_and_per_s: Math.round(kernels.threeHalvesFixedKeyAndPerSecond),
      // Evaluation time with the sessions' hash ÷ with the fixed-key hash (≤ 1.10 is the goal).
      eval_vs_fixed_key: Number((kernels.fixedKeyAndPerSecond / evaluator.andPerSecond).toFixed(3)),
      three_halves_eval_vs_fixed_key: Number((kernels.threeHalvesFixedKeyAndPerSecond / kernels.threeHalvesAndPerSecond).toFixed(3)),
      ...Object.fromEntries(
        Object.entries(kernels.ot).flatMap(([k, ot]) => [
          [`wasm_cot_k${k}_receiver_per_s`, Math.round(ot.receiver)],
          [`wasm_cot_k${k}_sender_per_s`, Math.round(ot.sender)],
          [`wasm_cot_k${k}_receiver_unchecked_per_s`, Math.round(ot.uncheckedReceiver)],
          [`wasm_cot_k${k}_sender_unchecked_per_s`, Math.round(ot.uncheckedSender)],
          [`wasm_cot_k${k}_upload_bytes_per_ot`, Number(ot.uploadBytesPerOt.toFixed(4))],
        ]),
      ),
    };
    if (options['only-kernels']) {
      const targets = kernelTargetsOf(kernelResults);
      for (const [name, t] of Object.entries(targets)) log(`${t.met ? 'MET   ' : 'MISSED'} ${name}: ${t.rule} (${t.detail})`);
      const trials = Object.fromEntries(Object.entries(kernels.trials).map(([k, v]) => [k, v.map((x) => Number(x.toPrecision(3)))]));
      log(JSON.stringify({ ...kernelResults, targets, kernel_trials: trials, load_avg: { before: loadBefore, after: loadavg() } }));
      return;
    }
    // End to end and raw WebSocket take turns: this machine drifts by up to ±15 % within a
    // minute, so each is the median of its runs, and no one moment decides their ratio.
    // The end-to-end runs that the targets and the machine's CPU are judged on use three-halves,
    // the scheme the server offers first (and so what `auto`, the SDK's default, gets); each
    // round also runs half-gates.
    const runs = [];
    for (let round = 1; round <= rounds; round++) {
      const { result: e2e, cpu: e2eCpu } = await withMachineCpu(() => measure('endToEndThroughput', garblet.address, andGates, E2E_WINDOW, 'three-halves'));
      const halfGates = await measure('endToEndThroughput', garblet.address, andGates, E2E_WINDOW, 'half-gates');
      const { result: raw, cpu: rawCpu } = await withMachineCpu(() => measure('rawWebSocketThroughput', garblet.address, Math.round(andGates * e2e.bytesPerAnd), garblet.dataFrameBytes));
      log(`round ${round}: end to end, synthetic ${fmt(andGates)} ANDs, ${E2E_WINDOW >> 20} MiB window: three-halves ${fmt(e2e.andPerSecond)} AND/s (${fmt(e2e.ms / 1000)} s, ${fmt(e2e.bytesPerAnd, 4)} bytes/AND), half-gates ${fmt(halfGates.andPerSecond)} AND/s (${fmt(halfGates.bytesPerAnd, 4)} bytes/AND); raw WebSocket receive, ${garblet.dataFrameBytes}-byte frames: ${fmt(raw.bytesPerSecond)} bytes/s`);
      runs.push({ e2e, halfGates, e2eCpu, raw, rawCpu });
    }
    const e2e = medianBy(runs.map((r) => r.e2e), (x) => x.andPerSecond);
    const e2eHalfGates = medianBy(runs.map((r) => r.halfGates), (x) => x.andPerSecond);
    const raw = medianBy(runs.map((r) => r.raw), (x) => x.bytesPerSecond);
    const defaultWindow = await measure('endToEndThroughput', garblet.address, andGates);
    log(`medians of ${rounds}: end to end ${fmt(e2e.andPerSecond)} AND/s three-halves, ${fmt(e2eHalfGates.andPerSecond)} AND/s half-gates, raw WebSocket ${fmt(raw.bytesPerSecond)} bytes/s; end to end with the SDK's default window: ${fmt(defaultWindow.andPerSecond)} AND/s`);
    const latency = await measure('aesLatency', garblet.address, latencyRuns);
    const first = latency.samples[0];
    log(`aes128 latency, connect to result: median ${fmt(latency.medianMs)} ms of ${latencyRuns} (first ${fmt(first.totalMs)} ms)`);

    const setup = { worker: await measure('workerTimeline', garblet.address), wasm: await measure('wasmSetup'), timeline: await measure('aesTimeline', garblet.address) };
    printPhases(log, latency, setup);
    const security = await securityCosts(measure, garblet.address);
    const overLinks = [];
    for (const relay of relays) {
      const figures = linkFigures(relay.link, await measure('aesColdWarm', relay.address, linkRuns));
      overLinks.push(figures);
      log(`aes128 through garblet relay --link ${relay.link}: cold ${figures.aes128_cold_ms} ms (connect to result, 2 RTT + ${figures.cold_minus_2rtt_ms} ms), warm ${figures.aes128_warm_ms} ms (RTT + ${figures.warm_minus_rtt_ms} ms), GET /health ${figures.rtt_measured_ms} ms; medians of ${linkRuns}`);
      printTimeline(log, await measure('aesTimeline', relay.address, 5), `  the protocol in the page's thread over that link (5 runs), from the start:`);
    }
    if (options.profile) await logProfiles(page, garblet.address);

    const results = {
      ...kernelResults,
      e2e_and_per_s: Math.round(e2e.andPerSecond),
      e2e_half_gates_and_per_s: Math.round(e2eHalfGates.andPerSecond),
      e2e_window_bytes: E2E_WINDOW,
      e2e_default_window_and_per_s: Math.round(defaultWindow.andPerSecond),
      e2e_runs_and_per_s: runs.map((r) => Math.round(r.e2e.andPerSecond)),
      e2e_half_gates_runs_and_per_s: runs.map((r) => Math.round(r.halfGates.andPerSecond)),
      ws_runs_bytes_per_s: runs.map((r) => Math.round(r.raw.bytesPerSecond)),
      ws_bytes_per_s: Math.round(raw.bytesPerSecond),
      bytes_per_and: Number(e2e.bytesPerAnd.toFixed(3)),
      aes128_latency_ms: Number(latency.medianMs.toFixed(2)),
      ...security,
      links: overLinks,
    };
    // Every trial of the kernels, to see a disturbed one (they are medians of these).
    results.kernel_trials = Object.fromEntries(Object.entries(kernels.trials).map(([k, v]) => [k, v.map((x) => Number(x.toPrecision(3)))]));
    let withoutDevtools;
    if (runWithoutDevtools) {
      const u = await measureWithoutDevtools({ garblet, web, andGates, latencyRuns, linkRuns, rounds, relays, sweepWindows });
      withoutDevtools = {
        e2e_and_per_s: Math.round(u.e2eAndPerSecond),
        e2e_three_halves_and_per_s: Math.round(u.e2eThreeHalvesAndPerSecond),
        e2e_half_gates_and_per_s: Math.round(u.e2eHalfGatesAndPerSecond),
        ws_bytes_per_s: Math.round(u.wsBytesPerSecond),
        bytes_per_and: Number(u.bytesPerAnd.toFixed(3)),
        aes128_latency_ms: Number(u.aes128LatencyMs.toFixed(2)),
        links: u.links.map((l, i) => linkFigures(relays[i].link, l)),
        ...(u.sweep.length && sweepFigures(u.sweep)),
      };
      log(`without DevTools attached: end to end ${fmt(u.e2eAndPerSecond)} AND/s (SDK defaults), three-halves ${fmt(u.e2eThreeHalvesAndPerSecond)}, half-gates ${fmt(u.e2eHalfGatesAndPerSecond)}; raw WebSocket ${fmt(u.wsBytesPerSecond)} bytes/s, aes128 latency ${fmt(u.aes128LatencyMs)} ms`);
      for (const l of withoutDevtools.links) log(`  aes128 through --link ${l.link}: cold ${l.aes128_cold_ms} ms (2 RTT + ${l.cold_minus_2rtt_ms}), warm ${l.aes128_warm_ms} ms (RTT + ${l.warm_minus_rtt_ms}), GET /health ${l.rtt_measured_ms} ms`);
      for (const s of withoutDevtools.window_sweep ?? []) log(`  window ${fmt(s.window_bytes / (1 << 20))} MiB: ${fmt(s.and_per_s)} AND/s end to end (${fmt(s.of_best)} of the best; runs ${s.runs_and_per_s.map((v) => fmt(v)).join(', ')})`);
      if (withoutDevtools.window_sweep) log(`  smallest window within 90 % of the best: ${fmt(withoutDevtools.window_sweep_pick_bytes / (1 << 20))} MiB`);
    }
    const targets = { ...targetsOf(results), ...linkTargetsOf(overLinks), ...(withoutDevtools && linkTargetsOf(withoutDevtools.links, 'without_devtools_')) };
    for (const [name, t] of Object.entries(targets)) log(`${t.met ? 'MET   ' : 'MISSED'} ${name}: ${t.rule} (${t.detail})`);
    const machine = machineCpuReport(runs, andGates / targets.e2e_vs_ws.needed);
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
    for (const relay of relays) await relay.close();
    await garblet.close();
  }
}

/**
 * The authenticated engine's throughput per worker against the bound the issue sets, in one run
 * of a Chromium with no DevTools client (whose reporting of every WebSocket frame would take
 * the cores the engine's time counts): our wasm AES, then `synthetic` with
 * `--helper-and-gates` AND gates with no helper, with one turning its jobs down and with one
 * working ahead, `--rounds` of each. The bound is (AES blocks/s) ÷ (AES blocks per AND gate);
 * the engine computes, per AND gate at k = 4 and B = 4 (16 segments of 65,536), 3B + 1 = 13
 * correlated OTs each way — SoftSpoken's PRG 2^k/k = 4 blocks per OT as the receiver and
 * (2^k − 1)/k = 3.75 as the sender — the leaky ANDs' 3B hashes and the garbling hash's 4 as the
 * evaluator: 116.75 blocks.
 */
async function perWorker(garblet, web) {
  const k = 4;
  const bucket = 4;
  const blocksPerAnd = (3 * bucket + 1) * ((2 ** k) / k + (2 ** k - 1) / k) + 3 * bucket + 4;
  const u = await measureWithoutDevtools({ garblet, web, rounds, perWorkerAndGates: helperAndGates });
  const { share } = u;
  const bound = u.aesBlocksPerSecond / blocksPerAnd;
  const figures = {
    per_worker_and_gates: share.andGates,
    per_worker_wasm_aes_blocks_per_s: Math.round(u.aesBlocksPerSecond),
    per_worker_aes_blocks_per_and: blocksPerAnd,
    per_worker_bound_and_per_s: Math.round(bound),
    per_worker_engine_ns_per_and_without_helper: nsPerAnd(share, share.none.engineMs),
    per_worker_engine_ns_per_and_helper_declined: nsPerAnd(share, share.alone.engineMs),
    per_worker_engine_ns_per_and_with_helper: nsPerAnd(share, share.ahead.engineMs),
    per_worker_wall_ms_without_helper: Number(share.none.wallMs.toFixed(1)),
    per_worker_wall_ms_with_helper: Number(share.ahead.wallMs.toFixed(1)),
  };
  figures.per_worker_vs_bound = Number((1e9 / figures.per_worker_engine_ns_per_and_without_helper / bound).toFixed(3));
  figures.per_worker_met = figures.per_worker_vs_bound >= 0.5;
  log(`without DevTools attached: our wasm AES ${fmt(u.aesBlocksPerSecond)} blocks/s, ${fmt(blocksPerAnd, 5)} blocks per AND gate: a bound of ${fmt(bound)} AND/s per worker`);
  log(`  authenticated synthetic, ${fmt(share.andGates)} AND gates: the engine's own work ${fmt(figures.per_worker_engine_ns_per_and_without_helper)} ns per AND gate with no helper (${fmt(figures.per_worker_vs_bound)}× the bound), ${fmt(figures.per_worker_engine_ns_per_and_helper_declined)} with a helper turning its jobs down, ${fmt(figures.per_worker_engine_ns_per_and_with_helper)} with it working ahead; medians of ${rounds} runs of each`);
  log(`${figures.per_worker_met ? 'MET   ' : 'MISSED'} per_worker_vs_bound: the engine's AND/s with no helper >= 0.5 x (AES blocks/s / blocks per AND gate) (${fmt(figures.per_worker_vs_bound)}x)`);
  return figures;
}

/** Logs CPU profiles of in-page aes128 sessions in the standard and the authenticated mode. */
async function logProfiles(page, address) {
  for (const security of ['standard', 'authenticated']) {
    log(`CPU profile of in-page aes128 sessions in the ${security} mode, self time per session:`);
    for (const f of (await profileAesSessions(page, address, 20, security)).slice(0, 20)) log(`  ${f.msPerSession.toFixed(2).padStart(7)} ms  ${f.name.slice(0, 110)}`);
  }
  const { engineMs, functions } = await profileAuthenticatedEngine(page, address, helperAndGates);
  log(`CPU profile of an in-page engine computing authenticated synthetic, ${fmt(helperAndGates)} AND gates, its OT helper in a worker (${fmt(engineMs)} ms in the engine's calls), self time:`);
  for (const f of functions.slice(0, 25)) log(`  ${f.msPerSession.toFixed(0).padStart(7)} ms  ${f.name.slice(0, 110)}`);
}

/**
 * Private AES in the standard mode, the authenticated mode, and under cut-and-choose with each
 * garbling scheme (`aesSecurityCost`, `cncRuns` runs each), on the Bristol circuit (`aes128`),
 * and in the standard and the authenticated mode on the library's (`aes128_bp`): logs them, and
 * returns the median and p99 — the largest of so few runs — of the time from `run` to the
 * result, from `Garblet.connect`, and of the bytes both ways, as
 * `{aes128,aes128_bp}_{standard,authenticated,cnc}_{scheme}_…`.
 */
async function securityCosts(measure, address) {
  const figures = {};
  for (const [service, security, garbling] of [
    ['aes128', 'standard', 'half-gates'],
    ['aes128', 'authenticated', 'half-gates'],
    ['aes128_bp', 'standard', 'half-gates'],
    ['aes128_bp', 'authenticated', 'half-gates'],
    ['aes128', 'cut-and-choose', 'half-gates'],
    ['aes128', 'cut-and-choose', 'three-halves'],
  ]) {
    const samples = await measure('aesSecurityCost', address, security, garbling, cncRuns, service);
    const prefix = `${service}_${{ standard: 'standard', authenticated: 'authenticated', 'cut-and-choose': 'cnc' }[security]}_${garbling.replace('-', '_')}`;
    const of = (f) => {
      const values = samples.map(f).sort((a, b) => a - b);
      return { median: values[values.length >> 1], p99: values[Math.min(values.length - 1, Math.ceil(0.99 * values.length) - 1)] };
    };
    for (const [name, f] of [['ms', (s) => s.runMs], ['with_connect_ms', (s) => s.withConnectMs], ['bytes_total', (s) => s.sent + s.received]]) {
      const { median, p99 } = of(f);
      figures[`${prefix}_${name}_median`] = Number(median.toFixed(2));
      figures[`${prefix}_${name}_p99`] = Number(p99.toFixed(2));
    }
    log(`${service}, ${security}, ${garbling}, in Chromium: ${fmt(figures[`${prefix}_ms_median`])} ms median (p99 ${fmt(figures[`${prefix}_ms_p99`])}) from run to result, ${fmt(figures[`${prefix}_bytes_total_median`] / 1e6)} MB both ways (p99 ${fmt(figures[`${prefix}_bytes_total_p99`] / 1e6)}); ${cncRuns} runs on fresh connections`);
  }
  // The authenticated mode on the library's circuit against the Bristol one, fresh connections.
  const ratio = (key) => Number((figures[`aes128_bp_authenticated_half_gates_${key}_median`] / figures[`aes128_authenticated_half_gates_${key}_median`]).toFixed(3));
  figures.aes128_bp_vs_aes128_authenticated_ms = ratio('ms');
  figures.aes128_bp_vs_aes128_authenticated_bytes = ratio('bytes_total');
  log(`authenticated, aes128_bp against aes128: ${fmt(figures.aes128_bp_vs_aes128_authenticated_ms)}× the time, ${fmt(figures.aes128_bp_vs_aes128_authenticated_bytes)}× the bytes`);
  // The online phase of an authenticated run prepared ahead, beside a standard run, on one warm connection.
  for (const service of ['aes128', 'aes128_bp']) {
    const pairs = await measure('aesPreparedOnline', address, cncRuns, service);
    const mid = (f) => {
      const values = pairs.map(f).sort((a, b) => a - b);
      return values[values.length >> 1];
    };
    figures[`${service}_standard_warm_ms_median`] = Number(mid((p) => p.standardMs).toFixed(2));
    figures[`${service}_authenticated_online_ms_median`] = Number(mid((p) => p.onlineMs).toFixed(2));
    figures[`${service}_authenticated_online_vs_standard_warm`] = Number(mid((p) => p.onlineMs / p.standardMs).toFixed(3));
    figures[`${service}_authenticated_online_bytes_total_median`] = mid((p) => p.onlineBytes);
    log(`${service} on a warm connection in Chromium: standard ${fmt(figures[`${service}_standard_warm_ms_median`])} ms, authenticated with its preprocessing done ahead ${fmt(figures[`${service}_authenticated_online_ms_median`])} ms online (${fmt(figures[`${service}_authenticated_online_vs_standard_warm`])}× standard, ${fmt(figures[`${service}_authenticated_online_bytes_total_median`] / 1e6)} MB); medians of ${cncRuns} pairs`);
  }
  // The OT helper's share of the authenticated mode's work in the browser, on a long computation.
  const share = await measure('helperShare', address, helperAndGates, rounds);
  figures.authenticated_synthetic_helper_and_gates = share.andGates;
  figures.authenticated_synthetic_engine_ns_per_and_alone = nsPerAnd(share, share.alone.engineMs);
  figures.authenticated_synthetic_engine_ns_per_and_with_helper = nsPerAnd(share, share.ahead.engineMs);
  figures.authenticated_synthetic_engine_ns_per_and_without_helper = nsPerAnd(share, share.none.engineMs);
  figures.authenticated_synthetic_engine_speedup_with_helper = Number((share.alone.engineMs / share.ahead.engineMs).toFixed(3));
  figures.authenticated_synthetic_wall_ms_alone = Number(share.alone.wallMs.toFixed(1));
  figures.authenticated_synthetic_wall_ms_with_helper = Number(share.ahead.wallMs.toFixed(1));
  figures.authenticated_synthetic_wall_speedup_with_helper = Number((share.alone.wallMs / share.ahead.wallMs).toFixed(3));
  figures.authenticated_synthetic_wall_ms_without_helper = Number(share.none.wallMs.toFixed(1));
  log(`authenticated synthetic, ${fmt(share.andGates)} AND gates in Chromium: the engine's own work ${fmt(figures.authenticated_synthetic_engine_ns_per_and_alone)} ns per AND gate alone, ${fmt(figures.authenticated_synthetic_engine_ns_per_and_with_helper)} with the OT helper working ahead (${fmt(figures.authenticated_synthetic_engine_speedup_with_helper)}×), ${fmt(figures.authenticated_synthetic_engine_ns_per_and_without_helper)} with no helper (one worker); wall ${fmt(share.alone.wallMs)}, ${fmt(share.ahead.wallMs)} and ${fmt(share.none.wallMs)} ms (${fmt(figures.authenticated_synthetic_wall_speedup_with_helper)}× with the helper), server CPU ${fmt(share.alone.serverMs)}, ${fmt(share.ahead.serverMs)} and ${fmt(share.none.serverMs)} ms; medians of ${rounds} alternating runs of each on fresh connections`);
  return figures;
}

/** Nanoseconds per AND gate of `ms` milliseconds over a `helperShare` result's AND gates. */
function nsPerAnd(share, ms) {
  return Number(((ms * 1e6) / share.andGates).toFixed(1));
}

/** The element of `xs` whose `key` is the median (the upper one of an even count). */
function medianBy(xs, key) {
  return [...xs].sort((a, b) => key(a) - key(b))[xs.length >> 1];
}

/**
 * The machine's CPU over the end-to-end and raw runs (medians over the rounds), and the cores
 * an end-to-end run needs to fit `targetSeconds`.
 */
function machineCpuReport(runs, targetSeconds) {
  if (runs.some((r) => !r.e2eCpu || !r.rawCpu)) return undefined;
  const median = (f) => f(medianBy(runs, f));
  const e2e = { seconds: median((r) => r.e2eCpu.seconds), busy: median((r) => r.e2eCpu.busy) };
  const raw = { seconds: median((r) => r.rawCpu.seconds), busy: median((r) => r.rawCpu.busy) };
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
