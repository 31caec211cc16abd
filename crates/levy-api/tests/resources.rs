//! Ping, keys and versions, routing, customers and products.

mod common;
use common::*;
use levy_api::*;

#[test]
fn ping_reports_mode_and_version() {
    let svc = service();
    let (s, v) = get(&svc, "/tax/ping", TEST_KEY, None);
    assert_eq!(s, 200);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["env"], "test");
    assert_eq!(
        v["api_version"], "2024-09-01",
        "the default version when the header is absent"
    );
    let ts = v["timestamp"].as_str().unwrap();
    assert!(
        ts.len() == 20 && ts.ends_with('Z') && &ts[10..11] == "T",
        "{ts}"
    );
    for version in ["2024-09-01", "2025-05-12", "2026-01-01", "2026-03-01"] {
        let (s, v) = get(&svc, "/tax/ping", LIVE_KEY, Some(version));
        assert_eq!(s, 200);
        assert_eq!(v["env"], "prod");
        assert_eq!(v["api_version"], version);
    }
}

#[test]
fn bad_keys_and_versions() {
    let svc = service();
    let (s, v) = call(&svc, "GET", "/tax/ping", None, None, "");
    assert_eq!((s, old_code(&v).as_str()), (401, "unauthorized"));
    let (s, v) = call(
        &svc,
        "GET",
        "/tax/ping",
        Some("sk_test_wrong"),
        Some("2026-01-01"),
        "",
    );
    assert_eq!((s, flat_type(&v, 401).as_str()), (401, "UNAUTHORIZED"));
    // A known key's prefix with a different ending is refused.
    let (s, _) = call(
        &svc,
        "GET",
        "/tax/ping",
        Some("sk_test_shop_key_0002"),
        None,
        "",
    );
    assert_eq!(s, 401);
    // Not a bearer header.
    let r = svc.handle(&Request {
        method: "GET".into(),
        path: "/tax/ping".into(),
        headers: vec![("authorization".into(), format!("Basic {TEST_KEY}"))],
        ..Default::default()
    });
    assert_eq!(r.status, 401);
    // Header names are case-insensitive.
    let r = svc.handle(&Request {
        method: "GET".into(),
        path: "/tax/ping".into(),
        headers: vec![
            ("authorization".into(), format!("bearer {TEST_KEY}")),
            ("x-api-version".into(), "2026-03-01".into()),
        ],
        ..Default::default()
    });
    assert_eq!(r.status, 200);
    let (s, v) = call(
        &svc,
        "GET",
        "/tax/ping",
        Some(TEST_KEY),
        Some("2025-01-01"),
        "",
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "invalid_api_version"));
    assert_eq!(v["error"]["error_meta"]["received"], "2025-01-01");
}

#[test]
fn routing_errors() {
    let svc = service();
    let (s, v) = get(&svc, "/tax/nothing", TEST_KEY, None);
    assert_eq!((s, old_code(&v).as_str()), (404, "not_found"));
    let (s, v) = call(
        &svc,
        "PUT",
        "/tax/calculations",
        Some(TEST_KEY),
        Some("2026-01-01"),
        "{}",
    );
    assert_eq!(
        (s, flat_type(&v, 405).as_str()),
        (405, "METHOD_NOT_ALLOWED")
    );
    let r = svc.handle(&Request {
        method: "DELETE".into(),
        path: "/tax/calculations".into(),
        headers: vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))],
        ..Default::default()
    });
    assert!(r
        .headers
        .contains(&("Allow".to_string(), "POST".to_string())));
    // Oversize body.
    let big = format!(r#"{{"email": "{}"}}"#, "a".repeat(2 << 20));
    let (s, _) = post(&svc, "/tax/customers", TEST_KEY, None, &big);
    assert_eq!(s, 413);
    // Unknown query parameter.
    let (s, v) = get(&svc, "/tax/products?page=2", TEST_KEY, None);
    assert_eq!((s, old_code(&v).as_str()), (400, "unrecognized_field"));
}

#[test]
fn customers_create_get_delete() {
    let svc = service();
    let (s, c) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        None,
        r#"{"email": "ann@example.com", "name": "Ann", "reference_customer_id": "crm-1"}"#,
    );
    assert_eq!(s, 200, "{c}");
    let id = c["id"].as_str().unwrap();
    assert!(id.starts_with("cus_") && id.len() == 4 + 32);
    assert_eq!(c["object"], "tax.customer");
    assert_eq!(c["is_tax_exempt"], false);
    assert!(c.get("type").is_none(), "type is a 2025-05-12 field");
    let (s, g) = get(&svc, &format!("/tax/customers/{id}"), TEST_KEY, None);
    assert_eq!(
        (s, &g["email"]),
        (200, &serde_json::json!("ann@example.com"))
    );
    let (s, g) = get(
        &svc,
        "/tax/customers/crm-1?id_type=reference_customer_id",
        TEST_KEY,
        None,
    );
    assert_eq!((s, g["id"].as_str()), (200, Some(id)));
    let (s, g) = get(
        &svc,
        &format!("/tax/customers/{id}?id_type=id"),
        TEST_KEY,
        None,
    );
    assert_eq!((s, g["name"].as_str()), (200, Some("Ann")));
    let (s, v) = get(&svc, "/tax/customers/crm-1?id_type=email", TEST_KEY, None);
    assert_eq!((s, old_code(&v).as_str()), (400, "invalid_query_parameter"));
    // Duplicate reference id.
    let (s, v) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        None,
        r#"{"email": "b@example.com", "reference_customer_id": "crm-1"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (409, "duplicate_customer"));
    // Validation.
    let (s, v) = post(&svc, "/tax/customers", TEST_KEY, None, r#"{"name": "x"}"#);
    assert_eq!((s, old_code(&v).as_str()), (400, "missing_field"));
    assert_eq!(v["error"]["error_meta"]["field"], "email");
    let (s, v) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        Some("2026-01-01"),
        r#"{"email": "not-an-email"}"#,
    );
    assert_eq!((s, flat_type(&v, 400).as_str()), (400, "INVALID_EMAIL"));
    let (s, v) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        None,
        r#"{"email": "a@b.co", "is_tax_exempt": "yes"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "incorrect_type"));
    let (s, v) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        None,
        r#"{"email": "a@b.co", "type": "BUSINESS"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "unrecognized_field"));
    let long = format!(r#"{{"email": "a@b.co", "name": "{}"}}"#, "n".repeat(256));
    let (s, v) = post(&svc, "/tax/customers", TEST_KEY, None, &long);
    assert_eq!((s, old_code(&v).as_str()), (400, "string_too_long"));
    // 2025-05-12: type and tax ids.
    let (s, b) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        Some("2025-05-12"),
        r#"{"email": "biz@example.com", "type": "BUSINESS", "tax_ids": [{"type": "EIN", "value": "12-3456789"}]}"#,
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["type"], "BUSINESS");
    assert_eq!(b["tax_ids"][0]["value"], "12-3456789");
    let (s, v) = post(
        &svc,
        "/tax/customers",
        TEST_KEY,
        Some("2025-05-12"),
        r#"{"email": "a@b.co", "type": "PERSON"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "invalid_customer_type"));
    // Delete, then it is gone; deleting again is a 404; the reference id is free again.
    let (s, d) = call(
        &svc,
        "DELETE",
        &format!("/tax/customers/{id}"),
        Some(TEST_KEY),
        None,
        "",
    );
    assert_eq!(s, 200);
    assert_eq!(d["object"], "tax.customer");
    assert!(d["deleted_at"].is_i64());
    assert_eq!(
        get(&svc, &format!("/tax/customers/{id}"), TEST_KEY, None).0,
        404
    );
    let (s, v) = call(
        &svc,
        "DELETE",
        &format!("/tax/customers/{id}"),
        Some(TEST_KEY),
        Some("2026-03-01"),
        "",
    );
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "CUSTOMER_NOT_FOUND")
    );
    assert_eq!(
        post(
            &svc,
            "/tax/customers",
            TEST_KEY,
            None,
            r#"{"email": "c@example.com", "reference_customer_id": "crm-1"}"#
        )
        .0,
        200
    );
}

#[test]
fn products_create_get_delete_list() {
    let svc = service();
    let body = |id: &str| {
        format!(
            r#"{{"reference_product_id": "{id}", "reference_product_name": "Name {id}", "product_category": "CLOTHING"}}"#
        )
    };
    let (s, p) = post(&svc, "/tax/products", TEST_KEY, None, &body("p-000"));
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["object"], "tax.product");
    assert_eq!(p["testmode"], true);
    assert_eq!(p["product_category"], "CLOTHING");
    let (s, v) = post(&svc, "/tax/products", TEST_KEY, None, &body("p-000"));
    assert_eq!((s, old_code(&v).as_str()), (409, "duplicate_product"));
    let (s, v) = post(
        &svc,
        "/tax/products",
        TEST_KEY,
        Some("2026-01-01"),
        r#"{"reference_product_id": "x", "reference_product_name": "X", "product_category": "SPACESHIPS"}"#,
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "INVALID_PRODUCT_CATEGORY")
    );
    let (s, v) = post(
        &svc,
        "/tax/products",
        TEST_KEY,
        None,
        r#"{"reference_product_id": "x", "product_category": "CLOTHING"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "missing_field"));
    assert_eq!(v["error"]["error_meta"]["field"], "reference_product_name");
    // 120 more products: pages of 50, 50, 21 in id order.
    for i in 1..=120 {
        assert_eq!(
            post(
                &svc,
                "/tax/products",
                TEST_KEY,
                None,
                &body(&format!("p-{i:03}"))
            )
            .0,
            200
        );
    }
    let (s, page1) = get(&svc, "/tax/products", TEST_KEY, Some("2026-03-01"));
    assert_eq!(s, 200);
    assert_eq!(page1["products"].as_array().unwrap().len(), 50);
    assert_eq!(page1["has_more"], true);
    assert_eq!(page1["last_product_id"], "p-049");
    let (_, page2) = get(&svc, "/tax/products?cursor=p-049", TEST_KEY, None);
    assert_eq!(page2["products"][0]["reference_product_id"], "p-050");
    assert_eq!(page2["last_product_id"], "p-099");
    assert_eq!(page2["has_more"], true);
    let (_, page3) = get(&svc, "/tax/products?cursor=p-099", TEST_KEY, None);
    assert_eq!(page3["products"].as_array().unwrap().len(), 21);
    assert_eq!(page3["has_more"], false);
    assert_eq!(page3["last_product_id"], "p-120");
    // Get and delete.
    let (s, g) = get(&svc, "/tax/products/p-007", TEST_KEY, None);
    assert_eq!(
        (s, g["reference_product_name"].as_str()),
        (200, Some("Name p-007"))
    );
    let (s, d) = call(
        &svc,
        "DELETE",
        "/tax/products/p-007",
        Some(TEST_KEY),
        None,
        "",
    );
    assert_eq!((s, d["object"].as_str()), (200, Some("tax.product")));
    assert_eq!(get(&svc, "/tax/products/p-007", TEST_KEY, None).0, 404);
    let (s, v) = call(
        &svc,
        "DELETE",
        "/tax/products/p-007",
        Some(TEST_KEY),
        None,
        "",
    );
    assert_eq!((s, old_code(&v).as_str()), (404, "product_not_found"));
    // Ids with spaces travel percent-encoded.
    assert_eq!(
        post(&svc, "/tax/products", TEST_KEY, None, &body("a b")).0,
        200
    );
    assert_eq!(get(&svc, "/tax/products/a%20b", TEST_KEY, None).0, 200);
}

#[test]
fn table_reload_is_atomic_and_visible() {
    let svc = service();
    let before = svc.table().hash_hex();
    let (_, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(v["table_hash"], before.as_str());
    // A new table with a 6% state rate: 10000 * (0.06 + 0.0225) = 825.
    svc.reload_table(table_with_rate(rust_decimal::Decimal::new(6, 2)));
    let after = svc.table().hash_hex();
    assert_ne!(after, before);
    let (_, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(v["table_hash"], after.as_str());
    assert_eq!(n(&v["total_tax_amount"]), "825");
}

#[test]
fn keys_file_service() {
    let dir = levy_testkit::TempDir::new("levy-api-keys");
    let path = dir.join("keys.toml");
    let _ = std::fs::remove_file(&path);
    let (test, live) = keys::create_account_keys(&path, "shop").unwrap();
    let (test2, _) = keys::create_account_keys(&path, "shop").unwrap();
    let svc = Service::open(ServiceConfig {
        table: TableSource::Table(table()),
        ledger: ":memory:".into(),
        keys: KeySource::File(path),
    })
    .unwrap();
    assert_eq!(get(&svc, "/tax/ping", &test, None).1["env"], "test");
    assert_eq!(get(&svc, "/tax/ping", &live, None).1["env"], "prod");
    // Both test keys of the account see the same data.
    let (_, c) = post(
        &svc,
        "/tax/customers",
        &test,
        None,
        r#"{"email": "k@example.com"}"#,
    );
    assert_eq!(
        get(
            &svc,
            &format!("/tax/customers/{}", c["id"].as_str().unwrap()),
            &test2,
            None
        )
        .0,
        200
    );
}

#[test]
fn hostile_bodies_never_reach_a_500() {
    let svc = service();
    let routes = [
        ("POST", "/tax/customers"),
        ("POST", "/tax/products"),
        ("POST", "/tax/calculations"),
        ("POST", "/tax/transactions"),
        ("POST", "/tax/refunds"),
        ("POST", "/tax/refund_reversals"),
    ];
    let bodies = [
        "",
        "null",
        "42",
        "\"x\"",
        "{}",
        "{\"a\":",
        "{\"customer\": {\"address\": []}, \"order_details\": {\"line_items\": {}}}",
        "{\"customer\": {\"address\": {\"address_country\": 1}}}",
        "{\"order_details\": {\"line_items\": [1, 2]}, \"customer\": {\"address\": {\"address_province\": \"TN\", \"address_postal_code\": \"37203\", \"address_country\": \"US\"}}}",
        "{\"transaction_id\": [], \"type\": null}",
        "{\"refund_id\": {}}",
        "{\"email\": \"\u{0}@x.y\"}",
        "{\"amount\": 1e999999}",
        "\u{feff}{}",
    ];
    for version in [None, Some("2026-03-01")] {
        for (method, path) in routes {
            for body in bodies {
                let (s, v) = call(&svc, method, path, Some(TEST_KEY), version, body);
                assert!((400..500).contains(&s), "{method} {path} {body:?}: {s} {v}");
            }
        }
    }
    // Nothing was stored by any of them.
    let (_, list) = get(&svc, "/tax/products", TEST_KEY, None);
    assert_eq!(list["products"].as_array().unwrap().len(), 0);
}
