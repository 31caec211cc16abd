//! The HTTP layer against slow, greedy and ambiguous clients: header, idle and body
//! timeouts, the connection limit, `Expect: 100-continue` over the body limit, and
//! duplicated headers that decide who is asking and how to answer. Raw TCP, because a
//! well-behaved HTTP client cannot send what these tests send.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{TestServer, SHOP_TEST};
use levy_server::ServeOptions;

fn addr(server: &TestServer) -> String {
    server.base.trim_start_matches("http://").to_string()
}

fn connect(server: &TestServer) -> TcpStream {
    let s = TcpStream::connect(addr(server)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Reads until the server closes the connection (or the read timeout passes, which fails
/// the test). Returns what was read.
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            // A reset is a close too (the server dropped a connection with unread bytes).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return out,
            Err(e) => panic!("the server did not close the connection: {e}"),
        }
    }
}

/// Reads one response with a `Content-Length` body, leaving the connection open.
fn read_response(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed mid-response: {}",
            String::from_utf8_lossy(&out)
        );
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            if out.len() >= end + 4 + len {
                return text;
            }
        }
    }
}

fn ping_request(connection: &str) -> String {
    format!(
        "GET /tax/ping HTTP/1.1\r\nHost: levy\r\nAuthorization: Bearer {SHOP_TEST}\r\nConnection: {connection}\r\n\r\n"
    )
}

fn with(f: impl FnOnce(&mut ServeOptions)) -> ServeOptions {
    let mut o = ServeOptions::loopback_ephemeral();
    f(&mut o);
    o
}

#[test]
fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let server = TestServer::start_with(
        "header-timeout",
        with(|o| o.header_timeout = Duration::from_secs(1)),
    );
    let mut s = connect(&server);
    let started = Instant::now();
    s.write_all(b"GET /tax/ping HTTP/1.1\r\nHost: levy\r\n")
        .unwrap();
    let got = read_to_close(&mut s);
    let waited = started.elapsed();
    // Closed after the 1 s header timeout (not before, not 20 s later), with no answer
    // to a request that never was.
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(
        got.is_empty() || got.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&got)
    );
}

#[test]
fn an_idle_kept_alive_connection_is_closed() {
    let server = TestServer::start_with(
        "idle-timeout",
        with(|o| o.header_timeout = Duration::from_secs(1)),
    );
    let mut s = connect(&server);
    s.write_all(ping_request("keep-alive").as_bytes()).unwrap();
    let first = read_response(&mut s);
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // The connection was kept alive; left idle, it is closed after the header timeout.
    let started = Instant::now();
    let rest = read_to_close(&mut s);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[test]
fn a_body_that_stalls_is_answered_408_in_the_versions_format() {
    let server = TestServer::start_with(
        "body-timeout",
        with(|o| o.body_timeout = Duration::from_secs(1)),
    );
    for (version, expected) in [
        ("2026-03-01", r#""type":"REQUEST_TIMEOUT""#),
        ("2024-09-01", r#""error_code":"request_timeout""#),
    ] {
        let mut s = connect(&server);
        let started = Instant::now();
        // 50 bytes announced, 10 sent, then nothing.
        s.write_all(
            format!(
                "POST /tax/calculations HTTP/1.1\r\nHost: levy\r\nAuthorization: Bearer {SHOP_TEST}\r\n\
                 X-API-Version: {version}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{{\"currency\""
            )
            .as_bytes(),
        )
        .unwrap();
        let got = String::from_utf8_lossy(&read_to_close(&mut s)).to_string();
        let waited = started.elapsed();
        assert!(got.starts_with("HTTP/1.1 408"), "{got}");
        assert!(got.contains(expected), "{got}");
        assert!(
            got.to_ascii_lowercase().contains("connection: close"),
            "{got}"
        );
        assert!(
            waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
            "{waited:?}"
        );
    }
}

#[test]
fn ping_answers_beside_300_stalled_connections() {
    // The default options: a 10 s header timeout, 512 connections.
    let server = TestServer::start("stalled-300");
    let stalled: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut s = connect(&server);
            s.write_all(b"GET /tax/ping HTTP/1.1\r\nHost: levy\r\n")
                .unwrap();
            s
        })
        .collect();
    let started = Instant::now();
    let a = server.client().bare("GET", "/tax/ping", SHOP_TEST, None);
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    drop(stalled);
}

#[test]
fn connections_over_the_limit_are_closed_at_once_and_served_again_when_freed() {
    let server = TestServer::start_with(
        "connection-limit",
        with(|o| {
            o.max_connections = 4;
            o.header_timeout = Duration::from_secs(2);
        }),
    );
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(&server);
            s.write_all(b"GET /tax/ping HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    // Give the server a moment to accept all four.
    std::thread::sleep(Duration::from_millis(200));
    let mut fifth = connect(&server);
    let started = Instant::now();
    let _ = fifth.write_all(ping_request("close").as_bytes());
    let got = read_to_close(&mut fifth);
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    // The four stalled ones are cut after the 2 s header timeout, freeing their places.
    std::thread::sleep(Duration::from_millis(2500));
    let mut again = connect(&server);
    again.write_all(ping_request("close").as_bytes()).unwrap();
    let got = String::from_utf8_lossy(&read_to_close(&mut again)).to_string();
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    drop(stalled);
}

#[test]
fn expect_continue_over_the_limit_gets_413_without_100_continue() {
    let server = TestServer::start("expect-continue");
    let mut s = connect(&server);
    let started = Instant::now();
    // 50 MB announced, nothing sent: the client waits for `100 Continue` before sending.
    s.write_all(
        format!(
            "POST /tax/calculations HTTP/1.1\r\nHost: levy\r\nAuthorization: Bearer {SHOP_TEST}\r\n\
             X-API-Version: 2026-03-01\r\nContent-Type: application/json\r\nContent-Length: 52428800\r\n\
             Expect: 100-continue\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();
    let got = String::from_utf8_lossy(&read_to_close(&mut s)).to_string();
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");
    assert!(!got.contains("100 Continue"), "{got}");
    assert!(got.contains(r#""type":"REQUEST_TOO_LARGE""#), "{got}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn duplicated_authorization_or_version_headers_are_refused() {
    let server = TestServer::start("duplicate-headers");
    let send = |extra: &str| {
        let mut s = connect(&server);
        s.write_all(
            format!("GET /tax/ping HTTP/1.1\r\nHost: levy\r\nConnection: close\r\n{extra}\r\n")
                .as_bytes(),
        )
        .unwrap();
        String::from_utf8_lossy(&read_to_close(&mut s)).to_string()
    };
    // Two keys, the first valid: the old behaviour answered as the first key's account.
    let got = send(&format!(
        "Authorization: Bearer {SHOP_TEST}\r\nAuthorization: Bearer sk_test_someone_else\r\nX-API-Version: 2026-03-01\r\n"
    ));
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert!(got.contains(r#""type":"INVALID_HEADER""#), "{got}");
    assert!(
        got.contains("Authorization header was sent 2 times"),
        "{got}"
    );
    // Two versions: refused in the format of the default version (no version is chosen).
    let got = send(&format!(
        "Authorization: Bearer {SHOP_TEST}\r\nX-API-Version: 2026-03-01\r\nX-API-Version: 2024-09-01\r\n"
    ));
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert!(got.contains(r#""error_code":"invalid_header""#), "{got}");
    assert!(
        got.contains("X-API-Version header was sent 2 times"),
        "{got}"
    );
    // One of each is answered.
    let got = send(&format!(
        "Authorization: Bearer {SHOP_TEST}\r\nX-API-Version: 2026-03-01\r\n"
    ));
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
}
