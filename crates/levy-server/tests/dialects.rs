//! The TaxJar v2 and AvaTax REST v2 request shapes over HTTP, on the suite's Tennessee
//! table: ZIP 37203 is Tennessee 7% + Davidson County 2.25% = 9.25% (levy_testkit::tennessee),
//! so $100.00 of general merchandise owes 700 + 225 = 925 cents, as levy's own
//! `POST /tax/calculations` answers. Each shape answers that, authenticates with the same
//! keys, and answers the server's own errors (a body that is not JSON, a body over the
//! limit) and the service's (a rate limit) in its own error format.

mod common;

use common::*;
use serde_json::{json, Value};

/// Sends `method path` with an `Authorization` header as given (the suite's client sends
/// Bearer keys only), and any others; the status, the response headers asked for, the body.
fn send(
    base: &str,
    method: &str,
    path: &str,
    auth: &str,
    extra: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, Vec<Option<String>>, Value) {
    let agent = ureq::AgentBuilder::new().build();
    let mut req = agent
        .request(method, &format!("{base}{path}"))
        .set("Authorization", auth);
    for (k, v) in extra {
        req = req.set(k, v);
    }
    let result = match body {
        Some(b) => {
            if !extra
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                req = req.set("Content-Type", "application/json");
            }
            req.send_string(b)
        }
        None => req.call(),
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport error: {e}"),
    };
    let status = resp.status();
    let headers = [
        "x-request-id",
        "x-correlation-id",
        "retry-after",
        levy_api::REPLAYED_HEADER,
    ]
    .iter()
    .map(|h| resp.header(h).map(str::to_string))
    .collect();
    let text = resp.into_string().unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, headers, v)
}

fn basic(account: &str, key: &str) -> String {
    use base64_encode as b64;
    format!("Basic {}", b64(&format!("{account}:{key}")))
}

/// Standard base64 (RFC 4648), for the HTTP Basic credentials.
fn base64_encode(s: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

const TAXJAR_NASHVILLE: &str = r#"{"to_country": "US", "to_zip": "37203", "to_state": "TN",
    "from_country": "US", "from_zip": "37203", "from_state": "TN", "shipping": 0,
    "line_items": [{"id": "1", "quantity": 2, "unit_price": 50}]}"#;

const AVATAX_NASHVILLE: &str = r#"{"type": "SalesOrder", "date": "2026-03-15",
    "customerCode": "C1", "addresses": {"singleLocation": {"region": "TN", "country": "US",
    "postalCode": "37203"}}, "lines": [{"number": "1", "quantity": 2, "amount": 100}]}"#;

/// levy's own answer for $100.00 in 37203, in cents.
fn native(c: &Client) -> Value {
    let answer = c.json(
        "POST",
        "/tax/calculations",
        SHOP_TEST,
        Some("2026-03-01"),
        &json!({
            "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                "address_country": "US"}},
            "origin_address": {"address_province": "TN", "address_postal_code": "37203",
                "address_country": "US"},
            "order_details": {"customer_currency_code": "USD", "line_items": [
                {"amount": 10000, "quantity": 2, "product_category": "GENERAL_MERCHANDISE"}]},
            "transacted_at": 1_773_576_000,
        }),
    );
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.json()
}

#[test]
fn both_shapes_answer_levys_own_tax_over_http() {
    let server = TestServer::start("dialects-tax");
    let own = native(&server.client());
    assert_eq!(own["total_tax_amount"], 925);
    let (status, h, tj) = send(
        &server.base,
        "POST",
        "/v2/taxes",
        &format!("Bearer {SHOP_TEST}"),
        &[],
        Some(TAXJAR_NASHVILLE),
    );
    assert_eq!(status, 200, "{tj}");
    assert!(h[0].as_deref().unwrap().starts_with("req_"));
    // $9.25: 925 cents.
    assert_eq!(
        dec(&tj["tax"]["amount_to_collect"]),
        "9.25".parse().unwrap()
    );
    assert_eq!(dec(&tj["tax"]["rate"]), "0.0925".parse().unwrap());
    let (status, h, av) = send(
        &server.base,
        "POST",
        "/api/v2/transactions/create",
        &basic("1100012345", SHOP_TEST),
        &[],
        Some(AVATAX_NASHVILLE),
    );
    assert_eq!(status, 200, "{av}");
    assert_eq!(dec(&av["totalTax"]), "9.25".parse().unwrap());
    // The correlation id the AvaTax SDK logs is the request's id.
    assert_eq!(h[1], h[0]);
    let details: Vec<(&str, &str)> = av["lines"][0]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["jurisType"].as_str().unwrap(),
                d["jurisCode"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(details, vec![("STA", "47"), ("CTY", "47037")]);
}

#[test]
fn the_servers_own_errors_are_in_the_shapes_format() {
    let server = TestServer::start_configured(
        "dialects-errors",
        levy_server::ServeOptions::loopback_ephemeral(),
        |s| s.with_body_limit(2048),
    );
    // A body that is not JSON (415), answered by the HTTP layer.
    let (status, _, body) = send(
        &server.base,
        "POST",
        "/v2/taxes",
        &format!("Bearer {SHOP_TEST}"),
        &[("Content-Type", "text/plain")],
        Some("to_country=US"),
    );
    assert_eq!(status, 415);
    assert_eq!(body["error"], "Unsupported Media Type");
    assert_eq!(body["status"], 415);
    // A body over the limit (413), in AvaTax's shape, with its correlation id.
    let big = format!(r#"{{"pad": "{}"}}"#, "x".repeat(4096));
    let (status, h, body) = send(
        &server.base,
        "POST",
        "/api/v2/transactions/create",
        &basic("1", SHOP_TEST),
        &[],
        Some(&big),
    );
    assert_eq!(status, 413);
    assert!(
        body["error"]["message"].as_str().unwrap().contains("2048"),
        "{body}"
    );
    assert!(h[1].is_some());
    // The interface's own paths keep the interface's format.
    let answer = server.client().send(Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(SHOP_TEST),
        version: Some("2026-03-01"),
        body: Some(b"x=1"),
        content_type: Some("text/plain"),
    });
    assert_eq!(answer.status, 415);
    assert_eq!(answer.json()["type"], "UNSUPPORTED_MEDIA_TYPE");
    // A body with no Content-Type at all (as Kill Bill's AvaTax plugin posts its JSON) is
    // read as JSON on the shapes' paths, and still refused on the interface's.
    let order = r#"{"type": "SalesOrder", "date": "2026-03-15", "customerCode": "C", "addresses": {"singleLocation":
        {"region": "TN", "country": "US", "postalCode": "37203"}}, "lines": [{"number": "1",
        "amount": 100}]}"#;
    let untyped = |path: &str, auth: &str| -> String {
        use std::io::{Read, Write};
        let host = server.base.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{order}",
            order.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
    };
    let answer = untyped("/api/v2/transactions/create", &basic("1", SHOP_TEST));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"totalTax\""), "{answer}");
    let answer = untyped("/tax/calculations", &format!("Bearer {SHOP_TEST}"));
    assert!(answer.starts_with("HTTP/1.1 415"), "{answer}");
}

#[test]
fn limits_and_idempotency_hold_on_the_shapes() {
    let server = TestServer::start_configured(
        "dialects-limits",
        levy_server::ServeOptions::loopback_ephemeral(),
        |s| {
            s.with_limits(levy_api::Limits {
                requests_per_second: 1,
                burst: 4,
                ..levy_api::Limits::NONE
            })
        },
    );
    let auth = format!("Bearer {SHOP_TEST}");
    let key = [("Idempotency-Key", "order-1001")];
    let (status, h, first) = send(
        &server.base,
        "POST",
        "/v2/taxes",
        &auth,
        &key,
        Some(TAXJAR_NASHVILLE),
    );
    assert_eq!(status, 200, "{first}");
    assert!(h[3].is_none());
    // The same key again: the answer kept, the same calculation.
    let (status, h, again) = send(
        &server.base,
        "POST",
        "/v2/taxes",
        &auth,
        &key,
        Some(TAXJAR_NASHVILLE),
    );
    assert_eq!(status, 200, "{again}");
    assert_eq!(h[3].as_deref(), Some("true"));
    assert_eq!(
        again["tax"]["levy_calculation_id"],
        first["tax"]["levy_calculation_id"]
    );
    // A burst of 4 at 1 a second: within 6 more calculations the rate limit answers, in
    // TaxJar's shape, with Retry-After.
    let mut limited = None;
    for _ in 0..6 {
        let (status, h, body) = send(
            &server.base,
            "POST",
            "/v2/taxes",
            &auth,
            &[],
            Some(TAXJAR_NASHVILLE),
        );
        if status == 429 {
            limited = Some((h, body));
            break;
        }
    }
    let (h, body) = limited.expect("the rate limit is reached");
    assert_eq!(body["error"], "Too Many Requests");
    assert_eq!(body["status"], 429);
    assert!(h[2].is_some());
}

#[test]
fn the_shapes_document_is_served_and_names_what_is_answered() {
    let server = TestServer::start("dialects-openapi");
    let c = server.client();
    let doc = c.send(Call {
        method: "GET",
        path: "/openapi/dialects.json",
        key: None,
        version: None,
        body: None,
        content_type: None,
    });
    assert_eq!(doc.status, 200);
    let doc = doc.json();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut paths: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        vec![
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}",
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/adjust",
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/commit",
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/refund",
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/uncommit",
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/void",
            "/api/v2/definitions/taxcodes",
            "/api/v2/taxrates/byaddress",
            "/api/v2/taxrates/bypostalcode",
            "/api/v2/transactions/create",
            "/api/v2/transactions/createoradjust",
            "/api/v2/utilities/ping",
            "/v2/categories",
            "/v2/nexus/regions",
            "/v2/rates/{zip}",
            "/v2/taxes",
            "/v2/transactions/orders",
            "/v2/transactions/orders/{transaction_id}",
            "/v2/transactions/refunds",
            "/v2/transactions/refunds/{transaction_id}",
        ]
    );
    // That each answer conforms to its schema: tests/openapi.rs.
}

#[test]
fn sales_recorded_through_both_shapes_over_http_are_the_ledgers() {
    // One route, two answers by body: a SalesOrder is a calculation answered on the async
    // workers, a committed SalesInvoice a transaction whose write blocks (answered on the
    // blocking pool); both are answered over HTTP, and the invoice is read back.
    let server = TestServer::start("dialects-record");
    let av = basic("1", SHOP_TEST);
    let doc = |kind: &str, commit: bool, code: &str| {
        json!({"type": kind, "commit": commit, "code": code, "date": "2026-03-15",
            "customerCode": "C", "addresses": {"singleLocation": {"region": "TN",
            "country": "US", "postalCode": "37203"}}, "lines": [{"number": "1", "amount": 100}]})
        .to_string()
    };
    let (status, _, order) = send(
        &server.base,
        "POST",
        "/api/v2/transactions/create",
        &av,
        &[],
        Some(&doc("SalesOrder", false, "SO-1")),
    );
    assert_eq!(
        (status, &order["status"]),
        (200, &json!("Temporary")),
        "{order}"
    );
    let (status, _, invoice) = send(
        &server.base,
        "POST",
        "/api/v2/transactions/create",
        &av,
        &[],
        Some(&doc("SalesInvoice", true, "INV-1")),
    );
    assert_eq!(
        (status, &invoice["status"]),
        (200, &json!("Committed")),
        "{invoice}"
    );
    // The same tax as the calculation's: the one calculation road.
    assert_eq!(invoice["totalTax"], order["totalTax"]);
    let (status, _, got) = send(
        &server.base,
        "GET",
        "/api/v2/companies/X/transactions/INV-1",
        &av,
        &[],
        None,
    );
    assert_eq!(
        (status, &got["levyTransactionId"]),
        (200, &invoice["levyTransactionId"]),
        "{got}"
    );
    // TaxJar: an order under an Idempotency-Key, sent twice, is one transaction.
    let tj = format!("Bearer {SHOP_TEST}");
    let body = r#"{"transaction_id": "o-1", "transaction_date": "2026-03-15", "to_country": "US",
        "to_zip": "37203", "to_state": "TN", "amount": 100, "shipping": 0, "sales_tax": 0}"#;
    let (s1, _, first) = send(
        &server.base,
        "POST",
        "/v2/transactions/orders",
        &tj,
        &[("Idempotency-Key", "k-1")],
        Some(body),
    );
    let (s2, h2, again) = send(
        &server.base,
        "POST",
        "/v2/transactions/orders",
        &tj,
        &[("Idempotency-Key", "k-1")],
        Some(body),
    );
    assert_eq!((s1, s2), (200, 200), "{first} {again}");
    assert_eq!(first, again);
    assert!(h2[3].is_some(), "the repeat is a replay of the kept answer");
    assert_eq!(first["order"]["sales_tax"], invoice["totalTax"]);
}
