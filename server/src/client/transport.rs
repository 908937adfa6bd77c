//! The client's connection: a `ws://` or `wss://` URL to a blocking WebSocket, over TCP or TLS
//! (rustls, with the web's root certificates plus an optional extra CA for test servers).

use super::ClientError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tungstenite::handshake::HandshakeError;
use tungstenite::http::Uri;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::WebSocket;

/// The largest message accepted from a server (its frames are far smaller).
const MAX_MESSAGE_BYTES: usize = 64 << 20;

#[derive(Clone, Debug)]
pub struct ConnectOptions {
    pub connect_timeout: Duration,
    /// The longest wait for any message from the server.
    pub read_timeout: Duration,
    /// A PEM CA certificate to trust besides the web's roots (a test server's own CA).
    pub ca_cert: Option<PathBuf>,
    /// The credit window to ask for: garbled bytes the server may send ahead of evaluation.
    pub window: u32,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions { connect_timeout: Duration::from_secs(10), read_timeout: Duration::from_secs(120), ca_cert: None, window: 4 << 20 }
    }
}

/// TCP or TLS.
pub enum Transport {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
        }
    }
}

/// Opens a WebSocket to `url`.
pub fn connect(url: &str, options: &ConnectOptions) -> Result<WebSocket<Transport>, ClientError> {
    let bad_url = |reason: &str| ClientError::Url { url: url.into(), reason: reason.into() };
    let uri: Uri = url.parse().map_err(|_| bad_url("not a URL"))?;
    let tls = match uri.scheme_str() {
        Some("ws") => false,
        Some("wss") => true,
        _ => return Err(bad_url("use ws://HOST:PORT or wss://HOST:PORT")),
    };
    let host = uri.host().ok_or_else(|| bad_url("no host"))?;
    // IPv6 literals come bracketed in URLs, bare in socket addresses and TLS names.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let tcp = connect_tcp(host, port, options).map_err(|source| ClientError::Connect { url: url.into(), source })?;
    let transport = if tls {
        let name = ServerName::try_from(host.to_string()).map_err(|_| bad_url("the host is not a valid TLS server name"))?;
        let connection = rustls::ClientConnection::new(Arc::new(tls_config(options)?), name).map_err(|e| ClientError::Tls(e.to_string()))?;
        Transport::Tls(Box::new(rustls::StreamOwned::new(connection, tcp)))
    } else {
        Transport::Plain(tcp)
    };
    let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE_BYTES)).max_frame_size(Some(MAX_MESSAGE_BYTES));
    match tungstenite::client::client_with_config(url, transport, Some(config)) {
        Ok((ws, _response)) => Ok(ws),
        Err(HandshakeError::Failure(e)) => Err(ClientError::Handshake { url: url.into(), reason: describe_handshake_error(e) }),
        Err(HandshakeError::Interrupted(_)) => Err(ClientError::Handshake { url: url.into(), reason: "interrupted".into() }),
    }
}

fn connect_tcp(host: &str, port: u16, options: &ConnectOptions) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address");
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, options.connect_timeout) {
            Ok(tcp) => {
                // Credit frames are small and urgent: no Nagle delay.
                tcp.set_nodelay(true)?;
                tcp.set_read_timeout(Some(options.read_timeout))?;
                return Ok(tcp);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn tls_config(options: &ConnectOptions) -> Result<rustls::ClientConfig, ClientError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &options.ca_cert {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| ClientError::Tls(format!("{}: {e}", path.display())))?;
        for cert in certs {
            roots.add(cert).map_err(|e| ClientError::Tls(format!("{}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

fn describe_handshake_error(e: tungstenite::Error) -> String {
    match e {
        tungstenite::Error::Http(response) => {
            let status = response.status();
            let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            format!("HTTP {} {}{}", status.as_u16(), status.canonical_reason().unwrap_or(""), if body.is_empty() { String::new() } else { format!(": {body}") })
        }
        other => other.to_string(),
    }
}
