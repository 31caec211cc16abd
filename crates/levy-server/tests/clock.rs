//! A clock of any value gives answers, never a panic: past year 9999 (hyper's `Date`
//! formatter panicked on every request, so that `levy serve` answered nothing) and before
//! 1970. The clock is levy's, moved with `levy_api::clock::set_offset` (the `test-clock`
//! feature); it is process-wide, so this file holds one test.

mod common;

use common::{calc_body, TestServer, SHOP_TEST};

/// The first second of year 10000 (9999-12-31T23:59:59Z is 253402300799, `date -u -d
/// @253402300799`).
const YEAR_10000: i64 = 253_402_300_800;

/// What the server answers to `method path` (with the shop's test key and `body`): the
/// status and the `Date` header; `Err` when no answer came (the connection was dropped).
fn ask(
    server: &TestServer,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<(u16, Option<String>), String> {
    let agent = ureq::AgentBuilder::new()
        .timeout(std::time::Duration::from_secs(30))
        .build();
    let req = agent
        .request(method, &format!("{}{path}", server.base))
        .set("Authorization", &format!("Bearer {SHOP_TEST}"));
    let result = match body {
        Some(b) => req
            .set("Content-Type", "application/json")
            .send_string(&b.to_string()),
        None => req.call(),
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => return Err(e.to_string()),
    };
    Ok((resp.status(), resp.header("date").map(str::to_string)))
}

#[test]
fn a_clock_past_year_9999_or_before_1970_gives_answers_never_a_panic() {
    let server = TestServer::start("clock");
    let calc = calc_body(&[10_000]);
    // Now: every answer carries its Date, in RFC 9110's form.
    let (status, date) = ask(&server, "POST", "/tax/calculations", Some(&calc)).unwrap();
    assert_eq!(status, 200);
    let date = date.expect("a Date header");
    assert!(date.ends_with(" GMT") && date.len() == 29, "{date}");

    let now = levy_api::clock::now();
    // One year into year 10000: no Date (none can be written); the last day of 1969:
    // levy's clock reads a clock before 1970 as its first second.
    for (then, name, want) in [
        (YEAR_10000 + 365 * 86_400, "year 10001", None),
        (
            -86_400,
            "1969-12-31",
            Some("Thu, 01 Jan 1970 00:00:00 GMT".to_string()),
        ),
    ] {
        levy_api::clock::set_offset(then - now);
        for (method, path, body) in [
            ("POST", "/tax/calculations", Some(&calc)),
            ("GET", "/tax/transactions", None),
            ("GET", "/openapi.json", None),
            ("GET", "/no/such/path", None),
        ] {
            let (status, date) = ask(&server, method, path, body)
                .unwrap_or_else(|e| panic!("{name}: {method} {path} got no answer: {e}"));
            assert!(status < 500, "{name}: {method} {path}: {status}");
            assert_eq!(date, want, "{name}: {method} {path}");
        }
    }
    // Back to now: the Date again, and the server still answers.
    levy_api::clock::set_offset(0);
    let (status, date) = ask(&server, "POST", "/tax/calculations", Some(&calc)).unwrap();
    assert_eq!((status, date.is_some()), (200, true));
}
