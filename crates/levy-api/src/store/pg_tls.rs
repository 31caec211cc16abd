//! TLS to PostgreSQL, with rustls: libpq's `sslmode` (`disable`, `prefer`, `require`,
//! `verify-ca`, `verify-full`) and `sslrootcert`, read from a connection URL's query or from
//! `key=value` pairs. tokio-postgres reads only `disable`, `prefer` and `require`, and no
//! `sslrootcert`, so both are taken out of the string here and the rest is left to it.
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | absent, `disable` | no | — |
//! | `prefer` | when the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert`, checked as `verify-ca` (as libpq does) |
//! | `verify-ca` | always | signed by a CA of `sslrootcert` |
//! | `verify-full` | always | signed by a CA of `sslrootcert`, and issued for the host connected to |
//!
//! `sslrootcert` is a PEM file of CA certificates, or `system` for the system's bundle
//! (`$SSL_CERT_FILE`, else the usual places of Debian, Red Hat and Alpine). Without it,
//! `verify-ca` and `verify-full` are refused: the system's CAs vouch for public names,
//! rarely for a database's.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::location::{is_key_value, parse_pairs, quote};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SslMode {
    /// No TLS (also when `sslmode` is not given, as levy connected before it had TLS).
    Disable,
    /// TLS when the server offers it; the certificate is not checked.
    Prefer,
    /// TLS always; the certificate is not checked (unless `sslrootcert` is given).
    Require,
    /// TLS always; the certificate must chain to a CA of `sslrootcert`.
    VerifyCa,
    /// As [`SslMode::VerifyCa`], and the certificate must name the host.
    VerifyFull,
}

/// A connection string read: tokio-postgres's configuration and the TLS to connect with.
pub(super) struct Connection {
    /// The configuration (its `ssl_mode` set from `sslmode`).
    pub config: tokio_postgres::Config,
    /// The TLS connector; `None` for no TLS.
    pub tls: Option<MakeRustlsConnect>,
}

/// Reads a connection string (URL or `key=value` pairs). The error says what is wrong
/// without repeating the string (which may hold a password).
pub(super) fn connection(s: &str) -> Result<Connection, String> {
    let (rest, mode, root) = take_ssl_params(s)?;
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e| format!("not a PostgreSQL connection string: {e}"))?;
    let mode = match mode.as_deref() {
        None | Some("disable") => SslMode::Disable,
        Some("allow") | Some("prefer") => SslMode::Prefer,
        Some("require") if root.is_some() => SslMode::VerifyCa,
        Some("require") => SslMode::Require,
        Some("verify-ca") => SslMode::VerifyCa,
        Some("verify-full") => SslMode::VerifyFull,
        Some(other) => {
            return Err(format!(
                "sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full"
            ))
        }
    };
    config.ssl_mode(match mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        _ => tokio_postgres::config::SslMode::Require,
    });
    let tls = match mode {
        SslMode::Disable => None,
        _ => Some(MakeRustlsConnect::new(client_config(
            mode,
            root.as_deref(),
        )?)),
    };
    Ok(Connection { config, tls })
}

/// The string without `sslmode` and `sslrootcert`, and their values.
type SslParams = (String, Option<String>, Option<String>);

fn take_ssl_params(s: &str) -> Result<SslParams, String> {
    let (mut mode, mut root) = (None, None);
    if is_key_value(s) {
        let mut kept = Vec::new();
        for (k, v) in parse_pairs(s)? {
            match k.as_str() {
                "sslmode" => mode = Some(v),
                "sslrootcert" => root = Some(v),
                _ => kept.push(format!("{k}={}", quote(&v))),
            }
        }
        return Ok((kept.join(" "), mode, root));
    }
    let Some((head, query)) = s.split_once('?') else {
        return Ok((s.to_string(), None, None));
    };
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let decoded = || {
            percent_encoding::percent_decode_str(v)
                .decode_utf8()
                .map(|c| c.into_owned())
                .map_err(|_| format!("the value of {k} is not UTF-8"))
        };
        match k {
            "sslmode" => mode = Some(decoded()?),
            "sslrootcert" => root = Some(decoded()?),
            _ => kept.push(part),
        }
    }
    let rest = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok((rest, mode, root))
}

/// The rustls configuration of a mode, with the CAs of `root` when given.
fn client_config(mode: SslMode, root: Option<&str>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = match (mode, root) {
        (SslMode::Disable | SslMode::Prefer | SslMode::Require, None) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
            .with_no_client_auth(),
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(
                "sslmode=verify-ca and verify-full need sslrootcert=FILE (the PEM certificate of the CA that signed the server's), or sslrootcert=system"
                    .to_string(),
            )
        }
        (SslMode::VerifyFull, Some(root)) => {
            builder.with_root_certificates(roots(root)?).with_no_client_auth()
        }
        (_, Some(root)) => {
            let full = WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(root)?),
                Arc::clone(&provider),
            )
            .build()
            .map_err(|e| format!("sslrootcert: {e}"))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyName(full)))
                .with_no_client_auth()
        }
    };
    Ok(config)
}

/// The CA certificates of `sslrootcert`: a PEM file, or `system`.
fn roots(root: &str) -> Result<RootCertStore, String> {
    let path = if root == "system" {
        let candidates = [
            std::env::var("SSL_CERT_FILE").unwrap_or_default(),
            "/etc/ssl/certs/ca-certificates.crt".to_string(),
            "/etc/pki/tls/certs/ca-bundle.crt".to_string(),
            "/etc/ssl/cert.pem".to_string(),
        ];
        candidates
            .into_iter()
            .find(|p| !p.is_empty() && std::path::Path::new(p).is_file())
            .ok_or(
                "sslrootcert=system: no system certificate bundle was found (set SSL_CERT_FILE)",
            )?
    } else {
        root.to_string()
    };
    let mut store = RootCertStore::empty();
    let certs =
        CertificateDer::pem_file_iter(&path).map_err(|e| format!("sslrootcert {path}: {e}"))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("sslrootcert {path}: {e}"))?;
        store
            .add(cert)
            .map_err(|e| format!("sslrootcert {path}: {e}"))?;
    }
    if store.is_empty() {
        return Err(format!("sslrootcert {path}: no certificate in it"));
    }
    Ok(store)
}

/// `prefer` and `require` without `sslrootcert`: any certificate, as libpq takes it; the
/// handshake's signatures are still checked, so the connection is encrypted to whoever
/// holds the certificate's key.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain checked as `verify-full` checks it, the name not.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_parameters_are_taken_out_of_both_forms() {
        let (rest, mode, root) = take_ssl_params(
            "postgres://levy:pw@db:5432/levy?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://levy:pw@db:5432/levy?application_name=x");
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/etc/ca.pem"));
        let (rest, mode, root) =
            take_ssl_params("host=db sslmode=require password='a b' dbname=levy").unwrap();
        assert_eq!(rest, "host='db' password='a b' dbname='levy'");
        assert_eq!(mode.as_deref(), Some("require"));
        assert_eq!(root, None);
        // What is left is read by tokio-postgres as it was written.
        let c = connection("host=db sslmode=require password='a b' dbname=levy").unwrap();
        assert_eq!(c.config.get_password(), Some(&b"a b"[..]));
        assert_eq!(
            c.config.get_ssl_mode(),
            tokio_postgres::config::SslMode::Require
        );
        assert!(c.tls.is_some());
        let c = connection("postgres://levy@db/levy").unwrap();
        assert!(c.tls.is_none());
        assert_eq!(
            c.config.get_ssl_mode(),
            tokio_postgres::config::SslMode::Disable
        );
    }

    #[test]
    fn verification_without_a_ca_and_unknown_modes_are_refused() {
        for bad in [
            "postgres://db/levy?sslmode=verify-full",
            "host=db sslmode=verify-ca",
            "host=db sslmode=sometimes",
            "host=db sslmode=verify-full sslrootcert=/no/such/ca.pem",
        ] {
            assert!(connection(bad).is_err(), "{bad}");
        }
        let e = connection("host=db password=s3cret nonsense=1")
            .err()
            .unwrap();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
