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
