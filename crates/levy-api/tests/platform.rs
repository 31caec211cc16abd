//! Platform calculations and transactions: per-unit amounts, fees, roles, refunds, nexus,
//! versions, modes and accounts.
//!
//! The fixture (tests/common): Nashville 37203 is Tennessee 7% state + Davidson County
//! 2.25%; FOOD is taxed 4% by the state and 2.25% by the county. Amounts are cents; a
//! line's tax is the sum of its jurisdictions' tax, rounded half away from zero once.

mod common;
use common::*;
use levy_api::Service;
use rust_decimal::Decimal;
use serde_json::{json, Value};

const V1: Option<&str> = Some("2026-01-01");
const V3: Option<&str> = Some("2026-03-01");

fn merchant(svc: &Service, key: &str, reference: &str) -> Value {
    let (s, m) = post(
        svc,
        "/tax/merchants",
        key,
        V1,
        &format!(
            r#"{{"reference_merchant_id": "{reference}", "name": "Corner Shop",
                "default_address": {{"address_line_1": "1 Main St", "address_city": "NASHVILLE",
                  "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}}"#
        ),
    );
    assert_eq!(s, 200, "{m}");
    m
}

/// Two order lines and two fee lines, with the given roles.
fn calc_body(merchant: &str, roles: &str) -> String {
    format!(
        r#"{{"customer": {{"address": {{"address_line_1": "", "address_city": "NASHVILLE",
              "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}},
           "merchant": {{"merchant_id": "{merchant}"}},
           "order_details": {{"customer_currency_code": "USD", "tax_included_in_amount": false,
             "line_items": [
               {{"amount": 1999, "quantity": 3, "product_category": "GENERAL_MERCHANDISE", "reference_line_item_id": "line-a"}},
               {{"amount": 250, "quantity": 4, "product_category": "FOOD", "reference_line_item_id": "line-b"}}]}},
           "fee_details": {{"line_items": [
               {{"amount": 300, "reference_line_item_id": "fee-1"}},
               {{"amount": 100, "quantity": 2, "product_category": "FOOD", "reference_line_item_id": "fee-2"}}]}},
           "roles": {roles}}}"#
    )
}

fn platform_calc(
    svc: &Service,
    key: &str,
    version: Option<&str>,
    merchant: &str,
    roles: &str,
) -> Value {
    let (s, c) = post(
        svc,
        "/tax/platform/calculations",
        key,
        version,
        &calc_body(merchant, roles),
    );
    assert_eq!(s, 200, "{c}");
    c
}

fn transact(svc: &Service, key: &str, calc: &Value, order: &str) -> Value {
    let (s, t) = post(
        svc,
        "/tax/platform/transactions",
        key,
        V1,
        &json!({"platform_calculation_id": calc["id"], "reference_order_id": order,
                "reference_payment_id": "pay-1", "transaction_processed_at": 1_772_323_200})
        .to_string(),
    );
    assert_eq!(s, 200, "{t}");
    t
}

fn amounts(line: &Value) -> (String, String, String) {
    (
        n(&line["amount_excluding_tax"]),
        n(&line["tax_amount"]),
        n(&line["amount_including_tax"]),
    )
}

fn s3(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

#[test]
fn worked_example_per_unit_lines_fees_and_totals() {
    let svc = service();
    merchant(&svc, TEST_KEY, "m-1");
    for version in [V1, V3] {
        let c = platform_calc(
            &svc,
            TEST_KEY,
            version,
            "m-1",
            r#"["marketplace_provider"]"#,
        );
        let id = c["id"].as_str().unwrap();
        assert!(id.starts_with("plat_calc_") && id.len() == 10 + 32, "{id}");
        assert_eq!(c["object"], "tax.platform_calculation");
        assert_eq!(c["merchant"]["merchant_id"], "m-1");
        assert_eq!(c["roles"], json!(["marketplace_provider"]));
        let lines = c["line_items"].as_array().unwrap();
        // Line A: 1999 per unit x 3 = 5997. TN 7%: 419.79; Davidson 2.25%: 134.9325;
        // 554.7225 rounds to 555; with tax 5997 + 555 = 6552.
        assert_eq!(amounts(&lines[0]), s3("5997", "555", "6552"));
        assert_eq!(lines[0]["quantity"], 3);
        // Line B: 250 x 4 = 1000 of FOOD. TN 4%: 40; Davidson 2.25%: 22.5; 62.5 rounds
        // half away from zero to 63; 1063 with tax.
        assert_eq!(amounts(&lines[1]), s3("1000", "63", "1063"));
        let j = &lines[0]["tax_jurisdictions"];
        assert_eq!(n(&j[0]["tax_rate"]), "0.07");
        assert_eq!(
            j[0]["tax_authority_name"],
            "TENNESSEE DEPARTMENT OF REVENUE"
        );
        assert_eq!(j[0]["tax_authority_type"], "STATE");
        assert_eq!(j[0]["tax_type"], "SALES");
        assert_eq!(n(&j[1]["tax_rate"]), "0.0225");
        assert_eq!(j[1]["tax_authority_name"], "DAVIDSON COUNTY");
        assert_eq!(j[1]["tax_authority_type"], "COUNTY");
        if version == V3 {
            // tax_due_decimal is a 2026-03-01 calculation field: 7% of 5997 and 2.25% of 5997.
            assert_eq!(n(&j[0]["tax_due_decimal"]), "419.79");
            assert_eq!(n(&j[1]["tax_due_decimal"]), "134.9325");
        } else {
            assert!(j[0].get("tax_due_decimal").is_none());
        }
        let fees = c["fee_line_items"].as_array().unwrap();
        // Fee 1: 300 x 1, no category, so GENERAL_MERCHANDISE: 21 + 6.75 = 27.75 -> 28.
        assert_eq!(amounts(&fees[0]), s3("300", "28", "328"));
        assert_eq!(
            fees[0]["product"]["product_tax_code"],
            "GENERAL_MERCHANDISE"
        );
        // Fee 2: 100 x 2 = 200 of FOOD: 8 + 4.5 = 12.5 -> 13.
        assert_eq!(amounts(&fees[1]), s3("200", "13", "213"));
        // Totals: order 5997 + 1000 = 6997, tax 555 + 63 = 618, 7615 with tax;
        // fees 300 + 200 = 500, tax 28 + 13 = 41, 541 with tax; all tax 618 + 41 = 659.
        assert_eq!(amounts(&c["totals"]["order"]), s3("6997", "618", "7615"));
        assert_eq!(amounts(&c["totals"]["fees"]), s3("500", "41", "541"));
        assert_eq!(n(&c["total_tax_amount"]), "659");
        assert_eq!(c["testmode"], true);
    }
}

#[test]
fn transactions_per_role_and_their_refunds() {
    let svc = service();
    merchant(&svc, LIVE_KEY, "m-1");
    // (roles, expected transaction types)
    let cases = [
        (r#"["marketplace_provider"]"#, vec!["order"]),
        (r#"["merchant_of_record"]"#, vec!["order"]),
        (r#"["payment_processor"]"#, vec!["order", "fee"]),
        (
            r#"["marketplace_provider", "payment_processor"]"#,
            vec!["order", "fee"],
        ),
    ];
    let mut expected_sales = Decimal::ZERO;
    let mut expected_count = 0;
    for (i, (roles, types)) in cases.iter().enumerate() {
        let c = platform_calc(&svc, LIVE_KEY, V3, "m-1", roles);
        let t = transact(&svc, LIVE_KEY, &c, &format!("order-{i}"));
        let txs = t["transactions"].as_array().unwrap();
        let got: Vec<&str> = txs.iter().map(|t| t["type"].as_str().unwrap()).collect();
        assert_eq!(&got, types, "{roles}");
        for tx in txs {
            assert_eq!(tx["object"], "tax.transaction");
            assert_eq!(tx["calculation_id"], c["id"]);
            assert_eq!(tx["reference_order_id"], format!("order-{i}"));
            assert_eq!(tx["reference_payment_id"], "pay-1");
            assert_eq!(tx["transaction_processed_at"], 1_772_323_200);
            assert_eq!(tx["testmode"], "false");
            // Each is an ordinary transaction afterwards.
            let (s, g) = get(
                &svc,
                &format!("/tax/transactions/{}", tx["id"].as_str().unwrap()),
                LIVE_KEY,
                V3,
            );
            assert_eq!((s, &g), (200, tx));
        }
        // The order carries the order lines (6997 excluding tax), the fee the fee lines (500).
        let order_lines = txs[0]["line_items"].as_array().unwrap();
        assert_eq!(amounts(&order_lines[0]), s3("5997", "555", "6552"));
        assert_eq!(amounts(&order_lines[1]), s3("1000", "63", "1063"));
        expected_sales += Decimal::from(6997);
        expected_count += 1;
        if types.len() == 2 {
            let fee_lines = txs[1]["line_items"].as_array().unwrap();
            assert_eq!(amounts(&fee_lines[0]), s3("300", "28", "328"));
            assert_eq!(amounts(&fee_lines[1]), s3("200", "13", "213"));
            expected_sales += Decimal::from(500);
            expected_count += 1;
        }
    }
    let nexus = svc.nexus_totals("shop").unwrap();
    assert_eq!(nexus.len(), 1);
    // 4 orders of 6997 and 2 fee transactions of 500: 27988 + 1000 = 28988, 6 transactions.
    assert_eq!(nexus[0].sales, Decimal::from(28_988));
    assert_eq!(expected_sales, Decimal::from(28_988));
    assert_eq!(
        (nexus[0].region.as_str(), nexus[0].count),
        ("TN", expected_count)
    );

    // Refunds of a platform order: a partial refund of line B, then a full refund, which
    // takes back what is left (line A only).
    let c = platform_calc(&svc, LIVE_KEY, V3, "m-1", r#"["payment_processor"]"#);
    let t = transact(&svc, LIVE_KEY, &c, "order-refunded");
    let order_id = t["transactions"][0]["id"].as_str().unwrap().to_string();
    let (s, r) = post(&svc, "/tax/refunds", LIVE_KEY, V3, &json!({"transaction_id": order_id, "type": "partial",
        "line_items": [{"reference_line_item_id": "line-b", "sales_amount_refunded": -1000, "tax_amount_refunded": -63}]}).to_string());
    assert_eq!(s, 200, "{r}");
    assert_eq!(amounts(&r["line_items"][0]), s3("-1000", "-63", "-1063"));
    let (s, full) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        V3,
        &json!({"transaction_id": order_id, "type": "full"}).to_string(),
    );
    assert_eq!(s, 200, "{full}");
    let lines = full["line_items"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(amounts(&lines[0]), s3("-5997", "-555", "-6552"));
    let (s, list) = get(
        &svc,
        &format!("/tax/transactions/{order_id}/refunds"),
        LIVE_KEY,
        V3,
    );
    assert_eq!((s, list["refunds"].as_array().unwrap().len()), (200, 2));
    // Nothing is left to refund.
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        V3,
        &json!({"transaction_id": order_id, "type": "full"}).to_string(),
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "REFUND_EXCEEDS_TRANSACTION")
    );
    // Nexus: +6997 +500 for the new pair, -1000 -5997 for the refunds: 28988 + 500 = 29488,
    // 8 transactions.
    let nexus = svc.nexus_totals("shop").unwrap();
    assert_eq!((nexus[0].sales, nexus[0].count), (Decimal::from(29_488), 8));
}

#[test]
fn test_mode_does_not_count_and_modes_and_accounts_are_separate() {
    let svc = service();
    merchant(&svc, TEST_KEY, "m-1");
    let c = platform_calc(&svc, TEST_KEY, V1, "m-1", r#"["payment_processor"]"#);
    let t = transact(&svc, TEST_KEY, &c, "o-1");
    assert_eq!(t["transactions"][0]["testmode"], "true");
    assert!(
        svc.nexus_totals("shop").unwrap().is_empty(),
        "test mode never counts"
    );
    // The merchant and the calculation are not found from the live mode or another account.
    for key in [LIVE_KEY, OTHER_TEST_KEY] {
        let (s, v) = post(
            &svc,
            "/tax/platform/calculations",
            key,
            V1,
            &calc_body("m-1", r#"["merchant_of_record"]"#),
        );
        assert_eq!(
            (s, flat_type(&v, 404).as_str()),
            (404, "MERCHANT_NOT_FOUND")
        );
        let (s, v) = post(
            &svc,
            "/tax/platform/transactions",
            key,
            V1,
            &json!({"platform_calculation_id": c["id"], "reference_order_id": "o-2"}).to_string(),
        );
        assert_eq!(
            (s, flat_type(&v, 404).as_str()),
            (404, "PLATFORM_CALCULATION_NOT_FOUND")
        );
    }
}

#[test]
fn refused_before_2026_01_01_and_validated() {
    let svc = service();
    let m = merchant(&svc, TEST_KEY, "m-1");
    for version in [None, Some("2025-05-12")] {
        for path in ["/tax/platform/calculations", "/tax/platform/transactions"] {
            let (s, v) = call(
                &svc,
                "POST",
                path,
                Some(TEST_KEY),
                version,
                &calc_body("m-1", r#"["merchant_of_record"]"#),
            );
            assert_eq!((s, old_code(&v).as_str()), (404, "not_found"));
        }
    }
    // The merchant's merch_ id works as well as its reference id.
    let c = platform_calc(
        &svc,
        TEST_KEY,
        V1,
        m["id"].as_str().unwrap(),
        r#"["merchant_of_record"]"#,
    );
    assert_eq!(c["merchant"]["id"], m["id"]);
    let base: Value = serde_json::from_str(&calc_body("m-1", r#"["payment_processor"]"#)).unwrap();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut b = base.clone();
        f(&mut b);
        b.to_string()
    };
    let cases: Vec<(String, u16, &str, &str)> = vec![
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("roles");
            }),
            400,
            "MISSING_FIELD",
            "roles",
        ),
        (
            with(&|b| b["roles"] = json!([])),
            400,
            "MISSING_FIELD",
            "roles[0]",
        ),
        (
            with(&|b| b["roles"] = json!(["broker"])),
            400,
            "INCORRECT_TYPE",
            "roles[0]",
        ),
        (
            with(&|b| b["roles"] = json!(["payment_processor", "payment_processor"])),
            400,
            "INCORRECT_TYPE",
            "roles[1]",
        ),
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("fee_details");
            }),
            400,
            "MISSING_FIELD",
            "fee_details.line_items",
        ),
        (
            with(&|b| b["merchant"]["merchant_id"] = json!("nobody")),
            404,
            "MERCHANT_NOT_FOUND",
            "nobody",
        ),
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("merchant");
            }),
            400,
            "MISSING_FIELD",
            "merchant",
        ),
        (
            with(&|b| b["order_details"]["line_items"][1]["quantity"] = json!(0)),
            400,
            "POSITIVE_NUMBER_REQUIRED",
            "order_details.line_items[1].quantity",
        ),
        (
            with(&|b| b["fee_details"]["line_items"][0]["amount"] = json!(-1)),
            400,
            "POSITIVE_NUMBER_REQUIRED",
            "fee_details.line_items[0].amount",
        ),
        (
            with(&|b| b["customer"]["ip"] = json!({"value": "10.0.0.1"})),
            400,
            "UNRECOGNIZED_FIELD",
            "customer.ip",
        ),
    ];
    for (body, status, kind, field) in &cases {
        let (s, v) = post(&svc, "/tax/platform/calculations", TEST_KEY, V1, body);
        assert_eq!(
            (s, flat_type(&v, *status).as_str()),
            (*status, *kind),
            "{body}"
        );
        assert!(v["message"].as_str().unwrap().contains(field), "{v}");
    }
    // customer.ip is a 2026-03-01 field: there it resolves (10.0.0.0/24 is Nashville 37203).
    let (s, c) = post(
        &svc,
        "/tax/platform/calculations",
        TEST_KEY,
        V3,
        &with(&|b| {
            b["customer"].as_object_mut().unwrap().remove("address");
            b["customer"]["ip"] = json!({"value": "10.0.0.1"});
        }),
    );
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["location_source"], "ip");
    assert_eq!(n(&c["totals"]["order"]["tax_amount"]), "618");
    // A deleted merchant cannot sell.
    let (s, _) = call(&svc, "DELETE", "/tax/merchants/m-1", Some(TEST_KEY), V1, "");
    assert_eq!(s, 200);
    let (s, v) = post(
        &svc,
        "/tax/platform/calculations",
        TEST_KEY,
        V1,
        &calc_body("m-1", r#"["merchant_of_record"]"#),
    );
    assert_eq!((s, flat_type(&v, 409).as_str()), (409, "MERCHANT_DELETED"));
}

#[test]
fn duplicate_order_id_stores_nothing() {
    let svc = service();
    merchant(&svc, LIVE_KEY, "m-1");
    let tx = sale(&svc, LIVE_KEY, "1000", "o-1");
    assert_eq!(tx["reference_order_id"], "o-1");
    let before = svc.nexus_totals("shop").unwrap();
    let c = platform_calc(&svc, LIVE_KEY, V1, "m-1", r#"["payment_processor"]"#);
    let (s, v) = post(
        &svc,
        "/tax/platform/transactions",
        LIVE_KEY,
        V1,
        &json!({"platform_calculation_id": c["id"], "reference_order_id": "o-1"}).to_string(),
    );
    assert_eq!(
        (s, flat_type(&v, 409).as_str()),
        (409, "DUPLICATE_REFERENCE_ORDER_ID")
    );
    assert_eq!(
        svc.nexus_totals("shop").unwrap(),
        before,
        "neither the order nor the fee was stored"
    );
    let (s, v) = post(
        &svc,
        "/tax/platform/transactions",
        LIVE_KEY,
        V1,
        &json!({"platform_calculation_id": c["id"], "reference_order_id": "o-2", "extra": 1})
            .to_string(),
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "UNRECOGNIZED_FIELD")
    );
}

/// A platform calculation's status and levy headers (`Levy-Taxability`, `Levy-Coverage`,
/// `Idempotent-Replayed`), with `order` and `fee` the codes of its one order line and one
/// fee line, under `key` when given.
fn platform_headers(
    svc: &Service,
    merchant: &str,
    (order, fee): (&str, &str),
    key: Option<&str>,
) -> (u16, [Option<String>; 3]) {
    let body = format!(
        r#"{{"customer": {{"address": {{"address_line_1": "", "address_city": "NASHVILLE",
              "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}},
           "merchant": {{"merchant_id": "{merchant}"}},
           "order_details": {{"customer_currency_code": "USD", "tax_included_in_amount": false,
             "line_items": [{{"amount": 10000, "product_category": "{order}", "reference_line_item_id": "o"}}]}},
           "fee_details": {{"line_items": [{{"amount": 500, "product_category": "{fee}", "reference_line_item_id": "f"}}]}},
           "roles": ["payment_processor"]}}"#
    );
    let mut headers = vec![
        ("Authorization".to_string(), format!("Bearer {TEST_KEY}")),
        ("X-API-Version".to_string(), "2026-01-01".to_string()),
    ];
    if let Some(k) = key {
        headers.push((levy_api::IDEMPOTENCY_KEY_HEADER.to_string(), k.to_string()));
    }
    let r = svc.handle(&levy_api::Request {
        method: "POST".into(),
        path: "/tax/platform/calculations".into(),
        query: String::new(),
        headers,
        body: body.into_bytes(),
        request_id: None,
    });
    let get = |name: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    (
        r.status,
        [
            get(levy_api::TAXABILITY_HEADER),
            get(levy_api::COVERAGE_HEADER),
            get(levy_api::REPLAYED_HEADER),
        ],
    )
}

#[test]
fn the_headers_speak_for_the_order_and_its_fees_and_are_kept_under_a_key() {
    // The fixture table without its matrix: general merchandise (a root) is known at both
    // levels of Nashville, clothing at neither (as in tests/taxability.rs). Whichever of
    // the order and the fee lines holds the clothing, the answer's headers say the matrix
    // does not know it, and its coverage is at most PARTIAL: the fee lines' headers do not
    // stand for the whole answer.
    let svc = service_over(
        levy_testkit::tennessee::Tennessee {
            matrix: false,
            ..Default::default()
        }
        .table(),
    );
    merchant(&svc, TEST_KEY, "shop-headers");
    let m = "shop-headers";
    let unknown = "UNKNOWN; CLOTHING in US-TN state, CLOTHING in US-TN local";
    for codes in [
        ("CLOTHING", "GENERAL_MERCHANDISE"),
        ("GENERAL_MERCHANDISE", "CLOTHING"),
    ] {
        let (status, [taxability, coverage, _]) = platform_headers(&svc, m, codes, None);
        assert_eq!(status, 200, "{codes:?}");
        assert_eq!(taxability.as_deref(), Some(unknown), "{codes:?}");
        assert_eq!(coverage.as_deref(), Some("PARTIAL"), "{codes:?}");
    }
    let known = ("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    let (_, [taxability, coverage, _]) = platform_headers(&svc, m, known, None);
    assert_eq!(
        (taxability.as_deref(), coverage.as_deref()),
        (Some("KNOWN"), Some("FULL"))
    );
    // Under an idempotency key the headers are kept with the answer: the replay has them.
    let codes = ("CLOTHING", "GENERAL_MERCHANDISE");
    let first = platform_headers(&svc, m, codes, Some("plat-headers-1"));
    let again = platform_headers(&svc, m, codes, Some("plat-headers-1"));
    assert_eq!(first.1[..2], again.1[..2]);
    assert_eq!(again.1[0].as_deref(), Some(unknown));
    assert_eq!(again.1[2].as_deref(), Some("true"));
}
