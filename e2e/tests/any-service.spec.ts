import { expect, test, type Page } from '@playwright/test';
import { finishedState, runToCompletion, waitForRoles } from '../support/demo-page';
import { openDemo } from '../support/servers';
import { serverInteger, serverList } from '../support/server-values';

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

test('each input shows its width, and an empty field is refused with a message, not sent as 0', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('add64');
  await waitForRoles(page);
  await expect(page.getByTestId('hint-b')).toContainText('64 bits');
  await page.getByTestId('input-b').fill('');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('b is empty');
  await expect(page.getByTestId('result')).toBeEmpty();

  await page.getByTestId('input-b').fill('twelve');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText("b takes a whole number from 0 to 18,446,744,073,709,551,615; 'twelve' is not one");

  await page.getByTestId('service').selectOption('aes128');
  await expect(page.getByTestId('hint-plaintext')).toContainText('16 bytes (128 bits) as 32 hex digits');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('plaintext is empty');

  await page.getByTestId('service').selectOption('levenshtein');
  await expect(page.getByTestId('hint-b')).toContainText('symbols of ACGT, any length from 1 to 2');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('b is empty');
});

test('psi takes your set as a list, and its length sets nb', async ({ page }) => {
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('psi');
  await waitForRoles(page);
  await expect(page.getByTestId('hint-set')).toContainText('a list of 32-bit unsigned integers');
  await expect(page.getByTestId('param-nb')).toHaveCount(0);
  const theirs = serverList('psi', 'set');
  // Three of the server's elements and two it lacks, in hex and decimal, commas and spaces.
  const mine = [theirs[3], 7n, theirs[0], 100000n, theirs[15]];
  await page.getByTestId('input-set').fill(`0x${mine[0].toString(16)}, ${mine[1]} ${mine[2]},${mine[3]}  ${mine[4]}`);
  await runToCompletion(page);
  const member = await output(page, 'member');
  const expected = mine.reduce((acc, v, i) => acc | (theirs.includes(v) ? 1n << BigInt(i) : 0n), 0n);
  expect(member).toBe(expected);

  await page.getByTestId('input-set').fill('1, 2, 0x100000000');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('set, value 3 takes a whole number from 0 to 4,294,967,295; 0x100000000 is too large');
});
