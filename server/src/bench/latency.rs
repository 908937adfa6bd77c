//! The latency of a small computation, for `bench session`: private AES of one block (the
//! `aes128` service, a Bristol circuit of 6,400 ANDs), cold and warm.
//!
//! * `aes128_cold_ms`: from TCP established to the result — the WebSocket upgrade, the hellos
//!   (with the base OTs), the request and its result. The clock starts once the TCP connection
//!   is made: the relay does not delay the TCP handshake, and a real `wss://` connection adds
//!   its TCP and TLS round trips before this, whatever the protocol does.
//! * `aes128_warm_ms`: a second computation on the same connection, request to result.
//! * `rtt_ms`: the link's round-trip time as configured (0 on loopback), and
//!   `rtt_measured_ms`, a WebSocket ping's round trip on the same connection.
//!
//! The protocol takes two round trips cold (the upgrade, then the request's round with the
//! base OTs folded in) and one warm (`wasm-core/tests/round_trips.rs` counts them); the rest is
//! computation and transfer. Each figure is the median of [`REPETITIONS`] connections, after
//! one that is not counted (the server's first session faults its pages in).

use super::report::Report;
use crate::client::{Client, ConnectOptions};
use garblet_circuits::value;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The service `bench session`'s server offers for this measurement: the bundled Bristol AES
/// with the key of FIPS-197's example, so that every result can be checked.
pub const SERVICE_CONFIG: &str = r#"
[[service]]
name = "aes128"
circuit = { bristol = "aes_128" }
inputs = [
  { name = "key", party = "garbler", encoding = "bytes", value = { hex = "000102030405060708090a0b0c0d0e0f" } },
  { name = "plaintext", party = "evaluator", encoding = "bytes" },
]
outputs = [{ name = "ciphertext", reveal = "evaluator" }]
"#;

/// FIPS-197, Appendix C.1.
const PLAINTEXT: &str = "0x00112233445566778899aabbccddeeff";
const CIPHERTEXT: &str = "0x69c4e0d86a7b0430d8cdb78070b4c55a";

/// Connections measured (each gives one cold, one warm and one ping figure).
pub const REPETITIONS: usize = 9;

/// The medians, in milliseconds.
pub struct Latency {
    pub cold_ms: f64,
    pub warm_ms: f64,
    pub rtt_measured_ms: f64,
}

impl Latency {
    /// Adds the figures to `report`, with the link's configured round trip.
    pub fn report(&self, report: &mut Report, rtt: Duration) {
        let rtt_ms = rtt.as_secs_f64() * 1e3;
        report
            .set("aes128_cold_ms", self.cold_ms)
            .set("aes128_warm_ms", self.warm_ms)
            .set("rtt_ms", rtt_ms)
            .set("rtt_measured_ms", self.rtt_measured_ms)
            .set("aes128_cold_over_rtt_ms", self.cold_ms - 2.0 * rtt_ms)
            .set("aes128_warm_over_rtt_ms", self.warm_ms - rtt_ms);
    }
}

/// Measures at `addr` (host:port of the server, or of a relay in front of it).
pub fn measure(addr: &str, connect: &ConnectOptions) -> Result<Latency, String> {
    let url = format!("ws://{addr}/");
    let plaintext = value::parse_uint(PLAINTEXT, 128).map_err(|e| e.to_string())?;
    let (mut cold, mut warm, mut ping) = (Vec::new(), Vec::new(), Vec::new());
    for repetition in 0..=REPETITIONS {
        let tcp = TcpStream::connect(addr).map_err(|e| format!("connecting to {addr}: {e}"))?;
        // From TCP established.
        let start = Instant::now();
        let mut client = Client::connect_over(tcp, &url, connect).map_err(|e| e.to_string())?;
        compute(&mut client, &plaintext)?;
        let cold_ms = start.elapsed().as_secs_f64() * 1e3;
        let rtt = client.ping().map_err(|e| e.to_string())?;
        let start = Instant::now();
        compute(&mut client, &plaintext)?;
        let warm_ms = start.elapsed().as_secs_f64() * 1e3;
        client.close();
        if repetition > 0 {
            cold.push(cold_ms);
            warm.push(warm_ms);
            ping.push(rtt.as_secs_f64() * 1e3);
        }
    }
    Ok(Latency { cold_ms: median(cold), warm_ms: median(warm), rtt_measured_ms: median(ping) })
}

/// One block, its result checked.
fn compute(client: &mut Client, plaintext: &[bool]) -> Result<(), String> {
    let result = client.compute("aes128", vec![], plaintext.to_vec()).map_err(|e| e.to_string())?;
    let got = result.outputs.first().map(|o| value::to_hex(&o.bits)).unwrap_or_default();
    if got != CIPHERTEXT {
        return Err(format!("aes128: the ciphertext is {got}, not {CIPHERTEXT}"));
    }
    Ok(())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
