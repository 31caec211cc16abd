//! Registrations (a levy extension): where an account, or a merchant, collects. Run on the
//! SQLite ledger, and on PostgreSQL under `LEVY_TEST_LEDGER=postgres`.
//!
//! The fixture (tests/common, levy-testkit's Tennessee table): Nashville 37203 is taxed by
//! Tennessee (jurisdiction 47) at 7% and Davidson County (47037) at 2.25% on general
//! merchandise; the table knows no other state. So a $100.00 line (10000 cents) owes
//! 700 + 225 = 925 cents where the account collects, and 0 where it does not.

mod common;
use common::*;
use levy_api::{
    ErrorKind, NewRegistration, RegistrationFilter, RegistrationKind, Service,
    NO_COLLECTION_RATE_TYPE,
};
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");

/// 2026-03-15T00:00:00Z, a mid-month day.
const MARCH_15: i64 = 1_773_532_800;
/// 2026-03-14T12:00:00Z, half a day before it.
const MARCH_14_NOON: i64 = 1_773_489_600;
/// 2026-03-16T00:00:00Z.
const MARCH_16: i64 = 1_773_619_200;
/// 2026-03-20T00:00:00Z.
const MARCH_20: i64 = 1_773_964_800;
/// 2026-03-21T00:00:00Z.
const MARCH_21: i64 = 1_774_051_200;

fn register(svc: &Service, key: &str, body: Value) -> Value {
    let (s, r) = post(svc, "/tax/registrations", key, V3, &body.to_string());
    assert_eq!(s, 200, "{r}");
    r
}

/// A $100.00 sale in Nashville on `at` (Unix seconds), in API version 2026-03-01.
fn calc_at(svc: &Service, key: &str, at: i64) -> Value {
    let body = json!({
        "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                 "address_country": "US"}},
        "order_details": {"customer_currency_code": "USD", "automatic_tax": "auto",
                          "line_items": [{"amount": 10000, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE"}]},
        "origin_address": {"address_province": "TN", "address_postal_code": "37203",
                           "address_country": "US"},
        "transacted_at": at,
    });
    let (s, c) = post(svc, "/tax/calculations", key, V3, &body.to_string());
    assert_eq!(s, 200, "{c}");
    c
}

fn entries(c: &Value) -> &Vec<Value> {
    c["line_items"][0]["tax_jurisdictions"].as_array().unwrap()
}

#[test]
fn an_account_without_registrations_collects_everywhere_as_before() {
    let svc = service();
    // Another account's and the other mode's registrations change nothing for shop live.
    register(
        &svc,
        OTHER_LIVE_KEY,
        json!({"country": "US", "region": "TX"}),
    );
    register(&svc, TEST_KEY, json!({"country": "US", "region": "TX"}));
    let c = calc_at(&svc, LIVE_KEY, MARCH_15);
    // 7% of 10000 = 700 (state), 2.25% = 225 (Davidson County).
    assert_eq!(n(&c["total_tax_amount"]), "925");
    let rates: Vec<String> = entries(&c)
        .iter()
        .map(|e| e["rate_type"].to_string())
        .collect();
    assert!(
        rates.iter().all(|r| !r.contains("NO COLLECTION")),
        "{rates:?}"
    );
    // The test key is gated: registered in Texas only.
    assert_eq!(
        n(&calc_at(&svc, TEST_KEY, MARCH_15)["total_tax_amount"]),
        "0"
    );
}

#[test]
fn registrations_gate_collection_and_the_transaction_records_zero_tax() {
    let svc = service();
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "us", "region": "tx", "active_from": 1_700_000_000}),
    );
    // Registered in Texas only: Tennessee's entries stay, at zero, saying why.
    let c = calc_at(&svc, LIVE_KEY, MARCH_15);
    assert_eq!(n(&c["total_tax_amount"]), "0");
    assert_eq!(n(&c["total_amount_including_tax"]), "10000");
    let es = entries(&c);
    assert_eq!(es.len(), 2, "{c}");
    for e in es {
        assert_eq!(e["rate_type"], NO_COLLECTION_RATE_TYPE);
        assert_eq!(n(&e["tax_rate"]), "0");
        assert_eq!(n(&e["tax_due_decimal"]), "0");
        assert!(e.get("exemption_certificate_id").is_none(), "{e}");
    }
    assert_eq!(
        es[0]["note"],
        "NOT_REGISTERED: not registered in US-TN on 2026-03-15"
    );
    assert_eq!(
        es[1]["note"],
        "NOT_REGISTERED: not registered with DAVIDSON (47037) in US-TN on 2026-03-15"
    );
    // Recorded as sold: zero tax on the transaction.
    let (s, tx) = post(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        V3,
        &json!({"calculation_id": c["id"], "reference_order_id": "o-1"}).to_string(),
    );
    assert_eq!(s, 200, "{tx}");
    let line = &tx["line_items"][0];
    assert_eq!(n(&line["tax_amount"]), "0");
    assert_eq!(
        line["tax_jurisdictions"][0]["rate_type"],
        NO_COLLECTION_RATE_TYPE
    );
    // Registered in Tennessee too: collected again, 925.
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TN", "active_from": 1_700_000_000}),
    );
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_15)["total_tax_amount"]),
        "925"
    );
    // automatic_tax disabled is zero as ever, for its own reason.
    let body = calc_body_v2("10000", "GENERAL_MERCHANDISE").replace("\"auto\"", "\"disabled\"");
    let (s, c) = post(&svc, "/tax/calculations", LIVE_KEY, V3, &body);
    assert_eq!(s, 200, "{c}");
    assert_eq!(entries(&c)[0]["note"], "AUTOMATIC_TAX_DISABLED");
}

#[test]
fn a_registration_from_mid_month_applies_from_its_day_and_history_survives_its_expiry() {
    let svc = service();
    let r = register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TN", "active_from": MARCH_15, "type": "sales_tax"}),
    );
    assert_eq!(r["object"], "tax.registration");
    assert_eq!(r["active_from"], MARCH_15);
    assert_eq!(r["expires_at"], Value::Null);
    assert_eq!(r["local_jurisdictions"], json!([]));
    // The day before: not yet registered, zero.
    let before = calc_at(&svc, LIVE_KEY, MARCH_14_NOON);
    assert_eq!(n(&before["total_tax_amount"]), "0");
    assert_eq!(
        entries(&before)[0]["note"],
        "NOT_REGISTERED: not registered in US-TN on 2026-03-14"
    );
    // On the day, from its first second: 925.
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_15)["total_tax_amount"]),
        "925"
    );
    // Expired from the 20th: a sale of the 21st is zero, one of the 16th still 925.
    let id = r["id"].as_str().unwrap();
    let (s, e) = post(
        &svc,
        &format!("/tax/registrations/{id}/expire"),
        LIVE_KEY,
        V3,
        &json!({"expires_at": MARCH_20}).to_string(),
    );
    assert_eq!(s, 200, "{e}");
    assert_eq!(e["expires_at"], MARCH_20);
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_21)["total_tax_amount"]),
        "0"
    );
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_16)["total_tax_amount"]),
        "925"
    );
    // It is still listed, expired (the 20th of March 2026 is past): never deleted.
    let (s, got) = get(&svc, &format!("/tax/registrations/{id}"), LIVE_KEY, V3);
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["status"], "expired");
    // Expiring it again: 409 REGISTRATION_ALREADY_EXPIRED.
    let (s, again) = post(
        &svc,
        &format!("/tax/registrations/{id}/expire"),
        LIVE_KEY,
        V3,
        "",
    );
    assert_eq!(flat_type(&again, s), "REGISTRATION_ALREADY_EXPIRED");
    assert_eq!(s, 409);
}

#[test]
fn local_jurisdictions_limit_the_locals_collected() {
    let svc = service();
    // Registered with Tennessee and the city of Nashville only: the state's 700 is
    // collected, Davidson County's 225 is not.
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TN", "active_from": 0,
               "local_jurisdictions": ["4752006"]}),
    );
    let c = calc_at(&svc, LIVE_KEY, MARCH_15);
    assert_eq!(n(&c["total_tax_amount"]), "700");
    let es = entries(&c);
    assert_eq!(es[0]["rate_type"], "GENERAL STATE SALES TAX");
    assert_eq!(es[1]["rate_type"], NO_COLLECTION_RATE_TYPE);
    // A second registration listing Davidson County brings it back: 925.
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TN", "active_from": 0,
               "local_jurisdictions": ["47037"]}),
    );
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_15)["total_tax_amount"]),
        "925"
    );
}

#[test]
fn a_retail_delivery_fee_registration_does_not_gate_sales_tax() {
    let svc = service();
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "CO", "type": "retail_delivery_fee"}),
    );
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_15)["total_tax_amount"]),
        "925"
    );
}

#[test]
fn platform_calculations_follow_the_merchants_registrations() {
    let svc = service();
    let (s, m) = post(
        &svc,
        "/tax/merchants",
        LIVE_KEY,
        V3,
        r#"{"reference_merchant_id": "m-1", "name": "Corner Shop",
            "default_address": {"address_province": "TN", "address_postal_code": "37203",
                                "address_country": "US"}}"#,
    );
    assert_eq!(s, 200, "{m}");
    let body = json!({
        "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                 "address_country": "US"}},
        "merchant": {"merchant_id": "m-1"},
        "order_details": {"customer_currency_code": "USD",
                          "line_items": [{"amount": 10000, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE"}]},
        "roles": ["marketplace_provider"],
        "transacted_at": MARCH_15,
    })
    .to_string();
    let platform = |svc: &Service| {
        let (s, c) = post(svc, "/tax/platform/calculations", LIVE_KEY, V3, &body);
        assert_eq!(s, 200, "{c}");
        n(&c["totals"]["order"]["tax_amount"])
    };
    // The account registered in Texas only: its own sales are gated, the merchant's not
    // (the merchant has no registration): 925.
    register(&svc, LIVE_KEY, json!({"country": "US", "region": "TX"}));
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_15)["total_tax_amount"]),
        "0"
    );
    assert_eq!(platform(&svc), "925");
    // The merchant registered in Texas only: zero.
    let r = register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TX", "merchant_id": "m-1"}),
    );
    assert_eq!(r["merchant_id"], m["id"]);
    assert_eq!(platform(&svc), "0");
    // And in Tennessee from 2026-03-01: 925 again.
    register(
        &svc,
        LIVE_KEY,
        json!({"country": "US", "region": "TN", "merchant_id": "m-1", "active_from": 1_772_323_200}),
    );
    assert_eq!(platform(&svc), "925");
}

#[test]
fn registrations_are_checked_listed_and_kept_apart_by_mode() {
    let svc = service();
    let refused = |body: Value| {
        let (s, e) = post(&svc, "/tax/registrations", LIVE_KEY, V3, &body.to_string());
        (s, flat_type(&e, s))
    };
    assert_eq!(
        refused(json!({"country": "XX", "region": "TX"})),
        (400, "INVALID_COUNTRY_CODE".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "ON"})),
        (400, "INVALID_REGION".into())
    );
    assert_eq!(
        refused(json!({"country": "CA", "region": ""})),
        (400, "INVALID_REGION".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "TX", "type": "vat"})),
        (400, "INCORRECT_TYPE".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "TX", "active_from": 100, "expires_at": 100})),
        (400, "INVALID_EXPIRY".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "TX", "active_from": -1})),
        (400, "POSITIVE_NUMBER_REQUIRED".into())
    );
    assert_eq!(
        refused(json!({"country": "US"})),
        (400, "MISSING_FIELD".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "TX", "colour": "red"})),
        (400, "UNRECOGNIZED_FIELD".into())
    );
    assert_eq!(
        refused(json!({"country": "US", "region": "TX", "merchant_id": "nobody"})),
        (404, "MERCHANT_NOT_FOUND".into())
    );
    assert_eq!(
        refused(
            json!({"country": "US", "region": "TX", "local_jurisdictions": ["47037", "47037"]})
        ),
        (400, "INCORRECT_TYPE".into())
    );
    // The older error format names the code in lower case.
    let (s, e) = post(
        &svc,
        "/tax/registrations",
        LIVE_KEY,
        None,
        r#"{"country": "US", "region": "ZZ"}"#,
    );
    assert_eq!((s, old_code(&e)), (400, "invalid_region".to_string()));

    // 51 registrations: a page of 50, then 1.
    let mut ids = Vec::new();
    for i in 0..51 {
        let region = if i % 2 == 0 { "TX" } else { "TN" };
        let r = register(
            &svc,
            LIVE_KEY,
            json!({"country": "US", "region": region, "active_from": 1_000 + i}),
        );
        ids.push(r["id"].as_str().unwrap().to_string());
    }
    // Listed by id; ids made in the same millisecond differ in their random part.
    ids.sort();
    let (s, page) = get(&svc, "/tax/registrations", LIVE_KEY, V3);
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["object"], "list");
    assert_eq!(page["registrations"].as_array().unwrap().len(), 50);
    assert_eq!(page["has_more"], true);
    assert_eq!(page["last_registration_id"], ids[49].as_str());
    let (_, rest) = get(
        &svc,
        &format!("/tax/registrations?cursor={}", ids[49]),
        LIVE_KEY,
        V3,
    );
    assert_eq!(rest["registrations"].as_array().unwrap().len(), 1);
    assert_eq!(rest["has_more"], false);
    // Filtered: 26 in Texas (i even, 0..=50), 25 in Tennessee, none in Canada.
    let count = |query: &str| {
        let (s, l) = get(&svc, &format!("/tax/registrations?{query}"), LIVE_KEY, V3);
        assert_eq!(s, 200, "{l}");
        l["registrations"].as_array().unwrap().len()
    };
    assert_eq!(count("country=US&region=tx"), 26);
    assert_eq!(count("country=US&region=TN"), 25);
    assert_eq!(count("country=CA"), 0);
    let (s, e) = get(&svc, "/tax/registrations?region=TX", LIVE_KEY, V3);
    assert_eq!(
        (s, flat_type(&e, s)),
        (400, "INVALID_QUERY_PARAMETER".into())
    );
    // The test mode sees none of them; a live registration is not found with a test key.
    let (_, test) = get(&svc, "/tax/registrations", TEST_KEY, V3);
    assert_eq!(test["registrations"], json!([]));
    let (s, e) = get(
        &svc,
        &format!("/tax/registrations/{}", ids[0]),
        TEST_KEY,
        V3,
    );
    assert_eq!(
        (s, flat_type(&e, s)),
        (404, "REGISTRATION_NOT_FOUND".into())
    );
    // Expiry rules: not at or before active_from (1000), not later than it has.
    let path = format!("/tax/registrations/{}/expire", ids[0]);
    let expire = |at: i64| {
        let (s, e) = post(
            &svc,
            &path,
            LIVE_KEY,
            V3,
            &json!({"expires_at": at}).to_string(),
        );
        (s, e)
    };
    let (s, e) = expire(1_000);
    assert_eq!((s, flat_type(&e, s)), (400, "INVALID_EXPIRY".into()));
    let (s, e) = expire(4_000_000_000);
    assert_eq!(s, 200, "{e}");
    assert_eq!(e["status"], "active");
    let (s, e) = expire(4_100_000_000);
    assert_eq!((s, flat_type(&e, s)), (400, "INVALID_EXPIRY".into()));
    let (s, e) = expire(3_000_000_000);
    assert_eq!(s, 200, "{e}");
    assert_eq!(e["expires_at"], 3_000_000_000i64);
    let (s, e) = post(&svc, "/tax/registrations/reg_nope/expire", LIVE_KEY, V3, "");
    assert_eq!(
        (s, flat_type(&e, s)),
        (404, "REGISTRATION_NOT_FOUND".into())
    );
    // A field name holding NUL is refused as such, and the answer does not repeat it.
    let (s, e) = post(&svc, &path, LIVE_KEY, V3, r#"{"\u0000v": null}"#);
    assert_eq!((s, flat_type(&e, s)), (400, "INVALID_CHARACTER".into()));
    assert!(!e["message"].as_str().unwrap().contains('\0'), "{e}");
}

#[test]
fn the_rust_api_adds_lists_and_expires_registrations() {
    let svc = service();
    let new = NewRegistration {
        merchant_id: None,
        country: "US".into(),
        region: "TX".into(),
        local_jurisdictions: Vec::new(),
        kind: RegistrationKind::SalesTax,
        active_from: Some(MARCH_15),
        expires_at: None,
    };
    let r = svc.add_registration("shop", true, &new).unwrap();
    assert!(r.id.starts_with("reg_"), "{}", r.id);
    // Registered in Texas only, from the 15th: Tennessee is not collected.
    assert_eq!(
        n(&calc_at(&svc, LIVE_KEY, MARCH_16)["total_tax_amount"]),
        "0"
    );
    let listed = svc
        .registrations("shop", true, &RegistrationFilter::default())
        .unwrap();
    assert_eq!(listed, vec![r.clone()]);
    assert!(svc
        .registrations("shop", false, &RegistrationFilter::default())
        .unwrap()
        .is_empty());
    let expired = svc
        .expire_registration("shop", true, &r.id, Some(MARCH_16))
        .unwrap();
    assert_eq!(expired.expires_at, Some(MARCH_16));
    assert_eq!(svc.registration("shop", true, &r.id).unwrap(), expired);
    let e = svc
        .expire_registration("shop", true, &r.id, None)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::RegistrationAlreadyExpired);
    let e = svc.add_registration("nobody", true, &new).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAccount);
    let bad = NewRegistration {
        region: "QC".into(),
        ..new
    };
    assert_eq!(
        svc.add_registration("shop", true, &bad).unwrap_err().kind,
        ErrorKind::InvalidRegion
    );
}
