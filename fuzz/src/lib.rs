//! Fuzz harnesses: every parser and state machine that takes bytes from the network or from an
//! operator's files, fed arbitrary input. Each harness is a plain function that must return
//! normally for every input — a panic (an index out of range, an overflow, an `unwrap`, an
//! assertion here) is the bug it looks for; libFuzzer also reports hangs and allocations beyond
//! its memory limit. `fuzz/libfuzzer/` wraps each in a cargo-fuzz target, and
//! `tests/corpora.rs` replays the committed corpora and every crashing input ever found, so a
//! fixed bug stays fixed in the default test run.
//!
//! Beyond "no panic", the harnesses check what can be checked without a second implementation:
//! a decoded protocol frame encodes to bytes that decode to the same frame, a WebSocket message
//! never exceeds the reader's limit, a parsed value has the width asked for.

use garblet_circuits::bristol::{self, BristolProgram};
use garblet_circuits::{value, Backend, Encoding, Plaintext, Reveal, Runner};
use garblet_core::protocol::catalog::{EncodingInfo, FieldInfo};
use garblet_core::protocol::topology::{end_record, TopologyError, TopologyHasher, TopologyReader, TopologyWriter, WholeStream};
use garblet_core::protocol::{EvaluatorConfig, Frame, GarblerConfig, Services};
use garblet_server::client::commands::{input_bits, parse_param};
use garblet_server::serve::config::Config;
use garblet_server::serve::proxy::TrustedProxies;
use garblet_server::serve::values::ValueSource;
use garblet_server::serve::{http, services};
use garblet_server::service_table::ServiceTable;
use garblet_server::ws::{Message, Reader, Role};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

pub mod exchange;
pub mod mutation;

/// A target: its name (the directory of its corpus and of its regressions) and its harness.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
}

pub const TARGETS: &[Target] = &[
    Target { name: "ws_reader", run: ws_reader },
    Target { name: "http_head", run: http_head },
    Target { name: "protocol_frame", run: protocol_frame },
    Target { name: "garbler_session", run: garbler_session },
    Target { name: "evaluator_session", run: evaluator_session },
    Target { name: "bristol", run: bristol },
    Target { name: "config", run: config },
    Target { name: "values", run: values },
];

pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

// ---------------------------------------------------------------------------------------------
// WebSocket framing (server/src/ws.rs)

/// The first byte chooses the reader's role (bit 0), its message limit (bits 1–2) and how many
/// bytes arrive per read (bits 3–7: 1 to 32), so the fuzzer also splits frames at every point;
/// the rest is the byte stream.
pub fn ws_reader(data: &[u8]) {
    let Some((&control, mut stream)) = data.split_first() else { return };
    let role = if control & 1 == 0 { Role::Server } else { Role::Client };
    let max_message = [125, 1 << 10, 1 << 16, 0][(control >> 1 & 3) as usize];
    let step = 1 + (control >> 3) as usize;
    let mut reader = Reader::new(role, max_message, &[], 64);
    loop {
        match reader.next_message() {
            Err(_) => return,
            Ok(Some(Message::Binary(payload))) => assert!(reader.payload(&payload).len() <= max_message, "a message over the limit"),
            Ok(Some(Message::Ping(payload))) => assert!(payload.len() <= 125, "a ping over 125 bytes"),
            Ok(Some(_)) => {}
            Ok(None) if stream.is_empty() => return,
            Ok(None) => {
                let spare = reader.spare();
                assert!(!spare.is_empty(), "the reader wants bytes but has no room for them");
                let n = step.min(spare.len()).min(stream.len());
                spare[..n].copy_from_slice(&stream[..n]);
                reader.filled(n);
                stream = &stream[n..];
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP (server/src/serve/http.rs, proxy.rs)

/// A request head as the port reads it: parsed, routed, checked as an upgrade, and its
/// forwarded client address read as behind a trusted proxy.
pub fn http_head(data: &[u8]) {
    let Ok(Some((head, len))) = http::parse_head(data) else { return };
    assert!(len <= data.len());
    let _ = http::route(&head, 1 << 20, true);
    let _ = http::websocket_accept(&head);
    let proxy: SocketAddr = "127.0.0.1:9000".parse().expect("an address");
    for header in ["X-Forwarded-For", "X-Real-IP"] {
        let trusted = TrustedProxies::new(&["127.0.0.0/8".into(), "10.0.0.0/8".into(), "::1".into()], header).expect("a valid proxy list");
        let name = header.to_ascii_lowercase();
        let peer = trusted.peer(proxy, head.headers(&name));
        let _ = peer.to_string();
    }
}

// ---------------------------------------------------------------------------------------------
// Protocol frames and sessions (wasm-core/src/protocol)

/// One protocol frame. A frame that decodes must encode to bytes that decode to it again
/// (compared as bytes: a `Done` frame may carry a NaN).
pub fn protocol_frame(data: &[u8]) {
    let Ok(frame) = Frame::decode(data) else { return };
    let bytes = frame.encode();
    let again = Frame::decode(&bytes).unwrap_or_else(|e| panic!("{} re-encoded does not decode: {e}", frame.name()));
    assert_eq!(again.encode(), bytes, "{} changed in a round trip", frame.name());
}

/// The limits the session targets' server runs under: the server's, with small Data frames
/// (several to the longer computations, each answered with credit), a window that the largest
/// fuzz computation's stream exceeds, and room for the client to ask for more. Its OT offer puts
/// k = 2 first: the same SoftSpoken code as the server's default k = 4 (the code takes k at run
/// time), and the cheapest set-up for the few OTs of a fuzz computation — garbler_session ran
/// 1,110 executions a CPU second with it, 966 with k = 4 and 892 with k = 1 (60 s each). The
/// others stay in the offer, so a mutated hello still reaches each of them.
pub fn garbler_config() -> GarblerConfig {
    let ot_k = vec![2, 4, 8, 1];
    GarblerConfig { max_window: 256 << 10, max_frame: 1 << 20, data_frame: 8 << 10, max_and_gates: 1 << 22, max_prepared_and_gates: 1 << 22, ot_k: [ot_k.clone(), ot_k], ..GarblerConfig::default() }
}

/// The session targets' client: the smallest window to start with, room to grow it.
pub fn evaluator_config() -> EvaluatorConfig {
    EvaluatorConfig { window: 64 << 10, max_window: 256 << 10, max_slots: 1 << 16, ..EvaluatorConfig::default() }
}

/// The services the session targets' server offers (`services.toml`), built as `garblet serve`
/// builds its configuration's.
pub fn fuzz_services() -> Arc<dyn Services> {
    static SERVICES: OnceLock<Arc<ServiceTable>> = OnceLock::new();
    SERVICES
        .get_or_init(|| {
            let config = Config::parse(include_str!("services.toml"), "fuzz/src/services.toml", PathBuf::from(env!("CARGO_MANIFEST_DIR"))).expect("the fuzz services' configuration loads");
            Arc::new(services::build(&config).expect("the fuzz services build").table)
        })
        .clone()
}

/// The server's session against a client whose frames the input mutates ([`exchange`]).
pub fn garbler_session(data: &[u8]) {
    exchange::run(exchange::Fuzzed::Garbler, data);
}

/// The browser's session against a server whose frames the input mutates ([`exchange`]).
pub fn evaluator_session(data: &[u8]) {
    exchange::run(exchange::Fuzzed::Evaluator, data);
}

// ---------------------------------------------------------------------------------------------
// Operators' files (circuits/src/bristol, server/src/serve/config.rs)

/// The largest circuit the Bristol target also runs after scanning it.
const MAX_RUN_GATES: usize = 1 << 16;

/// A Bristol Fashion file: scanned as the server does at start-up, and when it scans, built as a
/// program (all inputs the evaluator's, every output to it) and run in the clear on inputs that
/// follow a fixed pattern; then streamed as a server streams it, in small batches so that wires
/// outlive their records, and the evaluator's reading of the stream run in the clear again.
pub fn bristol(data: &[u8]) {
    let Ok(info) = bristol::scan(data) else { return };
    if info.header.gates > MAX_RUN_GATES || info.header.wires > MAX_RUN_GATES * 4 {
        return;
    }
    let (inputs, outputs) = bristol::default_io(&info.header, &[], Reveal::Evaluator);
    let (input_bits, output_bits) = (info.header.input_wires(), info.header.output_wires());
    let x: Vec<bool> = (0..input_bits).map(|i| i % 3 == 1).collect();
    let program = BristolProgram::new(data, Arc::new(info), inputs, outputs).unwrap_or_else(|e| panic!("a scanned circuit does not build: {e}"));
    let mut runner = Runner::with_batch_gates(Box::new(program), 61);
    let (mut plain, mut streamed) = (Plaintext::new(vec![], x.clone()), Plaintext::new(vec![], x));
    let (mut writer, mut records, mut hasher) = (TopologyWriter::new(), Vec::new(), TopologyHasher::new());
    while let Some(batch) = runner.next_batch().unwrap_or_else(|e| panic!("a scanned circuit does not build: {e}")) {
        plain.process(batch).unwrap_or_else(|e| panic!("a scanned circuit does not run: {e}"));
        let start = records.len();
        writer.record(batch, &mut records);
        hasher.update(&records[start..]);
    }
    assert_eq!(plain.outputs().len(), output_bits, "outputs");
    records.extend_from_slice(&end_record());
    hasher.update(&end_record());
    let walk = TopologyReader::new(hasher.finish(), u32::MAX)
        .read_whole(&records, |batch| {
            streamed.process(batch).unwrap_or_else(|e| panic!("a streamed circuit does not run: {e}"));
            Ok::<_, TopologyError>(())
        })
        .unwrap_or_else(|e| panic!("the stream of a scanned circuit does not read: {e}"));
    assert_eq!(walk, WholeStream::Ended(records.len()), "the stream ends at its end record");
    assert_eq!(streamed.outputs(), plain.outputs(), "the streamed circuit's outputs");
}

/// A configuration file, loaded and its services built as `garblet serve` does at start-up,
/// with relative paths under a directory that does not exist.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = Config::parse(text, "fuzz.toml", PathBuf::from("/nonexistent/garblet-fuzz")) else { return };
    let _ = config.listen_addr();
    let _ = config.trusted_proxies();
    let _ = services::build(&config);
}

// ---------------------------------------------------------------------------------------------
// Input values (server/src/client/commands.rs, server/src/serve/values.rs, circuits' value.rs)

/// A value as a user types it for the CLI (each kind of field), as a parameter, and as a
/// configuration's value source.
pub fn values(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let fields = [
        ("uint", 64, EncodingInfo::Uint),
        ("bytes", 128, EncodingInfo::Bytes),
        ("dna", 16, EncodingInfo::Symbols { alphabet: "ACGT".into(), symbol_bits: 2 }),
        ("latin1", 32, EncodingInfo::Symbols { alphabet: (0u8..=255).map(char::from).collect(), symbol_bits: 8 }),
    ];
    for (name, bits, encoding) in fields {
        let field = FieldInfo { name: name.into(), party: "evaluator".into(), bits, encoding, signed: false };
        if let Ok(value) = input_bits(text, &field) {
            assert_eq!(value.len(), bits, "{name}: the value's width");
        }
    }
    let _ = parse_param(text);
    for width in [1, 7, 64, 128, 200] {
        if let Ok(bits) = value::parse_uint(text, width) {
            assert_eq!(bits.len(), width, "parse_uint width");
        }
    }
    if let Ok(source) = toml::from_str::<ValueSource>(text) {
        let encodings = [Encoding::UInt, Encoding::Bytes, Encoding::Symbols { alphabet: "ACGT".into(), symbol_bits: 2 }];
        for encoding in &encodings {
            let _ = source.resolve(128, encoding, Path::new("/nonexistent/garblet-fuzz"));
        }
    }
}
