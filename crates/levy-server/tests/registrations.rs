//! Registrations over HTTP (a levy extension): once the account has a `sales_tax`
//! registration, `automatic_tax: auto` collects only where one is active on the sale's
//! date. Run on the SQLite ledger, and on PostgreSQL under `LEVY_TEST_LEDGER=postgres`.
//!
//! The suite's table (tests/common): $100.00 (10000 cents) in Nashville 37201 owes 700
//! cents to Tennessee (7%) and 225 to the city (2.25%): 925.

mod common;

use common::{calc_body, TestServer, SHOP_LIVE, SHOP_TEST};
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");
/// 2026-03-15T00:00:00Z.
const MARCH_15: i64 = 1_773_532_800;
/// One second before it.
const MARCH_14_LAST_SECOND: i64 = MARCH_15 - 1;

fn tax_on(c: &common::Client, key: &str, at: i64) -> (i64, Value) {
    let mut body = calc_body(&[10_000]);
    body["transacted_at"] = json!(at);
    let a = c.json("POST", "/tax/calculations", key, V3, &body);
    assert_eq!(a.status, 200, "{}", a.text);
    let v = a.json();
    (v["total_tax_amount"].as_i64().unwrap(), v)
}

#[test]
fn registrations_gate_collection_over_http() {
    let server = TestServer::start("registrations-gate");
    let c = server.client();
    // No registration: collected as ever.
    assert_eq!(tax_on(&c, SHOP_LIVE, MARCH_15).0, 925);
    // Registered in Tennessee from the 15th.
    let made = c.json(
        "POST",
        "/tax/registrations",
        SHOP_LIVE,
        V3,
        &json!({"country": "US", "region": "TN", "active_from": MARCH_15}),
    );
    assert_eq!(made.status, 200, "{}", made.text);
    // The last second of the 14th: not collected; both entries kept at zero.
    let (tax, before) = tax_on(&c, SHOP_LIVE, MARCH_14_LAST_SECOND);
    assert_eq!(tax, 0);
    let entries = before["line_items"][0]["tax_jurisdictions"]
        .as_array()
        .unwrap();
    assert_eq!(entries.len(), 2, "{before}");
    for e in entries {
        assert_eq!(e["rate_type"], "NO COLLECTION; NO STATE NEXUS");
        assert_eq!(e["tax_rate"], json!(0));
    }
    assert_eq!(
        entries[0]["note"],
        "NOT_REGISTERED: not registered in US-TN on 2026-03-14"
    );
    // From its first second: 925.
    assert_eq!(tax_on(&c, SHOP_LIVE, MARCH_15).0, 925);
    // The test mode has no registration: it collects everywhere.
    assert_eq!(tax_on(&c, SHOP_TEST, MARCH_14_LAST_SECOND).0, 925);
}
