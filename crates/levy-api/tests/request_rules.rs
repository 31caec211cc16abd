//! Request rules that the per-version OpenAPI documents state and schema fuzzing checks
//! (`crates/levy-server/schemathesis`): each was a disagreement between a schema-valid
//! request and the service, or between a schema-invalid request and the service.

mod common;
use common::*;

#[test]
fn an_empty_query_value_is_refused_not_read_as_no_filter() {
    // `?id_type=` once failed as "must be id or reference_customer_id" while `?status=`
    // on other lists was a different error; now every empty value is one rule.
    let svc = service();
    let (s, v) = get(&svc, "/tax/customers/cus_x?id_type=", TEST_KEY, None);
    assert_eq!((s, old_code(&v).as_str()), (400, "invalid_query_parameter"));
    assert_eq!(v["error"]["error_meta"]["field"], "id_type");
    let (s, v) = get(&svc, "/tax/merchants?status=", TEST_KEY, Some("2026-03-01"));
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "INVALID_QUERY_PARAMETER")
    );
    // An empty cursor is the first page, as clients write it on the first call.
    let (s, v) = get(&svc, "/tax/products?cursor=", TEST_KEY, None);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["has_more"], false);
}

#[test]
fn metadata_values_are_scalars() {
    // The documents say each metadata value is a string, number, boolean or null shorter
    // than 255 characters; an array or object is refused (before, a short one was kept
    // and a long one refused, which no schema can say).
    let svc = service();
    let body = calc_body("1000", "GENERAL_MERCHANDISE");
    let with = |meta: &str| body.replacen('{', &format!(r#"{{"metadata": {meta}, "#), 1);
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &with(r#"{"a": [1]}"#),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "incorrect_type"), "{v}");
    assert_eq!(v["error"]["error_meta"]["field"], "metadata.a");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &with(r#"{"a": {}}"#),
    );
    assert_eq!(s, 400, "{v}");
    let (s, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &with(r#"{"a": "x", "b": 2.5, "c": true, "d": null}"#),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["metadata"]["b"], serde_json::json!(2.5));
}

#[test]
fn integers_may_be_written_with_a_zero_fraction() {
    // JSON Schema counts 4102444800.0 as an integer; so does the service now. (It is
    // 2100-01-01T00:00:00Z: a refund is dated on or after its sale, made now.)
    let svc = service();
    let tx = sale(&svc, TEST_KEY, "1000", "order-int");
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        TEST_KEY,
        None,
        &format!(
            r#"{{"transaction_id": "{}", "type": "full", "refund_processed_at": 4102444800.0}}"#,
            tx["id"].as_str().unwrap()
        ),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["refund_processed_at"], 4_102_444_800_i64);
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        TEST_KEY,
        None,
        &format!(
            r#"{{"transaction_id": "{}", "type": "full", "refund_processed_at": 0.5}}"#,
            tx["id"].as_str().unwrap()
        ),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "incorrect_type"), "{v}");
}

#[test]
fn refunded_amounts_are_bounded_like_sale_amounts() {
    // A sale's amount is at most 10^15 minor units (levy_core::MAX_AMOUNT_MINOR); a
    // refund line may take back no more than that, and says so before any lookup.
    let svc = service();
    let tx = sale(&svc, TEST_KEY, "1000", "order-bound");
    let body = |sales: &str| {
        format!(
            r#"{{"transaction_id": "{}", "type": "partial", "line_items": [
                {{"reference_line_item_id": "line-1", "sales_amount_refunded": {sales},
                  "tax_amount_refunded": 0}}]}}"#,
            tx["id"].as_str().unwrap()
        )
    };
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        TEST_KEY,
        None,
        &body("-1000000000000001"),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "number_too_large"), "{v}");
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "line_items[0].sales_amount_refunded"
    );
}
