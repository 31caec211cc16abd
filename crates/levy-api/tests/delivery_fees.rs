//! Per-order retail delivery fees over the interface, on the embedded default table: a
//! `shipping` address is a retail delivery; the fee is one entry per part on the first
//! taxable line, in `fee_amount` and in the line's tax; registrations decide where the
//! seller collects it. Run on the SQLite ledger, and on PostgreSQL under
//! `LEVY_TEST_LEDGER=postgres`.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");

/// 2025-07-01T12:00:00Z: Colorado's fee is $0.28 from July 2025 to June 2026 (Colorado
/// Department of Revenue, Retail Delivery Fee Rates).
const JULY_1_2025: i64 = 1_751_371_200;

fn default_service() -> levy_api::Service {
    service_over(Arc::new(levy_data::open_default()))
}

/// A $50.00 sale to Denver 80202 with the address of `address_type`, on `at`.
fn denver(svc: &levy_api::Service, key: &str, address_type: &str, at: i64) -> Value {
    let body = json!({
        "customer": {"address": {"address_province": "CO", "address_postal_code": "80202",
                                 "address_country": "US", "address_type": address_type}},
        "order_details": {"customer_currency_code": "USD", "automatic_tax": "auto",
                          "line_items": [{"amount": 5000, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE"}]},
        "origin_address": {"address_province": "CO", "address_postal_code": "80202",
                           "address_country": "US"},
        "transacted_at": at,
    });
    let (s, c) = post(svc, "/tax/calculations", key, V3, &body.to_string());
    assert_eq!(s, 200, "{c}");
    c
}

fn fee_entries(c: &Value) -> Vec<&Value> {
    c["line_items"][0]["tax_jurisdictions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["note"] == "PER_ORDER_FEE")
        .collect()
}

#[test]
fn a_shipping_address_in_colorado_owes_the_retail_delivery_fee() {
    let svc = default_service();
    // C.R.S. 39-26-106: 2.9% of $50.00 = 145 cents; plus the fee's 28 cents.
    let c = denver(&svc, LIVE_KEY, "shipping", JULY_1_2025);
    assert_eq!(n(&c["total_tax_amount"]), "173", "{c}");
    assert_eq!(n(&c["line_items"][0]["tax_amount"]), "173", "{c}");
    let fees = fee_entries(&c);
    assert_eq!(fees.len(), 6, "{c}");
    // The Community Access part, $0.0567 from July 2025: 5.67 cents.
    assert!(
        fees.iter()
            .any(|e| e["rate_type"] == "COMMUNITY ACCESS RETAIL DELIVERY FEE"
                && n(&e["fee_amount"]) == "5.67"),
        "{c}"
    );
    // A billing address is not a delivery: the tax alone.
    let c = denver(&svc, LIVE_KEY, "billing", JULY_1_2025);
    assert_eq!(n(&c["total_tax_amount"]), "145", "{c}");
    assert!(fee_entries(&c).is_empty());
}

#[test]
fn a_seller_with_registrations_collects_the_fee_only_where_registered_for_it() {
    let svc = default_service();
    let register = |body: Value| {
        let (s, r) = post(&svc, "/tax/registrations", LIVE_KEY, V3, &body.to_string());
        assert_eq!(s, 200, "{r}");
    };
    register(json!({"country": "US", "region": "CO", "active_from": 1_700_000_000}));
    // Registered for Colorado's sales tax, not its delivery fee (a small seller, SB 23-143,
    // has no fee to register for): 145 cents.
    let c = denver(&svc, LIVE_KEY, "shipping", JULY_1_2025);
    assert_eq!(n(&c["total_tax_amount"]), "145", "{c}");
    register(
        json!({"country": "US", "region": "CO", "type": "retail_delivery_fee",
                    "active_from": 1_700_000_000}),
    );
    let c = denver(&svc, LIVE_KEY, "shipping", JULY_1_2025);
    assert_eq!(n(&c["total_tax_amount"]), "173", "{c}");
}
