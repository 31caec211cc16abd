//! Measurements, not checks (issue 38, findings 7 and 9), run by hand:
//!
//! ```text
//! cargo test -p levy-cli --test fairness -- --ignored --nocapture --test-threads 1
//! LEVY_TEST_LEDGER=postgres cargo test -p levy-cli --test fairness -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `LEVY_MEASURE_BIN` names another `levy` binary to measure (the release before, for
//! the figures before); `levy serve` runs with its default limits, and with the flags of
//! `LEVY_MEASURE_SERVE_ARGS` (split on spaces: `--rate-limit 0` measures the sharing of
//! the processor alone, without the rate limit's refusals).
//!
//! - `one_account_refunding_beside_another_selling`: one account floods one sale with
//!   refunds from 24 clients (refunds of nothing where the server takes them, of one cent
//!   where it does not) until 2,400 are recorded, and goes on while another account makes
//!   30 sales; the other account's sale (calculation and transaction) before (100 sales)
//!   and during, the refunds' own time at the start and the end, the refund list's size.
//!
//! Finding 9's measurement (the bytes of a maximal calculation) is levy-api's
//! `tests/reliability.rs`, `measure_the_bytes_of_a_maximal_calculation`.

#[path = "../../levy-server/tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{calc_body, Client};
use serde_json::json;

fn levy() -> String {
    std::env::var("LEVY_MEASURE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_levy").to_string())
}

struct Running(Child, String);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The flags of `LEVY_MEASURE_SERVE_ARGS`, split on spaces.
fn serve_args() -> Vec<String> {
    std::env::var("LEVY_MEASURE_SERVE_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `levy serve` with its default limits (and `LEVY_MEASURE_SERVE_ARGS`) on a fresh ledger
/// (SQLite, or PostgreSQL under `LEVY_TEST_LEDGER=postgres`), and the live key of each of
/// two accounts.
fn serve(dir: &std::path::Path) -> (Running, String, String) {
    let keys = dir.join("keys.toml");
    let key = |account: &str| {
        let o = Command::new(levy())
            .args(["keys", "new", "--account", account, "--keys"])
            .arg(&keys)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines()
            .find(|l| l.trim_start().starts_with("live key:"))
            .unwrap_or_else(|| panic!("{text}"))
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    let (attacker, victim) = (key("attacker"), key("victim"));
    let table = dir.join("rates.levy");
    std::fs::write(&table, common::table_bytes()).unwrap();
    let ledger = levy_testkit::postgres::ledger(dir);
    let mut child = Command::new(levy())
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--log", "error"])
        .arg("--table")
        .arg(&table)
        .args(["--ledger", &ledger])
        .arg("--keys")
        .arg(&keys)
        .args(serve_args())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let line = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let base = format!(
        "http://{}",
        line.strip_prefix("listening on http://").unwrap()
    );
    (Running(child, base), attacker, victim)
}

/// A sale (calculation and transaction) of `key`: how long it took.
fn timed_sale(client: &Client, key: &str, order: &str) -> Duration {
    let (calc, tx) = timed_sale_parts(client, key, order);
    calc + tx
}

/// A sale of `key`: how long its calculation took, and its transaction.
fn timed_sale_parts(client: &Client, key: &str, order: &str) -> (Duration, Duration) {
    let started = Instant::now();
    let calc = client.json(
        "POST",
        "/tax/calculations",
        key,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.status, 200, "{}", calc.text);
    let calculated = started.elapsed();
    let tx = client.json(
        "POST",
        "/tax/transactions",
        key,
        None,
        &json!({"calculation_id": calc.json()["id"], "reference_order_id": order}),
    );
    assert_eq!(tx.status, 200, "{}", tx.text);
    (calculated, started.elapsed() - calculated)
}

/// The ledger's name, for the lines printed.
fn store_name() -> &'static str {
    if levy_testkit::postgres::wanted() {
        "PostgreSQL"
    } else {
        "SQLite"
    }
}

fn quantiles(mut v: Vec<Duration>) -> String {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)].as_secs_f64() * 1e3;
    format!(
        "p50 {:.1} ms, p99 {:.1} ms ({} sales)",
        at(0.5),
        at(0.99),
        v.len()
    )
}

#[test]
#[ignore = "a measurement; run by hand"]
fn one_account_refunding_beside_another_selling() {
    let dir = common::scratch_dir("fairness");
    let (server, attacker, victim) = serve(&dir);
    let base = server.1.clone();
    let store = store_name();
    let client = Client::new(&base);
    let before: Vec<Duration> = (0..100)
        .map(|i| timed_sale(&client, &victim, &format!("before-{i}")))
        .collect();
    // The attacker's sale, and whether refunds of nothing are taken.
    let calc = client.json(
        "POST",
        "/tax/calculations",
        &attacker,
        None,
        &calc_body(&[10_000]),
    );
    let tx = client.json(
        "POST",
        "/tax/transactions",
        &attacker,
        None,
        &json!({"calculation_id": calc.json()["id"], "reference_order_id": "flooded"}),
    );
    let tid = tx.json()["id"].as_str().unwrap().to_string();
    let refund = |sales: i64| {
        json!({"transaction_id": tid, "type": "partial", "line_items": [
            {"reference_line_item_id": "l0", "sales_amount_refunded": sales, "tax_amount_refunded": 0}]})
    };
    let zero = client.json("POST", "/tax/refunds", &attacker, None, &refund(0));
    let amount = if zero.status == 200 { 0 } else { -1 };
    let (stop, done, refused) = (AtomicBool::new(false), AtomicU64::new(1), AtomicU64::new(0));
    let (first, last): (Vec<Duration>, Vec<Duration>) = std::thread::scope(|s| {
        let floods: Vec<_> = (0..24)
            .map(|_| {
                let (stop, done, refused, base, attacker, body) =
                    (&stop, &done, &refused, &base, &attacker, refund(amount));
                s.spawn(move || {
                    let c = Client::new(base);
                    let mut took = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let a = c.json("POST", "/tax/refunds", attacker, None, &body);
                        match a.status {
                            200 => {
                                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                                took.push((n, started.elapsed()));
                            }
                            429 => {
                                refused.fetch_add(1, Ordering::Relaxed);
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            other => panic!("refund: {other} {}", a.text),
                        }
                    }
                    took
                })
            })
            .collect();
        while done.load(Ordering::Relaxed) < 2_400 {
            std::thread::sleep(Duration::from_millis(50));
        }
        // 30 sales: refunds go on meanwhile, and each one makes the next dearer where a
        // refund reads every earlier one.
        let during: Vec<Duration> = (0..30)
            .map(|i| timed_sale(&Client::new(&base), &victim, &format!("during-{i}")))
            .collect();
        stop.store(true, Ordering::Relaxed);
        let mut all: Vec<(u64, Duration)> =
            floods.into_iter().flat_map(|t| t.join().unwrap()).collect();
        all.sort();
        let first = all.iter().take(100).map(|(_, d)| *d).collect();
        let last = all.iter().rev().take(100).map(|(_, d)| *d).collect();
        println!(
            "{store}: other account's sale before: {}; during 24 clients' refunds ({} recorded by then): {}",
            quantiles(before),
            done.load(Ordering::Relaxed),
            quantiles(during)
        );
        (first, last)
    });
    let mean =
        |v: &[Duration]| v.iter().sum::<Duration>().as_secs_f64() * 1e3 / v.len().max(1) as f64;
    println!(
        "{store}: refunds of {} cents; mean refund {:.2} ms over the first 100, {:.2} ms over the last 100 ({} recorded); {} answered 429",
        -amount,
        mean(&first),
        mean(&last),
        done.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    let list = client.bare(
        "GET",
        &format!("/tax/transactions/{tid}/refunds"),
        &attacker,
        None,
    );
    println!("{store}: refund list answer {} bytes", list.text.len());
    drop(server);
}

/// A calculation of 1,000 lines (about 387 KB), as text.
fn large_calculation() -> String {
    let amounts: Vec<i64> = (0..1_000).map(|i| 1_000 + i).collect();
    calc_body(&amounts).to_string()
}

#[test]
#[ignore = "a measurement; run by hand"]
fn another_account_selling_beside_large_calculations() {
    let dir = common::scratch_dir("fairness-large");
    let (server, attacker, victim) = serve(&dir);
    let base = server.1.clone();
    let client = Client::new(&base);
    let before: Vec<Duration> = (0..100)
        .map(|i| timed_sale(&client, &victim, &format!("before-{i}")))
        .collect();
    let body = large_calculation();
    let (stop, answered, refused) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
    let during: Vec<(Duration, Duration)> = std::thread::scope(|s| {
        for _ in 0..12 {
            let (stop, answered, refused, base, attacker, body) =
                (&stop, &answered, &refused, &base, &attacker, &body);
            s.spawn(move || {
                let c = Client::new(base);
                while !stop.load(Ordering::Relaxed) {
                    let a = c.send(common::Call {
                        method: "POST",
                        path: "/tax/calculations",
                        key: Some(attacker),
                        version: None,
                        body: Some(body.as_bytes()),
                        content_type: None,
                    });
                    match a.status {
                        200 => {
                            answered.fetch_add(1, Ordering::Relaxed);
                        }
                        429 => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        other => panic!("large calculation: {other} {}", a.text),
                    }
                }
            });
        }
        // Let the large calculations fill the server first.
        std::thread::sleep(Duration::from_secs(2));
        let started = Instant::now();
        let mut during = Vec::new();
        let c = Client::new(&base);
        // 18 seconds, and at least 10 sales (100 at most).
        while (started.elapsed() < Duration::from_secs(18) || during.len() < 10)
            && during.len() < 100
        {
            during.push(timed_sale_parts(
                &c,
                &victim,
                &format!("during-{}", during.len()),
            ));
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
        during
    });
    let (calcs, txs): (Vec<Duration>, Vec<Duration>) = during.iter().copied().unzip();
    println!(
        "{}: other account's sale before: {}; during 12 clients' 1,000-line calculations ({} bytes each): {} (its calculation {}, its transaction {}); {} large calculations answered, {} answered 429",
        store_name(),
        quantiles(before),
        body.len(),
        quantiles(during.iter().map(|(c, t)| *c + *t).collect()),
        quantiles(calcs),
        quantiles(txs),
        answered.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    drop(server);
}

/// An `automatic_tax: auto` calculation of one line into Tennessee, today.
fn auto_calculation() -> serde_json::Value {
    let mut body = calc_body(&[10_000]);
    body["order_details"]["automatic_tax"] = json!("auto");
    body
}

/// `n` auto calculations of `key`: how long each took, and the tax of the last.
fn timed_auto_calculations(client: &Client, key: &str, n: usize) -> (Vec<Duration>, String) {
    let mut took = Vec::with_capacity(n);
    let mut tax = String::new();
    for _ in 0..n {
        let started = Instant::now();
        let a = client.json(
            "POST",
            "/tax/calculations",
            key,
            Some("2026-03-01"),
            &auto_calculation(),
        );
        took.push(started.elapsed());
        assert_eq!(a.status, 200, "{}", a.text);
        tax = a.json()["total_tax_amount"].to_string();
    }
    (took, tax)
}

#[test]
#[ignore = "a measurement; run by hand"]
fn a_calculation_beside_ten_thousand_registrations() {
    let dir = common::scratch_dir("fairness-registrations");
    let (server, _, key) = serve(&dir);
    let base = server.1.clone();
    let client = Client::new(&base);
    // Each registration until it is taken: 429 (the account's rate) waits a moment.
    let register = |c: &Client, body: serde_json::Value| loop {
        let a = c.json("POST", "/tax/registrations", &key, None, &body);
        if a.status != 429 {
            assert_eq!(a.status, 200, "{}", a.text);
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Registered in Tennessee from 2025-01-01 (1735689600), open-ended.
    register(
        &client,
        json!({"country": "US", "region": "TN", "active_from": 1_735_689_600}),
    );
    let (one, tax) = timed_auto_calculations(&client, &key, 200);
    let merchants: Vec<String> = (0..10)
        .map(|i| {
            let m = client.json(
                "POST",
                "/tax/merchants",
                &key,
                Some("2026-01-01"),
                &json!({"reference_merchant_id": format!("m{i}"), "name": "Shop",
                    "default_address": {"address_line_1": "1 Main St", "address_city": "NASHVILLE",
                      "address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}),
            );
            assert_eq!(m.status, 200, "{}", m.text);
            m.json()["id"].as_str().unwrap().to_string()
        })
        .collect();
    // 10,000 more, from 8 clients: half the account's own, each active for a day of
    // January 2025 and expired since, half other merchants', active.
    std::thread::scope(|s| {
        for t in 0..8 {
            let (base, merchants, register) = (&base, &merchants, &register);
            s.spawn(move || {
                let c = Client::new(base);
                for i in (t..10_000).step_by(8) {
                    let body = if i % 2 == 0 {
                        json!({"country": "US", "region": "TN", "active_from": 1_735_689_600 + i,
                            "expires_at": 1_735_689_600 + 86_400 + i})
                    } else {
                        json!({"country": "US", "region": "TN", "active_from": 1_735_689_600,
                            "merchant_id": merchants[i % merchants.len()]})
                    };
                    register(&c, body);
                }
            });
        }
    });
    let (many, same) = timed_auto_calculations(&client, &key, 200);
    assert_eq!(tax, same, "the same answer with 10,000 more registrations");
    let p50 = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1e3
    };
    println!(
        "{}: auto calculation with 1 registration: {}; with 10,001: {}; p50 ratio {:.1}",
        store_name(),
        quantiles(one.clone()),
        quantiles(many.clone()),
        p50(&many) / p50(&one)
    );
    drop(server);
}
