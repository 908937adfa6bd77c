import { expect, test } from '@playwright/test';
import { expectStats, finishedState, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { levenshtein, randomString } from '../support/references';
import { openDemo } from '../support/servers';
import { serverText } from '../support/server-values';

test('DNA edit distance equals the dynamic programme’s', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  const mine = randomString('ACGT', 83);
  await page.getByTestId('string').fill(mine.toLowerCase()); // bases are read case-insensitively
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(levenshtein(serverText('levenshtein', 'a'), mine));
  await expectStats(page);
});

test('text edit distance (Latin-1) equals the dynamic programme’s', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await page.getByTestId('alphabet-text').check();
  await waitForRoles(page);
  const mine = 'Thé quick bröwn fox jumps over the lazy dog!';
  await page.getByTestId('string').fill(mine);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(levenshtein(serverText('levenshtein_text', 'a'), mine));
});

test('a string outside the alphabet is refused in the page, before anything is sent', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  await page.getByTestId('string').fill('ACGTX');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('only the bases A, C, G and T');
});

test('spaces and line breaks inside DNA are ignored, and the page says so; one base is one base', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  const mine = randomString('ACGT', 40);
  const wrapped = `${mine.slice(0, 10)} ${mine.slice(10, 20)}\n${mine.slice(20, 30)}\t${mine.slice(30)}\n`;
  await page.getByTestId('string').fill(wrapped);
  await expect(page.getByTestId('string-length')).toContainText('Your string: 40 bases');
  await expect(page.getByTestId('string-length')).toContainText('spaces and line breaks are ignored');
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(levenshtein(serverText('levenshtein', 'a'), mine));

  await page.getByTestId('string').fill('G');
  await expect(page.getByTestId('string-length')).toContainText('Your string: 1 base.');
  await page.getByTestId('alphabet-text').check();
  await page.getByTestId('string').fill('x');
  await expect(page.getByTestId('string-length')).toContainText('Your string: 1 character.');
  await page.getByTestId('string').fill('');
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText('Your string is empty');
});
