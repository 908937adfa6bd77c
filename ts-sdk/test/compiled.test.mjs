/**
 * The functions the server embeds (circuits/compiled/) are what their TypeScript sources compile
 * to: garblet-compile, run again on each source, writes the committed Bristol file and manifest
 * byte for byte. An edit to a source without compiling it again fails here.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../../circuits/compiled/', import.meta.url));
const bin = fileURLToPath(new URL('../bin/garblet-compile.mjs', import.meta.url));
const sources = readdirSync(dir).filter((f) => f.endsWith('.ts'));

test('there is a compiled function to check', () => {
  assert.ok(sources.includes('budget.ts'), sources.join(', '));
});

for (const source of sources) {
  test(`circuits/compiled/${source} compiles to the committed files`, () => {
    const out = mkdtempSync(join(tmpdir(), 'garblet-compiled-'));
    try {
      execFileSync(process.execPath, [bin, join(dir, source), '--out-dir', out], { stdio: ['ignore', 'pipe', 'pipe'] });
      const stem = source.slice(0, -'.ts'.length);
      for (const file of [`${stem}.bristol`, `${stem}.manifest.json`]) {
        assert.ok(readFileSync(join(out, file)).equals(readFileSync(join(dir, file))), `${file} differs from what ${source} compiles to: run garblet-compile ${source}`);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
}
