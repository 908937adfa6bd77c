/**
 * The page in the user's terms: a mistake is refused with the sentence the SDK and the command
 * line say for it (ts-sdk/test/messages.test.mjs holds those two to the same words), a wide
 * output reads as the hex it is, a ticked protection switch always means a protected run, and
 * both parties' CPU time is shown.
 */
import { expect, test, type Page } from '@playwright/test';
import { FIPS197 } from '../../web-client/src/demo-values';
import { finishedState, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128 } from '../support/references';
import { openDemo, startPrivateServer } from '../support/servers';
import { serverBytes, serverInteger } from '../support/server-values';

async function refused(page: Page, sentence: string): Promise<void> {
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText(sentence);
  await expect(page.getByTestId('result')).toBeEmpty();
}

test('mistakes are refused in the words the SDK and the command line use', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('add64');
  await waitForRoles(page);
  await page.getByTestId('input-b').fill('-5');
  await refused(page, 'b takes a whole number from 0 to 18,446,744,073,709,551,615; -5 is negative');

  await openDemo(page, 'aes');
  await waitForRoles(page);
  await page.getByTestId('plaintext').fill('0011');
  await refused(page, 'plaintext takes exactly 16 bytes (32 hex digits); 2 given');

  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  await page.getByTestId('string').fill('A'.repeat(2001));
  await refused(page, 'b accepts at most 2,000 bases; 2,001 given');
});

test("a wide output reads as hex, a number as a number, and millionaires names the server's side", async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('aes128');
  await waitForRoles(page);
  await page.getByTestId('input-plaintext').fill(FIPS197.plaintext);
  await runToCompletion(page);
  await expect(page.getByTestId('shown-ciphertext')).toHaveText(`0x${aes128(serverBytes('aes128', 'key'), Buffer.from(FIPS197.plaintext, 'hex')).toString('hex')}`);

  await page.getByTestId('service').selectOption('millionaires');
  await waitForRoles(page);
  await page.getByTestId('input-y').fill(String(serverInteger('millionaires', 'x') - 1n));
  await runToCompletion(page);
  await expect(page.getByTestId('shown-server_greater')).toHaveText('1');
});

test('the protection switch is unticked where the service runs standard only, and ticked again where it is offered', async ({ page }) => {
  const server = await startPrivateServer({ standardOnly: ['aes128_bp'] });
  try {
    await openDemo(page, 'aes', server.url);
    await waitForRoles(page);
    const toggle = page.getByTestId('protect');
    await toggle.check();
    await page.getByTestId('circuit-aes128_bp').check();
    await expect(page.getByTestId('protect-note')).toContainText('standard mode only');
    await expect(toggle).toBeDisabled();
    await expect(toggle).not.toBeChecked();
    await runToCompletion(page);
    await expect(page.getByTestId('stats')).toContainText('standard mode');
    await page.getByTestId('circuit-aes128').check();
    await expect(toggle).toBeEnabled();
    await expect(toggle).toBeChecked();
  } finally {
    await server.stop();
  }
});

test("both parties' CPU time is shown", async ({ page }) => {
  await openDemo(page, 'aes');
  await waitForRoles(page);
  await runToCompletion(page);
  expect(await resultValue(page)).not.toBe('');
  const [you, server] = await page.getByTestId('stats').locator('tr', { hasText: 'CPU time' }).locator('td').allInnerTexts();
  expect(you).toMatch(/^[\d.]+ m?s$/);
  expect(server).toMatch(/^[\d.]+ m?s$/);
});
