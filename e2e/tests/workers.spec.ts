import { expect, test, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { garbletBinary } from '../../scripts/stack.mjs';
import { finishedState, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128 } from '../support/references';
import { openDemo } from '../support/servers';
import { serverBytes } from '../support/server-values';

// The SDK's engine has two helper workers (ts-sdk/src/browser.ts): the socket worker, which it
// cannot do without, and the OT helper, which it can. Neither may leave a run hanging.

/**
 * `synthetic` with `andGates` AND gates (segments of 65,536 in the authenticated mode) on the
 * any-service page, in the authenticated mode, the evaluator's input `input`: the output beside
 * the plaintext evaluation's (`garblet circuit eval`, the server's input 0 as configured).
 */
async function authenticatedSynthetic(page: Page, andGates: number, input: string): Promise<{ out: string; expected: string }> {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('synthetic');
  await waitForRoles(page);
  await page.getByTestId('param-and_gates').fill(String(andGates));
  await page.getByTestId('input-evaluator').fill(input);
  await page.getByTestId('protect').check();
  await page.getByTestId('protect-authenticated').check();
  await runToCompletion(page, 120_000);
  await expect(page.getByTestId('stats')).toContainText('authenticated mode)');
  const out = BigInt((await page.getByTestId('output-out').getAttribute('data-value')) ?? 'NaN').toString(16);
  const plaintext = execFileSync(garbletBinary, ['circuit', 'eval', '--builtin', 'synthetic', '--param', `and_gates=${andGates}`, '--param', 'width=512', '--input', '0', '--input', input], { encoding: 'utf8' });
  const expected = BigInt(/^out = (0x[0-9a-f]+)$/m.exec(plaintext)?.[1] ?? 'NaN').toString(16);
  return { out, expected };
}

test('across segments of the authenticated mode the OT helper works ahead in both directions, and the output is the plaintext one', async ({ page }) => {
  // Three segments: the helper's sums of the server's bits and its whole chunks of the
  // browser's own random bits serve the second and third (wasm-core/src/ahead.rs).
  const { out, expected } = await authenticatedSynthetic(page, 140_000, '0x0123456789abcdef0123456789abcdef');
  expect(out).toBe(expected);
  expect(out).not.toBe('0');
});

test('without its OT helper the authenticated mode computes every stream itself, and the output is the plaintext one', async ({ page }) => {
  await page.route(/ot-worker[^/]*\.js$/, (route) => route.abort());
  const { out, expected } = await authenticatedSynthetic(page, 140_000, '0xfedcba9876543210fedcba9876543210');
  expect(out).toBe(expected);
});

test('without its OT helper the engine does all the base OTs itself, and the result is right', async ({ page }) => {
  await page.route(/ot-worker[^/]*\.js$/, (route) => route.abort());
  await openDemo(page, 'aes');
  await page.getByTestId('circuit-aes128').check();
  await waitForRoles(page);
  const block = randomBytes(16);
  await page.getByTestId('plaintext').fill(block.toString('hex'));
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(aes128(serverBytes('aes128', 'key'), block).toString('hex'));
});

test('without its socket worker the run ends with an error instead of waiting', async ({ page }) => {
  await page.route(/socket-worker[^/]*\.js$/, (route) => route.abort());
  await openDemo(page, 'aes');
  await page.getByTestId('run').click();
  expect(await finishedState(page, 20_000)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('Cannot reach the server');
});
