//! Merchants: create, get by either id, list, partial update, delete; versions, modes,
//! accounts, metadata limits.

mod common;
use common::*;
use serde_json::{json, Value};

const V1: Option<&str> = Some("2026-01-01");
const V3: Option<&str> = Some("2026-03-01");

fn merchant_body(reference: &str) -> String {
    format!(
        r#"{{"reference_merchant_id": "{reference}", "name": "Corner Shop", "email": "owner@corner.example",
            "default_address": {{"address_line_1": "1 Main St", "address_city": "NASHVILLE",
              "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}},
            "tax_ids": [{{"type": "EIN", "value": "12-3456789"}}],
            "metadata": {{"tier": "gold"}}}}"#
    )
}

fn create(svc: &levy_api::Service, key: &str, version: Option<&str>, reference: &str) -> Value {
    let (s, m) = post(
        svc,
        "/tax/merchants",
        key,
        version,
        &merchant_body(reference),
    );
    assert_eq!(s, 200, "{m}");
    m
}

fn count(svc: &levy_api::Service, key: &str) -> usize {
    let (s, l) = get(svc, "/tax/merchants?status=all", key, V1);
    assert_eq!(s, 200, "{l}");
    l["merchants"].as_array().unwrap().len()
}

#[test]
fn merchants_do_not_exist_before_2026_01_01() {
    let svc = service();
    for version in [None, Some("2024-09-01"), Some("2025-05-12")] {
        for (method, path) in [
            ("POST", "/tax/merchants"),
            ("GET", "/tax/merchants"),
            ("GET", "/tax/merchants/m-1"),
            ("POST", "/tax/merchants/m-1"),
            ("DELETE", "/tax/merchants/m-1"),
        ] {
            let (s, v) = call(
                &svc,
                method,
                path,
                Some(TEST_KEY),
                version,
                &merchant_body("m-1"),
            );
            assert_eq!(
                (s, old_code(&v).as_str()),
                (404, "not_found"),
                "{method} {path} {version:?}"
            );
            assert!(v["error"]["error_message"]
                .as_str()
                .unwrap()
                .contains("2026-01-01"));
        }
    }
    // Nothing was created by those requests.
    assert_eq!(count(&svc, TEST_KEY), 0);
}

#[test]
fn create_get_by_both_ids_in_both_versions() {
    let svc = service();
    for (version, reference) in [(V1, "m-v1"), (V3, "m-v3")] {
        let m = create(&svc, LIVE_KEY, version, reference);
        let id = m["id"].as_str().unwrap();
        assert!(id.starts_with("merch_") && id.len() == 6 + 32, "{id}");
        assert_eq!(m["object"], "tax.merchant");
        assert_eq!(m["reference_merchant_id"], reference);
        assert_eq!(m["status"], "active");
        assert_eq!(m["testmode"], false);
        assert_eq!(m["default_address"]["address_province"], "TN");
        assert_eq!(m["default_address"]["address_line_2"], "");
        assert_eq!(
            m["tax_ids"],
            json!([{"type": "EIN", "value": "12-3456789"}])
        );
        assert_eq!(m["metadata"], json!({"tier": "gold"}));
        assert_eq!(m["created_at"], m["updated_at"]);
        for path in [
            format!("/tax/merchants/{id}"),
            format!("/tax/merchants/{reference}"),
        ] {
            let (s, g) = get(&svc, &path, LIVE_KEY, version);
            assert_eq!(s, 200, "{g}");
            assert_eq!(g, m, "GET {path} answers the stored merchant");
        }
    }
    let m = create(&svc, TEST_KEY, V1, "m-test");
    assert_eq!(m["testmode"], true);
}

#[test]
fn other_mode_and_other_account_do_not_see_a_merchant() {
    let svc = service();
    let m = create(&svc, TEST_KEY, V1, "m-1");
    let id = m["id"].as_str().unwrap();
    for key in [LIVE_KEY, OTHER_TEST_KEY, OTHER_LIVE_KEY] {
        for path in [
            format!("/tax/merchants/{id}"),
            "/tax/merchants/m-1".to_string(),
        ] {
            let (s, v) = get(&svc, &path, key, V3);
            assert_eq!(
                (s, flat_type(&v, 404).as_str()),
                (404, "MERCHANT_NOT_FOUND")
            );
            let (s, v) = post(&svc, &path, key, V3, r#"{"name": "x"}"#);
            assert_eq!(
                (s, flat_type(&v, 404).as_str()),
                (404, "MERCHANT_NOT_FOUND")
            );
            let (s, v) = call(&svc, "DELETE", &path, Some(key), V3, "");
            assert_eq!(
                (s, flat_type(&v, 404).as_str()),
                (404, "MERCHANT_NOT_FOUND")
            );
        }
        assert_eq!(count(&svc, key), 0);
    }
    // The reference id is unique per account and mode: the live mode and the other
    // account may use it, the same mode may not.
    create(&svc, LIVE_KEY, V1, "m-1");
    create(&svc, OTHER_TEST_KEY, V1, "m-1");
    let (s, v) = post(&svc, "/tax/merchants", TEST_KEY, V1, &merchant_body("m-1"));
    assert_eq!(
        (s, flat_type(&v, 409).as_str()),
        (409, "DUPLICATE_MERCHANT")
    );
    assert_eq!(count(&svc, TEST_KEY), 1);
}

fn with_metadata(metadata: &Value) -> String {
    let mut body: Value = serde_json::from_str(&merchant_body("m-meta")).unwrap();
    body["metadata"] = metadata.clone();
    body.to_string()
}

#[test]
fn metadata_limits() {
    let svc = service();
    let keys = |n: usize| -> Value {
        Value::Object((0..n).map(|i| (format!("k{i}"), json!("v"))).collect())
    };
    // 50 keys: accepted; 51: rejected.
    let (s, m) = post(
        &svc,
        "/tax/merchants",
        TEST_KEY,
        V1,
        &with_metadata(&keys(50)),
    );
    assert_eq!(s, 200, "{m}");
    assert_eq!(m["metadata"].as_object().unwrap().len(), 50);
    let id = m["id"].as_str().unwrap().to_string();
    let (s, v) = post(
        &svc,
        &format!("/tax/merchants/{id}"),
        TEST_KEY,
        V1,
        &json!({"metadata": keys(51)}).to_string(),
    );
    assert_eq!((s, flat_type(&v, 400).as_str()), (400, "TOO_MANY_ITEMS"));
    assert!(v["message"].as_str().unwrap().contains("metadata"), "{v}");

    let k255 = "k".repeat(255);
    let k256 = "k".repeat(256);
    let v255 = "v".repeat(255);
    let v256 = "v".repeat(256);
    // A key of 255 characters and a value of 255 characters: accepted.
    let (s, m) = post(
        &svc,
        &format!("/tax/merchants/{id}"),
        TEST_KEY,
        V1,
        &json!({"metadata": {k255.clone(): v255.clone()}}).to_string(),
    );
    assert_eq!(s, 200, "{m}");
    assert_eq!(m["metadata"][&k255], json!(v255));
    // One past each limit, and a value that is not a string: rejected, with the key named.
    let cases = [
        (json!({k256.clone(): "v"}), "STRING_TOO_LONG", k256.clone()),
        (json!({"note": v256}), "STRING_TOO_LONG", "note".to_string()),
        (json!({"count": 3}), "INCORRECT_TYPE", "count".to_string()),
        (
            json!({"nested": {"a": "b"}}),
            "INCORRECT_TYPE",
            "nested".to_string(),
        ),
        (json!({"flag": true}), "INCORRECT_TYPE", "flag".to_string()),
    ];
    for (metadata, kind, key) in &cases {
        for version in [V1, V3] {
            let (s, v) = post(
                &svc,
                &format!("/tax/merchants/{id}"),
                TEST_KEY,
                version,
                &json!({"metadata": metadata}).to_string(),
            );
            assert_eq!((s, flat_type(&v, 400).as_str()), (400, *kind), "{metadata}");
            assert!(v["message"].as_str().unwrap().contains(key.as_str()), "{v}");
            let (s, v) = post(
                &svc,
                "/tax/merchants",
                TEST_KEY,
                version,
                &with_metadata(metadata),
            );
            assert_eq!((s, flat_type(&v, 400).as_str()), (400, *kind));
        }
    }
    // The rejected updates changed nothing, the rejected creates added nothing.
    let (_, g) = get(&svc, &format!("/tax/merchants/{id}"), TEST_KEY, V1);
    assert_eq!(g["metadata"], json!({k255: v255}));
    assert_eq!(count(&svc, TEST_KEY), 1);
}

#[test]
fn validation_names_the_field() {
    let svc = service();
    let cases = [
        (
            r#"{"name": "x", "default_address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}"#,
            "MISSING_FIELD",
            "reference_merchant_id",
        ),
        (
            r#"{"reference_merchant_id": "m", "default_address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}"#,
            "MISSING_FIELD",
            "name",
        ),
        (
            r#"{"reference_merchant_id": "m", "name": "x"}"#,
            "MISSING_FIELD",
            "default_address",
        ),
        (
            r#"{"reference_merchant_id": "m", "name": "x", "default_address": {"address_province": "TN", "address_country": "US"}}"#,
            "MISSING_FIELD",
            "default_address.address_postal_code",
        ),
        (
            r#"{"reference_merchant_id": "m", "name": "x", "email": "nope", "default_address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}"#,
            "INVALID_EMAIL",
            "email",
        ),
        (
            r#"{"reference_merchant_id": "m", "name": "x", "colour": "red", "default_address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}"#,
            "UNRECOGNIZED_FIELD",
            "colour",
        ),
        (
            r#"{"reference_merchant_id": 7, "name": "x"}"#,
            "INCORRECT_TYPE",
            "reference_merchant_id",
        ),
    ];
    for (body, kind, field) in cases {
        let (s, v) = post(&svc, "/tax/merchants", LIVE_KEY, V1, body);
        assert_eq!((s, flat_type(&v, 400).as_str()), (400, kind), "{body}");
        assert!(v["message"].as_str().unwrap().contains(field), "{v}");
    }
    assert_eq!(count(&svc, LIVE_KEY), 0);
}

#[test]
fn update_is_partial_and_keeps_times_true() {
    let svc = service();
    let m = create(&svc, LIVE_KEY, V1, "m-1");
    let id = m["id"].as_str().unwrap();
    // Wait past the second so a change shows in updated_at.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (s, u) = post(
        &svc,
        "/tax/merchants/m-1",
        LIVE_KEY,
        V3,
        r#"{"name": "Corner Shop & Deli"}"#,
    );
    assert_eq!(s, 200, "{u}");
    assert_eq!(u["name"], "Corner Shop & Deli");
    // Untouched fields stay.
    assert_eq!(u["email"], m["email"]);
    assert_eq!(u["default_address"], m["default_address"]);
    assert_eq!(u["metadata"], m["metadata"]);
    assert_eq!(u["created_at"], m["created_at"]);
    assert!(u["updated_at"].as_i64().unwrap() > m["updated_at"].as_i64().unwrap());
    // An update that changes nothing leaves updated_at alone.
    let (s, same) = post(
        &svc,
        &format!("/tax/merchants/{id}"),
        LIVE_KEY,
        V3,
        r#"{"name": "Corner Shop & Deli"}"#,
    );
    assert_eq!((s, &same), (200, &u));
    // The reference id can change; the old one then finds nothing.
    let (s, r) = post(
        &svc,
        &format!("/tax/merchants/{id}"),
        LIVE_KEY,
        V3,
        r#"{"reference_merchant_id": "m-2", "metadata": {}}"#,
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["metadata"], json!({}), "metadata is replaced as a whole");
    let (s, _) = get(&svc, "/tax/merchants/m-1", LIVE_KEY, V3);
    assert_eq!(s, 404);
    let (s, g) = get(&svc, "/tax/merchants/m-2", LIVE_KEY, V3);
    assert_eq!((s, g["id"].as_str()), (200, Some(id)));
}

#[test]
fn delete_marks_deleted_and_lists_follow_status() {
    let svc = service();
    let a = create(&svc, TEST_KEY, V1, "m-a");
    let b = create(&svc, TEST_KEY, V1, "m-b");
    let (s, d) = call(&svc, "DELETE", "/tax/merchants/m-a", Some(TEST_KEY), V1, "");
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["status"], "deleted");
    assert_eq!(d["id"], a["id"]);
    let deleted_at = d["deleted_at"].as_i64().unwrap();
    assert_eq!(d["updated_at"].as_i64(), Some(deleted_at));
    // Still readable by either id, with status deleted.
    let (s, g) = get(
        &svc,
        a["id"]
            .as_str()
            .map(|i| format!("/tax/merchants/{i}"))
            .unwrap()
            .as_str(),
        TEST_KEY,
        V3,
    );
    assert_eq!((s, &g), (200, &d));
    // Deleting again answers the same merchant, unchanged.
    let (s, again) = call(&svc, "DELETE", "/tax/merchants/m-a", Some(TEST_KEY), V3, "");
    assert_eq!((s, &again), (200, &d));
    // A deleted merchant cannot be updated.
    let (s, v) = post(
        &svc,
        "/tax/merchants/m-a",
        TEST_KEY,
        V1,
        r#"{"name": "back"}"#,
    );
    assert_eq!((s, flat_type(&v, 409).as_str()), (409, "MERCHANT_DELETED"));
    // Lists: active by default, deleted on request, all.
    let ids = |q: &str| -> Vec<String> {
        let (s, l) = get(&svc, &format!("/tax/merchants{q}"), TEST_KEY, V1);
        assert_eq!(s, 200, "{l}");
        l["merchants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (aid, bid) = (
        a["id"].as_str().unwrap().to_string(),
        b["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(ids(""), vec![bid.clone()]);
    assert_eq!(ids("?status=deleted"), vec![aid.clone()]);
    let mut both = vec![aid, bid];
    both.sort();
    assert_eq!(ids("?status=all"), both);
    let (s, v) = get(&svc, "/tax/merchants?status=gone", TEST_KEY, V1);
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "INVALID_QUERY_PARAMETER")
    );
}

#[test]
fn list_pages_by_fifty() {
    let svc = service();
    let mut ids: Vec<String> = (0..51)
        .map(|i| {
            create(&svc, LIVE_KEY, V1, &format!("m-{i:02}"))["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    ids.sort();
    let (s, p1) = get(&svc, "/tax/merchants", LIVE_KEY, V1);
    assert_eq!(s, 200);
    let page1: Vec<&str> = p1["merchants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    // 51 merchants: 50 on the first page, ordered by id, and one more after it.
    assert_eq!(
        page1,
        ids[..50].iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(p1["has_more"], true);
    assert_eq!(p1["last_merchant_id"].as_str(), Some(ids[49].as_str()));
    let (_, p2) = get(
        &svc,
        &format!("/tax/merchants?cursor={}", ids[49]),
        LIVE_KEY,
        V1,
    );
    assert_eq!(p2["merchants"].as_array().unwrap().len(), 1);
    assert_eq!(p2["merchants"][0]["id"].as_str(), Some(ids[50].as_str()));
    assert_eq!(p2["has_more"], false);
    // The other account's list is empty.
    let (_, o) = get(&svc, "/tax/merchants", OTHER_LIVE_KEY, V1);
    assert_eq!(o["merchants"], json!([]));
    assert_eq!(o["last_merchant_id"], Value::Null);
}
