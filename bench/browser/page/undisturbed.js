/**
 * The network measurements again, in a Chromium that no DevTools client is attached to
 * (see ../undisturbed.mjs): the page runs them by itself and posts the results to `report`.
 * Or, asked for, the per-worker measurement or one long `synthetic` run of the memory benchmark
 * (../memory.mjs) instead.
 * Under Playwright, DevTools reports every WebSocket frame to the driver, and that work takes
 * most of the machine during a transfer; here the numbers are the browser's own.
 */
import { kernelThroughput } from './kernels.js';
import { aesColdWarm, aesLatency, endToEndThroughput, rawWebSocketThroughput, syntheticWasmMemory, windowSweep } from './network.js';
import { helperShare } from './phases.js';

const query = new URLSearchParams(location.search);
const server = query.get('server');
const andGates = Number(query.get('andGates'));
const latencyRuns = Number(query.get('latencyRuns'));
const frame = Number(query.get('frame'));
const linkRuns = Number(query.get('linkRuns'));
const rounds = Number(query.get('rounds'));
/** Relays in front of the server (addresses), one per emulated link; none unless asked for. */
const links = query.get('links')?.split(',').filter(Boolean) ?? [];
/** Starting windows (bytes) to sweep over; none unless asked for. */
const sweep = query.get('sweep')?.split(',').filter(Boolean).map(Number) ?? [];
/** AND gates of the per-worker measurement, which then runs alone; 0 for the network ones. */
const perWorker = Number(query.get('perWorker') ?? 0);
/** AND gates of the memory benchmark's run (in the mode `security`), which then runs alone. */
const memoryAndGates = Number(query.get('memoryAndGates') ?? 0);
const post = (result) => fetch(query.get('report'), { method: 'POST', body: JSON.stringify(result) });

if (memoryAndGates > 0) {
  try {
    await post(await syntheticWasmMemory(server, memoryAndGates, query.get('security')));
  } catch (e) {
    await post({ error: String(e?.message ?? e) });
  }
} else if (perWorker > 0) {
  // Our wasm AES, then the authenticated engine with no helper, with one turning its jobs
  // down and with one working ahead, `rounds` of each.
  try {
    const kernels = await kernelThroughput();
    const share = await helperShare(server, perWorker, rounds);
    await post({ aesBlocksPerSecond: kernels.ours, share });
  } catch (e) {
    await post({ error: String(e?.message ?? e) });
  }
} else {
  await networkMeasurements();
}

/** The network measurements: latency, end to end, raw WebSocket, links, window sweep. */
async function networkMeasurements() {
  try {
    await aesLatency(server, latencyRuns); // warm-up: workers, and the wasm tiered up
    const latency = await aesLatency(server, latencyRuns);
    const halfGates = await endToEndThroughput(server, andGates, undefined, 'half-gates');
    const threeHalves = await endToEndThroughput(server, andGates, undefined, 'three-halves');
    const e2e = await endToEndThroughput(server, andGates);
    const raw = await rawWebSocketThroughput(server, Math.round(andGates * e2e.bytesPerAnd), frame);
    const overLinks = [];
    for (const relay of links) overLinks.push(await aesColdWarm(relay, linkRuns));
    const swept = sweep.length ? await windowSweep(server, andGates, sweep, rounds) : [];
    await post({
      aes128LatencyMs: latency.medianMs,
      e2eAndPerSecond: e2e.andPerSecond,
      e2eHalfGatesAndPerSecond: halfGates.andPerSecond,
      e2eThreeHalvesAndPerSecond: threeHalves.andPerSecond,
      wsBytesPerSecond: raw.bytesPerSecond,
      bytesPerAnd: e2e.bytesPerAnd,
      links: overLinks.map(({ samples, ...medians }) => medians),
      sweep: swept,
    });
  } catch (e) {
    await post({ error: String(e?.message ?? e) });
  }
}
