/**
 * The benchmarks' Chromium: the system's (`CHROMIUM` overrides the path) and the flags it runs
 * with here: headless, no sandbox (root in a container), and none of its own background traffic.
 */
export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
