/**
 * The benchmarks' Chromium: the system's (`CHROMIUM` overrides the path) and the flags it runs
 * with here: headless, no sandbox (root in a container), and none of its own background traffic.
 */
import { execFileSync } from 'node:child_process';

export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The version the binary reports (`--version`: "Chromium 156.0.8078.73 built on …"), without starting a browser. */
export function chromiumVersion() {
  const line = execFileSync(chromiumPath, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return line.match(/\d+(\.\d+){3}/)?.[0] ?? line.trim();
}
