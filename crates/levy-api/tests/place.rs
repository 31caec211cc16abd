//! The `Levy-Place` response header, and the city an address names deciding within a ZIP
//! code shared by places of different taxes, over the interface on the embedded default
//! table.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::Value;

/// A calculation of one $100.00 line (10000 cents) of general merchandise delivered to
/// `zip` in `region`, the address naming `city`: its status, `Levy-Place`,
/// `Levy-Coverage` and body. It is dated within the default table's inputs of the state
/// (their horizons: `levy info`), so that its coverage is the place's, whatever the day
/// the test runs: CDTFA's list of 2026-01-01 holds to 2026-03-31, the SST files of
/// 2026Q2 from 2026-04-01 to 2026-06-30. It ships from Portland, Oregon (the version that
/// takes the day requires an origin), so every sale is interstate: taxed at the
/// destination.
fn calculate(
    svc: &levy_api::Service,
    city: &str,
    region: &str,
    zip: &str,
) -> (u16, Option<String>, Option<String>, Value) {
    let transacted_at = match region {
        "CA" => 1_772_409_600, // 2026-03-02
        _ => 1_777_593_600,    // 2026-05-01
    };
    let body = format!(
        r#"{{"transacted_at": {transacted_at},
           "origin_address": {{"address_province": "OR", "address_postal_code": "97201",
            "address_country": "US"}},
           "customer": {{"address": {{"address_line_1": "", "address_city": "{city}",
            "address_province": "{region}", "address_postal_code": "{zip}",
            "address_country": "US", "address_type": "shipping"}}}},
           "order_details": {{"customer_currency_code": "USD", "tax_included_in_amount": false,
            "line_items": [{{"amount": 10000, "quantity": 1,
                             "product_category": "GENERAL_MERCHANDISE"}}]}}}}"#
    );
    let r = svc.handle(&levy_api::Request {
        method: "POST".into(),
        path: "/tax/calculations".into(),
        query: String::new(),
        // The version that takes `transacted_at`.
        headers: vec![
            ("Authorization".into(), format!("Bearer {TEST_KEY}")),
            ("X-API-Version".into(), "2026-03-01".into()),
        ],
        body: body.into_bytes(),
        request_id: None,
    });
    let get = |name: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    (
        r.status,
        get(levy_api::PLACE_HEADER),
        get(levy_api::COVERAGE_HEADER),
        v,
    )
}

fn default_service() -> levy_api::Service {
    service_over(Arc::new(levy_data::open_default()))
}

#[test]
fn the_city_an_address_names_decides_within_a_shared_zip_code() {
    let svc = default_service();
    // CDTFA, California City & County Sales & Use Tax Rates effective 2026-01-01
    // (data/local/ca-cdtfa-1-1-26.csv): `Bell,9.750%` and `Bell Gardens,10.500%`, both in
    // ZIP 90201. Named Bell: $100.00 x 9.75% = 975 cents; named Bell Gardens: 1050 cents.
    let (status, place, coverage, v) = calculate(&svc, "Bell", "CA", "90201");
    assert_eq!(status, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "975", "{v}");
    assert_eq!(place.as_deref(), Some("CITY_NAMED"));
    assert_eq!(coverage.as_deref(), Some("FULL"));
    let (_, place, _, v) = calculate(&svc, "Bell Gardens", "CA", "90201");
    assert_eq!(n(&v["total_tax_amount"]), "1050", "{v}");
    assert_eq!(place.as_deref(), Some("CITY_NAMED"));
    // Naming none of the ZIP's places: its usual one answers, and the header says that
    // naming the city would decide.
    let (status, place, _, _) = calculate(&svc, "", "CA", "90201");
    assert_eq!(status, 200);
    assert_eq!(place.as_deref(), Some("SHARED_PLACES"));
}

#[test]
fn a_city_tax_comes_only_with_the_named_city_and_the_header_says_so() {
    let svc = default_service();
    // Wisconsin Department of Revenue, City of Milwaukee Sales and Use Taxes (Guidance
    // Document 100315): in the city of Milwaukee 7.9% = state 5% + Milwaukee County 0.9% +
    // city 2%. 53202 is a ZIP USPS names for Milwaukee: named, $100.00 x 7.9% = 790 cents.
    let (status, place, coverage, v) = calculate(&svc, "Milwaukee", "WI", "53202");
    assert_eq!(status, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "790", "{v}");
    assert_eq!(place.as_deref(), Some("CITY_NAMED"));
    assert_eq!(coverage.as_deref(), Some("FULL"));
    // Not named: state and county alone, 5.9% = 590 cents, and the answer says a city tax
    // may apply that it does not hold.
    let (_, place, coverage, v) = calculate(&svc, "", "WI", "53202");
    assert_eq!(n(&v["total_tax_amount"]), "590", "{v}");
    assert_eq!(place.as_deref(), Some("CITY_NOT_NAMED"));
    assert_ne!(coverage.as_deref(), Some("FULL"));
}

#[test]
fn a_zip_code_in_one_place_says_nothing_more() {
    // Florida Department of Revenue, Form DR-15DSS (2026): Miami-Dade County's
    // discretionary sales surtax 1%, over the state's 6% (Fla. Stat. 212.05); the census
    // places 33101 in Miami-Dade alone: $100.00 x 7% = 700 cents.
    let (status, place, _, v) = calculate(&default_service(), "Miami", "FL", "33101");
    assert_eq!(status, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "700", "{v}");
    assert_eq!(place.as_deref(), Some("NONE"));
}
