/**
 * The benchmark page's entry: puts the measurements on `window.garbletBench` for run.mjs,
 * which calls them one at a time.
 */
import { kernelThroughput } from './kernels.js';
import { aesColdWarm, aesLatency, aesPreparedOnline, aesSecurityCost, endToEndThroughput, rawWebSocketThroughput } from './network.js';
import { aesTimeline, authenticatedInPage, helperShare, wasmSetup, workerTimeline } from './phases.js';

window.garbletBench = { kernelThroughput, rawWebSocketThroughput, endToEndThroughput, aesLatency, aesSecurityCost, aesPreparedOnline, aesColdWarm, aesTimeline, workerTimeline, wasmSetup, helperShare, authenticatedInPage };
document.getElementById('status').textContent = 'ready';
