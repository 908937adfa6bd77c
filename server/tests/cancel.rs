//! `GET /metrics` tells a cancelled run from a failed one: a client that ends its session with an
//! `Error` frame (what the SDK sends when the user cancels) is counted in `sessions_cancelled`;
//! a client that just vanishes mid-computation is still a failure.

mod common;

use common::{drain, RawClient, Server};
use garblet_core::protocol::ErrorCode;
use std::time::Duration;

const CONFIG: &str = r#"
[[service]]
name = "synthetic"
circuit = { builtin = "synthetic", params = { width = 512 }, client_params = { and_gates = { max = 1_000_000_000 } } }
garbler_inputs = { garbler = { hex = "0x0" } }
"#;

/// A client that starts a long computation and reads a little of it.
fn streaming(server: &Server) -> (RawClient, garblet_core::protocol::EvaluatorSession) {
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello();
    session.start("synthetic", vec![("and_gates".into(), 50_000_000)], vec![false; 256]).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    for _ in 0..5 {
        raw.next_binary().unwrap();
    }
    (raw, session)
}

#[test]
fn a_cancelled_run_counts_as_cancelled_not_failed() {
    let server = Server::start(CONFIG);

    // Cancelled: the client says so, then closes.
    let (mut raw, mut session) = streaming(&server);
    session.abort(ErrorCode::Cancelled, "cancelled by the user");
    let frame = session.poll_transmit().unwrap().expect("an Error frame for the server");
    raw.send(frame);
    let _ = raw.ws.close(None);
    drop(raw);
    server.wait_for_active(0, Duration::from_secs(10));
    let metrics = server.metrics();
    assert_eq!(metrics["sessions_cancelled"], 1, "{metrics}");
    assert_eq!(metrics["sessions_failed"], 0, "{metrics}");

    // Vanished: the connection drops in the middle of the stream.
    let (raw, _session) = streaming(&server);
    raw.ws.get_ref().shutdown(std::net::Shutdown::Both).unwrap();
    drop(raw);
    server.wait_for_active(0, Duration::from_secs(10));
    let metrics = server.metrics();
    assert_eq!(metrics["sessions_cancelled"], 1, "{metrics}");
    assert_eq!(metrics["sessions_failed"], 1, "{metrics}");
    let log = server.stop();
    assert!(log.contains("session cancelled by the client") && log.contains("cancelled by the user"), "{log}");
}
