//! TLS for `wss://`: rustls (ring provider) over the same port and routes as plain TCP.

use super::config::{Config, TlsConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// An acceptor for the configured certificate chain and key.
pub fn acceptor(config: &Config, tls: &TlsConfig) -> Result<TlsAcceptor, String> {
    let (cert_path, key_path) = (config.path(&tls.cert), config.path(&tls.key));
    let chain = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", cert_path.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no certificate in the file", cert_path.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| format!("{}: {e}", key_path.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| format!("TLS configuration: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(server)))
}
