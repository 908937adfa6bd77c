// A release's own steps, around `npm test` (which sets up, builds and tests everything); the
// release workflow (.github/workflows/release.yml) runs them, and so can a maintainer, in this
// order (docs/releasing.md):
//   node scripts/release.mjs check vX.Y.Z      the tag names the versions the release ships
//   CI=true npm test                          set-up, build, every test suite
//   node scripts/release.mjs pack vX.Y.Z       into release/: the npm package (npm pack), the
//                                             garblet binary as a .tar.gz, and SHA256SUMS
//   node scripts/release.mjs publish vX.Y.Z [--dry-run]
//                                             npm publish of the packed package (a pre-release,
//                                             vX.Y.Z-rc.1, under the dist-tag `next`)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { garbletBinary, root } from './stack.mjs';

const OUT = join(root, 'release');
const sdk = join(root, 'ts-sdk');
const say = (msg) => console.log(`[release] ${msg}`);
const run = (cmd, args, cwd = root) => execFileSync(cmd, args, { cwd, stdio: 'inherit' });

/** X.Y.Z (and a pre-release suffix) from the tag vX.Y.Z; throws on anything else. */
export function versionOf(tag) {
  const m = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag ?? '');
  if (!m) throw new Error(`the tag must be vX.Y.Z (or vX.Y.Z-pre.N): got ${JSON.stringify(tag)}`);
  return m[1];
}

/** Why the repository does not describe release `version`, if it does not: each a sentence. */
export function mismatches(version, files = readFiles()) {
  const problems = [];
  const cargo = /\[workspace\.package\][^[]*?\nversion\s*=\s*"([^"]+)"/.exec(files.cargo)?.[1];
  if (cargo !== version) problems.push(`Cargo.toml's [workspace.package] version is ${cargo}, not ${version}`);
  const npm = JSON.parse(files.packageJson).version;
  if (npm !== version) problems.push(`ts-sdk/package.json's version is ${npm}, not ${version}`);
  if (!new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm').test(files.changelog)) problems.push(`ts-sdk/CHANGELOG.md has no "## ${version}" section`);
  return problems;
}

function readFiles() {
  return {
    cargo: readFileSync(join(root, 'Cargo.toml'), 'utf8'),
    packageJson: readFileSync(join(sdk, 'package.json'), 'utf8'),
    changelog: readFileSync(join(sdk, 'CHANGELOG.md'), 'utf8'),
  };
}

function check(version) {
  const problems = mismatches(version);
  if (problems.length) throw new Error(`release ${version}:\n  ${problems.join('\n  ')}`);
  say(`${version}: Cargo.toml, ts-sdk/package.json and ts-sdk/CHANGELOG.md agree`);
}

/** The release's files, in release/: what `publish` and the GitHub release upload. */
function pack(version) {
  check(version);
  if (!existsSync(garbletBinary)) throw new Error(`${garbletBinary} is missing: run \`npm test\` (or \`npm run demo\`) first, which builds it`);
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT);
  say('npm pack in ts-sdk/ (its prepack builds what is out of date)');
  run('npm', ['pack', '--pack-destination', OUT], sdk);
  const packed = `garblet-${version}.tgz`;
  if (!existsSync(join(OUT, packed))) throw new Error(`npm pack did not write ${packed}: ${readdirSync(OUT).join(', ')}`);
  // The binary in a folder of its own, with the licences, as a release archive holds it.
  const name = `garblet-${version}-${process.arch === 'x64' ? 'x86_64' : process.arch}-${process.platform}`;
  const staging = mkdtempSync(join(tmpdir(), 'garblet-release-'));
  mkdirSync(join(staging, name));
  copyFileSync(garbletBinary, join(staging, name, 'garblet'));
  for (const file of ['LICENSE-MIT', 'LICENSE-APACHE', 'README.md']) copyFileSync(join(root, file), join(staging, name, file));
  run('tar', ['-czf', join(OUT, `${name}.tar.gz`), '-C', staging, name]);
  rmSync(staging, { recursive: true, force: true });
  const sums = readdirSync(OUT)
    .sort()
    .map((file) => `${createHash('sha256').update(readFileSync(join(OUT, file))).digest('hex')}  ${file}\n`)
    .join('');
  writeFileSync(join(OUT, 'SHA256SUMS'), sums);
  say(`release/:\n${sums}`);
}

/** `npm publish` of the packed package; a pre-release goes under the dist-tag `next`, not `latest`. */
function publish(version, dryRun) {
  const tarball = join(OUT, `garblet-${version}.tgz`);
  if (!existsSync(tarball)) throw new Error(`${tarball} is missing: run \`node scripts/release.mjs pack v${version}\` first`);
  const args = ['publish', tarball, '--access', 'public'];
  if (version.includes('-')) args.push('--tag', 'next');
  // Provenance needs the CI's OpenID Connect token; a maintainer's machine has none.
  if (process.env.GITHUB_ACTIONS) args.push('--provenance');
  if (dryRun) args.push('--dry-run');
  run('npm', args);
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [command, tag] = process.argv.slice(2);
  try {
    const version = versionOf(tag);
    if (command === 'check') check(version);
    else if (command === 'pack') pack(version);
    else if (command === 'publish') publish(version, process.argv.includes('--dry-run'));
    else throw new Error('usage: node scripts/release.mjs check|pack|publish vX.Y.Z [--dry-run]');
  } catch (e) {
    console.error(`[release] ${e.message}`);
    process.exit(1);
  }
}
