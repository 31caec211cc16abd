//! `POST /tax/sync` holds the central ledger's rules (issue 38, findings 1, 3 and 4): a
//! till's refunds, reversals and deletions go through the same ledger rules as the
//! interface's; every record is checked as strictly as a request; the mode is the
//! record's own, checked against the key; a record the central side cannot take is a
//! conflict and the events after it go on; a batch sent again, in any order, is
//! recognised event by event.
//!
//! The till is an SQLite ledger in a scratch directory; the central ledger is the suite's
//! (`levy_testkit::postgres::ledger_or`: PostgreSQL under `LEVY_TEST_LEDGER=postgres`,
//! memory otherwise), so every test runs on both stores.

mod common;
use common::*;
use levy_api::store::{OutboxMark, SqliteStore, Store};
use levy_api::*;
use serde_json::{json, Value};

/// A till: a service on its own SQLite file.
struct Till {
    _dir: levy_testkit::TempDir,
    path: String,
}

impl Till {
    fn new(name: &str) -> Till {
        let dir = levy_testkit::TempDir::new(name);
        let path = dir.join("till.sqlite").to_string_lossy().into_owned();
        Till { _dir: dir, path }
    }

    /// The till's interface (opened for one use: the outbox is read by a store of its
    /// own, as `levy sync` reads it).
    fn service(&self) -> Service {
        levy_testkit::service::with_ledger(table(), &self.path)
    }

    /// The unsent events of the till's live outbox, as `levy sync` sends them.
    fn events(&self) -> Vec<Value> {
        let store = SqliteStore::open(&self.path).unwrap();
        store
            .outbox(true, None, 1000)
            .unwrap()
            .into_iter()
            .map(|e| json!({"seq": e.seq, "kind": e.kind, "record": e.record}))
            .collect()
    }

    /// Marks every unsent event sent (as a sync that reached the central ledger).
    fn mark_sent(&self) {
        let store = SqliteStore::open(&self.path).unwrap();
        let marks = store
            .outbox(true, None, 1000)
            .unwrap()
            .into_iter()
            .map(|e| OutboxMark {
                seq: e.seq,
                conflict: None,
            })
            .collect();
        store.mark_outbox(marks).unwrap();
    }
}

/// Sends events to the central service with the live key: status and body.
fn send(central: &Service, events: &[Value]) -> (u16, Value) {
    post(
        central,
        "/tax/sync",
        LIVE_KEY,
        Some("2026-03-01"),
        &json!({"livemode": true, "events": events}).to_string(),
    )
}

/// The outcomes of a 200 answer, in order.
fn outcomes(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect()
}

/// A live sale of `amount` on `svc`; its id.
fn live_sale(svc: &Service, amount: &str, order: &str) -> String {
    sale(svc, LIVE_KEY, amount, order)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn full_refund(svc: &Service, tx: &str) -> (u16, Value) {
    post(
        svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &json!({"transaction_id": tx, "type": "full"}).to_string(),
    )
}

fn partial_refund(svc: &Service, tx: &str, sales: i64, tax: i64) -> (u16, Value) {
    post(
        svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &json!({"transaction_id": tx, "type": "partial", "line_items": [
            {"reference_line_item_id": "line-1", "sales_amount_refunded": sales, "tax_amount_refunded": tax}]})
        .to_string(),
    )
}

fn refunds_of(svc: &Service, tx: &str) -> Vec<Value> {
    let (s, v) = get(
        svc,
        &format!("/tax/transactions/{tx}/refunds"),
        LIVE_KEY,
        None,
    );
    assert_eq!(s, 200, "{v}");
    v["refunds"].as_array().unwrap().clone()
}

/// A change to a record, named for messages.
type Forgery = (&'static str, Box<dyn Fn(&mut Value)>);

/// A sealed record's record, as JSON.
fn unsealed(sealed: &str) -> Value {
    serde_json::from_str::<Value>(sealed).unwrap()["record"].clone()
}

/// `record` sealed as a levy ledger seals it: its JSON and the first 128 bits of its
/// BLAKE3 hash.
fn seal(record: &Value) -> String {
    let json = record.to_string();
    let sum = hex::encode(&blake3::hash(json.as_bytes()).as_bytes()[..16]);
    format!(r#"{{"blake3":"{sum}","record":{json}}}"#)
}

/// The `n`th id of `prefix` made for a forged record: the prefix and 32 hexadecimal digits,
/// as levy makes ids, so that only the forgery's fault is in question.
fn fresh_id(prefix: &str, n: usize) -> String {
    format!("{prefix}{:032x}", 0xf0_0000 + n)
}

/// An event with its record changed by `f` and sealed again (as anyone holding a key could
/// send it).
fn forged(event: &Value, seq: i64, f: impl FnOnce(&mut Value)) -> Value {
    let mut record = unsealed(event["record"].as_str().unwrap());
    f(&mut record);
    json!({"seq": seq, "kind": event["kind"], "record": seal(&record)})
}

/// Finding 1: a sale synced, refunded in full centrally, then refunded in full on the till
/// and synced again. The till's refund is a conflict (it would take back what is gone),
/// never stored; a full refund through the interface afterwards is refused, never a
/// positive refund.
#[test]
fn a_synced_refund_beyond_what_remains_is_a_conflict_never_stored() {
    let till = Till::new("sync-double-refund");
    let central = service();
    let tx = live_sale(&till.service(), "10000", "till-1");
    let (s, v) = send(&central, &till.events());
    assert_eq!(
        (s, outcomes(&v)),
        (200, vec!["recorded".to_string()]),
        "{v}"
    );
    till.mark_sent();

    let (s, v) = full_refund(&central, &tx);
    assert_eq!(s, 200, "{v}");
    let (s, v) = full_refund(&till.service(), &tx);
    assert_eq!(s, 200, "{v}");
    let (s, v) = send(&central, &till.events());
    assert_eq!(s, 200, "{v}");
    assert_eq!(outcomes(&v), ["conflict"], "{v}");
    let why = v["results"][0]["message"].as_str().unwrap();
    assert!(why.contains("remain"), "{why}");

    // One refund centrally, of -10000 and -925; nothing more can be refunded.
    let refunds = refunds_of(&central, &tx);
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(
        n(&refunds[0]["line_items"][0]["amount_excluding_tax"]),
        "-10000"
    );
    let (s, v) = full_refund(&central, &tx);
    assert_eq!(s, 400, "{v}");
    assert_eq!(old_code(&v), "refund_exceeds_transaction");
    assert_eq!(refunds_of(&central, &tx).len(), 1);
    // Live nexus: 10000 sold, 10000 refunded.
    assert_eq!(central.nexus_totals("shop").unwrap()[0].sales, 0.into());
}

/// Finding 1, partial refunds: the till refunds 60.00 after the central side refunded
/// 50.00 of the 100.00 line: a conflict; a till refund that fits is recorded.
#[test]
fn synced_partial_refunds_take_no_more_than_remains() {
    let till = Till::new("sync-partial-refund");
    let central = service();
    let tx = live_sale(&till.service(), "10000", "till-2");
    assert_eq!(send(&central, &till.events()).0, 200);
    till.mark_sent();
    assert_eq!(partial_refund(&central, &tx, -5000, -462).0, 200);
    assert_eq!(partial_refund(&till.service(), &tx, -6000, -555).0, 200);
    let (_, v) = send(&central, &till.events());
    assert_eq!(outcomes(&v), ["conflict"], "{v}");
    till.mark_sent();
    assert_eq!(partial_refund(&till.service(), &tx, -4000, -370).0, 200);
    let (_, v) = send(&central, &till.events());
    assert_eq!(outcomes(&v), ["recorded"], "{v}");
    assert_eq!(refunds_of(&central, &tx).len(), 2);
}

/// Finding 3: a batch the central ledger committed, sent again (a sync killed before it
/// marked the batch), whole and in reverse order: every event is recognised, a refund of
/// a sale deleted since included, and no conflict appears.
#[test]
fn a_committed_batch_sent_again_in_any_order_is_already_recorded() {
    let till = Till::new("sync-resend");
    let central = service();
    let svc = till.service();
    let kept = live_sale(&svc, "10000", "till-a");
    let deleted = live_sale(&svc, "20000", "till-b");
    let (s, r1) = partial_refund(&svc, &kept, -1000, -92);
    assert_eq!(s, 200, "{r1}");
    let (s, r2) = partial_refund(&svc, &deleted, -2000, -185);
    assert_eq!(s, 200, "{r2}");
    let (s, v) = post(
        &svc,
        "/tax/refund_reversals",
        LIVE_KEY,
        None,
        &json!({"refund_id": r1["id"]}).to_string(),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = call(
        &svc,
        "DELETE",
        &format!("/tax/transactions/{deleted}"),
        Some(LIVE_KEY),
        None,
        "",
    );
    assert_eq!(s, 200, "{v}");
    drop(svc);
    let events = till.events();
    assert_eq!(events.len(), 6);
    let (s, v) = send(&central, &events);
    assert_eq!(s, 200, "{v}");
    assert!(outcomes(&v).iter().all(|o| o == "recorded"), "{v}");
    let totals = central.nexus_totals("shop").unwrap();
    // 10000 + 20000 sold; 1000 refunded and given back; 20000 - 2000 deleted.
    assert_eq!(totals[0].sales, 10000.into());
    for order in [events.clone(), events.iter().rev().cloned().collect()] {
        let (s, v) = send(&central, &order);
        assert_eq!(s, 200, "{v}");
        assert!(outcomes(&v).iter().all(|o| o == "already_recorded"), "{v}");
    }
    assert_eq!(central.nexus_totals("shop").unwrap(), totals);
    assert_eq!(refunds_of(&central, &kept).len(), 1);
}

/// Finding 4: records that no request could make are conflicts, never stored, and the
/// events after them go on. Each forged record is sealed again, as anyone holding a key
/// could seal it.
#[test]
fn records_no_request_could_make_are_conflicts_and_the_batch_goes_on() {
    let till = Till::new("sync-forged");
    let central = service();
    let svc = till.service();
    let tx = live_sale(&svc, "10000", "till-f");
    assert_eq!(partial_refund(&svc, &tx, -1000, -92).0, 200);
    drop(svc);
    let events = till.events();
    let (sale, refund) = (&events[0], &events[1]);
    let long = "x".repeat(10_000);
    let bad_sales: Vec<Forgery> = vec![
        (
            "long order id",
            Box::new(move |r| r["reference_order_id"] = json!(long.clone())),
        ),
        ("currency XXX", Box::new(|r| r["currency"] = json!("XXX"))),
        (
            "quantity 0",
            Box::new(|r| r["lines"][0]["quantity"] = json!(0)),
        ),
        ("no lines", Box::new(|r| r["lines"] = json!([]))),
        (
            "tax not adding up",
            Box::new(|r| r["lines"][0]["amount_including_tax"] = json!("10000")),
        ),
        (
            "tax not the jurisdictions'",
            Box::new(|r| {
                r["lines"][0]["tax_amount"] = json!("0");
                r["lines"][0]["amount_including_tax"] = json!("10000");
            }),
        ),
        (
            "NUL in the order id",
            Box::new(|r| r["reference_order_id"] = json!("a\u{0}b")),
        ),
    ];
    for (i, (what, f)) in bad_sales.iter().enumerate() {
        // A fresh id, so that only the fault makes it a conflict.
        let event = forged(sale, 1, |r| {
            f(r);
            r["id"] = json!(fresh_id("tr_", i));
        });
        let (s, v) = send(&central, &[event]);
        assert_eq!(s, 200, "{what}: {v}");
        assert_eq!(outcomes(&v), ["conflict"], "{what}: {v}");
    }
    // None of them was stored: the real sale is the first transaction of order till-f.
    let (s, v) = send(&central, std::slice::from_ref(sale));
    assert_eq!(outcomes(&v), ["recorded"], "{s} {v}");

    let bad_refunds: Vec<Forgery> = vec![
        (
            "a positive refund",
            Box::new(|r| {
                r["lines"][0]["line"]["amount_excluding_tax"] = json!("1000");
                r["lines"][0]["line"]["tax_amount"] = json!("92");
                r["lines"][0]["line"]["amount_including_tax"] = json!("1092");
            }),
        ),
        (
            "more than the sale",
            Box::new(|r| {
                r["lines"][0]["line"]["amount_excluding_tax"] = json!("-20000");
                r["lines"][0]["line"]["amount_including_tax"] = json!("-20092");
            }),
        ),
        ("line 99", Box::new(|r| r["lines"][0]["index"] = json!(99))),
        (
            "a zero refund",
            Box::new(|r| {
                r["lines"][0]["line"]["amount_excluding_tax"] = json!("0");
                r["lines"][0]["line"]["tax_amount"] = json!("0");
                r["lines"][0]["line"]["amount_including_tax"] = json!("0");
            }),
        ),
        (
            "another line's ids",
            Box::new(|r| r["lines"][0]["line"]["line_item_id"] = json!("li_other")),
        ),
    ];
    for (i, (what, f)) in bad_refunds.iter().enumerate() {
        let event = forged(refund, 2, |r| {
            f(r);
            r["id"] = json!(fresh_id("ref_tr_", i));
        });
        // The events after a conflict go on: the real refund after each forged one.
        let (s, v) = send(&central, &[event]);
        assert_eq!(s, 200, "{what}: {v}");
        assert_eq!(outcomes(&v), ["conflict"], "{what}: {v}");
    }
    assert!(refunds_of(&central, &tx).is_empty());
    let (_, v) = send(&central, std::slice::from_ref(refund));
    assert_eq!(outcomes(&v), ["recorded"], "{v}");

    // A refund id already used on another sale: a conflict, not a 500 for the batch.
    let other = live_sale(&central, "5000", "central-1");
    let reused = forged(refund, 3, |r| {
        r["transaction_id"] = json!(other);
    });
    let after = forged(sale, 4, |r| {
        r["id"] = json!(fresh_id("tr_", 99));
        r["reference_order_id"] = json!("till-after");
    });
    let (s, v) = send(&central, &[reused, after]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(outcomes(&v), ["conflict", "recorded"], "{v}");
    assert!(refunds_of(&central, &other).is_empty());
}

/// Finding 4: the mode is the record's own, sealed in it, and checked against the key: a
/// test record sent with a live key (and `livemode: true`) is refused, as is a record that
/// does not say its mode. Two events of one `seq` are refused before anything is applied.
#[test]
fn the_mode_is_the_records_and_two_events_of_one_seq_are_refused() {
    let till = Till::new("sync-mode");
    let central = service();
    live_sale(&till.service(), "10000", "till-m");
    let events = till.events();
    let test_record = forged(&events[0], 1, |r| r["livemode"] = json!(false));
    let (s, v) = send(&central, &[test_record]);
    assert_eq!(s, 403, "{v}");
    assert_eq!(flat_type(&v, 403), "SYNC_MODE_MISMATCH");
    let no_mode = forged(&events[0], 1, |r| {
        r.as_object_mut().unwrap().remove("livemode");
    });
    let (s, v) = send(&central, &[no_mode]);
    assert_eq!(s, 400, "{v}");
    assert_eq!(flat_type(&v, 400), "INVALID_SYNC_RECORD");

    // A sale and a refund of one seq: refused whole, nothing stored.
    let svc = till.service();
    let tx = live_sale(&svc, "10000", "till-n");
    assert_eq!(partial_refund(&svc, &tx, -1000, -92).0, 200);
    drop(svc);
    let events = till.events();
    let mut twins: Vec<Value> = events[1..].to_vec();
    twins[1]["seq"] = twins[0]["seq"].clone();
    let (s, v) = send(&central, &twins);
    assert_eq!(s, 400, "{v}");
    assert_eq!(flat_type(&v, 400), "INVALID_SYNC_RECORD");
    let (s, _) = get(&central, &format!("/tax/transactions/{tx}"), LIVE_KEY, None);
    assert_eq!(s, 404);
    // Each with its own seq: both recorded.
    let (_, v) = send(&central, &events[1..]);
    assert_eq!(outcomes(&v), ["recorded", "recorded"], "{v}");
    assert_eq!(refunds_of(&central, &tx).len(), 1);
}

/// A sync batch counts one request per event against the account's rate: with a bucket
/// of 10, a batch of 5 events passes and a batch of 8 right after is refused (429), with
/// nothing of it stored.
#[test]
fn a_sync_batch_counts_its_events_against_the_rate() {
    let till = Till::new("sync-rate");
    let svc = till.service();
    for i in 0..13 {
        live_sale(&svc, "100", &format!("rate-{i}"));
    }
    drop(svc);
    let events = till.events();
    let central = service().with_limits(Limits {
        requests_per_second: 1,
        burst: 10,
        ..Limits::NONE
    });
    let (s, v) = send(&central, &events[..5]);
    assert_eq!(s, 200, "{v}");
    let (s, v) = send(&central, &events[5..]);
    assert_eq!(s, 429, "{v}");
    assert_eq!(flat_type(&v, 429), "RATE_LIMITED");
    let (s, v) = get(&central, "/tax/transactions/nothing", LIVE_KEY, None);
    assert_eq!(s, 404, "{v}");
}

/// Issue 47: ids that are not ids levy makes (`tr_../../x` was stored, and served at
/// `GET /tax/transactions/tr_../../x`). The batch is refused whole (400
/// INVALID_SYNC_RECORD) with a message naming the field and the id, and nothing of it is
/// stored, the good sale sent before the bad record included.
#[test]
fn synced_ids_follow_the_interfaces_grammar() {
    let till = Till::new("sync-ids");
    let central = service();
    let svc = till.service();
    let tx = live_sale(&svc, "10000", "till-i");
    assert_eq!(partial_refund(&svc, &tx, -1000, -92).0, 200);
    drop(svc);
    let events = till.events();
    let (sale, refund) = (&events[0], &events[1]);
    let hex = "0123456789abcdef0123456789abcdef";
    let cases: Vec<(&Value, &str, String)> = vec![
        (sale, "id", "tr_../../x".into()),
        (sale, "id", String::new()),
        (sale, "id", format!("tr_{}", &hex[1..])),
        (sale, "id", format!("tr_{hex}0")),
        (sale, "id", format!("tr_{}", hex.to_uppercase())),
        (sale, "id", format!("tr_{}/", &hex[1..])),
        (sale, "id", format!("ref_tr_{hex}")),
        (sale, "id", format!("tr_{}\u{0}", &hex[1..])),
        (sale, "calculation_id", "calc_../x".into()),
        (sale, "calculation_id", String::new()),
        // A platform calculation's id for a transaction that is not a platform's.
        (sale, "calculation_id", format!("plat_calc_{hex}")),
        (refund, "id", "ref_tr_%2e%2e%2f".into()),
        (refund, "id", format!("tr_{hex}")),
        (refund, "transaction_id", "tr_x".into()),
    ];
    for (event, field, bad) in &cases {
        let forged = forged(event, 3, |r| r[*field] = json!(bad));
        let (s, v) = send(&central, &[sale.clone(), forged]);
        assert_eq!(s, 400, "{field} {bad:?}: {v}");
        assert_eq!(flat_type(&v, 400), "INVALID_SYNC_RECORD", "{v}");
        let message = v["message"].as_str().unwrap();
        let named = message.contains(&format!("events[1].record.{field}: {field} {bad:?} "));
        assert!(named, "{field} {bad:?}: {message}");
        assert!(
            message.contains("nothing of the batch was applied"),
            "{message}"
        );
    }
    // Nothing stored: not the good sale sent first, not the bad ones.
    for path in [
        format!("/tax/transactions/{tx}"),
        "/tax/transactions/tr_../../x".into(),
    ] {
        let (s, v) = get(&central, &path, LIVE_KEY, None);
        assert_eq!(s, 404, "{path}: {v}");
    }
    let (s, v) = send(&central, &events);
    assert_eq!(
        (s, outcomes(&v)),
        (200, vec!["recorded".to_string(); 2]),
        "{v}"
    );
}

/// One offline day of a till: sales of 100.00 in 37203 (9.25% tax there), full refunds,
/// reversals of some and new full refunds of those, partial refunds, deletions; 25 events.
fn offline_day(svc: &Service, day: usize) {
    let sales: Vec<String> = (0..10)
        .map(|i| live_sale(svc, "10000", &format!("day{day}-{i}")))
        .collect();
    let refunds: Vec<Value> = sales[..5]
        .iter()
        .map(|tx| {
            let (s, r) = full_refund(svc, tx);
            assert_eq!(s, 200, "{r}");
            r
        })
        .collect();
    for r in &refunds[..3] {
        let body = json!({"refund_id": r["id"]}).to_string();
        let (s, v) = post(svc, "/tax/refund_reversals", LIVE_KEY, None, &body);
        assert_eq!(s, 200, "{v}");
    }
    for tx in &sales[..2] {
        assert_eq!(full_refund(svc, tx).0, 200);
    }
    for tx in &sales[5..7] {
        assert_eq!(partial_refund(svc, tx, -1000, -92).0, 200);
    }
    for tx in [&sales[3], &sales[5], &sales[9]] {
        let path = format!("/tax/transactions/{tx}");
        let (s, v) = call(svc, "DELETE", &path, Some(LIVE_KEY), None, "");
        assert_eq!(s, 200, "{v}");
    }
}

/// `events` sent by `n` requests at once; each request's outcomes.
fn at_once(central: &Service, n: usize, orders: &[Vec<Value>]) -> Vec<Vec<String>> {
    let barrier = std::sync::Barrier::new(n);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, events) = (&barrier, &orders[i % orders.len()]);
                scope.spawn(move || {
                    barrier.wait();
                    let (s, v) = send(central, events);
                    assert_eq!(s, 200, "{v}");
                    outcomes(&v)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

/// Issue 47: two syncs of one till at once, or a resend racing the request it repeats,
/// made false conflicts: a refund whose first request had recorded it meanwhile was
/// refused as not fitting, or as of a sale deleted since. Now the same batch sent by four
/// requests at once is recorded once, event by event (one request answers `recorded`, the
/// others `already_recorded`), with no conflict, over six days of a till; and the whole
/// outbox resent at once in other orders (each refund after its reversal, each sale after
/// its deletion, every event backwards) is `already_recorded` throughout. The central
/// nexus total is the till's.
#[test]
fn one_batch_sent_by_several_requests_at_once_is_recorded_once() {
    let till = Till::new("sync-at-once");
    let central = service();
    let mut all = Vec::new();
    for day in 0..6 {
        offline_day(&till.service(), day);
        let events = till.events();
        assert_eq!(events.len(), 25);
        let answers = at_once(&central, 4, std::slice::from_ref(&events));
        for (k, event) in events.iter().enumerate() {
            let got: Vec<&str> = answers.iter().map(|a| a[k].as_str()).collect();
            let recorded = got.iter().filter(|o| **o == "recorded").count();
            let already = got.iter().filter(|o| **o == "already_recorded").count();
            assert_eq!(
                (recorded, already),
                (1, 3),
                "day {day}, {}: {got:?}",
                event["kind"]
            );
        }
        till.mark_sent();
        all.extend(events);
    }
    let kinds = |kinds: &[&str]| -> Vec<Value> {
        let mut out = Vec::new();
        for k in kinds {
            out.extend(all.iter().filter(|e| e["kind"] == *k).cloned());
        }
        out
    };
    let orders = vec![
        all.iter().rev().cloned().collect(),
        kinds(&["reversal", "refund", "deletion", "transaction"]),
        kinds(&["deletion", "reversal", "transaction", "refund"]),
    ];
    for answers in at_once(&central, 3, &orders) {
        assert!(
            answers.iter().all(|o| o == "already_recorded"),
            "{answers:?}"
        );
    }
    let totals = till.service().nexus_totals("shop").unwrap();
    assert_eq!(central.nexus_totals("shop").unwrap(), totals);
}

/// Issue 47, finding 4: a synced till's record names its jurisdictions and authority types
/// as its sender wrote them; the liability report's CSV writes such a cell, when a
/// spreadsheet would read it as a formula, with a single quote before it (OWASP, "CSV
/// Injection").
#[test]
fn a_synced_records_text_reaches_the_report_csv_as_text_never_a_formula() {
    let till = Till::new("sync-formula");
    let central = service();
    let svc = till.service();
    live_sale(&svc, "10000", "till-formula");
    drop(svc);
    let events = till.events();
    let formula = "=HYPERLINK(\"http://x.example/\",\"click\")";
    let event = forged(&events[0], 1, |r| {
        for j in r["lines"][0]["jurisdictions"].as_array_mut().unwrap() {
            j["jurisdiction_name"] = json!(formula);
            j["authority_type"] = json!("@SUM(1)");
        }
    });
    let (s, v) = send(&central, &[event]);
    assert_eq!(
        (s, outcomes(&v)),
        (200, vec!["recorded".to_string()]),
        "{v}"
    );
    let resp = central.handle(&levy_api::Request {
        method: "GET".into(),
        path: "/tax/reports/liability".into(),
        query: "from=2000-01-01&to=2099-12-31&format=csv".into(),
        headers: vec![("Authorization".into(), format!("Bearer {LIVE_KEY}"))],
        body: Vec::new(),
        request_id: None,
    });
    assert_eq!(resp.status, 200);
    let text = String::from_utf8(resp.body).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert!(!rows.is_empty(), "{text}");
    for row in rows {
        // `country,region,jurisdiction_code,jurisdiction_name,authority_type,…`: the name
        // quoted for its commas and quotes, both cells with a quote before them.
        assert!(
            row.contains(",\"'=HYPERLINK(\"\"http://x.example/\"\",\"\"click\"\")\",'@SUM(1),"),
            "{row}"
        );
    }
}

#[test]
fn a_sale_replaced_on_the_till_is_replaced_centrally() {
    // A TaxJar order recorded on the till, then updated (a new version under its order
    // id): the till's outbox says the sale, its deletion marked replaced, and the new
    // version, in that order; the central ledger takes them so and holds the new version
    // alone under the order id; sent again, all are already recorded.
    let till = Till::new("sync-replace");
    let central = service();
    let svc = till.service();
    let order = |price: i64| {
        json!({"transaction_id": "o-r", "transaction_date": "2026-03-01", "amount": price,
            "shipping": 0, "sales_tax": 0, "from_country": "US", "from_zip": "37203",
            "from_state": "TN", "to_country": "US", "to_zip": "37203", "to_state": "TN",
            "line_items": [{"id": "1", "quantity": 1, "unit_price": price}]})
        .to_string()
    };
    let (s, v) = call(
        &svc,
        "POST",
        "/v2/transactions/orders",
        Some(LIVE_KEY),
        None,
        &order(100),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = call(
        &svc,
        "PUT",
        "/v2/transactions/orders/o-r",
        Some(LIVE_KEY),
        None,
        &order(50),
    );
    assert_eq!(s, 200, "{v}");
    let new = v["order"]["levy_transaction_id"]
        .as_str()
        .unwrap()
        .to_string();
    drop(svc);
    let events = till.events();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["transaction", "deletion", "transaction"]);
    let deletion = unsealed(events[1]["record"].as_str().unwrap());
    assert_eq!(deletion["replaced_by"], new.as_str());
    let (s, v) = send(&central, &events);
    assert_eq!(s, 200, "{v}");
    assert!(outcomes(&v).iter().all(|o| o == "recorded"), "{v}");
    // The central ledger's order o-r is the new version: $50.00 of sales.
    let (s, shown) = call(
        &central,
        "GET",
        "/v2/transactions/orders/o-r",
        Some(LIVE_KEY),
        None,
        "",
    );
    assert_eq!(s, 200, "{shown}");
    assert_eq!(shown["order"]["levy_transaction_id"], new.as_str());
    let totals = central.nexus_totals("shop").unwrap();
    assert_eq!(totals[0].sales, 5000.into());
    let (s, v) = send(&central, &events);
    assert_eq!(s, 200, "{v}");
    assert!(outcomes(&v).iter().all(|o| o == "already_recorded"), "{v}");
    assert_eq!(central.nexus_totals("shop").unwrap(), totals);
}
