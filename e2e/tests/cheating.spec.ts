/**
 * Private AES with "protect me from a cheating server" on, against a server that cheats
 * (server/examples/cheating_serve.rs: `garblet serve` whose sessions deviate in the
 * cut-and-choose mode). A server that corrupts every circuit, garbles another function in every
 * circuit, or garbles different inputs in different circuits, is caught: the page says so and
 * names the check. One corrupted circuit is caught or outvoted, and another function in one
 * circuit is caught or recovered from: the output is FIPS-197's or none, never a wrong one. Selective failure on
 * one bit of the browser's block aborts some runs, but the probe-resistant encoding makes the
 * abort a coin flip whatever the bit: the counts are recorded, and what is asserted is what a
 * server reading the bit could not produce. About 30 s.
 */
import { expect, test, type Page } from '@playwright/test';
import { FIPS197 } from '../../web-client/src/demo-values';
import { buildCheatingServe, startCheatingServer, type Deviation } from '../support/cheating-server';
import { finishedState, resultValue, waitForRoles } from '../support/demo-page';
import { aes128 } from '../support/references';
import { serverBytes } from '../support/server-values';
import { openDemo } from '../support/servers';

type Outcome = { kind: 'output'; value: string; recovered: boolean } | { kind: 'caught'; reason: string; message: string };

test.beforeAll(() => {
  // Building the example from nothing takes minutes on a small machine (nothing, once built).
  test.setTimeout(30 * 60_000);
  buildCheatingServe();
});

/** The AES page against `url`, protection on in the cut-and-choose mode, `plaintext` (hex) as the block. */
async function protectedAes(page: Page, url: string, plaintext: string): Promise<void> {
  await openDemo(page, 'aes', url);
  await waitForRoles(page);
  const toggle = page.getByTestId('protect');
  await expect(toggle).toBeEnabled();
  await toggle.setChecked(true);
  // The example server deviates in the cut-and-choose mode.
  await page.getByTestId('protect-cut-and-choose').check();
  await page.getByTestId('plaintext').fill(plaintext);
}

/** One run: its output, or the check that caught the server; anything else fails the test. */
async function runOnce(page: Page): Promise<Outcome> {
  await page.getByTestId('run').click();
  const state = await finishedState(page);
  const error = page.getByTestId('error');
  if (state === 'done') {
    await expect(page.getByTestId('stats')).toContainText('cut-and-choose mode');
    return { kind: 'output', value: await resultValue(page), recovered: await page.getByTestId('recovered').isVisible() };
  }
  if (state === 'error' && (await error.getAttribute('data-kind')) === 'cheating') {
    await expect(page.getByTestId('result-value')).toHaveCount(0);
    return { kind: 'caught', reason: (await error.getAttribute('data-reason')) ?? '', message: await error.innerText() };
  }
  throw new Error(`the run ended ${state}, not with an output or a caught server: ${await error.innerText()}`);
}

/** The block as bytes, its hex as the page takes it. */
const FIPS_BLOCK = FIPS197.plaintext;
/** FIPS-197's block with its bit 0 (the last byte's lowest bit: input wire 0) cleared. */
const BIT0_CLEARED = FIPS197.plaintext.slice(0, -2) + 'fe';

function reference(block: string): string {
  return aes128(serverBytes('aes128', 'key'), Buffer.from(block, 'hex')).toString('hex');
}

test('a server that corrupts every circuit, garbles another function, or garbles different inputs in different circuits, is caught and named', async ({ page }) => {
  for (const [deviation, reason] of [
    ['tables', 'check-circuit'],
    ['other-circuit', 'check-circuit'],
    ['input', 'inconsistent-input'],
  ] as [Deviation, string][]) {
    const server = await startCheatingServer(deviation);
    try {
      await protectedAes(page, server.url, FIPS_BLOCK);
      const outcome = await runOnce(page);
      expect(outcome, deviation).toMatchObject({ kind: 'caught', reason });
      if (outcome.kind === 'caught') expect(outcome.message).toContain('The server was caught cheating');
      // The browser's Error frame told the server why (code cheating-detected), and it counted it.
      const reports = async () => (await (await fetch(`${server.url.replace(/^ws:/, 'http:')}/metrics.json`)).json()).cheating_reports;
      await expect.poll(reports, { message: deviation }).toBe(1);
    } finally {
      await server.stop();
    }
  }
});

/**
 * Runs against a server that deviates in circuit 0 only: each is caught by a check circuit
 * (circuit 0 checked, probability 34/49) or gives FIPS-197's ciphertext — `recovered` says
 * whether through cheating recovery. `runs` runs, or with `untilRight` as many as it takes to
 * see one give FIPS-197 (at most `runs`).
 */
async function caughtOrRight(page: Page, deviation: Deviation, recovered: boolean, runs: number, untilRight = false): Promise<void> {
  const server = await startCheatingServer(deviation);
  const counts = { caught: 0, right: 0 };
  try {
    await protectedAes(page, server.url, FIPS_BLOCK);
    while (counts.caught + counts.right < runs && !(untilRight && counts.right > 0)) {
      const outcome = await runOnce(page);
      if (outcome.kind === 'caught') {
        expect(outcome.reason).toBe('check-circuit');
        counts.caught++;
      } else {
        expect(outcome).toEqual({ kind: 'output', value: reference(FIPS_BLOCK), recovered });
        counts.right++;
      }
    }
  } finally {
    await server.stop();
  }
  const description = `${counts.caught} of ${counts.caught + counts.right} runs caught the server (circuit 0 checked, probability 34/49), ${counts.right} gave FIPS-197`;
  test.info().annotations.push({ type: deviation, description });
  console.log(`[e2e] ${deviation}: ${description}`);
  if (untilRight) expect(counts.right, description).toBe(1);
}

test('one corrupted circuit is caught or outvoted: FIPS-197 or no output, never a wrong one', async ({ page }) => {
  // Outvoted: the corrupted circuit's output opens no committed value, so it is ignored (no
  // disagreement between valid outputs, no recovery).
  await caughtOrRight(page, 'one-circuit', false, 4);
});

test('another function in one circuit is caught or recovered from: FIPS-197 or no output, never a wrong one', async ({ page }) => {
  // Evaluated, its output is valid but another function's: two circuits disagree, and the
  // browser recovers the server's input and computes the right output itself. Runs until that
  // happens once (each run evaluates circuit 0 with probability 15/49; 40 runs all missing it:
  // below 10^-6).
  test.setTimeout(180_000);
  await caughtOrRight(page, 'other-circuit-0', true, 40, true);
});

test('selective failure on one bit of the block: the abort is a coin flip whatever the bit, and no run gives a wrong output', async ({ page }) => {
  // Each bit value RUNS times. The server corrupts, in every circuit, the label correction of
  // the encoded wire that carries input bit 0. Without the encoding that wire would be the bit:
  // every run with bit 1 would abort and none with bit 0. With it the wire is uniform whatever
  // the bit, so each run aborts with probability 1/2 — for either bit value.
  const RUNS = 10;
  const server = await startCheatingServer('corrections');
  const aborts: Record<0 | 1, number> = { 0: 0, 1: 0 };
  try {
    for (const [bit, block] of [
      [1, FIPS_BLOCK],
      [0, BIT0_CLEARED],
    ] as [0 | 1, string][]) {
      await protectedAes(page, server.url, block);
      const want = reference(block);
      for (let run = 0; run < RUNS; run++) {
        const outcome = await runOnce(page);
        if (outcome.kind === 'caught') {
          expect(outcome.reason).toBe('check-circuit');
          aborts[bit]++;
        } else {
          expect(outcome).toEqual({ kind: 'output', value: want, recovered: false });
        }
      }
    }
  } finally {
    await server.stop();
  }
  const counts = `bit 1: ${aborts[1]} of ${RUNS} runs aborted; bit 0: ${aborts[0]} of ${RUNS}`;
  test.info().annotations.push({ type: 'selective failure', description: counts });
  console.log(`[e2e] selective failure on input bit 0: ${counts}`);
  // What a server that reads the bit would see: bit 1 aborting every time and bit 0 never. With
  // fair coins that pattern has probability 2^-20, and so has each of "no run aborted" and
  // "every run aborted": the counts for each bit are Binomial(10, 1/2), too few runs to assert
  // that both outcomes occur for each bit (2^-9 each).
  expect(aborts[1] === RUNS && aborts[0] === 0, counts).toBe(false);
  expect(aborts[0] + aborts[1], counts).toBeGreaterThan(0);
  expect(aborts[0] + aborts[1], counts).toBeLessThan(2 * RUNS);
});
