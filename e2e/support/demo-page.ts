/** Driving a demo page: run, wait, read the result — with the page's own error on failure. */
import { expect, type Page } from '@playwright/test';

export type RunState = 'done' | 'cancelled' | 'error';

/** The run panel's state once a run has ended. */
export async function finishedState(page: Page, timeout = 60_000): Promise<RunState> {
  const panel = page.locator('.run-panel');
  await expect(panel).toHaveAttribute('data-state', /^(done|cancelled|error)$/, { timeout });
  return (await panel.getAttribute('data-state')) as RunState;
}

/** Clicks the run button and waits for a successful end; a failure reports the page's message. */
export async function runToCompletion(page: Page, timeout?: number): Promise<void> {
  await page.getByTestId('run').click();
  const state = await finishedState(page, timeout);
  if (state !== 'done') throw new Error(`the run ended ${state}: ${await page.getByTestId('error').innerText()}`);
}

/** The demo's result, exactly (`data-value`). */
export async function resultValue(page: Page): Promise<string> {
  return (await page.getByTestId('result-value').getAttribute('data-value')) ?? '';
}

/** Waits until the server's description of the service is on the page. */
export async function waitForRoles(page: Page): Promise<void> {
  await expect(page.getByTestId('roles')).toBeVisible();
}

/** The per-role statistics must be shown and agree on the AND gates. */
export async function expectStats(page: Page, andGates: number | undefined = undefined): Promise<void> {
  const row = page.getByTestId('stats').locator('tr', { hasText: 'AND gates' });
  await expect(row).toBeVisible();
  const [you, server] = await row.locator('td').allInnerTexts();
  expect(you).toBe(server);
  if (andGates !== undefined) expect(Number(you.replace(/\s/g, ''))).toBe(andGates);
}
