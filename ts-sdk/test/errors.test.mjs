/**
 * Typed errors: inputs that do not fit the service are InputErrors raised before anything is
 * sent (the session stays usable); refusals by the server are ServerErrors with its message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConnectionError, Garblet, GarbletError, InputError, ServerError } from 'garblet';
import { serverAndSession, startServer } from './support/server.mjs';

describe('inputs that do not fit', () => {
  const live = serverAndSession();

  const WRONG = [
    ['a block one byte short', 'aes128', { plaintext: new Uint8Array(15) }, /takes 16 bytes; 15 given/],
    ['a value wider than the input', 'add64', { b: 1n << 64n }, /does not fit in 64 bits/],
    ['a bit array of the wrong length', 'add64', { b: [true, false, true] }, /takes 64 bits; 3 given/],
    ['an unknown input name', 'add64', { c: 1 }, /unknown input 'c'/],
    ["the server's own input", 'add64', { a: 1, b: 2 }, /unknown input 'a'/],
    ['a missing input', 'aes128', {}, /missing input 'plaintext'/],
    ['a negative number', 'add64', { b: -1 }, /must not be negative/],
    ['a negative bigint', 'add64', { b: -5n }, /must not be negative/],
    ['a fraction', 'add64', { b: 1.5 }, /is not an integer/],
    ['a string that is no integer', 'add64', { b: 'twelve' }, /is not an integer/],
    ['an unknown service', 'no_such_service', 1, /no service 'no_such_service'/],
    ['an unknown parameter', 'synthetic', 0n, /parameter 'colour'/, { colour: 3 }],
    ['a parameter out of range', 'synthetic', 0n, /outside 1\.\.=/, { and_gates: 0 }],
  ];

  for (const [what, service, inputs, message, params] of WRONG) {
    test(`${what} is an InputError`, async () => {
      await assert.rejects(live.session.run(service, inputs, { params }), (e) => e instanceof InputError && e instanceof GarbletError && message.test(e.message));
    });
  }

  test('the session is still usable after every InputError', async () => {
    assert.equal(live.session.closed, false);
    const { outputs } = await live.session.run('zero_equal', 0);
    assert.equal(outputs.is_zero.toBoolean(), true);
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

  test("a computation over the server's AND-gate limit is a ServerError with its message", async () => {
    const session = await Garblet.connect(server.url);
    try {
      await assert.rejects(session.run('synthetic', 0n, { params: { and_gates: 2 * MAX_AND_GATES } }), (e) => {
        assert.ok(e instanceof ServerError, `${e.name}: ${e.message}`);
        assert.equal(e.code, 'limit');
        // Refused up front (the count is known from the parameters) or when the stream passes it.
        assert.match(e.message, new RegExp(`limit of ${MAX_AND_GATES}\\b`));
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

  test("a connection past max_sessions is a ServerError (busy) with the server's message", async () => {
    await server.idle();
    const sessions = [];
    try {
      for (let i = 0; i < MAX_SESSIONS; i++) sessions.push(await Garblet.connect(server.url));
      await assert.rejects(Garblet.connect(server.url), (e) => {
        assert.ok(e instanceof ServerError, `${e.name}: ${e.message}`);
        assert.equal(e.code, 'busy');
        assert.match(e.message, new RegExp(`maximum of ${MAX_SESSIONS} sessions`));
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
