//! Issue 47: a refund sent again after a commit whose answer was lost was stored twice, a
//! transaction sent again was `409 DUPLICATE_REFERENCE_ORDER_ID` (its client never learnt
//! the id), and a refund dated before its sale was booked in a period before the sale's.
//!
//! `Idempotency-Key` on every POST keeps the first answer in the write it answers; on both
//! stores (the suite's ledger is PostgreSQL under `LEVY_TEST_LEDGER=postgres`).

mod common;
use common::*;
use levy_api::store::{Scope, Write};
use levy_api::*;
use serde_json::{json, Value};

/// A raw answer: status, headers, body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn replayed(&self) -> bool {
        self.header("Idempotent-Replayed") == Some("true")
    }
}

/// A POST with `key` (and `Idempotency-Key: idem` when given), in API version 2026-03-01.
fn request(path: &str, key: &str, idem: Option<&str>, body: &str) -> Request {
    let mut headers = vec![
        ("Authorization".to_string(), format!("Bearer {key}")),
        ("X-API-Version".to_string(), "2026-03-01".to_string()),
    ];
    if let Some(k) = idem {
        headers.push(("Idempotency-Key".to_string(), k.to_string()));
    }
    Request {
        method: "POST".into(),
        path: path.into(),
        headers,
        body: body.as_bytes().to_vec(),
        ..Request::default()
    }
}

fn send(svc: &Service, path: &str, key: &str, idem: Option<&str>, body: &str) -> Answer {
    let r = svc.handle(&request(path, key, idem, body));
    Answer {
        status: r.status,
        headers: r.headers,
        body: r.body,
    }
}

/// A partial refund of $10.00 and its tax of line `line-1` of `tx`.
fn refund_body(tx: &str) -> String {
    json!({"transaction_id": tx, "type": "partial", "line_items": [
        {"reference_line_item_id": "line-1", "sales_amount_refunded": -1000, "tax_amount_refunded": -93}]})
    .to_string()
}

/// The refunds of `tx`, by id.
fn refund_ids(svc: &Service, tx: &str, key: &str) -> Vec<String> {
    let (s, v) = get(svc, &format!("/tax/transactions/{tx}/refunds"), key, None);
    assert_eq!(s, 200, "{v}");
    v["refunds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// A ledger of the suite's store (an SQLite file, or a PostgreSQL database), its folder
/// kept while it is used.
struct Ledger {
    _dir: levy_testkit::TempDir,
    url: String,
}

impl Ledger {
    fn new(name: &str) -> Ledger {
        let dir = levy_testkit::TempDir::new(name);
        let url = levy_testkit::postgres::ledger(&dir);
        Ledger { _dir: dir, url }
    }

    fn open(&self) -> Service {
        levy_testkit::service::with_ledger(table(), &self.url)
    }

    fn is_postgres(&self) -> bool {
        self.url.starts_with("postgres")
    }

    /// Runs `sql` on the ledger, outside levy.
    fn sql(&self, sql: &str) -> String {
        if self.is_postgres() {
            let db = self.url.rsplit('/').next().unwrap();
            levy_testkit::postgres::server()
                .unwrap()
                .psql(db, sql)
                .unwrap()
        } else {
            let conn = rusqlite::Connection::open(&self.url).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(10))
                .unwrap();
            conn.execute_batch(sql).unwrap();
            String::new()
        }
    }

    /// Every row of every table, as text: what a refused request must leave as it was.
    fn rows(&self) -> String {
        if self.is_postgres() {
            let tables = self.sql(
                "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
            );
            tables
                .split(' ')
                .map(|t| {
                    let rows = self.sql(&format!(
                        "SELECT coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '') FROM {t} r"
                    ));
                    format!("{t}\n{rows}\n")
                })
                .collect()
        } else {
            let conn = rusqlite::Connection::open_with_flags(
                &self.url,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            let tables: Vec<String> = conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let mut out = String::new();
            for t in tables {
                out.push_str(&format!("{t}\n"));
                let mut stmt = conn.prepare(&format!("SELECT * FROM {t}")).unwrap();
                let n = stmt.column_count();
                let mut rows: Vec<String> = stmt
                    .query_map([], |r| {
                        let cells: Vec<String> = (0..n)
                            .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                            .collect();
                        Ok(cells.join("|"))
                    })
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                rows.sort();
                out.push_str(&rows.join("\n"));
                out.push('\n');
            }
            out
        }
    }
}

/// The same refund POST twice under one key: one refund, the same answer twice (same id,
/// status and body), the second saying it was given again.
#[test]
fn a_refund_sent_twice_under_one_key_is_made_once() {
    let svc = service();
    let tx = sale(&svc, LIVE_KEY, "10000", "o-1")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body = refund_body(&tx);
    let first = send(&svc, "/tax/refunds", LIVE_KEY, Some("refund-1"), &body);
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    assert!(!first.replayed());
    let again = send(&svc, "/tax/refunds", LIVE_KEY, Some("refund-1"), &body);
    assert_eq!(again.status, 200);
    assert!(again.replayed(), "{:?}", again.headers);
    assert_eq!(again.body, first.body);
    assert_eq!(
        again.header("Content-Type"),
        Some("application/json"),
        "{:?}",
        again.headers
    );
    assert_eq!(
        refund_ids(&svc, &tx, LIVE_KEY),
        [first.json()["id"].as_str().unwrap()]
    );
    // Without a key, the same body is another refund, as before.
    let other = send(&svc, "/tax/refunds", LIVE_KEY, None, &body);
    assert_eq!(other.status, 200);
    assert_ne!(other.json()["id"], first.json()["id"]);
    assert_eq!(refund_ids(&svc, &tx, LIVE_KEY).len(), 2);
}

/// The first request committed and its answer never reached the client (the process
/// stopped with it): the same request sent again, to the service opened again on the
/// ledger, answers the refund made, and makes none. Keys outlive the process.
#[test]
fn a_lost_answer_is_found_when_the_request_is_sent_again_after_a_restart() {
    let ledger = Ledger::new("levy-idem-lost");
    let (tx, body) = {
        let svc = ledger.open();
        let tx = sale(&svc, LIVE_KEY, "10000", "o-lost")["id"]
            .as_str()
            .unwrap()
            .to_string();
        let body = refund_body(&tx);
        // Committed; the answer is dropped with the service, as a lost reply would be.
        let lost = send(&svc, "/tax/refunds", LIVE_KEY, Some("lost-1"), &body);
        assert_eq!(lost.status, 200);
        (tx, body)
    };
    let svc = ledger.open();
    let again = send(&svc, "/tax/refunds", LIVE_KEY, Some("lost-1"), &body);
    assert_eq!(
        again.status,
        200,
        "{}",
        String::from_utf8_lossy(&again.body)
    );
    assert!(again.replayed());
    let ids = refund_ids(&svc, &tx, LIVE_KEY);
    assert_eq!(ids, [again.json()["id"].as_str().unwrap()]);
    // A transaction's key too.
    let (s, calc) = post(
        &svc,
        "/tax/calculations",
        LIVE_KEY,
        None,
        &calc_body("5000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{calc}");
    let tx_body =
        json!({"calculation_id": calc["id"], "reference_order_id": "o-lost-2"}).to_string();
    let first = send(&svc, "/tax/transactions", LIVE_KEY, Some("tx-1"), &tx_body);
    drop(svc);
    let svc = ledger.open();
    let again = send(&svc, "/tax/transactions", LIVE_KEY, Some("tx-1"), &tx_body);
    assert!(again.replayed());
    assert_eq!((again.status, &again.body), (first.status, &first.body));
}

/// The same key with another body, or on another path, is `409 IDEMPOTENCY_KEY_REUSED`,
/// and nothing stored changes; the first request's answer is still given for it.
#[test]
fn the_same_key_with_another_request_is_refused_and_changes_nothing() {
    let ledger = Ledger::new("levy-idem-reused");
    let svc = ledger.open();
    let tx = sale(&svc, LIVE_KEY, "10000", "o-2")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let first = send(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        Some("k-2"),
        &refund_body(&tx),
    );
    assert_eq!(first.status, 200);
    let before = ledger.rows();
    let full = json!({"transaction_id": tx, "type": "full"}).to_string();
    let other = send(&svc, "/tax/refunds", LIVE_KEY, Some("k-2"), &full);
    assert_eq!(other.status, 409);
    let v = other.json();
    assert_eq!(flat_type(&v, 409), "IDEMPOTENCY_KEY_REUSED");
    assert!(v["message"].as_str().unwrap().contains("\"k-2\""), "{v}");
    let elsewhere = send(
        &svc,
        "/tax/refund_reversals",
        LIVE_KEY,
        Some("k-2"),
        &json!({"refund_id": first.json()["id"]}).to_string(),
    );
    assert_eq!(flat_type(&elsewhere.json(), 409), "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(ledger.rows(), before);
    let again = send(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        Some("k-2"),
        &refund_body(&tx),
    );
    assert_eq!((again.status, &again.body), (200, &first.body));
}

/// A key is the account's and the mode's: the same key in the other mode, or of another
/// account, answers its own request.
#[test]
fn a_key_of_one_account_and_mode_does_not_answer_another() {
    let svc = service();
    let body = |reference: &str| {
        json!({"email": "a@example.com", "reference_customer_id": reference}).to_string()
    };
    let live = send(
        &svc,
        "/tax/customers",
        LIVE_KEY,
        Some("k-3"),
        &body("c-live"),
    );
    let test = send(
        &svc,
        "/tax/customers",
        TEST_KEY,
        Some("k-3"),
        &body("c-test"),
    );
    let other = send(
        &svc,
        "/tax/customers",
        OTHER_LIVE_KEY,
        Some("k-3"),
        &body("c-other"),
    );
    for a in [&live, &test, &other] {
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
        assert!(!a.replayed());
    }
    assert_eq!(live.json()["testmode"], false);
    assert_eq!(test.json()["testmode"], true);
    let ids: std::collections::BTreeSet<String> = [&live, &test, &other]
        .iter()
        .map(|a| a.json()["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3);
    // Each mode gets its own answer again.
    let again = send(
        &svc,
        "/tax/customers",
        TEST_KEY,
        Some("k-3"),
        &body("c-test"),
    );
    assert_eq!((again.replayed(), &again.body), (true, &test.body));
}

/// An answer kept past its expiry is forgotten: the same request is answered anew (a new
/// refund), and that answer is the one kept from then on.
#[test]
fn expired_keys_are_forgotten() {
    let ledger = Ledger::new("levy-idem-expired");
    let svc = ledger.open();
    let tx = sale(&svc, LIVE_KEY, "10000", "o-4")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body = refund_body(&tx);
    let first = send(&svc, "/tax/refunds", LIVE_KEY, Some("k-4"), &body);
    assert_eq!(first.status, 200);
    // 24 hours later, as far as the ledger knows.
    ledger.sql("UPDATE idempotency_keys SET expires_at = expires_at - 86400");
    let later = send(&svc, "/tax/refunds", LIVE_KEY, Some("k-4"), &body);
    assert_eq!(
        later.status,
        200,
        "{}",
        String::from_utf8_lossy(&later.body)
    );
    assert!(!later.replayed());
    assert_ne!(later.json()["id"], first.json()["id"]);
    let again = send(&svc, "/tax/refunds", LIVE_KEY, Some("k-4"), &body);
    assert_eq!((again.replayed(), &again.body), (true, &later.body));
    assert_eq!(refund_ids(&svc, &tx, LIVE_KEY).len(), 2);
}

/// A transaction sent again with the same order id and calculation (and content)
/// answers the recorded transaction: the same id and body, nothing stored twice. Another
/// calculation, or other metadata, under the order id stays a 409.
#[test]
fn a_transaction_sent_again_answers_the_recorded_sale() {
    let ledger = Ledger::new("levy-idem-order");
    let svc = ledger.open();
    let calc = |amount: &str| {
        let (s, v) = post(
            &svc,
            "/tax/calculations",
            LIVE_KEY,
            None,
            &calc_body(amount, "GENERAL_MERCHANDISE"),
        );
        assert_eq!(s, 200, "{v}");
        v["id"].as_str().unwrap().to_string()
    };
    let (c1, c2) = (calc("10000"), calc("20000"));
    let body = |c: &str, meta: Value| {
        json!({"calculation_id": c, "reference_order_id": "o-5",
               "transaction_processed_at": 1_772_323_200, "metadata": meta})
        .to_string()
    };
    let first = send(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        None,
        &body(&c1, json!({"till": "3"})),
    );
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let again = send(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        None,
        &body(&c1, json!({"till": "3"})),
    );
    assert_eq!((again.status, &again.body), (200, &first.body));
    // Sent again under a key, the recorded sale's answer is kept under it: the key is then
    // this request's.
    let tx_body = body(&c1, json!({"till": "3"}));
    let keyed = send(&svc, "/tax/transactions", LIVE_KEY, Some("k-5"), &tx_body);
    assert_eq!((keyed.status, &keyed.body), (200, &first.body));
    let customer = r#"{"email": "a@example.com"}"#;
    let reused = send(&svc, "/tax/customers", LIVE_KEY, Some("k-5"), customer);
    assert_eq!(flat_type(&reused.json(), 409), "IDEMPOTENCY_KEY_REUSED");
    let rows = ledger.rows();
    for refused in [
        body(&c2, json!({"till": "3"})),
        body(&c1, json!({"till": "4"})),
        json!({"calculation_id": c1, "reference_order_id": "o-5",
               "transaction_processed_at": 1_772_323_201, "metadata": {"till": "3"}})
        .to_string(),
    ] {
        let a = send(&svc, "/tax/transactions", LIVE_KEY, None, &refused);
        assert_eq!(a.status, 409, "{refused}");
        assert_eq!(flat_type(&a.json(), 409), "DUPLICATE_REFERENCE_ORDER_ID");
    }
    assert_eq!(ledger.rows(), rows);
    // The calculation expired since: the retry still answers the recorded sale.
    ledger.sql("UPDATE calculations SET expires_at = 0");
    let late = send(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        None,
        &body(&c1, json!({"till": "3"})),
    );
    assert_eq!((late.status, &late.body), (200, &first.body));
    // A deleted sale is not answered for: its order id stays taken.
    let id = first.json()["id"].as_str().unwrap().to_string();
    let r = svc.handle(&Request {
        method: "DELETE".into(),
        path: format!("/tax/transactions/{id}"),
        headers: vec![("Authorization".into(), format!("Bearer {LIVE_KEY}"))],
        ..Request::default()
    });
    assert_eq!(r.status, 200);
    let c3 = calc("10000");
    let gone = send(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        None,
        &body(&c3, json!({"till": "3"})),
    );
    assert_eq!(gone.status, 409);
}

/// A refund dated before its sale is `400 REFUND_BEFORE_SALE`, naming the field, and
/// nothing stored changes; one dated at the sale's second is a refund.
#[test]
fn a_refund_dated_before_its_sale_is_refused() {
    let ledger = Ledger::new("levy-idem-before");
    let svc = ledger.open();
    let (s, calc) = post(
        &svc,
        "/tax/calculations",
        LIVE_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{calc}");
    // 1772323200 is 2026-03-01T00:00:00Z.
    let sold = send(
        &svc,
        "/tax/transactions",
        LIVE_KEY,
        None,
        &json!({"calculation_id": calc["id"], "reference_order_id": "o-6",
                "transaction_processed_at": 1_772_323_200})
        .to_string(),
    );
    assert_eq!(sold.status, 200);
    let tx = sold.json()["id"].as_str().unwrap().to_string();
    let before = ledger.rows();
    for (kind, key) in [("full", "k-6a"), ("partial", "k-6b")] {
        let mut body =
            json!({"transaction_id": tx, "type": kind, "refund_processed_at": 1_772_323_199});
        if kind == "partial" {
            body["line_items"] = json!([{"reference_line_item_id": "line-1",
                "sales_amount_refunded": -1000, "tax_amount_refunded": -93}]);
        }
        let a = send(&svc, "/tax/refunds", LIVE_KEY, Some(key), &body.to_string());
        assert_eq!(a.status, 400);
        let v = a.json();
        assert_eq!(flat_type(&v, 400), "REFUND_BEFORE_SALE");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains("1772323199") && message.contains("1772323200"),
            "{message}"
        );
    }
    // The older error format names the field.
    let (s, v) = post(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        None,
        &json!({"transaction_id": tx, "type": "full", "refund_processed_at": 1_772_323_199})
            .to_string(),
    );
    assert_eq!((s, old_code(&v).as_str()), (400, "refund_before_sale"));
    assert_eq!(v["error"]["error_meta"]["field"], "refund_processed_at");
    assert_eq!(
        ledger.rows(),
        before,
        "a refused refund stores nothing, its key included"
    );
    let at_sale = send(
        &svc,
        "/tax/refunds",
        LIVE_KEY,
        Some("k-6a"),
        &json!({"transaction_id": tx, "type": "full", "refund_processed_at": 1_772_323_200})
            .to_string(),
    );
    assert_eq!(
        at_sale.status,
        200,
        "{}",
        String::from_utf8_lossy(&at_sale.body)
    );
}

/// A key that is not 1 to 255 visible ASCII characters, or sent twice, is `400
/// INVALID_HEADER` naming `Idempotency-Key`, and nothing is done.
#[test]
fn a_bad_key_is_a_clear_400() {
    let ledger = Ledger::new("levy-idem-bad");
    let svc = ledger.open();
    let body = json!({"email": "a@example.com"}).to_string();
    let before = ledger.rows();
    let long = "k".repeat(256);
    for bad in ["", "has space", "caf\u{e9}", long.as_str()] {
        let a = send(&svc, "/tax/customers", LIVE_KEY, Some(bad), &body);
        assert_eq!(a.status, 400, "{bad:?}");
        let v = a.json();
        assert_eq!(flat_type(&v, 400), "INVALID_HEADER");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .starts_with("Idempotency-Key "),
            "{v}"
        );
    }
    let mut twice = request("/tax/customers", LIVE_KEY, Some("k-7"), &body);
    twice.headers.push(("idempotency-key".into(), "k-8".into()));
    assert_eq!(svc.handle(&twice).status, 400);
    assert_eq!(ledger.rows(), before);
    // 255 characters is a key.
    let a = send(
        &svc,
        "/tax/customers",
        LIVE_KEY,
        Some(&"k".repeat(255)),
        &body,
    );
    assert_eq!(a.status, 200);
}

/// A request whose key is held by a request not yet answered (a calculation waiting for
/// its commit) is `409 IDEMPOTENCY_KEY_IN_USE` with `Retry-After: 1`; once that one is
/// answered, the key answers with its answer.
#[test]
fn a_key_in_use_is_refused_until_its_request_is_answered() {
    let svc = service();
    let body = calc_body_v2("10000", "GENERAL_MERCHANDISE");
    let waiting = svc.answer(&request("/tax/calculations", LIVE_KEY, Some("k-9"), &body));
    let busy = send(&svc, "/tax/calculations", LIVE_KEY, Some("k-9"), &body);
    assert_eq!(busy.status, 409);
    assert_eq!(flat_type(&busy.json(), 409), "IDEMPOTENCY_KEY_IN_USE");
    assert_eq!(busy.header("Retry-After"), Some("1"));
    let first = waiting.wait();
    assert_eq!(first.status, 200);
    let again = send(&svc, "/tax/calculations", LIVE_KEY, Some("k-9"), &body);
    assert!(again.replayed());
    assert_eq!(again.body, first.body);
    // The calculation's own headers come again with it.
    for h in [
        "Levy-Coverage",
        "Levy-Taxability",
        "Levy-Place",
        "Levy-Sourcing",
    ] {
        let want = first
            .headers
            .iter()
            .find(|(k, _)| k == h)
            .map(|(_, v)| v.as_str());
        assert!(want.is_some(), "{h}");
        assert_eq!(again.header(h), want, "{h}");
    }
}

/// Between processes on one ledger the ledger decides: an answer kept under a key is
/// kept once; a second write keeping the same key makes nothing.
#[test]
fn the_ledger_keeps_one_answer_per_key() {
    let ledger = Ledger::new("levy-idem-ledger");
    let store = levy_api::store::open(&ledger.url).unwrap();
    let scope = Scope {
        account: "shop".into(),
        live: true,
    };
    let customer = |id: &str| levy_api::store::CustomerRecord {
        id: id.into(),
        reference_customer_id: None,
        name: None,
        email: "a@example.com".into(),
        is_tax_exempt: false,
        kind: None,
        tax_ids: Vec::new(),
        created_at: 1_772_323_200,
    };
    // Now: the ledger purges answers that have expired (a PostgreSQL ledger at once when
    // opened), so the answers are kept from now.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let keep = |body: &str| {
        let body = body.to_string();
        Some(levy_api::store::Keep {
            key: "k-10".into(),
            request: "r".into(),
            at,
            render: Box::new(move |_| {
                Ok(levy_api::store::Answered {
                    status: 200,
                    headers: Vec::new(),
                    body,
                })
            }),
        })
    };
    let (_, kept) = store
        .make(
            &scope,
            Write::Customer(customer("cus_1")),
            keep("{\"id\":\"cus_1\"}"),
        )
        .unwrap();
    assert_eq!(kept.unwrap().body, "{\"id\":\"cus_1\"}");
    let taken = store
        .make(
            &scope,
            Write::Customer(customer("cus_2")),
            keep("{\"id\":\"cus_2\"}"),
        )
        .unwrap_err();
    assert!(
        matches!(&taken, levy_api::store::StoreError::Duplicate { what: levy_api::store::RecordKind::IdempotencyKey, value } if value == "k-10"),
        "{taken:?}"
    );
    assert!(store.customer(&scope, "cus_2", false).unwrap().is_none());
    assert!(store.customer(&scope, "cus_1", false).unwrap().is_some());
    // Kept from its time for 24 hours (KEEP_SECONDS): found before, forgotten at its
    // expiry.
    assert_eq!(levy_api::store::KEEP_SECONDS, 86_400);
    assert!(store.kept(&scope, "k-10", at + 86_399).unwrap().is_some());
    assert!(store.kept(&scope, "k-10", at + 86_400).unwrap().is_none());
    assert_eq!(store.kept_count(&scope, at).unwrap().count, 1);
    assert_eq!(store.kept_count(&scope, at + 86_400).unwrap().count, 0);
}

/// Each account and mode keeps a bounded number of answers: past it, a request with a
/// new key is `429 IDEMPOTENCY_QUOTA_EXCEEDED`; one without a key, or one answered
/// before, is answered.
#[test]
fn kept_answers_are_bounded_per_account_and_mode() {
    let svc = service().with_key_limits(KeyLimits {
        kept_answers: 2,
        kept_answer_bytes: 0,
    });
    let body = |n: u32| json!({"email": format!("c{n}@example.com")}).to_string();
    for n in 0..2 {
        let a = send(
            &svc,
            "/tax/customers",
            LIVE_KEY,
            Some(&format!("q-{n}")),
            &body(n),
        );
        assert_eq!(a.status, 200);
    }
    let over = send(&svc, "/tax/customers", LIVE_KEY, Some("q-2"), &body(2));
    assert_eq!(over.status, 429);
    assert_eq!(flat_type(&over.json(), 429), "IDEMPOTENCY_QUOTA_EXCEEDED");
    assert_eq!(over.header("Retry-After"), Some("60"));
    assert_eq!(
        send(&svc, "/tax/customers", LIVE_KEY, None, &body(3)).status,
        200
    );
    assert!(send(&svc, "/tax/customers", LIVE_KEY, Some("q-0"), &body(0)).replayed());
    // The other mode has its own bound.
    assert_eq!(
        send(&svc, "/tax/customers", TEST_KEY, Some("q-2"), &body(2)).status,
        200
    );
}

/// Every POST of the interface keeps its answer under a key: sent again, each answers
/// the same body, saying it was given again, and makes nothing more.
#[test]
fn every_post_honours_the_key() {
    let svc = service();
    let v = "2026-03-01";
    let once = |path: &str, key: &str, body: &str| -> Value {
        let first = send(&svc, path, LIVE_KEY, Some(key), body);
        assert_eq!(
            first.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&first.body)
        );
        assert!(!first.replayed(), "{path}");
        let again = send(&svc, path, LIVE_KEY, Some(key), body);
        assert!(again.replayed(), "{path}");
        assert_eq!(again.body, first.body, "{path}");
        first.json()
    };
    once(
        "/tax/customers",
        "p-1",
        &json!({"email": "a@example.com"}).to_string(),
    );
    once(
        "/tax/products",
        "p-2",
        &json!({"reference_product_id": "sku-1", "reference_product_name": "Shirt",
                "product_category": "GENERAL_MERCHANDISE"})
        .to_string(),
    );
    let calc = once(
        "/tax/calculations",
        "p-3",
        &calc_body_v2("10000", "GENERAL_MERCHANDISE"),
    );
    let tx = once(
        "/tax/transactions",
        "p-4",
        &json!({"calculation_id": calc["id"], "reference_order_id": "o-p"}).to_string(),
    );
    let tx_id = tx["id"].as_str().unwrap();
    let refund = once(
        "/tax/refunds",
        "p-5",
        &json!({"transaction_id": tx_id, "type": "full"}).to_string(),
    );
    once(
        "/tax/refund_reversals",
        "p-6",
        &json!({"refund_id": refund["id"]}).to_string(),
    );
    let merchant = once(
        "/tax/merchants",
        "p-7",
        &json!({"reference_merchant_id": "m-1", "name": "Shop",
                "default_address": {"address_province": "TN", "address_postal_code": "37203",
                                    "address_country": "US"}})
        .to_string(),
    );
    let m_id = merchant["id"].as_str().unwrap();
    once(
        &format!("/tax/merchants/{m_id}"),
        "p-8",
        &json!({"name": "Shop 2"}).to_string(),
    );
    let pcalc = once(
        "/tax/platform/calculations",
        "p-9",
        &json!({"customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                         "address_country": "US"}},
                "merchant": {"merchant_id": "m-1"}, "roles": ["marketplace_provider"],
                "order_details": {"customer_currency_code": "USD",
                    "line_items": [{"amount": 1000, "quantity": 1,
                                    "product_category": "GENERAL_MERCHANDISE"}]}})
        .to_string(),
    );
    once(
        "/tax/platform/transactions",
        "p-10",
        &json!({"platform_calculation_id": pcalc["id"], "reference_order_id": "o-pp"}).to_string(),
    );
    let reg = once(
        "/tax/registrations",
        "p-11",
        &json!({"country": "US", "region": "TN"}).to_string(),
    );
    // 4102444800 is 2100-01-01T00:00:00Z.
    once(
        &format!("/tax/registrations/{}/expire", reg["id"].as_str().unwrap()),
        "p-12",
        &json!({"expires_at": 4_102_444_800_i64}).to_string(),
    );
    once(
        "/tax/sync",
        "p-13",
        &json!({"livemode": true, "events": []}).to_string(),
    );
    // Nothing was made twice: one refund of the sale, one registration, one merchant.
    assert_eq!(refund_ids(&svc, tx_id, LIVE_KEY).len(), 1);
    let (_, regs) = get(&svc, "/tax/registrations", LIVE_KEY, Some(v));
    assert_eq!(regs["registrations"].as_array().unwrap().len(), 1, "{regs}");
    let (_, merchants) = get(&svc, "/tax/merchants?status=all", LIVE_KEY, Some(v));
    assert_eq!(
        merchants["merchants"].as_array().unwrap().len(),
        1,
        "{merchants}"
    );
}
