//! The request id over HTTP: the `x-request-id` response header is the id the service
//! was given (`levy_api::Request::request_id`), so that an error body of the older format
//! names the same request as the header, whether the service answered the error or the
//! HTTP layer did. The flat format carries no request id.

mod common;

use common::{Answer, Call, TestServer, SHOP_TEST};
use serde_json::json;

/// Checks `a` is an error of `status` in `version`'s format whose request id, where the
/// format has one, is the header's.
fn check(a: &Answer, version: Option<&str>, status: u16, kind: &str) {
    assert_eq!(a.status, status, "{}", a.text);
    assert!(a.request_id.starts_with("req_"), "{:?}", a.request_id);
    assert_eq!(a.request_id.len(), 4 + 24, "{}", a.request_id);
    let body = a.json();
    if version.is_some_and(|v| v >= "2026-01-01") {
        assert_eq!(body["type"], json!(kind), "{body}");
        assert_eq!(body.as_object().unwrap().len(), 3, "{body}");
        assert!(body.get("request_id").is_none(), "{body}");
    } else {
        assert_eq!(
            body["error"]["error_code"],
            json!(kind.to_ascii_lowercase()),
            "{body}"
        );
        assert_eq!(body["request_id"], json!(a.request_id), "{body}");
    }
}

#[test]
fn error_bodies_name_the_request_id_of_the_header() {
    let server = TestServer::start("request-id");
    let c = server.client();
    for version in [None, Some("2024-09-01"), Some("2026-03-01")] {
        // Answered by the service: a calculation without its fields.
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version,
            body: Some(b"{}"),
            content_type: None,
        });
        check(&a, version, 400, "MISSING_FIELD");
        // Answered by the service before a key is checked: an unknown key.
        let a = c.bare("GET", "/tax/ping", "sk_test_unknown", version);
        check(&a, version, 401, "UNAUTHORIZED");
        // Answered by the HTTP layer: a body that is not JSON.
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version,
            body: Some(b"amount=1"),
            content_type: Some("application/x-www-form-urlencoded"),
        });
        check(&a, version, 415, "UNSUPPORTED_MEDIA_TYPE");
        // Answered by the HTTP layer: a method the OpenAPI document does not take.
        let a = c.bare("POST", "/openapi.json", SHOP_TEST, version);
        check(&a, version, 405, "METHOD_NOT_ALLOWED");
        // Answered by the HTTP layer: a body over the limit.
        let big = vec![b' '; levy_server::DEFAULT_BODY_LIMIT + 1];
        let a = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_TEST),
            version,
            body: Some(&big),
            content_type: None,
        });
        check(&a, version, 413, "REQUEST_TOO_LARGE");
    }
}

#[test]
fn a_clients_own_request_id_is_replaced_by_the_servers() {
    let server = TestServer::start("request-id-client");
    for path in ["/tax/calculations", "/tax/ping"] {
        let resp = ureq::post(&format!("{}{path}", server.base))
            .set("Authorization", &format!("Bearer {SHOP_TEST}"))
            .set("x-request-id", "req_chosen_by_the_client")
            .set("Content-Type", "application/json")
            .send_bytes(b"{}");
        let resp = match resp {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("transport error: {e}"),
        };
        let id = resp.header("x-request-id").unwrap().to_string();
        assert!(id.starts_with("req_") && id.len() == 4 + 24, "{id}");
        assert_ne!(id, "req_chosen_by_the_client");
        let text = resp.into_string().unwrap();
        assert!(!text.contains("req_chosen_by_the_client"), "{text}");
        if path == "/tax/calculations" {
            let body: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(body["request_id"], json!(id), "{body}");
        }
    }
}
