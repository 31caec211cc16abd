//! Test fixtures: a small table with hand-checkable rates, and a service over it.
#![allow(dead_code)]

use std::sync::Arc;

use levy_api::*;
use levy_core::*;
use serde_json::Value;

pub const TEST_KEY: &str = "sk_test_shop_key_0001";
pub const LIVE_KEY: &str = "sk_live_shop_key_0001";
pub const OTHER_TEST_KEY: &str = "sk_test_other_key_001";
pub const OTHER_LIVE_KEY: &str = "sk_live_other_key_001";

/// Tennessee 7% state rate, Davidson County 2.25% (ZIP 37203, Nashville); clothing is a
/// child of general merchandise with the same rates; `FOOD` is a category the state taxes
/// at 4% and the county at 2.25%. IP 10.0.0.0/24 is Nashville 37203; 10.0.1.0/24 is a US
/// place with no postal code.
pub fn table() -> Arc<AnyTable> {
    table_with_rate(Decimal::new(7, 2))
}

/// The fixture table with another state rate.
pub fn table_with_rate(state_rate: Decimal) -> Arc<AnyTable> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
        .unwrap();
    b.tax_code("CLOTHING", Some("GENERAL_MERCHANDISE"), "Clothing")
        .unwrap();
    b.tax_code("FOOD", Some("GENERAL_MERCHANDISE"), "Food")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CLOTHING", "CLOTHING");
    b.category("FOOD", "FOOD");
    let tn = b
        .jurisdiction(JurisdictionSpec {
            code: "47".into(),
            name: "TENNESSEE".into(),
            level: Level::State,
            country: "US".into(),
            region: "TN".into(),
            authority: "TENNESSEE DEPARTMENT OF REVENUE".into(),
            tax_type: TaxType::Sales,
        })
        .unwrap();
    let davidson = b
        .jurisdiction(JurisdictionSpec {
            code: "47037".into(),
            name: "DAVIDSON".into(),
            level: Level::County,
            country: "US".into(),
            region: "TN".into(),
            authority: "DAVIDSON COUNTY".into(),
            tax_type: TaxType::Sales,
        })
        .unwrap();
    b.rule(RuleSpec::flat(
        tn,
        "GENERAL_MERCHANDISE",
        state_rate,
        Date::MIN,
        Date::MAX,
        "GENERAL STATE SALES TAX",
    ))
    .unwrap();
    b.rule(RuleSpec::flat(
        tn,
        "FOOD",
        Decimal::new(4, 2),
        Date::MIN,
        Date::MAX,
        "STATE FOOD TAX",
    ))
    .unwrap();
    b.rule(RuleSpec::flat(
        davidson,
        "GENERAL_MERCHANDISE",
        Decimal::new(225, 4),
        Date::MIN,
        Date::MAX,
        "GENERAL COUNTY LOCAL SALES TAX",
    ))
    .unwrap();
    b.region("US", "TN", "TENNESSEE", &[tn], "37203").unwrap();
    b.zip(37203, "TN", "NASHVILLE", &[tn, davidson], 1000)
        .unwrap();
    let ip = |a: u8, b2: u8, c: u8, d: u8| u32::from_be_bytes([a, b2, c, d]);
    b.ipv4_range(
        ip(10, 0, 0, 0),
        ip(10, 0, 0, 255),
        IpLocationSpec {
            country: "US".into(),
            region: "TN".into(),
            city: "NASHVILLE".into(),
            postal: "37203".into(),
            approx_postal: String::new(),
            coordinates: None,
        },
    )
    .unwrap();
    b.ipv4_range(
        ip(10, 0, 1, 0),
        ip(10, 0, 1, 255),
        IpLocationSpec {
            country: "US".into(),
            region: "TN".into(),
            city: String::new(),
            postal: String::new(),
            approx_postal: String::new(),
            coordinates: None,
        },
    )
    .unwrap();
    let bytes = b.build(0).unwrap();
    Arc::new(Table::open(AnyBytes::Owned(AlignedBytes::copy_from(&bytes))).unwrap())
}

pub fn keys() -> KeySource {
    KeySource::Inline(vec![
        KeyEntry {
            account: "shop".into(),
            key: TEST_KEY.into(),
        },
        KeyEntry {
            account: "shop".into(),
            key: LIVE_KEY.into(),
        },
        KeyEntry {
            account: "other".into(),
            key: OTHER_TEST_KEY.into(),
        },
        KeyEntry {
            account: "other".into(),
            key: OTHER_LIVE_KEY.into(),
        },
    ])
}

pub fn service() -> Service {
    Service::open(ServiceConfig {
        table: TableSource::Table(table()),
        ledger: ":memory:".into(),
        keys: keys(),
    })
    .unwrap()
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
