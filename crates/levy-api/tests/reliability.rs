//! Issue 38, findings 2, 5, 7 and 9, on both stores (the suite's ledger is PostgreSQL
//! under `LEVY_TEST_LEDGER=postgres`, SQLite otherwise):
//!
//! - strings a ledger cannot hold (NUL) are refused at the interface, alike on both;
//! - a ledger location is an SQLite path or a PostgreSQL connection string, never a file
//!   named after a connection string;
//! - zero refunds are refused, refund lists are paged, a refund reads its sale's running
//!   refund total rather than every earlier refund;
//! - stored calculations are bounded in bytes as well as in number;
//! - (issue 47) a refund on PostgreSQL awaits 6 round trips, not 11, and refunds of one
//!   sale at once add up.

mod common;
use common::*;
use levy_api::*;
#[cfg(feature = "postgres")]
use rust_decimal::Decimal;
use serde_json::{json, Value};

fn live_sale(svc: &Service, amount: &str, order: &str) -> String {
    sale(svc, LIVE_KEY, amount, order)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn partial_refund(svc: &Service, tx: &str, sales: i64, tax: i64) -> (u16, Value) {
    post(
        svc,
        "/tax/refunds",
        LIVE_KEY,
        Some("2026-03-01"),
        &json!({"transaction_id": tx, "type": "partial", "line_items": [
            {"reference_line_item_id": "line-1", "sales_amount_refunded": sales, "tax_amount_refunded": tax}]})
        .to_string(),
    )
}

/// Finding 2: a NUL in a body string, a metadata key or value, a path or a query
/// parameter is 400 `INVALID_CHARACTER`, on SQLite as on PostgreSQL (where it was a 500),
/// and the service goes on.
#[test]
fn nul_is_refused_at_the_interface_on_every_store() {
    let svc = service();
    let v26 = Some("2026-03-01");
    let calc = {
        let (s, v) = post(
            &svc,
            "/tax/calculations",
            LIVE_KEY,
            None,
            &calc_body("10000", "GENERAL_MERCHANDISE"),
        );
        assert_eq!(s, 200, "{v}");
        v["id"].as_str().unwrap().to_string()
    };
    let bodies: Vec<(&str, String)> = vec![
        (
            "/tax/customers",
            json!({"reference_customer_id": "a\u{0}b", "email": "a@b.co"}).to_string(),
        ),
        (
            "/tax/customers",
            json!({"reference_customer_id": "c1", "name": "x\u{0}", "email": "a@b.co"})
                .to_string(),
        ),
        (
            "/tax/products",
            json!({"reference_product_id": "p\u{0}", "reference_product_name": "P",
                   "product_category": "GENERAL_MERCHANDISE"})
            .to_string(),
        ),
        (
            "/tax/transactions",
            json!({"calculation_id": calc, "reference_order_id": "o\u{0}1"}).to_string(),
        ),
        (
            "/tax/transactions",
            json!({"calculation_id": calc, "reference_order_id": "o1", "metadata": {"k": "v\u{0}"}})
                .to_string(),
        ),
        (
            "/tax/transactions",
            json!({"calculation_id": calc, "reference_order_id": "o1", "metadata": {"k\u{0}": "v"}})
                .to_string(),
        ),
        (
            "/tax/refunds",
            json!({"transaction_id": "tr_\u{0}", "type": "full"}).to_string(),
        ),
        (
            "/tax/refund_reversals",
            json!({"refund_id": "ref_tr_\u{0}"}).to_string(),
        ),
    ];
    for (path, body) in &bodies {
        let (s, v) = post(&svc, path, LIVE_KEY, v26, body);
        assert_eq!(s, 400, "{path} {body}: {v}");
        assert_eq!(flat_type(&v, 400), "INVALID_CHARACTER", "{path}: {v}");
    }
    for path in [
        "/tax/customers/cus_%00",
        "/tax/products/p%00",
        "/tax/transactions/tr_%00",
        "/tax/transactions/tr_%00/refunds",
        "/tax/products?cursor=a%00",
    ] {
        let (s, v) = get(&svc, path, LIVE_KEY, v26);
        assert_eq!(s, 400, "{path}: {v}");
        assert_eq!(flat_type(&v, 400), "INVALID_CHARACTER", "{path}: {v}");
    }
    let (s, v) = call(
        &svc,
        "DELETE",
        "/tax/transactions/tr_%00",
        Some(LIVE_KEY),
        v26,
        "",
    );
    assert_eq!(
        (s, flat_type(&v, 400)),
        (400, "INVALID_CHARACTER".to_string())
    );
    // The service goes on: the transaction without the NUL is recorded.
    let (s, v) = post(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        v26,
        &json!({"calculation_id": calc, "reference_order_id": "o1"}).to_string(),
    );
    assert_eq!(s, 200, "{v}");
}

/// Finding 7: a refund of nothing is refused (it was accepted without limit, each one a
/// write); a refund of something is not.
#[test]
fn zero_refunds_are_refused() {
    let svc = service();
    let tx = live_sale(&svc, "10000", "zero-1");
    let (s, v) = partial_refund(&svc, &tx, 0, 0);
    assert_eq!(s, 400, "{v}");
    assert_eq!(flat_type(&v, 400), "NEGATIVE_NUMBER_REQUIRED");
    assert!(
        v["message"].as_str().unwrap().contains("refunds nothing"),
        "{v}"
    );
    assert_eq!(partial_refund(&svc, &tx, 0, -1).0, 200);
    assert_eq!(partial_refund(&svc, &tx, -1, 0).0, 200);
}

/// Finding 7: a sale's refunds are listed a page at a time (100 by default, `limit` 1 to
/// 100, `cursor` the `last_refund_id` of the page before), oldest first.
#[test]
fn refund_lists_are_paged() {
    let svc = service();
    let tx = live_sale(&svc, "10000", "paged-1");
    let mut made = Vec::new();
    for _ in 0..205 {
        let (s, v) = partial_refund(&svc, &tx, -1, 0);
        assert_eq!(s, 200, "{v}");
        made.push(v["id"].as_str().unwrap().to_string());
    }
    let page = |query: &str| {
        let (s, v) = get(
            &svc,
            &format!("/tax/transactions/{tx}/refunds{query}"),
            LIVE_KEY,
            Some("2026-03-01"),
        );
        (s, v)
    };
    let mut seen = Vec::new();
    let mut cursor = String::new();
    let mut sizes = Vec::new();
    loop {
        let (s, v) = page(&format!("?cursor={cursor}"));
        assert_eq!(s, 200, "{v}");
        let refunds = v["refunds"].as_array().unwrap();
        sizes.push(refunds.len());
        seen.extend(
            refunds
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_string()),
        );
        assert_eq!(v["last_refund_id"], json!(seen.last()));
        if v["has_more"] == json!(false) {
            break;
        }
        cursor = v["last_refund_id"].as_str().unwrap().to_string();
    }
    assert_eq!(sizes, [100, 100, 5]);
    assert_eq!(seen, made);
    let (s, v) = page("?limit=7");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["refunds"].as_array().unwrap().len(), 7);
    assert_eq!(v["has_more"], true);
    for bad in [
        "?limit=0",
        "?limit=101",
        "?limit=x",
        "?cursor=ref_tr_nothing",
    ] {
        let (s, v) = page(bad);
        assert_eq!(s, 400, "{bad}: {v}");
        assert_eq!(flat_type(&v, 400), "INVALID_QUERY_PARAMETER", "{bad}");
    }
}

/// Finding 7: a refund checks its sale's running refund total, not every earlier refund:
/// with the earlier refunds' rows gone from the ledger (taken out by hand), the limit
/// still holds, as the total kept beside the sale says.
#[test]
fn refunds_check_a_running_total() {
    let dir = levy_testkit::TempDir::new("levy-running-total");
    let ledger = levy_testkit::postgres::ledger(&dir);
    let svc = levy_testkit::service::with_ledger(table(), &ledger);
    let tx = live_sale(&svc, "10000", "total-1");
    assert_eq!(partial_refund(&svc, &tx, -4000, -370).0, 200);
    assert_eq!(partial_refund(&svc, &tx, -4000, -370).0, 200);
    drop(svc);
    let sql = "DELETE FROM refunds";
    if ledger.starts_with("postgres") {
        let db = ledger.rsplit('/').next().unwrap();
        levy_testkit::postgres::server()
            .unwrap()
            .psql(db, sql)
            .unwrap();
    } else {
        rusqlite::Connection::open(&ledger)
            .unwrap()
            .execute(sql, [])
            .unwrap();
    }
    let svc = levy_testkit::service::with_ledger(table(), &ledger);
    // 8000 of 10000 taken: 2001 is too much, 2000 fits.
    let (s, v) = partial_refund(&svc, &tx, -2001, 0);
    assert_eq!(s, 400, "{v}");
    assert_eq!(flat_type(&v, 400), "REFUND_EXCEEDS_TRANSACTION");
    assert_eq!(partial_refund(&svc, &tx, -2000, 0).0, 200);
}

/// Finding 9: stored calculations are bounded in bytes as in number, counted from the
/// ledger again after a restart.
#[test]
fn stored_calculations_are_bounded_in_bytes() {
    let dir = levy_testkit::TempDir::new("levy-calc-bytes");
    let ledger = levy_testkit::postgres::ledger(&dir);
    let limits = Limits {
        stored_calculation_bytes: 2_000,
        ..Limits::NONE
    };
    let open = || levy_testkit::service::with_ledger(table(), &ledger).with_limits(limits);
    let body = calc_body_v2("10000", "GENERAL_MERCHANDISE");
    let calculate =
        |svc: &Service, key: &str| post(svc, "/tax/calculations", key, Some("2026-03-01"), &body);
    let svc = open();
    let mut made = 0;
    loop {
        let (s, v) = calculate(&svc, LIVE_KEY);
        if s == 429 {
            assert_eq!(flat_type(&v, 429), "CALCULATION_QUOTA_EXCEEDED");
            assert!(v["message"].as_str().unwrap().contains("bytes"), "{v}");
            break;
        }
        assert_eq!(s, 200, "{v}");
        made += 1;
        assert!(made < 100, "2,000 bytes held {made} calculations");
    }
    assert!(made >= 1, "{made}");
    // The other mode has its own bound.
    assert_eq!(calculate(&svc, TEST_KEY).0, 200);
    drop(svc);
    let svc = open();
    assert_eq!(calculate(&svc, LIVE_KEY).0, 429);
}

/// Finding 5: a `key=value` connection string opens the PostgreSQL database it names, and
/// a location that is neither a connection string nor an SQLite path is refused; neither
/// leaves a file behind, let alone one named after a password.
#[test]
fn a_connection_string_is_never_a_file_name() {
    let dir = levy_testkit::TempDir::new("levy-location");
    let before: Vec<_> = std::fs::read_dir(".")
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let open = |ledger: &str| {
        Service::open(ServiceConfig {
            table: TableSource::Table(table()),
            ledger: ledger.to_string(),
            keys: keys(),
        })
    };
    for refused in [
        "postgres:levy",
        "postgresql:host=db",
        "host=127.0.0.1 port=nonsense password=s3cret",
        &format!("{}/no/such/dir/ledger.sqlite", dir.display()),
    ] {
        let e = open(refused).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LedgerError, "{refused}: {e}");
        assert!(!e.message.contains("s3cret"), "{e}");
    }
    if let Some(server) = levy_testkit::postgres::server() {
        let url = server.database();
        let db = url.rsplit('/').next().unwrap();
        let pairs = format!(
            "host=127.0.0.1 port={} user=levy password=s3cret dbname={db}",
            server.port()
        );
        let svc = open(&pairs).unwrap();
        assert!(svc.ledger_is_remote());
        live_sale(&svc, "10000", "pairs-1");
        drop(svc);
        assert_eq!(
            server
                .psql(db, "SELECT count(*) FROM transactions")
                .unwrap(),
            "1"
        );
    }
    let after: Vec<_> = std::fs::read_dir(".")
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        before.len(),
        after.len(),
        "a file was left behind: {after:?}"
    );
}

/// Finding 9, a measurement (run by hand, `-- --ignored --nocapture`, on either ledger):
/// the ledger bytes of a calculation of 1,000 lines with the longest ids, how fast one key
/// stores them, what the count quota alone let an account store, and how many the byte
/// bound lets through (a bound of 10 MB here, for a short run).
#[test]
#[ignore = "a measurement; run by hand"]
fn measure_the_bytes_of_a_maximal_calculation() {
    let dir = levy_testkit::TempDir::new("levy-calc-max");
    let ledger = levy_testkit::postgres::ledger(&dir);
    let bound = 10_000_000u64;
    let svc = levy_testkit::service::with_ledger(table(), &ledger).with_limits(Limits {
        stored_calculation_bytes: bound,
        ..Limits::NONE
    });
    // Ids of letters and digits that do not repeat (xorshift), so that packing them
    // gains little: the worst case.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut id = |i: usize| {
        let text: String = (0..251)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        [(seed % 62) as usize],
                )
            })
            .collect();
        format!("{i:04}{text}")
    };
    let lines: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"amount": 100, "quantity": 1, "product_category": "GENERAL_MERCHANDISE",
                   "reference_line_item_id": id(i)})
        })
        .collect();
    let body = json!({
        "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                 "address_country": "US"}},
        "order_details": {"customer_currency_code": "USD", "line_items": lines},
        "metadata": (0..50).map(|k| (format!("{k:02}{}", "k".repeat(250)), json!("v".repeat(254))))
            .collect::<serde_json::Map<String, Value>>(),
    })
    .to_string();
    let started = std::time::Instant::now();
    let (mut made, mut refused) = (0u64, 0u64);
    while refused == 0 && made < 1_000 {
        let (s, v) = post(&svc, "/tax/calculations", LIVE_KEY, None, &body);
        match s {
            200 => made += 1,
            429 => refused += 1,
            _ => panic!("{s} {v}"),
        }
    }
    let took = started.elapsed().as_secs_f64();
    drop(svc);
    let sql = "SELECT sum(length(data)) FROM calculations";
    let bytes: u64 = if ledger.starts_with("postgres") {
        let db = ledger.rsplit('/').next().unwrap();
        levy_testkit::postgres::server()
            .unwrap()
            .psql(db, "SELECT sum(octet_length(data)) FROM calculations")
            .unwrap()
            .parse()
            .unwrap()
    } else {
        rusqlite::Connection::open(&ledger)
            .unwrap()
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .unwrap() as u64
    };
    let each = bytes as f64 / made as f64;
    println!(
        "{}: {made} maximal calculations stored ({:.0} bytes each, {:.1} MB/s from one key in-process) before the {bound}-byte bound answered 429; at the count quota alone (1,000,000) that is {:.1} GB per account and mode; the default byte bound (2 GiB) holds {:.0} of them",
        if ledger.starts_with("postgres") { "PostgreSQL" } else { "SQLite" },
        each,
        bytes as f64 / took / 1e6,
        each * 1e6 / 1e9,
        (2u64 << 30) as f64 / each
    );
    assert!(bytes < bound + each as u64 + 1, "{bytes}");
}

/// Every field of time is checked one way (`read::unix_seconds`): Unix seconds from
/// 1970-01-01 to the last second of year 9999 (253402300799 = 9999-12-31T23:59:59Z), 400
/// `POSITIVE_NUMBER_REQUIRED` before and `NUMBER_TOO_LARGE` after, naming the field, and
/// nothing recorded. Before, a transaction's or refund's time had no upper bound and a
/// refund's none at all.
#[test]
fn every_field_of_time_is_checked_alike() {
    let svc = service();
    let calc = |order: &str| {
        let (s, c) = post(
            &svc,
            "/tax/calculations",
            LIVE_KEY,
            None,
            &calc_body("10000", "GENERAL_MERCHANDISE"),
        );
        assert_eq!(s, 200, "{c}");
        (c["id"].as_str().unwrap().to_string(), order.to_string())
    };
    let (id, order) = calc("time-1");
    for (at, kind) in [
        (-1_i64, "POSITIVE_NUMBER_REQUIRED"),
        (253_402_300_800, "NUMBER_TOO_LARGE"),
    ] {
        let body = json!({"calculation_id": id, "reference_order_id": order,
                          "transaction_processed_at": at});
        let (s, v) = post(
            &svc,
            "/tax/transactions",
            LIVE_KEY,
            Some("2026-03-01"),
            &body.to_string(),
        );
        assert_eq!((s, flat_type(&v, 400)), (400, kind.to_string()), "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.starts_with("transaction_processed_at must be"),
            "{v}"
        );
    }
    // The last second of 9999 is a time.
    let body = json!({"calculation_id": id, "reference_order_id": order,
                      "transaction_processed_at": 253_402_300_799_i64});
    let (s, tx) = post(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        Some("2026-03-01"),
        &body.to_string(),
    );
    assert_eq!(s, 200, "{tx}");
    let tx_id = live_sale(&svc, "10000", "time-2");
    for (at, kind) in [
        (-1_i64, "POSITIVE_NUMBER_REQUIRED"),
        (253_402_300_800, "NUMBER_TOO_LARGE"),
    ] {
        let body = json!({"transaction_id": tx_id, "type": "full", "refund_processed_at": at});
        let (s, v) = post(
            &svc,
            "/tax/refunds",
            LIVE_KEY,
            Some("2026-03-01"),
            &body.to_string(),
        );
        assert_eq!((s, flat_type(&v, 400)), (400, kind.to_string()), "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(message.starts_with("refund_processed_at must be"), "{v}");
    }
    // Nothing was refunded: the full refund still goes through.
    let body = json!({"transaction_id": tx_id, "type": "full"});
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        Some("2026-03-01"),
        &body.to_string(),
    );
    assert_eq!(s, 200, "{v}");
}

/// Now, in seconds: a refund is never dated before its sale (which `sale` records now).
#[cfg(feature = "postgres")]
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A refund of one cent (amounts are in the currency's minor unit) of the line `line-1`
/// of [`sale`], numbered `n`.
#[cfg(feature = "postgres")]
fn one_cent(n: usize) -> store::RefundAsk {
    let stamp = store::RefundStamp {
        id: format!("ref_tr_{n:04}"),
        processed_at: now(),
        created_at: now(),
    };
    store::RefundAsk::Partial(
        stamp,
        vec![store::PartialRefundLine {
            product: None,
            line_id: Some("line-1".into()),
            quantity: None,
            sales: Decimal::from(-1),
            tax: Decimal::ZERO,
        }],
    )
}

/// A refund on PostgreSQL awaits 6 round trips: begin (2), the sale's row with its running
/// refund total (locked), the refund's insert, the bookkeeping sent together (running
/// total, nexus total, month, day, outbox), the commit. It awaited 11, the row locked for
/// 9 of them, so that refunds of one sale, which take turns on its lock, cost many times
/// what they cost in SQLite's writer (issue 47). 8 refunding one sale at once still add up
/// exactly.
#[cfg(feature = "postgres")]
#[test]
fn a_refund_on_postgres_awaits_six_round_trips_and_refunds_at_once_add_up() {
    use levy_api::store::{PostgresStore, Scope, Store};
    if !levy_testkit::postgres::wanted() {
        eprintln!("skipped: LEVY_TEST_LEDGER=postgres is not set");
        return;
    }
    let server = levy_testkit::postgres::server().expect("a PostgreSQL server for the test");
    let url = server.database();
    let svc = levy_testkit::service::with_ledger(table(), &url);
    let tx = sale(&svc, LIVE_KEY, "10000", "o-1");
    let tx_id = tx["id"].as_str().unwrap().to_string();
    let store = PostgresStore::open(&url).unwrap();
    let scope = Scope {
        account: "shop".into(),
        live: true,
    };
    // The first prepares the statements on the connection; the second is counted.
    store.insert_refund(&scope, &tx_id, one_cent(0)).unwrap();
    let before = store.write_round_trips();
    store.insert_refund(&scope, &tx_id, one_cent(1)).unwrap();
    assert_eq!(store.write_round_trips() - before, 6);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (store, scope, tx_id) = (&store, &scope, &tx_id);
            s.spawn(move || {
                for i in 0..10 {
                    store
                        .insert_refund(scope, tx_id, one_cent(2 + t * 10 + i))
                        .unwrap();
                }
            });
        }
    });
    // 82 refunds of a cent, and the running total agrees with them: a full refund takes
    // 10000 - 82 = 9918 cents of the line's sales.
    let refunds = store.refunds(&scope, &tx_id).unwrap();
    assert_eq!(refunds.len(), 82);
    let taken: Decimal = refunds
        .iter()
        .flat_map(|r| &r.lines)
        .map(|l| l.line.amount_excluding_tax)
        .sum();
    assert_eq!(taken, Decimal::from(-82));
    let rest = store::RefundAsk::Full(store::RefundStamp {
        id: "ref_tr_rest".into(),
        processed_at: now(),
        created_at: now(),
    });
    let left = store.insert_refund(&scope, &tx_id, rest).unwrap();
    assert_eq!(
        left.lines[0].line.amount_excluding_tax,
        Decimal::from(-9918)
    );
    // Every refund counted in the nexus total: the sale refunded in full nets to zero.
    let nexus = Store::nexus(&store, "shop").unwrap();
    assert_eq!(nexus.len(), 1);
    assert_eq!(nexus[0].sales, Decimal::ZERO, "{nexus:?}");
}

/// Issue 47's measurement of refunds (run by hand, on the suite's ledger):
/// `LEVY_TEST_LEDGER=postgres cargo test -p levy-api --features postgres --test reliability
/// measure_refunds_of_one_sale -- --ignored --nocapture`. One sale refunded a cent at a
/// time, 200 times in turn, then by 8 threads at once (50 each) while another account makes
/// 50 sales: the mean refund, the refunds' throughput, and the other account's sale.
#[test]
#[ignore = "a measurement; run by hand"]
fn measure_refunds_of_one_sale() {
    use std::time::{Duration, Instant};
    let dir = levy_testkit::TempDir::new("levy-refund-cost");
    let ledger = levy_testkit::postgres::ledger(&dir);
    let store = if ledger.starts_with("postgres") {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let svc = levy_testkit::service::with_ledger(table(), &ledger);
    let tx = sale(&svc, LIVE_KEY, "10000", "o-1");
    let body = json!({"transaction_id": tx["id"], "type": "partial", "line_items": [
        {"reference_line_item_id": "line-1", "sales_amount_refunded": -1, "tax_amount_refunded": 0}]})
    .to_string();
    let refund = || {
        let (s, v) = post(&svc, "/tax/refunds", LIVE_KEY, None, &body);
        assert_eq!(s, 200, "{v}");
    };
    refund();
    let started = Instant::now();
    (0..200).for_each(|_| refund());
    let alone = started.elapsed().as_secs_f64() * 1e3 / 200.0;
    let started = Instant::now();
    let mut others: Vec<Duration> = std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| (0..50).for_each(|_| refund()));
        }
        (0..50)
            .map(|i| {
                let t = Instant::now();
                sale(&svc, OTHER_LIVE_KEY, "10000", &format!("other-{i}"));
                t.elapsed()
            })
            .collect()
    });
    let together = started.elapsed().as_secs_f64() * 1e3 / 400.0;
    others.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{store}: a refund alone {alone:.2} ms; 8 at once, {together:.2} ms of the run a refund; the other account's sale meanwhile p50 {:.1} ms, p99 {:.1} ms",
        ms(others[others.len() / 2]),
        ms(others[others.len() * 99 / 100])
    );
}
