//! Writes the seed corpora under `fuzz/corpus/<target>/`: real traffic recorded from sessions
//! between the server's garbler (the embedded default services) and the client's evaluator,
//! joined in memory under the fuzz targets' limits, plus request heads, circuit, configuration
//! and value files of the kinds real users send. The fuzzer starts from these and mutates; the
//! traffic is recorded again rather than kept by hand, so that it follows the protocol.
//!
//! Usage: garblet-fuzz-record [CORPUS_DIR]   (default: fuzz/corpus beside this crate)

use garblet_core::garble::{Garbling, Scheme};
use garblet_core::protocol::{EvaluatorEvent, EvaluatorSession, Frame, GarblerSession, NoClock, Security};
use garblet_fuzz::{default_services, evaluator_config, garbler_config, join_messages};
use garblet_server::ws::{self, Opcode};
use std::path::{Path, PathBuf};

/// A service, its client's parameters, the schemes the server offers, the security asked for.
type Recorded = (&'static str, &'static [(&'static str, u64)], Garbling, Security);

/// Sessions recorded: a service of the default catalog, the client's parameters, the schemes
/// the server offers (both, as by default, which settles on three-halves; or half-gates only),
/// and the security (cut-and-choose for services that offer it).
const SESSIONS: &[Recorded] = &[
    ("millionaires", &[], Garbling::Auto, Security::Standard),
    ("zero_equal", &[], Garbling::Auto, Security::Standard),
    ("add64", &[], Garbling::Auto, Security::Standard),
    ("synthetic", &[("and_gates", 200)], Garbling::Auto, Security::Standard),
    ("hamming", &[], Garbling::Auto, Security::Standard),
    ("psi", &[], Garbling::Auto, Security::Standard),
    ("millionaires", &[], Garbling::Only(Scheme::HalfGates), Security::Standard),
    ("zero_equal", &[], Garbling::Only(Scheme::HalfGates), Security::Standard),
    ("hamming", &[], Garbling::Auto, Security::CutAndChoose),
    ("aes128", &[], Garbling::Only(Scheme::HalfGates), Security::CutAndChoose),
];

/// The session targets' seeds go as far into a session as fits here: past the hellos and the OT,
/// into the garbled stream. (Others are kept small: libFuzzer mutates small inputs faster.)
const MAX_SESSION_SEED: usize = 64 << 10;

struct Recording {
    /// The client's messages to the server.
    to_garbler: Vec<Vec<u8>>,
    /// The server's messages to the client.
    to_evaluator: Vec<Vec<u8>>,
    /// The service's place in the catalog (the evaluator target's first byte).
    index: u8,
}

fn record(service: &str, params: &[(&str, u64)], garbling: Garbling, security: Security) -> Recording {
    let mut garbler = GarblerSession::with_garbling(garbler_config(), garbling, Box::new(NoClock), default_services()).expect("a garbler session");
    let mut evaluator = EvaluatorSession::new(evaluator_config(), Box::new(NoClock)).expect("an evaluator session");
    let mut rec = Recording { to_garbler: Vec::new(), to_evaluator: Vec::new(), index: 0 };
    let mut started = false;
    loop {
        let mut moved = false;
        while let Some(m) = evaluator.poll_transmit().expect("the evaluator sends") {
            garbler.handle(&m).expect("the garbler takes it");
            rec.to_garbler.push(m);
            moved = true;
        }
        while let Some(m) = garbler.poll_transmit().expect("the garbler sends") {
            evaluator.handle(&m).expect("the evaluator takes it");
            rec.to_evaluator.push(m);
            moved = true;
        }
        while garbler.poll_event().is_some() {}
        match evaluator.poll_event() {
            Some(EvaluatorEvent::Ready) if !started => {
                let catalog = evaluator.catalog().expect("a catalog");
                let index = catalog.services.iter().position(|s| s.name == service).unwrap_or_else(|| panic!("no service {service}"));
                // The evaluator target's first byte: the service's place, and the top bit for
                // cut-and-choose.
                let place = u8::try_from(index).ok().filter(|&i| i < 0x80).expect("fewer than 128 services");
                rec.index = place | if security == Security::CutAndChoose { 0x80 } else { 0 };
                // The catalog's widths are the defaults: no recorded service changes its
                // client's input width with the parameters given here.
                let bits: usize = catalog.services[index].inputs.iter().filter(|f| f.party == "evaluator").map(|f| f.bits).sum();
                let params = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                evaluator.start_with(service, params, (0..bits).map(|i| i % 3 == 0).collect(), security).expect("the computation starts");
                started = true;
                moved = true;
            }
            Some(EvaluatorEvent::Finished(_)) => return rec,
            _ => {}
        }
        assert!(moved, "{service}: the session stalled");
    }
}

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    std::fs::write(dir.join(name), bytes).expect("a corpus file");
}

/// The first messages whose joined length (see [`join_messages`]) stays within `max` bytes.
fn prefix(messages: &[Vec<u8>], max: usize) -> &[Vec<u8>] {
    let mut total = 0;
    let n = messages.iter().take_while(|m| {
        total += m.len() + 2;
        total <= max
    });
    &messages[..n.count()]
}

fn main() {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let mut frame_kinds = std::collections::BTreeMap::new();
    for (service, params, garbling, security) in SESSIONS {
        let rec = record(service, params, *garbling, *security);
        let service = &match security {
            Security::Standard => format!("{service}-{}", garbling.name()),
            Security::CutAndChoose => format!("{service}-{}-{}", garbling.name(), security.name()),
        };
        write(&dir, "garbler_session", service, &join_messages(prefix(&rec.to_garbler, MAX_SESSION_SEED).iter().map(Vec::as_slice)));
        let mut seed = vec![rec.index];
        seed.extend(join_messages(prefix(&rec.to_evaluator, MAX_SESSION_SEED).iter().map(Vec::as_slice)));
        write(&dir, "evaluator_session", service, &seed);
        // The same traffic as WebSocket frames: the client's masked, read by the server
        // (first byte 0x14: server role, 64 KiB messages, 3 bytes per read); the server's
        // unmasked, read by the client (0x15).
        let mut to_server = vec![0x14];
        // Each message cut to 1 KiB (the framing does not care what is inside; the server's
        // hello alone would fill a seed).
        for (i, m) in rec.to_garbler.iter().take(8).enumerate() {
            to_server.extend(ws::frame(Opcode::Binary, &m[..m.len().min(1024)], Some((i as u32).wrapping_mul(0x9e37_79b9).to_le_bytes())));
        }
        write(&dir, "ws_reader", &format!("{service}-client"), &to_server);
        let mut to_client = vec![0x15];
        for m in rec.to_evaluator.iter().take(8) {
            to_client.extend(ws::frame(Opcode::Binary, &m[..m.len().min(1024)], None));
        }
        write(&dir, "ws_reader", &format!("{service}-server"), &to_client);
        for m in rec.to_garbler.iter().chain(&rec.to_evaluator) {
            let frame = Frame::decode(m).expect("recorded frames decode");
            frame_kinds.entry(frame.name()).or_insert_with(|| m[..m.len().min(4096)].to_vec());
        }
    }
    for (name, bytes) in &frame_kinds {
        write(&dir, "protocol_frame", name, bytes);
    }
    // A fragmented message with a ping between its fragments, then a close.
    let mask = [1, 2, 3, 4];
    let mut fragmented = vec![0x14];
    let mut part = |first: u8, payload: &[u8]| {
        let mut body = payload.to_vec();
        ws::apply_mask(&mut body, mask, 0);
        fragmented.extend([first, 0x80 | payload.len() as u8]);
        fragmented.extend(mask);
        fragmented.extend(body);
    };
    part(0x02, b"frag");
    part(0x89, b"ping");
    part(0x80, b"mented");
    part(0x88, &[0x03, 0xe8]);
    write(&dir, "ws_reader", "fragmented", &fragmented);

    let upgrade = "GET /ws HTTP/1.1\r\nHost: localhost:8080\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: http://localhost:5173\r\n\
                   Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nUser-Agent: Mozilla/5.0 Chromium\r\n\r\n";
    let proxied = "GET / HTTP/1.1\r\nHost: garblet.example\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\n\
                   Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r\nX-Forwarded-For: 203.0.113.7, 10.0.0.2\r\nX-Real-IP: 203.0.113.7\r\n\r\n";
    let raw = "GET /bench/raw?bytes=1000000&frame=65536 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n\r\n";
    for (name, text) in [("upgrade", upgrade), ("proxied", proxied), ("raw", raw), ("metrics", "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"), ("services", "GET /services?x=1 HTTP/1.0\r\n\r\n")] {
        write(&dir, "http_head", name, text.as_bytes());
    }

    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for file in ["zero_equal", "neg64", "adder64", "sub64", "old_format_adder_32bit"] {
        let text = std::fs::read(repo.join("circuits/bristol").join(format!("{file}.txt"))).expect("a bundled circuit");
        write(&dir, "bristol", file, &text);
    }
    for (name, path) in [("default", "server/src/serve/default.toml"), ("deploy", "deploy/garblet.toml")] {
        write(&dir, "config", name, &std::fs::read(repo.join(path)).expect("a configuration"));
    }
    let values = [
        "12345",
        "0xdeadbeef_cafe",
        "text:sixteen bytes!",
        "acgtACGT",
        "and_gates=1_000",
        "hex = '000102030405060708090a0b0c0d0e0f'",
        "decimal = 1000",
        "list = [1, 2, '3', 4]",
        "env = 'GARBLET_FUZZ_UNSET'\nrandom = true",
        "text = 'ACGT'",
        "file = 'key.hex'",
    ];
    for (i, v) in values.iter().enumerate() {
        write(&dir, "values", &format!("v{i}"), v.as_bytes());
    }
    println!("seed corpora written under {}", dir.display());
}
