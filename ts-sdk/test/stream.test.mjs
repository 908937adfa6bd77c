/**
 * Long computations: progress reports, several runs on one session, cancelling through an
 * AbortSignal, and the server going away mid-stream.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AbortError, ConnectionError, Garblet } from 'garblet';
import { SERVER_OPERANDS } from './support/server-config.mjs';
import { serverAndSession, startServer } from './support/server.mjs';
import { within } from './support/util.mjs';

/**
 * Several seconds of streaming: the run ends by the event under test, at its first progress
 * report, long before it could finish. (Not more: the client counts a synthetic circuit's AND
 * gates in a dry run before it starts, about a second per 3·10^7 gates in Node.)
 */
const LONG_RUN = 30_000_000;

/** A hang fails the test after this long; promptness is checked from the event on. */
const HANG_MS = 60_000;
/** How soon after the event under test the run must have ended. */
const PROMPT_MS = 3000;

/**
 * Starts a long synthetic run and calls `event` once the stream is flowing (at the first
 * progress report). Resolves when the run has settled, to its error and the milliseconds from
 * the event to the settlement.
 */
async function interruptedRun(session, event, signal) {
  let eventAt;
  const run = session.run('synthetic', 0n, {
    params: { and_gates: LONG_RUN },
    signal,
    progressInterval: 10,
    onProgress: (p) => {
      if (eventAt === undefined && p.andGates > 0) {
        eventAt = performance.now();
        event();
      }
    },
  });
  const error = await within(HANG_MS, 'the interrupted run', run.then(() => assert.fail('the run finished before it was interrupted'), (e) => e));
  return { error, msAfterEvent: performance.now() - eventAt };
}

describe('on a running server', () => {
  const live = serverAndSession();

  test('progress reports count AND gates up to the known total, with the bytes received', async () => {
    const total = 3_000_000;
    const reports = [];
    const { stats } = await live.session.run('synthetic', 0n, { params: { and_gates: total }, progressInterval: 10, onProgress: (p) => reports.push(p) });
    assert.ok(reports.length >= 3, `${reports.length} reports`);
    for (const [i, p] of reports.entries()) {
      assert.equal(p.andTotal, total);
      if (i === 0) continue;
      const before = reports[i - 1];
      assert.ok(p.andGates >= before.andGates && p.bytes >= before.bytes && p.elapsedMs >= before.elapsedMs, `report ${i} went backwards`);
    }
    assert.ok(reports.some((p, i) => i > 0 && p.andGates > reports[i - 1].andGates), 'AND gates increase');
    const last = reports.at(-1);
    assert.equal(last.andGates, total);
    assert.equal(last.bytes, stats.evaluator.bytes_received);
    assert.ok(last.andPerSecond > 0);
    assert.equal(stats.evaluator.and_gates, total);
    // The server offers three-halves first and the client accepts either: 24.625 bytes per
    // AND, plus framing and the garbler's input labels.
    assert.ok(last.bytes >= 24.625 * total && last.bytes < 25.625 * total, `${last.bytes / total} bytes per AND`);
  });

  test('the garbling option picks the scheme: bytes per AND as each scheme sends them', async () => {
    const total = 1_000_000;
    for (const [garbling, perAnd] of [['half-gates', 32], ['three-halves', 24.625]]) {
      const session = await Garblet.connect(live.server.url, { garbling });
      try {
        const { stats } = await session.run('synthetic', 0n, { params: { and_gates: total } });
        const bytes = stats.evaluator.bytes_received;
        assert.ok(bytes >= perAnd * total && bytes < (perAnd + 1) * total, `${garbling}: ${bytes / total} bytes per AND`);
      } finally {
        session.close();
      }
    }
  });

  test('a Bristol service reports its total too', async () => {
    const reports = [];
    await live.session.run('aes128', { plaintext: new Uint8Array(16) }, { onProgress: (p) => reports.push(p) });
    assert.ok(reports.length >= 1);
    assert.deepEqual([reports.at(-1).andGates, reports.at(-1).andTotal], [6400, 6400]);
  });

  test('several runs on one session, one after another and queued at once', async () => {
    const expectSum = (b) => (SERVER_OPERANDS.add64 + b) & ((1n << 64n) - 1n);
    for (const b of [1n, 2n, 3n]) assert.equal((await live.session.run('add64', { b })).outputs.sum.unsigned, expectSum(b));
    const [sum, zero, aes, synthetic, product] = await Promise.all([
      live.session.run('add64', { b: 7n }),
      live.session.run('zero_equal', 0),
      live.session.run('aes128', { plaintext: new Uint8Array(16) }),
      live.session.run('synthetic', 0n, { params: { and_gates: 100_000 } }),
      live.session.run('mult64', { b: 3n }),
    ]);
    assert.equal(sum.outputs.sum.unsigned, expectSum(7n));
    assert.equal(zero.outputs.is_zero.toBoolean(), true);
    assert.equal(aes.outputs.ciphertext.bits, 128);
    assert.equal(synthetic.stats.evaluator.and_gates, 100_000);
    assert.equal(product.outputs.product.unsigned, (SERVER_OPERANDS.mult64 * 3n) & ((1n << 64n) - 1n));
  });

  test('a signal aborted before the run rejects at once and leaves the session usable', async () => {
    await assert.rejects(live.session.run('add64', { b: 1 }, { signal: AbortSignal.abort() }), AbortError);
    assert.equal(live.session.closed, false);
    assert.equal((await live.session.run('zero_equal', 1)).outputs.is_zero.toBoolean(), false);
  });

  test('a signal aborted before connecting rejects with AbortError', async () => {
    await assert.rejects(Garblet.connect(live.server.url, { signal: AbortSignal.abort() }), AbortError);
  });

  test('aborting mid-stream rejects with AbortError; the server carries on', async () => {
    const doomed = await Garblet.connect(live.server.url);
    const controller = new AbortController();
    const { error, msAfterEvent } = await interruptedRun(doomed, () => controller.abort(new Error('the user changed their mind')), controller.signal);
    assert.ok(error instanceof AbortError, `${error.name}: ${error.message}`);
    assert.match(error.message, /changed their mind/);
    assert.ok(msAfterEvent < PROMPT_MS, `the run ended ${msAfterEvent} ms after the abort`);
    assert.equal(doomed.closed, true);
    await assert.rejects(doomed.run('zero_equal', 0), AbortError);
    // The server ended that session and serves new and existing ones as before.
    await live.server.sessionsDown(1); // `session` stays
    const fresh = await Garblet.connect(live.server.url);
    assert.equal((await fresh.run('zero_equal', 0)).outputs.is_zero.toBoolean(), true);
    fresh.close();
    assert.equal((await live.session.run('zero_equal', 0)).outputs.is_zero.toBoolean(), true);
  });
});

test('the server going away mid-stream is a ConnectionError, not a hang', async () => {
  const server = await startServer();
  try {
    const session = await Garblet.connect(server.url);
    const { error, msAfterEvent } = await interruptedRun(session, () => server.kill());
    assert.ok(error instanceof ConnectionError, `${error.name}: ${error.message}`);
    assert.equal(error.code, 'closed');
    assert.ok(msAfterEvent < PROMPT_MS, `the run ended ${msAfterEvent} ms after the server was killed`);
    await assert.rejects(session.run('zero_equal', 0), ConnectionError);
  } finally {
    await server.kill();
  }
});
