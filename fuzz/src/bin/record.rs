//! Writes the starting corpora under `fuzz/corpus/<target>/`: the session targets' mutation
//! programs (fuzz/src/mutation.rs) — every computation of the fuzz services run honestly, a few
//! sessions of two computations or other options, and, for a standard and a cut-and-choose
//! computation, a flip in each frame the peer sends — and traffic recorded from those sessions
//! for the frame and WebSocket targets, plus request heads, circuit, configuration and value
//! files of the kinds real users send. The fuzzer starts from these and mutates.
//!
//! The session seeds hold no protocol bytes, only choices and frame numbers, so they keep
//! working when frames change; recording again after a protocol change puts their flips back on
//! the frames they meant, and the frame and WebSocket seeds back in the current format.
//!
//! Recording replaces the seeds of an earlier recording (the named inputs) and keeps what the
//! fuzzer added (inputs named by their SHA-1).
//!
//! Usage: garblet-fuzz-record [CORPUS_DIR]   (default: fuzz/corpus beside this crate)

use garblet_core::protocol::{Frame, Security};
use garblet_fuzz::exchange::{run_recorded, Fuzzed};
use garblet_fuzz::TARGETS;
use garblet_fuzz::mutation::{header_bytes, mutation_bytes, Header, COMPUTATIONS};
use garblet_server::ws::{self, Opcode};
use std::path::{Path, PathBuf};

/// Removes the seeds an earlier recording wrote — every input not named as libFuzzer names what
/// it adds (the SHA-1 of the input, in hex) — so that none that this one does not write lingers.
fn clear_seeds(dir: &Path) {
    for target in TARGETS {
        let Ok(entries) = std::fs::read_dir(dir.join(target.name)) else { continue };
        for entry in entries {
            let path = entry.expect("a corpus entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if !(name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit())) {
                std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        }
    }
}

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    std::fs::write(dir.join(name), bytes).expect("a corpus file");
}

/// A header for `computations` with the default options (both schemes on both sides, the
/// base OT in one thread, a clock that stands still) and a mixed input.
fn header(computations: &[usize]) -> Header {
    Header { server_garbling: 0, client_garbling: 0, split_base_ot: false, clock_steps: 0, computations: computations.to_vec(), input_pattern: 0x5a }
}

/// A computation's name in seed file names: its service, security and parameters.
fn name(place: usize) -> String {
    let c = &COMPUTATIONS[place];
    let mut name = format!("{}-{}", c.service, c.security.name());
    for (k, v) in c.params {
        name += &format!("-{k}{v}");
    }
    name
}

/// The place of a computation in the fuzz list.
fn place(service: &str, security: Security, params: &[(&str, u64)]) -> usize {
    COMPUTATIONS.iter().position(|c| c.service == service && c.security == security && c.params == params).unwrap_or_else(|| panic!("no computation {service} {} {params:?}", security.name()))
}

fn main() {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    clear_seeds(&dir);
    let targets = [(Fuzzed::Garbler, "garbler_session"), (Fuzzed::Evaluator, "evaluator_session")];

    // Every computation alone, honest.
    let mut sessions: Vec<(String, Header)> = (0..COMPUTATIONS.len()).map(|c| (name(c), header(&[c]))).collect();
    // Two on one connection (the second reuses the base OTs, Δ, and for cut-and-choose the
    // chosen OT), and the other options.
    let (millionaires, millionaires_cnc) = (place("millionaires", Security::Standard, &[]), place("millionaires", Security::CutAndChoose, &[]));
    let (hamming_cnc, add64, psi) = (place("hamming", Security::CutAndChoose, &[]), place("add64", Security::Standard, &[]), place("psi", Security::Standard, &[]));
    let long_stream = place("synthetic", Security::Standard, &[("and_gates", 4096)]);
    let (millionaires_auth, zero_equal_auth) = (place("millionaires", Security::Authenticated, &[]), place("zero_equal", Security::Authenticated, &[]));
    sessions.push(("two-cut-and-choose".into(), header(&[millionaires_cnc, hamming_cnc])));
    sessions.push(("standard-then-cut-and-choose".into(), header(&[add64, millionaires_cnc])));
    sessions.push(("two-authenticated".into(), header(&[millionaires_auth, zero_equal_auth])));
    sessions.push(("half-gates".into(), Header { server_garbling: 1, ..header(&[millionaires, psi]) }));
    sessions.push(("three-halves-only-client".into(), Header { client_garbling: 2, ..header(&[add64]) }));
    sessions.push(("no-scheme-in-common".into(), Header { server_garbling: 1, client_garbling: 2, ..header(&[add64]) }));
    sessions.push(("split-base-ot-moving-clock".into(), Header { split_base_ot: true, clock_steps: 3, ..header(&[long_stream]) }));

    let mut frame_kinds = std::collections::BTreeMap::new();
    for (name, header) in &sessions {
        let program = header_bytes(header);
        for (fuzzed, target) in targets {
            let outcome = run_recorded(fuzzed, &program);
            assert_eq!(outcome.finished, outcome.planned, "{name}: the honest exchange did not finish");
            write(&dir, target, name, &program);
        }
        let outcome = run_recorded(Fuzzed::Garbler, &program);
        for m in outcome.to_garbler.iter().chain(&outcome.to_evaluator) {
            let frame = Frame::decode(m).expect("recorded frames decode");
            frame_kinds.entry(frame.name()).or_insert_with(|| m[..m.len().min(4096)].to_vec());
        }
        // The same traffic as WebSocket frames: the client's masked, read by the server
        // (first byte 0x14: server role, 64 KiB messages, 3 bytes per read); the server's
        // unmasked, read by the client (0x15). Each message cut to 1 KiB (the framing does not
        // care what is inside; the server's hello alone would fill a seed).
        let mut to_server = vec![0x14];
        for (i, m) in outcome.to_garbler.iter().take(8).enumerate() {
            to_server.extend(ws::frame(Opcode::Binary, &m[..m.len().min(1024)], Some((i as u32).wrapping_mul(0x9e37_79b9).to_le_bytes())));
        }
        write(&dir, "ws_reader", &format!("{name}-client"), &to_server);
        let mut to_client = vec![0x15];
        for m in outcome.to_evaluator.iter().take(8) {
            to_client.extend(ws::frame(Opcode::Binary, &m[..m.len().min(1024)], None));
        }
        write(&dir, "ws_reader", &format!("{name}-server"), &to_client);
    }

    // A flip in the middle of each frame the peer sends, in a standard computation whose
    // output both parties learn, in a cut-and-choose one and in an authenticated one.
    for place in [millionaires, millionaires_cnc, millionaires_auth] {
        let program = header_bytes(&header(&[place]));
        for (fuzzed, target) in targets {
            let outcome = run_recorded(fuzzed, &program);
            let peer_frames = if fuzzed == Fuzzed::Garbler { &outcome.to_garbler } else { &outcome.to_evaluator };
            let mut seen = [0u8; 256];
            for frame in peer_frames {
                let frame_type = frame[0];
                let nth = seen[frame_type as usize];
                seen[frame_type as usize] = nth.saturating_add(1);
                let kind = Frame::decode(frame).map_or("unknown", |f| f.name());
                let mut seed = program.clone();
                seed.extend(mutation_bytes(0, frame_type, nth, (frame.len() / 2) as u16, 0x01, &[]));
                write(&dir, target, &format!("{}-flip-{kind}-{nth}", name(place)), &seed);
            }
        }
    }
    for (name, bytes) in &frame_kinds {
        write(&dir, "protocol_frame", name, bytes);
    }
    other_seeds(&dir);
    println!("starting corpora written under {}", dir.display());
}

/// The seeds that are not session traffic.
fn other_seeds(dir: &Path) {
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
    write(dir, "ws_reader", "fragmented", &fragmented);

    let upgrade = "GET /ws HTTP/1.1\r\nHost: localhost:8080\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: http://localhost:5173\r\n\
                   Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nUser-Agent: Mozilla/5.0 Chromium\r\n\r\n";
    let proxied = "GET / HTTP/1.1\r\nHost: garblet.example\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\n\
                   Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r\nX-Forwarded-For: 203.0.113.7, 10.0.0.2\r\nX-Real-IP: 203.0.113.7\r\n\r\n";
    let raw = "GET /bench/raw?bytes=1000000&frame=65536 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n\r\n";
    for (name, text) in [("upgrade", upgrade), ("proxied", proxied), ("raw", raw), ("metrics", "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"), ("services", "GET /services?x=1 HTTP/1.0\r\n\r\n")] {
        write(dir, "http_head", name, text.as_bytes());
    }

    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for file in ["zero_equal", "neg64", "adder64", "sub64", "old_format_adder_32bit"] {
        let text = std::fs::read(repo.join("circuits/bristol").join(format!("{file}.txt"))).expect("a bundled circuit");
        write(dir, "bristol", file, &text);
    }
    for (name, path) in [("default", "server/src/serve/default.toml"), ("deploy", "deploy/garblet.toml"), ("fuzz-services", "fuzz/src/services.toml")] {
        write(dir, "config", name, &std::fs::read(repo.join(path)).expect("a configuration"));
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
        write(dir, "values", &format!("v{i}"), v.as_bytes());
    }
}
