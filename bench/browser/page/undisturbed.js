/**
 * The network measurements again, in a Chromium that no DevTools client is attached to
 * (see ../undisturbed.mjs): the page runs them by itself and posts the results to `report`.
 * Under Playwright, DevTools reports every WebSocket frame to the driver, and that work takes
 * most of the machine during a transfer; here the numbers are the browser's own.
 */
import { aesLatency, endToEndThroughput, rawWebSocketThroughput } from './network.js';

const query = new URLSearchParams(location.search);
const server = query.get('server');
const andGates = Number(query.get('andGates'));
const latencyRuns = Number(query.get('latencyRuns'));
const frame = Number(query.get('frame'));
const post = (result) => fetch(query.get('report'), { method: 'POST', body: JSON.stringify(result) });

try {
  await aesLatency(server, latencyRuns); // warm-up: workers, and the wasm tiered up
  const latency = await aesLatency(server, latencyRuns);
  const e2e = await endToEndThroughput(server, andGates);
  const raw = await rawWebSocketThroughput(server, Math.round(andGates * e2e.bytesPerAnd), frame);
  await post({ aes128LatencyMs: latency.medianMs, e2eAndPerSecond: e2e.andPerSecond, wsBytesPerSecond: raw.bytesPerSecond, bytesPerAnd: e2e.bytesPerAnd });
} catch (e) {
  await post({ error: String(e?.message ?? e) });
}
