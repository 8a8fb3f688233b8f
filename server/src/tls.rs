//! TLS for the RESP and HTTP ports (rustls, the `aws-lc-rs` provider): a certificate chain and
//! its private key, both PEM files. Errors name the file and what is wrong with it.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

/// How long a client has to complete its TLS handshake before it is dropped.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The server's TLS configuration from `cert` (PEM: the certificate, then its chain) and `key`
/// (PEM: PKCS#8, PKCS#1 or SEC1).
pub fn load(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("{}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no PEM certificate in the file", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: no PEM private key ({e})", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::aws_lc_rs::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("{}: the key does not fit the certificate ({e})", cert.display()))?;
    Ok(Arc::new(config))
}

/// Completes the TLS handshake of `stream` from `peer` within `HANDSHAKE_TIMEOUT`; `None` (and a
/// log line) when it fails or times out.
pub async fn handshake(
    acceptor: &tokio_rustls::TlsAcceptor,
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
) -> Option<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(e)) => {
            tracing::info!(%peer, error = %e, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::info!(%peer, "TLS handshake timed out");
            None
        }
    }
}

/// An HTTPS listener for axum: a task accepts TCP connections and runs each handshake in a task
/// of its own (under `HANDSHAKE_TIMEOUT`), so a slow client never holds up the others; `accept`
/// hands out the connections whose handshake is done.
pub struct TlsListener {
    done: tokio::sync::mpsc::Receiver<(tokio_rustls::server::TlsStream<tokio::net::TcpStream>, std::net::SocketAddr)>,
    addr: std::net::SocketAddr,
}

impl TlsListener {
    /// Serves TLS with `config` on the connections `tcp` accepts.
    pub fn new(tcp: tokio::net::TcpListener, config: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let addr = tcp.local_addr()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let (tx, done) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of descriptors and the like: wait a little rather than spin.
                        tracing::warn!(error = %e, "accepting an HTTPS connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let _ = stream.set_nodelay(true);
                    if let Some(tls) = handshake(&acceptor, stream, peer).await {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { done, addr })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.done.recv().await {
            Some(connection) => connection,
            // The accepting task ended (it does not while the server runs): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
