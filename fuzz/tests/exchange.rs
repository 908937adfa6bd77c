//! The session targets' exchange (`src/exchange.rs`) does what the fuzzer relies on: an input
//! without mutations is a whole honest session for every computation and option, and a
//! mutation lands where the input says — on the frame it names, past the checks before it.

use garblet_core::protocol::{Frame, Security};
use garblet_fuzz::exchange::{run, run_recorded, Fuzzed, Outcome};
use garblet_fuzz::mutation::{header_bytes, mutation_bytes, parse, Header, COMPUTATIONS};

const BOTH: [Fuzzed; 2] = [Fuzzed::Garbler, Fuzzed::Evaluator];

fn header(computations: &[usize]) -> Header {
    Header { server_garbling: 0, client_garbling: 0, split_base_ot: false, clock_steps: 0, computations: computations.to_vec(), input_pattern: 0xa5 }
}

fn place(service: &str, security: Security) -> usize {
    COMPUTATIONS.iter().position(|c| c.service == service && c.security == security).expect("a fuzz computation")
}

/// The peer's frames of an honest exchange, as sent.
fn peer_frames(fuzzed: Fuzzed, program: &[u8]) -> Vec<Vec<u8>> {
    let outcome = run_recorded(fuzzed, program);
    if fuzzed == Fuzzed::Garbler { outcome.to_garbler } else { outcome.to_evaluator }
}

/// The type and count of the peer's first frame of kind `name`, as a mutation names it.
fn first(frames: &[Vec<u8>], name: &str) -> (u8, u8) {
    let frame = frames.iter().find(|f| Frame::decode(f).is_ok_and(|f| f.name() == name)).unwrap_or_else(|| panic!("no {name} frame"));
    (frame[0], 0)
}

fn with(program: &[u8], mutations: &[Vec<u8>]) -> Vec<u8> {
    let mut out = program.to_vec();
    mutations.iter().for_each(|m| out.extend(m));
    out
}

#[test]
fn every_computation_and_option_finishes_when_nothing_is_mutated() {
    let mut headers: Vec<Header> = (0..COMPUTATIONS.len()).map(|c| header(&[c])).collect();
    headers.push(header(&[place("millionaires", Security::CutAndChoose), place("hamming", Security::CutAndChoose)]));
    headers.push(Header { server_garbling: 1, split_base_ot: true, clock_steps: 3, ..header(&[place("add64", Security::Standard), place("psi", Security::Standard)]) });
    headers.push(Header { client_garbling: 2, ..header(&[place("zero_equal", Security::CutAndChoose)]) });
    for h in &headers {
        assert_eq!(&parse(&header_bytes(h)).0, h, "the header's bytes read back");
        for fuzzed in BOTH {
            let Outcome { deviated, planned, started, finished, .. } = run_recorded(fuzzed, &header_bytes(h));
            assert!(!deviated);
            assert_eq!((planned, started, finished), (h.computations.len(), h.computations.len(), h.computations.len()), "{h:?} against the {fuzzed:?}");
        }
    }
    // No scheme in common: nothing is planned, nothing starts.
    let apart = Header { server_garbling: 1, client_garbling: 2, ..header(&[0]) };
    let outcome = run_recorded(Fuzzed::Garbler, &header_bytes(&apart));
    assert_eq!((outcome.planned, outcome.started, outcome.finished), (0, 0, 0));
}

#[test]
fn a_long_stream_with_a_moving_clock_grows_the_window() {
    let long = COMPUTATIONS.iter().position(|c| c.params == [("and_gates", 4096)]).expect("the long stream");
    let program = header_bytes(&Header { clock_steps: 3, ..header(&[long]) });
    let outcome = run_recorded(Fuzzed::Garbler, &program);
    assert!(outcome.to_garbler.iter().any(|f| matches!(Frame::decode(f), Ok(Frame::Window { .. }))), "the client asks for a larger window");
    let still = run_recorded(Fuzzed::Garbler, &header_bytes(&header(&[long])));
    assert!(!still.to_garbler.iter().any(|f| matches!(Frame::decode(f), Ok(Frame::Window { .. }))), "not when the clock stands still");
}

#[test]
fn a_mutation_lands_on_the_frame_it_names() {
    // The per-column check refuses an OT chunk with a flipped check value (its last byte): the
    // server's session ends, nothing finishes. (Not a byte of the first chunk's set-up: a flipped
    // tree correction on the branch the sender does not open goes unseen, by design, so whether
    // it is refused depends on Δ.)
    let program = header_bytes(&header(&[place("millionaires", Security::Standard)]));
    let frames = peer_frames(Fuzzed::Garbler, &program);
    let (chunk, nth) = first(&frames, "OtChunk");
    let last = frames.iter().find(|f| f[0] == chunk).expect("an OtChunk").len() - 1;
    let flipped = run_recorded(Fuzzed::Garbler, &with(&program, &[mutation_bytes(0, chunk, nth, last as u16, 0x01, &[])]));
    assert!(flipped.deviated);
    assert_eq!((flipped.started, flipped.finished), (1, 0));
    // Without the client's hello the server refuses its request: nothing finishes.
    let (hello, nth) = first(&frames, "ClientHello");
    let dropped = run_recorded(Fuzzed::Garbler, &with(&program, &[mutation_bytes(5, hello, nth, 0, 0, &[])]));
    assert_eq!((dropped.deviated, dropped.started, dropped.finished), (true, 1, 0));
    // The client of a cut-and-choose computation refuses a cut flight 2 (the commitments).
    let program = header_bytes(&header(&[place("millionaires", Security::CutAndChoose)]));
    let frames = peer_frames(Fuzzed::Evaluator, &program);
    let flights: Vec<&Vec<u8>> = frames.iter().filter(|f| matches!(Frame::decode(f), Ok(Frame::Flight { .. }))).collect();
    let nth = flights.iter().position(|f| matches!(Frame::decode(f), Ok(Frame::Flight { flight: 2, .. }))).expect("flight 2");
    let half = (flights[nth].len() / 2) as u16;
    let cut = run_recorded(Fuzzed::Evaluator, &with(&program, &[mutation_bytes(3, flights[nth][0], nth as u8, half, 0, &[])]));
    assert_eq!((cut.started, cut.finished), (1, 0));
    // A mutation of a frame beyond the exchange changes nothing.
    let (data, _) = first(&frames, "Data");
    let beyond = run_recorded(Fuzzed::Evaluator, &with(&program, &[mutation_bytes(5, data, 200, 0, 0, &[])]));
    assert_eq!((beyond.deviated, beyond.finished), (false, 1));
}

#[test]
fn a_window_limit_is_no_deviation_and_the_session_still_completes() {
    let long = COMPUTATIONS.iter().position(|c| c.params == [("and_gates", 4096)]).expect("the long stream");
    let honest = header_bytes(&header(&[long]));
    for fuzzed in BOTH {
        // The smallest window from the start, and again in mid-stream.
        let frames = peer_frames(fuzzed, &honest);
        let (hello, mid) = match fuzzed {
            Fuzzed::Garbler => (first(&frames, "ClientHello"), first(&frames, "Credit")),
            Fuzzed::Evaluator => (first(&frames, "ServerHello"), first(&frames, "Data")),
        };
        let program = with(&honest, &[mutation_bytes(12, hello.0, hello.1, 0, 0, &[]), mutation_bytes(12, mid.0, mid.1, 1, 0, &[])]);
        // `run` asserts that an exchange without deviation finishes.
        run(fuzzed, &program);
        assert!(!run_recorded(fuzzed, &program).deviated);
    }
}
