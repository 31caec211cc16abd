//! Economic nexus (`GET /tax/nexus`, a levy extension) end to end: sales recorded through
//! the interface on the embedded default table, measured against the shipped thresholds of
//! `data/us-nexus.toml`. Run on the SQLite ledger, and on PostgreSQL under
//! `LEVY_TEST_LEDGER=postgres`.
//!
//! The cases are those worked by hand in `crates/levy-build/tests/worked/nexus.toml` (each
//! named below, with its source), recorded as real sales: a month of the case's `amount`
//! over `count` transactions is one sale of `amount - (count - 1)` dollars and `count - 1`
//! sales of one dollar. Transactions are dated by `transaction_processed_at`; the
//! calculations are made now (their date does not matter to nexus).

mod common;
use std::sync::Arc;

use common::*;
use levy_api::Service;
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");

fn default_service() -> Service {
    service_over(Arc::new(levy_data::open_default()))
}

/// A place of each state the cases use: state and ZIP code.
fn zip(state: &str) -> &'static str {
    match state {
        "CA" => "90012",
        "CT" => "06103",
        "NY" => "10001",
        "IL" => "60601",
        "TX" => "78701",
        "MO" => "64105",
        "TN" => "37203",
        other => panic!("no ZIP for {other}"),
    }
}

/// Unix seconds of noon UTC on the 15th of `month` (`YYYY-MM`).
fn mid_month(month: &str) -> i64 {
    let (y, m) = month.split_once('-').unwrap();
    let day = levy_core::Date::from_ymd(y.parse().unwrap(), m.parse().unwrap(), 15).unwrap();
    i64::from(day.0) * 86_400 + 43_200
}

/// One sale of `cents` into `state`, dated `at`; returns the transaction.
fn sell(svc: &Service, key: &str, state: &str, cents: i64, at: i64, order: &str) -> Value {
    let address = json!({"address_province": state, "address_postal_code": zip(state),
                         "address_country": "US"});
    let body = json!({
        "customer": {"address": address},
        "order_details": {"customer_currency_code": "USD", "automatic_tax": "auto",
                          "line_items": [{"amount": cents, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE",
                                          "reference_line_item_id": "line-1"}]},
        "origin_address": address,
    });
    let (s, c) = post(svc, "/tax/calculations", key, V3, &body.to_string());
    assert_eq!(s, 200, "{c}");
    let body = json!({"calculation_id": c["id"], "reference_order_id": order,
                      "transaction_processed_at": at});
    let (s, tx) = post(svc, "/tax/transactions", key, V3, &body.to_string());
    assert_eq!(s, 200, "{tx}");
    tx
}

/// A month of a worked case: `dollars` over `count` transactions.
fn month(svc: &Service, key: &str, state: &str, month: &str, dollars: i64, count: i64) {
    let at = mid_month(month);
    sell(
        svc,
        key,
        state,
        (dollars - (count - 1)) * 100,
        at,
        &format!("{state}-{month}-0"),
    );
    for i in 1..count {
        sell(svc, key, state, 100, at, &format!("{state}-{month}-{i}"));
    }
}

fn nexus(svc: &Service, key: &str, query: &str) -> Value {
    let (s, r) = get(svc, &format!("/tax/nexus?{query}"), key, V3);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["object"], "tax.nexus");
    r
}

/// The one state of a `?region=` answer.
fn state(svc: &Service, key: &str, region: &str, date: &str) -> Value {
    let r = nexus(svc, key, &format!("region={region}&date={date}"));
    assert_eq!(r["date"], date);
    let states = r["states"].as_array().unwrap();
    assert_eq!(states.len(), 1, "{r}");
    assert_eq!(states[0]["region"], region);
    states[0].clone()
}

fn periods(s: &Value) -> Vec<(String, String, String, i64)> {
    s["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["start"].as_str().unwrap().to_string(),
                p["end"].as_str().unwrap().to_string(),
                p["sales"].as_str().unwrap().to_string(),
                p["count"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn p(start: &str, end: &str, sales: &str, count: i64) -> (String, String, String, i64) {
    (start.into(), end.into(), sales.into(), count)
}

#[test]
fn california_crosses_in_june_on_current_year_sales_and_a_registration_says_registered() {
    // Worked case "California: current-year sales pass $500,000 in June" (Cal. Rev. & Tax.
    // Code 6203(c)(4); Cal. Code Regs. tit. 18, 1684), one sale a month.
    let svc = default_service();
    let months = [
        ("2025-03", 120_000),
        ("2026-01", 90_000),
        ("2026-02", 85_000),
        ("2026-03", 95_000),
        ("2026-04", 80_000),
        ("2026-05", 100_000),
        ("2026-06", 60_000),
        ("2026-07", 70_000),
    ];
    for (m, dollars) in months {
        month(&svc, LIVE_KEY, "CA", m, dollars, 1);
    }
    let ca = state(&svc, LIVE_KEY, "CA", "2026-08-20");
    assert_eq!(ca["status"], "exposed", "{ca}");
    assert_eq!(ca["exposed_since"], "2026-06-01");
    // 2025: 120,000 (24%); 2026 to August 20: 580,000 (116%).
    assert_eq!(
        periods(&ca),
        [
            p("2025-01-01", "2025-12-31", "120000.00", 1),
            p("2026-01-01", "2026-08-20", "580000.00", 7)
        ]
    );
    assert_eq!(ca["percent"], "116.00");
    assert_eq!(ca["periods"][1]["crossed_in"], "2026-06");
    assert_eq!(ca["threshold"]["amount"], "500000");
    assert_eq!(ca["threshold"]["amount_rule"], "more_than");
    assert_eq!(
        ca["threshold"]["period"],
        "current_or_previous_calendar_year"
    );
    assert_eq!(ca["unknown"], true);
    assert!(ca["note"].as_str().is_some() && ca["source"].is_null());
    assert!(ca["threshold"]["source"].as_str().unwrap().contains("6203"));
    // In May the running total was 450,000: 90%, approaching.
    let may = state(&svc, LIVE_KEY, "CA", "2026-05-31");
    assert_eq!(
        (may["status"].as_str(), may["percent"].as_str()),
        (Some("approaching"), Some("90.00"))
    );
    // The test mode records nothing of the live sales.
    let test = state(&svc, TEST_KEY, "CA", "2026-08-20");
    assert_eq!(
        (test["status"].as_str(), test["percent"].as_str()),
        (Some("below"), Some("0.00"))
    );
    // Registered in California from 2026-07-01: registered on 2026-08-20, still exposed
    // since June; before the registration, exposed.
    let (s, r) = post(
        &svc,
        "/tax/registrations",
        LIVE_KEY,
        V3,
        &json!({"country": "US", "region": "CA", "active_from": mid_month("2026-07")}).to_string(),
    );
    assert_eq!(s, 200, "{r}");
    let ca = state(&svc, LIVE_KEY, "CA", "2026-08-20");
    assert_eq!(ca["status"], "registered");
    assert_eq!(ca["registration_id"], r["id"]);
    assert_eq!(ca["exposed_since"], "2026-06-01");
    assert_eq!(
        state(&svc, LIVE_KEY, "CA", "2026-06-30")["status"],
        "exposed"
    );
}

#[test]
fn connecticut_measures_the_twelve_months_ending_september_30_and_needs_both_tests() {
    // Worked cases "Connecticut: $100,000 and 200 transactions in the 12 months ending
    // September 30" and "the same sales, asked in September 2026" (Conn. Gen. Stat.
    // 12-407(a)(12)(G)).
    let svc = default_service();
    month(&svc, LIVE_KEY, "CT", "2025-10", 40_000, 90);
    month(&svc, LIVE_KEY, "CT", "2026-03", 70_000, 120);
    let ct = state(&svc, LIVE_KEY, "CT", "2026-10-15");
    assert_eq!(ct["status"], "exposed", "{ct}");
    assert_eq!(ct["exposed_since"], "2026-03-01");
    assert_eq!(
        periods(&ct),
        [p("2025-10-01", "2026-09-30", "110000.00", 210)]
    );
    // `and`: the smaller of 110% and 105%.
    assert_eq!(ct["percent"], "105.00");
    assert_eq!(ct["threshold"]["combine"], "and");
    let sept = state(&svc, LIVE_KEY, "CT", "2026-09-15");
    assert_eq!(sept["status"], "below");
    assert_eq!(periods(&sept), [p("2024-10-01", "2025-09-30", "0.00", 0)]);
}

#[test]
fn new_york_measures_the_preceding_four_sales_tax_quarters() {
    // Worked case "New York: more than $500,000 and more than 100 sales in the preceding
    // four sales tax quarters" (N.Y. Tax Law 1101(b)(8)(iv); TSB-M-19(4)S).
    let svc = default_service();
    month(&svc, LIVE_KEY, "NY", "2025-05", 200_000, 60);
    month(&svc, LIVE_KEY, "NY", "2025-09", 260_000, 50);
    month(&svc, LIVE_KEY, "NY", "2026-01", 250_000, 51);
    let ny = state(&svc, LIVE_KEY, "NY", "2026-07-10");
    assert_eq!(ny["status"], "exposed", "{ny}");
    assert_eq!(ny["exposed_since"], "2026-01-01");
    // May 2025 is in the quarter March-May 2025, outside June 2025 to May 2026.
    assert_eq!(
        periods(&ny),
        [p("2025-06-01", "2026-05-31", "510000.00", 101)]
    );
    // `and`: the smaller of 102% and 101%.
    assert_eq!(ny["percent"], "101.00");
}

#[test]
fn illinois_on_both_sides_of_the_day_it_dropped_its_transaction_test() {
    // Worked cases "Illinois on the last side of the change" and "on the first side"
    // (35 ILCS 120/2(b); P.A. 104-0006; IDOR Informational Bulletin FY 2026-12; 86 Ill.
    // Adm. Code 131.115(b)): 210 transactions on $60,000.
    let svc = default_service();
    for m in ["2025-02", "2025-05", "2025-08"] {
        month(&svc, LIVE_KEY, "IL", m, 20_000, 70);
    }
    let before = state(&svc, LIVE_KEY, "IL", "2025-12-20");
    assert_eq!(before["status"], "exposed", "{before}");
    assert_eq!(before["exposed_since"], "2025-08-01");
    assert_eq!(
        periods(&before),
        [p("2024-10-01", "2025-09-30", "60000.00", 210)]
    );
    assert_eq!(before["threshold"]["transactions"], 200);
    assert_eq!(before["threshold"]["to"], "2025-12-31");
    // `or`: the larger of 60% and 105%.
    assert_eq!(before["percent"], "105.00");
    let after = state(&svc, LIVE_KEY, "IL", "2026-01-20");
    assert_eq!(after["status"], "below", "{after}");
    assert_eq!(after["exposed_since"], Value::Null);
    assert_eq!(
        periods(&after),
        [p("2025-01-01", "2025-12-31", "60000.00", 210)]
    );
    assert_eq!(after["threshold"]["transactions"], Value::Null);
    assert_eq!(after["threshold"]["from"], "2026-01-01");
    assert_eq!(after["percent"], "60.00");
}

#[test]
fn a_refund_in_a_later_month_lowers_that_month_and_a_deletion_its_own() {
    // Texas measures the 12 months before the current one (34 Tex. Admin. Code 3.286, as
    // its row cites). February: $100.00 and $50.00; the $100.00 sale fully refunded in
    // March. Asked in March, the period ends in February: both sales. Asked in April, it
    // holds March: $50.00 and one transaction (the full refund takes the sale out).
    let svc = default_service();
    let feb = mid_month("2026-02");
    let hundred = sell(&svc, LIVE_KEY, "TX", 10_000, feb, "tx-1");
    sell(&svc, LIVE_KEY, "TX", 5_000, feb, "tx-2");
    let (s, r) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        V3,
        &json!({"transaction_id": hundred["id"], "type": "full",
                "refund_processed_at": mid_month("2026-03")})
        .to_string(),
    );
    assert_eq!(s, 200, "{r}");
    let march = state(&svc, LIVE_KEY, "TX", "2026-03-20");
    assert_eq!(
        periods(&march),
        [p("2025-03-01", "2026-02-28", "150.00", 2)]
    );
    let april = state(&svc, LIVE_KEY, "TX", "2026-04-10");
    assert_eq!(periods(&april), [p("2025-04-01", "2026-03-31", "50.00", 1)]);
    // The refund reversed: it did not happen, in March's figures too.
    let (s, _) = post(
        &svc,
        "/tax/refund_reversals",
        LIVE_KEY,
        V3,
        &json!({"refund_id": r["id"]}).to_string(),
    );
    assert_eq!(s, 200);
    let april = state(&svc, LIVE_KEY, "TX", "2026-04-10");
    assert_eq!(
        periods(&april),
        [p("2025-04-01", "2026-03-31", "150.00", 2)]
    );
    // A deletion takes the sale off its own month.
    let (s, _) = call(
        &svc,
        "DELETE",
        &format!("/tax/transactions/{}", hundred["id"].as_str().unwrap()),
        Some(LIVE_KEY),
        V3,
        "",
    );
    assert_eq!(s, 200);
    let march = state(&svc, LIVE_KEY, "TX", "2026-03-20");
    assert_eq!(periods(&march), [p("2025-03-01", "2026-02-28", "50.00", 1)]);
}

#[test]
fn every_state_with_a_threshold_is_listed_and_bad_queries_are_refused() {
    let svc = default_service();
    let all = nexus(&svc, LIVE_KEY, "date=2026-11-26");
    let states: Vec<&str> = all["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["region"].as_str().unwrap())
        .collect();
    // 45 states with a sales tax, DC, PR and Alaska's local code.
    assert_eq!(states.len(), 48);
    assert!(!states.contains(&"OR") && states.contains(&"AK") && states.contains(&"PR"));
    // Pennsylvania's period is not one levy measures: unmeasured, its note says the rule.
    let pa = &all["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["region"] == "PA")
        .unwrap();
    assert_eq!(pa["status"], "unmeasured");
    assert_eq!(pa["percent"], Value::Null);
    assert!(pa["note"].as_str().unwrap().contains("April 1 to March 31"));
    // A state without a sales tax has no row: none listed.
    let or = nexus(&svc, LIVE_KEY, "region=or&date=2026-11-26");
    assert_eq!(or["states"], json!([]));
    for (query, kind) in [
        ("date=2026-02-30", "INVALID_QUERY_PARAMETER"),
        ("date=yesterday", "INVALID_QUERY_PARAMETER"),
        ("region=ZZ", "INVALID_REGION"),
        ("colour=red", "UNRECOGNIZED_FIELD"),
    ] {
        let (s, e) = get(&svc, &format!("/tax/nexus?{query}"), LIVE_KEY, V3);
        assert_eq!(s, 400, "{query}: {e}");
        assert_eq!(flat_type(&e, 400), kind, "{query}: {e}");
    }
}

#[test]
fn the_rust_interface_answers_as_the_http_one() {
    let svc = default_service();
    month(&svc, LIVE_KEY, "CA", "2025-11", 550_000, 1);
    let day = levy_core::Date::from_ymd(2026, 2, 10).unwrap();
    let report = svc.nexus("shop", true, Some(day), Some("ca")).unwrap();
    assert_eq!(report.states.len(), 1);
    // Worked case "California: $550,000 in the preceding calendar year".
    assert_eq!(
        report.states[0].status,
        levy_api::NexusStatus::Exposed {
            since: levy_core::Date::from_ymd(2025, 11, 1).unwrap()
        }
    );
    assert_eq!(
        levy_api::nexus_json(&report, false)["states"][0],
        state(&svc, LIVE_KEY, "CA", "2026-02-10")
    );
    assert!(svc.nexus("shop", true, Some(day), Some("ZZ")).is_err());
}

#[test]
fn a_ledger_from_before_the_monthly_sales_answers_from_its_transactions() {
    // Worked case "California: $550,000 in the preceding calendar year keeps the seller over
    // in January and February" (Cal. Rev. & Tax. Code 6203(c)(4)), with a partial refund of
    // $1,000.00 of the November sale booked in January 2026.
    let dir = levy_testkit::TempDir::new("levy-nexus-migration");
    let ledger = levy_testkit::postgres::ledger(dir.path());
    let open = || levy_testkit::service::with_ledger(Arc::new(levy_data::open_default()), &ledger);
    let before = {
        let svc = open();
        sell(
            &svc,
            LIVE_KEY,
            "CA",
            30_000_000,
            mid_month("2025-04"),
            "o-1",
        );
        let nov = sell(
            &svc,
            LIVE_KEY,
            "CA",
            25_000_000,
            mid_month("2025-11"),
            "o-2",
        );
        sell(&svc, LIVE_KEY, "CA", 1_000_000, mid_month("2026-01"), "o-3");
        let (s, r) = post(
            &svc,
            "/tax/refunds",
            LIVE_KEY,
            V3,
            &json!({"transaction_id": nov["id"], "type": "partial",
                    "refund_processed_at": mid_month("2026-01"),
                    "line_items": [{"reference_line_item_id": "line-1",
                                    "sales_amount_refunded": -100_000,
                                    "tax_amount_refunded": 0}]})
            .to_string(),
        );
        assert_eq!(s, 200, "{r}");
        state(&svc, LIVE_KEY, "CA", "2026-02-10")
    };
    assert_eq!(before["status"], "exposed", "{before}");
    assert_eq!(before["exposed_since"], "2025-11-01");
    // 2026: $10,000.00 less the $1,000.00 refunded in January.
    assert_eq!(
        periods(&before),
        [
            p("2025-01-01", "2025-12-31", "550000.00", 2),
            p("2026-01-01", "2026-02-10", "9000.00", 1)
        ]
    );
    // The ledger set back to the schema before the monthly sales were kept.
    if let Some(db) = ledger.strip_prefix("postgres://") {
        let server = levy_testkit::postgres::server().unwrap();
        let name = db.rsplit('/').next().unwrap();
        server
            .psql(
                name,
                "DROP TABLE nexus_months; UPDATE levy_ledger SET schema_version = 4",
            )
            .unwrap();
    } else {
        let conn = rusqlite::Connection::open(&ledger).unwrap();
        conn.execute_batch("DROP TABLE nexus_months; PRAGMA user_version = 7")
            .unwrap();
    }
    // Opened again, it computes them from its transactions and refunds: the same answer.
    let svc = open();
    assert_eq!(state(&svc, LIVE_KEY, "CA", "2026-02-10"), before);
}

#[test]
fn a_taxable_sales_state_counts_what_the_seller_did_not_collect_where_it_is_not_registered() {
    // Missouri (RSMo 144.605, data/us-nexus.toml): more than $100,000 of taxable sales in
    // the twelve months ending on the last quarter-end. The account is registered in
    // Tennessee only, so its Kansas City sales are answered NOT_REGISTERED, nothing
    // collected; they are taxable there all the same, and count. $70,000 and $50,000 in
    // July 2026 pass $100,000 in July; on 2026-10-15 the twelve months are 2025-10..2026-09.
    let svc = default_service();
    let (s, r) = post(
        &svc,
        "/tax/registrations",
        LIVE_KEY,
        V3,
        &json!({"country": "US", "region": "TN", "active_from": mid_month("2025-01")}).to_string(),
    );
    assert_eq!(s, 200, "{r}");
    let at = mid_month("2026-07");
    let tx = sell(&svc, LIVE_KEY, "MO", 7_000_000, at, "mo-1");
    sell(&svc, LIVE_KEY, "MO", 5_000_000, at, "mo-2");
    assert_eq!(tx["line_items"][0]["tax_amount"], 0, "{tx}");
    let note = tx["line_items"][0]["tax_jurisdictions"][0]["note"]
        .as_str()
        .unwrap();
    assert!(note.starts_with("NOT_REGISTERED"), "{tx}");
    let mo = state(&svc, LIVE_KEY, "MO", "2026-10-15");
    assert_eq!(
        periods(&mo),
        [p("2025-10-01", "2026-09-30", "120000.00", 2)]
    );
    assert_eq!(mo["status"], "exposed", "{mo}");
    assert_eq!(mo["exposed_since"], "2026-07-01");
    assert_eq!(mo["percent"], "120.00");
}
