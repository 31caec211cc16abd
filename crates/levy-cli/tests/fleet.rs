//! Several `levy serve` processes on one PostgreSQL ledger, as a chain runs them: the real
//! `levy` binary, a real PostgreSQL server (`levy_testkit::postgres`), real `kill -9`.
//! Skipped, with a line saying so, when no PostgreSQL server can be started outside CI;
//! under `CI=true` that is a failure.

#[path = "../../levy-server/tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{calc_body, dec, Client};
use levy_core::Decimal;
use serde_json::json;

const LEVY: &str = env!("CARGO_BIN_EXE_levy");

/// One database, one table, one keys file, for several servers.
struct Fleet {
    dir: levy_testkit::TempDir,
    table: PathBuf,
    keys: PathBuf,
    ledger: String,
    test_key: String,
    live_key: String,
    db: &'static levy_testkit::postgres::Server,
    database: String,
}

fn fleet(name: &str) -> Option<Fleet> {
    let db = levy_testkit::postgres::server()?;
    let dir = common::scratch_dir(name);
    let table = dir.join("rates.levy");
    std::fs::write(&table, common::table_bytes()).unwrap();
    let keys = dir.join("keys.toml");
    let (test_key, live_key) = levy_api::keys::create_account_keys(&keys, "chain").unwrap();
    let ledger = db.database();
    let database = ledger.rsplit('/').next().unwrap().to_string();
    Some(Fleet {
        dir,
        table,
        keys,
        ledger,
        test_key,
        live_key,
        db,
        database,
    })
}

/// A running `levy serve`, killed when dropped (a failing test leaves none behind).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Fleet {
    /// The same files and database (the scratch directory stays owned by `self`).
    fn clone_files(&self) -> Fleet {
        Fleet {
            dir: common::scratch_dir("fleet-files"),
            table: self.table.clone(),
            keys: self.keys.clone(),
            ledger: self.ledger.clone(),
            test_key: self.test_key.clone(),
            live_key: self.live_key.clone(),
            db: self.db,
            database: self.database.clone(),
        }
    }

    /// Starts one `levy serve` on the fleet's ledger; returns it and its base URL.
    fn serve(&self) -> (Running, String) {
        self.serve_with(&[])
    }

    /// As [`Fleet::serve`], with more flags.
    fn serve_with(&self, flags: &[&str]) -> (Running, String) {
        let mut child = Command::new(LEVY)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--log", "warn"])
            .args(flags)
            .arg("--table")
            .arg(&self.table)
            .arg("--ledger")
            .arg(&self.ledger)
            .arg("--keys")
            .arg(&self.keys)
            .current_dir(&self.dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let line = BufReader::new(stdout)
            .lines()
            .next()
            .expect("levy serve exited before listening")
            .unwrap();
        let addr = line
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"));
        (Running(child), format!("http://{addr}"))
    }

    /// One SQL answer from the fleet's database.
    fn sql(&self, sql: &str) -> String {
        self.db.psql(&self.database, sql).unwrap()
    }
}

/// A calculation of one 100.00 line at ZIP 37201 (9.25%: 925 tax), then a transaction of
/// it under `order`; the transaction's answer.
fn record(c: &Client, key: &str, order: &str) -> Result<(u16, serde_json::Value), String> {
    let calc = c.try_send(common::Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(key),
        version: None,
        body: Some(calc_body(&[10_000]).to_string().as_bytes()),
        content_type: None,
    })?;
    if calc.status != 200 {
        return Ok((calc.status, calc.json()));
    }
    let body = json!({"calculation_id": calc.json()["id"], "reference_order_id": order});
    let a = c.try_send(common::Call {
        method: "POST",
        path: "/tax/transactions",
        key: Some(key),
        version: None,
        body: Some(body.to_string().as_bytes()),
        content_type: None,
    })?;
    Ok((a.status, a.json()))
}

const SERVERS: usize = 3;
const CLIENTS: usize = 8;
const ORDERS: usize = 40;
/// Transactions whose refunds race.
const REFUNDED: usize = 10;

/// Three servers, eight clients racing on 40 order ids (each client sends each id, to
/// servers in turn): exactly one winner per id. Then the eight race to refund 40.00 of
/// each of ten sales, through all three servers: exactly two refunds fit in the 100.00
/// line, so exactly two win per sale. The live nexus total is then what the winners
/// make: 40 sales of 100.00 less 20 refunds of 40.00.
#[test]
fn three_servers_one_winner_per_order_id_and_exact_refund_limits() {
    let Some(fleet) = fleet("fleet-race") else {
        return;
    };
    let servers: Vec<(Running, String)> = (0..SERVERS).map(|_| fleet.serve()).collect();
    let bases: Vec<String> = servers.iter().map(|(_, b)| b.clone()).collect();

    let barrier = Arc::new(Barrier::new(CLIENTS));
    let outcomes: Vec<Vec<(String, u16, serde_json::Value)>> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (barrier, bases, key) = (Arc::clone(&barrier), &bases, &fleet.live_key);
                s.spawn(move || {
                    barrier.wait();
                    (0..ORDERS)
                        .map(|i| {
                            // Clients go through the ids in different orders and to
                            // different servers, to vary who meets whom where.
                            let order = format!("race-{}", (i + c * 7) % ORDERS);
                            let client = Client::new(&bases[(i + c) % SERVERS]);
                            let (status, body) = record(&client, key, &order).unwrap();
                            (order, status, body)
                        })
                        .collect()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut winners: HashMap<String, Vec<String>> = HashMap::new();
    let mut losers = 0;
    for (order, status, body) in outcomes.into_iter().flatten() {
        match status {
            200 => winners
                .entry(order)
                .or_default()
                .push(body["id"].as_str().unwrap().to_string()),
            409 => {
                losers += 1;
                assert_eq!(
                    body["error"]["error_code"], "duplicate_reference_order_id",
                    "{body}"
                );
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(winners.len(), ORDERS, "every order id has a winner");
    for (order, ids) in &winners {
        assert_eq!(
            ids.len(),
            1,
            "{order} recorded {} times: {ids:?}",
            ids.len()
        );
    }
    // 8 clients x 40 attempts = 320; 40 win, 280 are refused.
    assert_eq!(losers, CLIENTS * ORDERS - ORDERS);
    // Every server reads every winner.
    for base in &bases {
        let client = Client::new(base);
        for (order, ids) in &winners {
            let a = client.bare(
                "GET",
                &format!("/tax/transactions/{}", ids[0]),
                &fleet.live_key,
                None,
            );
            assert_eq!(a.status, 200, "{}", a.text);
            assert_eq!(a.json()["reference_order_id"], json!(order));
        }
    }

    // Refunds race: 40.00 of the 100.00 line (tax 9.25%: 3.70) from every client.
    let refunded: Vec<String> = (0..REFUNDED)
        .map(|i| winners[&format!("race-{i}")][0].clone())
        .collect();
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let refunds: Vec<(String, u16, serde_json::Value)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (barrier, bases, key, refunded) =
                    (Arc::clone(&barrier), &bases, &fleet.live_key, &refunded);
                s.spawn(move || {
                    barrier.wait();
                    let mut out = Vec::new();
                    for (i, tid) in refunded.iter().enumerate() {
                        let client = Client::new(&bases[(i + c) % SERVERS]);
                        let body = json!({"transaction_id": tid, "type": "partial",
                            "line_items": [{"reference_line_item_id": "l0",
                                "sales_amount_refunded": -4000, "tax_amount_refunded": -370}]});
                        let a = client.json("POST", "/tax/refunds", key, None, &body);
                        out.push((tid.clone(), a.status, a.json()));
                    }
                    out
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    let mut won: HashMap<&str, usize> = HashMap::new();
    for (tid, status, body) in &refunds {
        match status {
            200 => *won.entry(tid.as_str()).or_default() += 1,
            400 => assert_eq!(
                body["error"]["error_code"], "refund_exceeds_transaction",
                "{body}"
            ),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    for tid in &refunded {
        assert_eq!(
            won.get(tid.as_str()),
            Some(&2),
            "refunds won on {tid}: {won:?}"
        );
    }

    // The live nexus total: 40 x 10000 - 10 x 2 x 4000 = 320000 minor units, 40 sales.
    let row = fleet.sql("SELECT country, region, currency, sales::text, count FROM nexus");
    let fields: Vec<&str> = row.split('|').collect();
    assert_eq!(fields[..3], ["US", "TN", "USD"], "{row}");
    assert_eq!(
        fields[3].parse::<Decimal>().unwrap(),
        Decimal::from(320_000)
    );
    assert_eq!(fields[4], "40");
    drop(servers);
}

/// Four clients record transactions through three servers; one server is killed with
/// SIGKILL in the middle of the burst. Every acknowledged transaction is then read back,
/// unchanged, from a surviving server and from the killed one restarted, and the
/// database holds no transaction that was not either acknowledged or in flight.
#[test]
fn a_server_killed_during_a_burst_loses_nothing_acknowledged() {
    let Some(fleet) = fleet("fleet-kill") else {
        return;
    };
    let mut servers: Vec<(Running, String)> = (0..SERVERS).map(|_| fleet.serve()).collect();
    let bases: Vec<String> = servers.iter().map(|(_, b)| b.clone()).collect();
    let stop = AtomicBool::new(false);
    let (acknowledged, in_flight) = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4)
            .map(|c| {
                let (bases, key, stop) = (&bases, &fleet.test_key, &stop);
                s.spawn(move || {
                    let mut acked: Vec<(String, String)> = Vec::new();
                    let mut failed = 0usize;
                    let mut n = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        n += 1;
                        let order = format!("burst-{c}-{n}");
                        let client = Client::new(&bases[n % SERVERS]);
                        match record(&client, key, &order) {
                            Ok((200, body)) => {
                                acked.push((order, body["id"].as_str().unwrap().to_string()))
                            }
                            Ok((status, body)) => panic!("{order}: {status} {body}"),
                            // The killed server: the request may or may not have landed.
                            Err(_) => failed += 1,
                        }
                    }
                    (acked, failed)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(1500));
        let killed = &mut (servers[0].0).0;
        killed.kill().unwrap(); // SIGKILL
        killed.wait().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::Relaxed);
        let mut acked = Vec::new();
        let mut failed = 0;
        for t in threads {
            let (a, f) = t.join().unwrap();
            acked.extend(a);
            failed += f;
        }
        (acked, failed)
    });
    assert!(
        acknowledged.len() > 100,
        "only {} recorded",
        acknowledged.len()
    );
    assert!(in_flight > 0, "no request met the killed server");

    let restarted = fleet.serve();
    for base in [&bases[1], &restarted.1] {
        let client = Client::new(base);
        for (order, id) in &acknowledged {
            let a = client.bare(
                "GET",
                &format!("/tax/transactions/{id}"),
                &fleet.test_key,
                None,
            );
            assert_eq!(
                a.status, 200,
                "acknowledged {id} ({order}) lost: {}",
                a.text
            );
            assert_eq!(a.json()["reference_order_id"], json!(order));
            assert_eq!(
                dec(&a.json()["line_items"][0]["tax_amount"]),
                Decimal::from(925)
            );
        }
    }
    let stored: usize = fleet
        .sql("SELECT count(*) FROM transactions")
        .parse()
        .unwrap();
    assert!(
        stored >= acknowledged.len() && stored <= acknowledged.len() + in_flight,
        "{stored} stored, {} acknowledged, {in_flight} in flight",
        acknowledged.len()
    );
    drop((servers, restarted));
}

/// Servers started together on an empty database make it a ledger once: the schema is
/// migrated under a lock, and all of them serve.
#[test]
fn servers_started_together_migrate_once() {
    let Some(fleet) = fleet("fleet-start") else {
        return;
    };
    let started = Instant::now();
    let servers: Vec<(Running, String)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..SERVERS).map(|_| s.spawn(|| fleet.serve())).collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(fleet.sql("SELECT schema_version FROM levy_ledger"), "8");
    for (_, base) in &servers {
        let a = Client::new(base).bare("GET", "/tax/ping", &fleet.test_key, None);
        assert_eq!(a.status, 200, "{}", a.text);
    }
    drop(servers);
}

/// An SQLite ledger moved into PostgreSQL with `levy ledger copy`: a server on the copy
/// answers every transaction and refund exactly as the server on the file did, and the
/// live nexus total comes across exact. A second copy into the same database is refused.
#[test]
fn ledger_copy_moves_an_sqlite_ledger_into_postgresql() {
    let Some(fleet) = fleet("fleet-copy") else {
        return;
    };
    let sqlite = fleet.dir.join("till.sqlite");
    let on_file = Fleet {
        ledger: sqlite.to_string_lossy().into_owned(),
        ..fleet.clone_files()
    };
    let (server, base) = on_file.serve();
    let client = Client::new(&base);
    let mut ids = Vec::new();
    for order in ["copy-1", "copy-2", "copy-3"] {
        let (status, body) = record(&client, &fleet.live_key, order).unwrap();
        assert_eq!(status, 200, "{body}");
        ids.push(body["id"].as_str().unwrap().to_string());
    }
    // 40.00 of the first sale back (9.25% tax: 3.70).
    let refund = client.json(
        "POST",
        "/tax/refunds",
        &fleet.live_key,
        None,
        &json!({"transaction_id": ids[0], "type": "partial", "line_items": [
            {"reference_line_item_id": "l0", "sales_amount_refunded": -4000, "tax_amount_refunded": -370}]}),
    );
    assert_eq!(refund.status, 200, "{}", refund.text);
    let before: Vec<String> = ids
        .iter()
        .map(|id| {
            client
                .bare(
                    "GET",
                    &format!("/tax/transactions/{id}"),
                    &fleet.live_key,
                    None,
                )
                .text
        })
        .collect();
    // A calculation not yet made a transaction: packed in the SQLite file, text in
    // PostgreSQL; it becomes a transaction after the copy.
    let calc = client.json(
        "POST",
        "/tax/calculations",
        &fleet.live_key,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.status, 200, "{}", calc.text);
    let calc = calc.json();
    drop(server);

    let copy = Command::new(LEVY)
        .args(["ledger", "copy", "--from"])
        .arg(&sqlite)
        .args(["--to", &fleet.ledger])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&copy.stdout);
    assert!(
        copy.status.success(),
        "{}",
        String::from_utf8_lossy(&copy.stderr)
    );
    let transactions = report
        .lines()
        .find(|l| l.starts_with("transactions"))
        .unwrap();
    assert_eq!(
        transactions.split_whitespace().last(),
        Some("3"),
        "{report}"
    );

    let (_server, base) = fleet.serve();
    let client = Client::new(&base);
    for (id, then) in ids.iter().zip(&before) {
        let now = client.bare(
            "GET",
            &format!("/tax/transactions/{id}"),
            &fleet.live_key,
            None,
        );
        assert_eq!(now.status, 200, "{}", now.text);
        assert_eq!(&now.text, then, "{id} reads differently after the copy");
    }
    let later = client.json(
        "POST",
        "/tax/transactions",
        &fleet.live_key,
        None,
        &json!({"calculation_id": calc["id"], "reference_order_id": "copy-4"}),
    );
    assert_eq!(later.status, 200, "{}", later.text);
    // The calculation's line, as it was calculated on the file (9.25% of 100.00: 925).
    assert_eq!(later.json()["line_items"][0]["tax_amount"], json!(925));
    assert_eq!(
        later.json()["line_items"][0]["tax_amount"],
        calc["line_items"][0]["tax_amount"]
    );
    // What is left of the first sale is 60.00: one cent more is refused, as on the file.
    let over = client.json(
        "POST",
        "/tax/refunds",
        &fleet.live_key,
        None,
        &json!({"transaction_id": ids[0], "type": "partial", "line_items": [
            {"reference_line_item_id": "l0", "sales_amount_refunded": -6001, "tax_amount_refunded": 0}]}),
    );
    assert_eq!(over.status, 400, "{}", over.text);
    // 4 x 10000 - 4000 = 36000 minor units of live sales, 4 transactions (the three copied
    // and the one made after the copy).
    let row = fleet.sql("SELECT sales::text, count FROM nexus");
    let (sales, count) = row.split_once('|').unwrap();
    assert_eq!(sales.parse::<Decimal>().unwrap(), Decimal::from(36_000));
    assert_eq!(count, "4");
    // The monthly sales came across as well, all taxed: the same 36000 and 4.
    let months = fleet.sql(
        "SELECT sum(gross)::text, sum(taxable)::text, sum(count) FROM nexus_months WHERE live",
    );
    let cells: Vec<&str> = months.split('|').collect();
    assert_eq!(
        cells[0].parse::<Decimal>().unwrap(),
        Decimal::from(36_000),
        "{months}"
    );
    assert_eq!(
        cells[1].parse::<Decimal>().unwrap(),
        Decimal::from(36_000),
        "{months}"
    );
    assert_eq!(cells[2], "4", "{months}");

    let again = Command::new(LEVY)
        .args(["ledger", "copy", "--from"])
        .arg(&sqlite)
        .args(["--to", &fleet.ledger])
        .output()
        .unwrap();
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("not empty"), "{err}");
}

/// Drives `POST /tax/transactions` (each on a calculation made beforehand) from `clients`
/// threads spread over `bases` for `seconds`; transactions per second, p50 and p99 in ms.
fn drive(bases: &[String], key: &str, clients: usize, seconds: u64, label: &str) -> String {
    let stop = AtomicBool::new(false);
    let mut latencies: Vec<Duration> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let (stop, base) = (&stop, &bases[c % bases.len()]);
                s.spawn(move || {
                    let client = Client::new(base);
                    let calc = client.json(
                        "POST",
                        "/tax/calculations",
                        key,
                        None,
                        &calc_body(&[10_000]),
                    );
                    let calc_id = calc.json()["id"].as_str().unwrap().to_string();
                    let mut took = Vec::new();
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        n += 1;
                        let body = json!({"calculation_id": calc_id,
                            "reference_order_id": format!("{label}-{c}-{n}")});
                        let started = Instant::now();
                        let a = client.json("POST", "/tax/transactions", key, None, &body);
                        took.push(started.elapsed());
                        assert_eq!(a.status, 200, "{}", a.text);
                    }
                    took
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(seconds));
        stop.store(true, Ordering::Relaxed);
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    format!(
        "{label:<22} {:>8.0} transactions/s   p50 {:>6.2} ms   p99 {:>6.2} ms",
        latencies.len() as f64 / seconds as f64,
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    )
}

/// `levy serve` without the per-account request rate limit, nor the limit of requests at
/// once.
const UNLIMITED: &[&str] = &["--rate-limit", "0", "--max-concurrent-requests", "0"];

/// A measurement, not a check: `POST /tax/transactions` on an SQLite ledger, on one
/// PostgreSQL server and on three, in the same run, 16 clients, 8 s each. Run with
/// `LEVY_TEST_PG_FSYNC=on cargo test --release -p levy-cli --test fleet -- --ignored
/// --nocapture`, so that PostgreSQL flushes its commits as the SQLite ledger does.
#[test]
#[ignore = "a measurement; run by hand"]
fn measure_transaction_throughput() {
    let Some(fleet) = fleet("fleet-measure") else {
        return;
    };
    let on_file = Fleet {
        ledger: fleet
            .dir
            .join("ledger.sqlite")
            .to_string_lossy()
            .into_owned(),
        ..fleet.clone_files()
    };
    let (clients, seconds) = (16, 8);
    let mut lines = Vec::new();
    {
        let (_s, base) = on_file.serve_with(UNLIMITED);
        lines.push(drive(
            &[base],
            &fleet.test_key,
            clients,
            seconds,
            "sqlite, 1 server",
        ));
    }
    {
        let (_s, base) = fleet.serve_with(UNLIMITED);
        lines.push(drive(
            &[base],
            &fleet.test_key,
            clients,
            seconds,
            "postgres, 1 server",
        ));
    }
    {
        let servers: Vec<(Running, String)> =
            (0..SERVERS).map(|_| fleet.serve_with(UNLIMITED)).collect();
        let bases: Vec<String> = servers.iter().map(|(_, b)| b.clone()).collect();
        lines.push(drive(
            &bases,
            &fleet.test_key,
            clients,
            seconds,
            "postgres, 3 servers",
        ));
    }
    for l in lines {
        println!("{l}");
    }
}

/// One request to an in-process service: status and JSON body.
fn call(
    service: &levy_api::Service,
    method: &str,
    path: &str,
    key: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let r = service.handle(&levy_api::Request {
        method: method.into(),
        path: path.into(),
        query: String::new(),
        headers: vec![
            ("authorization".into(), format!("Bearer {key}")),
            ("content-type".into(), "application/json".into()),
        ],
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        request_id: None,
    });
    (r.status, serde_json::from_slice(&r.body).unwrap())
}

/// Transactions the till records offline; 200 partial refunds, 50 of them reversed, and
/// 50 deletions make 1,000 outbox events.
const TILL_SALES: usize = 700;

/// A till records 1,000 events offline (its own ledger, no network); `levy sync` sends them
/// to a central `levy serve` on PostgreSQL and is killed (SIGKILL) twenty times at random
/// moments, then run to the end. Every transaction, refund, reversal and deletion is in the
/// central ledger exactly once, reading as it reads on the till; the live nexus total is
/// the till's; an order id the central ledger already held for another sale is reported as
/// a conflict, not merged.
#[test]
fn a_till_syncs_1000_offline_records_exactly_once_through_twenty_kills() {
    let Some(fleet) = fleet("fleet-sync") else {
        return;
    };
    let till_ledger = fleet.dir.join("till.sqlite");
    let till = levy_testkit::service::with_ledger(common::table(), &till_ledger.to_string_lossy());
    let key = levy_testkit::keys::SHOP_LIVE;
    let mut ids = Vec::with_capacity(TILL_SALES);
    for i in 0..TILL_SALES {
        let (s, calc) = call(
            &till,
            "POST",
            "/tax/calculations",
            key,
            Some(calc_body(&[10_000])),
        );
        assert_eq!(s, 200, "{calc}");
        let body = json!({"calculation_id": calc["id"], "reference_order_id": format!("till-{i}")});
        let (s, tx) = call(&till, "POST", "/tax/transactions", key, Some(body));
        assert_eq!(s, 200, "{tx}");
        ids.push(tx["id"].as_str().unwrap().to_string());
    }
    // Refunds of 20.00 (9.25% tax: 1.85) on sales 100..300; the first 50 reversed.
    for (n, tid) in ids[100..300].iter().enumerate() {
        let body = json!({"transaction_id": tid, "type": "partial", "line_items": [
            {"reference_line_item_id": "l0", "sales_amount_refunded": -2000, "tax_amount_refunded": -185}]});
        let (s, refund) = call(&till, "POST", "/tax/refunds", key, Some(body));
        assert_eq!(s, 200, "{refund}");
        if n < 50 {
            let body = json!({"refund_id": refund["id"]});
            let (s, r) = call(&till, "POST", "/tax/refund_reversals", key, Some(body));
            assert_eq!(s, 200, "{r}");
        }
    }
    for tid in &ids[600..650] {
        let (s, r) = call(
            &till,
            "DELETE",
            &format!("/tax/transactions/{tid}"),
            key,
            None,
        );
        assert_eq!(s, 200, "{r}");
    }
    // The till's live sales: 700 x 10000 - 200 x 2000 + 50 x 2000 - 50 x 10000.
    let till_nexus = till.nexus_totals("shop").unwrap();
    assert_eq!(till_nexus.len(), 1);
    assert_eq!(till_nexus[0].sales, Decimal::from(6_200_000));
    assert_eq!(till_nexus[0].count, 650);
    // As the till answers for each sale (a deleted one is a 404, there as centrally).
    let till_reads: Vec<(u16, String)> = ids
        .iter()
        .map(|id| {
            let (s, body) = call(&till, "GET", &format!("/tax/transactions/{id}"), key, None);
            (s, body.to_string())
        })
        .collect();
    drop(till);

    let (_central, base) = fleet.serve();
    let central = Client::new(&base);
    // The central ledger already holds order till-7, another sale of the same amount.
    let (s, body) = record(&central, &fleet.live_key, "till-7").unwrap();
    assert_eq!(s, 200, "{body}");

    let sync = |batch: &str| {
        Command::new(LEVY)
            .arg("sync")
            .arg("--ledger")
            .arg(&till_ledger)
            .args(["--to", &base, "--key", &fleet.live_key, "--batch", batch])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut rng = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {rng}");
    // Uninterrupted, a sync of the 1,000 records in batches of 5 takes about 0.9 s on the
    // 2-core CI host (200 requests, a debug build), after 9 to 18 ms of start-up. Twenty
    // kills 10 to 50 ms after their start leave about 0.4 s of it done on average, so most
    // of them find the sync still running, at a random point of a batch, even on a host
    // twice as fast. (Batches of 10 and kills 20 to 220 ms in met a running sync only 8
    // times in one CI run: the sync was done before half the kills.)
    let mut killed_running = 0;
    for _ in 0..20 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut child = sync("5");
        std::thread::sleep(Duration::from_millis(10 + rng % 40));
        if child.try_wait().unwrap().is_none() {
            killed_running += 1;
        }
        child.kill().unwrap(); // SIGKILL, or nothing if it had finished
        child.wait().unwrap();
    }
    let last = sync("100").wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&last.stdout);
    let err = String::from_utf8_lossy(&last.stderr);
    println!("{killed_running} of the 20 kills met a running sync");
    assert!(
        killed_running >= 10,
        "only {killed_running} of the kills met a running sync"
    );
    // The conflict fails the command and is named.
    assert!(!last.status.success(), "{out}{err}");
    assert!(
        out.contains("conflict: transaction") && out.contains("till-7"),
        "{out}"
    );
    assert!(err.contains("1 records conflict"), "{err}");

    // Exactly once: the till's 699 sales (not its till-7) and the central one; 200 refunds,
    // 50 reversed; 50 deleted.
    assert_eq!(fleet.sql("SELECT count(*) FROM transactions"), "700");
    assert_eq!(
        fleet.sql("SELECT count(*) FROM transactions WHERE deleted_at IS NOT NULL"),
        "50"
    );
    assert_eq!(fleet.sql("SELECT count(*) FROM refunds"), "200");
    assert_eq!(
        fleet.sql(r#"SELECT count(*) FROM refunds WHERE data LIKE '%"reversed_at":null%'"#),
        "150"
    );
    for (i, (id, then)) in ids.iter().zip(&till_reads).enumerate() {
        let a = central.bare(
            "GET",
            &format!("/tax/transactions/{id}"),
            &fleet.live_key,
            None,
        );
        if i == 7 {
            assert_eq!(
                a.status, 404,
                "the conflicting sale is not merged: {}",
                a.text
            );
            continue;
        }
        assert_eq!(a.status, then.0, "{id}: {}", a.text);
        if a.status == 200 {
            assert_eq!(
                a.json().to_string(),
                then.1,
                "{id} reads differently centrally"
            );
        }
    }
    // The central sale replaces the till's till-7 (both 100.00): the totals are the till's.
    let row = fleet.sql("SELECT sales::text, count FROM nexus");
    let (sales, count) = row.split_once('|').unwrap();
    assert_eq!(sales.parse::<Decimal>().unwrap(), Decimal::from(6_200_000));
    assert_eq!(count, "650");

    // Running it again sends nothing and still reports the conflict.
    let again = sync("100").wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&again.stdout);
    assert!(out.starts_with("sent 0 records"), "{out}");
    assert!(out.contains("till-7"), "{out}");
}

/// A test key cannot send live records (nor a live key test ones): 403
/// SYNC_MODE_MISMATCH, nothing stored.
#[test]
fn sync_refuses_records_of_the_other_mode() {
    let Some(fleet) = fleet("fleet-sync-mode") else {
        return;
    };
    let (_central, base) = fleet.serve();
    let client = Client::new(&base);
    for (key, livemode) in [(&fleet.test_key, true), (&fleet.live_key, false)] {
        let a = client.json(
            "POST",
            "/tax/sync",
            key,
            Some("2026-03-01"),
            &json!({"livemode": livemode, "events": []}),
        );
        assert_eq!(a.status, 403, "{}", a.text);
        assert_eq!(a.json()["type"], "SYNC_MODE_MISMATCH", "{}", a.text);
    }
    // A record whose seal does not match: 400 INVALID_SYNC_RECORD, naming the field.
    let a = client.json(
        "POST",
        "/tax/sync",
        &fleet.test_key,
        Some("2026-03-01"),
        &json!({"livemode": false, "events": [{"seq": 1, "kind": "transaction",
            "record": r#"{"blake3":"00000000000000000000000000000000","record":{}}"#}]}),
    );
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.json()["type"], "INVALID_SYNC_RECORD", "{}", a.text);
    assert_eq!(fleet.sql("SELECT count(*) FROM transactions"), "0");
}

/// A measurement, not a check: `levy sync` of 2,000 offline transactions (release build)
/// to a central server on PostgreSQL and to one on SQLite, in one run; records per second.
/// Run as `measure_transaction_throughput` says.
#[test]
#[ignore = "a measurement; run by hand"]
fn measure_sync_throughput() {
    let Some(fleet) = fleet("fleet-measure-sync") else {
        return;
    };
    let key = levy_testkit::keys::SHOP_LIVE;
    let make_till = |name: &str| {
        let path = fleet.dir.join(name);
        let till = levy_testkit::service::with_ledger(common::table(), &path.to_string_lossy());
        let (_, calc) = call(
            &till,
            "POST",
            "/tax/calculations",
            key,
            Some(calc_body(&[10_000])),
        );
        for i in 0..2000 {
            let body =
                json!({"calculation_id": calc["id"], "reference_order_id": format!("m-{i}")});
            assert_eq!(
                call(&till, "POST", "/tax/transactions", key, Some(body)).0,
                200
            );
        }
        path
    };
    let on_file = Fleet {
        ledger: fleet
            .dir
            .join("central.sqlite")
            .to_string_lossy()
            .into_owned(),
        ..fleet.clone_files()
    };
    for (label, central) in [("postgres", &fleet), ("sqlite", &on_file)] {
        let till = make_till(&format!("till-{label}.sqlite"));
        let (_s, base) = central.serve_with(UNLIMITED);
        let started = Instant::now();
        let out = Command::new(LEVY)
            .arg("sync")
            .arg("--ledger")
            .arg(&till)
            .args(["--to", &base, "--key", &fleet.live_key, "--batch", "100"])
            .output()
            .unwrap();
        let took = started.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!(
            "sync to {label:<9} 2000 records in {took:.2} s: {:.0} records/s",
            2000.0 / took
        );
    }
}

/// Registrations go with `levy ledger copy`, and `levy registrations` and a server on the
/// PostgreSQL ledger read them: the account registered in Texas only collects nothing in
/// Nashville (the suite's table: 9.25% there, 925 on $100.00, without registrations).
#[test]
fn registrations_are_copied_into_postgresql_and_gate_its_servers() {
    let Some(fleet) = fleet("fleet-registrations") else {
        return;
    };
    let sqlite = fleet.dir.join("till.sqlite");
    let registrations = |ledger: &str, args: &[&str]| {
        let out = Command::new(LEVY)
            .arg("registrations")
            .args(args)
            .args(["--account", "chain", "--keys"])
            .arg(&fleet.keys)
            .args(["--ledger", ledger])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let sqlite_s = sqlite.to_string_lossy().into_owned();
    let added = registrations(&sqlite_s, &["add", "--country", "US", "--region", "TX"]);
    let id = added.split_whitespace().next().unwrap().to_string();
    let copy = Command::new(LEVY)
        .args(["ledger", "copy", "--from"])
        .arg(&sqlite)
        .args(["--to", &fleet.ledger])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&copy.stdout);
    assert!(
        copy.status.success(),
        "{}",
        String::from_utf8_lossy(&copy.stderr)
    );
    let copied = report
        .lines()
        .find(|l| l.starts_with("registrations"))
        .unwrap();
    assert_eq!(copied.split_whitespace().last(), Some("1"), "{report}");
    let listed = registrations(&fleet.ledger, &["list"]);
    assert!(listed.starts_with(&id), "{listed}");

    let (_server, base) = fleet.serve();
    let client = Client::new(&base);
    let calc = client.json(
        "POST",
        "/tax/calculations",
        &fleet.live_key,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.status, 200, "{}", calc.text);
    assert_eq!(calc.json()["total_tax_amount"], json!(0));
    // The test mode has no registration: 925.
    let calc = client.json(
        "POST",
        "/tax/calculations",
        &fleet.test_key,
        None,
        &calc_body(&[10_000]),
    );
    assert_eq!(calc.json()["total_tax_amount"], json!(925));
}
