//! Transactions, refunds and reversals, nexus totals, isolation, durability, concurrency.

mod common;
use common::*;
use levy_api::*;
use rust_decimal::Decimal;
use serde_json::Value;

fn tx_body(calc_id: &str, order: &str) -> String {
    format!(r#"{{"calculation_id": "{calc_id}", "reference_order_id": "{order}"}}"#)
}

fn calc(svc: &Service, key: &str, amount: &str) -> String {
    let (s, v) = post(
        svc,
        "/tax/calculations",
        key,
        None,
        &calc_body(amount, "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{v}");
    v["id"].as_str().unwrap().to_string()
}

#[test]
fn transaction_from_calculation() {
    let svc = service();
    let c = calc(&svc, TEST_KEY, "10000");
    let body = format!(
        r#"{{"calculation_id": "{c}", "reference_order_id": "order-1", "transaction_processed_at": 1772323200,
             "metadata": {{"till": "3"}}}}"#
    );
    let (s, tx) = post(&svc, "/tax/transactions", TEST_KEY, None, &body);
    assert_eq!(s, 200, "{tx}");
    assert!(tx["id"].as_str().unwrap().starts_with("tr_"));
    assert_eq!(tx["object"], "tax.transaction");
    assert_eq!(tx["calculation_id"], c.as_str());
    assert_eq!(tx["testmode"], "true");
    assert_eq!(tx["transaction_processed_at"], 1772323200);
    assert_eq!(tx["metadata"]["till"], "3");
    assert_eq!(tx["filing_currency_code"], "USD");
    // Lines carry tax_due_decimal on transactions: 10000 * 0.07 = 700, * 0.0225 = 225.
    let j = &tx["line_items"][0]["tax_jurisdictions"];
    assert_eq!(n(&j[0]["tax_due_decimal"]), "700");
    assert_eq!(n(&j[1]["tax_due_decimal"]), "225");
    assert_eq!(n(&tx["line_items"][0]["tax_amount"]), "925");

    let id = tx["id"].as_str().unwrap();
    let (s, got) = get(
        &svc,
        &format!("/tax/transactions/{id}"),
        TEST_KEY,
        Some("2026-03-01"),
    );
    assert_eq!(s, 200);
    assert_eq!(got["reference_order_id"], "order-1");
    assert_eq!(
        got["line_items"][0]["tax_jurisdictions"][0]["tax_authority_type"],
        "STATE"
    );

    // Duplicate order id: 409, and nothing changes.
    let c2 = calc(&svc, TEST_KEY, "500");
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        None,
        &tx_body(&c2, "order-1"),
    );
    assert_eq!(s, 409);
    assert_eq!(old_code(&v), "duplicate_reference_order_id");
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        Some("2026-01-01"),
        &tx_body(&c2, "order-1"),
    );
    assert_eq!(
        (s, flat_type(&v, 409).as_str()),
        (409, "DUPLICATE_REFERENCE_ORDER_ID")
    );
    // The same order id is free in live mode and in another account.
    let lc = calc(&svc, LIVE_KEY, "500");
    assert_eq!(
        post(
            &svc,
            "/tax/transactions",
            LIVE_KEY,
            None,
            &tx_body(&lc, "order-1")
        )
        .0,
        200
    );
    let oc = calc(&svc, OTHER_TEST_KEY, "500");
    assert_eq!(
        post(
            &svc,
            "/tax/transactions",
            OTHER_TEST_KEY,
            None,
            &tx_body(&oc, "order-1")
        )
        .0,
        200
    );

    // Unknown calculation: 404 naming the id; a calculation of the other mode is unknown too.
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        None,
        &tx_body("calc_nope", "order-2"),
    );
    assert_eq!(s, 404);
    assert_eq!(old_code(&v), "calculation_not_found");
    assert!(v["error"]["error_message"]
        .as_str()
        .unwrap()
        .contains("calc_nope"));
    assert!(v["error"].get("error_meta").is_none());
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        Some("2026-01-01"),
        &tx_body(&lc, "order-2"),
    );
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "CALCULATION_NOT_FOUND")
    );

    // Missing and mistyped fields.
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        None,
        &format!(r#"{{"calculation_id": "{c2}"}}"#),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "missing_field"));
    assert_eq!(v["error"]["error_meta"]["field"], "reference_order_id");
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        TEST_KEY,
        None,
        &format!(r#"{{"calculation_id": "{c2}", "reference_order_id": 7}}"#),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "incorrect_type"));
}

#[test]
fn delete_transaction_then_again() {
    let svc = service();
    let tx = sale(&svc, TEST_KEY, "1000", "o-del");
    let id = tx["id"].as_str().unwrap();
    let (s, v) = call(
        &svc,
        "DELETE",
        &format!("/tax/transactions/{id}"),
        Some(TEST_KEY),
        None,
        "",
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["object"], "tax.transaction");
    assert!(v["deleted_at"].is_i64());
    let (s, v) = call(
        &svc,
        "DELETE",
        &format!("/tax/transactions/{id}"),
        Some(TEST_KEY),
        None,
        "",
    );
    assert_eq!(
        (s, old_code(&v).as_str()),
        (400, "transaction_already_deleted")
    );
    let (s, v) = get(&svc, &format!("/tax/transactions/{id}"), TEST_KEY, None);
    assert_eq!((s, old_code(&v).as_str()), (404, "transaction_not_found"));
    let (s, v) = call(
        &svc,
        "DELETE",
        "/tax/transactions/tr_unknown",
        Some(TEST_KEY),
        Some("2026-03-01"),
        "",
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "TRANSACTION_NOT_FOUND")
    );
}

fn refund(svc: &Service, body: &str) -> (u16, Value) {
    post(svc, "/tax/refunds", TEST_KEY, Some("2026-03-01"), body)
}

#[test]
fn partial_full_and_over_refunds() {
    let svc = service();
    let tx = sale(&svc, TEST_KEY, "10000", "o-ref");
    let id = tx["id"].as_str().unwrap();
    let partial = |sales: &str, tax: &str| {
        format!(
            r#"{{"transaction_id": "{id}", "type": "partial", "line_items": [{{"reference_line_item_id": "line-1",
                 "quantity": 1, "sales_amount_refunded": {sales}, "tax_amount_refunded": {tax}}}]}}"#
        )
    };
    // Refund $40.00 and its $3.70 tax (4000 * 0.0925 = 370).
    let (s, r1) = refund(&svc, &partial("-4000", "-370"));
    assert_eq!(s, 200, "{r1}");
    assert!(r1["id"].as_str().unwrap().starts_with("ref_tr_"));
    assert_eq!(r1["object"], "tax.refund");
    assert_eq!(r1["refund_type"], "partial");
    assert_eq!(r1["testmode"], Value::Bool(true));
    let line = &r1["line_items"][0];
    assert_eq!(n(&line["amount_excluding_tax"]), "-4000");
    assert_eq!(n(&line["tax_amount"]), "-370");
    assert_eq!(n(&line["amount_including_tax"]), "-4370");
    // Jurisdiction shares: 370/925 = 0.4 of 700 = 280 and of 225 = 90.
    assert_eq!(n(&line["tax_jurisdictions"][0]["tax_due_decimal"]), "-280");
    assert_eq!(n(&line["tax_jurisdictions"][1]["tax_due_decimal"]), "-90");

    // 6000 sales remain; asking for 6001 is refused and changes nothing.
    let (s, v) = refund(&svc, &partial("-6001", "-0"));
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "REFUND_EXCEEDS_TRANSACTION")
    );
    // 555 tax remains (925 - 370); 556 is refused.
    let (s, v) = refund(&svc, &partial("-1", "-556"));
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "REFUND_EXCEEDS_TRANSACTION")
    );
    // Positive amounts are refused.
    let (s, v) = refund(&svc, &partial("100", "-1"));
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "NEGATIVE_NUMBER_REQUIRED")
    );
    let (s, v) = post(&svc, "/tax/refunds", TEST_KEY, None, &partial("-1", "1"));
    assert_eq!(
        (s, old_code(&v).as_str()),
        (400, "negative_number_required")
    );
    assert_eq!(
        v["error"]["error_meta"]["field"],
        "line_items[0].tax_amount_refunded"
    );

    // A full refund takes back exactly what remains: 6000 and 555.
    let (s, full) = refund(
        &svc,
        &format!(r#"{{"transaction_id": "{id}", "type": "full"}}"#),
    );
    assert_eq!(s, 200, "{full}");
    assert_eq!(n(&full["line_items"][0]["amount_excluding_tax"]), "-6000");
    assert_eq!(n(&full["line_items"][0]["tax_amount"]), "-555");
    // Nothing remains: another full refund, or any partial one, is refused.
    let (s, v) = refund(
        &svc,
        &format!(r#"{{"transaction_id": "{id}", "type": "full"}}"#),
    );
    assert_eq!(
        (s, flat_type(&v, 400).as_str()),
        (400, "REFUND_EXCEEDS_TRANSACTION")
    );
    let (s, _) = refund(&svc, &partial("-1", "0"));
    assert_eq!(s, 400);

    // Both refunds are listed, oldest first.
    let (s, list) = get(
        &svc,
        &format!("/tax/transactions/{id}/refunds"),
        TEST_KEY,
        Some("2026-03-01"),
    );
    assert_eq!(s, 200);
    let refunds = list["refunds"].as_array().unwrap();
    assert_eq!(refunds.len(), 2);
    assert_eq!(refunds[0]["id"], r1["id"]);
    assert_eq!(refunds[1]["id"], full["id"]);

    // Reversing the partial refund restores 4000 + 370 to be refunded; reversing twice fails.
    let rev = format!(r#"{{"refund_id": "{}"}}"#, r1["id"].as_str().unwrap());
    let (s, v) = post(
        &svc,
        "/tax/refund_reversals",
        TEST_KEY,
        Some("2026-03-01"),
        &rev,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["id"], r1["id"]);
    assert!(v["reversed_at"].is_i64());
    let (s, v) = post(
        &svc,
        "/tax/refund_reversals",
        TEST_KEY,
        Some("2026-03-01"),
        &rev,
    );
    assert_eq!(
        (s, flat_type(&v, 409).as_str()),
        (409, "REFUND_ALREADY_REVERSED")
    );
    let (s, v) = post(
        &svc,
        "/tax/refund_reversals",
        TEST_KEY,
        None,
        r#"{"refund_id": "ref_tr_nope"}"#,
    );
    assert_eq!((s, old_code(&v).as_str()), (404, "refund_not_found"));
    let (s, v) = refund(&svc, &partial("-4000", "-370"));
    assert_eq!(s, 200, "{v}");
    let (s, _) = refund(&svc, &partial("-1", "0"));
    assert_eq!(
        s, 400,
        "after the reversal was refunded again, nothing remains"
    );

    // Unknown transaction; partial without lines; bad type.
    let (s, v) = refund(&svc, r#"{"transaction_id": "tr_nope", "type": "full"}"#);
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "TRANSACTION_NOT_FOUND")
    );
    let (s, v) = refund(
        &svc,
        &format!(r#"{{"transaction_id": "{id}", "type": "partial"}}"#),
    );
    assert_eq!((s, flat_type(&v, 400).as_str()), (400, "MISSING_FIELD"));
    let (s, v) = refund(
        &svc,
        &format!(r#"{{"transaction_id": "{id}", "type": "some"}}"#),
    );
    assert_eq!((s, flat_type(&v, 400).as_str()), (400, "INCORRECT_TYPE"));
}

#[test]
fn live_sales_count_toward_nexus_and_refunds_subtract() {
    let svc = service();
    sale(&svc, TEST_KEY, "10000", "t-1"); // test mode: not counted
    let tx = sale(&svc, LIVE_KEY, "10000", "l-1");
    sale(&svc, LIVE_KEY, "2500", "l-2");
    let totals = svc.nexus_totals("shop").unwrap();
    assert_eq!(totals.len(), 1);
    // Live sales in TN: 10000 + 2500 = 12500, two transactions.
    assert_eq!(
        (totals[0].country.as_str(), totals[0].region.as_str()),
        ("US", "TN")
    );
    assert_eq!(totals[0].sales, Decimal::from(12500));
    assert_eq!(totals[0].count, 2);
    // A duplicate order id is refused and leaves the totals as they were.
    let c = calc(&svc, LIVE_KEY, "999");
    assert_eq!(
        post(
            &svc,
            "/tax/transactions",
            LIVE_KEY,
            None,
            &tx_body(&c, "l-2")
        )
        .0,
        409
    );
    assert_eq!(svc.nexus_totals("shop").unwrap(), totals);
    let id = tx["id"].as_str().unwrap();
    let (s, r) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &format!(
            r#"{{"transaction_id": "{id}", "type": "partial", "line_items": [{{"reference_line_item_id": "line-1",
            "sales_amount_refunded": -1000, "tax_amount_refunded": -92.5}}]}}"#
        ),
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["testmode"], Value::Bool(false));
    // 12500 - 1000 = 11500.
    assert_eq!(
        svc.nexus_totals("shop").unwrap()[0].sales,
        Decimal::from(11500)
    );
    let (s, _) = post(
        &svc,
        "/tax/refund_reversals",
        LIVE_KEY,
        None,
        &format!(r#"{{"refund_id": "{}"}}"#, r["id"].as_str().unwrap()),
    );
    assert_eq!(s, 200);
    assert_eq!(
        svc.nexus_totals("shop").unwrap()[0].sales,
        Decimal::from(12500)
    );
    // Deleting l-1 takes its 10000 and its count off.
    assert_eq!(
        call(
            &svc,
            "DELETE",
            &format!("/tax/transactions/{id}"),
            Some(LIVE_KEY),
            None,
            ""
        )
        .0,
        200
    );
    let t = &svc.nexus_totals("shop").unwrap()[0];
    assert_eq!((t.sales, t.count), (Decimal::from(2500), 1));
    assert!(svc.nexus_totals("other").unwrap().is_empty());
}

#[test]
fn modes_and_accounts_are_isolated_both_ways() {
    let svc = service();
    let keys = [TEST_KEY, LIVE_KEY, OTHER_TEST_KEY, OTHER_LIVE_KEY];
    for (i, owner) in keys.iter().enumerate() {
        let tx = sale(&svc, owner, "100", &format!("iso-{i}"));
        let tid = tx["id"].as_str().unwrap().to_string();
        let (s, c) = post(
            &svc,
            "/tax/customers",
            owner,
            None,
            &format!(r#"{{"email": "c{i}@example.com", "reference_customer_id": "ref-{i}"}}"#),
        );
        assert_eq!(s, 200);
        let cid = c["id"].as_str().unwrap().to_string();
        let (s, _) = post(
            &svc,
            "/tax/products",
            owner,
            None,
            &format!(
                r#"{{"reference_product_id": "p-{i}", "reference_product_name": "P", "product_category": "CLOTHING"}}"#
            ),
        );
        assert_eq!(s, 200);
        for other in keys.iter().filter(|k| *k != owner) {
            assert_eq!(
                get(&svc, &format!("/tax/transactions/{tid}"), other, None).0,
                404,
                "{owner} -> {other}"
            );
            assert_eq!(
                get(
                    &svc,
                    &format!("/tax/transactions/{tid}/refunds"),
                    other,
                    None
                )
                .0,
                404
            );
            assert_eq!(
                call(
                    &svc,
                    "DELETE",
                    &format!("/tax/transactions/{tid}"),
                    Some(other),
                    None,
                    ""
                )
                .0,
                400
            );
            assert_eq!(
                post(
                    &svc,
                    "/tax/refunds",
                    other,
                    None,
                    &format!(r#"{{"transaction_id": "{tid}", "type": "full"}}"#)
                )
                .0,
                404
            );
            assert_eq!(
                get(&svc, &format!("/tax/customers/{cid}"), other, None).0,
                404
            );
            assert_eq!(
                get(
                    &svc,
                    &format!("/tax/customers/ref-{i}?id_type=reference_customer_id"),
                    other,
                    None
                )
                .0,
                404
            );
            assert_eq!(
                get(&svc, &format!("/tax/products/p-{i}"), other, None).0,
                404
            );
            let (_, list) = get(&svc, "/tax/products", other, None);
            assert!(list["products"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["reference_product_id"] != format!("p-{i}")));
        }
        // The owner still sees everything.
        assert_eq!(
            get(&svc, &format!("/tax/transactions/{tid}"), owner, None).0,
            200
        );
        assert_eq!(
            get(&svc, &format!("/tax/customers/{cid}"), owner, None).0,
            200
        );
    }
}

#[test]
fn acknowledged_writes_survive_reopening_the_ledger() {
    let dir = levy_testkit::TempDir::new("levy-api-ledger");
    let path = dir.join("ledger.sqlite");
    let _ = std::fs::remove_file(&path);
    let open = || {
        Service::open(ServiceConfig {
            table: TableSource::Table(table()),
            ledger: path.display().to_string(),
            keys: keys(),
        })
        .unwrap()
    };
    let (tx_id, calc_id) = {
        let svc = open();
        let c = calc(&svc, LIVE_KEY, "10000");
        let tx = sale(&svc, LIVE_KEY, "2000", "durable-1");
        (tx["id"].as_str().unwrap().to_string(), c)
    };
    let svc = open();
    let (s, tx) = get(&svc, &format!("/tax/transactions/{tx_id}"), LIVE_KEY, None);
    assert_eq!(s, 200, "{tx}");
    assert_eq!(n(&tx["line_items"][0]["amount_excluding_tax"]), "2000");
    // The calculation made before the restart can still become a transaction.
    assert_eq!(
        post(
            &svc,
            "/tax/transactions",
            LIVE_KEY,
            None,
            &tx_body(&calc_id, "durable-2")
        )
        .0,
        200
    );
    assert_eq!(
        svc.nexus_totals("shop").unwrap()[0].sales,
        Decimal::from(12000)
    );
    drop(svc);
}

#[test]
fn concurrent_callers_cannot_both_win_an_order_id() {
    let svc = std::sync::Arc::new(service());
    let calcs: Vec<String> = (0..8).map(|_| calc(&svc, TEST_KEY, "100")).collect();
    let wins: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = calcs
            .iter()
            .map(|c| {
                let svc = &svc;
                s.spawn(move || {
                    post(
                        svc,
                        "/tax/transactions",
                        TEST_KEY,
                        None,
                        &tx_body(c, "race"),
                    )
                    .0
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(wins.iter().filter(|&&s| s == 200).count(), 1, "{wins:?}");
    assert_eq!(wins.iter().filter(|&&s| s == 409).count(), 7, "{wins:?}");

    // Eight callers refunding 100 each of a 500 sale: exactly five succeed.
    let tx = sale(&svc, TEST_KEY, "500", "race-refund");
    let id = tx["id"].as_str().unwrap().to_string();
    let body = format!(
        r#"{{"transaction_id": "{id}", "type": "partial", "line_items": [{{"reference_line_item_id": "line-1",
             "sales_amount_refunded": -100, "tax_amount_refunded": 0}}]}}"#
    );
    let results: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| post(&svc, "/tax/refunds", TEST_KEY, None, &body).0))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        results.iter().filter(|&&s| s == 200).count(),
        5,
        "{results:?}"
    );
}
