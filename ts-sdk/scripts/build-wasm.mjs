// Builds the evaluator core (crate garblet-core) for WebAssembly and generates its JS bindings
// into ts-sdk/wasm/ (or, with --bench, the benchmark's build into bench/browser/wasm/). Needs the wasm32 target and wasm-bindgen-cli (the setup script installs
// both); `cargo` is skipped quickly when nothing changed.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(sdk);
const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

// `--bench`: the browser benchmark's build — the same core plus its timing exports (the
// crate's `bench` feature) — into bench/browser/wasm/. The SDK's build never has them: a page
// that computes does not ship benchmark code.
const bench = process.argv.includes('--bench');
// Reproducible bytes: panic messages hold the source paths of the crates they come from, and the
// dependencies' sources lie under CARGO_HOME (the registry), an absolute path that differs from
// one machine to another. They are written as /cargo/… instead. The workspace's own paths are
// relative and the standard library's are /rustc/<commit>/… already. (Cargo adds these flags to
// the +simd128 of .cargo/config.toml.)
const cargoHome = process.env.CARGO_HOME ?? join(homedir(), '.cargo');
const remap = `target.wasm32-unknown-unknown.rustflags=${JSON.stringify([`--remap-path-prefix=${cargoHome}=/cargo`])}`;
run('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown', '-p', 'garblet-core', '--config', remap, ...(bench ? ['--features', 'bench'] : [])]);
const out = bench ? join(root, 'bench', 'browser', 'wasm') : join(sdk, 'wasm');
mkdirSync(out, { recursive: true });
run('wasm-bindgen', ['--target', 'web', '--out-dir', out, join(targetDir, 'wasm32-unknown-unknown', 'release', 'garblet_core.wasm')]);
