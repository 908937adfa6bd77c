//! Round trips from connect to result and from request to result, counted by running a garbler
//! and an evaluator session in flights: each flight delivers everything one side has to say to
//! the other, and the other side answers only in the next flight. A round trip is a client
//! flight answered by a server flight; what the client sends after its result (the garbler's
//! output labels) is no round trip of the computation's.
//!
//! The WebSocket upgrade is the first round trip of a connection: the server starts its session
//! when the upgrade request arrives, so its hello (catalog and base-OT points) leaves with the
//! `101` response, and the client's hello leaves with its first request. The goal this test
//! holds the protocol to: a cold connection takes the upgrade plus one round trip (the base OTs
//! folded into the request's round), a warm one a single round trip — for a streamed (Bristol)
//! circuit, and for a built-in program whose output the server learns too.
//!
//! The authenticated mode's count is its own: four round trips for a circuit of one segment
//! (its test below says where they go).
// Native only: the services read the bundled Bristol files from disk.
#![cfg(not(target_arch = "wasm32"))]

mod support;

use garblet_circuits::{value, Encoding, Party, Reveal};
use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerEvent, GarblerSession, NoClock, Security};
use support::{bristol_service, builtin_service, TestServices, AES_KEY};

/// One side's turn: everything the client has queued goes to the server, or the other way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flight {
    ToServer,
    ToClient,
}

/// Two sessions joined by flights, and the flights so far.
struct Link {
    garbler: GarblerSession,
    evaluator: EvaluatorSession,
    flights: Vec<Flight>,
}

impl Link {
    /// Delivers everything the client has to send (its OT work happens here, as in a driver's
    /// `poll_transmit`); records a flight if there was anything.
    fn client_flight(&mut self) -> usize {
        let mut frames = Vec::new();
        while let Some(frame) = self.evaluator.poll_transmit().unwrap() {
            frames.push(frame);
        }
        for frame in &frames {
            self.garbler.handle(frame).unwrap();
        }
        if !frames.is_empty() {
            self.flights.push(Flight::ToServer);
        }
        frames.len()
    }

    /// Delivers everything the server has to send now (its garbling happens here, within the
    /// credit window).
    fn server_flight(&mut self) -> usize {
        let mut frames = Vec::new();
        while let Some(frame) = self.garbler.poll_transmit().unwrap() {
            frames.push(frame);
        }
        for frame in &frames {
            self.evaluator.handle(frame).unwrap();
        }
        if !frames.is_empty() {
            self.flights.push(Flight::ToClient);
        }
        frames.len()
    }

    /// Alternates flights, client first, until the evaluator reports an event; returns it and
    /// the round trips it took: client flights that a server flight answered.
    fn until_event(&mut self) -> (EvaluatorEvent, usize) {
        let start = self.flights.len();
        for _ in 0..64 {
            let sent = self.client_flight();
            let answered = self.server_flight();
            if let Some(event) = self.evaluator.poll_event() {
                return (event, round_trips(&self.flights[start..]));
            }
            assert!(sent + answered > 0, "both sides wait: the session is stuck");
        }
        panic!("no result after 64 flights each way");
    }
}

/// Client flights answered by a server flight.
fn round_trips(flights: &[Flight]) -> usize {
    flights.windows(2).filter(|w| w == &[Flight::ToServer, Flight::ToClient]).count()
}

/// A connection: the upgrade request (a client flight with no protocol frame), which starts the
/// server's session, then the `101` response with the server's hello (a server flight). The
/// client's session is made at once, but its hello can only leave after the upgrade.
fn connect(services: std::sync::Arc<TestServices>) -> (Link, usize) {
    let evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services).unwrap();
    let mut link = Link { garbler, evaluator, flights: vec![Flight::ToServer] };
    assert!(link.server_flight() > 0, "the server's hello leaves with the 101 response");
    assert_eq!(link.evaluator.poll_event(), Some(EvaluatorEvent::Ready), "the server's hello is all the client needs to start");
    let trips = round_trips(&link.flights);
    (link, trips)
}

fn services() -> std::sync::Arc<TestServices> {
    TestServices::new(vec![
        bristol_service("aes128", "aes_128.txt", vec![("key", Party::Garbler, Encoding::Bytes), ("plaintext", Party::Evaluator, Encoding::Bytes)], Reveal::Evaluator, value::from_bytes(&AES_KEY)).offering(Security::Authenticated),
        builtin_service("millionaires", "millionaires", &[("n", 32)], vec![], value::from_u128(1_500_000, 32)),
    ])
}

/// Runs `service` on `link` with `inputs`; the result's first output and the round trips.
fn compute(link: &mut Link, service: &str, inputs: Vec<bool>) -> (Vec<bool>, usize) {
    link.evaluator.start(service, vec![], inputs).unwrap();
    match link.until_event() {
        (EvaluatorEvent::Finished(result), trips) => (result.outputs[0].bits.clone(), trips),
        (other, _) => panic!("{service}: {other:?}"),
    }
}

/// Delivers what the client still has to say after its result (the garbler's output labels),
/// and returns what the server learned, if it finished a computation.
fn server_learns(link: &mut Link) -> Option<Vec<bool>> {
    link.client_flight();
    link.server_flight();
    link.garbler.poll_event().map(|GarblerEvent::Finished { garbler_outputs, .. }| garbler_outputs)
}

#[test]
fn a_cold_connection_takes_the_upgrade_and_one_round_trip_and_a_warm_one_a_single_round_trip() {
    let plaintext = value::parse_uint("0x00112233445566778899aabbccddeeff", 128).unwrap();
    for service in ["aes128", "millionaires"] {
        let inputs = || if service == "aes128" { plaintext.clone() } else { value::from_u128(1_000_000, 32) };
        let (mut link, upgrade) = connect(services());
        assert_eq!(upgrade, 1, "the upgrade: one round trip, with the server's hello");

        // Cold: the client's hello, the request and the first OT chunks (after the base OTs)
        // leave together; everything the evaluator needs comes back in one flight.
        let (cold, trips) = compute(&mut link, service, inputs());
        assert_eq!(upgrade + trips, 2, "{service}: connect → result, cold");
        assert_eq!(round_trips(&link.flights), 2, "{service}: flights {:?}", link.flights);

        // Warm: the second computation on the connection, the base OTs done.
        let before = link.flights.len();
        let (warm, trips) = compute(&mut link, service, inputs());
        // The first flight also carries what the server still had to hear of the last
        // computation (the garbler's output labels): no round trip of its own.
        assert_eq!(trips, 1, "{service}: request → result, warm; flights {:?}", &link.flights[before..]);
        assert_eq!(cold, warm, "{service}: the same result, cold and warm");

        if service == "aes128" {
            assert_eq!(value::to_hex(&cold), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "FIPS-197's example");
        } else {
            // The server's 1,500,000 is greater: both learn it. The server's copy arrives with
            // the client's next flight, after the client already has its result.
            assert_eq!(cold, vec![true]);
            assert_eq!(server_learns(&mut link), Some(vec![true]), "the server learns the bit too");
            assert!(link.garbler.is_idle() && link.evaluator.is_idle());
        }
    }
}

#[test]
fn the_servers_output_arrives_before_the_next_request_is_served() {
    // The client starts its next computation right after its result: its output labels for the
    // last one reach the server first, in the same flight as the new request.
    let (mut link, _) = connect(services());
    let (first, _) = compute(&mut link, "millionaires", value::from_u128(2_000_000, 32));
    assert_eq!(first, vec![false]);
    let (second, trips) = compute(&mut link, "millionaires", value::from_u128(1, 32));
    assert_eq!((second, trips), (vec![true], 1));
    let learned: Vec<Vec<bool>> = std::iter::from_fn(|| link.garbler.poll_event().map(|GarblerEvent::Finished { garbler_outputs, .. }| garbler_outputs)).collect();
    assert_eq!(learned, vec![vec![false]], "the first computation's output, heard with the second request");
    assert_eq!(server_learns(&mut link), Some(vec![true]));
}

/// The authenticated mode's round trips from request to result, cold and warm: B's chunk of the
/// session's extension, answered by A's on direction 1, its input masks and the first round of
/// the segment's preprocessing, which needs nothing of B's; then the six crossing rounds, two a
/// round trip, B's first beside its input masks; and the tables — four in all for a circuit of
/// one segment, the base OTs of a cold connection folded into the first.
#[test]
fn an_authenticated_computation_of_one_segment_takes_four_round_trips() {
    let plaintext = value::parse_uint("0x00112233445566778899aabbccddeeff", 128).unwrap();
    let (mut link, upgrade) = connect(services());
    for connection in ["cold", "warm"] {
        let before = link.flights.len();
        link.evaluator.start_with("aes128", vec![], plaintext.clone(), Security::Authenticated).unwrap();
        let (event, trips) = link.until_event();
        let EvaluatorEvent::Finished(result) = event else { panic!("{connection}: {event:?}") };
        assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "FIPS-197's example");
        assert_eq!(trips, 4, "{connection}: request → result; flights {:?}", &link.flights[before..]);
    }
    assert_eq!(upgrade, 1);
}
