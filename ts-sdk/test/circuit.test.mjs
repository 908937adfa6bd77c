/**
 * `garblet/circuit`: the pinned TypeScript circuits compile to within 1.1× the AND gates of the
 * built-in programs and agree with reference algorithms on random inputs (evaluated in the clear
 * here, and through the Rust Bristol parser where a `garblet` binary is built); each
 * compile-time error names the developer's file and line; every example of the docs compiles.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compileFile } from '../dist/circuit-node/index.js';
import { bristolEvaluator } from './support/bristol.mjs';
import { randomUint } from './support/util.mjs';

const sdk = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(sdk);
const fixtures = join(sdk, 'test', 'circuits');

/**
 * AND gates of the built-in programs at the same sizes, as docs/performance.md records them
 * (`garblet circuit stats --builtin NAME --param …`, and the bundled adder64's file).
 */
const BUILTIN_AND = { hamming: 896, millionaires: 64, add64: 63, 'edit-distance': 49401 };

const compiled = new Map();
async function compiled_(name) {
  if (!compiled.has(name)) compiled.set(name, await compileFile(join(fixtures, `${name}.ts`)));
  return compiled.get(name);
}

test('the pinned circuits take at most 1.1 times the AND gates of the built-in programs', async () => {
  for (const [name, reference] of Object.entries(BUILTIN_AND)) {
    const { bristol, manifest } = await compiled_(name);
    const ands = (bristol.match(/ AND$/gm) ?? []).length;
    assert.equal(manifest.gates.and, ands, `${name}: the manifest counts the file's ANDs`);
    assert.ok(ands <= 1.1 * reference, `${name}: ${ands} ANDs, the built-in takes ${reference}`);
  }
});

/** Random inputs, the circuit's outputs in the clear, and the reference's. */
async function agrees(name, trials, draw, reference) {
  const { bristol } = await compiled_(name);
  const circuit = bristolEvaluator(bristol);
  for (let i = 0; i < trials; i++) {
    const inputs = draw(i);
    assert.deepEqual(circuit.run(inputs), reference(...inputs), `${name} on ${inputs}`);
  }
}

test('millionaires agrees with >', () =>
  agrees('millionaires', 200, (i) => (i % 4 === 0 ? [5n, 5n] : [randomUint(64 - (i % 60)), randomUint(64)]), (a, b) => [a > b ? 1n : 0n]));

test('add64 agrees with addition modulo 2^64', () =>
  agrees('add64', 200, (i) => [randomUint(64), i % 3 === 0 ? (1n << 64n) - 1n : randomUint(64)], (a, b) => [(a + b) % (1n << 64n)]));

const popcount = (v) => BigInt([...v.toString(2)].filter((c) => c === '1').length);
test('hamming agrees with the popcount of x ⊕ y', () =>
  agrees('hamming', 100, (i) => (i === 0 ? [(1n << 900n) - 1n, 0n] : [randomUint(900), randomUint(900)]), (x, y) => [popcount(x ^ y)]));

/** The textbook dynamic programme. */
function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length];
}
/** 100 symbols of 2 bits, symbol k in bits 2k (an array input's layout: element 0 lowest). */
const pack = (symbols) => symbols.reduce((v, s, k) => v | (BigInt(s) << BigInt(2 * k)), 0n);
const randomSymbols = () => Array.from({ length: 100 }, () => Number(randomUint(2)));

test('edit distance agrees with the dynamic programme, on random and on similar strings', () => {
  const pairs = [];
  return agrees(
    'edit-distance',
    24,
    (i) => {
      const a = randomSymbols();
      // Half the pairs are a few edits apart, where the table's diagonal matters most.
      const b = i % 2 ? randomSymbols() : a.map((s, k) => (k % (7 + i) === 0 ? (s + 1) % 4 : s));
      if (i === 2) b.splice(10, 3), b.push(0, 1, 2);
      pairs.push([a, b]);
      return [pack(a), pack(b)];
    },
    (pa, pb) => {
      const [a, b] = pairs[pairs.length - 1];
      assert.equal(pa, pack(a));
      assert.equal(pb, pack(b));
      return [BigInt(editDistance(a, b))];
    },
  );
});

/** A `garblet` binary to check against the Rust parser: $GARBLET_BIN, else a workspace build. */
const garblet = [process.env.GARBLET_BIN, join(root, 'target', 'release', 'garblet'), join(root, 'target', 'debug', 'garblet')].find((p) => p && existsSync(p));

test('the Rust parser reads each compiled circuit, counts its gates alike and computes the same outputs', { skip: garblet ? false : 'no garblet binary (build it or set GARBLET_BIN)' }, async () => {
  const dir = mkdtempSync(join(sdk, 'test', '.rust-check-'));
  try {
    for (const name of Object.keys(BUILTIN_AND)) {
      const { bristol, manifest } = await compiled_(name);
      const file = join(dir, `${name}.bristol`);
      writeFileSync(file, bristol);
      const stats = JSON.parse(execFileSync(garblet, ['circuit', 'stats', file], { encoding: 'utf8' }));
      assert.equal(stats.and, manifest.gates.and, name);
      assert.equal(stats.xor, manifest.gates.xor, name);
      const circuit = bristolEvaluator(bristol);
      for (let i = 0; i < 3; i++) {
        const inputs = circuit.inputs.map((w) => randomUint(w));
        const args = inputs.flatMap((v) => ['--input', `0x${v.toString(16)}`]);
        const out = JSON.parse(execFileSync(garblet, ['circuit', 'eval', file, ...args, '--json'], { encoding: 'utf8' }));
        assert.deepEqual(out.outputs.map((o) => BigInt(o.hex)), circuit.run(inputs), `${name} on ${inputs}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// Errors, in the developer's terms and at the developer's line

/** The line of `marker` in a fixture (1-based). */
function lineOf(file, marker) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(marker));
  assert.ok(i >= 0, `${marker} in ${file}`);
  return i + 1;
}

const errorCases = [
  ['width-mismatch.ts', 'width-mismatch', /the operands are 9 and 8 bits wide/],
  ['output-too-wide.ts', 'width-mismatch', /output sum is declared uint\(8\) but the value is 9 bits wide/],
  ['secret-loop-bound.ts', 'secret-control-flow', /loops need constant bounds/],
  ['no-owner.ts', 'no-owner', /input secret has no owner: write garbler\(uint\(32\)\) .* or evaluator\(uint\(32\)\)/],
  ['no-recipient.ts', 'no-recipient', /output extra is returned but has no recipient/],
  ['signed-and-unsigned.ts', 'type-mismatch', /the operand is signed \(int\(16\)\); convert/],
  ['runaway-loop.ts', 'too-large', /passed 5000 gates: is a loop or a condition .* reading a secret value/],
];

for (const [fixture, reason, message] of errorCases) {
  test(`${fixture}: a ${reason} error at the line that causes it`, async () => {
    const file = join(fixtures, 'errors', fixture);
    const error = await compileFile(file, undefined, { maxGates: 5000 }).then(
      () => assert.fail('it compiled'),
      (e) => e,
    );
    assert.equal(error.name, 'CircuitError', String(error.stack));
    assert.equal(error.reason, reason);
    assert.match(error.detail, message);
    assert.equal(error.location?.file, file);
    assert.equal(error.location?.line, lineOf(file, '// ← the error'));
    assert.ok(error.message.startsWith(`${file}:${error.location.line}:`), error.message);
  });
}

test('the command line prints the error at its line and exits 1; a compiled file gets its two outputs', () => {
  const bin = join(sdk, 'bin', 'garblet-compile.mjs');
  const file = join(fixtures, 'errors', 'secret-loop-bound.ts');
  let failure;
  try {
    execFileSync(process.execPath, [bin, file], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    failure = e;
  }
  assert.equal(failure?.status, 1);
  assert.ok(failure.stderr.startsWith(`${file}:${lineOf(file, '// ← the error')}:`), failure.stderr);
  const dir = mkdtempSync(join(sdk, 'test', '.cli-'));
  try {
    const out = execFileSync(process.execPath, [bin, join(fixtures, 'millionaires.ts'), '--out-dir', dir], { encoding: 'utf8' });
    assert.match(out, /64 AND/);
    const manifest = JSON.parse(readFileSync(join(dir, 'millionaires.manifest.json'), 'utf8'));
    assert.equal(manifest.name, 'millionaires');
    assert.deepEqual(manifest.outputs, [{ name: 'serverIsRicher', reveal: 'both', type: { kind: 'bit' } }]);
    assert.ok(existsSync(join(dir, 'millionaires.bristol')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const usage = (() => {
    try {
      execFileSync(process.execPath, [bin], { stdio: 'pipe' });
    } catch (e) {
      return e;
    }
  })();
  assert.equal(usage?.status, 2, 'no file is a usage mistake');
});

// ---------------------------------------------------------------------------------------------
// The docs' examples

/** Every ```ts block of `file` that declares a circuit. */
function examples(file) {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).filter((code) => code.includes('circuit('));
}

/** `tsc --strict` over `files`: the types of `garblet/circuit` as a developer's editor sees them. */
function typecheck(files) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', ...files], { encoding: 'utf8', stdio: 'pipe' });
}

test('the pinned circuits and the error fixtures type-check (the fixtures expect their type errors)', () => {
  const files = [...readdirSync(fixtures).filter((f) => f.endsWith('.ts')).map((f) => join(fixtures, f)), ...readdirSync(join(fixtures, 'errors')).map((f) => join(fixtures, 'errors', f))];
  try {
    typecheck(files);
  } catch (e) {
    assert.fail(e.stdout || e.message);
  }
});

test('every circuit example in the docs compiles, type-checks and runs', async () => {
  const docs = [join(sdk, 'README.md'), join(root, 'README.md'), join(root, 'docs', 'circuits.md')];
  const dir = mkdtempSync(join(sdk, 'test', '.doc-examples-'));
  let count = 0;
  try {
    for (const doc of docs) {
      for (const [i, code] of examples(doc).entries()) {
        const file = join(dir, `${docs.indexOf(doc)}-${i}.ts`);
        writeFileSync(file, code);
        const { bristol, manifest } = await compileFile(file);
        assert.ok(manifest.outputs.length > 0, `${doc} example ${i}`);
        // It runs: every gate reads assigned wires, and every output of the manifest comes out.
        const circuit = bristolEvaluator(bristol);
        for (let run = 0; run < 4; run++) {
          const outputs = circuit.run(circuit.inputs.map((width) => randomUint(width)));
          assert.equal(outputs.length, circuit.outputs.length, `${doc} example ${i}`);
        }
        count++;
      }
    }
    try {
      typecheck(readdirSync(dir).map((f) => join(dir, f)));
    } catch (e) {
      assert.fail(e.stdout || e.message);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.ok(count >= 3, `${count} examples found`);
});

test('the library imports nothing of Node: it compiles in browsers', () => {
  const dir = join(sdk, 'dist', 'circuit');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    assert.doesNotMatch(text, /from ['"]node:|require\(|process\./, file);
  }
});
