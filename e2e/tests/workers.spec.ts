import { expect, test } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { finishedState, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128 } from '../support/references';
import { openDemo } from '../support/servers';
import { serverBytes } from '../support/server-values';

// The SDK's engine has two helper workers (ts-sdk/src/browser.ts): the socket worker, which it
// cannot do without, and the OT helper, which it can. Neither may leave a run hanging.

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
