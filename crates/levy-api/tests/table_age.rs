//! The table's age over the interface, on the embedded default table: a sale dated after
//! the horizon of an input it used says so (`Levy-Stale-Table`, `Levy-Coverage` at most
//! `PARTIAL`), one before the first day the table holds its state's tax is refused
//! (`DATE_BEFORE_TABLE`, naming `transacted_at`).

mod common;

use std::sync::Arc;

use common::*;
use serde_json::Value;

/// $100.00 of general merchandise to Los Angeles 90012, shipped from Portland, Oregon
/// (interstate: taxed at the destination), at `transacted_at`: status, headers, body.
fn los_angeles(transacted_at: i64) -> (u16, Vec<(String, String)>, Value) {
    let svc = service_over(Arc::new(levy_data::open_default()));
    let body = format!(
        r#"{{"transacted_at": {transacted_at},
           "origin_address": {{"address_province": "OR", "address_postal_code": "97201",
            "address_country": "US"}},
           "customer": {{"address": {{"address_province": "CA", "address_postal_code": "90012",
            "address_country": "US", "address_type": "shipping"}}}},
           "order_details": {{"customer_currency_code": "USD", "tax_included_in_amount": false,
            "line_items": [{{"amount": 10000, "quantity": 1,
                             "product_category": "GENERAL_MERCHANDISE"}}]}}}}"#
    );
    let r = svc.handle(&levy_api::Request {
        method: "POST".into(),
        path: "/tax/calculations".into(),
        query: String::new(),
        headers: vec![
            ("Authorization".into(), format!("Bearer {TEST_KEY}")),
            ("X-API-Version".into(), "2026-03-01".into()),
        ],
        body: body.into_bytes(),
        request_id: None,
    });
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    (r.status, r.headers, v)
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[test]
fn a_sale_after_the_cdtfa_lists_quarter_says_the_table_is_stale() {
    // CDTFA, California City & County Sales & Use Tax Rates effective 2026-01-01
    // (data/local/ca-cdtfa-1-1-26.csv): Los Angeles 9.75%, $100.00 -> 975 cents. The list
    // is for the quarter; its horizon is 2026-03-31 (levy_build::horizon).
    let (status, h, v) = los_angeles(1_774_915_200); // 2026-03-31
    assert_eq!(status, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "975", "{v}");
    assert_eq!(header(&h, levy_api::STALE_HEADER), None);
    let fresh = header(&h, levy_api::COVERAGE_HEADER).map(str::to_string);
    assert_ne!(fresh.as_deref(), Some("STATE_ONLY"));
    // The next day: the same tax (the table knows no other), at most PARTIAL, naming the
    // list and its horizon.
    let (status, h, v) = los_angeles(1_775_001_600); // 2026-04-01
    assert_eq!(status, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "975", "{v}");
    assert_eq!(header(&h, levy_api::COVERAGE_HEADER), Some("PARTIAL"));
    let stale = header(&h, levy_api::STALE_HEADER).expect("Levy-Stale-Table");
    assert!(
        stale.starts_with("STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv"),
        "{stale}"
    );
    assert!(stale.contains("is in force to 2026-03-31"), "{stale}");
}

#[test]
fn a_sale_before_californias_first_day_in_the_table_is_refused() {
    // data/us-states.toml holds California's 7.25% from 2017-01-01 (after Proposition
    // 30's quarter cent ended): the day before, the table cannot say what was due.
    let (status, _, v) = los_angeles(1_483_142_400); // 2016-12-31
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["type"], "DATE_BEFORE_TABLE", "{v}");
    assert!(v["message"].as_str().unwrap().contains("2017-01-01"), "{v}");
    let (status, _, v) = los_angeles(1_483_228_800); // 2017-01-01
    assert_eq!(status, 200, "{v}");
}

fn ping(svc: &levy_api::Service) -> (Vec<(String, String)>, Value) {
    let r = svc.handle(&levy_api::Request {
        method: "GET".into(),
        path: "/tax/ping".into(),
        query: String::new(),
        headers: vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))],
        body: Vec::new(),
        request_id: None,
    });
    assert_eq!(r.status, 200);
    (r.headers.clone(), serde_json::from_slice(&r.body).unwrap())
}

#[test]
fn a_server_past_its_tables_horizon_says_so_on_every_answer_and_in_ping() {
    // The default table's earliest horizon is the CDTFA list's, 2026-03-31: this test runs
    // after it, so every answer carries Levy-Table-Horizon and ping says stale.
    let svc = service_over(Arc::new(levy_data::open_default()));
    let (h, v) = ping(&svc);
    let horizon = "2026-03-31; cdtfa ca-cdtfa-1-1-26.csv";
    assert_eq!(header(&h, levy_api::TABLE_HORIZON_HEADER), Some(horizon));
    assert_eq!(v["levy_table"]["horizon"], horizon, "{v}");
    assert_eq!(v["levy_table"]["stale"], true, "{v}");
    assert_eq!(
        v["levy_table"]["hash"],
        levy_data::default_table().header().hash_hex()
    );
    // A refusal carries it too.
    let (status, h, _) = los_angeles(1_483_142_400);
    assert_eq!(status, 400);
    assert_eq!(header(&h, levy_api::TABLE_HORIZON_HEADER), Some(horizon));
    // A table made by hand names no input that ages: no header, no horizon.
    let (h, v) = ping(&service());
    assert_eq!(header(&h, levy_api::TABLE_HORIZON_HEADER), None);
    assert!(v["levy_table"]["horizon"].is_null(), "{v}");
    assert_eq!(v["levy_table"]["stale"], false, "{v}");
}
