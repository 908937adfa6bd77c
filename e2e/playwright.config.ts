import { defineConfig } from '@playwright/test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's Chromium: Playwright cannot download its own browsers here. */
export const CHROMIUM = process.env.GARBLET_CHROMIUM ?? '/usr/bin/chromium';

/** Tests tagged @slow (10^8 AND gates) run only under `npm run test:slow`. */
const slow = !!process.env.GARBLET_E2E_SLOW;

/** Chromium keeps crash-report settings and dconf state under XDG folders: keep them in /tmp. */
const browserHome = join(tmpdir(), 'garblet-e2e-chromium');

export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  globalSetup: './global-setup.ts',
  grep: slow ? /@slow/ : undefined,
  grepInvert: slow ? undefined : /@slow/,
  // One browser against one server on a two-core machine: parallel tests would time each other.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  // In CI one retry: a test that fails once and then passes is reported as flaky (with its
  // error, which `npm test` prints again after its summary) rather than failing the run.
  retries: process.env.CI ? 1 : 0,
  timeout: 90_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: CHROMIUM,
      env: { ...process.env, XDG_CONFIG_HOME: join(browserHome, 'config'), XDG_CACHE_HOME: join(browserHome, 'cache') },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
    viewport: { width: 1100, height: 900 },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
});
