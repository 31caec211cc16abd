//! The backdating limit (`Service::with_backdating_limit`, `levy serve --max-backdate-days`):
//! a sale or refund dated further back than the limit is refused, `400
//! BACKDATED_PAST_LIMIT` naming the field and the earliest day taken, in the interface's
//! format and in the dialects' own, and nothing is recorded; within the limit, and without
//! one, it is recorded as before.

mod common;
use std::sync::Arc;

use common::*;
use levy_api::Service;
use serde_json::{json, Value};

const DAY: i64 = 86_400;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn limited(days: u32) -> Service {
    service_over(Arc::new(levy_data::open_default())).with_backdating_limit(days)
}

/// A calculation of $100.00 in Nashville, then a transaction of it dated `at`.
fn sale(svc: &Service, order: &str, at: i64) -> (u16, Value) {
    let (s, c) = post(
        svc,
        "/tax/calculations",
        LIVE_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{c}");
    let t = json!({"calculation_id": c["id"], "reference_order_id": order,
                   "transaction_processed_at": at});
    post(svc, "/tax/transactions", LIVE_KEY, None, &t.to_string())
}

fn raw(svc: &Service, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let r = svc.handle(&levy_api::Request {
        method: method.into(),
        path: path.into(),
        query: String::new(),
        headers: vec![("Authorization".into(), format!("Bearer {LIVE_KEY}"))],
        body: body.to_string().into_bytes(),
        request_id: None,
    });
    (
        r.status,
        serde_json::from_slice(&r.body).unwrap_or(Value::Null),
    )
}

#[test]
fn a_record_dated_past_the_limit_is_refused_and_nothing_is_kept() {
    let svc = limited(90);
    assert_eq!(svc.backdating_limit(), Some(90));
    let now = now();
    // 100 days back: refused, naming the field.
    let (s, e) = sale(&svc, "late", now - 100 * DAY);
    assert_eq!(s, 400, "{e}");
    assert_eq!(e["error"]["error_code"], "backdated_past_limit", "{e}");
    assert_eq!(
        e["error"]["error_meta"]["field"],
        "transaction_processed_at"
    );
    let message = e["error"]["error_message"].as_str().unwrap();
    assert!(message.contains("more than 90 days before now"), "{e}");
    // Nothing was recorded under the order id: the same id is free for a sale in range.
    let (s, t) = sale(&svc, "late", now - 10 * DAY);
    assert_eq!(s, 200, "{t}");
    // A refund dated 100 days back is refused too; one dated today is recorded.
    let refund = |at: i64| {
        json!({"transaction_id": t["id"], "type": "full", "refund_processed_at": at}).to_string()
    };
    let (s, e) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &refund(now - 100 * DAY),
    );
    assert_eq!(s, 400, "{e}");
    assert_eq!(e["error"]["error_code"], "backdated_past_limit", "{e}");
    assert_eq!(e["error"]["error_meta"]["field"], "refund_processed_at");
    let (s, r) = post(&svc, "/tax/refunds", LIVE_KEY, None, &refund(now));
    assert_eq!(s, 200, "{r}");
    // TaxJar's order of 100 days back: refused in TaxJar's error shape.
    let date = levy_core::Date::from_unix_seconds(now - 100 * DAY).to_string();
    let order = json!({"transaction_id": "tj-late", "transaction_date": date, "to_country": "US",
                       "to_zip": "37203", "to_state": "TN", "amount": 100, "shipping": 0,
                       "sales_tax": 9.75,
                       "line_items": [{"id": "1", "quantity": 1, "unit_price": 100}]});
    let (s, e) = raw(&svc, "POST", "/v2/transactions/orders", &order);
    assert_eq!(s, 400, "{e}");
    assert_eq!(e["status"], 400, "{e}");
    assert!(
        e["detail"].as_str().unwrap().contains("transaction_date"),
        "{e}"
    );
    let (s, _) = raw(&svc, "GET", "/v2/transactions/orders/tj-late", &Value::Null);
    assert_eq!(s, 404);
}

#[test]
fn without_a_limit_any_day_is_recorded() {
    let svc = service_over(Arc::new(levy_data::open_default()));
    assert_eq!(svc.backdating_limit(), None);
    let (s, t) = sale(&svc, "old", now() - 400 * DAY);
    assert_eq!(s, 200, "{t}");
}
