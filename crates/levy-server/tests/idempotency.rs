//! `Idempotency-Key` over HTTP (issue 47): a refund whose answer the client never read
//! (the connection given up after the request was sent), sent again with its key, is
//! answered with the refund made, and no second refund is made (the documents of every
//! version take the header on every POST: tests/openapi.rs).

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{calc_body, TestServer, SHOP_LIVE};
use serde_json::{json, Value};

const V: &str = "2026-03-01";

/// A POST with `Idempotency-Key: idem`: status, the `Idempotent-Replayed` header, body.
fn keyed(base: &str, path: &str, idem: &str, body: &Value) -> (u16, Option<String>, Value) {
    let result = ureq::post(&format!("{base}{path}"))
        .set("Authorization", &format!("Bearer {SHOP_LIVE}"))
        .set("X-API-Version", V)
        .set("Idempotency-Key", idem)
        .set("Content-Type", "application/json")
        .send_string(&body.to_string());
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport error: {e}"),
    };
    let status = resp.status();
    let replayed = resp.header("idempotent-replayed").map(str::to_string);
    let body: Value = serde_json::from_str(&resp.into_string().unwrap()).unwrap();
    (status, replayed, body)
}

/// The ids of the refunds of `tx`.
fn refunds(server: &TestServer, tx: &str) -> Vec<String> {
    let a = server.client().bare(
        "GET",
        &format!("/tax/transactions/{tx}/refunds"),
        SHOP_LIVE,
        Some(V),
    );
    assert_eq!(a.status, 200, "{}", a.text);
    a.json()["refunds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_refund_whose_answer_was_lost_is_answered_again_not_made_twice() {
    let server = TestServer::start("idempotency");
    let c = server.client();
    let calc = c.json(
        "POST",
        "/tax/calculations",
        SHOP_LIVE,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.status, 200, "{}", calc.text);
    let tx = c.json(
        "POST",
        "/tax/transactions",
        SHOP_LIVE,
        None,
        &json!({"calculation_id": calc.json()["id"], "reference_order_id": "o-http"}),
    );
    assert_eq!(tx.status, 200, "{}", tx.text);
    let tx = tx.json()["id"].as_str().unwrap().to_string();
    let body = json!({"transaction_id": tx, "type": "full"});

    // The request is sent whole; its answer is never read (the client gave up on it).
    let text = body.to_string();
    let addr = server.base.trim_start_matches("http://");
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    write!(
        socket,
        "POST /tax/refunds HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {SHOP_LIVE}\r\nX-API-Version: {V}\r\nIdempotency-Key: refund-lost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
        text.len()
    )
    .unwrap();
    socket.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while refunds(&server, &tx).is_empty() {
        assert!(Instant::now() < deadline, "the refund was never committed");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(socket);
    let made = refunds(&server, &tx);

    let (status, replayed, again) = keyed(&server.base, "/tax/refunds", "refund-lost", &body);
    assert_eq!(status, 200, "{again}");
    assert_eq!(replayed.as_deref(), Some("true"));
    assert_eq!(again["id"].as_str(), Some(made[0].as_str()));
    assert_eq!(refunds(&server, &tx), made, "no second refund");

    // The same key with another body is refused, and changes nothing.
    let partial = json!({"transaction_id": tx, "type": "partial", "line_items": [
        {"reference_line_item_id": "l0", "sales_amount_refunded": -100, "tax_amount_refunded": 0}]});
    let (status, _, refused) = keyed(&server.base, "/tax/refunds", "refund-lost", &partial);
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["type"], "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(refunds(&server, &tx), made);
}
