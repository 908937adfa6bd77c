"""The WebSocket conformance cases of e2e/support/ws-conformance.ts, run with Python's
`websockets` against `garblet serve`; e2e/tests/websocket-peers.spec.ts runs this and checks
the report.

Usage: websockets_peer.py WS_URL MAX_MESSAGE_BYTES PROTOCOL_VERSION
Prints one JSON object: the library's version, for each case what the client saw (the
session's Error frames, pongs received, the server's close code and reason), and what the
handshake negotiated. Frames `websockets` will not send (unmasked, reserved bits or opcodes,
a bad close) are written to its transport by hand.
"""

import asyncio
import json
import struct
import sys

import websockets
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

URL = sys.argv[1]
MAX = int(sys.argv[2])
VERSION = int(sys.argv[3])

BASE_POINT = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")
PROBES = {"binary": "peer-binary", "fragmented": "peer-fragments-arrive-whole", "ping_between": "peer-ping-between-fragments"}
PING_125 = bytes(range(125))


def hello():
    # The protocol version, a 1 MiB window, the base-OT point, both garbling schemes (a bit
    # per scheme id: half-gates 0, three-halves 1), and every SoftSpoken k in both OT
    # directions (a bit per k = 2^i).
    return b"\x01GRBL" + struct.pack("<HI", VERSION, 1 << 20) + BASE_POINT + bytes([0b11, 0b1111, 0b1111])


def probe(service):
    name = service.encode()
    # Service, no parameters, circuit id, evaluator bits, security (0: standard), phase (0: whole).
    return bytes([0x02, len(name)]) + name + b"\x00" + bytes(32) + bytes(8) + b"\x00\x00"


def hand_frame(first, payload):
    """A masked client frame built by hand: first byte (FIN, RSV, opcode) and payload."""
    mask = bytes([0x37, 0xFA, 0x21, 0x3D])
    n = len(payload)
    if n <= 125:
        header = bytes([first, 0x80 | n])
    elif n <= 0xFFFF:
        header = bytes([first, 0x80 | 126]) + struct.pack(">H", n)
    else:
        header = bytes([first, 0x80 | 127]) + struct.pack(">Q", n)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def unmasked_frame(first, payload):
    assert len(payload) <= 125
    return bytes([first, len(payload)]) + payload


async def observe(ws, seen):
    """Reads until the connection ends; fills in Error frames and the server's close."""
    try:
        async for message in ws:
            if isinstance(message, bytes) and message[:1] == b"\x7f":
                code, length = struct.unpack_from("<HH", message, 1)
                seen["errors"].append([code, message[5 : 5 + length].decode()])
    except ConnectionClosed:
        pass
    received = ws.protocol.close_rcvd
    seen["close"] = [received.code, received.reason] if received else None
    return seen


async def pinged(ws, data, seen):
    """Sends a ping; records its payload once the pong with that payload arrives."""
    waiter = await ws.ping(data)
    await asyncio.wait_for(waiter, 30)
    seen["pongs"].append(data.hex())


async def fragments(ws, parts, between=None):
    """Sends one binary message in `parts`, with `between()` awaited after the first."""

    async def gen():
        for i, part in enumerate(parts):
            yield part
            if i == 0 and between:
                await between()

    await ws.send(gen())


def raw(ws, data):
    ws.transport.write(data)


async def case_binary(ws, seen):
    await ws.send(hello())
    await ws.send(probe(PROBES["binary"]))


async def case_fragmented(ws, seen):
    p = probe(PROBES["fragmented"])
    await ws.send(hello())
    await fragments(ws, [p[:5], b"", p[5:20], p[20:]])


async def case_ping_between_fragments(ws, seen):
    p = probe(PROBES["ping_between"])
    await ws.send(hello())
    pong = []

    async def ping():
        pong.append(asyncio.ensure_future(pinged(ws, b"between", seen)))

    await fragments(ws, [p[:3], p[3:10], p[10:]], ping)
    await pong[0]


async def case_ping_125(ws, seen):
    await pinged(ws, PING_125, seen)
    await ws.close(1000)


async def case_close_4000(ws, seen):
    await ws.close(4000, "bye")


async def case_at_limit(ws, seen):
    await ws.send(bytes([0x42]) * MAX)


async def case_oversized(ws, seen):
    await ws.send(bytes([0x42]) * (MAX + 1))


async def case_oversized_fragmented(ws, seen):
    half = bytes([0x42]) * (MAX // 2 + 1)
    await fragments(ws, [half, half])


async def case_text(ws, seen):
    await ws.send("hello")


async def case_text_invalid_utf8(ws, seen):
    # websockets sends str, always valid UTF-8.
    raw(ws, hand_frame(0x81, bytes([0x68, 0xC3, 0x28])))


async def case_unmasked(ws, seen):
    raw(ws, unmasked_frame(0x82, b"\x42"))


async def case_rsv1(ws, seen):
    raw(ws, hand_frame(0xC2, b"x"))


async def case_opcode_3(ws, seen):
    raw(ws, hand_frame(0x83, b"x"))


async def case_ping_126(ws, seen):
    raw(ws, hand_frame(0x89, bytes(126)))


async def case_fragmented_ping(ws, seen):
    raw(ws, hand_frame(0x09, b"x"))


async def case_continuation_first(ws, seen):
    raw(ws, hand_frame(0x80, b"x"))


async def case_new_message_mid_fragments(ws, seen):
    raw(ws, hand_frame(0x02, b"x") + hand_frame(0x82, b"y"))


async def case_close_1005(ws, seen):
    raw(ws, hand_frame(0x88, struct.pack(">H", 1005)))


async def case_close_1_byte(ws, seen):
    raw(ws, hand_frame(0x88, b"\x03"))


async def case_close_reason_invalid_utf8(ws, seen):
    raw(ws, hand_frame(0x88, struct.pack(">H", 1000) + b"\xff"))


CASES = {name[len("case_") :].replace("_", "-"): f for name, f in dict(globals()).items() if name.startswith("case_")}


async def run_case(run):
    seen = {"errors": [], "pongs": [], "close": None}
    async with connect(URL, ping_interval=None, max_size=None, compression=None, open_timeout=30, close_timeout=30) as ws:
        reading = asyncio.ensure_future(observe(ws, seen))
        await run(ws, seen)
        return await asyncio.wait_for(reading, 60)


async def handshake():
    out = {}
    # websockets offers permessage-deflate by default; the server takes no extension.
    async with connect(URL, ping_interval=None) as ws:
        out["extensions"] = [e.name for e in ws.protocol.extensions]
        out["subprotocol"] = ws.subprotocol
    try:
        async with connect(URL, subprotocols=["garblet.v1"], ping_interval=None) as ws:
            out["insisting_on_a_subprotocol"] = {"subprotocol": ws.subprotocol}
    except InvalidHandshake as e:
        out["insisting_on_a_subprotocol"] = {"refused": str(e)}
    # A client whose limit is below the server's first message (the ServerHello).
    async with connect(URL, ping_interval=None, max_size=1024) as ws:
        try:
            async for _ in ws:
                pass
        except ConnectionClosed:
            pass
        sent, received = ws.protocol.close_sent, ws.protocol.close_rcvd
        out["small_max_size"] = {"sent": [sent.code, sent.reason] if sent else None, "received": [received.code, received.reason] if received else None}
    return out


async def main():
    cases = {name: await run_case(run) for name, run in CASES.items()}
    print(json.dumps({"version": websockets.__version__, "cases": cases, "handshake": await handshake()}))


asyncio.run(main())
