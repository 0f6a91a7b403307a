//! HTTPS served directly (`serve --tls-cert <PEM> --tls-key <PEM>`): the certificate chain
//! and its private key are read once at start-up into a rustls configuration (the `ring`
//! provider, named here and the only one built: no second crypto library such as
//! aws-lc), and every connection the API's listener accepts is a TLS handshake first, then
//! HTTP/1.1 (ALPN `http/1.1`; HTTP/2 is off, as on plain HTTP).
//!
//! Every way the files can be wrong is refused here, before anything is opened or
//! served, with a message naming the flag and the file: unreadable, no PEM certificate,
//! no PEM private key, a key rustls cannot use, a key that is not the certificate's.
//!
//! A request that came over such a connection carries `DirectTls` (a request extension):
//! `http::client_address` decides from it (or a trusted proxy's word) that the request
//! came over HTTPS, and `http::security_headers` sends `Strict-Transport-Security`.

use std::path::Path;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A request extension: the request came over a TLS connection this process terminated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectTls;

/// The certificate and key the API's listener serves HTTPS with.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls(..)")
    }
}

impl Tls {
    /// Reads `cert` (`--tls-cert`: the certificate, then any intermediates, PEM) and `key`
    /// (`--tls-key`: its private key, PEM: PKCS#8, PKCS#1 RSA or SEC1 EC).
    pub fn load(cert: &Path, key: &Path) -> anyhow::Result<Self> {
        let chain = read_chain(cert)?;
        let private_key = read_key(key)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| anyhow::anyhow!("TLS: {e}"))?
            .with_no_client_auth();
        let mut config = builder
            .with_single_cert(chain, private_key)
            .map_err(|e| refused(cert, key, &e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    pub(super) fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}

fn read_file(flag: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot read it: {e}", path.display()))
}

fn read_chain(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let text = read_file("--tls-cert", path)?;
    let chain = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| not_pem("--tls-cert", path, &e))?;
    if chain.is_empty() {
        anyhow::bail!(
            "--tls-cert {}: no certificate in it (expected PEM, a \
             \"-----BEGIN CERTIFICATE-----\" block: the server's certificate, then any \
             intermediates)",
            path.display()
        );
    }
    Ok(chain)
}

fn read_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    let text = read_file("--tls-key", path)?;
    match PrivateKeyDer::from_pem_slice(&text) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) => anyhow::bail!(
            "--tls-key {}: no private key in it (expected PEM, a \"-----BEGIN PRIVATE \
             KEY-----\", \"RSA PRIVATE KEY\" or \"EC PRIVATE KEY\" block)",
            path.display()
        ),
        Err(e) => Err(not_pem("--tls-key", path, &e)),
    }
}

fn not_pem(flag: &str, path: &Path, error: &pem::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "{flag} {}: not a readable PEM file: {error}",
        path.display()
    )
}

/// What rustls refused in a chain and key that both parsed as PEM.
fn refused(cert: &Path, key: &Path, error: &rustls::Error) -> anyhow::Error {
    let (cert, key) = (cert.display(), key.display());
    match error {
        rustls::Error::InconsistentKeys(_) => anyhow::anyhow!(
            "--tls-key {key} is not the private key of the certificate in --tls-cert {cert}"
        ),
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => {
            anyhow::anyhow!("--tls-cert {cert}: the certificate cannot be used: {error}")
        }
        _ => anyhow::anyhow!("--tls-key {key}: the private key cannot be used: {error}"),
    }
}
