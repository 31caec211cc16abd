//! Per-account limits: a request rate and a number of stored calculations, both answered
//! with 429 and `Retry-After`, both counted per account and mode.

mod common;
use common::*;
use levy_api::*;

fn raw(svc: &Service, method: &str, path: &str, key: &str, body: &str) -> Response {
    svc.handle(&Request {
        method: method.into(),
        path: path.into(),
        query: String::new(),
        headers: vec![
            ("Authorization".into(), format!("Bearer {key}")),
            ("X-API-Version".into(), "2026-03-01".into()),
        ],
        body: body.as_bytes().to_vec(),
        request_id: None,
    })
}

fn header<'a>(r: &'a Response, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn kind(r: &Response) -> String {
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    v["type"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_service_opened_in_process_has_no_limits() {
    let svc = service();
    assert_eq!(svc.limits(), Limits::NONE);
    for _ in 0..50 {
        assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 200);
    }
}

#[test]
fn the_request_rate_is_limited_per_account_and_mode() {
    // 1 request per second, bursts of 2: two at once pass, the third waits a second.
    let svc = service().with_limits(Limits {
        requests_per_second: 1,
        burst: 2,
        ..Limits::NONE
    });
    assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 200);
    assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 200);
    let r = raw(&svc, "GET", "/tax/ping", TEST_KEY, "");
    assert_eq!(r.status, 429);
    assert_eq!(kind(&r), "RATE_LIMITED");
    assert_eq!(header(&r, "Retry-After"), Some("1"));
    // The same account's live key and another account have their own allowances.
    assert_eq!(raw(&svc, "GET", "/tax/ping", LIVE_KEY, "").status, 200);
    assert_eq!(
        raw(&svc, "GET", "/tax/ping", OTHER_TEST_KEY, "").status,
        200
    );
    // A refused request is not counted, and a second later one token is back.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 200);
    assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 429);
}

#[test]
fn stored_calculations_are_limited_per_account_and_mode_across_restarts() {
    let dir = levy_testkit::TempDir::new("levy-limits");
    let path = dir.join("ledger.sqlite");
    let limits = Limits {
        stored_calculations: 3,
        ..Limits::NONE
    };
    let open = || {
        Service::open(ServiceConfig {
            table: TableSource::Table(table()),
            ledger: path.display().to_string(),
            keys: keys(),
        })
        .unwrap()
        .with_limits(limits)
    };
    let body = calc_body_v2("10000", "GENERAL_MERCHANDISE");
    {
        let svc = open();
        for _ in 0..3 {
            let r = raw(&svc, "POST", "/tax/calculations", TEST_KEY, &body);
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        }
        let r = raw(&svc, "POST", "/tax/calculations", TEST_KEY, &body);
        assert_eq!(r.status, 429);
        assert_eq!(kind(&r), "CALCULATION_QUOTA_EXCEEDED");
        assert_eq!(header(&r, "Retry-After"), Some("60"));
        // Live mode and the other account store their own.
        assert_eq!(
            raw(&svc, "POST", "/tax/calculations", LIVE_KEY, &body).status,
            200
        );
        assert_eq!(
            raw(&svc, "POST", "/tax/calculations", OTHER_TEST_KEY, &body).status,
            200
        );
        // Reading is not limited by the quota.
        assert_eq!(raw(&svc, "GET", "/tax/ping", TEST_KEY, "").status, 200);
    }
    // After a restart the three stored calculations are counted from the ledger.
    let svc = open();
    let r = raw(&svc, "POST", "/tax/calculations", TEST_KEY, &body);
    assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        raw(&svc, "POST", "/tax/calculations", LIVE_KEY, &body).status,
        200
    );
    drop(svc);
}

/// A calculation of `lines` lines of 10.00 each, as `POST /tax/calculations` takes it.
fn calc_of_lines(lines: usize) -> String {
    let items: Vec<String> = (0..lines)
        .map(|i| {
            format!(r#"{{"amount": 1000, "quantity": 1, "product_category": "GENERAL_MERCHANDISE", "reference_line_item_id": "l{i}"}}"#)
        })
        .collect();
    format!(
        r#"{{"customer": {{"address": {{"address_province": "TN", "address_postal_code": "37203",
            "address_country": "US"}}}},
           "order_details": {{"customer_currency_code": "USD", "line_items": [{}]}}, {ORIGIN}}}"#,
        items.join(",")
    )
}

#[test]
fn a_calculation_takes_one_token_per_line() {
    // 1 token a second, bursts of 10: a calculation of 10 lines empties the bucket as 10
    // one-line calculations would, so the next one-line calculation is refused. (Before
    // lines were counted, it took one token, and the next passed.)
    let svc = service().with_limits(Limits {
        requests_per_second: 1,
        burst: 10,
        ..Limits::NONE
    });
    let calculate = |key: &str, lines: usize| {
        raw(
            &svc,
            "POST",
            "/tax/calculations",
            key,
            &calc_of_lines(lines),
        )
    };
    let r = calculate(TEST_KEY, 10);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r = calculate(TEST_KEY, 1);
    assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(kind(&r), "RATE_LIMITED");
    assert_eq!(header(&r, "Retry-After"), Some("1"));
    // Another account, and the live key, have their own bucket: 9 lines pass, then one
    // line more, then nothing.
    assert_eq!(calculate(OTHER_TEST_KEY, 9).status, 200);
    assert_eq!(calculate(OTHER_TEST_KEY, 1).status, 200);
    assert_eq!(calculate(OTHER_TEST_KEY, 1).status, 429);
    // After 5 lines, 5 tokens are left: a calculation of 10 takes 1 for the request and
    // lacks 5 of its other 9, so it is refused with Retry-After 5 (at 1 a second) and its
    // lines take nothing: 4 lines still pass.
    assert_eq!(calculate(LIVE_KEY, 5).status, 200);
    let r = calculate(LIVE_KEY, 10);
    assert_eq!(r.status, 429);
    let wait: u64 = header(&r, "Retry-After").unwrap().parse().unwrap();
    assert_eq!(wait, 5, "Retry-After {wait}");
    assert_eq!(calculate(LIVE_KEY, 4).status, 200);
}
