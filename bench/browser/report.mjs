/** The benchmark's targets and the latency breakdown, for run.mjs. */

const fmt = (v) => Number(v.toPrecision(3)).toLocaleString('en-US');
const ms = (v) => `${v.toFixed(1)} ms`;

/** A target: the rule, whether `value` meets `needed`, and their ratio. */
const target = (value, needed, atMost, rule, detail) => ({ rule, value, needed, ratio: Number((value / needed).toFixed(3)), met: atMost ? value <= needed : value >= needed, detail });

/** Each target: the rule, whether it is met, and the ratio of the value to what it needs. */
export function targetsOf(r) {
  const e2eNeeded = 0.7 * (r.ws_bytes_per_s / r.bytes_per_and);
  return {
    ...kernelTargetsOf(r),
    e2e_vs_ws: target(r.e2e_and_per_s, e2eNeeded, false, 'e2e AND/s >= 0.7 x (ws bytes/s / bytes per AND)', `${fmt(r.e2e_and_per_s)} vs ${fmt(e2eNeeded)}`),
    aes128_latency: target(r.aes128_latency_ms, 25, true, 'aes128 latency <= 25 ms', `${r.aes128_latency_ms} ms`),
  };
}

/** The targets of the kernels in the page (AES, the evaluators, the OT extension). */
export function kernelTargetsOf(r) {
  const evalNeeded = 0.8 * (r.wasm_aes_blocks_per_s / 2);
  return {
    wasm_aes_vs_crate: target(r.wasm_aes_blocks_per_s / r.aes_crate_wasm_blocks_per_s, 1.5, false, 'ours / aes crate >= 1.5', `${fmt(r.wasm_aes_blocks_per_s / r.aes_crate_wasm_blocks_per_s)}x`),
    eval_vs_aes: target(r.eval_and_per_s, evalNeeded, false, 'eval AND/s >= 0.8 x (our AES blocks/s / 2)', `${fmt(r.eval_and_per_s)} vs ${fmt(evalNeeded)}`),
    eval_vs_fixed_key: target(r.eval_vs_fixed_key, 1.1, true, 'half-gates eval time with the instance-keyed hash / with the fixed-key hash <= 1.10', `${r.eval_vs_fixed_key}x`),
    three_halves_eval_vs_fixed_key: target(r.three_halves_eval_vs_fixed_key, 1.1, true, 'three-halves eval time with the instance-keyed hash / with the fixed-key hash <= 1.10', `${r.three_halves_eval_vs_fixed_key}x`),
    ...otTargetsOf(r),
  };
}

/** SoftSpoken's k measured in the page, and the default. */
const OT_KS = [1, 2, 4, 8];
const DEFAULT_K = 4;

/**
 * The OT extension's targets: at every k, each role with its checks at least half the in-page
 * AES rate over that role's PRG blocks per OT (2^k/k for the receiver, which expands every
 * leaf, (2^k - 1)/k for the sender, which lacks one); with its checks at least 0.75 of itself
 * without them; and at the default k at least 4 M OT/s in both roles.
 */
function otTargetsOf(r) {
  const targets = {};
  for (const k of OT_KS) {
    for (const [role, blocksPerOt] of [['receiver', 2 ** k / k], ['sender', (2 ** k - 1) / k]]) {
      const rate = r[`wasm_cot_k${k}_${role}_per_s`];
      const bound = r.wasm_aes_blocks_per_s / blocksPerOt;
      targets[`cot_k${k}_${role}_vs_aes`] = target(rate, 0.5 * bound, false, `k = ${k} ${role} OT/s >= 0.5 x (AES blocks/s / ${fmt(blocksPerOt)} blocks per OT)`, `${fmt(rate)} vs ${fmt(0.5 * bound)}`);
      const bare = r[`wasm_cot_k${k}_${role}_unchecked_per_s`];
      targets[`cot_k${k}_${role}_checked_vs_unchecked`] = target(rate / bare, 0.75, false, `k = ${k} ${role}: checked / unchecked >= 0.75`, `${fmt(rate / bare)}x`);
    }
  }
  const slower = Math.min(r[`wasm_cot_k${DEFAULT_K}_receiver_per_s`], r[`wasm_cot_k${DEFAULT_K}_sender_per_s`]);
  targets.cot_default_k = target(slower, 4e6, false, `k = ${DEFAULT_K} (the default): the slower role >= 4 M OT/s`, `${fmt(slower)} OT/s`);
  return targets;
}

/** Prints where one private AES block's time goes. */
export function printPhases(log, latency, { worker, wasm, timeline }) {
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  log('where the aes128 latency goes (medians):');
  log(`  through the SDK: connect ${ms(median(latency.samples.map((s) => s.connectMs)))} + run ${ms(median(latency.samples.map((s) => s.runMs)))}`);
  log(`  wasm: compiled once per page ${ms(wasm.compileMs)} (${fmt(wasm.bytes)} bytes); instantiated per session ${ms(wasm.instantiateMs)}`);
  log('  the SDK worker\'s steps, from `new Worker` (fresh) or from posting to a worker that ran sessions before (warm):');
  const w = [
    ['modulesLoaded', 'worker running, its modules loaded'],
    ['messageReceived', 'message received'],
    ['wasmInstantiated', 'wasm instantiated'],
    ['socketOpen', 'WebSocket open'],
    ['ready', 'ready (hellos crossed, catalog)'],
    ['result', 'aes128 result'],
  ];
  const before = { fresh: 0, warm: 0 };
  for (const [key, label] of w) {
    const cell = (kind) => {
      const t = worker[kind][key];
      if (t < 0) return ' '.repeat(21); // a warm worker loaded its modules before the start
      const text = `${ms(t).padStart(9)} (+${ms(t - before[kind]).padStart(8)})`;
      before[kind] = t;
      return text;
    };
    log(`    fresh ${cell('fresh')}   warm ${cell('warm')}  ${label}`);
  }
  printTimeline(log, timeline, `  the same protocol in the page's thread (${timeline.runs.length} runs), from the start:`);
}

/** Prints the median protocol timeline of in-thread aes128 runs (`aesTimeline` in page/phases.js) under `heading`. */
export function printTimeline(log, timeline, heading) {
  const t = timeline.timeline;
  log(heading);
  const steps = [
    ['socketOpen', 'WebSocket open'],
    ['helloSent', 'hello sent'],
    ['serverHello', 'server hello received (base-OT points, catalog)'],
    ['ready', 'ready (catalog)'],
    ['computeSent', 'request sent'],
    ['otSent', 'base OT and OT extension done and sent (the stream arrives meanwhile)'],
    ['firstData', 'first garbled data handled'],
    ['lastData', `last garbled data handled (${timeline.dataFrames} Data frames)`],
    ['corrections', 'label corrections received; buffered data evaluated'],
    ['done', 'Done received'],
    ['result', 'result'],
  ];
  let previous = 0;
  for (const [key, label] of steps) {
    log(`    ${ms(t[key]).padStart(9)}  (+${ms(t[key] - previous).padStart(8)})  ${label}`);
    previous = t[key];
  }
  const e = timeline.engineMs;
  log(`  engine (wasm) time inside frames: server hello ${ms(e.serverHello)}, data ${ms(e.data)}, corrections (evaluating what waited) ${ms(e.corrections)}, done ${ms(e.done)}`);
}

/** A link's round-trip time in milliseconds from its RATE,RTT specification (`1gbit,10ms`). */
export function rttOf(link) {
  const m = /,\s*([\d.]+)\s*(us|ms|s)$/.exec(link);
  if (!m) throw new Error(`${link} is not RATE,RTT (e.g. 1gbit,10ms)`);
  return Number(m[1]) * { us: 1e-3, ms: 1, s: 1e3 }[m[2]];
}

/** The latency goals over an emulated link: cold <= 2 RTT + 25 ms, warm <= RTT + 10 ms. */
export function linkTargetsOf(links, prefix = '') {
  const targets = {};
  for (const l of links) {
    const cold = 2 * l.rtt_ms + 25;
    const warm = l.rtt_ms + 10;
    const target = (value, needed, rule) => ({ rule, value, needed, ratio: Number((value / needed).toFixed(3)), met: value <= needed, detail: `${value} ms over ${l.link}` });
    targets[`${prefix}aes128_cold_${l.rtt_ms}ms`] = target(l.aes128_cold_ms, cold, 'aes128 cold <= 2 RTT + 25 ms');
    targets[`${prefix}aes128_warm_${l.rtt_ms}ms`] = target(l.aes128_warm_ms, warm, 'aes128 warm <= RTT + 10 ms');
  }
  return targets;
}

/** A link's latency figures for the JSON report, from `aesColdWarm`'s medians. */
export function linkFigures(link, { coldMs, warmMs, rttMs }) {
  const rtt = rttOf(link);
  const round = (v) => Number(v.toFixed(2));
  return { link, rtt_ms: rtt, rtt_measured_ms: round(rttMs), aes128_cold_ms: round(coldMs), aes128_warm_ms: round(warmMs), cold_minus_2rtt_ms: round(coldMs - 2 * rtt), warm_minus_rtt_ms: round(warmMs - rtt) };
}

/**
 * The window sweep's figures: each starting window's median end-to-end rate, and the smallest
 * window whose median reaches 90 % of the best one's.
 */
export function sweepFigures(sweep) {
  const best = Math.max(...sweep.map((s) => s.median));
  const pick = sweep.filter((s) => s.median >= 0.9 * best).sort((a, b) => a.window - b.window)[0];
  return {
    window_sweep: sweep.map((s) => ({ window_bytes: s.window, and_per_s: Math.round(s.median), of_best: Number((s.median / best).toFixed(3)), runs_and_per_s: s.andPerSecond.map(Math.round) })),
    window_sweep_best_and_per_s: Math.round(best),
    window_sweep_pick_bytes: pick.window,
  };
}
