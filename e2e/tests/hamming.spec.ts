import { expect, test } from '@playwright/test';
import { ENROLLED_IRIS_HEX } from '../../web-client/src/demo-values';
import { expectStats, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { popcount } from '../support/references';
import { openDemo } from '../support/servers';
import { serverInteger, serverParam } from '../support/server-values';

const yourCode = async (page: import('@playwright/test').Page) => BigInt(await page.getByTestId('iris-hex').inputValue());

test('the page’s demo iris template is the one the server enrolled', () => {
  expect(BigInt(ENROLLED_IRIS_HEX)).toBe(serverInteger('hamming', 'x'));
  expect(serverInteger('hamming_threshold', 'x')).toBe(serverInteger('hamming', 'x'));
});

test('Hamming distance of a drawn iris code is the popcount of the XOR', async ({ page }) => {
  await openDemo(page, 'hamming');
  await waitForRoles(page);
  await page.getByTestId('iris-random').click();
  await page.getByText('Your code as hex').click();
  const before = await yourCode(page);

  // Three clicks on the strip flip three bits (cells are 10 px: ring 0 angle 0, ring 4 angle 10, ring 14 angle 59).
  const strip = page.getByTestId('iris-canvas');
  for (const [x, y] of [[5, 5], [105, 45], [595, 145]]) await strip.click({ position: { x, y } });
  const mine = await yourCode(page);
  expect(mine ^ before).toBe((1n << 0n) | (1n << 250n) | (1n << 899n));

  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(popcount(mine ^ serverInteger('hamming', 'x')));
  await expectStats(page, 896);
});

test('Hamming threshold: a re-scan of the enrolled eye matches, a different code does not', async ({ page }) => {
  const enrolled = serverInteger('hamming_threshold', 'x');
  const t = serverParam('hamming_threshold', 't');
  await openDemo(page, 'hamming');
  await page.getByTestId('mode-hamming_threshold').check();
  await waitForRoles(page);
  await expect(page.getByTestId('roles')).toContainText(`t = ${t}`);

  await page.getByTestId('iris-rescan').click();
  await page.getByText('Your code as hex').click();
  const rescan = await yourCode(page);
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(popcount(rescan ^ enrolled) <= t ? '1' : '0');
  expect(popcount(rescan ^ enrolled)).toBeLessThanOrEqual(t); // the demo's re-scan is meant to match

  // Every bit of the template inverted: distance 900.
  const inverted = enrolled ^ ((1n << 900n) - 1n);
  await page.getByTestId('iris-hex').fill(`0x${inverted.toString(16)}`);
  await runToCompletion(page);
  expect(await resultValue(page)).toBe('0');
  await expect(page.getByTestId('result-value')).toHaveText('no match');
});
