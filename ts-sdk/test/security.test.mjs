/**
 * Security modes: the catalog says what each service offers; a cut-and-choose run of private AES
 * gives FIPS-197's ciphertext and says how it ran; `require` on the connection and `security` on
 * a run are enforced before anything of the run is sent, with typed errors that leave the
 * connection usable; a stream that is not what the server committed to is CheatingDetected.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { CheatingDetected, Garblet, GarbletError, InputError } from 'garblet';
import { APP_VALUES } from './support/server-config.mjs';
import { serverAndSession, startServer } from './support/server.mjs';
import { fromHex, hex, randomUint } from './support/util.mjs';

const plaintext = fromHex('00112233445566778899aabbccddeeff');
const FIPS_197_C1 = '69c4e0d86a7b0430d8cdb78070b4c55a';

const popcount = (v) => v.toString(2).split('').filter((d) => d === '1').length;

describe('on a connection that requires nothing', () => {
  const live = serverAndSession();

  test("the catalog says each service's strongest mode", () => {
    const security = Object.fromEntries(live.session.services().map((s) => [s.name, s.security]));
    assert.equal(security.aes128, 'cut-and-choose');
    assert.equal(security.hamming, 'authenticated');
    assert.equal(security.aes128_appendix_b, 'standard');
    assert.equal(security.add64, 'standard');
    assert.equal(live.session.require, 'standard');
  });

  test('a cut-and-choose run of aes128 gives FIPS-197 Appendix C.1, and says so', async () => {
    const reports = [];
    const cnc = await live.session.run('aes128', { plaintext }, { security: 'cut-and-choose', onProgress: (p) => reports.push(p) });
    assert.equal(hex(cnc.outputs.ciphertext.bytes()), FIPS_197_C1);
    assert.equal(cnc.security, 'cut-and-choose');
    assert.equal(cnc.recovered, false);
    // The last progress report counts the computation's AND gates, as its stats do.
    assert.equal(reports.at(-1).andGates, cnc.stats.evaluator.and_gates);
    assert.equal(cnc.stats.evaluator.and_gates, live.session.service('aes128').and_gates);

    const standard = await live.session.run('aes128', { plaintext });
    assert.equal(hex(standard.outputs.ciphertext.bytes()), FIPS_197_C1);
    assert.equal(standard.security, 'standard');
    assert.equal(standard.recovered, false);
    // The evaluation circuits' tables alone are many standard runs' worth.
    assert.ok(cnc.stats.evaluator.bytes_received > 10 * standard.stats.evaluator.bytes_received, `${cnc.stats.evaluator.bytes_received} vs ${standard.stats.evaluator.bytes_received}`);
    assert.equal(cnc.stats.evaluator.bytes_received, cnc.stats.garbler.bytes_sent);
    assert.equal(cnc.stats.evaluator.bytes_sent, cnc.stats.garbler.bytes_received);
  });

  test('a cut-and-choose run of a built-in program (hamming) gives the distance', async () => {
    const y = randomUint(900);
    const { outputs, security, recovered } = await live.session.run('hamming', { y }, { security: 'cut-and-choose' });
    assert.equal(outputs.distance.toNumber(), popcount(y ^ APP_VALUES.irisCode));
    assert.deepEqual([security, recovered], ['cut-and-choose', false]);
  });

  test('an authenticated run of hamming gives the distance, and costs a few standard runs', async () => {
    const y = randomUint(900);
    const auth = await live.session.run('hamming', { y }, { security: 'authenticated' });
    assert.equal(auth.outputs.distance.toNumber(), popcount(y ^ APP_VALUES.irisCode));
    assert.deepEqual([auth.security, auth.recovered], ['authenticated', false]);
    assert.equal(auth.stats.evaluator.and_gates, live.session.service('hamming').and_gates);
    assert.equal(auth.stats.evaluator.bytes_received, auth.stats.garbler.bytes_sent);
    const standard = await live.session.run('hamming', { y });
    assert.equal(standard.outputs.distance.toNumber(), auth.outputs.distance.toNumber());
    assert.ok(auth.stats.evaluator.bytes_received > standard.stats.evaluator.bytes_received);
  });

  test('a run asking for more than its service offers is refused, and the connection stays usable', async () => {
    await assert.rejects(live.session.run('add64', { b: 1 }, { security: 'cut-and-choose' }), (e) => {
      assert.ok(e instanceof InputError && e instanceof GarbletError, `${e.name}: ${e.message}`);
      assert.deepEqual([e.reason, e.code, e.service, e.offered, e.required], ['security-not-offered', 'bad-request', 'add64', 'standard', 'cut-and-choose']);
      return true;
    });
    assert.equal(live.session.closed, false);
    assert.equal((await live.session.run('add64', { b: 1 })).security, 'standard');
  });

  test('an unknown mode is a TypeError, for a run and for a connection', async () => {
    for (const security of ['malicious', 'Cut-and-choose', 1]) {
      await assert.rejects(live.session.run('aes128', { plaintext }, { security }), TypeError, String(security));
      await assert.rejects(Garblet.connect(live.server.url, { require: security }), TypeError, String(security));
    }
    assert.equal(live.session.closed, false);
  });
});

/**
 * A WebSocket proxy in front of `target` that counts the messages the client sends, to show that
 * a refused run sent nothing, and passes the server's messages through `alter`.
 */
async function countingProxy(target, alter = (m) => m) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const counts = { fromClient: 0 };
  wss.on('connection', (client) => {
    const upstream = new WebSocket(target);
    const pending = [];
    upstream.on('open', () => pending.splice(0).forEach((m) => upstream.send(m)));
    client.on('message', (m) => {
      counts.fromClient++;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(m);
      else pending.push(m);
    });
    upstream.on('message', (m) => client.send(alter(new Uint8Array(m))));
    const closeBoth = () => {
      client.close();
      upstream.close();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    upstream.on('error', closeBoth);
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/`, counts, close: () => new Promise((resolve) => wss.close(resolve)) };
}

describe("a connection that requires cut-and-choose", () => {
  let server;
  let proxy;
  let session;
  before(async () => {
    server = await startServer();
    proxy = await countingProxy(server.url);
    session = await Garblet.connect(proxy.url, { require: 'cut-and-choose' });
  });
  after(async () => {
    session?.close();
    await proxy?.close();
    await server?.kill();
  });

  test('runs in cut-and-choose without being asked each time', async () => {
    assert.equal(session.require, 'cut-and-choose');
    const { outputs, security, recovered } = await session.run('aes128', { plaintext });
    assert.equal(hex(outputs.ciphertext.bytes()), FIPS_197_C1);
    assert.deepEqual([security, recovered], ['cut-and-choose', false]);
  });

  test('refuses a standard-only service before sending anything, and stays usable', async () => {
    const sent = proxy.counts.fromClient;
    await assert.rejects(session.run('aes128_appendix_b', { plaintext }), (e) => {
      assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
      assert.deepEqual([e.reason, e.code, e.service, e.offered, e.required], ['security-not-offered', 'bad-request', 'aes128_appendix_b', 'standard', 'cut-and-choose']);
      return true;
    });
    // Give a stray frame time to reach the proxy: there must be none.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(proxy.counts.fromClient, sent, 'frames sent for a refused run');
    assert.equal(session.closed, false);
    assert.equal(hex((await session.run('aes128', { plaintext })).outputs.ciphertext.bytes()), FIPS_197_C1);
  });

  test('refuses a run that asks for less, before sending anything', async () => {
    const sent = proxy.counts.fromClient;
    await assert.rejects(session.run('aes128', { plaintext }, { security: 'standard' }), (e) => {
      assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
      assert.deepEqual([e.reason, e.requested, e.required], ['security-below-required', 'standard', 'cut-and-choose']);
      return true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(proxy.counts.fromClient, sent, 'frames sent for a refused run');
    assert.equal(session.closed, false);
    // Asking for the mode it requires is fine.
    assert.equal((await session.run('aes128', { plaintext }, { security: 'cut-and-choose' })).security, 'cut-and-choose');
  });
});

describe('a server whose stream is not what it committed to', () => {
  let server;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.kill();
  });

  test('is caught: CheatingDetected with the check and the circuit, the connection ends, the server hears why', async () => {
    // One bit flipped in the middle of the first Data frame: evaluation circuits' tables, which
    // the server committed to before the browser chose which circuits to evaluate. (To the
    // browser a proxy that changes the stream is the server.)
    let flipped = false;
    const proxy = await countingProxy(server.url, (m) => {
      if (m[0] === 0x83 && !flipped) {
        m[m.length >> 1] ^= 1;
        flipped = true;
      }
      return m;
    });
    const session = await Garblet.connect(proxy.url);
    try {
      await assert.rejects(session.run('aes128', { plaintext }, { security: 'cut-and-choose' }), (e) => {
        assert.ok(e instanceof CheatingDetected && e instanceof GarbletError, `${e.name}: ${e.message}`);
        assert.deepEqual([e.code, e.wireCode, e.reason], ['cheating-detected', 13, 'evaluation-circuit']);
        assert.equal(typeof e.details.circuit, 'number');
        return true;
      });
      assert.ok(flipped);
      assert.equal(session.closed, true);
      // The evaluator's Error frame told the server (its operator counts the reports).
      const deadline = Date.now() + 5000;
      let reports = 0;
      while (reports === 0 && Date.now() < deadline) {
        reports = (await (await fetch(`http://${server.address}/metrics.json`)).json()).cheating_reports ?? 0;
        if (reports === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(reports, 1);
    } finally {
      session.close();
      await proxy.close();
    }
  });
});

describe('a connection that requires authenticated garbling', () => {
  const live = serverAndSession({ require: 'authenticated' });

  test('runs hamming authenticated, and refuses a service that offers only cut-and-choose', async () => {
    assert.equal(live.session.require, 'authenticated');
    const y = randomUint(900);
    const { outputs, security } = await live.session.run('hamming', { y });
    assert.deepEqual([outputs.distance.toNumber(), security], [popcount(y ^ APP_VALUES.irisCode), 'authenticated']);
    await assert.rejects(live.session.run('aes128', { plaintext }), (e) => {
      assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
      assert.deepEqual([e.reason, e.offered, e.required], ['security-not-offered', 'cut-and-choose', 'authenticated']);
      return true;
    });
    assert.equal(live.session.closed, false);
  });
});

describe('preprocessing ahead on a warm connection', () => {
  const live = serverAndSession();
  const moved = (r) => r.stats.evaluator.bytes_received + r.stats.evaluator.bytes_sent;

  test('prepared runs give the right output, move fewer bytes after the request, and each uses one preparation', async () => {
    const whole = await live.session.run('hamming', { y: randomUint(900) }, { security: 'authenticated' });
    assert.equal(whole.prepared, false);
    // Queued with runs: a run queued behind the preparations uses the first of them.
    const prepared = live.session.prepare('hamming', { count: 2 });
    const y = randomUint(900);
    const first = await live.session.run('hamming', { y }, { security: 'authenticated' });
    await prepared;
    assert.equal(first.outputs.distance.toNumber(), popcount(y ^ APP_VALUES.irisCode));
    assert.deepEqual([first.security, first.prepared], ['authenticated', true]);
    assert.ok(moved(first) < moved(whole), `${moved(first)} vs ${moved(whole)} bytes`);
    const second = await live.session.run('hamming', { y }, { security: 'authenticated' });
    assert.deepEqual([second.outputs.distance.toNumber(), second.prepared], [popcount(y ^ APP_VALUES.irisCode), true]);
    // None left: the next run is whole again; a standard run never uses one.
    const third = await live.session.run('hamming', { y }, { security: 'authenticated' });
    assert.deepEqual([third.outputs.distance.toNumber(), third.prepared], [popcount(y ^ APP_VALUES.irisCode), false]);
    const standard = await live.session.run('hamming', { y });
    assert.deepEqual([standard.security, standard.prepared], ['standard', false]);
  });

  test('preparing for a service without the authenticated mode is refused before anything is sent', async () => {
    await assert.rejects(live.session.prepare('aes128'), (e) => e instanceof InputError && e.reason === 'security-not-offered');
    await assert.rejects(live.session.prepare('hamming', { count: 0 }), (e) => e instanceof InputError && e.reason === 'out-of-range');
    const { outputs } = await live.session.run('aes128', { plaintext });
    assert.equal(hex(outputs.ciphertext.bytes()), FIPS_197_C1);
  });
});
