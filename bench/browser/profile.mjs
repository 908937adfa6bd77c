/**
 * A CPU profile, through the Chrome DevTools protocol, of the page's thread while it runs
 * aes128 sessions in-thread (phases.js): self time per function — wasm functions by their Rust
 * names — to tell the base OT's curve arithmetic from hashing, evaluation and the browser.
 */

/** Self time of each function in milliseconds per session in `security`, largest first. */
export async function profileAesSessions(page, server, sessions = 20, security = 'standard') {
  const profile = await profiled(page, 100, () => page.evaluate(([s, n, mode]) => window.garbletBench.aesTimeline(s, n, mode), [server, sessions, security]));
  return selfTimes(profile, sessions);
}

/**
 * Self time of each function in milliseconds, largest first, of the engine of one authenticated
 * `synthetic` computation of `andGates` AND gates run on the page's thread, its OT helper in a
 * worker (whose time does not show): what the engine's worker does once the helper took the
 * OT streams.
 */
export async function profileAuthenticatedEngine(page, server, andGates) {
  let engineMs;
  const profile = await profiled(page, 500, async () => (engineMs = await page.evaluate(([s, n]) => window.garbletBench.authenticatedInPage(s, n), [server, andGates])));
  return { engineMs, functions: selfTimes(profile, 1) };
}

/** The CPU profile of the page's thread while `work` runs, sampled every `micros`. */
async function profiled(page, micros, work) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: micros });
  await cdp.send('Profiler.start');
  await work();
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  return profile;
}

/** Self time per function of `profile`, in milliseconds per one of `sessions`, largest first. */
function selfTimes(profile, sessions) {

  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map();
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id).callFrame;
    const name = frame.functionName || `(${frame.url.split('/').pop() || 'anonymous'})`;
    selfMicros.set(name, (selfMicros.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return [...selfMicros]
    .map(([name, micros]) => ({ name: shortName(name), msPerSession: micros / 1000 / sessions }))
    .sort((a, b) => b.msPerSession - a.msPerSession);
}

/** Rust symbols without their hash and module noise: `curve25519_dalek::…::FieldElement2625::mul`. */
function shortName(name) {
  return name.replace(/::h[0-9a-f]{16}$/, '').replace(/^<(.+) as (.+)>::/, '<$1 as …>::');
}
