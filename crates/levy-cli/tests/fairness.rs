//! Measurements, not checks (issue 38, findings 7 and 9), run by hand:
//!
//! ```text
//! cargo test -p levy-cli --test fairness -- --ignored --nocapture --test-threads 1
//! LEVY_TEST_LEDGER=postgres cargo test -p levy-cli --test fairness -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `LEVY_MEASURE_BIN` names another `levy` binary to measure (the release before, for
//! the figures before); `levy serve` runs with its default limits.
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

/// `levy serve` with its default limits on a fresh ledger (SQLite, or PostgreSQL under
/// `LEVY_TEST_LEDGER=postgres`), and the live key of each of two accounts.
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
    let started = Instant::now();
    let calc = client.json(
        "POST",
        "/tax/calculations",
        key,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.status, 200, "{}", calc.text);
    let tx = client.json(
        "POST",
        "/tax/transactions",
        key,
        None,
        &json!({"calculation_id": calc.json()["id"], "reference_order_id": order}),
    );
    assert_eq!(tx.status, 200, "{}", tx.text);
    started.elapsed()
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
    let store = if levy_testkit::postgres::wanted() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
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
