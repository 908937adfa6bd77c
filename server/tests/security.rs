//! A service's `security` on the real `garblet serve`: the catalog announces it, a request for
//! more than a service offers is refused, a service that offers the authenticated mode runs
//! computations in all three (each counted under its own), and a client that reports catching
//! the server cheating is counted.

mod common;

use common::{default_config, fips_block, RawClient, Server, FIPS197_KEYS, FIPS_CIPHERTEXT};
use garblet_circuits::value;
use garblet_core::protocol::{Catalog, ComputationResult, ComputeRequest, ErrorCode, EvaluatorEvent, EvaluatorSession, Frame, Phase, Security, SessionError};
use std::time::Duration;

/// One computation in `security` mode, run to its end as an honest evaluator would.
fn compute(raw: &mut RawClient, session: &mut EvaluatorSession, service: &str, inputs: Vec<bool>, security: Security) -> Result<ComputationResult, SessionError> {
    session.start_with(service, vec![], inputs, security)?;
    finish(raw, session)
}

/// The run the session has started, to its end.
fn finish(raw: &mut RawClient, session: &mut EvaluatorSession) -> Result<ComputationResult, SessionError> {
    loop {
        for frame in common::drain(session) {
            raw.send(frame);
        }
        if let Some(EvaluatorEvent::Finished(result)) = session.poll_event() {
            return Ok(*result);
        }
        let frame = raw.next_binary().expect("the connection closed mid-computation");
        session.handle(&frame)?;
    }
}

#[test]
fn the_default_offers_every_mode_for_aes128_and_hamming_and_refuses_a_protected_one_where_not_offered() {
    let server = Server::start_with(&default_config(), &FIPS197_KEYS);
    let catalog = Catalog::parse(&server.get("/services").1).unwrap();
    let security = |name: &str| catalog.service(name).unwrap().security;
    assert_eq!(security("aes128"), Security::Authenticated);
    assert_eq!(security("hamming"), Security::Authenticated);
    assert_eq!(security("aes192"), Security::Standard);

    // aes192 offers standard only: a cut-and-choose request is refused, typed, before anything
    // is garbled.
    let aes192 = catalog.service("aes192").unwrap().resolve(&[]).unwrap().circuit_id;
    let mut raw = RawClient::connect(&server.url());
    raw.hello();
    raw.send(Frame::Compute(ComputeRequest { service: "aes192".into(), params: vec![], circuit_id: aes192, evaluator_bits: 128, security: Security::CutAndChoose, phase: Default::default() }).encode());
    let want = SessionError::SecurityNotOffered { service: "aes192".into(), offered: Security::Standard, requested: Security::CutAndChoose };
    assert_eq!(raw.expect_error(), (ErrorCode::BadRequest as u16, want.to_string()));
    drop(raw);

    // A service that offers the authenticated mode serves every mode, on one connection: the
    // Bristol AES kept in memory, and the built-in Hamming distance built again for each pass.
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello();
    for security in Security::ALL {
        let result = compute(&mut raw, &mut session, "aes128", fips_block(), security).unwrap();
        assert_eq!((value::to_hex(&result.outputs[0].bits), result.security, result.recovered), (FIPS_CIPHERTEXT.to_string(), security, false));
    }
    let iris: Vec<bool> = (0..900).map(|i| i % 7 == 0).collect();
    let standard = compute(&mut raw, &mut session, "hamming", iris.clone(), Security::Standard).unwrap();
    for security in [Security::CutAndChoose, Security::Authenticated] {
        let protected = compute(&mut raw, &mut session, "hamming", iris.clone(), security).unwrap();
        assert_eq!((&protected.outputs, protected.security), (&standard.outputs, security));
    }
    // A preparation ahead is counted apart; the computation that uses it as a computation.
    session.prepare("aes128", vec![]).unwrap();
    assert_eq!(finish(&mut raw, &mut session).unwrap().phase, Phase::Prepare);
    let result = compute(&mut raw, &mut session, "aes128", fips_block(), Security::Authenticated).unwrap();
    assert_eq!((value::to_hex(&result.outputs[0].bits), result.phase), (FIPS_CIPHERTEXT.to_string(), Phase::Prepared { number: 0 }));
    drop(raw);
    server.wait_for_active(0, Duration::from_secs(10));
    let metrics = server.metrics();
    let count = |key: &str| metrics[key].as_u64();
    assert_eq!(
        (count("computations"), count("computations_standard"), count("computations_cut_and_choose"), count("computations_authenticated")),
        (Some(7), Some(2), Some(2), Some(3)),
        "{metrics}"
    );
    assert_eq!(metrics["preparations"], 1, "{metrics}");
    assert_eq!(metrics["sessions_failed"], 1, "the refused request's session only: {metrics}");
    let log = server.stop();
    for mode in ["cut-and-choose", "authenticated"] {
        assert!(log.contains(&format!("security=\"{mode}\"")) || log.contains(&format!("security={mode}")), "the log says each computation's mode: {log}");
    }
}

/// The library's AES (`aes128_bp`, 5,120 AND gates a block, the client choosing how many
/// blocks) in the authenticated mode under the default configuration: two blocks give FIPS-197's
/// ciphertext twice, run fresh and on a preparation; 20 blocks (102,400 AND gates, two segments)
/// give it twenty times, as in the standard mode.
#[test]
fn the_library_aes_runs_authenticated_fresh_prepared_and_over_several_segments() {
    let server = Server::start_with(&default_config(), &FIPS197_KEYS);
    let blocks = |n: u64| vec![("blocks".to_string(), n)];
    let fips_blocks = |n: usize| (0..n).flat_map(|_| fips_block()).collect::<Vec<bool>>();
    let fips_times = |n: usize| "0x".to_string() + &FIPS_CIPHERTEXT[2..].repeat(n);
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello();
    assert_eq!(session.catalog().unwrap().service("aes128_bp").unwrap().security, Security::Authenticated);
    session.start_with("aes128_bp", blocks(2), fips_blocks(2), Security::Authenticated).unwrap();
    let result = finish(&mut raw, &mut session).unwrap();
    assert_eq!((value::to_hex(&result.outputs[0].bits), result.security, result.evaluator.and_gates), (fips_times(2), Security::Authenticated, 10_240));
    session.prepare("aes128_bp", blocks(2)).unwrap();
    assert_eq!(finish(&mut raw, &mut session).unwrap().phase, Phase::Prepare);
    session.start_with("aes128_bp", blocks(2), fips_blocks(2), Security::Authenticated).unwrap();
    let result = finish(&mut raw, &mut session).unwrap();
    assert_eq!((value::to_hex(&result.outputs[0].bits), result.phase), (fips_times(2), Phase::Prepared { number: 0 }));
    for security in [Security::Standard, Security::Authenticated] {
        session.start_with("aes128_bp", blocks(20), fips_blocks(20), security).unwrap();
        let result = finish(&mut raw, &mut session).unwrap();
        assert_eq!((value::to_hex(&result.outputs[0].bits), result.security, result.evaluator.and_gates), (fips_times(20), security, 102_400));
    }
}

#[test]
fn a_client_that_reports_cheating_is_counted_as_a_failed_session() {
    let server = Server::start(&common::honest_services(1_000_000));
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello();
    session.abort(ErrorCode::CheatingDetected, "check circuit 3: its tables are not the committed ones");
    raw.send(session.poll_transmit().unwrap().expect("an Error frame for the server"));
    let _ = raw.ws.close(None);
    drop(raw);
    server.wait_for_active(0, Duration::from_secs(10));
    let metrics = server.metrics();
    assert_eq!(metrics["cheating_reports"], 1, "{metrics}");
    assert_eq!((metrics["sessions_failed"].as_u64(), metrics["sessions_cancelled"].as_u64()), (Some(1), Some(0)), "not a cancelled run: {metrics}");
    let (_, text) = server.get("/metrics");
    assert!(text.lines().any(|l| l == "garblet_cheating_reports_total 1"), "{text}");
    let log = server.stop();
    assert!(log.contains("caught the server cheating") && log.contains("check circuit 3"), "{log}");
}
