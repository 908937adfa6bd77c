/**
 * "Protect me from a cheating server" on the private-AES and Hamming pages: with the switch on the
 * run computes in the cut-and-choose mode and gives the reference result, and the cost table
 * shows the last run of each mode side by side — cut-and-choose's bytes above standard's.
 */
import { expect, test, type Page } from '@playwright/test';
import { FIPS197 } from '../../web-client/src/demo-values';
import { resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128, popcount } from '../support/references';
import { openDemo } from '../support/servers';
import { serverBytes, serverInteger } from '../support/server-values';

interface Cost {
  ms: number;
  sent: number;
  received: number;
}

/** The cost table's row for `mode`, as raw numbers (its data attributes). */
async function cost(page: Page, mode: 'standard' | 'cut-and-choose'): Promise<Cost> {
  const row = page.getByTestId(`cost-${mode}`);
  await expect(row).toHaveAttribute('data-ms', /./);
  const read = async (name: string) => Number(await row.getAttribute(`data-${name}`));
  return { ms: await read('ms'), sent: await read('sent'), received: await read('received') };
}

/** Both rows filled, cut-and-choose the costlier in bytes both ways; the numbers for the report. */
async function expectCosts(page: Page, what: string): Promise<void> {
  const standard = await cost(page, 'standard');
  const cnc = await cost(page, 'cut-and-choose');
  expect(cnc.received).toBeGreaterThan(10 * standard.received);
  expect(cnc.sent).toBeGreaterThan(standard.sent);
  await expect(page.getByTestId('cost-ratio')).toBeVisible();
  const line = (c: Cost) => `${c.ms.toFixed(0)} ms, ${c.sent} B sent, ${c.received} B received`;
  test.info().annotations.push({ type: what, description: `standard ${line(standard)}; cut-and-choose ${line(cnc)}` });
}

async function protect(page: Page, on: boolean): Promise<void> {
  const toggle = page.getByTestId('protect');
  await expect(toggle).toBeEnabled();
  await toggle.setChecked(on);
}

test('private AES with the switch on gives FIPS-197 in cut-and-choose, and the cost table compares both modes', async ({ page }) => {
  const key = serverBytes('aes128', 'key');
  const fips = aes128(key, Buffer.from(FIPS197.plaintext, 'hex')).toString('hex');
  await openDemo(page, 'aes');
  await waitForRoles(page);
  await expect(page.getByTestId('cost-standard')).toContainText('not run yet');

  await protect(page, false);
  await runToCompletion(page); // the page starts with FIPS-197's plaintext
  expect(await resultValue(page)).toBe(fips);
  await expect(page.getByTestId('stats')).toContainText('standard mode');

  await protect(page, true);
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(fips);
  if (key.toString('hex') === FIPS197.key) expect(fips).toBe(FIPS197.ciphertext);
  await expect(page.getByTestId('stats')).toContainText('cut-and-choose mode');
  await expect(page.getByTestId('recovered')).toBeHidden();
  await expectCosts(page, 'aes128');
});

test('Hamming distance with the switch on is the popcount of the XOR, and costs more than standard', async ({ page }) => {
  await openDemo(page, 'hamming');
  await waitForRoles(page);
  await page.getByTestId('iris-random').click();
  await page.getByText('Your code as hex').click();
  const mine = BigInt(await page.getByTestId('iris-hex').inputValue());
  const expected = popcount(mine ^ serverInteger('hamming', 'x'));

  await protect(page, true);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(expected);
  await expect(page.getByTestId('stats')).toContainText('cut-and-choose mode');

  await protect(page, false);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(expected);
  await expectCosts(page, 'hamming');
});

test('the switch is off for a service that offers only the standard mode, and only on the AES and Hamming pages', async ({ page }) => {
  await openDemo(page, 'aes');
  await page.getByTestId('circuit-aes128_bp').check();
  await waitForRoles(page);
  await expect(page.getByTestId('protect-note')).toContainText('standard mode only');
  await expect(page.getByTestId('protect')).toBeDisabled();
  await page.getByTestId('circuit-aes128').check();
  await expect(page.getByTestId('protect')).toBeEnabled();

  for (const other of ['edit-distance', 'smith-waterman', 'any']) {
    await openDemo(page, other);
    await expect(page.locator('.run-panel')).toBeVisible();
    await expect(page.getByTestId('protect')).toHaveCount(0);
  }
});
