//! What a deployment behind a reverse proxy relies on (deploy/): the client address a trusted
//! proxy forwards counts for the per-address limits and the logs, a forwarded header from
//! anyone else counts for nothing; and a TLS certificate replaced on disk is picked up on
//! SIGHUP without a restart. The proxy and its clients are other loopback addresses (127.0.0.2
//! and up), which the server sees as other hosts. nginx itself: e2e/tests/nginx.spec.ts.

mod common;

use common::{connect_from, fips_block, temp_path, RawClient, Server, FIPS_CIPHERTEXT};
use garblet_circuits::value;
use garblet_core::protocol::ErrorCode;
use garblet_server::client::{Client, ConnectOptions};
use std::time::{Duration, Instant};
use tungstenite::client::IntoClientRequest;

const SERVICES: &str = r#"
[[service]]
name = "aes128"
circuit = { bristol = "aes_128" }
inputs = [{ party = "garbler", encoding = "bytes", value = { hex = "000102030405060708090a0b0c0d0e0f" } }, { party = "evaluator", encoding = "bytes" }]
"#;

const PROXY: &str = "127.0.0.2";
const STRANGER: &str = "127.0.0.3";

/// A WebSocket from the loopback address `local`, with an `X-Forwarded-For` header.
fn connect(server: &Server, local: &str, forwarded_for: &str) -> RawClient {
    let mut request = server.url().into_client_request().unwrap();
    request.headers_mut().insert("X-Forwarded-For", forwarded_for.parse().unwrap());
    let tcp = connect_from(local, &server.addr);
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    match tungstenite::client::client(request, tcp) {
        Ok((ws, _)) => RawClient { ws },
        Err(e) => panic!("the upgrade failed: {e}"),
    }
}

/// Waits until the server's log contains `text`.
fn wait_for_log(server: &Server, text: &str) {
    let start = Instant::now();
    while !server.stderr().contains(text) {
        assert!(start.elapsed() < Duration::from_secs(20), "the log never said {text:?}:\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_trusted_proxys_forwarded_address_is_the_client_for_limits_and_logs() {
    let server = Server::start(&format!("[server]\ntrusted_proxies = [\"{PROXY}\"]\n[limits]\nmax_sessions_per_address = 1\n{SERVICES}"));

    // Through the proxy, client 203.0.113.1 holds its one session…
    let _first = connect(&server, PROXY, "203.0.113.1");
    server.wait_for_active(1, Duration::from_secs(10));
    // …so a second from it is refused, also when it puts another address left of its own
    // (a client's own X-Forwarded-For, which the proxy appends to)…
    for header in ["203.0.113.1", "198.51.100.99, 203.0.113.1"] {
        let (code, message) = connect(&server, PROXY, header).expect_error();
        assert_eq!(code, ErrorCode::Busy as u16, "{header}: {message}");
        assert!(message.contains("sessions"), "{message}");
    }
    // …while another client behind the same proxy is let in.
    let mut other = connect(&server, PROXY, "203.0.113.2");
    other.hello();
    server.wait_for_active(2, Duration::from_secs(10));

    // A peer that is not a trusted proxy is itself the client, whatever it forwards.
    let _stranger = connect(&server, STRANGER, "192.0.2.1");
    server.wait_for_active(3, Duration::from_secs(10));
    let (code, _) = connect(&server, STRANGER, "192.0.2.2").expect_error();
    assert_eq!(code, ErrorCode::Busy as u16, "a forged X-Forwarded-For does not lift the limit");

    let log = server.stderr();
    assert!(log.contains("peer=203.0.113.1 via 127.0.0.2:"), "{log}");
    assert!(log.contains("peer=203.0.113.2 via 127.0.0.2:"), "{log}");
    assert!(log.contains("peer=127.0.0.3:"), "{log}");
    for forged in ["198.51.100.99", "192.0.2.1", "192.0.2.2"] {
        assert!(!log.contains(forged), "{forged} in the log:\n{log}");
    }
}

#[test]
fn without_trusted_proxies_the_header_is_ignored() {
    let server = Server::start(&format!("[limits]\nmax_sessions_per_address = 1\n{SERVICES}"));
    let _first = connect(&server, PROXY, "203.0.113.1");
    server.wait_for_active(1, Duration::from_secs(10));
    let (code, _) = connect(&server, PROXY, "203.0.113.2").expect_error();
    assert_eq!(code, ErrorCode::Busy as u16);
    let log = server.stderr();
    assert!(log.contains("peer=127.0.0.2:") && !log.contains("203.0.113"), "{log}");
}

/// A self-signed certificate for localhost, written as PEM files; returns its certificate text.
fn write_certificate(cert: &std::path::Path, key: &std::path::Path) -> String {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(cert, certified.cert.pem()).unwrap();
    std::fs::write(key, certified.signing_key.serialize_pem()).unwrap();
    certified.cert.pem()
}

fn trusting(ca: &str) -> ConnectOptions {
    let path = temp_path("ca.pem");
    std::fs::write(&path, ca).unwrap();
    ConnectOptions { ca_cert: Some(path), ..ConnectOptions::default() }
}

fn sighup(server: &Server) {
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGHUP) };
}

fn aes(client: &mut Client) {
    let result = client.compute("aes128", vec![], fips_block()).unwrap();
    assert_eq!(value::to_hex(&result.outputs[0].bits), FIPS_CIPHERTEXT);
}

#[test]
fn sighup_reloads_the_tls_certificate_without_a_restart() {
    let (cert, key) = (temp_path("cert.pem"), temp_path("key.pem"));
    let old = write_certificate(&cert, &key);
    let server = Server::start(&format!("[server]\ntls = {{ cert = \"{}\", key = \"{}\" }}\n{SERVICES}", cert.display(), key.display()));
    let url = format!("wss://localhost:{}/", server.addr.rsplit(':').next().unwrap());
    let mut running = Client::connect(&url, &trusting(&old)).unwrap();
    aes(&mut running);

    // A renewal: new files, then SIGHUP.
    let new = write_certificate(&cert, &key);
    sighup(&server);
    wait_for_log(&server, "TLS certificate reloaded");
    let mut renewed = Client::connect(&url, &trusting(&new)).expect("new connections get the new certificate");
    aes(&mut renewed);
    match Client::connect(&url, &trusting(&old)) {
        Err(e) => assert!(e.to_string().to_lowercase().contains("certificate"), "{e}"),
        Ok(_) => panic!("the old certificate is still served"),
    }
    // The session that was open before the reload goes on.
    aes(&mut running);

    // A half-written renewal (a new key with the old certificate) is refused; the certificate
    // in use stays.
    let other = rcgen::KeyPair::generate().unwrap();
    std::fs::write(&key, other.serialize_pem()).unwrap();
    sighup(&server);
    wait_for_log(&server, "the TLS certificate was not reloaded");
    aes(&mut Client::connect(&url, &trusting(&new)).unwrap());

    running.close();
    renewed.close();
    let log = server.stop();
    assert_eq!(log.matches("listening").count(), 1, "one start, no restart:\n{log}");
    let _ = (std::fs::remove_file(cert), std::fs::remove_file(key));
}
