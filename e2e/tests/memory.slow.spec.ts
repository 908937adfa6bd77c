import { expect, test, type Page } from '@playwright/test';
import { runToCompletion } from '../support/demo-page';
import { openDemo } from '../support/servers';

/**
 * The browser's memory stays flat however long the circuit: the evaluator holds the credit
 * window, the live wire labels and one batch, never the circuit. Each run gets a fresh
 * WebAssembly instance (a session of its own), and linear memory only grows, so its size at the
 * end of a run is the most that run ever needed.
 */
const MiB = 1 << 20;

async function wasmMemoryAfter(page: Page, andGates: number, timeout: number): Promise<number> {
  await page.getByTestId('param-and_gates').fill(String(andGates));
  await runToCompletion(page, timeout);
  const progress = page.getByTestId('progress');
  expect(Number(await progress.getAttribute('data-and-gates'))).toBe(andGates);
  return Number(await progress.getAttribute('data-wasm-memory'));
}

test('the evaluator’s WebAssembly memory is the same at 10^6 and 10^8 AND gates @slow', async ({ page }) => {
  test.setTimeout(20 * 60_000);
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('synthetic');
  await page.getByTestId('input-evaluator').fill('0');
  const small = await wasmMemoryAfter(page, 1e6, 60_000);
  const large = await wasmMemoryAfter(page, 1e8, 18 * 60_000);
  console.log(`WebAssembly memory: ${(small / MiB).toFixed(2)} MiB after 10^6 AND gates, ${(large / MiB).toFixed(2)} MiB after 10^8`);
  expect(small).toBeGreaterThan(0);
  // A page or two of slack (64 KiB each) for allocator noise; growth with the circuit would be GiBs.
  expect(large - small).toBeLessThanOrEqual(2 * 64 * 1024);
});

test('in the authenticated mode the evaluator’s WebAssembly memory is bounded, not proportional to the circuit, from 10^6 to 10^7 AND gates @slow', async ({ page }) => {
  test.setTimeout(15 * 60_000);
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('synthetic');
  await page.getByTestId('input-evaluator').fill('0');
  await page.getByTestId('protect').check();
  await page.getByTestId('protect-authenticated').check();
  // The circuit streams in segments of 65,536 AND gates: 16 of them, then 153.
  const small = await wasmMemoryAfter(page, 1e6, 3 * 60_000);
  const large = await wasmMemoryAfter(page, 1e7, 12 * 60_000);
  console.log(`WebAssembly memory, authenticated: ${(small / MiB).toFixed(2)} MiB after 10^6 AND gates, ${(large / MiB).toFixed(2)} MiB after 10^7`);
  expect(small).toBeGreaterThan(0);
  // The live heap is flat across segments (wasm-core/tests/authenticated_memory.rs), but the
  // allocator's high-water mark still creeps (83 and 108 MiB when this was written): bounded,
  // where holding the circuit would take ten times the memory for ten times the gates.
  expect(large).toBeLessThanOrEqual(1.5 * small);
});
