import { expect, test } from '@playwright/test';
import { expectStats, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { randomString, smithWaterman } from '../support/references';
import { openDemo } from '../support/servers';
import { serverText } from '../support/server-values';

test('Smith–Waterman score equals the textbook recurrence (BLOSUM62, gap 12 + 7k)', async ({ page }) => {
  const server = serverText('smith_waterman', 'protein');
  await openDemo(page, 'smith-waterman');
  await waitForRoles(page);

  // The page's first sample: hemoglobin α against the server's hemoglobin β.
  await page.getByRole('button', { name: 'Hemoglobin α (first 60)' }).click();
  const alpha = await page.getByTestId('protein').inputValue();
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(smithWaterman(server, alpha));
  await expectStats(page);

  // A random protein of another length: m follows the string.
  const mine = randomString('ARNDCQEGHILKMFPSTWYV', 37);
  await page.getByTestId('protein').fill(mine);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(smithWaterman(server, mine));
});
