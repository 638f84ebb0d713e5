//! Serving HTTPS directly (`ferry serve --tls-cert FILE --tls-key FILE`), for deployments
//! without a proxy in front. Behind a proxy, ferry serves plain HTTP on loopback instead.
//!
//! [`TlsListener`] plugs into `transport::http::serve`. Handshakes run in their own tasks, each bounded
//! in time, so a client that opens a connection and stalls does not hold up the others.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// Longest a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Handshakes in progress at most; further connections wait to be accepted.
const MAX_HANDSHAKES: usize = 256;
/// The largest certificate chain or key file read (as every file, by `file::read`).
const MAX_PEM_BYTES: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificate chain {path}: {message}")]
    Certificates { path: String, message: String },
    #[error("{path} holds no certificate")]
    NoCertificate { path: String },
    #[error("cannot read the private key {path}: {message}")]
    Key { path: String, message: String },
    #[error("the certificate and key cannot be used: {0}")]
    Config(#[from] rustls::Error),
}

/// The TLS configuration for a PEM certificate chain (leaf first) and its PEM private key
/// (PKCS#8, PKCS#1 or SEC1), offering HTTP/2 and HTTP/1.1.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let cert_path = cert.display().to_string();
    let certificates = crate::file::read(cert, MAX_PEM_BYTES)
        .map_err(|error| error.to_string())
        .and_then(|pem| {
            CertificateDer::pem_slice_iter(&pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| error.to_string())
        })
        .map_err(|message| TlsError::Certificates {
            path: cert_path.clone(),
            message,
        })?;
    if certificates.is_empty() {
        return Err(TlsError::NoCertificate { path: cert_path });
    }
    let private_key = crate::file::read(key, MAX_PEM_BYTES)
        .map_err(|error| error.to_string())
        .and_then(|pem| PrivateKeyDer::from_pem_slice(&pem).map_err(|error| error.to_string()))
        .map_err(|message| TlsError::Key {
            path: key.display().to_string(),
            message,
        })?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certificates, private_key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A listener whose connections are TLS sessions; give it to `transport::http::serve` in place of the
/// plain listener it wraps.
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    acceptor: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new<L>(listener: L, config: Arc<ServerConfig>) -> io::Result<TlsListener>
    where
        L: axum::serve::Listener<Io = TcpStream, Addr = SocketAddr>,
    {
        let local = listener.local_addr()?;
        let (sender, ready) = mpsc::channel(MAX_HANDSHAKES);
        let acceptor = tokio::spawn(accept_loop(listener, TlsAcceptor::from(config), sender));
        Ok(TlsListener {
            local,
            ready,
            acceptor,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accept loop only ends when the listener is dropped: wait forever, as a
            // listener with no more connections does.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

async fn accept_loop<L>(
    mut listener: L,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) where
    L: axum::serve::Listener<Io = TcpStream, Addr = SocketAddr>,
{
    let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        let Ok(permit) = handshakes.clone().acquire_owned().await else {
            return;
        };
        // The listener waits out accept errors (no file descriptors left, say) itself.
        let (stream, peer) = listener.accept().await;
        let acceptor = acceptor.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            let _permit = permit;
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(session)) => {
                    let _ = ready.send((session, peer)).await;
                }
                Ok(Err(error)) => tracing::debug!(%peer, %error, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}
