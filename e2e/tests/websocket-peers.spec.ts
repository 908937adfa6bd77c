/**
 * The server's WebSocket framing against two independent client implementations, Node's `ws`
 * and Python's `websockets` (installed into .venv by scripts/setup.mjs): the cases of
 * support/ws-conformance.ts, each on its own connection, and what each client gets back —
 * Error frames, pongs, close code and reason. What a library will not send (an unmasked frame
 * for `websockets`, reserved bits, a bad close code) is written to its socket by hand.
 * docs/websocket.md has the table.
 */
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { root } from '../../scripts/stack.mjs';
import { serverUrl } from '../support/servers';
import { errorFrame, expected, handFrame, hello, maxMessage, PING_125, probe, PROBES, protocolVersion, type Seen } from '../support/ws-conformance';

/** A `ws` client on the shared server, and what it sees until the connection ends. */
function connect(options: WebSocket.ClientOptions = {}, protocols?: string[]) {
  const ws = new WebSocket(serverUrl(), protocols, options);
  const seen: Seen = { errors: [], pongs: [], close: null };
  const errors: Error[] = [];
  ws.on('error', (e) => errors.push(e));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('close', () => reject(errors[0] ?? new Error('closed before it opened')));
  });
  const ended = new Promise<Seen>((resolve) => {
    ws.on('message', (data: Buffer) => {
      const error = errorFrame(data);
      if (error) seen.errors.push(error);
    });
    ws.on('pong', (data) => seen.pongs.push(data.toString('hex')));
    // 1006: no Close frame came (ws's own code for that).
    ws.on('close', (code, reason) => {
      seen.close = code === 1006 ? null : [code, reason.toString()];
      resolve(seen);
    });
  });
  return { ws, opened, ended, errors };
}

/** Bytes written to the socket under `ws`, as they are. */
const writeRaw = (ws: WebSocket, bytes: Buffer) => (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(bytes);

/** Each case, driven through `ws`'s own API wherever it can produce the case. */
const WS_CASES: Record<string, (ws: WebSocket) => void> = {
  binary: (ws) => {
    ws.send(hello());
    ws.send(probe(PROBES.binary));
  },
  fragmented: (ws) => {
    const p = probe(PROBES.fragmented);
    ws.send(hello());
    ws.send(p.subarray(0, 5), { fin: false });
    ws.send(Buffer.alloc(0), { fin: false });
    ws.send(p.subarray(5, 20), { fin: false });
    ws.send(p.subarray(20), { fin: true });
  },
  'ping-between-fragments': (ws) => {
    const p = probe(PROBES.pingBetween);
    ws.send(hello());
    ws.send(p.subarray(0, 3), { fin: false });
    ws.ping(Buffer.from('between'));
    ws.send(p.subarray(3, 10), { fin: false });
    ws.send(p.subarray(10), { fin: true });
  },
  'ping-125': (ws) => {
    ws.ping(PING_125);
    ws.once('pong', () => ws.close(1000));
  },
  'close-4000': (ws) => ws.close(4000, 'bye'),
  'at-limit': (ws) => ws.send(Buffer.alloc(maxMessage(), 0x42)),
  oversized: (ws) => ws.send(Buffer.alloc(maxMessage() + 1, 0x42)),
  'oversized-fragmented': (ws) => {
    const half = Buffer.alloc(Math.floor(maxMessage() / 2) + 1, 0x42);
    ws.send(half, { fin: false });
    ws.send(half, { fin: true });
  },
  text: (ws) => ws.send('hello'),
  // ws sends a Buffer as a text message without checking it.
  'text-invalid-utf8': (ws) => ws.send(Buffer.from([0x68, 0xc3, 0x28]), { binary: false }),
  unmasked: (ws) => ws.send(Buffer.from([0x42]), { mask: false }),
  rsv1: (ws) => writeRaw(ws, handFrame(0xc2, Buffer.from('x'))),
  'opcode-3': (ws) => writeRaw(ws, handFrame(0x83, Buffer.from('x'))),
  'ping-126': (ws) => {
    expect(() => ws.ping(Buffer.alloc(126))).toThrow(RangeError);
    writeRaw(ws, handFrame(0x89, Buffer.alloc(126)));
  },
  'fragmented-ping': (ws) => writeRaw(ws, handFrame(0x09, Buffer.from('x'))),
  'continuation-first': (ws) => writeRaw(ws, handFrame(0x80, Buffer.from('x'))),
  'new-message-mid-fragments': (ws) => {
    ws.send(Buffer.from('x'), { fin: false });
    writeRaw(ws, handFrame(0x82, Buffer.from('y')));
  },
  'close-1005': (ws) => {
    expect(() => ws.close(1005)).toThrow(TypeError);
    writeRaw(ws, handFrame(0x88, Buffer.from([0x03, 0xed])));
  },
  'close-1-byte': (ws) => writeRaw(ws, handFrame(0x88, Buffer.from([0x03]))),
  'close-reason-invalid-utf8': (ws) => writeRaw(ws, handFrame(0x88, Buffer.from([0x03, 0xe8, 0xff]))),
};

test.describe("Node's ws", () => {
  test('every case: what the server sends back', async () => {
    const want = expected(maxMessage());
    expect(Object.keys(WS_CASES).sort()).toEqual(Object.keys(want).sort());
    for (const [name, run] of Object.entries(WS_CASES)) {
      const { ws, opened, ended } = connect({ perMessageDeflate: false });
      await opened;
      run(ws);
      expect(await ended, name).toEqual(want[name]);
    }
  });

  test('the handshake: permessage-deflate offered and declined, no subprotocol', async () => {
    // ws offers permessage-deflate by default; the server's 101 names no extension.
    const { ws, opened, ended } = connect();
    await opened;
    expect([ws.extensions, ws.protocol]).toEqual(['', '']);
    ws.close(1000);
    expect((await ended).close).toEqual([1000, '']);
    // A client that insists on a subprotocol gets none, and ws fails the connection.
    const insisting = connect({}, ['garblet.v1']);
    await expect(insisting.opened).rejects.toThrow('Server sent no subprotocol');
  });

  test("maxPayload the other way round: a client whose limit is below the server's messages", async () => {
    // The ServerHello is over 4 KiB: ws reports WS_ERR_UNSUPPORTED_MESSAGE_LENGTH and drops
    // the TCP connection without a close handshake (its close event says 1006); the server
    // ends the session as a client that went away.
    const { opened, ended, errors } = connect({ maxPayload: 1024 });
    await opened;
    const seen = await ended;
    expect(errors.map((e) => (e as Error & { code?: string }).code)).toEqual(['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH']);
    expect(seen).toEqual({ errors: [], pongs: [], close: null });
    // The server is unaffected: the next client gets its answer.
    const next = connect();
    await next.opened;
    WS_CASES.binary(next.ws);
    expect(await next.ended).toEqual(expected(maxMessage()).binary);
  });
});

/** The virtual environment scripts/setup.mjs makes for the Python peer. */
const PYTHON = join(root, '.venv', 'bin', 'python');

test.describe("Python's websockets", () => {
  test('every case: what the server sends back', async () => {
    expect(existsSync(PYTHON), `${PYTHON} is missing: run node scripts/setup.mjs`).toBe(true);
    const run = spawnSync(PYTHON, [join(root, 'e2e', 'peers', 'websockets_peer.py'), serverUrl(), String(maxMessage()), String(protocolVersion())], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { version: string; cases: Record<string, Seen>; handshake: Record<string, unknown> };
    const want = expected(maxMessage());
    expect(Object.keys(report.cases).sort()).toEqual(Object.keys(want).sort());
    for (const name of Object.keys(want)) expect(report.cases[name], name).toEqual(want[name]);
    // permessage-deflate offered and declined; a subprotocol asked for and none given, which
    // websockets accepts (RFC 6455 §4.1 leaves that to the client); a limit below the
    // ServerHello's size: websockets fails the connection with 1009 and closes without waiting
    // for the server's Close.
    expect(report.handshake).toEqual({
      extensions: [],
      subprotocol: null,
      insisting_on_a_subprotocol: { subprotocol: null },
      small_max_size: { sent: [1009, expect.stringMatching(/^frame with \d+ bytes exceeds limit of 1024 bytes$/)], received: null },
    });
  });
});
