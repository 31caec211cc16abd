//! A registered state without sales still has its return: the liability report lists every
//! state where the account holds a `sales_tax` registration active on some day of the
//! period, `registered`, with zeros where nothing was sold (a zero return), and says of a
//! state with sales whether the account is registered there. Run on the SQLite ledger, and
//! on PostgreSQL under `LEVY_TEST_LEDGER=postgres`.

mod common;
use std::sync::Arc;

use common::*;
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");
/// 2026-07-01T00:00:00Z.
const JULY_1: i64 = 1_782_864_000;
/// 2026-10-01T00:00:00Z.
const OCTOBER_1: i64 = 1_790_812_800;

fn register(svc: &levy_api::Service, region: &str, from: i64, to: Option<i64>) {
    let mut body = json!({"country": "US", "region": region, "active_from": from});
    if let Some(to) = to {
        body["expires_at"] = json!(to);
    }
    let (s, r) = post(svc, "/tax/registrations", LIVE_KEY, V3, &body.to_string());
    assert_eq!(s, 200, "{r}");
}

/// `(region, registered, transactions, collected)` of each state of a report.
fn states(r: &Value) -> Vec<(String, bool, i64, i64)> {
    r["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["region"].as_str().unwrap().to_string(),
                s["registered"].as_bool().unwrap(),
                s["transactions"].as_i64().unwrap(),
                s["collected"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_registered_state_without_sales_has_a_zero_return() {
    let svc = service_over(Arc::new(levy_data::open_default()));
    // Registered in Tennessee and Kentucky for the quarter, in Florida only from October.
    register(&svc, "TN", JULY_1 - 86_400, None);
    register(&svc, "KY", JULY_1, None);
    register(&svc, "FL", OCTOBER_1, None);
    // One sale in Nashville in August: $100.00 at 7% + 2.25% + 0.5% = $9.75.
    let address = json!({"address_province": "TN", "address_postal_code": "37203",
                         "address_country": "US"});
    let at = JULY_1 + 45 * 86_400;
    let body = json!({
        "customer": {"address": address}, "origin_address": address,
        "order_details": {"customer_currency_code": "USD", "automatic_tax": "auto",
                          "line_items": [{"amount": 10_000, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE"}]},
        "transacted_at": at,
    });
    let (s, c) = post(&svc, "/tax/calculations", LIVE_KEY, V3, &body.to_string());
    assert_eq!(s, 200, "{c}");
    let t = json!({"calculation_id": c["id"], "reference_order_id": "tn-aug",
                   "transaction_processed_at": at});
    let (s, t) = post(&svc, "/tax/transactions", LIVE_KEY, V3, &t.to_string());
    assert_eq!(s, 200, "{t}");
    let q3 = "/tax/reports/liability?from=2026-07-01&to=2026-09-30";
    let (s, r) = get(&svc, q3, LIVE_KEY, None);
    assert_eq!(s, 200, "{r}");
    // Kentucky: registered, nothing sold, a zero return; Florida's registration starts
    // after the quarter, so it has no return for it.
    assert_eq!(
        states(&r),
        [
            ("KY".to_string(), true, 0, 0),
            ("TN".to_string(), true, 1, 975)
        ]
    );
    // The fourth quarter: Florida, Kentucky and Tennessee, all zero.
    let (_, r) = get(
        &svc,
        "/tax/reports/liability?from=2026-10-01&to=2026-12-31",
        LIVE_KEY,
        None,
    );
    let regions: Vec<(String, bool, i64, i64)> = states(&r);
    assert_eq!(
        regions,
        [
            ("FL".to_string(), true, 0, 0),
            ("KY".to_string(), true, 0, 0),
            ("TN".to_string(), true, 0, 0)
        ]
    );
    // A report of one state lists it alone; the Rust interface answers the same.
    let (_, r) = get(&svc, &format!("{q3}&region=KY"), LIVE_KEY, None);
    assert_eq!(states(&r), [("KY".to_string(), true, 0, 0)]);
    let period = levy_api::liability_period("2026-07-01", "2026-09-30", None).unwrap();
    let report = svc.liability("shop", true, &period).unwrap();
    assert!(report.states[&("US".to_string(), "KY".to_string())].registered);
}
