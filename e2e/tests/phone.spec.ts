import { expect, test, type Page } from '@playwright/test';
import { runToCompletion, waitForRoles } from '../support/demo-page';
import { openDemo } from '../support/servers';

/** A phone's width in CSS pixels (an iPhone 14's). */
const PHONE = { width: 390, height: 844 };

/** Nothing wider than the screen: no sideways scrolling. */
async function expectNoOverflow(page: Page, what: string): Promise<void> {
  const { scrollWidth, offenders } = await page.evaluate((width) => {
    const offenders = Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > width + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''} (right edge ${Math.round(e.getBoundingClientRect().right)})`);
    return { scrollWidth: document.documentElement.scrollWidth, offenders: offenders.slice(0, 8) };
  }, PHONE.width);
  expect(scrollWidth, `${what}: wider than the phone: ${offenders.join(', ')}`).toBeLessThanOrEqual(PHONE.width);
}

test.use({ viewport: PHONE });

const PAGES: { path: string; title: string; fill?: (page: Page) => Promise<void> }[] = [
  { path: 'hamming', title: 'Hamming distance' },
  { path: 'edit-distance', title: 'Edit distance' },
  { path: 'aes', title: 'Private AES' },
  { path: 'smith-waterman', title: 'Smith–Waterman' },
  {
    path: 'any',
    title: 'Any service (aes128)',
    fill: async (page) => {
      await page.getByTestId('service').selectOption('aes128');
      await page.getByTestId('input-plaintext').fill('00112233445566778899aabbccddeeff');
    },
  },
];

for (const { path, title, fill } of PAGES) {
  test(`${title} fits a 390 px phone screen, before and after a run`, async ({ page }, testInfo) => {
    await openDemo(page, path);
    await waitForRoles(page);
    await expectNoOverflow(page, `${path}, loaded`);
    await fill?.(page);
    await runToCompletion(page);
    await expectNoOverflow(page, `${path}, with its result and statistics`);
    // Kept under test-results/ for a look at the layout.
    const screenshot = testInfo.outputPath(`${path}-390px.png`);
    await page.screenshot({ path: screenshot, fullPage: true });
    await testInfo.attach(`${path} at 390 px`, { path: screenshot, contentType: 'image/png' });
  });
}
