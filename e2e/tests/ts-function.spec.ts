import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { runToCompletion, waitForRoles } from '../support/demo-page';
import { openDemo } from '../support/servers';
import { serverInteger } from '../support/server-values';

// The function the demo server runs, as written, and the reference it is checked against.
const source = readFileSync(new URL('../../circuits/compiled/budget.ts', import.meta.url), 'utf8');
const budget = (balance: bigint, change: bigint) => ({ after: balance + change, overdrawn: balance + change < 0n });

const shown = async (page: Page, name: string) => page.getByTestId(`shown-${name}`).innerText();

test('the function page shows the TypeScript source and its types as written, and computes it', async ({ page }) => {
  await openDemo(page, 'function');
  await expect(page.getByTestId('source')).toHaveText(source);
  await expect(page.getByTestId('type-change')).toContainText('int(32)');
  await expect(page.getByTestId('type-change')).toContainText('input of you');
  await expect(page.getByTestId('type-after')).toContainText('int(34)');
  await waitForRoles(page);
  await expect(page.getByTestId('hint-change')).toContainText('signed integer of 32 bits, -2,147,483,648 to 2,147,483,647');

  const balance = serverInteger('budget', 'balance');
  for (const change of [-(balance + 250n), 1200n, -balance]) {
    await page.getByTestId('input-change').fill(change.toString());
    await runToCompletion(page);
    const want = budget(balance, change);
    expect(await shown(page, 'after')).toBe(want.after.toString());
    expect(await shown(page, 'overdrawn')).toBe(String(want.overdrawn));
  }
});

test('a change out of the signed range is refused in the SDK’s words', async ({ page }) => {
  await openDemo(page, 'function');
  await waitForRoles(page);
  await page.getByTestId('input-change').fill('-2147483649');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('error')).toContainText('change takes a whole number from -2,147,483,648 to 2,147,483,647; -2147483649 is too small');
});

test('the any-service page shows budget’s signed output signed', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('budget');
  await waitForRoles(page);
  await page.getByTestId('input-change').fill('-5000');
  await runToCompletion(page);
  expect(await shown(page, 'after')).toBe((serverInteger('budget', 'balance') - 5000n).toString());
});
