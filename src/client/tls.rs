//! The TLS sessions HTTPS exchanges run in. A server's certificate is checked against the
//! platform's trust store, by the same verifier as before ferry spoke HTTPS itself
//! (`rustls-platform-verifier`: the system's certificates, or those `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` name; WebPKI path building, the name checked), over TLS 1.2 or 1.3 with
//! aws-lc-rs. ALPN offers `http/1.1` only, since [`super::wire`] speaks nothing else.
//! Sessions are resumed from rustls's in-memory cache, shared by every connection made
//! with one [`Tls`].

use std::io;
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use rustls_platform_verifier::BuilderVerifierExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// How ferry opens TLS sessions: whom it trusts, and the session cache. Cheap to clone.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot set up TLS for calling out: {0}")]
    Config(#[from] rustls::Error),
    #[error("cannot read the trusted certificates: {0}")]
    Roots(String),
}

impl Tls {
    /// Trusting the platform's store. Fails when it holds no certificate ferry can read.
    pub fn platform() -> Result<Tls, TlsError> {
        let config = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(rustls::ALL_VERSIONS)?
            .with_platform_verifier()?
            .with_no_client_auth();
        Ok(Tls::from_config(config))
    }

    /// Trusting only the PEM certificates in `pem` (a private CA, as the tests use).
    pub fn with_roots(pem: &[u8]) -> Result<Tls, TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(pem) {
            roots.add(certificate.map_err(|error| TlsError::Roots(error.to_string()))?)?;
        }
        if roots.is_empty() {
            return Err(TlsError::Roots("no certificate found".to_owned()));
        }
        let config = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(rustls::ALL_VERSIONS)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Tls::from_config(config))
    }

    fn from_config(mut config: ClientConfig) -> Tls {
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Tls {
            connector: TlsConnector::from(Arc::new(config)),
        }
    }

    /// A TLS session with `host` (a name, or an IP address, bracketed or not) over `stream`,
    /// its certificate checked for that name.
    pub(crate) async fn connect(
        &self,
        host: &str,
        stream: TcpStream,
    ) -> io::Result<TlsStream<TcpStream>> {
        let bare = host
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(host);
        let name = ServerName::try_from(bare.to_owned()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{bare} is not a name a certificate can be checked for"),
            )
        })?;
        self.connector.connect(name, stream).await
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}
