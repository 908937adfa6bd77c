/**
 * The benchmark page's entry: puts the measurements on `window.garbletBench` for run.mjs (and
 * memory.mjs), which call them one at a time.
 */
import { kernelThroughput } from './kernels.js';
import { aesColdWarm, aesLatency, aesPreparedOnline, aesSecurityCost, endToEndThroughput, rawWebSocketThroughput, syntheticWasmMemory } from './network.js';
import { aesTimeline, authenticatedInPage, helperShare, wasmSetup, workerTimeline } from './phases.js';

window.garbletBench = { kernelThroughput, rawWebSocketThroughput, endToEndThroughput, syntheticWasmMemory, aesLatency, aesSecurityCost, aesPreparedOnline, aesColdWarm, aesTimeline, workerTimeline, wasmSetup, helperShare, authenticatedInPage };
document.getElementById('status').textContent = 'ready';
