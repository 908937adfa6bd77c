/**
 * Typed errors, one test at least for each class against a real server: inputs that do not fit
 * the service are InputErrors raised before anything is sent (the session stays usable), with
 * the check's `reason` and the values it compared; refusals by the server are ServerErrors with
 * its code; a peer that breaks the protocol is a ProtocolError; an unreachable server is a
 * ConnectionError; a fired signal is an AbortError. A server caught cheating is a CheatingDetected:
 * its mapping from the core's report is here, a caught stream in security.test.mjs. Tests assert
 * on classes, codes, reasons and fields, never on message text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { AbortError, BusyError, CheatingDetected, ConnectionError, Garblet, GarbletError, InputError, ProtocolError, ServerError } from 'garblet';
import { fromCoreError, fromErrorData, toErrorData } from '../dist/errors.js';
import { serverAndSession, startServer } from './support/server.mjs';

const U64_MAX = (1n << 64n) - 1n;

describe('inputs that do not fit', () => {
  const live = serverAndSession();

  // [what, service, inputs, the error's fields, params]
  const WRONG = [
    ['a block one byte short', 'aes128', { plaintext: new Uint8Array(15) }, { reason: 'input-length', input: 'plaintext', expected: 16, got: 15, unit: 'bytes' }],
    ['a value wider than the input', 'add64', { b: 1n << 64n }, { reason: 'out-of-range', input: 'b', value: 1n << 64n, min: 0n, max: U64_MAX, limit: U64_MAX }],
    ['a bit array of the wrong length', 'add64', { b: [true, false, true] }, { reason: 'input-length', input: 'b', expected: 64, got: 3, unit: 'bits' }],
    ['an unknown input name', 'add64', { c: 1 }, { reason: 'unknown-input', input: 'c' }],
    ["the server's own input", 'add64', { a: 1, b: 2 }, { reason: 'unknown-input', input: 'a' }],
    ['a missing input', 'aes128', {}, { reason: 'missing-input', input: 'plaintext' }],
    ['a negative number', 'add64', { b: -1 }, { reason: 'out-of-range', input: 'b', value: -1n, min: 0n }],
    ['a negative bigint', 'add64', { b: -5n }, { reason: 'out-of-range', input: 'b', value: -5n }],
    ['a fraction', 'add64', { b: 1.5 }, { reason: 'not-an-integer', input: 'b' }],
    ['a string that is no integer', 'add64', { b: 'twelve' }, { reason: 'not-an-integer', input: 'b' }],
    ['inputs by position, too few', 'add64', [], { reason: 'input-count', expected: 1, got: 0, unit: 'inputs' }],
    ['an unknown service', 'no_such_service', 1, { reason: 'unknown-service', code: 'unknown-service', service: 'no_such_service' }],
    // Checked by the WebAssembly core against the catalog: the same fields.
    ['an unknown parameter', 'synthetic', 0n, { reason: 'unknown-param', service: 'synthetic', param: 'colour' }, { colour: 3 }],
    ['a parameter out of range', 'synthetic', 0n, { reason: 'param-out-of-range', service: 'synthetic', param: 'and_gates', value: 0, min: 1, max: 10_000_000_000 }, { and_gates: 0 }],
    ['a parameter that is no integer', 'synthetic', 0n, { reason: 'param-value', param: 'and_gates' }, { and_gates: 2.5 }],
  ];

  for (const [what, service, inputs, fields, params] of WRONG) {
    test(`${what} is an InputError with its reason and fields`, async () => {
      await assert.rejects(live.session.run(service, inputs, { params }), (e) => {
        assert.ok(e instanceof InputError && e instanceof GarbletError, `${e.name}: ${e.message}`);
        assert.equal(e.code, fields.code ?? 'bad-request');
        for (const [name, value] of Object.entries(fields)) assert.deepEqual(e[name], value, name);
        return true;
      });
    });
  }

  test('the session is still usable after every InputError', async () => {
    assert.equal(live.session.closed, false);
    const { outputs } = await live.session.run('zero_equal', 0);
    assert.equal(outputs.is_zero.toBoolean(), true);
  });

  test('an aborted run is an AbortError', async () => {
    await assert.rejects(live.session.run('zero_equal', 0, { signal: AbortSignal.abort() }), (e) => e instanceof AbortError && e instanceof GarbletError);
  });
});

/**
 * A WebSocket proxy in front of a real server that passes every message on, except the server's
 * messages `alter` changes: a server that breaks the protocol, built from one that does not.
 */
async function tamperingProxy(target, alter) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (client) => {
    const upstream = new WebSocket(target);
    const pending = [];
    upstream.on('open', () => pending.splice(0).forEach((m) => upstream.send(m)));
    client.on('message', (m) => (upstream.readyState === WebSocket.OPEN ? upstream.send(m) : pending.push(m)));
    upstream.on('message', (m) => client.send(alter(new Uint8Array(m))));
    const closeBoth = () => {
      client.close();
      upstream.close();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    upstream.on('error', closeBoth);
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/`, close: () => new Promise((resolve) => wss.close(resolve)) };
}

describe('a server that breaks the protocol', () => {
  let server;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.kill();
  });

  test("a ServerHello of another version is a ProtocolError with both versions", async () => {
    // ServerHello: type 0x81, then the version (u16, little-endian).
    const proxy = await tamperingProxy(server.url, (m) => {
      if (m[0] === 0x81) m.set([99, 0], 1);
      return m;
    });
    try {
      await assert.rejects(Garblet.connect(proxy.url), (e) => {
        assert.ok(e instanceof ProtocolError && e instanceof GarbletError, `${e.name}: ${e.message}`);
        assert.equal(e.code, 'version');
        assert.equal(e.reason, 'version');
        assert.equal(e.details.theirs, 99);
        return true;
      });
    } finally {
      await proxy.close();
    }
  });

  test('label corrections one label short are a ProtocolError with the lengths', async () => {
    // LabelCorrections: type 0x85, 16 bytes a label.
    const proxy = await tamperingProxy(server.url, (m) => (m[0] === 0x85 ? m.subarray(0, m.length - 16) : m));
    const session = await Garblet.connect(proxy.url);
    try {
      await assert.rejects(session.run('add64', { b: 1 }), (e) => {
        assert.ok(e instanceof ProtocolError, `${e.name}: ${e.message}`);
        assert.equal(e.code, 'protocol');
        assert.equal(e.reason, 'label-corrections-length');
        assert.deepEqual([e.details.expected, e.details.got], [64 * 16, 63 * 16]);
        return true;
      });
      assert.equal(session.closed, true, 'a protocol error ends the session');
    } finally {
      session.close();
      await proxy.close();
    }
  });
});

describe('refusals by the server', () => {
  const MAX_AND_GATES = 1_000_000;
  const MAX_SESSIONS = 2;
  let server;
  before(async () => {
    server = await startServer({ max_sessions: MAX_SESSIONS, max_and_gates_per_session: MAX_AND_GATES });
  });
  after(async () => {
    await server?.kill();
  });

  test("a computation over the server's AND-gate limit is a ServerError with its code", async () => {
    const session = await Garblet.connect(server.url);
    try {
      await assert.rejects(session.run('synthetic', 0n, { params: { and_gates: 2 * MAX_AND_GATES } }), (e) => {
        assert.ok(e instanceof ServerError, `${e.name}: ${e.message}`);
        assert.deepEqual([e.code, e.wireCode], ['limit', 4]);
        return true;
      });
    } finally {
      session.close();
    }
    // The refusal ended that session only.
    const fresh = await Garblet.connect(server.url);
    assert.equal((await fresh.run('add64', { b: 1 })).outputs.sum.bits, 64);
    fresh.close();
  });

  test('a connection past max_sessions is a BusyError with a retryAfter', async () => {
    await server.idle();
    const sessions = [];
    try {
      for (let i = 0; i < MAX_SESSIONS; i++) sessions.push(await Garblet.connect(server.url));
      await assert.rejects(Garblet.connect(server.url), (e) => {
        assert.ok(e instanceof BusyError && e instanceof ServerError, `${e.name}: ${e.message}`);
        assert.deepEqual([e.name, e.code, e.wireCode], ['BusyError', 'busy', 6]);
        assert.ok(typeof e.retryAfter === 'number' && e.retryAfter > 0, `retryAfter ${e.retryAfter}`);
        return true;
      });
      // The sessions that were let in are unaffected.
      assert.equal((await sessions[0].run('zero_equal', 3)).outputs.is_zero.toBoolean(), false);
    } finally {
      for (const s of sessions) s.close();
    }
  });

  test('nothing listening is a ConnectionError', async () => {
    const dead = await startServer();
    const url = dead.url;
    await dead.kill();
    await assert.rejects(Garblet.connect(url), (e) => e instanceof ConnectionError && e.code === 'unreachable');
  });
});

describe("the core's error reports, mapped", () => {
  /** An error as the WebAssembly core throws it: an Error whose message is its report's JSON. */
  const coreError = (report) => new Error(JSON.stringify({ wireCode: 0, fields: {}, ...report }));

  test('kind cheating is a CheatingDetected with the reason and fields of the report, also across a worker boundary', () => {
    const report = {
      kind: 'cheating',
      code: 'cheating-detected',
      wireCode: 13,
      reason: 'check-circuit',
      message: 'the server cheated: check circuit 7 fails: garbled tables unlike those regenerated from its seed',
      fields: { circuit: 7, what: 'tables' },
    };
    const direct = fromCoreError(coreError(report));
    // Structured clone is what postMessage does to the data.
    const crossed = fromErrorData(structuredClone(toErrorData(direct)));
    for (const e of [direct, crossed]) {
      assert.ok(e instanceof CheatingDetected && e instanceof GarbletError, `${e.name}: ${e.message}`);
      assert.ok(!(e instanceof ProtocolError) && !(e instanceof InputError));
      assert.deepEqual([e.name, e.code, e.wireCode, e.reason], ['CheatingDetected', 'cheating-detected', 13, 'check-circuit']);
      assert.deepEqual({ ...e.details }, { circuit: 7, what: 'tables' });
      assert.equal(e.message, report.message);
    }
    for (const reason of ['evaluation-circuit', 'inconsistent-input', 'no-valid-output', 'recovery-delta', 'recovery-input', 'no-majority']) {
      const e = fromCoreError(coreError({ ...report, reason, fields: {} }));
      assert.ok(e instanceof CheatingDetected, reason);
      assert.equal(e.reason, reason);
    }
  });

  test("the core's security-not-offered is the InputError the session raises itself", () => {
    const e = fromCoreError(
      coreError({
        kind: 'input',
        code: 'bad-request',
        wireCode: 3,
        reason: 'security-not-offered',
        message: 'add64 offers standard security; cut-and-choose was asked for',
        fields: { service: 'add64', offered: 'standard', requested: 'cut-and-choose' },
      }),
    );
    assert.ok(e instanceof InputError, `${e.name}: ${e.message}`);
    assert.deepEqual([e.reason, e.code, e.service, e.offered, e.required], ['security-not-offered', 'bad-request', 'add64', 'standard', 'cut-and-choose']);
    const crossed = fromErrorData(structuredClone(toErrorData(e)));
    assert.ok(crossed instanceof InputError);
    assert.deepEqual(crossed.fields(), e.fields());
  });

  // The core raises both before anything is sent; the server's own refusals of such requests
  // cross the wire as a code only (a ServerError with code bad-request).
  const PREPARE_AHEAD = [
    [
      'nothing-prepared',
      { service: 'aes128' },
      { reason: 'nothing-prepared', code: 'bad-request', service: 'aes128' },
    ],
    [
      'phase-not-offered',
      { security: 'standard', phase: 'prepare' },
      { reason: 'phase-not-offered', code: 'bad-request', requested: 'standard', phase: 'prepare' },
    ],
  ];
  for (const [reason, fields, expected] of PREPARE_AHEAD) {
    test(`the core's ${reason} is an InputError with that reason, also across a worker boundary`, () => {
      const e = fromCoreError(coreError({ kind: 'input', code: 'bad-request', wireCode: 3, reason, message: reason, fields }));
      const crossed = fromErrorData(structuredClone(toErrorData(e)));
      for (const error of [e, crossed]) {
        assert.ok(error instanceof InputError && error instanceof GarbletError, `${error.name}: ${error.message}`);
        for (const [name, value] of Object.entries(expected)) assert.equal(error[name], value, name);
      }
      assert.deepEqual(crossed.fields(), e.fields());
    });
  }

  test("the core's prepared-limit (the client's own cap) is an InputError with code limit and the counts", () => {
    const e = fromCoreError(
      coreError({
        kind: 'input',
        code: 'limit',
        wireCode: 4,
        reason: 'prepared-limit',
        message: "396000 AND gates prepared ahead and 6400 more exceed this client's limit of 400000 per session",
        fields: { limit: 400_000, parked: 396_000, requested: 6400 },
      }),
    );
    const crossed = fromErrorData(structuredClone(toErrorData(e)));
    for (const error of [e, crossed]) {
      assert.ok(error instanceof InputError, `${error.name}: ${error.message}`);
      assert.deepEqual([error.reason, error.code, error.limit, error.parked, error.andGates], ['prepared-limit', 'limit', 400_000, 396_000, 6400]);
    }
  });
});
