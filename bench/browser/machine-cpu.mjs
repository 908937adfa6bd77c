/**
 * The whole machine's CPU time over a measurement (Linux `/proc/stat`): every process counts —
 * Chromium's, Playwright's, the server — because on a machine of two cores they all share them.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** `/proc/stat` counts in USER_HZ ticks, 100 per second on Linux. */
const TICKS_PER_SECOND = 100;

function snapshot() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    const ticks = fields.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
    const idle = ticks[3] + ticks[4];
    const total = ticks.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined; // not Linux
  }
}

/** Runs `f`; resolves to its result and the CPU the machine spent meanwhile (if known). */
export async function withMachineCpu(f) {
  const before = snapshot();
  const result = await f();
  const after = snapshot();
  if (!before || !after || after.total === before.total) return { result };
  const busy = after.busy - before.busy;
  return { result, cpu: { seconds: busy / TICKS_PER_SECOND, busy: busy / (after.total - before.total) } };
}

export const cores = availableParallelism();
