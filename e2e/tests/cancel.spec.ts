import { expect, test } from '@playwright/test';
import { finishedState, runToCompletion } from '../support/demo-page';
import { openDemo, serverUrl } from '../support/servers';
import { serverInteger } from '../support/server-values';

/** The shared server's `GET /metrics.json` (`/metrics` is Prometheus's text format). */
async function metrics(): Promise<Record<string, number>> {
  const response = await fetch(`${serverUrl().replace(/^ws/, 'http').replace(/\/$/, '')}/metrics.json`);
  return (await response.json()) as Record<string, number>;
}

test('cancel stops a long run mid-stream and the page stays usable', async ({ page }) => {
  const before = await metrics();
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('synthetic');
  await page.getByTestId('input-evaluator').fill('0x1234');
  await page.getByTestId('param-and_gates').fill(String(5e7));
  await page.getByTestId('run').click();

  // Cancel once gates are streaming, well before the end. The total is known: progress shows
  // a percentage.
  const progress = page.getByTestId('progress');
  await expect(progress).toHaveAttribute('data-and-gates', /^[1-9]/);
  await expect(progress).toHaveAttribute('data-percent', /^\d+$/);
  await expect(progress).toContainText(/^\d+ % · /);
  await page.getByTestId('cancel').click();
  expect(await finishedState(page)).toBe('cancelled');
  await expect(page.getByTestId('status')).toHaveText('cancelled');
  await expect(page.getByTestId('error')).toContainText('Cancelled');
  expect(Number(await progress.getAttribute('data-and-gates'))).toBeLessThan(5e7);
  await expect(page.getByTestId('run')).toBeEnabled();

  // The server counts the session as cancelled, not failed.
  await expect.poll(async () => (await metrics()).sessions_cancelled).toBe(before.sessions_cancelled + 1);
  expect((await metrics()).sessions_failed).toBe(before.sessions_failed);

  // A new run on a new session works.
  await page.getByTestId('service').selectOption('add64');
  await page.getByTestId('input-b').fill('5');
  await runToCompletion(page);
  expect(await page.getByTestId('output-sum').getAttribute('data-value')).toBe(String(serverInteger('add64', 'a') + 5n));
});
