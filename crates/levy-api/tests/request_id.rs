//! The caller's request id (`Request::request_id`) in error bodies, the public error
//! renderer (`levy_api::error_response`), and the service's body limit.

mod common;
use common::*;
use levy_api::*;
use serde_json::{json, Value};

fn request(version: Option<&str>, path: &str, body: Vec<u8>, id: Option<&str>) -> Request {
    let mut headers = vec![("Authorization".to_string(), format!("Bearer {TEST_KEY}"))];
    if let Some(v) = version {
        headers.push(("X-API-Version".into(), v.into()));
    }
    Request {
        method: "POST".into(),
        path: path.into(),
        query: String::new(),
        headers,
        body,
        request_id: id.map(str::to_string),
    }
}

fn json(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[test]
fn an_error_body_carries_the_callers_request_id() {
    let svc = service();
    // A validation error, an unknown path, a missing key: each in the older format names
    // the caller's id.
    for (path, body, key) in [
        ("/tax/calculations", b"{}".to_vec(), true),
        ("/tax/nowhere", Vec::new(), true),
        ("/tax/calculations", b"{}".to_vec(), false),
    ] {
        let mut req = request(None, path, body, Some("req_caller"));
        if !key {
            req.headers.clear();
        }
        let r = svc.handle(&req);
        assert!(r.status >= 400, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(json(&r)["request_id"], json!("req_caller"), "{path}");
    }
    // The flat format carries no request id, whatever the caller's.
    let r = svc.handle(&request(
        Some("2026-03-01"),
        "/tax/calculations",
        b"{}".to_vec(),
        Some("req_caller"),
    ));
    assert_eq!(r.status, 400);
    let v = json(&r);
    assert_eq!(v.as_object().unwrap().len(), 3, "{v}");
    assert!(v.get("request_id").is_none(), "{v}");
}

#[test]
fn without_a_request_id_the_service_makes_one_per_error() {
    let svc = service();
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let r = svc.handle(&request(None, "/tax/calculations", b"{}".to_vec(), None));
            json(&r)["request_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(ids.iter().all(|id| id.starts_with("req_")), "{ids:?}");
    assert_ne!(ids[0], ids[1]);
}

#[test]
fn answer_keeps_the_request_id_as_handle_does() {
    let svc = service();
    let req = request(
        None,
        "/tax/calculations",
        b"{}".to_vec(),
        Some("req_answer"),
    );
    let r = svc.answer(&req).wait();
    assert_eq!(json(&r)["request_id"], json!("req_answer"));
}

#[test]
fn error_response_renders_each_format_with_its_headers() {
    let e = ApiError::of(ErrorKind::UnsupportedMediaType, "not json");
    let old = error_response(&e, ApiVersion::V2024_09_01, Some("req_1"));
    assert_eq!(old.status, 415);
    assert_eq!(
        old.headers,
        vec![("Content-Type".to_string(), "application/json".to_string())]
    );
    assert_eq!(
        old.body,
        json!({
            "error": {"error_code": "unsupported_media_type", "error_message": "not json"},
            "request_id": "req_1"
        })
        .to_string()
        .into_bytes()
    );
    let flat = error_response(&e, ApiVersion::V2026_03_01, Some("req_1"));
    assert_eq!(
        flat.body,
        json!({"code": 415, "type": "UNSUPPORTED_MEDIA_TYPE", "message": "not json"})
            .to_string()
            .into_bytes()
    );
    // Without an id, one is made.
    let made = error_response(&e, ApiVersion::V2024_09_01, None);
    assert!(json(&made)["request_id"]
        .as_str()
        .unwrap()
        .starts_with("req_"));
    // A 405 names the methods in `Allow`; a 401 asks for a bearer key; a 429 says when.
    let mut e = ApiError::of(ErrorKind::MethodNotAllowed, "GET only");
    e.expected = Some("GET".into());
    let r = error_response(&e, ApiVersion::V2026_03_01, None);
    assert!(r.headers.contains(&("Allow".into(), "GET".into())));
    let r = error_response(
        &ApiError::of(ErrorKind::Unauthorized, "no key"),
        ApiVersion::V2026_03_01,
        None,
    );
    assert!(r
        .headers
        .contains(&("WWW-Authenticate".into(), "Bearer".into())));
    let mut e = ApiError::of(ErrorKind::RateLimited, "slow down");
    e.retry_after = Some(3);
    let r = error_response(&e, ApiVersion::V2026_03_01, None);
    assert!(r.headers.contains(&("Retry-After".into(), "3".into())));
}

/// A calculation body padded with spaces to `len` bytes.
fn padded(len: usize) -> Vec<u8> {
    let mut body = calc_body("10000", "GENERAL_MERCHANDISE").into_bytes();
    assert!(body.len() <= len);
    body.resize(len, b' ');
    body
}

#[test]
fn the_body_limit_is_1_mib_unless_raised() {
    let svc = service();
    assert_eq!(svc.body_limit(), DEFAULT_BODY_LIMIT);
    assert_eq!(DEFAULT_BODY_LIMIT, 1 << 20);
    let at = svc.handle(&request(
        None,
        "/tax/calculations",
        padded(DEFAULT_BODY_LIMIT),
        None,
    ));
    assert_eq!(at.status, 200, "{}", String::from_utf8_lossy(&at.body));
    let over = svc.handle(&request(
        Some("2026-03-01"),
        "/tax/calculations",
        padded(DEFAULT_BODY_LIMIT + 1),
        None,
    ));
    assert_eq!(over.status, 413);
    assert_eq!(json(&over)["type"], json!("REQUEST_TOO_LARGE"));

    let raised = service().with_body_limit(2 * DEFAULT_BODY_LIMIT);
    assert_eq!(raised.body_limit(), 2 * DEFAULT_BODY_LIMIT);
    let r = raised.handle(&request(
        None,
        "/tax/calculations",
        padded(DEFAULT_BODY_LIMIT + 1),
        None,
    ));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r = raised.handle(&request(
        None,
        "/tax/calculations",
        padded(2 * DEFAULT_BODY_LIMIT + 1),
        Some("req_big"),
    ));
    assert_eq!(r.status, 413);
    assert_eq!(
        json(&r)["error"]["error_message"],
        json!(format!(
            "the request body is larger than the limit of {} bytes",
            2 * DEFAULT_BODY_LIMIT
        ))
    );
    assert_eq!(json(&r)["request_id"], json!("req_big"));
}
