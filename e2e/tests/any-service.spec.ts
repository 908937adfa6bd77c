import { expect, test, type Page } from '@playwright/test';
import { runToCompletion, waitForRoles } from '../support/demo-page';
import { openDemo } from '../support/servers';
import { serverInteger } from '../support/server-values';

const output = async (page: Page, name: string) => BigInt((await page.getByTestId(`output-${name}`).getAttribute('data-value')) ?? 'NaN');

test('the service list is the server’s catalog, demos included', async ({ page }) => {
  await openDemo(page, 'any');
  await waitForRoles(page);
  const names = await page.getByTestId('service').locator('option').allInnerTexts();
  for (const name of ['aes128', 'add64', 'zero_equal', 'synthetic', 'hamming', 'hamming_threshold', 'levenshtein', 'levenshtein_text', 'smith_waterman', 'aes128_bp']) {
    expect(names).toContain(name);
  }
});

test('add64 from a generated form: the server’s a plus your b', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('add64');
  await waitForRoles(page);
  const b = 0xfedcba9876543210n;
  await page.getByTestId('input-b').fill(`0x${b.toString(16)}`);
  await runToCompletion(page);
  expect(await output(page, 'sum')).toBe((serverInteger('add64', 'a') + b) % (1n << 64n));
});

test('zero_equal: one bit out, for zero and not zero', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('zero_equal');
  await page.getByTestId('input-a').fill('0');
  await runToCompletion(page);
  expect(await output(page, 'is_zero')).toBe(1n);
  await page.getByTestId('input-a').fill('12345');
  await runToCompletion(page);
  expect(await output(page, 'is_zero')).toBe(0n);
});
