//! `Service::answer`: the answer to a calculation before its commit, awaited or waited for,
//! is the answer `Service::handle` gives, and the calculation is stored once it resolves.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use levy_api::{KeyEntry, KeySource, Request, Response, Service, ServiceConfig, TableSource};

const KEY: &str = "sk_test_answer";

/// One $100.00 line of general merchandise delivered to Nashville, TN 37201: the load
/// test's body (`crates/levy-server/loadtest/calculation.json`).
const CALCULATION: &[u8] = include_bytes!("../../levy-server/loadtest/calculation.json");

fn service(ledger: &std::path::Path) -> Service {
    Service::open(ServiceConfig {
        table: TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ledger.display().to_string(),
        keys: KeySource::Inline(vec![KeyEntry {
            account: "shop".into(),
            key: KEY.into(),
        }]),
    })
    .unwrap()
}

fn post(path: &str, body: &[u8]) -> Request {
    Request {
        method: "POST".into(),
        path: path.into(),
        query: String::new(),
        headers: vec![
            ("Authorization".into(), format!("Bearer {KEY}")),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: body.to_vec(),
        request_id: None,
    }
}

/// Runs a future to completion on this thread, parking between polls.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}

fn json(r: &Response) -> serde_json::Value {
    serde_json::from_slice(&r.body).unwrap()
}

fn order(calc: &Response, order_id: &str) -> Vec<u8> {
    format!(
        r#"{{"calculation_id": "{}", "reference_order_id": "{order_id}"}}"#,
        json(calc)["id"].as_str().unwrap()
    )
    .into_bytes()
}

#[test]
fn an_awaited_calculation_is_answered_as_handle_answers_it_and_is_stored() {
    let dir = std::env::temp_dir().join(format!("levy-answer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svc = service(&dir.join("ledger.sqlite"));
    let calc = post("/tax/calculations", CALCULATION);

    let handled = svc.handle(&calc);
    let answer = svc.answer(&calc);
    assert!(!answer.is_ready(), "a calculation waits for its commit");
    let awaited = block_on(answer.finish());
    let waited = svc.answer(&calc).wait();

    for r in [&handled, &awaited, &waited] {
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let body = json(r);
        // The embedded table's Tennessee state rate, 7% (Tenn. Code Ann. § 67-6-202), with
        // Davidson County's 2.25% and its 0.5% transit surcharge (data/local/us/TN.toml) on
        // $100.00 (10,000 cents): 975 cents. Every city of Davidson levies the county's
        // rate, and the answer says it is complete: `Levy-Coverage: FULL`.
        assert_eq!(body["total_tax_amount"].to_string(), "975");
        assert_eq!(body["total_amount_including_tax"].to_string(), "10975");
        assert!(r
            .headers
            .contains(&("Levy-Coverage".to_string(), "FULL".to_string())));
    }
    // Each answer is its own calculation, with the same headers.
    let ids: std::collections::HashSet<String> = [&handled, &awaited, &waited]
        .iter()
        .map(|r| json(r)["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(handled.headers, awaited.headers);
    assert_eq!(handled.headers, waited.headers);

    // Once the answer has resolved, the calculation is in the ledger: it becomes a
    // transaction, even through a service opened afresh on the same file.
    let tx = svc.handle(&post("/tax/transactions", &order(&awaited, "o-awaited")));
    assert_eq!(tx.status, 200, "{}", String::from_utf8_lossy(&tx.body));
    drop(svc);
    let reopened = service(&dir.join("ledger.sqlite"));
    let tx = reopened.handle(&post("/tax/transactions", &order(&waited, "o-waited")));
    assert_eq!(tx.status, 200, "{}", String::from_utf8_lossy(&tx.body));
    drop(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn answers_that_write_nothing_are_ready_at_once() {
    let dir = std::env::temp_dir().join(format!("levy-answer-ready-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svc = service(&dir.join("ledger.sqlite"));
    let ping = Request {
        method: "GET".into(),
        path: "/tax/ping".into(),
        headers: vec![("Authorization".into(), format!("Bearer {KEY}"))],
        ..Request::default()
    };
    let answer = svc.answer(&ping);
    assert!(answer.is_ready());
    assert_eq!(answer.wait().status, 200);
    // A refused calculation (no line items) stores nothing and waits for nothing.
    let answer = svc.answer(&post(
        "/tax/calculations",
        br#"{"customer": {"address": {"address_country": "US", "address_province": "TN", "address_postal_code": "37201"}}, "order_details": {"customer_currency_code": "USD", "line_items": []}}"#,
    ));
    assert!(answer.is_ready());
    assert_eq!(answer.wait().status, 400);
    drop(svc);
    let _ = std::fs::remove_dir_all(&dir);
}
