/**
 * The WebSocket conformance cases that independent clients (Node's `ws`, Python's `websockets`)
 * run against `garblet serve`, and what each must get back. Cases are named as in
 * docs/websocket.md; server/tests/ws_conformance.rs runs the same with tungstenite.
 *
 * Each case opens its own connection and reads until it ends. What a client sees is a `Seen`:
 * the session's Error frames (code, message), the payloads of the pongs it got (hex), and the
 * server's close code and reason (null if the connection ended without a Close frame).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../../scripts/stack.mjs';
import { serverConfig } from './servers';

export interface Seen {
  errors: [number, string][];
  pongs: string[];
  close: [number, string] | null;
}

/** The shared server's max_frame_bytes: the largest message a client may send. */
export function maxMessage(): number {
  const m = /^max_frame_bytes\s*=\s*(\d+)/m.exec(serverConfig());
  if (!m) throw new Error('the server configuration has no max_frame_bytes');
  return Number(m[1]);
}

/** The compressed Ristretto255 base point: a valid base-OT point for a ClientHello. */
const BASE_POINT = 'e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76';
/** The protocol version the server speaks, read from its source (`frame::VERSION`). */
export function protocolVersion(): number {
  const m = /pub const VERSION: u16 = (\d+);/.exec(readFileSync(join(root, 'wasm-core', 'src', 'protocol', 'frame.rs'), 'utf8'));
  if (!m) throw new Error('wasm-core/src/protocol/frame.rs has no VERSION');
  return Number(m[1]);
}
/** The garbling schemes the hello accepts, a bit per scheme id: both (half-gates 0, three-halves 1). */
const GARBLING_MASK = 0b11;

/** SoftSpoken's k the hello accepts in each OT direction, a bit per k = 2^i: 1, 2, 4 and 8. */
const OT_K_MASK = 0b1111;

/** A ClientHello frame (little-endian integers; see wasm-core/src/protocol/frame.rs). */
export function hello(): Buffer {
  const b = Buffer.alloc(1 + 4 + 2 + 4 + 32 + 1 + 2);
  b[0] = 0x01;
  b.write('GRBL', 1, 'latin1');
  b.writeUInt16LE(protocolVersion(), 5);
  b.writeUInt32LE(1 << 20, 7);
  Buffer.from(BASE_POINT, 'hex').copy(b, 11);
  b[43] = GARBLING_MASK;
  b[44] = OT_K_MASK;
  b[45] = OT_K_MASK;
  return b;
}

/**
 * A Compute request for a service the server does not have: its Error frame names the service,
 * which shows the request arrived whole and in order however it was fragmented.
 */
export function probe(service: string): Buffer {
  const name = Buffer.from(service);
  // Service, no parameters, circuit id, evaluator bits, security (0: standard), phase (0: whole).
  return Buffer.concat([Buffer.from([0x02, name.length]), name, Buffer.from([0]), Buffer.alloc(32), Buffer.alloc(8), Buffer.from([0, 0])]);
}

/** The Error frame in a binary message, or null for any other frame (the ServerHello). */
export function errorFrame(data: Buffer): [number, string] | null {
  if (data[0] !== 0x7f) return null;
  const length = data.readUInt16LE(3);
  return [data.readUInt16LE(1), data.subarray(5, 5 + length).toString('utf8')];
}

const PROTOCOL = 1;
const UNKNOWN_SERVICE = 2;
const LIMIT = 4;

const violation = (close: number, error: number, message: string): Seen => ({ errors: [[error, message]], pongs: [], close: [close, message] });
const broken = (rule: string) => violation(1002, PROTOCOL, `WebSocket protocol error: ${rule}`);
const refusedProbe = (service: string, pongs: string[] = []): Seen => ({ errors: [[UNKNOWN_SERVICE, `the server has no service '${service}'`]], pongs, close: [1000, ''] });
const tooLong = (len: number, max: number): Seen => ({
  errors: [[LIMIT, `a message of ${len} bytes: this server takes frames of at most ${max} bytes`]],
  pongs: [],
  close: [1009, `a message of ${len} bytes; at most ${max} are taken`],
});

/** The service names the probes of these cases ask for. */
export const PROBES = { binary: 'peer-binary', fragmented: 'peer-fragments-arrive-whole', pingBetween: 'peer-ping-between-fragments' };

/** A 125-byte ping payload: 0, 1, …, 124. */
export const PING_125 = Buffer.from(Array.from({ length: 125 }, (_, i) => i));

/** Every case and what the client must see; `max` is the server's max_frame_bytes. */
export function expected(max: number): Record<string, Seen> {
  return {
    binary: refusedProbe(PROBES.binary),
    fragmented: refusedProbe(PROBES.fragmented),
    'ping-between-fragments': refusedProbe(PROBES.pingBetween, [Buffer.from('between').toString('hex')]),
    'ping-125': { errors: [], pongs: [PING_125.toString('hex')], close: [1000, ''] },
    'close-4000': { errors: [], pongs: [], close: [1000, ''] },
    'at-limit': { errors: [[PROTOCOL, 'malformed frame: unknown frame type 0x42']], pongs: [], close: [1000, ''] },
    oversized: tooLong(max + 1, max),
    'oversized-fragmented': tooLong(2 * (Math.floor(max / 2) + 1), max),
    text: violation(1003, PROTOCOL, 'a text message: Garblet frames are binary WebSocket messages'),
    'text-invalid-utf8': violation(1007, PROTOCOL, 'a text message that is not UTF-8'),
    unmasked: broken('an unmasked frame from a client'),
    rsv1: broken('reserved bits set (no extension was negotiated)'),
    'opcode-3': broken('unknown opcode'),
    'ping-126': broken('a control frame longer than 125 bytes or fragmented'),
    'fragmented-ping': broken('a control frame longer than 125 bytes or fragmented'),
    'continuation-first': broken('a continuation frame with no message to continue'),
    'new-message-mid-fragments': broken("a new message before the last one's final fragment"),
    'close-1005': broken('a close code that may not be sent'),
    'close-1-byte': broken('a close frame with a 1-byte payload'),
    'close-reason-invalid-utf8': violation(1007, PROTOCOL, 'a close reason that is not UTF-8'),
  };
}

/** A masked client frame built by hand: first byte (FIN, RSV, opcode) and payload. */
export function handFrame(first: number, payload: Buffer): Buffer {
  const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  let header: Buffer;
  if (payload.length <= 125) header = Buffer.from([first, 0x80 | payload.length]);
  else if (payload.length <= 0xffff) {
    header = Buffer.from([first, 0x80 | 126, 0, 0]);
    header.writeUInt16BE(payload.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
  return Buffer.concat([header, mask, masked]);
}
