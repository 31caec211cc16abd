//! The TaxJar v2 and AvaTax REST v2 request shapes, in-process on levy's default table: each
//! tax equal to levy's own answer for the same sale (`POST /tax/calculations`), and the
//! Nashville sale worked by hand.
//!
//! The Nashville sale, ZIP 37203, on the default table: Tennessee 7%, Davidson County 2.25%
//! and the Davidson County transit surcharge 0.5% (data/local/), 9.75% in all; Tennessee
//! taxes the delivery charges of taxable goods alike (Tenn. Code Ann. 67-6-102, "sales
//! price"). So $100.00 of clothing owes 700 + 225 + 50 = 975 cents, and $10.00 of shipping
//! 70 + 22.5 + 5 = 97.5, rounded half up to 98: 1073 cents on $110.00. Tennessee's single
//! article tax (2.75% of the part of one item's price from $1,600 to $3,200) does not reach
//! $100.

mod common;

use std::sync::Arc;

use common::*;
use levy_api::*;
use levy_core::Decimal;
use serde_json::{json, Value};

fn default_service() -> Service {
    service_over(Arc::new(levy_data::open_default()))
}

/// Sends one request with the given headers; the status, the headers and the JSON body.
fn send(
    svc: &Service,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Vec<(String, String)>, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let r = svc.handle(&Request {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        },
        request_id: Some("req_test".into()),
    });
    let v: Value = serde_json::from_slice(&r.body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&r.body)));
    (r.status, r.headers, v)
}

fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

fn basic(account: &str, key: &str) -> String {
    use base64::Engine;
    let pair = format!("{account}:{key}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// A JSON number as the decimal it was written as.
fn d(v: &Value) -> Decimal {
    v.to_string()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {v}"))
}

fn cents(s: &str) -> Decimal {
    s.parse().unwrap()
}

/// levy's own total tax, in cents, for lines of (cents, category) sold to `address` from
/// Nashville.
fn native_tax(svc: &Service, key: &str, address: Value, lines: &[(i64, &str)]) -> Decimal {
    let items: Vec<Value> = lines
        .iter()
        .map(|(a, c)| json!({"amount": a, "quantity": 1, "product_category": c}))
        .collect();
    let (status, _, body) = send(
        svc,
        "POST",
        "/tax/calculations",
        &[
            ("Authorization", &bearer(key)),
            ("X-API-Version", "2026-03-01"),
        ],
        &json!({
            "customer": {"address": address},
            "origin_address": {"address_province": "TN", "address_postal_code": "37203",
                "address_country": "US"},
            "order_details": {"customer_currency_code": "USD", "line_items": items},
        }),
    );
    assert_eq!(status, 200, "{body}");
    d(&body["total_tax_amount"])
}

fn nashville() -> Value {
    json!({"address_line_1": "200 Broadway", "address_city": "Nashville",
        "address_province": "TN", "address_postal_code": "37203", "address_country": "US"})
}

fn taxjar_nashville(shipping: &str, items: Value) -> Value {
    json!({
        "from_country": "US", "from_zip": "37203", "from_state": "TN",
        "to_country": "US", "to_zip": "37203", "to_state": "TN", "to_city": "Nashville",
        "to_street": "200 Broadway",
        "shipping": serde_json::from_str::<Value>(shipping).unwrap(),
        "line_items": items,
    })
}

#[test]
fn taxjar_taxes_in_nashville_are_levys_own_and_worked_by_hand() {
    let svc = default_service();
    let auth = bearer(TEST_KEY);
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &auth)],
        &taxjar_nashville(
            "10",
            json!([{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "20010"}]),
        ),
    );
    assert_eq!(status, 200, "{body}");
    let tax = &body["tax"];
    // Worked by hand (module comment): 975 + 98 cents.
    assert_eq!(d(&tax["amount_to_collect"]), cents("10.73"));
    let native = native_tax(
        &svc,
        TEST_KEY,
        nashville(),
        &[(10000, "CLOTHING"), (1000, "SHIPPING")],
    );
    assert_eq!(d(&tax["amount_to_collect"]) * Decimal::ONE_HUNDRED, native);
    assert_eq!(d(&tax["order_total_amount"]), cents("110"));
    assert_eq!(d(&tax["taxable_amount"]), cents("110"));
    assert_eq!(d(&tax["rate"]), cents("0.0975"));
    assert_eq!(tax["has_nexus"], true);
    assert_eq!(tax["freight_taxable"], true);
    assert_eq!(tax["tax_source"], "destination");
    assert_eq!(tax["jurisdictions"]["county"], "DAVIDSON");
    let b = &tax["breakdown"];
    assert_eq!(d(&b["state_tax_rate"]), cents("0.07"));
    assert_eq!(d(&b["county_tax_rate"]), cents("0.0225"));
    assert_eq!(d(&b["special_tax_rate"]), cents("0.005"));
    // Per level in whole cents, each line's adding up to its tax: the shirt's 7.00, 2.25,
    // 0.50 and the shipping's 0.70, 0.225 -> 0.23, 0.05 (its line's 0.98), so 7.70, 2.48
    // and 0.55, the order's 10.73.
    assert_eq!(d(&b["state_tax_collectable"]), cents("7.7"));
    assert_eq!(d(&b["county_tax_collectable"]), cents("2.48"));
    assert_eq!(d(&b["special_district_tax_collectable"]), cents("0.55"));
    let shipping = &b["shipping"];
    assert_eq!(
        (
            d(&shipping["state_amount"]),
            d(&shipping["county_amount"]),
            d(&shipping["special_district_amount"])
        ),
        (cents("0.7"), cents("0.23"), cents("0.05"))
    );
    let item = &b["line_items"][0];
    assert_eq!(item["id"], "1");
    assert_eq!(d(&item["tax_collectable"]), cents("9.75"));
    assert_eq!(d(&item["state_amount"]), cents("7"));
    assert_eq!(d(&item["county_amount"]), cents("2.25"));
    assert_eq!(d(&item["special_district_amount"]), cents("0.5"));
    assert_eq!(d(&b["shipping"]["tax_collectable"]), cents("0.98"));
    assert_eq!(tax["levy_coverage"], "FULL");
    assert_eq!(tax["levy_messages"], json!([]));
}

#[test]
fn taxjar_lines_are_quantity_times_unit_price_less_discount() {
    let svc = default_service();
    // 3 × $20.00 − $5.00 = $55.00 of groceries: Tennessee's food rate (4%) and the locals.
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_nashville(
            "0",
            json!([{"id": 7, "quantity": 3, "unit_price": "20.00", "discount": 5,
                "product_tax_code": "40030"}]),
        ),
    );
    assert_eq!(status, 200, "{body}");
    let native = native_tax(
        &svc,
        TEST_KEY,
        nashville(),
        &[(5500, "GROCERIES"), (0, "SHIPPING")],
    );
    // 4% + 2.25% + 0.5% of 5500 = 371.25, 371 cents.
    assert_eq!(native, Decimal::from(371));
    assert_eq!(
        d(&body["tax"]["amount_to_collect"]) * Decimal::ONE_HUNDRED,
        native
    );
    assert_eq!(body["tax"]["breakdown"]["line_items"][0]["id"], "7");
}

#[test]
fn an_unknown_vendor_code_is_general_merchandise_and_said_so() {
    let svc = default_service();
    let (_, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_nashville(
            "0",
            json!([{"id": "a", "quantity": 1, "unit_price": 100, "product_tax_code": "12345"}]),
        ),
    );
    assert_eq!(d(&body["tax"]["amount_to_collect"]), cents("9.75"));
    let messages = body["tax"]["levy_messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m.as_str().unwrap().contains("\"12345\"")),
        "{body}"
    );
    let (_, _, t) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", TEST_KEY))],
        &json!({"date": "2026-12-01", "customerCode": "C",
            "addresses": {"singleLocation": {"region": "TN", "country": "US", "postalCode": "37203"}},
            "lines": [{"number": "9", "amount": 100, "taxCode": "PZ999999"}]}),
    );
    assert_eq!(d(&t["totalTax"]), cents("9.75"));
    assert!(
        t["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["summary"].as_str().unwrap().contains("\"PZ999999\"")),
        "{t}"
    );
}

#[test]
fn avatax_sales_order_in_nashville_is_levys_own_and_worked_by_hand() {
    let svc = default_service();
    let (status, headers, t) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("12345", TEST_KEY))],
        &json!({
            "type": "SalesOrder", "companyCode": "DEFAULT", "code": "SO-1", "date": "2026-12-01",
            "customerCode": "ABC", "commit": false, "currencyCode": "USD",
            "addresses": {"SingleLocation": {"line1": "200 Broadway", "city": "Nashville",
                "region": "TN", "country": "US", "postalCode": "37203"}},
            "lines": [
                {"number": "1", "quantity": 1, "amount": 100, "taxCode": "PC040100", "itemCode": "SHIRT"},
                {"number": "2", "quantity": 1, "amount": 10, "taxCode": "FR020100"}
            ]
        }),
    );
    assert_eq!(status, 200, "{t}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "x-correlation-id" && v == "req_test"),
        "{headers:?}"
    );
    assert_eq!(t["code"], "SO-1");
    assert_eq!(t["status"], "Temporary");
    assert_eq!(t["type"], "SalesOrder");
    assert_eq!(d(&t["totalTax"]), cents("10.73"));
    assert_eq!(d(&t["totalAmount"]), cents("110"));
    assert_eq!(d(&t["totalTaxable"]), cents("110"));
    assert_eq!(d(&t["totalExempt"]), cents("0"));
    let native = native_tax(
        &svc,
        TEST_KEY,
        nashville(),
        &[(10000, "CLOTHING"), (1000, "SHIPPING")],
    );
    assert_eq!(d(&t["totalTax"]) * Decimal::ONE_HUNDRED, native);
    let line = &t["lines"][0];
    assert_eq!(line["lineNumber"], "1");
    assert_eq!(line["taxCode"], "PC040100");
    assert_eq!(line["levyTaxCode"], "CLOTHING");
    assert_eq!(d(&line["tax"]), cents("9.75"));
    let taxed: Vec<(&str, &str, Decimal, Decimal)> = line["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !d(&x["tax"]).is_zero())
        .map(|x| {
            (
                x["jurisType"].as_str().unwrap(),
                x["jurisCode"].as_str().unwrap(),
                d(&x["rate"]),
                d(&x["tax"]),
            )
        })
        .collect();
    assert_eq!(
        taxed,
        vec![
            ("STA", "47", cents("0.07"), cents("7")),
            ("CTY", "47037", cents("0.0225"), cents("2.25")),
            ("STJ", "TN:DAVIDSON TRANSIT", cents("0.005"), cents("0.5")),
        ]
    );
    assert_eq!(d(&t["lines"][1]["tax"]), cents("0.98"));
    // The summary holds each jurisdiction's tax in whole cents, as the details do: the
    // shipping's 0.70 + 0.225 + 0.05 written 0.70 + 0.23 + 0.05 (its line's 0.98), so
    // 7.70 + 0 + 2.48 + 0.55, the document's 10.73.
    let summed: Decimal = t["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| d(&s["tax"]))
        .sum();
    assert_eq!(summed, cents("10.73"));
    assert!(t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["summary"] == "Levy-Coverage FULL"));
}

#[test]
fn the_dialects_keys_are_the_interfaces_and_their_errors_their_own() {
    let svc = default_service();
    // TaxJar's Token scheme.
    let token = format!("Token token=\"{TEST_KEY}\"");
    let (status, _, body) = send(
        &svc,
        "GET",
        "/v2/categories",
        &[("Authorization", &token)],
        &Value::Null,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body["categories"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["product_tax_code"] == "20010" && c["levy_tax_code"] == "CLOTHING"));
    // A bad key, in each shape.
    let (status, headers, body) = send(
        &svc,
        "GET",
        "/v2/categories",
        &[("Authorization", "Bearer sk_test_nope")],
        &Value::Null,
    );
    assert_eq!(status, 401);
    assert_eq!(body["error"], "Unauthorized");
    assert_eq!(body["status"], 401);
    assert_eq!(body["detail"], "the API key is not valid");
    assert!(headers.iter().any(|(k, _)| k == "WWW-Authenticate"));
    let (status, headers, body) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", "sk_test_nope"))],
        &json!({}),
    );
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "AuthenticationException");
    assert_eq!(body["error"]["details"][0]["number"], 401);
    assert!(headers.iter().any(|(k, _)| k == "x-correlation-id"));
    // A field at fault, named.
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &json!({"to_country": "US", "to_zip": "37203", "to_state": "TN"}),
    );
    assert_eq!(
        (status, &body["levy_field"]),
        (400, &json!("shipping")),
        "{body}"
    );
    let (status, _, body) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", TEST_KEY))],
        &json!({"type": "ReturnInvoice", "commit": false}),
    );
    // An uncommitted return (a saved document, which levy does not keep, of no recorded
    // sale) is refused.
    assert_eq!(status, 400);
    assert_eq!(body["error"]["details"][0]["refersTo"], "commit", "{body}");
    // An uncommitted invoice is calculated, as a SalesOrder is, kept nowhere, and says so:
    // the Nashville sale's 1073 cents.
    let mut saved = avatax_invoice("SAVED-1");
    saved["commit"] = json!(false);
    let (status, _, body) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", TEST_KEY))],
        &saved,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["type"], &body["status"], d(&body["totalTax"])),
        (&json!("SalesInvoice"), &json!("Temporary"), cents("10.73")),
        "{body}"
    );
    assert!(
        body["messages"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("levy keeps no uncommitted document"),
        "{body}"
    );
    assert!(body.get("levyTransactionId").is_none(), "{body}");
    let (status, _, _) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/SAVED-1",
        &[("Authorization", &basic("1", TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 404);
    // A field of the place, named as the shape names it.
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &json!({"to_country": "US", "to_zip": "9", "to_state": "TN", "shipping": 0, "amount": 1}),
    );
    assert_eq!(
        (status, &body["levy_field"]),
        (400, &json!("to_zip")),
        "{body}"
    );
    let (status, _, body) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", TEST_KEY))],
        &json!({"date": "2026-12-01", "customerCode": "C",
            "addresses": {"shipTo": {"region": "TN", "country": "US", "postalCode": "9"}},
            "lines": [{"amount": 1}]}),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][0]["refersTo"], "addresses.shipTo.postalCode",
        "{body}"
    );
    // A path of a dialect that is none of its routes: 404 in its shape.
    let (status, _, body) = send(
        &svc,
        "GET",
        "/v2/summary_rates",
        &[("Authorization", &bearer(TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(
        (status, &body["error"]),
        (404, &json!("Not Found")),
        "{body}"
    );
    // AvaTax's ping answers without credentials, saying so.
    let (status, _, body) = send(&svc, "GET", "/api/v2/utilities/ping", &[], &Value::Null);
    assert_eq!(status, 200);
    assert_eq!(body["authenticated"], false);
    let (_, _, body) = send(
        &svc,
        "GET",
        "/api/v2/utilities/ping",
        &[("Authorization", &basic("42", LIVE_KEY))],
        &Value::Null,
    );
    assert_eq!(body["authenticated"], true);
    assert_eq!(body["authenticatedAccountId"], 42);
}

#[test]
fn nexus_regions_are_the_modes_registrations() {
    let svc = default_service();
    let regions = |key: &str| {
        let (status, _, body) = send(
            &svc,
            "GET",
            "/v2/nexus/regions",
            &[("Authorization", &bearer(key))],
            &Value::Null,
        );
        assert_eq!(status, 200, "{body}");
        body["regions"].clone()
    };
    assert_eq!(regions(LIVE_KEY), json!([]));
    let (status, _, made) = send(
        &svc,
        "POST",
        "/tax/registrations",
        &[
            ("Authorization", &bearer(LIVE_KEY)),
            ("X-API-Version", "2026-03-01"),
        ],
        &json!({"country": "US", "region": "TN"}),
    );
    assert_eq!(status, 200, "{made}");
    assert_eq!(
        regions(LIVE_KEY),
        json!([{"country_code": "US", "country": "United States", "region_code": "TN",
            "region": "Tennessee"}])
    );
    // The test mode is apart.
    assert_eq!(regions(TEST_KEY), json!([]));
    // Registered in Tennessee only: nothing is collected in California, and has_nexus says so.
    let (_, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(LIVE_KEY))],
        &json!({"to_country": "US", "to_zip": "90012", "to_state": "CA",
            "to_city": "Los Angeles", "shipping": 0, "amount": 100}),
    );
    assert_eq!(body["tax"]["has_nexus"], false, "{body}");
    assert_eq!(d(&body["tax"]["amount_to_collect"]), Decimal::ZERO);
    // In Tennessee it is.
    let (_, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(LIVE_KEY))],
        &json!({"to_country": "US", "to_zip": "37203", "to_state": "TN", "shipping": 0, "amount": 100}),
    );
    assert_eq!(body["tax"]["has_nexus"], true, "{body}");
    assert_eq!(d(&body["tax"]["amount_to_collect"]), cents("9.75"));
}

#[test]
fn taxjar_rates_are_the_places_as_levy_calculates_them() {
    let svc = default_service();
    let (status, _, body) = send(
        &svc,
        "GET",
        "/v2/rates/37203?state=TN&city=Nashville",
        &[("Authorization", &bearer(TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 200, "{body}");
    let r = &body["rate"];
    assert_eq!(r["zip"], "37203");
    assert_eq!(d(&r["state_rate"]), cents("0.07"));
    assert_eq!(d(&r["county_rate"]), cents("0.0225"));
    assert_eq!(d(&r["combined_district_rate"]), cents("0.005"));
    assert_eq!(d(&r["combined_rate"]), cents("0.0975"));
    assert_eq!(r["freight_taxable"], true);
    assert_eq!(r["county"], "DAVIDSON");
}

#[test]
fn avatax_rates_by_postal_code_are_the_places_as_levy_calculates_them() {
    let svc = default_service();
    let (status, headers, body) = send(
        &svc,
        "GET",
        "/api/v2/taxrates/bypostalcode?country=US&postalCode=37203",
        &[("Authorization", &basic("1", TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 200, "{body}");
    assert!(headers.iter().any(|(k, _)| k == "x-correlation-id"));
    // 7% + 2.25% + 0.5%, as the TaxJar shape's rates and the calculation above.
    assert_eq!(d(&body["totalRate"]), cents("0.0975"));
    let rates: Vec<(Decimal, &str)> = body["rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (d(&r["rate"]), r["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rates,
        vec![
            (cents("0.07"), "State"),
            (cents("0.0225"), "County"),
            (cents("0.005"), "Special"),
        ]
    );
    let (status, _, body) = send(
        &svc,
        "GET",
        "/api/v2/taxrates/bypostalcode?country=US",
        &[("Authorization", &basic("1", TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["details"][0]["refersTo"], "postalCode",
        "{body}"
    );
}

#[test]
fn avatax_rates_by_address_take_the_place_the_city_names() {
    // ZIP 90201 is shared by Bell, Bell Gardens and Cudahy, of different district taxes.
    // The CDTFA's list of 2026-01-01 (../shared/data/ca-cdtfa-2026-01, the default table's
    // California input): Bell 9.75%, Bell Gardens 10.5%.
    let svc = default_service();
    let auth = basic("1", TEST_KEY);
    let rate_at = |query: &str| {
        let (status, _, body) = send(
            &svc,
            "GET",
            &format!("/api/v2/taxrates/byaddress?{query}"),
            &[("Authorization", &auth)],
            &Value::Null,
        );
        assert_eq!(status, 200, "{query}: {body}");
        d(&body["totalRate"])
    };
    assert_eq!(
        rate_at("line1=6330%20Pine%20Ave&city=Bell&region=CA&postalCode=90201&country=US"),
        cents("0.0975")
    );
    assert_eq!(
        rate_at(
            "line1=7100%20Garfield%20Ave&city=Bell%20Gardens&region=CA&postalCode=90201&country=US"
        ),
        cents("0.105")
    );
    // Nashville by its address: as by its postal code, 7% + 2.25% + 0.5%.
    assert_eq!(
        rate_at("line1=600%20Broadway&city=Nashville&region=TN&postalCode=37203&country=US"),
        cents("0.0975")
    );
    // No country, or neither a postal code nor a region: refused, naming the field.
    for (query, field) in [
        ("postalCode=37203", "country"),
        ("line1=600%20Broadway&country=US", "postalCode"),
    ] {
        let (status, _, body) = send(
            &svc,
            "GET",
            &format!("/api/v2/taxrates/byaddress?{query}"),
            &[("Authorization", &auth)],
            &Value::Null,
        );
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"]["details"][0]["refersTo"], field, "{body}");
    }
}

#[test]
fn a_table_without_a_vendor_codes_levy_code_says_so() {
    // The Tennessee test table has no GROCERIES and no SHIPPING code.
    let svc = service();
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_nashville(
            "0",
            json!([{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "40030"}]),
        ),
    );
    assert_eq!(status, 200, "{body}");
    // 7% + 2.25% (Davidson) of $100 as general merchandise, and said so twice: the code,
    // and freight_taxable not known.
    assert_eq!(d(&body["tax"]["amount_to_collect"]), cents("9.25"));
    let messages = body["tax"]["levy_messages"].to_string();
    assert!(
        messages.contains("GROCERIES") && messages.contains("SHIPPING"),
        "{messages}"
    );
    // Shipping levy cannot tax is refused, not left out.
    let (status, _, body) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_nashville("5", json!([{"quantity": 1, "unit_price": 100}])),
    );
    assert_eq!(
        (status, &body["levy_field"]),
        (400, &json!("shipping")),
        "{body}"
    );
}

#[test]
fn a_shapes_calculation_is_levys_own_and_becomes_a_transaction() {
    // The calculation a TaxJar or AvaTax call makes is recorded in the ledger as one of
    // POST /tax/calculations: the sale is recorded from its id as from any.
    let svc = default_service();
    let (_, _, tj) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(LIVE_KEY))],
        &taxjar_nashville(
            "10",
            json!([{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "20010"}]),
        ),
    );
    let (_, _, av) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", LIVE_KEY))],
        &json!({"date": "2026-12-01", "customerCode": "C",
            "addresses": {"singleLocation": {"region": "TN", "country": "US", "postalCode": "37203"}},
            "lines": [{"number": "1", "amount": 100, "taxCode": "PC040100"}]}),
    );
    for (id, order, cents) in [
        (
            &tj["tax"]["levy_calculation_id"],
            "tj-1",
            [975, 98].as_slice(),
        ),
        (&av["levyCalculationId"], "av-1", [975].as_slice()),
    ] {
        let (status, _, t) = send(
            &svc,
            "POST",
            "/tax/transactions",
            &[
                ("Authorization", &bearer(LIVE_KEY)),
                ("X-API-Version", "2026-03-01"),
            ],
            &json!({"calculation_id": id, "reference_order_id": order}),
        );
        assert_eq!(status, 200, "{t}");
        let taxes: Vec<Decimal> = t["line_items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| d(&l["tax_amount"]))
            .collect();
        let expected: Vec<Decimal> = cents.iter().map(|&c| Decimal::from(c)).collect();
        assert_eq!(taxes, expected, "{t}");
    }
    // A test key's calculation is not the live mode's.
    let (_, _, test_tj) = send(
        &svc,
        "POST",
        "/v2/taxes",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_nashville("0", json!([{"quantity": 1, "unit_price": 100}])),
    );
    let (status, _, _) = send(
        &svc,
        "POST",
        "/tax/transactions",
        &[
            ("Authorization", &bearer(LIVE_KEY)),
            ("X-API-Version", "2026-03-01"),
        ],
        &json!({"calculation_id": test_tj["tax"]["levy_calculation_id"], "reference_order_id": "x"}),
    );
    assert_eq!(status, 404);
}

/// A TaxJar order of $100.00 of clothing (TaxJar code 20010) and $10.00 of shipping sold in
/// Nashville on 2026-12-01, saying it collected `sales_tax`. Its `amount` is its total with
/// shipping, as TaxJar's create-order reference has it ("total amount of the order with
/// shipping, excluding sales tax").
fn taxjar_order(id: &str, sales_tax: &str) -> Value {
    let mut body = taxjar_nashville(
        "10",
        json!([{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "20010"}]),
    );
    body["transaction_id"] = json!(id);
    body["transaction_date"] = json!("2026/12/01");
    body["amount"] = json!(110);
    body["sales_tax"] = serde_json::from_str::<Value>(sales_tax).unwrap();
    body
}

#[test]
fn a_taxjar_order_is_a_levy_transaction_of_levys_own_tax() {
    let svc = default_service();
    let auth = bearer(LIVE_KEY);
    let h = [("Authorization", auth.as_str())];
    // The Nashville sale worked by hand above: 975 + 98 = 1073 cents, $10.73.
    let (status, _, made) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &h,
        &taxjar_order("o-1", "10.73"),
    );
    assert_eq!(status, 200, "{made}");
    let order = &made["order"];
    assert_eq!(order["transaction_id"], "o-1");
    assert_eq!(order["transaction_date"], "2026-12-01T00:00:00.000Z");
    assert_eq!(d(&order["amount"]), cents("110"));
    assert_eq!(d(&order["shipping"]), cents("10"));
    assert_eq!(d(&order["sales_tax"]), cents("10.73"));
    assert_eq!(d(&order["line_items"][0]["sales_tax"]), cents("9.75"));
    assert_eq!(order["levy_messages"], json!([]));
    let tr = order["levy_transaction_id"].as_str().unwrap().to_string();
    // The ledger's own transaction, of the order id, sold on the day given (1 Dec 2026 is
    // day 20423 since 1970-01-01: 1764547200 seconds, by `date -d 2026-12-01 +%s` in UTC).
    let (status, _, native) = send(
        &svc,
        "GET",
        &format!("/tax/transactions/{tr}"),
        &[("Authorization", &auth), ("X-API-Version", "2026-03-01")],
        &Value::Null,
    );
    assert_eq!(status, 200, "{native}");
    assert_eq!(native["reference_order_id"], "o-1");
    assert_eq!(native["transaction_processed_at"], 1_796_083_200);
    // Sent again (its answer lost): the same transaction, nothing recorded twice.
    let (status, _, again) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &h,
        &taxjar_order("o-1", "10.73"),
    );
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["order"]["levy_transaction_id"], tr.as_str());
    // Another sale under the same id: a conflict in TaxJar's error shape.
    let mut other = taxjar_order("o-1", "10.73");
    other["line_items"][0]["unit_price"] = json!(90);
    let (status, _, e) = send(&svc, "POST", "/v2/transactions/orders", &h, &other);
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["error"], "Conflict");
    assert_eq!(e["status"], 409);
    // GET answers the order as recorded.
    let (status, _, shown) = send(&svc, "GET", "/v2/transactions/orders/o-1", &h, &Value::Null);
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["order"]["levy_transaction_id"], tr.as_str());
    assert_eq!(d(&shown["order"]["sales_tax"]), cents("10.73"));

    // A client that says it collected $5.00 is told levy recorded its own $10.73.
    let (status, _, told) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &h,
        &taxjar_order("o-2", "5"),
    );
    assert_eq!(status, 200, "{told}");
    assert_eq!(d(&told["order"]["sales_tax"]), cents("10.73"));
    let said = told["order"]["levy_messages"].to_string();
    assert!(
        said.contains("sales_tax 5 was not recorded") && said.contains("10.73"),
        "{said}"
    );
    // DELETE deletes the transaction; the order is then unknown.
    let (status, _, gone) = send(
        &svc,
        "DELETE",
        "/v2/transactions/orders/o-2",
        &h,
        &Value::Null,
    );
    assert_eq!(status, 200, "{gone}");
    assert!(gone["order"]["levy_deleted_at"].is_i64(), "{gone}");
    let (status, _, e) = send(&svc, "GET", "/v2/transactions/orders/o-2", &h, &Value::Null);
    assert_eq!((status, &e["error"]), (404, &json!("Not Found")), "{e}");
    // A test key does not see the live mode's orders.
    let (status, _, _) = send(
        &svc,
        "GET",
        "/v2/transactions/orders/o-1",
        &[("Authorization", &bearer(TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 404);
    // The order is taxed as of its transaction_date, as levy's own calculation made for
    // that moment (transacted_at 2010-01-01, 1262304000) taxes the same sale.
    // Before 2002-07-15, the first day of Tennessee's 7% in the default table
    // (data/us-states.toml), the table cannot say what was due: refused in TaxJar's
    // error shape, naming the kind, and nothing is recorded.
    let mut before = taxjar_order("o-6", "10.73");
    before["transaction_date"] = json!("1971-01-01");
    let (status, _, e) = send(&svc, "POST", "/v2/transactions/orders", &h, &before);
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["levy_code"], "DATE_BEFORE_TABLE", "{e}");
    assert_eq!(e["error"], "Bad Request", "{e}");
    let (status, _, _) = send(&svc, "GET", "/v2/transactions/orders/o-6", &h, &Value::Null);
    assert_eq!(status, 404);
    let mut old = taxjar_order("o-5", "10.73");
    old["transaction_date"] = json!("2010-01-01");
    let (status, _, then) = send(&svc, "POST", "/v2/transactions/orders", &h, &old);
    assert_eq!(status, 200, "{then}");
    let (status, _, native) = send(
        &svc,
        "POST",
        "/tax/calculations",
        &[("Authorization", &auth), ("X-API-Version", "2026-03-01")],
        &json!({
            "customer": {"address": nashville()},
            "origin_address": {"address_province": "TN", "address_postal_code": "37203",
                "address_country": "US"},
            "transacted_at": 1_262_304_000,
            "order_details": {"customer_currency_code": "USD", "line_items": [
                {"amount": 10000, "quantity": 1, "product_category": "CLOTHING",
                    "reference_line_item_id": "1"},
                {"amount": 1000, "quantity": 1, "product_category": "SHIPPING",
                    "reference_line_item_id": "shipping"}]},
        }),
    );
    assert_eq!(status, 200, "{native}");
    assert_eq!(
        d(&then["order"]["sales_tax"]) * Decimal::ONE_HUNDRED,
        d(&native["total_tax_amount"]),
        "{then} {native}"
    );
    assert_ne!(d(&then["order"]["sales_tax"]), cents("10.73"), "{then}");
    // A missing field is named in TaxJar's shape.
    let mut bad = taxjar_order("o-3", "1");
    bad.as_object_mut().unwrap().remove("transaction_date");
    let (status, _, e) = send(&svc, "POST", "/v2/transactions/orders", &h, &bad);
    assert_eq!(
        (status, &e["levy_field"]),
        (400, &json!("transaction_date")),
        "{e}"
    );
}

#[test]
fn a_taxjar_refund_is_a_levy_refund_of_the_order() {
    let svc = default_service();
    let auth = bearer(LIVE_KEY);
    let h = [("Authorization", auth.as_str())];
    let (status, _, _) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &h,
        &taxjar_order("o-1", "10.73"),
    );
    assert_eq!(status, 200);
    let refund = |id: &str, amount: i64, shipping: i64, items: Option<Value>| {
        let mut b = json!({"transaction_id": id, "transaction_reference_id": "o-1",
            "transaction_date": "2026-12-05", "to_country": "US", "to_state": "TN",
            "to_zip": "37203", "amount": amount, "shipping": shipping, "sales_tax": 0});
        if let Some(items) = items {
            b["line_items"] = items;
        }
        b
    };
    // $40 of the $100 line back: 40% of its 975 cents of tax, 390 cents.
    let partial = refund(
        "r-1",
        -40,
        0,
        Some(json!([{"id": "1", "quantity": 1, "unit_price": 40}])),
    );
    let (status, _, r) = send(&svc, "POST", "/v2/transactions/refunds", &h, &partial);
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["refund"]["transaction_reference_id"], "o-1");
    assert_eq!(r["refund"]["levy_refund_type"], "partial");
    assert_eq!(d(&r["refund"]["amount"]), cents("-40"));
    assert_eq!(d(&r["refund"]["sales_tax"]), cents("-3.9"));
    // Sent again: the same refund.
    let (status, _, again) = send(&svc, "POST", "/v2/transactions/refunds", &h, &partial);
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        again["refund"]["levy_refund_id"],
        r["refund"]["levy_refund_id"]
    );
    let (status, _, shown) = send(
        &svc,
        "GET",
        "/v2/transactions/refunds/r-1",
        &h,
        &Value::Null,
    );
    assert_eq!(status, 200, "{shown}");
    assert_eq!(d(&shown["refund"]["sales_tax"]), cents("-3.9"));
    // $5.00 back without lines (a reimbursement): taken from the order's one item line,
    // with its part of the line's tax, 975 × 500 / 10000 = 48.75, rounded to 49 cents.
    let (status, _, r2) = send(
        &svc,
        "POST",
        "/v2/transactions/refunds",
        &h,
        &refund("r-2", -5, 0, None),
    );
    assert_eq!(status, 200, "{r2}");
    assert_eq!(r2["refund"]["levy_refund_type"], "partial");
    assert_eq!(
        (d(&r2["refund"]["amount"]), d(&r2["refund"]["sales_tax"])),
        (cents("-5"), cents("-0.49"))
    );
    // A full refund then takes back what remains: $55 of the line (975 − 390 − 49 = 536
    // cents of tax) and the $10 of shipping (98 cents): $65 with shipping, 634 cents.
    let (status, _, rest) = send(
        &svc,
        "POST",
        "/v2/transactions/refunds",
        &h,
        &refund("r-3", 110, 10, None),
    );
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["refund"]["levy_refund_type"], "full");
    assert_eq!(d(&rest["refund"]["amount"]), cents("-65"));
    assert_eq!(d(&rest["refund"]["shipping"]), cents("-10"));
    assert_eq!(d(&rest["refund"]["sales_tax"]), cents("-6.34"));
    // Nothing remains to refund.
    let (status, _, e) = send(
        &svc,
        "POST",
        "/v2/transactions/refunds",
        &h,
        &refund("r-9", 110, 10, None),
    );
    assert_eq!(status, 400, "{e}");
    // DELETE reverses r-1: its $40 and 390 cents may be refunded again.
    let (status, _, del) = send(
        &svc,
        "DELETE",
        "/v2/transactions/refunds/r-1",
        &h,
        &Value::Null,
    );
    assert_eq!(status, 200, "{del}");
    assert!(del["refund"]["levy_reversed_at"].is_i64(), "{del}");
    let (status, _, full) = send(
        &svc,
        "POST",
        "/v2/transactions/refunds",
        &h,
        &refund("r-4", 110, 10, None),
    );
    assert_eq!(status, 200, "{full}");
    assert_eq!(d(&full["refund"]["amount"]), cents("-40"));
    assert_eq!(d(&full["refund"]["sales_tax"]), cents("-3.9"));
    // An unknown order, an unknown refund: 404s in TaxJar's shape.
    let mut unknown = refund("r-5", 110, 10, None);
    unknown["transaction_reference_id"] = json!("nope");
    let (status, _, e) = send(&svc, "POST", "/v2/transactions/refunds", &h, &unknown);
    assert_eq!(
        (status, &e["levy_field"]),
        (404, &json!("transaction_reference_id")),
        "{e}"
    );
    let (status, _, e) = send(
        &svc,
        "GET",
        "/v2/transactions/refunds/nope",
        &h,
        &Value::Null,
    );
    assert_eq!((status, &e["error"]), (404, &json!("Not Found")), "{e}");
}

/// A committed AvaTax SalesInvoice `code` of the Nashville sale: $100.00 of clothing
/// (PC040100) and $10.00 of freight (FR020100), sold on 2026-12-01.
fn avatax_invoice(code: &str) -> Value {
    json!({
        "type": "SalesInvoice", "commit": true, "companyCode": "DEFAULT", "code": code,
        "date": "2026-12-01", "customerCode": "ABC",
        "addresses": {"singleLocation": {"line1": "200 Broadway", "city": "Nashville",
            "region": "TN", "country": "US", "postalCode": "37203"}},
        "lines": [
            {"number": "1", "amount": 100, "taxCode": "PC040100", "itemCode": "SHIRT"},
            {"number": "2", "amount": 10, "taxCode": "FR020100"}
        ]
    })
}

#[test]
fn a_committed_avatax_invoice_is_a_levy_transaction_voided_and_refunded() {
    let svc = default_service();
    let auth = basic("12345", LIVE_KEY);
    let h = [("Authorization", auth.as_str())];
    let create = "/api/v2/transactions/create";
    // The Nashville sale worked by hand above: 975 + 98 = 1073 cents.
    let (status, _, t) = send(&svc, "POST", create, &h, &avatax_invoice("INV-1"));
    assert_eq!(status, 200, "{t}");
    assert_eq!(
        (&t["status"], &t["type"], &t["code"]),
        (&json!("Committed"), &json!("SalesInvoice"), &json!("INV-1"))
    );
    assert_eq!(d(&t["totalTax"]), cents("10.73"));
    assert_eq!(t["lines"][0]["taxCode"], "PC040100");
    let tr = t["levyTransactionId"].as_str().unwrap().to_string();
    // The ledger's transaction, of the code, sold on the document's date (noon UTC of
    // 2026-12-01: 1796083200 + 43200).
    let (status, _, native) = send(
        &svc,
        "GET",
        &format!("/tax/transactions/{tr}"),
        &[
            ("Authorization", &bearer(LIVE_KEY)),
            ("X-API-Version", "2026-03-01"),
        ],
        &Value::Null,
    );
    assert_eq!(status, 200, "{native}");
    assert_eq!(native["reference_order_id"], "INV-1");
    assert_eq!(native["transaction_processed_at"], 1_796_126_400);
    // Sent again: the same transaction. Another invoice under the code: a conflict.
    let (status, _, again) = send(&svc, "POST", create, &h, &avatax_invoice("INV-1"));
    assert_eq!(
        (status, &again["levyTransactionId"]),
        (200, &json!(tr)),
        "{again}"
    );
    let mut other = avatax_invoice("INV-1");
    other["lines"][0]["amount"] = json!(90);
    let (status, _, e) = send(&svc, "POST", create, &h, &other);
    assert_eq!(status, 409, "{e}");
    assert!(e["error"]["code"].is_string(), "{e}");
    // One ledger: the code is the order id of a TaxJar order too.
    let (status, _, e) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &[("Authorization", &bearer(LIVE_KEY))],
        &taxjar_order("INV-1", "10.73"),
    );
    assert_eq!(status, 409, "{e}");
    // GET reads it back, by company and code.
    let (status, _, got) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/INV-1",
        &h,
        &Value::Null,
    );
    assert_eq!(status, 200, "{got}");
    assert_eq!(
        (&got["status"], &got["customerCode"]),
        (&json!("Committed"), &json!("ABC"))
    );
    assert_eq!(d(&got["totalTax"]), cents("10.73"));

    // A Percentage refund of 50%: half of each line and of its tax, rounded half away from
    // zero: 5000 and 487.5 -> 488 cents; 500 and 49 cents: 537 cents in all.
    let (status, _, r) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/INV-1/refund",
        &h,
        &json!({"refundTransactionCode": "RET-1", "refundDate": "2026-12-03",
            "refundType": "Percentage", "refundPercentage": 50}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        (&r["type"], &r["code"], &r["referenceCode"]),
        (&json!("ReturnInvoice"), &json!("RET-1"), &json!("INV-1"))
    );
    assert_eq!(d(&r["totalAmount"]), cents("-55"));
    assert_eq!(d(&r["totalTax"]), cents("-5.37"));
    // Sent again: the same refund; GET by its code reads it.
    let (status, _, again) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/INV-1/refund",
        &h,
        &json!({"refundTransactionCode": "RET-1", "refundDate": "2026-12-03",
            "refundType": "Percentage", "refundPercentage": 50}),
    );
    assert_eq!(
        (status, &again["levyRefundId"]),
        (200, &r["levyRefundId"]),
        "{again}"
    );
    let (status, _, got) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/RET-1",
        &h,
        &Value::Null,
    );
    assert_eq!(
        (status, &got["type"]),
        (200, &json!("ReturnInvoice")),
        "{got}"
    );
    // A committed ReturnInvoice of line 1, $20 of it: 20% of its 975 cents, 195.
    let (status, _, ret) = send(
        &svc,
        "POST",
        create,
        &h,
        &json!({"type": "ReturnInvoice", "commit": true, "code": "RET-2", "referenceCode": "INV-1",
            "date": "2026-12-04", "customerCode": "ABC",
            "lines": [{"number": "1", "amount": -20}]}),
    );
    assert_eq!(status, 200, "{ret}");
    assert_eq!(d(&ret["totalTax"]), cents("-1.95"));
    // TaxOnly is refused, naming refundType; a return of an unknown invoice, naming
    // referenceCode.
    let (status, _, e) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/INV-1/refund",
        &h,
        &json!({"refundType": "TaxOnly"}),
    );
    assert_eq!(
        (status, &e["error"]["details"][0]["refersTo"]),
        (400, &json!("refundType")),
        "{e}"
    );
    let (status, _, e) = send(
        &svc,
        "POST",
        create,
        &h,
        &json!({"type": "ReturnInvoice", "commit": true, "referenceCode": "NOPE",
            "lines": [{"number": "1", "amount": -20}]}),
    );
    assert_eq!(
        (status, &e["error"]["details"][0]["refersTo"]),
        (404, &json!("referenceCode")),
        "{e}"
    );

    // Void: a second invoice deleted, answered Cancelled, and read back so.
    let (status, _, _) = send(&svc, "POST", create, &h, &avatax_invoice("INV-2"));
    assert_eq!(status, 200);
    let (status, _, v) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/INV-2/void",
        &h,
        &json!({"code": "DocVoided"}),
    );
    assert_eq!((status, &v["status"]), (200, &json!("Cancelled")), "{v}");
    let (status, _, got) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/INV-2",
        &h,
        &Value::Null,
    );
    assert_eq!(
        (status, &got["status"]),
        (200, &json!("Cancelled")),
        "{got}"
    );
    // Void of a return's code: its refund reversed, answered Cancelled, read back so, and
    // the same answer again.
    let void_ret = "/api/v2/companies/DEFAULT/transactions/RET-2/void";
    for _ in 0..2 {
        let (status, _, v) = send(&svc, "POST", void_ret, &h, &json!({"code": "DocVoided"}));
        assert_eq!(
            (status, &v["status"], &v["type"]),
            (200, &json!("Cancelled"), &json!("ReturnInvoice")),
            "{v}"
        );
    }
    let (status, _, got) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/RET-2",
        &h,
        &Value::Null,
    );
    assert_eq!(
        (status, &got["status"]),
        (200, &json!("Cancelled")),
        "{got}"
    );
    // The test mode does not see the live mode's documents.
    let (status, _, e) = send(
        &svc,
        "GET",
        "/api/v2/companies/DEFAULT/transactions/INV-1",
        &[("Authorization", &basic("1", TEST_KEY))],
        &Value::Null,
    );
    assert_eq!(
        (status, &e["error"]["code"]),
        (404, &json!("EntityNotFoundError")),
        "{e}"
    );
}

#[test]
fn the_rates_lookups_store_nothing() {
    // With room for one stored calculation, any number of rates lookups leave it free: the
    // taxes call after them is stored, the one after that is over the quota (429).
    let svc = default_service().with_limits(Limits {
        stored_calculations: 1,
        ..Limits::NONE
    });
    let tj = bearer(TEST_KEY);
    let av = basic("1", TEST_KEY);
    for _ in 0..3 {
        let (status, _, body) = send(
            &svc,
            "GET",
            "/v2/rates/37203?state=TN",
            &[("Authorization", &tj)],
            &Value::Null,
        );
        assert_eq!(status, 200, "{body}");
        assert!(body["rate"].get("levy_calculation_id").is_none(), "{body}");
        let (status, _, body) = send(
            &svc,
            "GET",
            "/api/v2/taxrates/bypostalcode?country=US&postalCode=37203",
            &[("Authorization", &av)],
            &Value::Null,
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(d(&body["totalRate"]), cents("0.0975"));
    }
    let order = taxjar_nashville("0", json!([{"quantity": 1, "unit_price": 100}]));
    let (status, _, body) = send(&svc, "POST", "/v2/taxes", &[("Authorization", &tj)], &order);
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(&svc, "POST", "/v2/taxes", &[("Authorization", &tj)], &order);
    assert_eq!(
        (status, &body["levy_code"]),
        (429, &json!("CALCULATION_QUOTA_EXCEEDED")),
        "{body}"
    );
}

#[test]
fn a_recorded_sale_that_levy_does_not_collect_says_why() {
    // Registered in California only: a Nashville order (TaxJar) and invoice (AvaTax) are
    // recorded with no tax, and the answer carries levy's NOT_REGISTERED note.
    let svc = default_service();
    let (status, _, made) = send(
        &svc,
        "POST",
        "/tax/registrations",
        &[
            ("Authorization", &bearer(TEST_KEY)),
            ("X-API-Version", "2026-03-01"),
        ],
        &json!({"country": "US", "region": "CA"}),
    );
    assert_eq!(status, 200, "{made}");
    let (status, _, o) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &[("Authorization", &bearer(TEST_KEY))],
        &taxjar_order("o-1", "0"),
    );
    assert_eq!(status, 200, "{o}");
    assert_eq!(d(&o["order"]["sales_tax"]), cents("0"));
    assert!(
        o["order"]["levy_messages"]
            .to_string()
            .contains("NOT_REGISTERED"),
        "{o}"
    );
    let (status, _, t) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &[("Authorization", &basic("1", TEST_KEY))],
        &avatax_invoice("INV-1"),
    );
    assert_eq!(status, 200, "{t}");
    assert_eq!(d(&t["totalTax"]), cents("0"));
    assert!(t["messages"].to_string().contains("NOT_REGISTERED"), "{t}");
}

#[test]
fn an_avatax_sale_past_the_tables_horizon_says_so_and_one_before_it_is_refused() {
    let svc = default_service();
    let order = |date: &str| {
        json!({
            "type": "SalesOrder", "companyCode": "DEFAULT", "code": "SO-LA", "date": date,
            "customerCode": "ABC", "commit": false, "currencyCode": "USD",
            "addresses": {"SingleLocation": {"line1": "200 N Spring St", "city": "Los Angeles",
                "region": "CA", "country": "US", "postalCode": "90012"}},
            "lines": [{"number": "1", "quantity": 1, "amount": 100, "taxCode": "P0000000"}]
        })
    };
    let auth = basic("12345", TEST_KEY);
    let create = |date: &str| {
        send(
            &svc,
            "POST",
            "/api/v2/transactions/create",
            &[("Authorization", &auth)],
            &order(date),
        )
    };
    // CDTFA's list effective 2026-01-01 (Los Angeles 9.75%: $9.75 on $100) holds its
    // quarter: on 2026-03-31 no word of age; on 2026-04-01 the same tax and a message
    // naming the list.
    let stale = |t: &Value| {
        t["messages"].as_array().unwrap().iter().any(|m| {
            m["summary"]
                .as_str()
                .unwrap_or("")
                .starts_with("STALE_TABLE: cdtfa")
        })
    };
    let (status, _, t) = create("2026-03-31");
    assert_eq!(status, 200, "{t}");
    assert_eq!(d(&t["totalTax"]), cents("9.75"), "{t}");
    assert!(!stale(&t), "{t}");
    let (status, _, t) = create("2026-04-01");
    assert_eq!(status, 200, "{t}");
    assert_eq!(d(&t["totalTax"]), cents("9.75"), "{t}");
    assert!(stale(&t), "{t}");
    // Before California's 7.25% begins in the table (2017-01-01, data/us-states.toml).
    let (status, _, e) = create("2016-12-31");
    assert_eq!(status, 400, "{e}");
    assert!(e.to_string().contains("DATE_BEFORE_TABLE"), "{e}");
}

/// The tax collected of the live mode's report of December 2026, in cents.
fn december_collected(svc: &Service) -> Value {
    let (status, _, r) = send(
        svc,
        "GET",
        "/tax/reports/liability?from=2026-12-01&to=2026-12-31",
        &[("Authorization", &bearer(LIVE_KEY))],
        &Value::Null,
    );
    assert_eq!(status, 200, "{r}");
    r["states"][0]["collected"].clone()
}

#[test]
fn a_taxjar_order_updated_is_replaced_by_its_new_version() {
    let svc = default_service();
    let auth = bearer(LIVE_KEY);
    let h = [("Authorization", auth.as_str())];
    let put = "/v2/transactions/orders/o-u";
    let (status, _, made) = send(
        &svc,
        "POST",
        "/v2/transactions/orders",
        &h,
        &taxjar_order("o-u", "10.73"),
    );
    assert_eq!(status, 200, "{made}");
    let first = made["order"]["levy_transaction_id"].clone();
    // The shirt's price is changed to $50.00: 350 + 112.5 + 25 = 487.5 cents, rounded half
    // up to 488, and the shipping's 98 as before: $5.86, levy's own answer for the sale.
    let mut changed = taxjar_order("o-u", "5.86");
    changed["line_items"][0]["unit_price"] = json!(50);
    changed["amount"] = json!(60);
    let (status, _, updated) = send(&svc, "PUT", put, &h, &changed);
    assert_eq!(status, 200, "{updated}");
    let order = &updated["order"];
    assert_eq!(d(&order["sales_tax"]), cents("5.86"));
    assert_eq!(
        d(&order["sales_tax"]) * Decimal::ONE_HUNDRED,
        native_tax(
            &svc,
            LIVE_KEY,
            nashville(),
            &[(5000, "CLOTHING"), (1000, "SHIPPING")]
        )
    );
    let second = order["levy_transaction_id"].clone();
    assert_ne!(second, first);
    assert_eq!(order["levy_messages"], json!([]), "{order}");
    // The order reads as its new version; the first is deleted in levy's ledger, and the
    // month's report holds the new version's tax alone.
    let (status, _, shown) = send(&svc, "GET", put, &h, &Value::Null);
    assert_eq!(
        (status, &shown["order"]["levy_transaction_id"]),
        (200, &second)
    );
    let native = [
        ("Authorization", auth.as_str()),
        ("X-API-Version", "2026-03-01"),
    ];
    let old = format!("/tax/transactions/{}", first.as_str().unwrap());
    let (status, _, _) = send(&svc, "GET", &old, &native, &Value::Null);
    assert_eq!(status, 404);
    assert_eq!(december_collected(&svc), json!(586));
    // The same update again (its answer lost): the same version, nothing recorded.
    let (status, _, again) = send(&svc, "PUT", put, &h, &changed);
    assert_eq!(
        (status, &again["order"]["levy_transaction_id"]),
        (200, &second),
        "{again}"
    );
    // An update naming another order in its body, and one of an order levy does not hold,
    // are refused in TaxJar's shape.
    let mut other = changed.clone();
    other["transaction_id"] = json!("o-v");
    let (status, _, e) = send(&svc, "PUT", put, &h, &other);
    assert_eq!(
        (status, &e["levy_field"]),
        (400, &json!("transaction_id")),
        "{e}"
    );
    let mut nope = changed.clone();
    nope["transaction_id"] = json!("nope");
    let (status, _, e) = send(&svc, "PUT", "/v2/transactions/orders/nope", &h, &nope);
    assert_eq!((status, &e["error"]), (404, &json!("Not Found")), "{e}");
    // A refunded order is not replaced (the refund is of the order as it was): a 409, and
    // the order stands as it was.
    let (status, _, r) = send(
        &svc,
        "POST",
        "/v2/transactions/refunds",
        &h,
        &json!({"transaction_id": "r-u", "transaction_reference_id": "o-u",
            "transaction_date": "2026-12-02", "to_country": "US", "to_state": "TN",
            "to_zip": "37203", "amount": -50, "shipping": 0, "sales_tax": 0,
            "line_items": [{"id": "1", "quantity": 1, "unit_price": 50}]}),
    );
    assert_eq!(status, 200, "{r}");
    let (status, _, e) = send(&svc, "PUT", put, &h, &taxjar_order("o-u", "10.73"));
    assert_eq!(
        (status, &e["levy_code"]),
        (409, &json!("TRANSACTION_REFUNDED")),
        "{e}"
    );
    let (_, _, shown) = send(&svc, "GET", put, &h, &Value::Null);
    assert_eq!(shown["order"]["levy_transaction_id"], second);
}

#[test]
fn an_avatax_invoice_adjusted_is_replaced_by_its_new_version() {
    let svc = default_service();
    let auth = basic("12345", LIVE_KEY);
    let h = [("Authorization", auth.as_str())];
    let create = "/api/v2/transactions/create";
    let adjust = "/api/v2/companies/DEFAULT/transactions/ADJ-1/adjust";
    let (status, _, t) = send(&svc, "POST", create, &h, &avatax_invoice("ADJ-1"));
    assert_eq!(status, 200, "{t}");
    let first = t["levyTransactionId"].clone();
    // The shirt at $50.00: 488 + 98 cents, as the TaxJar update above works it.
    let mut fifty = avatax_invoice("ADJ-1");
    fifty["lines"][0]["amount"] = json!(50);
    let adjustment = json!({"adjustmentReason": "PriceAdjusted",
        "adjustmentDescription": "coupon", "newTransaction": fifty});
    let (status, _, a) = send(&svc, "POST", adjust, &h, &adjustment);
    assert_eq!(status, 200, "{a}");
    assert_eq!(
        (&a["code"], &a["status"], &a["adjustmentReason"]),
        (
            &json!("ADJ-1"),
            &json!("Committed"),
            &json!("PriceAdjusted")
        ),
        "{a}"
    );
    assert_eq!(a["adjustmentDescription"], "coupon");
    assert_eq!(d(&a["totalTax"]), cents("5.86"));
    let second = a["levyTransactionId"].clone();
    assert_ne!(second, first);
    let get = "/api/v2/companies/DEFAULT/transactions/ADJ-1";
    let (status, _, got) = send(&svc, "GET", get, &h, &Value::Null);
    assert_eq!((status, &got["levyTransactionId"]), (200, &second), "{got}");
    assert_eq!(d(&got["totalTax"]), cents("5.86"));
    assert_eq!(december_collected(&svc), json!(586));
    // Sent again: the version it made. A newTransaction of another code, and an unknown
    // adjustmentReason, are refused naming the field.
    let (status, _, again) = send(&svc, "POST", adjust, &h, &adjustment);
    assert_eq!(
        (status, &again["levyTransactionId"]),
        (200, &second),
        "{again}"
    );
    let mut elsewhere = adjustment.clone();
    elsewhere["newTransaction"]["code"] = json!("ADJ-2");
    let (status, _, e) = send(&svc, "POST", adjust, &h, &elsewhere);
    assert_eq!(
        (status, &e["error"]["details"][0]["refersTo"]),
        (400, &json!("newTransaction.code")),
        "{e}"
    );
    let mut unknown = adjustment.clone();
    unknown["adjustmentReason"] = json!("BecauseISaidSo");
    let (status, _, e) = send(&svc, "POST", adjust, &h, &unknown);
    assert_eq!(
        (status, &e["error"]["details"][0]["refersTo"]),
        (400, &json!("adjustmentReason")),
        "{e}"
    );

    // createoradjust: a new code is created; a recorded one adjusted (reason Other), the
    // same document sent again answering the version it made.
    let coa = "/api/v2/transactions/createoradjust";
    let (status, _, c) = send(
        &svc,
        "POST",
        coa,
        &h,
        &json!({"createTransactionModel": avatax_invoice("ADJ-3")}),
    );
    assert_eq!(status, 200, "{c}");
    assert_eq!(d(&c["totalTax"]), cents("10.73"));
    let (status, _, c2) = send(
        &svc,
        "POST",
        coa,
        &h,
        &json!({"createTransactionModel": fifty.clone()}),
    );
    assert_eq!(status, 200, "{c2}");
    assert_eq!(
        (&c2["code"], &c2["adjustmentReason"], d(&c2["totalTax"])),
        (&json!("ADJ-1"), &json!("Other"), cents("5.86")),
        "{c2}"
    );
    let (status, _, c2_again) = send(
        &svc,
        "POST",
        coa,
        &h,
        &json!({"createTransactionModel": fifty.clone()}),
    );
    assert_eq!(
        (status, &c2_again["levyTransactionId"]),
        (200, &c2["levyTransactionId"]),
        "{c2_again}"
    );
    let second = c2["levyTransactionId"].clone();
    let mut again_fifty = avatax_invoice("ADJ-3");
    again_fifty["lines"][0]["amount"] = json!(50);
    let (status, _, c3) = send(
        &svc,
        "POST",
        coa,
        &h,
        &json!({"createTransactionModel": again_fifty}),
    );
    assert_eq!(status, 200, "{c3}");
    assert_eq!(
        (&c3["adjustmentReason"], d(&c3["totalTax"])),
        (&json!("Other"), cents("5.86")),
        "{c3}"
    );
    assert_eq!(december_collected(&svc), json!(586 + 586));

    // commit: a recorded invoice answers as it stands; uncommitting is refused, naming
    // commit; a code levy holds nothing under is not found.
    let commit = "/api/v2/companies/DEFAULT/transactions/ADJ-1/commit";
    let (status, _, c) = send(&svc, "POST", commit, &h, &json!({"commit": true}));
    assert_eq!((status, &c["levyTransactionId"]), (200, &second), "{c}");
    let (status, _, e) = send(&svc, "POST", commit, &h, &json!({"commit": false}));
    assert_eq!(
        (status, &e["error"]["details"][0]["refersTo"]),
        (400, &json!("commit")),
        "{e}"
    );
    let (status, _, e) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/ADJ-1/uncommit",
        &h,
        &Value::Null,
    );
    assert_eq!(status, 400, "{e}");
    let (status, _, e) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/NOPE/commit",
        &h,
        &json!({"commit": true}),
    );
    assert_eq!(
        (status, &e["error"]["code"]),
        (404, &json!("EntityNotFoundError")),
        "{e}"
    );
    // A voided document is not adjusted; one with a return standing neither.
    let (status, _, _) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/ADJ-3/void",
        &h,
        &json!({"code": "DocVoided"}),
    );
    assert_eq!(status, 200);
    let (status, _, e) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/ADJ-3/adjust",
        &h,
        &json!({"adjustmentReason": "Other", "newTransaction": avatax_invoice("ADJ-3")}),
    );
    assert_eq!(
        (status, &e["error"]["details"][0]["levyCode"]),
        (400, &json!("TRANSACTION_ALREADY_DELETED")),
        "{e}"
    );
    let (status, _, r) = send(
        &svc,
        "POST",
        "/api/v2/companies/DEFAULT/transactions/ADJ-1/refund",
        &h,
        &json!({"refundTransactionCode": "RET-A", "refundDate": "2026-12-03",
            "refundType": "Full"}),
    );
    assert_eq!(status, 200, "{r}");
    let (status, _, e) = send(&svc, "POST", adjust, &h, &adjustment);
    assert_eq!(
        (status, &e["error"]["details"][0]["levyCode"]),
        (409, &json!("TRANSACTION_REFUNDED")),
        "{e}"
    );
}

#[test]
fn avatax_details_are_whole_cents_adding_up_to_their_line() {
    // AvaTax's details carry each jurisdiction's tax in cents, and a client may book them
    // one by one. $0.06 in Nashville owes 0.42 + 0.135 + 0.03 = 0.585 cents (7%, 2.25%,
    // 0.5%), the line rounded half up to 1 cent; each rounded alone would be 0. The cent
    // goes to the state's 0.42, the tax the rounding moved furthest down.
    let svc = default_service();
    let auth = basic("1", TEST_KEY);
    let h = [("Authorization", auth.as_str())];
    let order = |postal: &str, region: &str, amount: &str| {
        json!({"type": "SalesOrder", "date": "2026-12-01", "customerCode": "C",
            "addresses": {"singleLocation": {"region": region, "country": "US",
                "postalCode": postal}},
            "lines": [{"number": "1", "amount": serde_json::from_str::<Value>(amount).unwrap()}]})
    };
    let (status, _, t) = send(
        &svc,
        "POST",
        "/api/v2/transactions/create",
        &h,
        &order("37203", "TN", "0.06"),
    );
    assert_eq!(status, 200, "{t}");
    let line = &t["lines"][0];
    assert_eq!(d(&line["tax"]), cents("0.01"), "{t}");
    let by_code: Vec<(String, Decimal)> = line["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| !d(&x["tax"]).is_zero())
        .map(|x| (x["jurisCode"].as_str().unwrap().to_string(), d(&x["tax"])))
        .collect();
    assert_eq!(by_code, [("47".to_string(), cents("0.01"))], "{t}");
    // And wherever the sale: every detail in whole cents, the details of a line adding up
    // to its tax and the summary to the document's.
    for (postal, region, amount) in [("90012", "CA", "49.99"), ("37203", "TN", "33.33")] {
        let (status, _, t) = send(
            &svc,
            "POST",
            "/api/v2/transactions/create",
            &h,
            &order(postal, region, amount),
        );
        assert_eq!(status, 200, "{t}");
        let mut details_total = Decimal::ZERO;
        for line in t["lines"].as_array().unwrap() {
            let taxes: Vec<Decimal> = line["details"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| d(&x["tax"]))
                .collect();
            assert!(
                taxes
                    .iter()
                    .all(|x| (x * Decimal::ONE_HUNDRED).fract().is_zero()),
                "{postal}: {taxes:?}"
            );
            assert_eq!(
                taxes.iter().copied().sum::<Decimal>(),
                d(&line["tax"]),
                "{t}"
            );
            details_total += taxes.iter().copied().sum::<Decimal>();
        }
        let summary: Decimal = t["summary"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| d(&s["tax"]))
            .sum();
        assert_eq!(
            (details_total, summary),
            (d(&t["totalTax"]), d(&t["totalTax"])),
            "{t}"
        );
    }
}
