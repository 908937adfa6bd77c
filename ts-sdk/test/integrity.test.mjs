/**
 * The SDK's own files and their pinned hashes. The values the build published
 * (dist/integrity.json, and the package's `integrity` export) are those of the files that ship;
 * the workers' bundles are self-contained, so the hash covers all they run; the check itself
 * refuses a file with one byte changed, with an IntegrityError, and Garblet.connect refuses
 * before it opens a connection.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { ASSET_FILES, Garblet, GarbletError, integrity, IntegrityError } from 'garblet';
import { integrityOf as sri, verifyAsset } from '../dist/integrity.js';
import { ASSET_FILES as BUILD_FILES, integrityOf } from '../scripts/integrity.mjs';
import { startServer } from './support/server.mjs';

const file = (path) => readFileSync(new URL(`../${path}`, import.meta.url));
const sha384 = (bytes) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;

describe('the published values', () => {
  test('dist/integrity.json and the `integrity` export are the hashes of the files that ship', () => {
    const published = JSON.parse(file('dist/integrity.json'));
    assert.deepEqual({ ...integrity }, published);
    assert.deepEqual(Object.keys(published).sort(), ['otWorker', 'socketWorker', 'wasm', 'worker']);
    for (const [name, path] of Object.entries(ASSET_FILES)) assert.equal(published[name], sha384(file(path)), `${name} (${path})`);
    assert.deepEqual(integrityOf(), published);
  });

  test('the build script and the SDK name the same files', () => {
    assert.deepEqual({ ...ASSET_FILES }, BUILD_FILES);
  });

  test('each worker bundle is self-contained: no imports, nothing resolved against its own URL', () => {
    for (const name of ['worker', 'socketWorker', 'otWorker']) {
      const text = file(ASSET_FILES[name]).toString('utf8');
      assert.doesNotMatch(text, /^\s*import\s*[\w{*'"]/m, `${name}: static import`);
      assert.doesNotMatch(text, /\bimport\s*\(/, `${name}: dynamic import`);
      assert.doesNotMatch(text, /import\.meta/, `${name}: import.meta`);
    }
  });
});

describe('the check', () => {
  const bytes = new Uint8Array(file(ASSET_FILES.socketWorker));
  const pinned = sha384(bytes);

  test('the right bytes pass, under each SRI algorithm and among several values', async () => {
    await verifyAsset('socketWorker', 'x', bytes, pinned);
    await verifyAsset('socketWorker', 'x', bytes, await sri(bytes, 'sha512'));
    await verifyAsset('socketWorker', 'x', bytes, `sha384-${'A'.repeat(64)} ${pinned}`);
    // SRI's rule: only the strongest algorithm given counts; options after '?' are ignored.
    await verifyAsset('socketWorker', 'x', bytes, `${await sri(bytes, 'sha256')} ${pinned}?ct=x`);
  });

  test('one byte changed is refused with an IntegrityError naming the file and both values', async () => {
    for (const at of [0, bytes.length >> 1, bytes.length - 1]) {
      const tampered = bytes.slice();
      tampered[at] ^= 1;
      await assert.rejects(verifyAsset('socketWorker', 'https://app.example/s.js', tampered, pinned), (e) => {
        assert.ok(e instanceof IntegrityError && e instanceof GarbletError, `${e.name}: ${e.message}`);
        assert.equal(e.name, 'IntegrityError');
        assert.equal(e.reason, 'mismatch');
        assert.equal(e.asset, 'socketWorker');
        assert.equal(e.url, 'https://app.example/s.js');
        assert.equal(e.expected, pinned);
        assert.equal(e.actual, sha384(tampered));
        return true;
      });
    }
  });

  test('a stronger algorithm that does not match outweighs a weaker one that does', async () => {
    const wrong512 = `sha512-${'A'.repeat(86)}==`;
    await assert.rejects(verifyAsset('wasm', 'x', bytes, `${pinned} ${wrong512}`), IntegrityError);
  });

  test('integrity values that are not SRI values are a TypeError before anything is fetched', async () => {
    for (const bad of [{ ...integrity, wasm: 'md5-abc' }, { ...integrity, worker: undefined }, { ...integrity, otWorker: 'sha384' }, 'sha384-x', null]) {
      await assert.rejects(Garblet.connect('ws://127.0.0.1:1/', { integrity: bad }), TypeError);
    }
  });
});

describe('Garblet.connect with integrity', () => {
  let server;
  let decoy;
  let connections = 0;
  before(async () => {
    server = await startServer();
    decoy = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    decoy.on('connection', (ws) => {
      connections++;
      ws.close();
    });
    await new Promise((resolve) => decoy.once('listening', resolve));
  });
  after(async () => {
    await server?.kill();
    await new Promise((resolve) => decoy.close(resolve));
  });

  test('the published values connect and compute', async () => {
    const session = await Garblet.connect(server.url, { integrity });
    try {
      const { outputs } = await session.run('zero_equal', 0);
      assert.equal(outputs.is_zero.toBoolean(), true);
    } finally {
      session.close();
    }
  });

  test('a wrong wasm hash is refused with an IntegrityError and no connection is opened', async () => {
    const wrong = { ...integrity, wasm: sha384(Buffer.from('not the core')) };
    await assert.rejects(Garblet.connect(`ws://127.0.0.1:${decoy.address().port}/`, { integrity: wrong }), (e) => {
      assert.ok(e instanceof IntegrityError, `${e.name}: ${e.message}`);
      assert.equal(e.asset, 'wasm');
      assert.equal(e.actual, integrity.wasm);
      return true;
    });
    assert.equal(connections, 0);
  });
});
