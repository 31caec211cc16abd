//! HTTP conformance suite: a real HTTP client against `levy_server::serve` on an
//! ephemeral loopback port, through every endpoint in every API version.
//!
//! Expected amounts come from the suite's table (see `common::table_bytes`): ZIP 37201
//! owes the Tennessee state rate of 7% plus the Nashville city rate of 2.25%.
//! Expected error types and statuses come from the interface spec
//! (`tax-service-interface.md`, Errors) and its notes, as levy implements them.

mod common;

use common::{
    calc_body, dec, Answer, Call, Client, TestServer, OTHER_LIVE, OTHER_TEST, SHOP_LIVE, SHOP_TEST,
};
use levy_core::Decimal;
use serde_json::{json, Value};

/// Every version of the interface, and `None` for no header (which means 2024-09-01).
const VERSIONS: [Option<&str>; 5] = [
    None,
    Some("2024-09-01"),
    Some("2025-05-12"),
    Some("2026-01-01"),
    Some("2026-03-01"),
];

fn flat(version: Option<&str>) -> bool {
    matches!(version, Some("2026-01-01") | Some("2026-03-01"))
}

/// Checks an error answer in the format `version` selects: flat `{code, type, message}`
/// from 2026-01-01, `{error: {error_code, error_message[, error_meta]}, request_id}` before.
fn assert_error(a: &Answer, version: Option<&str>, status: u16, kind: &str) -> Value {
    assert_eq!(
        a.status, status,
        "expected {status} {kind}, got: {}",
        a.text
    );
    assert!(
        a.content_type.starts_with("application/json"),
        "content type {}",
        a.content_type
    );
    let body = a.json();
    if flat(version) {
        let obj = body.as_object().unwrap();
        assert_eq!(
            obj.len(),
            3,
            "flat errors have exactly code, type, message: {body}"
        );
        assert_eq!(body["code"], json!(status), "{body}");
        assert_eq!(body["type"], json!(kind), "{body}");
        assert!(!body["message"].as_str().unwrap().is_empty());
    } else {
        assert_eq!(
            body["error"]["error_code"],
            json!(kind.to_ascii_lowercase()),
            "{body}"
        );
        assert!(
            !body["error"]["error_message"].as_str().unwrap().is_empty(),
            "{body}"
        );
        // The body's request id is the one in the header and in the log lines.
        assert_eq!(body["request_id"], json!(a.request_id), "{body}");
        assert!(a.request_id.starts_with("req_"));
    }
    body
}

fn calculate(c: &Client, key: &str, version: Option<&str>, amounts: &[i64]) -> Value {
    let a = c.json(
        "POST",
        "/tax/calculations",
        key,
        version,
        &calc_body(amounts),
    );
    assert_eq!(a.status, 200, "{}", a.text);
    a.json()
}

fn record(c: &Client, key: &str, version: Option<&str>, amounts: &[i64], order: &str) -> Value {
    let calc = calculate(c, key, version, amounts);
    let a = c.json(
        "POST",
        "/tax/transactions",
        key,
        version,
        &json!({"calculation_id": calc["id"], "reference_order_id": order}),
    );
    assert_eq!(a.status, 200, "{}", a.text);
    a.json()
}

fn vlabel(version: Option<&str>) -> &str {
    version.unwrap_or("none")
}

#[test]
fn openapi_document_is_served_without_a_key() {
    let server = TestServer::start("openapi");
    let a = server.client().send(Call {
        method: "GET",
        path: "/openapi.json",
        key: None,
        version: None,
        body: None,
        content_type: None,
    });
    assert_eq!(a.status, 200);
    assert_eq!(a.content_type, "application/json");
    assert_eq!(a.text, levy_server::OPENAPI_JSON);
    assert_eq!(a.json()["openapi"], "3.1.0");
}

#[test]
fn every_response_has_its_own_request_id() {
    let server = TestServer::start("request-id");
    let c = server.client();
    let a = c.bare("GET", "/tax/ping", SHOP_TEST, None);
    let b = c.bare("GET", "/tax/nowhere", SHOP_TEST, None);
    for x in [&a, &b] {
        // `req_` + 24 hex digits: 96 random bits.
        assert_eq!(x.request_id.len(), 4 + 24, "{}", x.request_id);
        assert!(x.request_id[4..].bytes().all(|b| b.is_ascii_hexdigit()));
    }
    assert_ne!(a.request_id, b.request_id);
    // Random, not a counter: among 40 ids no two share even their first 8 hex digits (a
    // counter, or a per-process prefix, would share them all; for random ids the chance
    // of any such pair is 780 / 2^32).
    let ids: std::collections::BTreeSet<String> = (0..40)
        .map(|_| c.bare("GET", "/tax/ping", SHOP_TEST, None).request_id[4..12].to_string())
        .collect();
    assert_eq!(ids.len(), 40, "{ids:?}");
}

#[test]
fn bad_keys_are_401_in_each_versions_format() {
    let server = TestServer::start("keys");
    let c = server.client();
    let wrong_tail = format!("{}x", &SHOP_TEST[..SHOP_TEST.len() - 1]);
    for v in VERSIONS {
        // No Authorization header at all.
        let a = c.send(Call {
            method: "GET",
            path: "/tax/ping",
            key: None,
            version: v,
            body: None,
            content_type: None,
        });
        assert_error(&a, v, 401, "UNAUTHORIZED");
        // Unknown keys, a known key's prefix with another tail, an empty key.
        for key in ["sk_test_nobody", wrong_tail.as_str(), "sk_live_nobody", ""] {
            let a = c.bare("GET", "/tax/ping", key, v);
            assert_error(&a, v, 401, "UNAUTHORIZED");
        }
        // Another scheme, with a valid key.
        let mut req = ureq::get(&format!("{}/tax/ping", server.base))
            .set("Authorization", &format!("Basic {SHOP_TEST}"));
        if let Some(v) = v {
            req = req.set("X-API-Version", v);
        }
        let resp = match req.call() {
            Err(ureq::Error::Status(_, r)) => r,
            other => panic!("expected 401, got {other:?}"),
        };
        assert_eq!(resp.header("www-authenticate"), Some("Bearer"));
        let a = Answer {
            status: resp.status(),
            content_type: resp.header("content-type").unwrap_or("").to_string(),
            request_id: resp.header("x-request-id").unwrap_or("").to_string(),
            coverage: resp.header("levy-coverage").map(str::to_string),
            retry_after: resp.header("retry-after").map(str::to_string),
            text: resp.into_string().unwrap(),
        };
        assert_error(&a, v, 401, "UNAUTHORIZED");
        // A body with a bad key: still 401, nothing created.
        let a = c.json(
            "POST",
            "/tax/calculations",
            "sk_test_nobody",
            v,
            &calc_body(&[100]),
        );
        assert_error(&a, v, 401, "UNAUTHORIZED");
    }
}

#[test]
fn ping_reports_mode_and_version() {
    let server = TestServer::start("ping");
    let c = server.client();
    for v in VERSIONS {
        for (key, env) in [
            (SHOP_TEST, "test"),
            (SHOP_LIVE, "prod"),
            (OTHER_TEST, "test"),
            (OTHER_LIVE, "prod"),
        ] {
            let a = c.bare("GET", "/tax/ping", key, v);
            assert_eq!(a.status, 200, "{}", a.text);
            let body = a.json();
            assert_eq!(body["status"], "ok");
            assert_eq!(body["env"], env);
            // The notes: api_version is the header's value, or 2024-09-01 without one.
            assert_eq!(body["api_version"], v.unwrap_or("2024-09-01"));
        }
    }
    // A version that does not exist.
    let a = c.bare("GET", "/tax/ping", SHOP_TEST, Some("2023-01-01"));
    let body = assert_error(&a, None, 400, "INVALID_API_VERSION");
    assert_eq!(body["error"]["error_meta"]["field"], "X-API-Version");
}

#[test]
fn calculations_in_every_version() {
    let server = TestServer::start("calculations");
    let c = server.client();
    for v in VERSIONS {
        let body = calculate(&c, SHOP_TEST, v, &[10_000, 2_000]);
        // Line 0: 10000 x 7% = 700, 10000 x 2.25% = 225, 925 in all.
        // Line 1: 2000 x 7% = 140, 2000 x 2.25% = 45, 185 in all.
        // Totals: tax 925 + 185 = 1110; excluding tax 12000; including 13110.
        assert_eq!(
            dec(&body["total_tax_amount"]),
            Decimal::from(1110),
            "{}",
            vlabel(v)
        );
        assert_eq!(
            dec(&body["total_amount_excluding_tax"]),
            Decimal::from(12_000)
        );
        assert_eq!(
            dec(&body["total_amount_including_tax"]),
            Decimal::from(13_110)
        );
        assert_eq!(body["object"], "tax.calculation");
        assert!(body["id"].as_str().unwrap().starts_with("calc_"));
        assert_eq!(body["testmode"], json!(true));
        assert_eq!(body["customer_currency_code"], "USD");
        let lines = body["line_items"].as_array().unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(dec(&lines[0]["tax_amount"]), Decimal::from(925));
        assert_eq!(
            dec(&lines[0]["amount_including_tax"]),
            Decimal::from(10_925)
        );
        assert_eq!(dec(&lines[1]["tax_amount"]), Decimal::from(185));
        assert_eq!(
            lines[0]["product"]["product_tax_code"],
            "GENERAL_MERCHANDISE"
        );
        assert_eq!(lines[0]["product"]["reference_line_item_id"], "l0");
        let rates: Vec<Decimal> = lines[0]["tax_jurisdictions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| dec(&j["tax_rate"]))
            .collect();
        assert_eq!(
            rates.iter().copied().sum::<Decimal>(),
            Decimal::new(925, 4),
            "7% + 2.25%"
        );
        let j0 = &lines[0]["tax_jurisdictions"][0];
        // Fields by version (spec, Versioning): jurisdiction_name is the 2024-09-01 shape;
        // authority fields from 2026-01-01; resolution fields from 2025-05-12 and 2026-03-01.
        assert_eq!(
            j0.get("jurisdiction_name").is_some(),
            v.is_none() || v == Some("2024-09-01"),
            "{}",
            vlabel(v)
        );
        assert_eq!(
            j0.get("tax_authority_name").is_some(),
            flat(v),
            "{}",
            vlabel(v)
        );
        let since_2025 = matches!(
            v,
            Some("2025-05-12") | Some("2026-01-01") | Some("2026-03-01")
        );
        assert_eq!(
            body.get("address_resolution_status").is_some(),
            since_2025,
            "{}",
            vlabel(v)
        );
        assert_eq!(
            body.get("location_source").is_some(),
            v == Some("2026-03-01"),
            "{}",
            vlabel(v)
        );
        if v == Some("2026-03-01") {
            assert_eq!(body["location_source"], "address");
            // tax_due_decimal on calculations from 2026-03-01: 700 and 225 for line 0.
            let dues: Vec<Decimal> = lines[0]["tax_jurisdictions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| dec(&j["tax_due_decimal"]))
                .collect();
            assert_eq!(dues.iter().copied().sum::<Decimal>(), Decimal::from(925));
        }
        // Live keys calculate too, and say so.
        let live = calculate(&c, SHOP_LIVE, v, &[10_000]);
        assert_eq!(live["testmode"], json!(false));
        assert_eq!(dec(&live["total_tax_amount"]), Decimal::from(925));
    }
}

#[test]
fn origin_address_is_required_from_2025_05_12() {
    let server = TestServer::start("origin");
    let c = server.client();
    let mut body = calc_body(&[10_000]);
    body.as_object_mut().unwrap().remove("origin_address");
    for v in VERSIONS {
        let a = c.json("POST", "/tax/calculations", SHOP_TEST, v, &body);
        if matches!(v, None | Some("2024-09-01")) {
            assert_eq!(a.status, 200, "{}", a.text);
        } else {
            let e = assert_error(&a, v, 400, "MISSING_ORIGIN_ADDRESS");
            if !flat(v) {
                assert_eq!(e["error"]["error_meta"]["field"], "origin_address");
            }
        }
    }
}

#[test]
fn malformed_json_wrong_types_and_missing_fields() {
    let server = TestServer::start("validation");
    let c = server.client();
    for v in VERSIONS {
        let send_raw = |text: &str| {
            c.send(Call {
                method: "POST",
                path: "/tax/calculations",
                key: Some(SHOP_TEST),
                version: v,
                body: Some(text.as_bytes()),
                content_type: None,
            })
        };
        // Cut-off JSON, a JSON array, a bare string.
        assert_error(&send_raw(r#"{"customer": {"#), v, 400, "INVALID_JSON");
        assert_error(&send_raw("[1, 2]"), v, 400, "INVALID_JSON");
        assert_error(&send_raw(r#""hello""#), v, 400, "INVALID_JSON");
        // Bytes that are not UTF-8.
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version: v,
            body: Some(&[0xff, 0xfe, b'{']),
            content_type: None,
        });
        assert_error(&a, v, 400, "INVALID_JSON");

        // Wrong type: quantity as a string.
        let mut body = calc_body(&[10_000]);
        body["order_details"]["line_items"][0]["quantity"] = json!("two");
        let e = assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "INCORRECT_TYPE",
        );
        if !flat(v) {
            assert_eq!(
                e["error"]["error_meta"]["field"],
                "order_details.line_items[0].quantity"
            );
            assert_eq!(e["error"]["error_meta"]["received"], "\"two\"");
        }
        // Wrong type: customer as a number.
        let mut body = calc_body(&[10_000]);
        body["customer"] = json!(5);
        assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "INCORRECT_TYPE",
        );

        // Missing fields: order_details, then the line amount.
        let mut body = calc_body(&[10_000]);
        body.as_object_mut().unwrap().remove("order_details");
        let e = assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "MISSING_FIELD",
        );
        if !flat(v) {
            assert_eq!(e["error"]["error_meta"]["field"], "order_details");
        }
        let mut body = calc_body(&[10_000]);
        body["order_details"]["line_items"][0]
            .as_object_mut()
            .unwrap()
            .remove("amount");
        let e = assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "MISSING_FIELD",
        );
        if !flat(v) {
            assert_eq!(
                e["error"]["error_meta"]["field"],
                "order_details.line_items[0].amount"
            );
        }
        // An empty body where one is required.
        let a = c.send(Call {
            method: "POST",
            path: "/tax/transactions",
            key: Some(SHOP_TEST),
            version: v,
            body: None,
            content_type: None,
        });
        assert_error(&a, v, 400, "INVALID_JSON");
        // A field the endpoint does not know.
        let mut body = calc_body(&[10_000]);
        body["surprise"] = json!(1);
        assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "UNRECOGNIZED_FIELD",
        );
        // A negative amount.
        assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &calc_body(&[-5])),
            v,
            400,
            "POSITIVE_NUMBER_REQUIRED",
        );
        // Missing transaction fields.
        let a = c.json(
            "POST",
            "/tax/transactions",
            SHOP_TEST,
            v,
            &json!({"reference_order_id": "x"}),
        );
        assert_error(&a, v, 400, "MISSING_FIELD");
    }
}

#[test]
fn request_bodies_must_be_json() {
    let server = TestServer::start("content-type");
    let c = server.client();
    let body = calc_body(&[10_000]).to_string();
    for v in VERSIONS {
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/jsonx",
            // A structured `+json` suffix counts under `application/` only.
            "text/vnd.example+json",
        ] {
            let a = c.send(Call {
                method: "POST",
                path: "/tax/calculations",
                key: Some(SHOP_TEST),
                version: v,
                body: Some(body.as_bytes()),
                content_type: Some(ct),
            });
            assert_error(&a, v, 415, "UNSUPPORTED_MEDIA_TYPE");
        }
        // Parameters and case do not matter, and a `+json` media type is JSON (RFC 6839).
        for ct in [
            "application/json; charset=utf-8",
            "Application/JSON",
            "Application/Vnd.Example+JSON; charset=utf-8",
        ] {
            let a = c.send(Call {
                method: "POST",
                path: "/tax/calculations",
                key: Some(SHOP_TEST),
                version: v,
                body: Some(body.as_bytes()),
                content_type: Some(ct),
            });
            assert_eq!(a.status, 200, "{ct}: {}", a.text);
        }
    }
}

#[test]
fn oversize_bodies_are_413_and_the_limit_itself_is_accepted() {
    let server = TestServer::start("oversize");
    let c = server.client();
    let limit = levy_server::DEFAULT_BODY_LIMIT; // 1 MiB = 1048576 bytes
    for v in VERSIONS {
        // One byte over the limit, with a Content-Length: refused before it is read.
        let big = vec![b' '; limit + 1];
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version: v,
            body: Some(&big),
            content_type: None,
        });
        assert_error(&a, v, 413, "REQUEST_TOO_LARGE");
    }
    // Chunked (no Content-Length): refused once the limit is crossed while reading.
    for v in [None, Some("2026-03-01")] {
        let mut req = ureq::post(&format!("{}/tax/calculations", server.base))
            .set("Authorization", &format!("Bearer {SHOP_TEST}"))
            .set("Content-Type", "application/json");
        if let Some(v) = v {
            req = req.set("X-API-Version", v);
        }
        let reader = std::io::Read::take(std::io::repeat(b' '), 2 * limit as u64);
        let resp = match req.send(reader) {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("transport error: {e}"),
        };
        let a = Answer {
            status: resp.status(),
            content_type: resp.header("content-type").unwrap_or("").to_string(),
            request_id: resp.header("x-request-id").unwrap_or("").to_string(),
            coverage: resp.header("levy-coverage").map(str::to_string),
            retry_after: resp.header("retry-after").map(str::to_string),
            text: resp.into_string().unwrap(),
        };
        assert_error(&a, v, 413, "REQUEST_TOO_LARGE");
    }
    // Exactly the limit: a valid calculation padded with spaces to 1048576 bytes.
    let mut text = calc_body(&[10_000]).to_string().into_bytes();
    text.resize(limit, b' ');
    let a = c.send(Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(SHOP_TEST),
        version: None,
        body: Some(&text),
        content_type: None,
    });
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(dec(&a.json()["total_tax_amount"]), Decimal::from(925));
}

#[test]
fn a_raised_body_limit_is_the_servers_and_the_services() {
    // The server reads its limit from the service: raising the service's lets the larger
    // body through the HTTP layer and the service alike.
    let limit = 2 * levy_server::DEFAULT_BODY_LIMIT;
    let server = TestServer::start_configured(
        "raised-limit",
        levy_server::ServeOptions::loopback_ephemeral(),
        |s| s.with_body_limit(limit),
    );
    assert_eq!(server.service.body_limit(), limit);
    let c = server.client();
    let padded = |len: usize| {
        let mut text = calc_body(&[10_000]).to_string().into_bytes();
        text.resize(len, b' ');
        text
    };
    for len in [levy_server::DEFAULT_BODY_LIMIT + 1, limit] {
        let body = padded(len);
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version: None,
            body: Some(&body),
            content_type: None,
        });
        assert_eq!(a.status, 200, "{len} bytes: {}", a.text);
        assert_eq!(dec(&a.json()["total_tax_amount"]), Decimal::from(925));
    }
    for v in [None, Some("2026-03-01")] {
        let body = padded(limit + 1);
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version: v,
            body: Some(&body),
            content_type: None,
        });
        let body = assert_error(&a, v, 413, "REQUEST_TOO_LARGE");
        let message = if flat(v) {
            &body["message"]
        } else {
            &body["error"]["error_message"]
        };
        assert!(
            message.as_str().unwrap().contains(&limit.to_string()),
            "{body}"
        );
    }
    // The default service refuses the body the raised one took.
    let default = TestServer::start("default-limit");
    let body = padded(levy_server::DEFAULT_BODY_LIMIT + 1);
    let a = default.client().send(Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(SHOP_TEST),
        version: None,
        body: Some(&body),
        content_type: None,
    });
    assert_error(&a, None, 413, "REQUEST_TOO_LARGE");
}

#[test]
fn transactions_duplicates_unknown_ids_and_deletion() {
    let server = TestServer::start("transactions");
    let c = server.client();
    for v in VERSIONS {
        let order = format!("order-{}", vlabel(v));
        let tx = record(&c, SHOP_TEST, v, &[10_000, 2_000], &order);
        let id = tx["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("tr_"));
        assert_eq!(tx["object"], "tax.transaction");
        assert_eq!(tx["reference_order_id"], json!(order));
        // The spec shows testmode as a string on transactions.
        assert_eq!(tx["testmode"], "true");
        // Same amounts as the calculation: 925 + 185 = 1110.
        let lines = tx["line_items"].as_array().unwrap();
        assert_eq!(
            dec(&lines[0]["tax_amount"]) + dec(&lines[1]["tax_amount"]),
            Decimal::from(1110)
        );

        let got = c.bare("GET", &format!("/tax/transactions/{id}"), SHOP_TEST, v);
        assert_eq!(got.status, 200, "{}", got.text);
        assert_eq!(got.json(), tx, "GET answers what POST answered");

        // The same order id again, from a new calculation: 409, and the first one stays.
        let calc = calculate(&c, SHOP_TEST, v, &[1]);
        let dup = c.json(
            "POST",
            "/tax/transactions",
            SHOP_TEST,
            v,
            &json!({"calculation_id": calc["id"], "reference_order_id": order}),
        );
        let e = assert_error(&dup, v, 409, "DUPLICATE_REFERENCE_ORDER_ID");
        if !flat(v) {
            assert_eq!(e["error"]["error_meta"]["field"], "reference_order_id");
        }

        // Unknown calculation: 404, message naming the id (spec: calculation_not_found).
        let a = c.json(
            "POST",
            "/tax/transactions",
            SHOP_TEST,
            v,
            &json!({"calculation_id": "calc_nope", "reference_order_id": format!("{order}-x")}),
        );
        let e = assert_error(&a, v, 404, "CALCULATION_NOT_FOUND");
        let message = if flat(v) {
            e["message"].as_str()
        } else {
            e["error"]["error_message"].as_str()
        };
        assert!(message.unwrap().contains("calc_nope"));

        // Unknown transaction ids.
        for path in [
            "/tax/transactions/tr_nope",
            "/tax/transactions/tr_nope/refunds",
        ] {
            assert_error(
                &c.bare("GET", path, SHOP_TEST, v),
                v,
                404,
                "TRANSACTION_NOT_FOUND",
            );
        }

        // Delete: 200 with deleted_at; then it is gone; deleting again is a 400.
        let d = c.bare("DELETE", &format!("/tax/transactions/{id}"), SHOP_TEST, v);
        assert_eq!(d.status, 200, "{}", d.text);
        assert_eq!(d.json()["object"], "tax.transaction");
        assert!(d.json()["deleted_at"].as_i64().unwrap() > 1_700_000_000);
        assert_error(
            &c.bare("GET", &format!("/tax/transactions/{id}"), SHOP_TEST, v),
            v,
            404,
            "TRANSACTION_NOT_FOUND",
        );
        assert_error(
            &c.bare("DELETE", &format!("/tax/transactions/{id}"), SHOP_TEST, v),
            v,
            400,
            "TRANSACTION_ALREADY_DELETED",
        );
    }
}

#[test]
fn test_and_live_data_are_isolated_both_ways() {
    let server = TestServer::start("modes");
    let c = server.client();
    for v in VERSIONS {
        let order = format!("shared-order-{}", vlabel(v));
        let test_tx = record(&c, SHOP_TEST, v, &[10_000], &order);
        // The same order id is free in live mode: the modes do not share order ids.
        let live_tx = record(&c, SHOP_LIVE, v, &[10_000], &order);
        assert_eq!(live_tx["testmode"], "false");
        for (tx, other) in [(&test_tx, SHOP_LIVE), (&live_tx, SHOP_TEST)] {
            let id = tx["id"].as_str().unwrap();
            assert_error(
                &c.bare("GET", &format!("/tax/transactions/{id}"), other, v),
                v,
                404,
                "TRANSACTION_NOT_FOUND",
            );
            assert_error(
                &c.bare("GET", &format!("/tax/transactions/{id}/refunds"), other, v),
                v,
                404,
                "TRANSACTION_NOT_FOUND",
            );
            let r = c.json(
                "POST",
                "/tax/refunds",
                other,
                v,
                &json!({"transaction_id": id, "type": "full"}),
            );
            assert_error(&r, v, 404, "TRANSACTION_NOT_FOUND");
            let d = c.bare("DELETE", &format!("/tax/transactions/{id}"), other, v);
            assert!(d.status == 404 || d.status == 400, "{}", d.text);
        }
        // A test calculation cannot be recorded with a live key, nor the reverse.
        for (maker, user) in [(SHOP_TEST, SHOP_LIVE), (SHOP_LIVE, SHOP_TEST)] {
            let calc = calculate(&c, maker, v, &[100]);
            let a = c.json(
                "POST",
                "/tax/transactions",
                user,
                v,
                &json!({"calculation_id": calc["id"], "reference_order_id": format!("{order}-cross")}),
            );
            assert_error(&a, v, 404, "CALCULATION_NOT_FOUND");
        }
        // Both still there for their own mode.
        for (tx, key) in [(&test_tx, SHOP_TEST), (&live_tx, SHOP_LIVE)] {
            let a = c.bare(
                "GET",
                &format!("/tax/transactions/{}", tx["id"].as_str().unwrap()),
                key,
                v,
            );
            assert_eq!(a.status, 200);
        }
    }
}

#[test]
fn accounts_are_isolated_both_ways() {
    let server = TestServer::start("accounts");
    let c = server.client();
    for v in VERSIONS {
        for (mine, theirs) in [
            (SHOP_TEST, OTHER_TEST),
            (OTHER_TEST, SHOP_TEST),
            (SHOP_LIVE, OTHER_LIVE),
            (OTHER_LIVE, SHOP_LIVE),
        ] {
            let order = format!("acct-{}-{}", &mine[..12], vlabel(v));
            let tx = record(&c, mine, v, &[10_000], &order);
            let id = tx["id"].as_str().unwrap();
            assert_error(
                &c.bare("GET", &format!("/tax/transactions/{id}"), theirs, v),
                v,
                404,
                "TRANSACTION_NOT_FOUND",
            );
            let r = c.json(
                "POST",
                "/tax/refunds",
                theirs,
                v,
                &json!({"transaction_id": id, "type": "full"}),
            );
            assert_error(&r, v, 404, "TRANSACTION_NOT_FOUND");
            // Their own calculation with my order id: allowed, order ids are per account.
            let theirs_tx = record(&c, theirs, v, &[10_000], &order);
            assert_ne!(theirs_tx["id"], tx["id"]);
            // My calculation is not theirs to record.
            let calc = calculate(&c, mine, v, &[100]);
            let a = c.json(
                "POST",
                "/tax/transactions",
                theirs,
                v,
                &json!({"calculation_id": calc["id"], "reference_order_id": format!("{order}-c")}),
            );
            assert_error(&a, v, 404, "CALCULATION_NOT_FOUND");
        }
        // Customers and products too.
        let email = format!("a-{}@example.com", vlabel(v));
        let cus = c.json(
            "POST",
            "/tax/customers",
            SHOP_TEST,
            v,
            &json!({"email": email}),
        );
        assert_eq!(cus.status, 200, "{}", cus.text);
        let cid = cus.json()["id"].as_str().unwrap().to_string();
        assert_error(
            &c.bare("GET", &format!("/tax/customers/{cid}"), OTHER_TEST, v),
            v,
            404,
            "CUSTOMER_NOT_FOUND",
        );
        assert_error(
            &c.bare("GET", &format!("/tax/customers/{cid}"), SHOP_LIVE, v),
            v,
            404,
            "CUSTOMER_NOT_FOUND",
        );
        let pid = format!("iso-{}", vlabel(v));
        let p = c.json(
            "POST",
            "/tax/products",
            SHOP_TEST,
            v,
            &json!({"reference_product_id": pid, "reference_product_name": "Mug", "product_category": "GENERAL_MERCHANDISE"}),
        );
        assert_eq!(p.status, 200, "{}", p.text);
        assert_error(
            &c.bare("GET", &format!("/tax/products/{pid}"), OTHER_TEST, v),
            v,
            404,
            "PRODUCT_NOT_FOUND",
        );
        assert_error(
            &c.bare("GET", &format!("/tax/products/{pid}"), SHOP_LIVE, v),
            v,
            404,
            "PRODUCT_NOT_FOUND",
        );
    }
}

#[test]
fn refunds_full_partial_over_and_reversals() {
    let server = TestServer::start("refunds");
    let c = server.client();
    for v in VERSIONS {
        // Line l0: 10000 + 925 tax; line l1: 2000 + 185 tax.
        let tx = record(
            &c,
            SHOP_TEST,
            v,
            &[10_000, 2_000],
            &format!("refund-{}", vlabel(v)),
        );
        let tid = tx["id"].as_str().unwrap().to_string();
        let partial = |sales: i64, tax: i64| {
            json!({"transaction_id": tid, "type": "partial", "line_items": [
                {"reference_line_item_id": "l1", "sales_amount_refunded": sales, "tax_amount_refunded": tax}]})
        };

        // Partial refund of all of l1.
        let a = c.json("POST", "/tax/refunds", SHOP_TEST, v, &partial(-2000, -185));
        assert_eq!(a.status, 200, "{}", a.text);
        let p1 = a.json();
        assert!(p1["id"].as_str().unwrap().starts_with("ref_tr_"));
        assert_eq!(p1["object"], "tax.refund");
        assert_eq!(p1["refund_type"], "partial");
        let l = &p1["line_items"][0];
        assert_eq!(dec(&l["amount_excluding_tax"]), Decimal::from(-2000));
        assert_eq!(dec(&l["tax_amount"]), Decimal::from(-185));
        assert_eq!(dec(&l["amount_including_tax"]), Decimal::from(-2185));

        // One more cent of l1 is an over-refund.
        let e = assert_error(
            &c.json("POST", "/tax/refunds", SHOP_TEST, v, &partial(-1, 0)),
            v,
            400,
            "REFUND_EXCEEDS_TRANSACTION",
        );
        if !flat(v) {
            assert_eq!(
                e["error"]["error_meta"]["field"],
                "line_items[0].sales_amount_refunded"
            );
        }
        // Refund amounts must be negative.
        assert_error(
            &c.json("POST", "/tax/refunds", SHOP_TEST, v, &partial(100, 0)),
            v,
            400,
            "NEGATIVE_NUMBER_REQUIRED",
        );
        // A partial refund without lines.
        assert_error(
            &c.json(
                "POST",
                "/tax/refunds",
                SHOP_TEST,
                v,
                &json!({"transaction_id": tid, "type": "partial"}),
            ),
            v,
            400,
            "MISSING_FIELD",
        );

        // A full refund takes what is left: l0 only, -10000 and -925.
        let a = c.json(
            "POST",
            "/tax/refunds",
            SHOP_TEST,
            v,
            &json!({"transaction_id": tid, "type": "full"}),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        let full = a.json();
        assert_eq!(full["refund_type"], "full");
        let lines = full["line_items"].as_array().unwrap();
        assert_eq!(lines.len(), 1, "{full}");
        assert_eq!(
            dec(&lines[0]["amount_excluding_tax"]),
            Decimal::from(-10_000)
        );
        assert_eq!(dec(&lines[0]["tax_amount"]), Decimal::from(-925));

        // Nothing is left: a second full refund is an over-refund.
        assert_error(
            &c.json(
                "POST",
                "/tax/refunds",
                SHOP_TEST,
                v,
                &json!({"transaction_id": tid, "type": "full"}),
            ),
            v,
            400,
            "REFUND_EXCEEDS_TRANSACTION",
        );

        // Both refunds are listed, in order.
        let list = c.bare(
            "GET",
            &format!("/tax/transactions/{tid}/refunds"),
            SHOP_TEST,
            v,
        );
        assert_eq!(list.status, 200, "{}", list.text);
        let ids: Vec<Value> = list.json()["refunds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        assert_eq!(ids, vec![p1["id"].clone(), full["id"].clone()]);

        // Reverse the partial refund; reversing it twice is refused.
        let rev = c.json(
            "POST",
            "/tax/refund_reversals",
            SHOP_TEST,
            v,
            &json!({"refund_id": p1["id"]}),
        );
        assert_eq!(rev.status, 200, "{}", rev.text);
        assert_eq!(rev.json()["id"], p1["id"]);
        assert!(rev.json()["reversed_at"].as_i64().is_some());
        let again = c.json(
            "POST",
            "/tax/refund_reversals",
            SHOP_TEST,
            v,
            &json!({"refund_id": p1["id"]}),
        );
        assert_error(&again, v, 409, "REFUND_ALREADY_REVERSED");

        // After the reversal, l1 can be refunded again, but only once more.
        let a = c.json("POST", "/tax/refunds", SHOP_TEST, v, &partial(-2000, -185));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_error(
            &c.json("POST", "/tax/refunds", SHOP_TEST, v, &partial(-2000, -185)),
            v,
            400,
            "REFUND_EXCEEDS_TRANSACTION",
        );

        // Unknown ids, and other modes' refunds.
        let a = c.json(
            "POST",
            "/tax/refund_reversals",
            SHOP_TEST,
            v,
            &json!({"refund_id": "ref_tr_nope"}),
        );
        assert_error(&a, v, 404, "REFUND_NOT_FOUND");
        let a = c.json(
            "POST",
            "/tax/refund_reversals",
            SHOP_LIVE,
            v,
            &json!({"refund_id": full["id"]}),
        );
        assert_error(&a, v, 404, "REFUND_NOT_FOUND");
        let a = c.json(
            "POST",
            "/tax/refunds",
            SHOP_TEST,
            v,
            &json!({"transaction_id": "tr_nope", "type": "full"}),
        );
        assert_error(&a, v, 404, "TRANSACTION_NOT_FOUND");
        let a = c.json(
            "POST",
            "/tax/refunds",
            SHOP_TEST,
            v,
            &json!({"transaction_id": tid, "type": "most"}),
        );
        assert_error(&a, v, 400, "INCORRECT_TYPE");
    }
}

#[test]
fn customers_and_exempt_customers_in_every_version() {
    let server = TestServer::start("customers");
    let c = server.client();
    for v in VERSIONS {
        let reference = format!("crm-{}", vlabel(v));
        let a = c.json(
            "POST",
            "/tax/customers",
            SHOP_TEST,
            v,
            &json!({"email": "buyer@example.com", "name": "Buyer", "is_tax_exempt": true, "reference_customer_id": reference}),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        let cus = a.json();
        let id = cus["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("cus_"));
        assert_eq!(cus["object"], "tax.customer");
        assert_eq!(cus["is_tax_exempt"], json!(true));

        let by_id = c.bare("GET", &format!("/tax/customers/{id}"), SHOP_TEST, v);
        assert_eq!(by_id.json(), cus);
        let by_ref = c.bare(
            "GET",
            &format!("/tax/customers/{reference}?id_type=reference_customer_id"),
            SHOP_TEST,
            v,
        );
        assert_eq!(by_ref.status, 200, "{}", by_ref.text);
        assert_eq!(by_ref.json()["id"], json!(id));

        // An exempt customer owes nothing (spec, What the service does, 4).
        let mut body = calc_body(&[10_000]);
        body["customer"]["id"] = json!(id);
        let a = c.json("POST", "/tax/calculations", SHOP_TEST, v, &body);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(dec(&a.json()["total_tax_amount"]), Decimal::ZERO);
        assert_eq!(
            dec(&a.json()["total_amount_including_tax"]),
            Decimal::from(10_000)
        );

        // A bad e-mail, a missing one.
        let a = c.json(
            "POST",
            "/tax/customers",
            SHOP_TEST,
            v,
            &json!({"email": "not-an-address"}),
        );
        assert_error(&a, v, 400, "INVALID_EMAIL");
        let a = c.json(
            "POST",
            "/tax/customers",
            SHOP_TEST,
            v,
            &json!({"name": "x"}),
        );
        assert_error(&a, v, 400, "MISSING_FIELD");

        let d = c.bare("DELETE", &format!("/tax/customers/{id}"), SHOP_TEST, v);
        assert_eq!(d.status, 200, "{}", d.text);
        assert_eq!(d.json()["object"], "tax.customer");
        assert!(d.json()["deleted_at"].as_i64().is_some());
        assert_error(
            &c.bare("GET", &format!("/tax/customers/{id}"), SHOP_TEST, v),
            v,
            404,
            "CUSTOMER_NOT_FOUND",
        );
        assert_error(
            &c.bare("DELETE", &format!("/tax/customers/{id}"), SHOP_TEST, v),
            v,
            404,
            "CUSTOMER_NOT_FOUND",
        );
    }
}

#[test]
fn products_in_every_version() {
    let server = TestServer::start("products");
    let c = server.client();
    for v in VERSIONS {
        let prefix = vlabel(v).replace('-', "");
        // 52 products: a first page of 50 and a second of 2 (spec, Limits: up to 50).
        for i in 0..52 {
            let a = c.json(
                "POST",
                "/tax/products",
                SHOP_TEST,
                v,
                &json!({"reference_product_id": format!("{prefix}-{i:03}"), "reference_product_name": format!("Item {i}"),
                        "product_category": "GENERAL_MERCHANDISE"}),
            );
            assert_eq!(a.status, 200, "{}", a.text);
        }
        let dup = c.json(
            "POST",
            "/tax/products",
            SHOP_TEST,
            v,
            &json!({"reference_product_id": format!("{prefix}-000"), "reference_product_name": "Again",
                    "product_category": "GENERAL_MERCHANDISE"}),
        );
        assert_error(&dup, v, 409, "DUPLICATE_PRODUCT");
        let bad = c.json(
            "POST",
            "/tax/products",
            SHOP_TEST,
            v,
            &json!({"reference_product_id": format!("{prefix}-bad"), "reference_product_name": "Bad",
                    "product_category": "NO_SUCH_CATEGORY"}),
        );
        assert_error(&bad, v, 400, "INVALID_PRODUCT_CATEGORY");

        let one = c.bare("GET", &format!("/tax/products/{prefix}-007"), SHOP_TEST, v);
        assert_eq!(one.status, 200, "{}", one.text);
        assert_eq!(one.json()["reference_product_name"], "Item 7");
        assert_eq!(one.json()["testmode"], json!(true));

        // Pages, from the start of this version's ids.
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                None => "/tax/products".to_string(),
                Some(cur) => format!("/tax/products?cursor={cur}"),
            };
            let page = c.bare("GET", &path, SHOP_TEST, v).json();
            let products = page["products"].as_array().unwrap();
            assert!(products.len() <= 50);
            seen.extend(
                products
                    .iter()
                    .map(|p| p["reference_product_id"].as_str().unwrap().to_string()),
            );
            if page["has_more"] != json!(true) {
                break;
            }
            cursor = Some(page["last_product_id"].as_str().unwrap().to_string());
        }
        let mine: Vec<&String> = seen
            .iter()
            .filter(|id| id.starts_with(&format!("{prefix}-")))
            .collect();
        assert_eq!(mine.len(), 52);

        // A line that names a registered product gets its category.
        let mut body = calc_body(&[10_000]);
        let line = body["order_details"]["line_items"][0]
            .as_object_mut()
            .unwrap();
        line.remove("product_category");
        line.insert(
            "reference_product_id".into(),
            json!(format!("{prefix}-003")),
        );
        let a = c.json("POST", "/tax/calculations", SHOP_TEST, v, &body);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(dec(&a.json()["total_tax_amount"]), Decimal::from(925));
        assert_eq!(
            a.json()["line_items"][0]["product"]["reference_product_name"],
            "Item 3"
        );
        // An unknown product (spec: product_not_found / PRODUCT_NOT_FOUND, 400 in the flat table).
        body["order_details"]["line_items"][0]["reference_product_id"] = json!("nope");
        assert_error(
            &c.json("POST", "/tax/calculations", SHOP_TEST, v, &body),
            v,
            400,
            "PRODUCT_NOT_FOUND",
        );

        let d = c.bare(
            "DELETE",
            &format!("/tax/products/{prefix}-007"),
            SHOP_TEST,
            v,
        );
        assert_eq!(d.status, 200, "{}", d.text);
        assert_error(
            &c.bare("GET", &format!("/tax/products/{prefix}-007"), SHOP_TEST, v),
            v,
            404,
            "PRODUCT_NOT_FOUND",
        );
    }
}

#[test]
fn unknown_routes_and_methods() {
    let server = TestServer::start("routes");
    let c = server.client();
    for v in VERSIONS {
        assert_error(
            &c.bare("GET", "/tax/nothing", SHOP_TEST, v),
            v,
            404,
            "NOT_FOUND",
        );
        assert_error(&c.bare("GET", "/", SHOP_TEST, v), v, 404, "NOT_FOUND");
        assert_error(
            &c.bare("PUT", "/tax/calculations", SHOP_TEST, v),
            v,
            405,
            "METHOD_NOT_ALLOWED",
        );
        assert_error(
            &c.bare("GET", "/tax/calculations", SHOP_TEST, v),
            v,
            405,
            "METHOD_NOT_ALLOWED",
        );
        // A path of a later version: a method it has in no version is 405 in every
        // version (it was 404 "exists from 2026-01-01" before that version, which
        // schemathesis reported); a method it has is 404 before its version.
        assert_error(
            &c.bare("PUT", "/tax/platform/calculations", SHOP_TEST, v),
            v,
            405,
            "METHOD_NOT_ALLOWED",
        );
    }
    assert_error(
        &c.bare("POST", "/tax/platform/calculations", SHOP_TEST, None),
        None,
        404,
        "NOT_FOUND",
    );
}

/// Versions in which merchants and platform endpoints exist (spec, Versioning, 4).
const FROM_2026_01: [&str; 2] = ["2026-01-01", "2026-03-01"];

fn merchant_body(reference: &str) -> Value {
    json!({"reference_merchant_id": reference, "name": "Corner Shop",
           "default_address": {"address_line_1": "1 Main St", "address_city": "NASHVILLE",
               "address_province": "TN", "address_postal_code": "37201", "address_country": "US"}})
}

#[test]
fn merchants_exist_from_2026_01_01_and_are_isolated() {
    let server = TestServer::start("merchants");
    let c = server.client();
    // Before 2026-01-01 the endpoints do not exist.
    for v in [None, Some("2024-09-01"), Some("2025-05-12")] {
        assert_error(
            &c.json("POST", "/tax/merchants", SHOP_TEST, v, &merchant_body("m0")),
            v,
            404,
            "NOT_FOUND",
        );
        assert_error(
            &c.bare("GET", "/tax/merchants", SHOP_TEST, v),
            v,
            404,
            "NOT_FOUND",
        );
    }
    for v in FROM_2026_01.map(Some) {
        let reference = format!("m-{}", vlabel(v));
        let a = c.json(
            "POST",
            "/tax/merchants",
            SHOP_TEST,
            v,
            &merchant_body(&reference),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        let m = a.json();
        let id = m["id"].as_str().unwrap().to_string();
        assert!(id.starts_with("merch_"));
        assert_eq!(m["object"], "tax.merchant");
        assert_eq!(m["status"], "active");
        assert_eq!(m["testmode"], json!(true));
        // Found by id and by reference_merchant_id (spec, GET /tax/merchants/{id}).
        for key in [&id, &reference] {
            let g = c.bare("GET", &format!("/tax/merchants/{key}"), SHOP_TEST, v);
            assert_eq!(g.status, 200, "{}", g.text);
            assert_eq!(g.json()["id"], json!(id));
        }
        // The other mode and the other account do not see it (merchant_not_found).
        for other in [SHOP_LIVE, OTHER_TEST] {
            assert_error(
                &c.bare("GET", &format!("/tax/merchants/{id}"), other, v),
                v,
                404,
                "MERCHANT_NOT_FOUND",
            );
        }
        // The same reference again is a duplicate; in live mode it is free.
        assert_error(
            &c.json(
                "POST",
                "/tax/merchants",
                SHOP_TEST,
                v,
                &merchant_body(&reference),
            ),
            v,
            409,
            "DUPLICATE_MERCHANT",
        );
        let live = c.json(
            "POST",
            "/tax/merchants",
            SHOP_LIVE,
            v,
            &merchant_body(&reference),
        );
        assert_eq!(live.status, 200, "{}", live.text);
        assert_eq!(live.json()["testmode"], json!(false));
        // Update, list, delete.
        let u = c.json(
            "POST",
            &format!("/tax/merchants/{id}"),
            SHOP_TEST,
            v,
            &json!({"name": "Renamed"}),
        );
        assert_eq!(u.status, 200, "{}", u.text);
        assert_eq!(u.json()["name"], "Renamed");
        let list = c.bare("GET", "/tax/merchants", SHOP_TEST, v);
        assert_eq!(list.status, 200, "{}", list.text);
        assert!(list.json()["merchants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == json!(id)));
        // Metadata values must be strings (spec, tax.merchant).
        let bad = c.json(
            "POST",
            &format!("/tax/merchants/{id}"),
            SHOP_TEST,
            v,
            &json!({"metadata": {"n": 5}}),
        );
        assert_eq!(bad.status, 400, "{}", bad.text);
        let d = c.bare("DELETE", &format!("/tax/merchants/{id}"), SHOP_TEST, v);
        assert_eq!(d.status, 200, "{}", d.text);
        assert_eq!(d.json()["status"], "deleted");
    }
}

#[test]
fn platform_calculations_and_transactions_from_2026_01_01() {
    let server = TestServer::start("platform");
    let c = server.client();
    for v in [None, Some("2024-09-01"), Some("2025-05-12")] {
        assert_error(
            &c.json(
                "POST",
                "/tax/platform/calculations",
                SHOP_TEST,
                v,
                &json!({}),
            ),
            v,
            404,
            "NOT_FOUND",
        );
        assert_error(
            &c.json(
                "POST",
                "/tax/platform/transactions",
                SHOP_TEST,
                v,
                &json!({}),
            ),
            v,
            404,
            "NOT_FOUND",
        );
    }
    for v in FROM_2026_01.map(Some) {
        let reference = format!("pm-{}", vlabel(v));
        assert_eq!(
            c.json(
                "POST",
                "/tax/merchants",
                SHOP_TEST,
                v,
                &merchant_body(&reference)
            )
            .status,
            200
        );
        let body = |roles: &[&str]| {
            json!({
                "customer": {"address": {"address_province": "TN", "address_postal_code": "37201", "address_country": "US"}},
                "merchant": {"merchant_id": reference},
                "order_details": {"customer_currency_code": "USD", "tax_included_in_amount": false,
                    "line_items": [{"amount": 2000, "quantity": 2, "product_category": "GENERAL_MERCHANDISE"}]},
                "fee_details": {"line_items": [{"amount": 400, "quantity": 1}]},
                "roles": roles,
            })
        };
        let a = c.json(
            "POST",
            "/tax/platform/calculations",
            SHOP_TEST,
            v,
            &body(&["payment_processor"]),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        let pc = a.json();
        // Per-unit amount: 2000 x 2 = 4000 at 9.25% = 280 + 90 = 370.
        // Fee: 400 at 9.25% = 28 + 9 = 37. Total tax 407.
        assert_eq!(
            dec(&pc["totals"]["order"]["tax_amount"]),
            Decimal::from(370),
            "{pc}"
        );
        assert_eq!(
            dec(&pc["totals"]["fees"]["tax_amount"]),
            Decimal::from(37),
            "{pc}"
        );
        assert_eq!(dec(&pc["total_tax_amount"]), Decimal::from(407));
        let j = &pc["line_items"][0]["tax_jurisdictions"][0];
        assert!(
            j["tax_authority_name"].is_string() && j["tax_type"] == "SALES",
            "{j}"
        );

        // A payment processor records two transactions (order and fee).
        let t = c.json(
            "POST",
            "/tax/platform/transactions",
            SHOP_TEST,
            v,
            &json!({"platform_calculation_id": pc["id"], "reference_order_id": format!("po-{}", vlabel(v)),
                    "reference_payment_id": "pay-1", "transaction_processed_at": 1_767_225_600}),
        );
        assert_eq!(t.status, 200, "{}", t.text);
        let types: Vec<Value> = t.json()["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["type"].clone())
            .collect();
        assert_eq!(types, vec![json!("order"), json!("fee")]);

        // A marketplace provider records one.
        let pc2 = c
            .json(
                "POST",
                "/tax/platform/calculations",
                SHOP_TEST,
                v,
                &body(&["marketplace_provider"]),
            )
            .json();
        let t = c.json(
            "POST",
            "/tax/platform/transactions",
            SHOP_TEST,
            v,
            &json!({"platform_calculation_id": pc2["id"], "reference_order_id": format!("po2-{}", vlabel(v))}),
        );
        assert_eq!(t.status, 200, "{}", t.text);
        assert_eq!(t.json()["transactions"].as_array().unwrap().len(), 1);

        // Unknown merchant, unknown platform calculation, other mode's calculation.
        let mut unknown = body(&["merchant_of_record"]);
        unknown["merchant"]["merchant_id"] = json!("nobody");
        assert_error(
            &c.json("POST", "/tax/platform/calculations", SHOP_TEST, v, &unknown),
            v,
            404,
            "MERCHANT_NOT_FOUND",
        );
        let a = c.json(
            "POST",
            "/tax/platform/transactions",
            SHOP_LIVE,
            v,
            &json!({"platform_calculation_id": pc2["id"], "reference_order_id": "x"}),
        );
        assert_error(&a, v, 404, "PLATFORM_CALCULATION_NOT_FOUND");
    }
}

#[test]
fn certificates_are_live_only_and_read_from_2026_03_01() {
    let server = TestServer::start("certificates");
    let c = server.client();
    // Seed the live ledger of account shop through the import (the interface only reads).
    let import = json!({
        "certificates": [{"reference": "cert-a", "linked_buyer": {"id": "mb_1", "legal_name": "Acme LLC"},
            "type": "RESALE", "status": "active", "jurisdictions": [{"country": "US", "region": "TN"}]}],
        "certificate_requests": [
            {"reference": "r-pending", "linked_buyer": {"id": "mb_1", "legal_name": "Acme LLC"}, "status": "pending",
             "type": "RESALE", "jurisdictions": [{"country": "US", "region": "TN"}]},
            {"reference": "r-fulfilled", "linked_buyer": {"id": "mb_1", "legal_name": "Acme LLC"}, "status": "fulfilled",
             "type": "RESALE", "jurisdictions": [{"country": "US", "region": "TN"}], "certificate": "cert-a"},
            {"reference": "r-invalid", "linked_buyer": {"id": "mb_1", "legal_name": "Acme LLC"}, "status": "invalid",
             "type": "RESALE", "jurisdictions": [{"country": "US", "region": "TN"}]}
        ]
    });
    server
        .service
        .import_certificates(
            "shop",
            import.to_string().as_bytes(),
            std::path::Path::new("."),
        )
        .unwrap();
    let v = Some("2026-03-01");
    for old in [
        None,
        Some("2024-09-01"),
        Some("2025-05-12"),
        Some("2026-01-01"),
    ] {
        assert_error(
            &c.bare("GET", "/tax/certificates", SHOP_LIVE, old),
            old,
            404,
            "NOT_FOUND",
        );
    }
    // Test keys are refused (spec, Authentication, 3).
    for path in ["/tax/certificates", "/tax/certificate-requests"] {
        assert_error(
            &c.bare("GET", path, SHOP_TEST, v),
            v,
            403,
            "TESTMODE_NOT_SUPPORTED",
        );
    }
    let certs = c.bare("GET", "/tax/certificates", SHOP_LIVE, v);
    assert_eq!(certs.status, 200, "{}", certs.text);
    let list = certs.json()["certificates"].as_array().unwrap().clone();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["reference"], "cert-a");
    let cert_id = list[0]["id"].as_str().unwrap().to_string();
    let one = c
        .bare("GET", &format!("/tax/certificates/{cert_id}"), SHOP_LIVE, v)
        .json();
    assert_eq!(one["status"], "active");
    assert_eq!(one["download_url"], Value::Null, "no document attached");
    assert_eq!(one["linked_buyer"]["legal_name"], "Acme LLC");
    // A certificate with a document: a pre-signed URL that works without a key, a new
    // one on every read, and refuses an altered signature.
    let with_doc = json!({"certificates": [{"reference": "cert-doc", "linked_buyer": {"id": "mb_2", "legal_name": "Doc Co"},
        "type": "RESALE", "status": "active", "jurisdictions": [{"country": "US", "region": "TN"}],
        // base64 of "%PDF-1.4 test" (RFC 4648 alphabet).
        "document": {"content_type": "application/pdf", "base64": "JVBERi0xLjQgdGVzdA=="}}]});
    server
        .service
        .import_certificates(
            "shop",
            with_doc.to_string().as_bytes(),
            std::path::Path::new("."),
        )
        .unwrap();
    let all = c.bare("GET", "/tax/certificates", SHOP_LIVE, v).json();
    let doc_id = all["certificates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["reference"] == "cert-doc")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let read = |_: ()| {
        c.bare("GET", &format!("/tax/certificates/{doc_id}"), SHOP_LIVE, v)
            .json()
    };
    let url = read(())["download_url"].as_str().unwrap().to_string();
    assert_ne!(
        read(())["download_url"].as_str().unwrap(),
        url,
        "every read mints a new URL"
    );
    let got = c.send(Call {
        method: "GET",
        path: &url,
        key: None,
        version: None,
        body: None,
        content_type: None,
    });
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(got.content_type, "application/pdf");
    assert_eq!(got.text, "%PDF-1.4 test");
    let tampered = format!("{}0", &url[..url.len() - 1]);
    let tampered = if tampered == url {
        format!("{}1", &url[..url.len() - 1])
    } else {
        tampered
    };
    let bad = c.send(Call {
        method: "GET",
        path: &tampered,
        key: None,
        version: None,
        body: None,
        content_type: None,
    });
    // The document path answers in the flat format unless a version header says otherwise.
    assert_error(&bad, Some("2026-03-01"), 403, "INVALID_SIGNATURE");
    // Scoped by account: the other account sees none.
    assert_eq!(
        c.bare("GET", "/tax/certificates", OTHER_LIVE, v).json()["certificates"],
        json!([])
    );
    assert_error(
        &c.bare(
            "GET",
            &format!("/tax/certificates/{cert_id}"),
            OTHER_LIVE,
            v,
        ),
        v,
        404,
        "CERTIFICATE_NOT_FOUND",
    );

    let reqs = c
        .bare("GET", "/tax/certificate-requests", SHOP_LIVE, v)
        .json();
    let by_ref = |r: &str| -> String {
        reqs["certificate_requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["reference"] == r)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Cancel a pending request; cancel again answers the same (spec, States and transitions).
    let pending = by_ref("r-pending");
    let first = c.bare(
        "DELETE",
        &format!("/tax/certificate-requests/{pending}"),
        SHOP_LIVE,
        v,
    );
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.json()["status"], "canceled");
    let second = c.bare(
        "DELETE",
        &format!("/tax/certificate-requests/{pending}"),
        SHOP_LIVE,
        v,
    );
    assert_eq!(second.status, 200);
    assert_eq!(second.json(), first.json());
    // Fulfilled and invalid requests cannot be canceled: 409.
    let fulfilled = by_ref("r-fulfilled");
    let a = c.bare(
        "DELETE",
        &format!("/tax/certificate-requests/{fulfilled}"),
        SHOP_LIVE,
        v,
    );
    assert_error(&a, v, 409, "REQUEST_ALREADY_FULFILLED");
    let invalid = by_ref("r-invalid");
    let a = c.bare(
        "DELETE",
        &format!("/tax/certificate-requests/{invalid}"),
        SHOP_LIVE,
        v,
    );
    assert_error(&a, v, 409, "REQUEST_INVALID");
    assert_error(
        &c.bare("GET", "/tax/certificate-requests/req_nope", SHOP_LIVE, v),
        v,
        404,
        "CERTIFICATE_REQUEST_NOT_FOUND",
    );
    assert_error(
        &c.bare(
            "GET",
            &format!("/tax/certificate-requests/{pending}"),
            SHOP_TEST,
            v,
        ),
        v,
        403,
        "TESTMODE_NOT_SUPPORTED",
    );
}
