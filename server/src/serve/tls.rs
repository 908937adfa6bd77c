//! TLS for `wss://`: rustls (ring provider) over the same port and routes as plain TCP.
//!
//! The certificate can be replaced without a restart: on SIGHUP the server reads the files
//! again ([`Certificate::reload`]); new handshakes get the new certificate, running sessions
//! keep their connection. A chain and key that cannot be read or do not match are refused with
//! a warning, and the old certificate stays in use.

use super::config::{Config, TlsConfig};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use tokio_rustls::TlsAcceptor;

/// The configured certificate chain and key, as last read.
#[derive(Debug)]
pub struct Certificate {
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Certificate {
    fn load(cert_path: &PathBuf, key_path: &PathBuf, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
        let chain = CertificateDer::pem_file_iter(cert_path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("{}: {e}", cert_path.display()))?;
        if chain.is_empty() {
            return Err(format!("{}: no certificate in the file", cert_path.display()));
        }
        let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| format!("{}: {e}", key_path.display()))?;
        // Also checks that the key is the certificate's: a renewal caught half-written is refused.
        CertifiedKey::from_der(chain, key, provider).map_err(|e| format!("{} with {}: {e}", cert_path.display(), key_path.display()))
    }

    /// Reads the files again and uses them for new handshakes; on an error the old
    /// certificate stays.
    pub fn reload(&self) -> Result<(), String> {
        let key = Self::load(&self.cert_path, &self.key_path, &self.provider)?;
        *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(key);
        Ok(())
    }
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone())
    }
}

/// An acceptor for the configured certificate chain and key, and the certificate, to reload.
pub fn acceptor(config: &Config, tls: &TlsConfig) -> Result<(TlsAcceptor, Arc<Certificate>), String> {
    let (cert_path, key_path) = (config.path(&tls.cert), config.path(&tls.key));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = Certificate::load(&cert_path, &key_path, &provider)?;
    let certificate = Arc::new(Certificate { cert_path, key_path, provider: provider.clone(), current: RwLock::new(Arc::new(key)) });
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_no_client_auth().with_cert_resolver(certificate.clone()))
        .map_err(|e| format!("TLS configuration: {e}"))?;
    Ok((TlsAcceptor::from(Arc::new(server)), certificate))
}
