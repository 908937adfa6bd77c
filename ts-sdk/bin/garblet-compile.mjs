#!/usr/bin/env node
// garblet-compile FILE.ts: compiles the circuit FILE exports to FILE.bristol (Bristol Fashion)
// and FILE.manifest.json beside it (or in --out-dir), and prints the service lines for
// `garblet serve`. Exit codes: 0 compiled, 1 the circuit has an error (printed as
// file:line:column: message), 2 a usage mistake.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compileFile } from '../dist/circuit-node/index.js';

const usage = `usage: garblet-compile FILE.ts [--export NAME] [--out-dir DIR]

Compiles the circuit that FILE exports (export default circuit({ inputs, outputs }, body)) to
FILE.bristol and FILE.manifest.json.

  --export NAME   the named export to compile instead of the default export
  --out-dir DIR   where to write the two files (default: beside FILE)`;

let args;
try {
  args = parseArgs({ allowPositionals: true, options: { export: { type: 'string' }, 'out-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
} catch (e) {
  console.error(`garblet-compile: ${e.message}\n\n${usage}`);
  process.exit(2);
}
if (args.values.help) {
  console.log(usage);
  process.exit(0);
}
if (args.positionals.length !== 1) {
  console.error(`garblet-compile: give one circuit file\n\n${usage}`);
  process.exit(2);
}
const file = resolve(args.positionals[0]);
const stem = basename(file, extname(file));
const outDir = resolve(args.values['out-dir'] ?? dirname(file));

let compiled;
try {
  compiled = await compileFile(file, args.values.export);
} catch (e) {
  if (e?.name === 'CircuitError') {
    console.error(e.message);
    process.exit(1);
  }
  if (e?.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(file)) {
    console.error(`garblet-compile: cannot read ${file}`);
    process.exit(2);
  }
  throw e;
}
const { bristol } = compiled;
const manifest = { ...compiled.manifest, name: compiled.manifest.name ?? stem };
mkdirSync(outDir, { recursive: true });
const bristolPath = join(outDir, `${stem}.bristol`);
const manifestPath = join(outDir, `${stem}.manifest.json`);
writeFileSync(bristolPath, bristol);
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
const { and, xor, inv } = manifest.gates;
console.log(`${bristolPath}: ${and} AND, ${xor} XOR, ${inv} INV`);
console.log(`${manifestPath}: ${manifest.inputs.length} inputs, ${manifest.outputs.length} outputs`);
// The service lines, with each of the server's inputs read from an environment variable of its
// name (server/README.md lists the other ways to give a value).
const garblerInputs = manifest.inputs.filter((i) => i.owner === 'garbler').map((i) => `${i.name} = { env = "${i.name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}" }`);
console.log(`\n[[service]]\nname = "${manifest.name}"\ncircuit = { bristol_file = "${basename(bristolPath)}", manifest = "${basename(manifestPath)}" }`);
if (garblerInputs.length) console.log(`garbler_inputs = { ${garblerInputs.join(', ')} }`);
