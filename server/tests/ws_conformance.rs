//! The server's own WebSocket framing (`src/ws.rs`) against an independent implementation,
//! tungstenite: the handshake, fragmented messages, control frames between fragments, ping and
//! pong, the close handshake and its codes, the masking rule, reserved bits and opcodes, and the
//! message size limit — each case on a connection of its own, checking exactly what the client
//! gets back: the session's `Error` frame, pongs, and the close code and reason. Malformed frames
//! that tungstenite builds on request go through it (`Message::Frame`, masked as a client's
//! must be); those it will not build (unmasked, a bad length) are written to its socket by hand.
//! `docs/websocket.md` has the same cases as a table, with the other peers (Node's `ws`,
//! Python's `websockets`, Chromium; `e2e/tests/websocket*.spec.ts`).

mod common;

use common::{honest_services, Server};
use garblet_core::protocol::frame::VERSION;
use garblet_core::protocol::{ComputeRequest, ErrorCode, Frame, Security};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use tungstenite::protocol::frame::coding::{CloseCode, Control, Data, OpCode};
use tungstenite::protocol::frame::{FrameHeader, Utf8Bytes};
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Bytes, Message, WebSocket};

type Ws = WebSocket<TcpStream>;

/// The default configuration's `max_frame_bytes`: the largest message a client may send.
const MAX: usize = 1 << 20;

/// The compressed Ristretto255 base point: a valid base-OT point R for a `ClientHello`.
const BASE_POINT: &str = "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76";

fn server() -> Server {
    Server::start(&format!("[limits]\nhandshake_timeout_secs = 10\n{}", honest_services(1_000_000)))
}

/// A WebSocket client connected to `server`, with tungstenite's default limits raised above
/// anything the server sends.
fn connect(server: &Server) -> Ws {
    let tcp = TcpStream::connect(&server.addr).unwrap();
    // Only so that a server that never answers fails the test instead of hanging it.
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let config = WebSocketConfig::default().max_message_size(Some(64 << 20)).max_frame_size(Some(64 << 20));
    match tungstenite::client::client_with_config(server.url(), tcp, Some(config)) {
        Ok((ws, _)) => ws,
        Err(e) => panic!("handshake: {e}"),
    }
}

fn hello() -> Vec<u8> {
    let point: Vec<u8> = (0..32).map(|i| u8::from_str_radix(&BASE_POINT[2 * i..2 * i + 2], 16).unwrap()).collect();
    Frame::ClientHello { version: VERSION, window: 1 << 20, base_ot: point.try_into().unwrap(), garbling: 3, ot_k: [garblet_core::ot::ALL_K; 2] }.encode()
}

/// A request for a service the server does not have: its `Error` frame names the service, so
/// the reply shows the request arrived whole and in order.
fn probe(service: &str) -> Vec<u8> {
    Frame::Compute(ComputeRequest { service: service.into(), params: vec![], circuit_id: [0; 32], evaluator_bits: 0, security: Security::Standard, phase: Default::default() }).encode()
}

fn unknown_service(service: &str) -> (u16, String) {
    (ErrorCode::UnknownService as u16, format!("the server has no service '{service}'"))
}

/// What a client got back until the connection ended.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    /// The session's `Error` frames: code and message.
    errors: Vec<(u16, String)>,
    pongs: Vec<Vec<u8>>,
    /// The server's close code and reason; `None` if the connection ended without one.
    close: Option<(u16, String)>,
}

/// Reads until the connection ends. Every binary message must be a Garblet frame (the
/// `ServerHello` is passed over).
fn observe(ws: &mut Ws) -> Seen {
    let mut seen = Seen::default();
    loop {
        match ws.read() {
            Ok(Message::Binary(bytes)) => match Frame::decode(&bytes) {
                Ok(Frame::Error { code, message, .. }) => seen.errors.push((code, message)),
                Ok(Frame::ServerHello { .. }) => {}
                other => panic!("an unexpected message: {other:?}"),
            },
            Ok(Message::Pong(data)) => seen.pongs.push(data.to_vec()),
            Ok(Message::Close(frame)) => seen.close = frame.map(|f| (u16::from(f.code), f.reason.to_string())),
            Ok(other) => panic!("an unexpected message: {other:?}"),
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => return seen,
            Err(e) => panic!("the connection ended badly ({e}) after {seen:?}"),
        }
    }
}

/// What a client gets for breaking a rule of RFC 6455: the session's `Error` frame, then the
/// close, both with the same description.
fn violation(close_code: u16, error_code: ErrorCode, message: &str) -> Seen {
    Seen { errors: vec![(error_code as u16, message.into())], pongs: vec![], close: Some((close_code, message.into())) }
}

fn protocol_error(rule: &str) -> Seen {
    violation(1002, ErrorCode::Protocol, &format!("WebSocket protocol error: {rule}"))
}

/// A session that ended normally after refusing the probe for `service`.
fn probe_refused(service: &str, pongs: Vec<Vec<u8>>) -> Seen {
    Seen { errors: vec![unknown_service(service)], pongs, close: Some((1000, String::new())) }
}

fn fragment(data: &[u8], opcode: OpCode, fin: bool) -> Message {
    Message::Frame(tungstenite::protocol::frame::Frame::message(data.to_vec(), opcode, fin))
}

fn binary(data: &[u8], fin: bool) -> Message {
    fragment(data, OpCode::Data(Data::Binary), fin)
}

fn continuation(data: &[u8], fin: bool) -> Message {
    fragment(data, OpCode::Data(Data::Continue), fin)
}

/// A frame with any header, masked by tungstenite as it sends it.
fn raw_frame(opcode: OpCode, fin: bool, rsv: [bool; 3], payload: &[u8]) -> Message {
    let header = FrameHeader { is_final: fin, rsv1: rsv[0], rsv2: rsv[1], rsv3: rsv[2], opcode, mask: None };
    Message::Frame(tungstenite::protocol::frame::Frame::from_payload(header, Bytes::from(payload.to_vec())))
}

fn close_frame(payload: &[u8]) -> Message {
    raw_frame(OpCode::Control(Control::Close), true, [false; 3], payload)
}

/// Opens a connection, sends `messages`, and returns what came back.
fn exchange(server: &Server, messages: Vec<Message>) -> Seen {
    let mut ws = connect(server);
    for message in messages {
        ws.send(message).unwrap();
    }
    observe(&mut ws)
}

/// Opens a connection, writes `bytes` to its socket as they are, and returns what came back.
fn exchange_raw(server: &Server, bytes: &[u8]) -> Seen {
    let mut ws = connect(server);
    ws.get_mut().write_all(bytes).unwrap();
    observe(&mut ws)
}

/// A masked frame's bytes, built by hand: first byte (FIN, RSV, opcode), length, payload.
fn hand_frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut out = vec![first];
    match payload.len() {
        n @ 0..=125 => out.push(0x80 | n as u8),
        n @ 126..=0xffff => {
            out.push(0x80 | 126);
            out.extend((n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend((n as u64).to_be_bytes());
        }
    }
    out.extend(mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

#[test]
fn binary_messages_whole_and_fragmented() {
    let server = server();
    // Whole.
    let name = "conformance-whole";
    assert_eq!(exchange(&server, vec![Message::Binary(hello().into()), Message::Binary(probe(name).into())]), probe_refused(name, vec![]));

    // In three fragments, the service's name cut across them, with empty fragments among them.
    let name = "fragments-arrive-whole-and-in-order";
    let request = probe(name);
    let fragments = vec![
        Message::Binary(hello().into()),
        binary(&request[..5], false),
        continuation(&[], false),
        continuation(&request[5..20], false),
        continuation(&request[20..], true),
    ];
    assert_eq!(exchange(&server, fragments), probe_refused(name, vec![]));

    // Control frames between the fragments: the pings are answered at once, with their payload;
    // an unsolicited pong is ignored.
    let name = "pings-between-fragments";
    let request = probe(name);
    let interleaved = vec![
        Message::Binary(hello().into()),
        binary(&request[..3], false),
        Message::Ping(Bytes::from_static(b"first")),
        continuation(&request[3..10], false),
        Message::Pong(Bytes::from_static(b"unsolicited")),
        Message::Ping(Bytes::from_static(b"second")),
        continuation(&request[10..], true),
    ];
    assert_eq!(exchange(&server, interleaved), probe_refused(name, vec![b"first".to_vec(), b"second".to_vec()]));

    // The size limit is max_frame_bytes, inclusive: a message of exactly that many bytes is
    // read (and refused by the session as no frame of the protocol), one byte more fails the
    // connection with 1009, whole or in fragments.
    let at_limit = vec![0x42; MAX];
    let refused = Seen { errors: vec![(ErrorCode::Protocol as u16, "malformed frame: unknown frame type 0x42".into())], pongs: vec![], close: Some((1000, String::new())) };
    assert_eq!(exchange(&server, vec![Message::Binary(at_limit.into())]), refused);
    let too_long = |len: usize| {
        let reason = format!("a message of {len} bytes; at most {MAX} are taken");
        let error = format!("a message of {len} bytes: this server takes frames of at most {MAX} bytes");
        Seen { errors: vec![(ErrorCode::Limit as u16, error)], pongs: vec![], close: Some((1009, reason)) }
    };
    assert_eq!(exchange(&server, vec![Message::Binary(vec![0x42; MAX + 1].into())]), too_long(MAX + 1));
    let half = vec![0x42; MAX / 2 + 1];
    assert_eq!(exchange(&server, vec![binary(&half, false), continuation(&half, true)]), too_long(MAX + 2));
    // Refused from the header alone: the payload is never sent.
    let mut header_only = hand_frame(0x82, &[]);
    header_only[1] = 0x80 | 127;
    header_only.splice(2..2, (4u64 << 30).to_be_bytes());
    assert_eq!(exchange_raw(&server, &header_only), too_long(4 << 30));
    server.stop();
}

#[test]
fn ping_pong_and_the_close_handshake() {
    let server = server();
    // Pings of 0 and 125 bytes (the most a control frame holds) come back as pongs with the
    // same payload; then the client closes and the server answers 1000.
    let long: Vec<u8> = (0..125).collect();
    let mut ws = connect(&server);
    ws.send(Message::Ping(Bytes::new())).unwrap();
    ws.send(Message::Ping(long.clone().into())).unwrap();
    ws.send(Message::Close(Some(CloseFrame { code: CloseCode::Normal, reason: "done".into() }))).unwrap();
    assert_eq!(observe(&mut ws), Seen { errors: vec![], pongs: vec![vec![], long], close: Some((1000, String::new())) });

    // Any code an endpoint may send, or none, closes normally: the server answers 1000 with no
    // reason (it does not echo the client's code), and the session ends without an Error frame.
    for code in [1000, 1001, 1003, 1007, 1011, 1014, 3000, 4000, 4999] {
        let close = Message::Close(Some(CloseFrame { code: CloseCode::from(code), reason: Utf8Bytes::from_static("bye, ünïcode") }));
        assert_eq!(exchange(&server, vec![close]), Seen { close: Some((1000, String::new())), ..Seen::default() }, "close {code}");
    }
    assert_eq!(exchange(&server, vec![Message::Close(None)]), Seen { close: Some((1000, String::new())), ..Seen::default() });

    // Close frames that break RFC 6455 §5.5.1 / §7.4 fail the connection instead.
    for code in [0u16, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
        assert_eq!(exchange(&server, vec![close_frame(&code.to_be_bytes())]), protocol_error("a close code that may not be sent"), "close {code}");
    }
    assert_eq!(exchange(&server, vec![close_frame(&[0x03])]), protocol_error("a close frame with a 1-byte payload"));
    let bad_reason = [0x03, 0xe8, b'o', b'k', 0xff];
    assert_eq!(exchange(&server, vec![close_frame(&bad_reason)]), violation(1007, ErrorCode::Protocol, "a close reason that is not UTF-8"));
    server.stop();
}

#[test]
fn frames_that_break_the_rules_fail_the_connection() {
    let server = server();
    let case = |messages: Vec<Message>, want: Seen, what: &str| assert_eq!(exchange(&server, messages), want, "{what}");
    let control = |c: Control, fin: bool, payload: &[u8]| raw_frame(OpCode::Control(c), fin, [false; 3], payload);

    // Text: valid UTF-8 is well-formed WebSocket but not this protocol (1003); invalid is 1007.
    let text = "a text message: Garblet frames are binary WebSocket messages";
    case(vec![Message::Text("hello".into())], violation(1003, ErrorCode::Protocol, text), "text");
    let mut first = fragment("hé".as_bytes(), OpCode::Data(Data::Text), false);
    case(vec![first, continuation("llo".as_bytes(), true)], violation(1003, ErrorCode::Protocol, text), "fragmented text");
    case(vec![raw_frame(OpCode::Data(Data::Text), true, [false; 3], &[b'h', 0xc3, 0x28])], violation(1007, ErrorCode::Protocol, "a text message that is not UTF-8"), "text, not UTF-8");
    first = fragment(&[b'h', 0xc3], OpCode::Data(Data::Text), false);
    case(vec![first, continuation(&[0x28], true)], violation(1007, ErrorCode::Protocol, "a text message that is not UTF-8"), "text in fragments, not UTF-8");

    // No extension is negotiated: any RSV bit fails the connection.
    for (i, rsv) in [[true, false, false], [false, true, false], [false, false, true]].into_iter().enumerate() {
        case(vec![raw_frame(OpCode::Data(Data::Binary), true, rsv, b"x")], protocol_error("reserved bits set (no extension was negotiated)"), &format!("RSV{}", i + 1));
    }
    for op in [3u8, 4, 5, 6, 7] {
        case(vec![raw_frame(OpCode::Data(Data::Reserved(op)), true, [false; 3], b"x")], protocol_error("unknown opcode"), &format!("opcode {op:#x}"));
    }
    for op in [0xbu8, 0xc, 0xd, 0xe, 0xf] {
        case(vec![raw_frame(OpCode::Control(Control::Reserved(op)), true, [false; 3], b"")], protocol_error("unknown opcode"), &format!("opcode {op:#x}"));
    }
    let control_rule = "a control frame longer than 125 bytes or fragmented";
    case(vec![control(Control::Ping, true, &[0; 126])], protocol_error(control_rule), "a ping of 126 bytes");
    case(vec![control(Control::Pong, true, &[0; 126])], protocol_error(control_rule), "a pong of 126 bytes");
    case(vec![control(Control::Close, true, &[0x03; 126])], protocol_error(control_rule), "a close of 126 bytes");
    case(vec![control(Control::Ping, false, b"x")], protocol_error(control_rule), "a fragmented ping");
    case(vec![continuation(b"x", true)], protocol_error("a continuation frame with no message to continue"), "a continuation first");
    case(vec![binary(b"x", false), binary(b"y", true)], protocol_error("a new message before the last one's final fragment"), "a new message between fragments");
    case(vec![binary(b"x", false), Message::Text("y".into())], protocol_error("a new message before the last one's final fragment"), "text between fragments");

    // What tungstenite will not send: an unmasked frame (RFC 6455 §5.1), a 64-bit length with
    // its top bit set.
    assert_eq!(exchange_raw(&server, &[0x82, 0x01, 0x42]), protocol_error("an unmasked frame from a client"), "unmasked binary");
    assert_eq!(exchange_raw(&server, &[0x89, 0x00]), protocol_error("an unmasked frame from a client"), "unmasked ping");
    let mut top_bit = vec![0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1];
    top_bit.extend([1, 2, 3, 4]);
    assert_eq!(exchange_raw(&server, &top_bit), protocol_error("a length with its top bit set"));
    // Lengths in a longer form than needed are accepted (RFC 6455 asks the sender for the
    // shortest, not the receiver to check): the hello and probe with 16- and 64-bit lengths.
    let name = "long-length-forms";
    let mut long_forms = hand_frame(0x82, &hello());
    let request = probe(name);
    let mut long = vec![0x82, 0x80 | 127];
    long.extend((request.len() as u64).to_be_bytes());
    long.extend([0; 4]); // a zero mask: the payload as it is
    long.extend(&request);
    long_forms.extend(long);
    assert_eq!(exchange_raw(&server, &long_forms), probe_refused(name, vec![]));
    server.stop();
}

/// The raw HTTP response to `request`: the status line and headers, lower-cased names.
fn http(server: &Server, request: &str) -> (u16, Vec<(String, String)>) {
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut buf = [0; 4096];
    while !response.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tcp.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed before its response head: {:?}", String::from_utf8_lossy(&response));
        response.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers = lines.take_while(|l| !l.is_empty()).filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    (status, headers)
}

fn upgrade(extra: &str) -> String {
    format!("GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{extra}\r\n")
}

#[test]
fn the_opening_handshake() {
    let server = server();
    let header = |headers: &[(String, String)], name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    // RFC 6455 §1.3's example key and accept value. Extensions and subprotocols the client
    // offers are not taken: the response names neither, so the client must not use them.
    let (status, headers) = http(
        &server,
        &upgrade("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nSec-WebSocket-Protocol: chat, garblet\r\n"),
    );
    assert_eq!(status, 101);
    assert_eq!(header(&headers, "sec-websocket-accept").as_deref(), Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    assert_eq!((header(&headers, "sec-websocket-extensions"), header(&headers, "sec-websocket-protocol")), (None, None));

    // Another version: 426 with the version the server speaks (RFC 6455 §4.2.2).
    let (status, headers) = http(&server, &upgrade("Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"));
    assert_eq!((status, header(&headers, "sec-websocket-version").as_deref()), (426, Some("13")));
    // A key that is not 16 bytes in base64, or none; a Connection header without Upgrade.
    for key in ["Sec-WebSocket-Key: c2hvcnQ=\r\n", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=!\r\n", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ\r\n", ""] {
        assert_eq!(http(&server, &upgrade(&format!("Sec-WebSocket-Version: 13\r\n{key}"))).0, 400, "{key:?}");
    }
    let no_connection = "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    assert_eq!(http(&server, no_connection).0, 400);
    // Not an upgrade at all, or not a GET.
    assert_eq!(http(&server, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").0, 426);
    assert_eq!(http(&server, &upgrade("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n").replacen("GET", "POST", 1)).0, 405);

    // Frames sent right behind the request, before the 101 arrives, are read as frames.
    let name = "frames-behind-the-request";
    let request = upgrade("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    tcp.write_all(&[request.as_bytes(), &hand_frame(0x82, &hello()), &hand_frame(0x82, &probe(name))].concat()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        tcp.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101 "), "{}", String::from_utf8_lossy(&head));
    let mut ws = WebSocket::from_raw_socket(tcp, tungstenite::protocol::Role::Client, Some(WebSocketConfig::default().max_message_size(Some(64 << 20))));
    assert_eq!(observe(&mut ws), probe_refused(name, vec![]));
    server.stop();
}
