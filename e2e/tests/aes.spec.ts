import { expect, test } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { FIPS197 } from '../../web-client/src/demo-values';
import { expectStats, resultValue, runToCompletion, waitForRoles } from '../support/demo-page';
import { aes128 } from '../support/references';
import { openDemo } from '../support/servers';
import { serverBytes } from '../support/server-values';

for (const [circuit, andGates] of [['aes128', 6400], ['aes128_bp', 5120]] as const) {
  test(`private AES (${circuit}) matches node:crypto under the server's key, FIPS-197 block and a random one`, async ({ page }) => {
    const key = serverBytes(circuit, 'key');
    await openDemo(page, 'aes');
    await page.getByTestId(`circuit-${circuit}`).check();
    await waitForRoles(page);

    await runToCompletion(page); // the page starts with FIPS-197's plaintext
    const fips = aes128(key, Buffer.from(FIPS197.plaintext, 'hex')).toString('hex');
    expect(await resultValue(page)).toBe(fips);
    if (key.toString('hex') === FIPS197.key) {
      expect(fips).toBe(FIPS197.ciphertext);
      await expect(page.getByTestId('result')).toContainText('Appendix C.1 ciphertext');
    }
    await expectStats(page, andGates);

    const block = randomBytes(16);
    await page.getByTestId('plaintext').fill(block.toString('hex'));
    await runToCompletion(page);
    expect(await resultValue(page)).toBe(aes128(key, block).toString('hex'));
  });
}
