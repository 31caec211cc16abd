//! The taxed base per jurisdiction: each stored entry keeps the part of its line it taxed,
//! and the liability report sums it as the jurisdiction's taxable sales, the rest of the
//! line exempt for it. Sales calculated on the embedded default table over the interface,
//! recorded, and reported; every figure worked by hand from the law each names. Run on the
//! SQLite ledger, and on PostgreSQL under `LEVY_TEST_LEDGER=postgres`.

mod common;
use std::sync::Arc;

use common::*;
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");

/// 2026-03-01T00:00:00Z.
const MARCH_1: i64 = 1_772_323_200;

/// Records one line of `cents` of general merchandise sold to `zip` in `state`, on
/// 2026-03-02 (calculated on that day), under order `order`; returns the transaction.
fn record(svc: &levy_api::Service, state: &str, zip: &str, cents: i64, order: &str) -> Value {
    let address = json!({"address_province": state, "address_postal_code": zip,
                         "address_country": "US"});
    let body = json!({
        "customer": {"address": address},
        "origin_address": address,
        "order_details": {"customer_currency_code": "USD", "automatic_tax": "auto",
                          "line_items": [{"amount": cents, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE",
                                          "reference_line_item_id": "line-1"}]},
        "transacted_at": MARCH_1 + 86_400,
    });
    let (s, c) = post(svc, "/tax/calculations", LIVE_KEY, V3, &body.to_string());
    assert_eq!(s, 200, "{c}");
    let t = json!({"calculation_id": c["id"], "reference_order_id": order,
                   "transaction_processed_at": MARCH_1 + 86_400});
    let (s, t) = post(svc, "/tax/transactions", LIVE_KEY, V3, &t.to_string());
    assert_eq!(s, 200, "{t}");
    t
}

/// `(gross, taxable, exempt for the product, tax)` of each row of the report, by code.
fn rows(r: &Value) -> Vec<(String, [i64; 4])> {
    r["jurisdictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = &j["net"];
            let int = |v: &Value| v.as_i64().unwrap_or_else(|| panic!("{v} in {j}"));
            (
                j["jurisdiction_code"].as_str().unwrap().to_string(),
                [
                    int(&n["gross_sales"]),
                    int(&n["taxable_sales"]),
                    int(&n["exempt_sales"]["product"]),
                    int(&n["tax"]),
                ],
            )
        })
        .collect()
}

#[test]
fn each_jurisdiction_reports_the_base_it_taxed() {
    let svc = service_over(Arc::new(levy_data::open_default()));
    // Nashville 37203, a $2,000.00 item: Tennessee's 7% on all of it ($140.00); the state
    // single article tax, 2.75% of the $400.00 between $1,600.00 and $3,200.00 ($11.00);
    // Davidson County's 2.25% and the transit surcharge's 0.5%, local taxes, on the first
    // $1,600.00 only ($36.00 and $8.00) (Tenn. Code Ann. 67-6-202(a), 67-6-702(a)(1);
    // Important Notice #24-11).
    let t = record(&svc, "TN", "37203", 200_000, "tn-1");
    assert_eq!(t["line_items"][0]["tax_amount"], 19_500, "{t}");
    // Miami 33130, a $6,000.00 item: Florida's 6% on all of it ($360.00), Miami-Dade's 1%
    // surtax on the first $5,000.00 ($50.00) (s. 212.054(2)(b)1., F.S.): DR-15DSS's
    // surtax base is $5,000.00 where DR-15's taxable amount is $6,000.00.
    let t = record(&svc, "FL", "33130", 600_000, "fl-1");
    assert_eq!(t["line_items"][0]["tax_amount"], 41_000, "{t}");
    let path = "/tax/reports/liability?from=2026-03-01&to=2026-03-31";
    let (s, r) = get(&svc, path, LIVE_KEY, None);
    assert_eq!(s, 200, "{r}");
    let got = rows(&r);
    let row = |code: &str| {
        got.iter()
            .find(|(c, _)| c == code)
            .unwrap_or_else(|| panic!("no row {code} in {got:?}"))
            .1
    };
    assert_eq!(row("47"), [200_000, 200_000, 0, 14_000]);
    assert_eq!(row("47:SAT"), [200_000, 40_000, 160_000, 1_100]);
    assert_eq!(row("47037"), [200_000, 160_000, 40_000, 3_600]);
    assert_eq!(row("TN:DAVIDSON TRANSIT"), [200_000, 160_000, 40_000, 800]);
    assert_eq!(row("12"), [600_000, 600_000, 0, 36_000]);
    assert_eq!(row("12086"), [600_000, 500_000, 100_000, 5_000]);
    // A refund of half the Florida line takes back half of each base: $3,000.00 of the
    // state's and $2,500.00 of the surtax's, in the refund's month (April).
    let (s, f) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &json!({"transaction_id": t["id"], "type": "partial",
                "refund_processed_at": MARCH_1 + 31 * 86_400,
                "line_items": [{"reference_line_item_id": "line-1", "quantity": 1,
                                "sales_amount_refunded": -300_000,
                                "tax_amount_refunded": -20_500}]})
        .to_string(),
    );
    assert_eq!(s, 200, "{f}");
    let (s, r) = get(
        &svc,
        "/tax/reports/liability?from=2026-04-01&to=2026-04-30&region=FL",
        LIVE_KEY,
        None,
    );
    assert_eq!(s, 200, "{r}");
    let got = rows(&r);
    assert_eq!(
        got,
        [
            ("12".to_string(), [-300_000, -300_000, 0, -18_000]),
            ("12086".to_string(), [-300_000, -250_000, -50_000, -2_500]),
        ]
    );
}
