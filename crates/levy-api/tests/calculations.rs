//! POST /tax/calculations in every version: tax values worked out by hand, version shapes,
//! and validation errors.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn nashville_sale_has_state_and_county_tax() {
    let svc = service();
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{v}");
    // $100.00 = 10000 cents. State 7%: 700. Davidson County 2.25%: 225. Tax 925.
    assert_eq!(n(&v["total_tax_amount"]), "925");
    assert_eq!(n(&v["total_amount_excluding_tax"]), "10000");
    assert_eq!(n(&v["total_amount_including_tax"]), "10925");
    assert_eq!(v["object"], "tax.calculation");
    assert!(
        v["id"].as_str().unwrap().starts_with("calc_") && v["id"].as_str().unwrap().len() == 5 + 32
    );
    assert_eq!(v["testmode"], Value::Bool(true));
    let line = &v["line_items"][0];
    assert_eq!(n(&line["tax_amount"]), "925");
    assert_eq!(line["product"]["product_tax_code"], "GENERAL_MERCHANDISE");
    assert_eq!(line["product"]["reference_line_item_id"], "line-1");
    let j = &line["tax_jurisdictions"];
    assert_eq!(n(&j[0]["tax_rate"]), "0.07");
    assert_eq!(j[0]["rate_type"], "GENERAL STATE SALES TAX");
    assert_eq!(j[0]["jurisdiction_name"], "TENNESSEE");
    assert_eq!(j[0]["note"], "RATE_FRAC");
    assert_eq!(n(&j[1]["tax_rate"]), "0.0225");
    assert_eq!(j[1]["jurisdiction_name"], "DAVIDSON");
    assert!(j[0]["rule_id"].is_u64());
    // 2024-09-01 shape: no later fields.
    for absent in [
        "automatic_tax",
        "address_used",
        "address_resolution_status",
        "location_source",
        "transacted_at",
    ] {
        assert!(
            v.get(absent).is_none(),
            "{absent} must not appear in 2024-09-01"
        );
    }
    assert!(j[0].get("tax_authority_name").is_none() && j[0].get("tax_due_decimal").is_none());
    assert!(line.get("line_item_id").is_none());
    // levy extension: the table hash.
    assert_eq!(v["table_hash"].as_str().unwrap(), svc.table().hash_hex());
    // Valid for 24 hours.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let expires = v["expires_at"].as_i64().unwrap();
    assert!((now + 86_400 - 5..=now + 86_400 + 5).contains(&expires));
}

#[test]
fn food_rule_comes_from_the_child_code_and_county_from_the_parent() {
    let svc = service();
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("2000", "FOOD"),
    );
    assert_eq!(s, 200, "{v}");
    // $20.00: state food 4% = 80; county has no FOOD rule, so general 2.25% = 45. Tax 125.
    assert_eq!(n(&v["total_tax_amount"]), "125");
    assert_eq!(
        v["line_items"][0]["tax_jurisdictions"][0]["rate_type"],
        "STATE FOOD TAX"
    );
}

#[test]
fn tax_included_amounts_split_exactly() {
    let svc = service();
    let body = calc_body("10925", "GENERAL_MERCHANDISE").replace(
        r#""tax_included_in_amount": false"#,
        r#""tax_included_in_amount": true"#,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
    assert_eq!(s, 200, "{v}");
    // 10925 including 9.25% tax: 10925 / 1.0925 = 10000 excluding, 925 tax.
    assert_eq!(v["tax_included_in_amount"], Value::Bool(true));
    assert_eq!(n(&v["total_amount_excluding_tax"]), "10000");
    assert_eq!(n(&v["total_tax_amount"]), "925");
    assert_eq!(n(&v["total_amount_including_tax"]), "10925");
}

#[test]
fn amounts_never_pass_through_binary_floats() {
    let svc = service();
    // Two lines of 0.1 and 0.2 cents: excluding total is exactly 0.3 (0.30000000000000004 in f64).
    let body = r#"{"customer": {"address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}},
        "order_details": {"customer_currency_code": "USD", "line_items": [
            {"amount": 0.1, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"},
            {"amount": 0.2, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}]}}"#;
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, body);
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_amount_excluding_tax"]), "0.3");
    // Tax per line: 0.1 * 0.0925 = 0.00925 and 0.2 * 0.0925 = 0.0185, each rounds to 0.
    assert_eq!(n(&v["total_tax_amount"]), "0");

    // 999999999999999 cents (just under the 10^15 limit), 2026-03-01 for tax_due_decimal:
    // state 999999999999999 * 0.07 = 69999999999999.93; county * 0.0225 = 22499999999999.9775;
    // line tax 92499999999999.9075 rounds half away from zero to 92500000000000.
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &calc_body_v2("999999999999999", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{v}");
    let j = &v["line_items"][0]["tax_jurisdictions"];
    assert_eq!(n(&j[0]["tax_due_decimal"]), "69999999999999.93");
    assert_eq!(n(&j[1]["tax_due_decimal"]), "22499999999999.9775");
    assert_eq!(n(&v["total_tax_amount"]), "92500000000000");
    assert_eq!(n(&v["total_amount_including_tax"]), "1092499999999999");

    // 12345678901234567 is above the limit; the error repeats it digit for digit (an f64
    // would have made it 12345678901234568).
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("12345678901234567", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "number_too_large");
    assert_eq!(v["error"]["error_meta"]["received"], "12345678901234567");
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "order_details.line_items[0].amount"
    );
}

#[test]
fn exempt_customer_owes_nothing() {
    let svc = service();
    let (s, c) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        None,
        r#"{"email": "buyer@example.com", "is_tax_exempt": true}"#,
    );
    assert_eq!(s, 200, "{c}");
    let body = calc_body("10000", "GENERAL_MERCHANDISE").replace(
        r#"{"customer": {"#,
        &format!(r#"{{"customer": {{"id": "{}", "#, c["id"].as_str().unwrap()),
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "0");
    assert_eq!(n(&v["total_amount_including_tax"]), "10000");
    assert_eq!(v["customer"]["id"], c["id"]);
    assert_eq!(
        v["line_items"][0]["tax_jurisdictions"][0]["note"],
        "CUSTOMER_EXEMPT"
    );

    // The same customer id from the live key is unknown there: full tax.
    let (s, v) = post(&svc, "/tax/calculations", LIVE_KEY, None, &body);
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "925");
}

#[test]
fn registered_product_supplies_category_and_name() {
    let svc = service();
    let (s, _) = post(
        &svc,
        "/tax/products",
        TEST_KEY,
        None,
        r#"{"reference_product_id": "shirt", "reference_product_name": "T-shirt", "product_category": "CLOTHING"}"#,
    );
    assert_eq!(s, 200);
    let body = calc_body("5000", "X").replace(
        r#""product_category": "X""#,
        r#""reference_product_id": "shirt""#,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
    assert_eq!(s, 200, "{v}");
    // Clothing inherits general merchandise rates: 5000 * 0.0925 = 462.5, rounds to 463.
    assert_eq!(n(&v["total_tax_amount"]), "463");
    let p = &v["line_items"][0]["product"];
    assert_eq!(p["reference_product_id"], "shirt");
    assert_eq!(p["reference_product_name"], "T-shirt");
    assert_eq!(p["product_tax_code"], "CLOTHING");

    let unknown = calc_body("5000", "X").replace(
        r#""product_category": "X""#,
        r#""reference_product_id": "nope""#,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &unknown);
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "product_not_found");
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "order_details.line_items[0].reference_product_id"
    );
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-01-01"),
        &unknown.replacen('{', &format!("{{{ORIGIN},"), 1),
    );
    assert_eq!(s, 400);
    assert_eq!(flat_type(&v, 400), "PRODUCT_NOT_FOUND");
}

#[test]
fn version_2025_05_12_adds_fields_and_requires_origin() {
    let svc = service();
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2025-05-12"),
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "missing_origin_address");
    assert_eq!(v["error"]["error_meta"]["field"], "origin_address");

    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2025-05-12"),
        &calc_body_v2("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "925");
    assert_eq!(v["customer"]["type"], "CONSUMER");
    assert_eq!(v["automatic_tax"], "auto");
    assert_eq!(v["address_resolution_status"], "POSTAL_ONLY");
    assert_eq!(v["address_used"]["address_postal_code"], "37203");
    assert_eq!(v["address_used"]["address_city"], "NASHVILLE");
    let j = &v["line_items"][0]["tax_jurisdictions"][0];
    assert!(j.get("jurisdiction_name").is_none() && j.get("tax_authority_name").is_none());
    assert!(v.get("location_source").is_none());

    // automatic_tax disabled: always zero.
    let body = calc_body_v2("10000", "GENERAL_MERCHANDISE").replace(r#""auto""#, r#""disabled""#);
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2025-05-12"),
        &body,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "0");

    // automatic_tax is not a field of 2024-09-01.
    let body = calc_body("10000", "GENERAL_MERCHANDISE").replace(
        r#""tax_included_in_amount": false"#,
        r#""automatic_tax": "auto""#,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "unrecognized_field");
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "order_details.automatic_tax"
    );
}

#[test]
fn version_2026_01_01_has_authority_fields_and_flat_errors() {
    let svc = service();
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-01-01"),
        &calc_body_v2("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{v}");
    let j = &v["line_items"][0]["tax_jurisdictions"];
    assert_eq!(
        j[0]["tax_authority_name"],
        "TENNESSEE DEPARTMENT OF REVENUE"
    );
    assert_eq!(j[0]["tax_authority_type"], "STATE");
    assert_eq!(j[1]["tax_authority_type"], "COUNTY");
    assert_eq!(j[0]["tax_type"], "SALES");

    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, Some("2026-01-01"), "{");
    assert_eq!(s, 400);
    assert_eq!(flat_type(&v, 400), "INVALID_JSON");
    assert_eq!(
        v.as_object().unwrap().len(),
        3,
        "flat errors are exactly code, type, message: {v}"
    );
}

#[test]
fn version_2026_03_01_ip_resolution() {
    let svc = service();
    let body = |ip: &str, mode: &str| {
        format!(
            r#"{{"customer": {{"ip": {{"value": "{ip}", "resolution": "{mode}"}}, "fallback_type": "BUSINESS"}},
               "order_details": {{"customer_currency_code": "USD",
                 "line_items": [{{"amount": 10000, "quantity": 2, "product_category": "GENERAL_MERCHANDISE"}}]}},
               "transacted_at": 1772323200, {ORIGIN}}}"#
        )
    };
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("10.0.0.7", "strict"),
    );
    assert_eq!(s, 200, "{v}");
    // 10.0.0.7 is Nashville 37203: 10000 * 0.0925 = 925.
    assert_eq!(n(&v["total_tax_amount"]), "925");
    assert_eq!(v["location_source"], "ip");
    assert_eq!(v["resolution_precision"], "POSTAL");
    assert_eq!(v["transacted_at"], 1772323200);
    // No customer.id: the fallback type applies.
    assert_eq!(v["customer"]["type"], "BUSINESS");
    let line = &v["line_items"][0];
    assert!(line["line_item_id"].as_str().unwrap().starts_with("li_"));
    assert_eq!(line["quantity"], 2);
    // tax_due_decimal appears from 2026-03-01: 10000 * 0.07 = 700.
    assert_eq!(n(&line["tax_jurisdictions"][0]["tax_due_decimal"]), "700");

    // A US IP with no postal code: strict is a 422, zero answers zero tax,
    // approximate uses the state's most populous postal code (37203).
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("10.0.1.1", "strict"),
    );
    assert_eq!(s, 422);
    assert_eq!(flat_type(&v, 422), "IP_RESOLUTION_INSUFFICIENT_US");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("10.0.1.1", "zero"),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "0");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("10.0.1.1", "approximate"),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(n(&v["total_tax_amount"]), "925");
    assert_eq!(v["resolution_precision"], "APPROXIMATED");
    // Unknown IP (the table places nothing in 198.51.100.0/24): 422 IP_RESOLUTION_FAILED;
    // not an IP: 400 INVALID_IP_FORMAT.
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("198.51.100.1", "strict"),
    );
    assert_eq!(
        (s, flat_type(&v, 422).as_str()),
        (422, "IP_RESOLUTION_FAILED")
    );
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-03-01"),
        &body("10.0.0.300", "strict"),
    );
    assert_eq!((s, flat_type(&v, 400).as_str()), (400, "INVALID_IP_FORMAT"));
    // customer.ip does not exist before 2026-03-01.
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-01-01"),
        &body("10.0.0.7", "strict"),
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "UNRECOGNIZED_FIELD")
    );
}

#[test]
fn currencies_by_version() {
    let svc = service();
    let eur = calc_body("100", "GENERAL_MERCHANDISE").replace("USD", "EUR");
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &eur);
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "unsupported_currency");
    let cad = calc_body("100", "GENERAL_MERCHANDISE").replace("USD", "CAD");
    assert_eq!(post(&svc, "/tax/calculations", TEST_KEY, None, &cad).0, 200);
    let eur2 = calc_body_v2("100", "GENERAL_MERCHANDISE").replace("USD", "EUR");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2025-05-12"),
        &eur2,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["customer_currency_code"], "EUR");
    let xxx = calc_body_v2("100", "GENERAL_MERCHANDISE").replace("USD", "XXX");
    assert_eq!(
        post(
            &svc,
            "/tax/calculations",
            TEST_KEY,
            Some("2025-05-12"),
            &xxx
        )
        .0,
        400
    );
}

#[test]
fn address_errors_name_the_field() {
    let svc = service();
    let mismatch = calc_body("100", "GENERAL_MERCHANDISE").replace(r#""TN""#, r#""KY""#);
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &mismatch);
    assert_eq!(s, 400);
    assert_eq!(old_code(&v), "zip_state_mismatch");
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "customer.address.address_postal_code"
    );
    let country = calc_body("100", "GENERAL_MERCHANDISE")
        .replace(r#""address_country": "US""#, r#""address_country": "USA""#);
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        Some("2026-01-01"),
        &country.replacen('{', &format!("{{{ORIGIN},"), 1),
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "INVALID_COUNTRY_CODE")
    );
    let bad_zip = calc_body("100", "GENERAL_MERCHANDISE").replace("37203", "3720");
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &bad_zip);
    assert_eq!((s, old_code(&v).as_str()), (400, "malformed_address"));
}

#[test]
fn bad_input_gets_the_right_error() {
    let svc = service();
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"amount": 100, "quantity": -1, "product_category": "GENERAL_MERCHANDISE"}"#,
            "positive_number_required",
            "order_details.line_items[0].quantity",
        ),
        (
            r#"{"amount": 100, "quantity": 0, "product_category": "GENERAL_MERCHANDISE"}"#,
            "positive_number_required",
            "order_details.line_items[0].quantity",
        ),
        (
            r#"{"amount": -5, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}"#,
            "positive_number_required",
            "order_details.line_items[0].amount",
        ),
        (
            r#"{"amount": "100", "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}"#,
            "incorrect_type",
            "order_details.line_items[0].amount",
        ),
        (
            r#"{"amount": 100, "quantity": 1.5, "product_category": "GENERAL_MERCHANDISE"}"#,
            "incorrect_type",
            "order_details.line_items[0].quantity",
        ),
        (
            r#"{"quantity": 1, "product_category": "GENERAL_MERCHANDISE"}"#,
            "missing_field",
            "order_details.line_items[0].amount",
        ),
        (
            r#"{"amount": 100, "quantity": 1}"#,
            "missing_field",
            "order_details.line_items[0].product_category",
        ),
        (
            r#"{"amount": 100, "quantity": 1, "product_category": "NOT_A_CATEGORY"}"#,
            "invalid_product_category",
            "order_details.line_items[0].product_category",
        ),
        (
            r#"{"amount": 100, "quantity": 1, "product_category": "GENERAL_MERCHANDISE", "colour": "red"}"#,
            "unrecognized_field",
            "order_details.line_items[0].colour",
        ),
    ];
    for (line, code, field) in cases {
        let body = format!(
            r#"{{"customer": {{"address": {{"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}},
               "order_details": {{"customer_currency_code": "USD", "line_items": [{line}]}}}}"#
        );
        let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
        assert_eq!(s, 400, "{line}: {v}");
        assert_eq!(old_code(&v), *code, "{line}: {v}");
        assert_eq!(v["error"]["error_meta"]["field"], *field, "{line}");
    }
    // Missing customer, wrong type of customer, oversize metadata value, malformed JSON.
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        r#"{"order_details": {}}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "missing_field"));
    assert_eq!(v["error"]["error_meta"]["field"], "customer");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        r#"{"customer": "me", "order_details": {}}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "incorrect_type"));
    assert_eq!(v["error"]["error_meta"]["received"], "\"me\"");
    let long = "x".repeat(255);
    let body = calc_body("100", "GENERAL_MERCHANDISE").replacen(
        '{',
        &format!(r#"{{"metadata": {{"note": "{long}"}},"#),
        1,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &body);
    assert_eq!((s, old_code(&v).as_str()), (400, "string_too_long"));
    let ok = calc_body("100", "GENERAL_MERCHANDISE").replacen(
        '{',
        &format!(r#"{{"metadata": {{"note": "{}", "n": 5}},"#, &long[1..]),
        1,
    );
    let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, &ok);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["metadata"]["n"], 5);
    for garbage in ["", "[]", "{\"customer\": ", "nul", "\u{0}"] {
        let (s, v) = post(&svc, "/tax/calculations", TEST_KEY, None, garbage);
        assert_eq!(
            (s, old_code(&v).as_str()),
            (400, "invalid_json"),
            "{garbage:?}"
        );
    }
}

fn coverage_header(svc: &levy_api::Service, body: &str) -> (u16, Option<String>) {
    let r = svc.handle(&levy_api::Request {
        method: "POST".into(),
        path: "/tax/calculations".into(),
        query: String::new(),
        headers: vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))],
        body: body.as_bytes().to_vec(),
        request_id: None,
    });
    let h = r
        .headers
        .iter()
        .find(|(k, _)| k == levy_api::COVERAGE_HEADER)
        .map(|(_, v)| v.clone());
    (r.status, h)
}

#[test]
fn every_calculation_says_whether_local_taxes_are_covered() {
    // The fixture table names Nashville's county (ZIP 37203 -> state and Davidson), so the
    // answer is complete.
    let svc = service();
    let body = calc_body("10000", "GENERAL_MERCHANDISE");
    assert_eq!(coverage_header(&svc, &body), (200, Some("FULL".into())));
    // The embedded default holds Davidson County's rate, whose cities levy no more
    // (data/local/us/TN.toml): FULL there too. It holds no rate of Shelby County: the same
    // sale in Memphis says STATE_ONLY (Tennessee has county and city taxes everywhere).
    let default = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ":memory:".into(),
        keys: keys(),
    })
    .unwrap();
    assert_eq!(coverage_header(&default, &body), (200, Some("FULL".into())));
    let memphis = body
        .replace("37203", "38103")
        .replace("NASHVILLE", "MEMPHIS");
    assert_eq!(
        coverage_header(&default, &memphis),
        (200, Some("STATE_ONLY".into()))
    );
    // An error carries no coverage: nothing was calculated.
    let (status, h) = coverage_header(&svc, "{}");
    assert_eq!((status, h), (400, None));
}

#[test]
fn a_table_file_changed_in_one_byte_is_refused_at_open() {
    // levy-api opens table files through the one loader, which verifies the content hash:
    // a copy with one byte of its archive changed is an error naming the mismatch, never a
    // service that answers from it.
    let dir = levy_testkit::TempDir::new("levy-api-damaged");
    let good = dir.join("good.levy");
    let bad = dir.join("bad.levy");
    let bytes = table().bytes().to_vec();
    std::fs::write(&good, &bytes).unwrap();
    let mut damaged = bytes.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x08;
    std::fs::write(&bad, &damaged).unwrap();
    let open = |path: &std::path::Path| {
        levy_api::Service::open(levy_api::ServiceConfig {
            table: levy_api::TableSource::Path(path.to_path_buf()),
            ledger: ":memory:".into(),
            keys: keys(),
        })
    };
    let svc = open(&good).unwrap();
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    // The same fixture as `nashville_sale_has_state_and_county_tax`: 700 + 225 = 925.
    assert_eq!((s, n(&v["total_tax_amount"])), (200, "925".to_string()));
    let Err(e) = open(&bad) else {
        panic!("a damaged table must be refused");
    };
    assert_eq!(e.status(), 500);
    assert!(e.message.contains("content hash mismatch"), "{}", e.message);
}

#[test]
fn an_intrastate_sale_is_sourced_by_the_states_rule_and_says_so() {
    // The embedded default holds California's CDTFA rates. From San Jose (95132) to
    // Mountain View (94043), California's modified origin rule takes the state and uniform
    // local tax (6% + 1.25%) from the origin and the district taxes from the destination
    // (Mountain View 1.875%, CDTFA list of 2026-01-01): 9.125% of $100.00 = 9.13.
    let svc = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ":memory:".into(),
        keys: keys(),
    })
    .unwrap();
    let body = |origin_zip: &str, origin_state: &str| {
        format!(
            r#"{{"customer": {{"address": {{"address_province": "CA", "address_postal_code": "94043",
                "address_country": "US"}}}},
               "order_details": {{"customer_currency_code": "USD", "line_items": [{{"amount": 10000,
                "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}}]}},
               "transacted_at": 1772323200,
               "origin_address": {{"address_province": "{origin_state}", "address_postal_code": "{origin_zip}",
                "address_country": "US"}}}}"#
        )
    };
    let call = |body: String| {
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
        let h = r
            .headers
            .iter()
            .find(|(k, _)| k == levy_api::SOURCING_HEADER)
            .map(|(_, v)| v.clone());
        (r.status, v, h)
    };
    let (s, v, h) = call(body("95132", "CA"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(h.as_deref(), Some("MODIFIED_ORIGIN"));
    assert_eq!(v["total_tax_amount"], 913);
    // Shipped from Tennessee: a sale between states, taxed at the destination.
    let (_, v, h) = call(body("37203", "TN"));
    assert_eq!(h.as_deref(), Some("DESTINATION"));
    assert_eq!(v["total_tax_amount"], 913);
    // An origin known only by its state resolves to the state: the same rule applies.
    let (_, _, h) = call(body("00000", "CA"));
    assert_eq!(h.as_deref(), Some("MODIFIED_ORIGIN"));
    // An origin that cannot be resolved (no such ZIP or state) leaves the destination's
    // answer and says why.
    let (_, v, h) = call(body("99999", "XX"));
    assert_eq!(h.as_deref(), Some("DESTINATION; origin-unresolved"));
    assert_eq!(v["total_tax_amount"], 913);
}

#[test]
fn invoice_rounding_is_asked_for_by_header_and_applied_where_allowed() {
    // Ohio (a Streamlined state, SSUTA s. 324) on the embedded default: Columbus 43215 in
    // Franklin County, 5.75% state + 2.25% county = 8% (Ohio Department of Taxation, 2025
    // 2nd quarter rate changes: Franklin 8% from 2025-04-01). Three 10-cent lines owe 0.8
    // cents each. Line by line 1 + 1 + 1 = 3 cents; once for the invoice 2.4 -> 2 cents.
    let svc = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ":memory:".into(),
        keys: keys(),
    })
    .unwrap();
    let body = r#"{"customer": {"address": {"address_province": "OH", "address_postal_code": "43215",
        "address_country": "US"}},
       "order_details": {"customer_currency_code": "USD", "line_items": [
        {"amount": 10, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"},
        {"amount": 10, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"},
        {"amount": 10, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}]}}"#;
    let call = |rounding: Option<&str>| {
        let mut headers = vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))];
        if let Some(r) = rounding {
            headers.push((levy_api::ROUNDING_HEADER.to_string(), r.to_string()));
        }
        let r = svc.handle(&levy_api::Request {
            method: "POST".into(),
            path: "/tax/calculations".into(),
            query: String::new(),
            headers,
            body: body.as_bytes().to_vec(),
            request_id: None,
        });
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        let h = r
            .headers
            .iter()
            .find(|(k, _)| k == levy_api::ROUNDING_HEADER)
            .map(|(_, v)| v.clone());
        (r.status, v, h)
    };
    let (s, v, h) = call(None);
    assert_eq!((s, h.as_deref()), (200, Some("LINE")), "{v}");
    assert_eq!(v["total_tax_amount"], 3);
    let (s, v, h) = call(Some("invoice"));
    assert_eq!((s, h.as_deref()), (200, Some("INVOICE")), "{v}");
    assert_eq!(v["total_tax_amount"], 2);
    let (s, v, _) = call(Some("per-cent"));
    assert_eq!(s, 400, "{v}");
    // The error's type as this version spells it (`invalid_header` before 2026-01-01).
    assert!(
        v.to_string()
            .to_ascii_uppercase()
            .contains("INVALID_HEADER"),
        "{v}"
    );
}

#[test]
fn transacted_at_and_metadata_are_bounded() {
    let svc = service();
    let v = Some("2026-03-01");
    let with = |extra: &str| {
        let body = calc_body_v2("10000", "GENERAL_MERCHANDISE");
        // Insert `extra` as a top-level field.
        format!("{{{extra}, {}", &body[1..])
    };
    // -2^63 was accepted as a sale date.
    let (s, e) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(r#""transacted_at": -9223372036854775808"#),
    );
    assert_eq!(s, 400, "{e}");
    assert_eq!(flat_type(&e, 400), "POSITIVE_NUMBER_REQUIRED");
    // One second after 9999-12-31T23:59:59Z (253402300799).
    let (s, e) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(r#""transacted_at": 253402300800"#),
    );
    assert_eq!(s, 400, "{e}");
    assert_eq!(flat_type(&e, 400), "NUMBER_TOO_LARGE");
    // 2026-03-01T00:00:00Z = 1772323200 is answered: 700 + 225 (7% and 2.25% of 10000).
    let (s, ok) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(r#""transacted_at": 1772323200"#),
    );
    assert_eq!(s, 200, "{ok}");
    assert_eq!(n(&ok["total_tax_amount"]), "925");

    // Metadata: at most 50 keys, keys (like values) shorter than 255 characters.
    let keys: Vec<String> = (0..51).map(|i| format!(r#""k{i}": "v""#)).collect();
    let (s, e) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(&format!(r#""metadata": {{{}}}"#, keys.join(","))),
    );
    assert_eq!(s, 400, "{e}");
    assert_eq!(flat_type(&e, 400), "TOO_MANY_ITEMS");
    let (s, e) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(&format!(r#""metadata": {{"{}": "v"}}"#, "k".repeat(300))),
    );
    assert_eq!(s, 400, "{e}");
    assert_eq!(flat_type(&e, 400), "STRING_TOO_LONG");
    let (s, ok) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        v,
        &with(&format!(r#""metadata": {{{}}}"#, keys[..50].join(","))),
    );
    assert_eq!(s, 200, "{ok}");
}
