/**
 * The SRI values of this build's own files (`dist/integrity-values.js`, written by
 * scripts/integrity.mjs after the build from the files themselves; the same as
 * `dist/integrity.json`).
 */
import type { AssetIntegrity } from './integrity.js';

export declare const integrity: AssetIntegrity;
