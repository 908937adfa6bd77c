#!/usr/bin/env node
/**
 * What a page downloads of the SDK's WebAssembly, and what takes the space: the file as
 * `npm run build` (ts-sdk) writes it, raw, gzip'd (zlib level 9) and brotli'd (quality 11); its
 * sections; and the code section's function bodies summed by the area of the code they come
 * from, read from the function names of the file's `name` section.
 *
 * Prints a line per area, then one JSON object.
 *
 * Usage: node bench/wasm-size.mjs [path/to/garblet_core_bg.wasm]   (default: ts-sdk/wasm/garblet_core_bg.wasm)
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const path = process.argv[2] ?? join(root, 'ts-sdk', 'wasm', 'garblet_core_bg.wasm');
const bytes = readFileSync(path);

/** The areas, first match wins: a function's demangled name (its path, after any `<`). */
const AREAS = [
  ['authenticated mode', /^garblet_core::(auth::|protocol::authenticated)/],
  ['cut-and-choose mode', /^garblet_core::(cnc::|protocol::cut_and_choose)/],
  ['oblivious transfer', /^(garblet_core::ot::|curve25519_dalek|sha2::|subtle::)/],
  ['garbling and AES', /^garblet_core::(garble|aes)::/],
  ['sessions, frames, catalog, bindings', /^(garblet_core::|wasm_bindgen|js_sys|wasm[a-z]+_|__wbg|__wbindgen)/],
  ['circuit library (the programs the browser builds)', /^garblet_circuits::/],
  ['BLAKE3', /^blake3::/],
  ['JSON (serde)', /^serde/],
  ['Rust core, alloc and std', /^(core|alloc|std|dlmalloc)(::|\[)/],
];

function leb(at) {
  let value = 0, shift = 0, i = at;
  for (;;) {
    const b = bytes[i++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, i];
  }
}

const name = (at) => {
  const [len, start] = leb(at);
  return [bytes.subarray(start, start + len).toString('utf8'), start + len];
};

// The sections: id, where the content starts and ends (a custom section's after its name).
const sections = [];
for (let i = 8; i < bytes.length;) {
  const id = bytes[i];
  const [len, start] = leb(i + 1);
  if (id === 0) {
    const [custom, content] = name(start);
    sections.push({ id, name: `custom:${custom}`, start: content, end: start + len, size: len });
  } else {
    sections.push({ id, start, end: start + len, size: len });
  }
  i = start + len;
}
const section = (id) => sections.find((s) => s.id === id);
const SECTION_NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];

// Imported functions come first in the function index space.
let imported = 0;
{
  const s = section(2);
  let [count, i] = leb(s.start);
  for (let n = 0; n < count; n++) {
    [, i] = name(i);
    [, i] = name(i);
    const kind = bytes[i++];
    if (kind === 0) { [, i] = leb(i); imported++; }
    else if (kind === 1) { i++; const flags = bytes[i++]; [, i] = leb(i); if (flags & 1) [, i] = leb(i); }
    else if (kind === 2) { const flags = bytes[i++]; [, i] = leb(i); if (flags & 1) [, i] = leb(i); }
    else if (kind === 3) i += 2;
    else throw new Error(`import kind ${kind}`);
  }
}

// Function names, from the `name` section's function subsection (id 1).
const names = new Map();
const nameSection = sections.find((s) => s.name === 'custom:name');
if (!nameSection) throw new Error(`${path} has no name section: the breakdown needs function names`);
for (let i = nameSection.start; i < nameSection.end;) {
  const sub = bytes[i];
  const [len, start] = leb(i + 1);
  if (sub === 1) {
    let [count, j] = leb(start);
    for (let n = 0; n < count; n++) {
      let index, text;
      [index, j] = leb(j);
      [text, j] = name(j);
      names.set(index, text);
    }
  }
  i = start + len;
}

const area = (fn) => {
  const path = fn.replace(/^[<&\s]+(mut\s+)?/, '').replace(/\[[0-9a-f]+\]/g, '');
  return AREAS.find(([, re]) => re.test(path))?.[0] ?? 'other';
};

const byArea = new Map(AREAS.map(([a]) => [a, 0]));
byArea.set('other', 0);
{
  const s = section(10);
  let [count, i] = leb(s.start);
  for (let f = 0; f < count; f++) {
    const [size, body] = leb(i);
    const a = area(names.get(imported + f) ?? '');
    byArea.set(a, byArea.get(a) + size);
    i = body + size;
  }
}

const code = [...byArea.values()].reduce((a, b) => a + b, 0);
const report = {
  file: path,
  raw_bytes: bytes.length,
  gzip9_bytes: gzipSync(bytes, { level: 9 }).length,
  brotli11_bytes: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  sections: Object.fromEntries(sections.map((s) => [s.name ?? SECTION_NAMES[s.id], s.size])),
  code_bytes_by_area: Object.fromEntries([...byArea].sort((a, b) => b[1] - a[1])),
};
for (const [a, size] of Object.entries(report.code_bytes_by_area)) {
  console.log(`${String(size).padStart(8)} B  ${((100 * size) / code).toFixed(1).padStart(5)} %  ${a}`);
}
console.log(JSON.stringify(report));
