/**
 * The credit-window options: `window` and `maxWindow` are checked before connecting, and
 * `maxWindow` reaches the evaluator session: over a path with a round-trip time the session
 * grows its window (Window frames) up to that cap and never asks for more.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { Garblet } from 'garblet';
import { startServer } from './support/server.mjs';

const KiB = 1 << 10;
const MiB = 1 << 20;
/** The Window frame's tag (client to server); its u32 follows, little-endian. */
const WINDOW_TAG = 0x06;

test('nonsense windows are refused before connecting', async () => {
  // Nothing listens there: a check that passed would end in a ConnectionError instead.
  const url = 'ws://127.0.0.1:9/';
  for (const [options, error, message] of [
    [{ maxWindow: '8MB' }, TypeError, /maxWindow must be a whole number of bytes, not string/],
    [{ maxWindow: 1.5 * MiB + 0.5 }, TypeError, /maxWindow must be a whole number/],
    [{ window: Number.NaN }, TypeError, /window must be a whole number/],
    [{ maxWindow: 1000 }, RangeError, /maxWindow must be between 65536/],
    [{ window: -1 }, RangeError, /window must be between 65536/],
    [{ maxWindow: 2 ** 32 }, RangeError, /maxWindow must be between/],
    [{ window: 8 * MiB, maxWindow: 4 * MiB }, RangeError, /window \(8388608 bytes\) must not be above maxWindow \(4194304 bytes\)/],
  ]) {
    await assert.rejects(Garblet.connect(url, options), (e) => e instanceof error && message.test(e.message), JSON.stringify(options));
  }
});

/**
 * A WebSocket relay to `upstream` that holds every message for `oneWayMs` in each direction (a
 * round trip of twice that) and records, connection by connection, the windows the client asks
 * for in Window frames (a closed connection's last frames may still come in after the next one
 * opens).
 */
async function delayingRelay(upstream, oneWayMs) {
  const connections = [];
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  server.on('connection', (client) => {
    const windows = [];
    connections.push(windows);
    const peer = new WebSocket(upstream, { perMessageDeflate: false });
    const toPeer = [];
    peer.on('open', () => toPeer.splice(0).forEach((m) => peer.send(m)));
    const later = (f) => setTimeout(f, oneWayMs);
    client.on('message', (m) => {
      if (m[0] === WINDOW_TAG) windows.push(m.readUInt32LE(1));
      later(() => (peer.readyState === WebSocket.OPEN ? peer.send(m) : toPeer.push(m)));
    });
    peer.on('message', (m) => later(() => client.readyState === WebSocket.OPEN && client.send(m)));
    client.on('close', () => peer.close());
    peer.on('close', () => client.close());
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `ws://127.0.0.1:${server.address().port}/`,
    connections,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('over a 40 ms round trip', () => {
  let server;
  let relay;
  before(async () => {
    server = await startServer();
    relay = await delayingRelay(server.url, 20);
  });
  after(async () => {
    await relay?.close();
    await server?.kill();
  });

  /** The windows one synthetic run asked for in Window frames, starting from 256 KiB. */
  async function windowsAskedFor(options) {
    const session = await Garblet.connect(relay.url, { window: 256 * KiB, ...options });
    const windows = relay.connections.at(-1);
    try {
      await session.run('synthetic', 0n, { params: { and_gates: 2_000_000 } });
    } finally {
      session.close();
    }
    return [...windows];
  }

  test('the window grows past 1 MiB by default, and never past maxWindow', async () => {
    const grown = await windowsAskedFor({});
    assert.ok(Math.max(...grown) > MiB, `without maxWindow the window grew to ${Math.max(...grown)} bytes (Window frames ${grown})`);
    const capped = await windowsAskedFor({ maxWindow: MiB });
    assert.ok(capped.length > 0, 'the window grew');
    assert.ok(capped.every((w) => w <= MiB), `Window frames ${capped} ask beyond maxWindow`);
    assert.equal(Math.max(...capped), MiB, `the window grew to maxWindow (Window frames ${capped})`);
  });
});
