import { expect, test } from '@playwright/test';
import { freePort } from '../../scripts/stack.mjs';
import { finishedState, waitForRoles } from '../support/demo-page';
import { openDemo, startPrivateServer } from '../support/servers';

test('no server at the address: the page says it cannot reach it', async ({ page }) => {
  const url = `ws://127.0.0.1:${await freePort()}`;
  await openDemo(page, 'hamming', url);
  // Already when the page asks for the service's description…
  await expect(page.getByTestId('error')).toContainText(`Cannot reach the server at ${url}`);
  // …and again when the user tries to run.
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText(`Cannot reach the server at ${url}`);
  await expect(page.getByTestId('error')).toContainText('is garblet serve running there');
});

test("a server that does not allow the page's Origin: the page names that as a possible cause", async ({ page }) => {
  const server = await startPrivateServer({ allowedOrigins: ['https://app.example.com'] });
  try {
    await openDemo(page, 'hamming', server.url);
    await expect(page.getByTestId('error')).toContainText(`Cannot reach the server at ${server.url}`);
    await expect(page.getByTestId('error')).toContainText("does it allow this page's origin?");
  } finally {
    await server.stop();
  }
});

test('the server stopped after the page loaded: the run says it cannot reach it', async ({ page }) => {
  const server = await startPrivateServer();
  try {
    await openDemo(page, 'aes', server.url);
    await waitForRoles(page);
  } finally {
    await server.stop();
  }
  await page.getByTestId('run').click();
  expect(await finishedState(page)).toBe('error');
  await expect(page.getByTestId('error')).toContainText(`Cannot reach the server at ${server.url}`);
});

test('the server dies mid-run: the page says the connection was lost', async ({ page }) => {
  const server = await startPrivateServer();
  try {
    await openDemo(page, 'any', server.url);
    await page.getByTestId('service').selectOption('synthetic');
    await page.getByTestId('input-evaluator').fill('0');
    await page.getByTestId('param-and_gates').fill(String(5e7));
    await page.getByTestId('run').click();
    await expect(page.getByTestId('progress')).toHaveAttribute('data-and-gates', /^[1-9]/);
    server.child.kill('SIGKILL');
    expect(await finishedState(page)).toBe('error');
    await expect(page.getByTestId('error')).toContainText('connection to the server was lost');
  } finally {
    await server.stop();
  }
});
