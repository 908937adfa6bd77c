/**
 * "Protect me from a cheating server" on the private-AES, Hamming, edit-distance and any-service
 * pages: with the switch on, a run computes in the protected mode chosen — authenticated garbling
 * by default where the service offers it, or cut-and-choose — and gives the reference result; the
 * cost table shows the last run of each mode side by side, each protected mode's bytes above
 * standard's and authenticated garbling's below cut-and-choose's. On the private-AES page an
 * authenticated run leaves the next one prepared ahead: that one computes its online phase only,
 * with either circuit, and a server that holds no preparations gets whole runs.
 */
import { expect, test, type Page } from '@playwright/test';
import { FIPS197 } from '../../web-client/src/demo-values';
import { resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128, levenshtein, popcount, randomString } from '../support/references';
import { openDemo, startPrivateServer } from '../support/servers';
import { serverBytes, serverInteger, serverText } from '../support/server-values';

type Mode = 'standard' | 'authenticated' | 'cut-and-choose';

interface Cost {
  ms: number;
  sent: number;
  received: number;
}

/** The cost table's row for `mode` (or the authenticated mode's online phase), as raw numbers (its data attributes). */
async function cost(page: Page, mode: Mode | 'authenticated-online'): Promise<Cost> {
  const row = page.getByTestId(`cost-${mode}`);
  await expect(row).toHaveAttribute('data-ms', /./);
  const read = async (name: string) => Number(await row.getAttribute(`data-${name}`));
  return { ms: await read('ms'), sent: await read('sent'), received: await read('received') };
}

const total = (c: Cost) => c.sent + c.received;
const line = (c: Cost) => `${c.ms.toFixed(0)} ms, ${c.sent} B sent, ${c.received} B received`;

/** Every protected mode run costs more bytes than standard, and the ratio line is shown; the numbers for the report. */
async function expectCosts(page: Page, what: string, modes: Mode[]): Promise<Record<string, Cost>> {
  const standard = await cost(page, 'standard');
  const costs: Record<string, Cost> = { standard };
  for (const mode of modes) {
    costs[mode] = await cost(page, mode);
    expect(total(costs[mode])).toBeGreaterThan(2 * total(standard));
    expect(costs[mode].sent).toBeGreaterThan(standard.sent);
  }
  await expect(page.getByTestId('cost-ratio')).toBeVisible();
  test.info().annotations.push({ type: what, description: Object.entries(costs).map(([mode, c]) => `${mode} ${line(c)}`).join('; ') });
  return costs;
}

/** The switch on (in `mode`, or the page's default) or off. */
async function protect(page: Page, on: boolean, mode?: Exclude<Mode, 'standard'>): Promise<void> {
  const toggle = page.getByTestId('protect');
  await expect(toggle).toBeEnabled();
  await toggle.setChecked(on);
  if (mode) await page.getByTestId(`protect-${mode}`).check();
}

/** A run with the switch on (the authenticated mode, the default), then one with it off: both give `expected`, and the cost table has both. */
async function protectedThenStandard(page: Page, expected: number, service: string): Promise<void> {
  await protect(page, true);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(expected);
  await expect(page.getByTestId('stats')).toContainText('authenticated mode');

  await protect(page, false);
  await runToCompletion(page);
  expect(Number(await resultValue(page))).toBe(expected);
  await expectCosts(page, service, ['authenticated']);
}

test('private AES with the switch on gives FIPS-197 authenticated by default and in cut-and-choose, and the cost table compares the three modes', async ({ page }) => {
  const key = serverBytes('aes128', 'key');
  const fips = aes128(key, Buffer.from(FIPS197.plaintext, 'hex')).toString('hex');
  await openDemo(page, 'aes');
  await waitForRoles(page);
  await expect(page.getByTestId('cost-standard')).toContainText('not run yet');

  await protect(page, false);
  await runToCompletion(page); // the page starts with FIPS-197's plaintext
  expect(await resultValue(page)).toBe(fips);
  await expect(page.getByTestId('stats')).toContainText('standard mode');

  // Authenticated garbling is the recommended protection: chosen unless the user picks another.
  await protect(page, true);
  await expect(page.getByTestId('protect-authenticated')).toBeChecked();
  await expect(page.getByTestId('protect-hint')).toContainText('each checking the other');
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(fips);
  if (key.toString('hex') === FIPS197.key) expect(fips).toBe(FIPS197.ciphertext);
  await expect(page.getByTestId('stats')).toContainText('authenticated mode');

  await protect(page, true, 'cut-and-choose');
  await runToCompletion(page);
  expect(await resultValue(page)).toBe(fips);
  await expect(page.getByTestId('stats')).toContainText('cut-and-choose mode');
  await expect(page.getByTestId('recovered')).toBeHidden();
  const costs = await expectCosts(page, 'aes128', ['authenticated', 'cut-and-choose']);
  expect(total(costs.authenticated)).toBeLessThan(total(costs['cut-and-choose']));
  await expect(page.getByTestId('cost-ratio')).toContainText('authenticated garbling cost');
  await expect(page.getByTestId('cost-ratio')).toContainText('cut-and-choose cost');
});

test('Hamming distance with the switch on is the popcount of the XOR, and costs more than standard', async ({ page }) => {
  await openDemo(page, 'hamming');
  await waitForRoles(page);
  await page.getByTestId('iris-random').click();
  await page.getByText('Your code as hex').click();
  const mine = BigInt(await page.getByTestId('iris-hex').inputValue());
  const expected = popcount(mine ^ serverInteger('hamming', 'x'));

  await protectedThenStandard(page, expected, 'hamming');
});

test('edit distance with the switch on is the dynamic programme’s, authenticated', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  const mine = randomString('ACGT', 100);
  await page.getByTestId('string').fill(mine);
  const expected = levenshtein(serverText('levenshtein', 'a'), mine);

  await protectedThenStandard(page, expected, 'levenshtein');
});

test('an edit distance of several segments is the dynamic programme’s, authenticated', async ({ page }) => {
  await openDemo(page, 'edit-distance');
  await waitForRoles(page);
  // About 490 AND gates a base against the server's 100: 300 bases are about 147,000 AND gates,
  // three segments of the mode's 65,536, streamed one after the other.
  const mine = randomString('ACGT', 300);
  await page.getByTestId('string').fill(mine);
  await protect(page, true);
  await runToCompletion(page, 120_000);
  await expect(page.getByTestId('stats')).toContainText('authenticated mode');
  expect(Number(await resultValue(page))).toBe(levenshtein(serverText('levenshtein', 'a'), mine));
});

for (const circuit of ['aes128', 'aes128_bp']) {
  test(`private AES (${circuit}) authenticated leaves the next run prepared ahead: it gives FIPS-197 from its online phase only`, async ({ page }) => {
    const fips = aes128(serverBytes(circuit, 'key'), Buffer.from(FIPS197.plaintext, 'hex')).toString('hex');
    await openDemo(page, 'aes');
    await page.getByTestId(`circuit-${circuit}`).check();
    await waitForRoles(page);
    await protect(page, true);

    // The first authenticated run computes whole: the cost table shows the mode's whole price.
    await runToCompletion(page);
    expect(await resultValue(page)).toBe(fips);
    await expect(page.getByTestId('stats')).toContainText('authenticated mode)');
    await expect(page.getByTestId('prepared')).toHaveCount(0);

    // Idle again, the page prepared the next one: this run is its online phase.
    for (let i = 0; i < 2; i++) {
      await runToCompletion(page);
      expect(await resultValue(page)).toBe(fips);
      await expect(page.getByTestId('stats')).toContainText('authenticated mode, online phase only');
      await expect(page.getByTestId('prepared')).toContainText('Online phase only');
    }
    const whole = await cost(page, 'authenticated');
    const online = await cost(page, 'authenticated-online');
    expect(total(online)).toBeLessThan(total(whole));

    // Standard again: no preparation is used, nor claimed.
    await protect(page, false);
    await runToCompletion(page);
    expect(await resultValue(page)).toBe(fips);
    await expect(page.getByTestId('stats')).toContainText('standard mode)');
    await expect(page.getByTestId('prepared')).toHaveCount(0);
  });
}

/** The AES page on `url` with the library circuit and the switch on: FIPS-197's ciphertext under its key. */
async function protectedLibraryAes(page: Page, url: string): Promise<string> {
  await openDemo(page, 'aes', url);
  await page.getByTestId('circuit-aes128_bp').check();
  await waitForRoles(page);
  await protect(page, true);
  return aes128(serverBytes('aes128_bp', 'key'), Buffer.from(FIPS197.plaintext, 'hex')).toString('hex');
}

test('private AES against a server that holds no preparations: each authenticated run computes whole, and gives FIPS-197', async ({ page }) => {
  const server = await startPrivateServer({ limits: { max_prepared_and_gates: 1000 } });
  try {
    const fips = await protectedLibraryAes(page, server.url);
    for (let i = 0; i < 2; i++) {
      await runToCompletion(page);
      expect(await resultValue(page)).toBe(fips);
      await expect(page.getByTestId('stats')).toContainText('authenticated mode)');
      await expect(page.getByTestId('prepared')).toHaveCount(0);
    }
  } finally {
    await server.stop();
  }
});

test('a preparation whose session the server closed while it waited (idle timeout) costs only the speed-up: the run computes whole and gives FIPS-197', async ({ page }) => {
  const server = await startPrivateServer({ limits: { idle_timeout_secs: 2 } });
  try {
    const fips = await protectedLibraryAes(page, server.url);
    await runToCompletion(page); // whole; the page then prepares the next one
    // The parked session waits longer than the server's idle timeout, which closes it.
    await page.waitForTimeout(4000);
    await runToCompletion(page);
    expect(await resultValue(page)).toBe(fips);
    await expect(page.getByTestId('stats')).toContainText('authenticated mode)');
    await expect(page.getByTestId('prepared')).toHaveCount(0);
    const reclaimed = async () => (await (await fetch(`${server.url.replace(/^ws:/, 'http:')}/metrics.json`)).json()).reclaimed_idle;
    expect(await reclaimed()).toBeGreaterThanOrEqual(1);
  } finally {
    await server.stop();
  }
});

test('the switch is off for a service that offers only the standard mode, on every page but Smith–Waterman’s', async ({ page }) => {
  const server = await startPrivateServer({ standardOnly: ['aes128_bp'] });
  try {
    await openDemo(page, 'aes', server.url);
    await page.getByTestId('circuit-aes128_bp').check();
    await waitForRoles(page);
    await expect(page.getByTestId('protect-note')).toContainText('standard mode only');
    await expect(page.getByTestId('protect')).toBeDisabled();
    await expect(page.getByTestId('protect-authenticated')).toBeDisabled();
    await page.getByTestId('circuit-aes128').check();
    await expect(page.getByTestId('protect')).toBeEnabled();
    await expect(page.getByTestId('protect-authenticated')).toBeEnabled();
    await expect(page.getByTestId('protect-cut-and-choose')).toBeEnabled();
  } finally {
    await server.stop();
  }

  // The any-service page offers it per service.
  await openDemo(page, 'any');
  await page.getByTestId('service').selectOption('millionaires');
  await expect(page.getByTestId('protect')).toBeDisabled();
  await page.getByTestId('service').selectOption('synthetic');
  await expect(page.getByTestId('protect')).toBeEnabled();
  await expect(page.getByTestId('protect-authenticated')).toBeEnabled();

  await openDemo(page, 'smith-waterman');
  await expect(page.locator('.run-panel')).toBeVisible();
  await expect(page.getByTestId('protect')).toHaveCount(0);
});
