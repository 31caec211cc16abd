//! Test fixtures: a small table with hand-checkable rates, and a service over it.
#![allow(dead_code, unused_imports)]

use std::sync::Arc;

use levy_api::*;
use levy_core::*;
use serde_json::Value;

pub use levy_testkit::keys::{
    OTHER_LIVE as OTHER_LIVE_KEY, OTHER_TEST as OTHER_TEST_KEY, SHOP_LIVE as LIVE_KEY,
    SHOP_TEST as TEST_KEY,
};
pub use levy_testkit::service::over as service_over;

/// The Tennessee table of `levy_testkit::tennessee`. The rates the tests use: Nashville
/// 37203 is Tennessee 7% state + Davidson County 2.25%; clothing is a child of general
/// merchandise with the same rates; `FOOD` is a category the state taxes at 4% and the
/// county at 2.25%. IP 10.0.0.0/24 is Nashville 37203; 10.0.1.0/24 is a US place with no
/// postal code; 198.51.100.0/24 is nowhere.
pub fn table() -> Arc<AnyTable> {
    levy_testkit::tennessee::table()
}

/// The fixture table with another state rate.
pub fn table_with_rate(state_rate: Decimal) -> Arc<AnyTable> {
    levy_testkit::tennessee::Tennessee {
        state_rate,
        ..Default::default()
    }
    .table()
}

/// The inline keys of the accounts `shop` and `other`.
pub fn keys() -> KeySource {
    levy_testkit::keys::inline()
}

/// A service over [`table`] with an in-memory ledger.
pub fn service() -> Service {
    levy_testkit::service::tennessee()
}

/// Sends one request; `version` None leaves the header out.
pub fn call(
    svc: &Service,
    method: &str,
    path: &str,
    key: Option<&str>,
    version: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let mut headers = Vec::new();
    if let Some(k) = key {
        headers.push(("Authorization".to_string(), format!("Bearer {k}")));
    }
    if let Some(v) = version {
        headers.push(("X-API-Version".to_string(), v.to_string()));
    }
    let r = svc.handle(&Request {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers,
        body: body.as_bytes().to_vec(),
        request_id: None,
    });
    assert!(r
        .headers
        .iter()
        .any(|(k, v)| k == "Content-Type" && v == "application/json"));
    let v: Value = serde_json::from_slice(&r.body).unwrap_or_else(|e| {
        panic!(
            "body is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&r.body)
        )
    });
    (r.status, v)
}

pub fn post(
    svc: &Service,
    path: &str,
    key: &str,
    version: Option<&str>,
    body: &str,
) -> (u16, Value) {
    call(svc, "POST", path, Some(key), version, body)
}

pub fn get(svc: &Service, path: &str, key: &str, version: Option<&str>) -> (u16, Value) {
    call(svc, "GET", path, Some(key), version, "")
}

/// The 2024-09-01 error code, asserting the nested format.
pub fn old_code(v: &Value) -> String {
    assert!(v["request_id"].as_str().unwrap().starts_with("req_"), "{v}");
    v["error"]["error_code"].as_str().unwrap().to_string()
}

/// The 2026 error type, asserting the flat format.
pub fn flat_type(v: &Value, status: u16) -> String {
    assert_eq!(v["code"].as_u64(), Some(status as u64), "{v}");
    assert!(v["message"].as_str().is_some(), "{v}");
    v["type"].as_str().unwrap().to_string()
}

/// A number's exact text.
pub fn n(v: &Value) -> String {
    assert!(v.is_number(), "not a number: {v}");
    v.to_string()
}

/// A 2024-09-01 calculation body for one line in Nashville 37203.
pub fn calc_body(amount: &str, category: &str) -> String {
    format!(
        r#"{{"customer": {{"address": {{"address_line_1": "", "address_city": "NASHVILLE", "address_province": "TN",
            "address_postal_code": "37203", "address_country": "US", "address_type": "shipping"}}}},
           "order_details": {{"customer_currency_code": "USD", "tax_included_in_amount": false,
            "line_items": [{{"amount": {amount}, "quantity": 1, "product_category": "{category}",
                             "reference_line_item_id": "line-1"}}]}}}}"#
    )
}

/// The origin address every 2025-05-12+ calculation needs.
pub const ORIGIN: &str = r#""origin_address": {"address_line_1": "1 Main St", "address_city": "NASHVILLE",
    "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}"#;

/// A 2025-05-12+ calculation body for one line in Nashville 37203.
pub fn calc_body_v2(amount: &str, category: &str) -> String {
    format!(
        r#"{{"customer": {{"type": "CONSUMER", "address": {{"address_province": "TN",
            "address_postal_code": "37203", "address_country": "US"}}}},
           "order_details": {{"customer_currency_code": "USD", "automatic_tax": "auto",
            "line_items": [{{"amount": {amount}, "quantity": 1, "product_category": "{category}"}}]}},
           {ORIGIN}}}"#
    )
}

/// Makes a calculation and a transaction from it; returns the transaction.
pub fn sale(svc: &Service, key: &str, amount: &str, order: &str) -> Value {
    let (s, calc) = post(
        svc,
        "/tax/calculations",
        key,
        None,
        &calc_body(amount, "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{calc}");
    let (s, tx) = post(
        svc,
        "/tax/transactions",
        key,
        None,
        &format!(
            r#"{{"calculation_id": "{}", "reference_order_id": "{order}"}}"#,
            calc["id"].as_str().unwrap()
        ),
    );
    assert_eq!(s, 200, "{tx}");
    tx
}
