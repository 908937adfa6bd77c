/**
 * What a person reads. An input that does not fit is refused with a sentence in the user's
 * terms — what the input takes, then what was given — and with the same sentence the `garblet`
 * command line prints for the same mistake (run here against the same server), so that an app's
 * message, the demo page and a terminal agree. The typed fields are errors.test.mjs's; here
 * the words are the point. Also in the user's terms: the millionaires' output is named for the
 * server, whose number it compares, and the evaluator's statistics carry its CPU time.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { apps, hex, InputError } from 'garblet';
import { APP_VALUES } from './support/server-config.mjs';
import { serverAndSession } from './support/server.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const garblet = process.env.GARBLET_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, 'target'), 'release', 'garblet');

const live = serverAndSession();

/** `garblet run SERVICE --input TEXT` against the test server: its exit code and what it said. */
function cli(service, text, ...extra) {
  try {
    const stdout = execFileSync(garblet, ['run', '--server', live.server.url, service, '--input', text, ...extra], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

// [what, service, the SDK's value, the command line's --input, the sentence both say]
const MISTAKES = [
  ['a block of 2 bytes for AES', 'aes128', hex('0011'), '0x0011', 'plaintext takes exactly 16 bytes (32 hex digits); 2 given'],
  ['a negative number', 'millionaires', '-5', '-5', 'y takes a whole number from 0 to 4,294,967,295; -5 is negative'],
  ['words for a number', 'add64', 'twelve', 'twelve', "b takes a whole number from 0 to 18,446,744,073,709,551,615; 'twelve' is not one (write decimal digits, or hexadecimal after 0x)"],
  ['a number too wide', 'millionaires', '0x100000000', '0x100000000', 'y takes a whole number from 0 to 4,294,967,295; 0x100000000 is too large'],
  ['DNA longer than the service accepts', 'levenshtein', 'A'.repeat(201), 'A'.repeat(201), 'b accepts at most 200 bases; 201 given'],
  ['a protein longer than the service accepts', 'smith_waterman', 'A'.repeat(101), 'A'.repeat(101), 'protein accepts at most 100 letters; 101 given'],
];

for (const [what, service, value, typed, sentence] of MISTAKES) {
  test(`${what}: the SDK and the command line say "${sentence}"`, async () => {
    const inputs = Object.fromEntries(live.session.service(service).inputs.filter((f) => f.party === 'evaluator').map((f) => [f.name, value]));
    await assert.rejects(live.session.run(service, inputs), (e) => {
      assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
      assert.equal(e.message, sentence);
      return true;
    });
    const { code, stdout, stderr } = cli(service, typed);
    assert.equal(code, 2, `the command line refuses it: ${stdout}${stderr}`);
    assert.equal(stderr.trim(), `garblet: ${sentence}`);
    // With --json, the same as one JSON object on stdout.
    const json = cli(service, typed, '--json');
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.stdout), { error: { kind: 'usage', message: sentence, exit_code: 2 } });
  });
}

test('a text too long is an input-length error of the input, not a parameter the user never set', async () => {
  await assert.rejects(live.session.run('levenshtein', { b: 'A'.repeat(201) }), (e) => {
    assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
    const m = live.session.service('levenshtein').circuit.client_params.find((p) => p.name === 'm');
    assert.deepEqual(e.fields(), { reason: 'input-length', service: 'levenshtein', input: 'b', param: 'm', got: 201, min: m.min, max: 200, unit: 'symbols' });
    return true;
  });
  assert.equal(live.session.closed, false);
});

test("millionaires names its output for the server's number, the only one the client does not hold", async () => {
  const info = live.session.service('millionaires');
  assert.deepEqual(info.outputs.map((o) => o.name), ['server_greater']);
  const { outputs } = await live.session.run('millionaires', { y: APP_VALUES.fortune - 1n });
  assert.equal(outputs.server_greater.toBoolean(), true);
  assert.equal((await apps.serverIsGreater(live.session, APP_VALUES.fortune)).value, false);
  assert.equal(cli('millionaires', String(APP_VALUES.fortune + 1n)).stdout, 'server_greater = 0\n');
});

test("the evaluator's statistics carry its CPU time: the time its engine spent computing", async () => {
  const { stats } = await live.session.run('aes128', { plaintext: hex('00112233445566778899aabbccddeeff') });
  assert.equal(typeof stats.evaluator.cpu_ms, 'number');
  assert.ok(stats.evaluator.cpu_ms > 0 && stats.evaluator.cpu_ms <= stats.evaluator.wall_ms + 1, JSON.stringify(stats.evaluator));
});
