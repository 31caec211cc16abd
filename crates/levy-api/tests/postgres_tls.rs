//! TLS to the PostgreSQL ledger (rustls), against the PostgreSQL server the tests start
//! (`levy_testkit::postgres`), with a throwaway CA and server certificate made here:
//! `sslmode=require` encrypts, `verify-full` checks the chain and the host name, and
//! `verify-ca` the chain only. Skipped, with a line saying so, when no PostgreSQL server
//! can be started outside CI.
#![cfg(feature = "postgres")]

mod common;
use common::*;
use levy_api::*;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// A CA: its certificate (PEM) and what signs with it.
struct Ca {
    pem: String,
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        cert,
        key,
    }
}

/// A server certificate for `names` (DNS names or IP addresses) signed by `ca`, and its
/// key, both PEM.
fn server_cert(ca: &Ca, names: &[&str]) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "levy test server");
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// A directory the server (which runs as `postgres` when the tests run as root) can read.
fn readable_dir() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("levy-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Writes a server certificate and key where the server can read them, and has the server
/// serve TLS with them (`ssl` can be turned on with a reload).
fn serve_tls(
    server: &levy_testkit::postgres::Server,
    dir: &std::path::Path,
    cert: &str,
    key: &str,
    n: u32,
) {
    use std::os::unix::fs::PermissionsExt;
    let (cert_path, key_path) = (
        dir.join(format!("server{n}.crt")),
        dir.join(format!("server{n}.key")),
    );
    std::fs::write(&cert_path, cert).unwrap();
    std::fs::write(&key_path, key).unwrap();
    std::fs::set_permissions(&cert_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        for p in [&cert_path, &key_path] {
            let ok = std::process::Command::new("chown")
                .arg("postgres:")
                .arg(p)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown {}", p.display());
        }
    }
    for sql in [
        format!("ALTER SYSTEM SET ssl_cert_file = '{}'", cert_path.display()),
        format!("ALTER SYSTEM SET ssl_key_file = '{}'", key_path.display()),
        "ALTER SYSTEM SET ssl = on".to_string(),
        "SELECT pg_reload_conf()".to_string(),
    ] {
        server.psql("postgres", &sql).unwrap();
    }
    // The reload is asynchronous: wait until a connection negotiates TLS.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if server
            .psql(
                "postgres",
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            )
            .as_deref()
            == Ok("t")
        {
            // psql connects with sslmode=prefer: TLS is on. Wait for this certificate.
            let serial = server
                .psql("postgres", "SHOW ssl_cert_file")
                .unwrap_or_default();
            if serial.ends_with(&format!("server{n}.crt")) {
                return;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not turn TLS on"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn open(ledger: &str) -> Result<Service, ApiError> {
    Service::open(ServiceConfig {
        table: TableSource::Table(table()),
        ledger: ledger.to_string(),
        keys: keys(),
    })
}

/// Whether levy's connections to `db` (those the open service holds) are encrypted.
fn encrypted(server: &levy_testkit::postgres::Server, db: &str) -> String {
    server
        .psql(
            "postgres",
            &format!(
                "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid
                 WHERE a.datname = '{db}' AND a.application_name = 'levy'"
            ),
        )
        .unwrap()
}

/// A sale on `svc` answers 200: the ledger works over this connection.
fn works(svc: &Service, order: &str) {
    let tx = sale(svc, LIVE_KEY, "10000", order);
    assert!(tx["id"].as_str().unwrap().starts_with("tr_"));
}

#[test]
fn sslmode_require_verify_full_and_verify_ca_against_a_throwaway_ca() {
    let Some(server) = levy_testkit::postgres::server() else {
        return;
    };
    let dir = readable_dir();
    let trusted = ca("levy test CA");
    let stranger = ca("another CA");
    let (ca_path, stranger_path) = (dir.join("ca.crt"), dir.join("stranger.crt"));
    std::fs::write(&ca_path, &trusted.pem).unwrap();
    std::fs::write(&stranger_path, &stranger.pem).unwrap();
    let (cert, key) = server_cert(&trusted, &["localhost", "127.0.0.1"]);
    serve_tls(server, &dir, &cert, &key, 1);
    let port = server.port();

    // No sslmode: no TLS, as before.
    let url = server.database();
    let db = url.rsplit('/').next().unwrap().to_string();
    let svc = open(&url).unwrap();
    works(&svc, "plain");
    assert_eq!(encrypted(server, &db), "f");
    drop(svc);

    // require: encrypted, the certificate not checked.
    let svc = open(&format!("{url}?sslmode=require")).unwrap();
    works(&svc, "require");
    assert_eq!(encrypted(server, &db), "t");
    drop(svc);

    // verify-full against the CA, by IP address (URL) and by name (key=value pairs).
    let svc = open(&format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        ca_path.display()
    ))
    .unwrap();
    works(&svc, "verify-full-ip");
    assert_eq!(encrypted(server, &db), "t");
    drop(svc);
    let svc = open(&format!(
        "host=localhost port={port} user=levy dbname={db} sslmode=verify-full sslrootcert='{}'",
        ca_path.display()
    ))
    .unwrap();
    works(&svc, "verify-full-name");
    assert_eq!(encrypted(server, &db), "t");
    drop(svc);

    // A CA that did not sign the server's certificate: refused, saying why.
    let e = open(&format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        stranger_path.display()
    ))
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LedgerError);
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");
    // require with sslrootcert checks the chain as libpq does.
    assert!(open(&format!(
        "{url}?sslmode=require&sslrootcert={}",
        stranger_path.display()
    ))
    .is_err());

    // A certificate for another name: verify-full refuses it, verify-ca takes it.
    let (cert, key) = server_cert(&trusted, &["db.invalid"]);
    serve_tls(server, &dir, &cert, &key, 2);
    let e = open(&format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        ca_path.display()
    ))
    .unwrap_err();
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");
    let svc = open(&format!(
        "{url}?sslmode=verify-ca&sslrootcert={}",
        ca_path.display()
    ))
    .unwrap();
    works(&svc, "verify-ca");
    assert_eq!(encrypted(server, &db), "t");
    drop(svc);
    let _ = std::fs::remove_dir_all(&dir);
}
