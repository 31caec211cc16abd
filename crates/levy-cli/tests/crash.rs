//! Process-level tests of `levy serve` (custom harness; `cargo test -p levy-cli --test crash`),
//! on an SQLite ledger, or on PostgreSQL with `LEVY_TEST_LEDGER=postgres`.
//!
//! The tests start the `levy` binary as a child process, `levy serve ARGS…`, and wait for
//! its `listening on http://ADDR`, so they exercise the real command, real signals and a
//! real SIGKILL. The table, the HTTP client and the scratch folders are levy-server's test
//! helpers (`crates/levy-server/tests/common`).
//!
//! * `crash`: a client records transactions while the child is killed with SIGKILL at
//!   random moments, 50 times; after each restart every transaction whose creation was
//!   acknowledged (200) is there, with the same id.
//! * `sighup_reload`: while clients send calculations without pause, the table file is
//!   replaced and SIGHUP sent; no request fails, and answers switch from the old rate to
//!   the new one.
//! * `request_ids_in_logs`: the log line of every request carries the request id that
//!   the response's `x-request-id` header (and an older-format error body) shows.
//! * `keys_reload`: an account removed from the keys file (replaced by rename, as an
//!   editor or a deploy does) is refused after SIGHUP; a key added by `levy keys new`
//!   while the server runs works within seconds, without a signal; an account made again
//!   under a removed account's name starts empty.
//! * `sigterm_graceful`: SIGTERM (and SIGINT, as ctrl-c sends) while a request is in
//!   flight; the request is answered and the process exits with success.

#[path = "../../levy-server/tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{calc_body, dec, Client};
use levy_core::Decimal;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // libtest-style filtering: `cargo test --test crash -- NAME` runs only matching tests.
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    if args.iter().any(|a| a == "--list") {
        for name in [
            "crash",
            "damaged_table_at_start",
            "sighup_reload",
            "sigterm_graceful",
            "request_ids_in_logs",
            "keys_reload",
        ] {
            println!("{name}: test");
        }
        return;
    }
    let tests: [(&str, fn()); 6] = [
        ("crash", crash),
        ("damaged_table_at_start", damaged_table_at_start),
        ("sighup_reload", sighup_reload),
        ("sigterm_graceful", sigterm_graceful),
        ("request_ids_in_logs", request_ids_in_logs),
        ("keys_reload", keys_reload),
    ];
    let mut ran = 0;
    for (name, f) in tests {
        if !filters.is_empty() && !filters.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        let started = Instant::now();
        println!("test {name} ...");
        f();
        println!(
            "test {name} ... ok ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        ran += 1;
    }
    println!("test result: ok. {ran} passed");
}

/// The `levy` binary of this package.
const LEVY: &str = env!("CARGO_BIN_EXE_levy");

/// Files of one child server: table, keys, ledger.
struct Setup {
    dir: levy_testkit::TempDir,
    table: PathBuf,
    keys: PathBuf,
    /// An SQLite file, or a PostgreSQL database under `LEVY_TEST_LEDGER=postgres`.
    ledger: String,
    test_key: String,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch_dir(name);
    let table = dir.join("rates.levy");
    std::fs::write(&table, common::table_bytes()).unwrap();
    let keys = dir.join("keys.toml");
    let (test_key, _live) = levy_api::keys::create_account_keys(&keys, "shop").unwrap();
    let ledger = levy_testkit::postgres::ledger(dir.path());
    Setup {
        dir,
        table,
        keys,
        ledger,
        test_key,
    }
}

/// Starts the child server and waits for its address.
fn spawn(setup: &Setup) -> (Child, String) {
    spawn_with(setup, "warn", Stdio::inherit())
}

/// Starts the child server with a log filter and a stderr destination.
fn spawn_with(setup: &Setup, log: &str, stderr: Stdio) -> (Child, String) {
    let mut child = Command::new(LEVY)
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--log", log])
        .arg("--table")
        .arg(&setup.table)
        .arg("--ledger")
        .arg(&setup.ledger)
        .arg("--keys")
        .arg(&setup.keys)
        .current_dir(&setup.dir)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .next()
        .expect("child exited before listening")
        .unwrap();
    let addr = line
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"));
    (child, addr.to_string())
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} failed");
}

/// A tiny xorshift generator, seeded from the clock; the seed is printed for replay.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn record(client: &Client, key: &str, order: &str) -> Result<(u16, serde_json::Value), String> {
    let calc_text = calc_body(&[10_000]).to_string();
    let calc = client.try_send(common::Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(key),
        version: None,
        body: Some(calc_text.as_bytes()),
        content_type: None,
    })?;
    if calc.status != 200 {
        return Ok((calc.status, calc.json()));
    }
    let calc_id = calc.json()["id"].as_str().unwrap().to_string();
    let tr =
        serde_json::json!({"calculation_id": calc_id, "reference_order_id": order}).to_string();
    let answer = client.try_send(common::Call {
        method: "POST",
        path: "/tax/transactions",
        key: Some(key),
        version: None,
        body: Some(tr.as_bytes()),
        content_type: None,
    })?;
    Ok((answer.status, answer.json()))
}

fn crash() {
    let setup = setup("crash");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("  seed {seed}");
    let mut rng = Rng(seed);
    // order id -> transaction id, for every creation answered 200.
    let mut acknowledged: Vec<(String, String)> = Vec::new();
    let mut unacknowledged = 0u32;
    let mut n = 0u64;
    let started = Instant::now();
    for round in 0..50 {
        let (mut child, addr) = spawn(&setup);
        let client = Client::new(&format!("http://{addr}"));

        // Every acknowledged transaction so far is there, unchanged.
        verify_all(
            &client,
            &setup.test_key,
            &acknowledged,
            &format!("round {round}"),
        );

        // A client thread records transactions until the connection breaks; the kill
        // comes after a random 0..150 ms.
        let stop_after = Duration::from_millis(rng.next() % 150);
        let key = setup.test_key.clone();
        let first = n;
        let writer = std::thread::spawn(move || {
            let mut acked = Vec::new();
            let mut failed = 0u32;
            let mut n = first;
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                n += 1;
                let order = format!("order-{n}");
                match record(&client, &key, &order) {
                    Ok((200, body)) => {
                        acked.push((order, body["id"].as_str().unwrap().to_string()))
                    }
                    Ok((status, body)) => {
                        panic!("transaction {order} refused with {status}: {body}")
                    }
                    Err(e) => {
                        if std::env::var_os("LEVY_CRASH_DEBUG").is_some() {
                            eprintln!("  request {order} failed: {e}");
                        }
                        failed += 1;
                        break;
                    }
                }
            }
            (acked, failed, n)
        });
        std::thread::sleep(stop_after);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (acked, failed, last) = writer.join().unwrap();
        n = last;
        acknowledged.extend(acked);
        unacknowledged += failed;
    }
    // The last restart's check, once more, after the 50th kill.
    let (mut child, addr) = spawn(&setup);
    let client = Client::new(&format!("http://{addr}"));
    verify_all(
        &client,
        &setup.test_key,
        &acknowledged,
        "after the last kill",
    );
    child.kill().unwrap();
    child.wait().unwrap();
    println!(
        "  {} acknowledged transactions survived 50 SIGKILLs ({} in flight at a kill), {:.1} s",
        acknowledged.len(),
        unacknowledged,
        started.elapsed().as_secs_f64()
    );
    assert!(
        acknowledged.len() >= 50,
        "too few transactions were recorded for the test to mean anything"
    );
}

/// Checks, with four clients at once, that every acknowledged transaction is stored
/// under its id with its order id.
fn verify_all(client: &Client, key: &str, acknowledged: &[(String, String)], when: &str) {
    std::thread::scope(|scope| {
        for part in acknowledged.chunks(acknowledged.len().div_ceil(4).max(1)) {
            let client = client.clone();
            scope.spawn(move || {
                for (order, id) in part {
                    let got = client.bare("GET", &format!("/tax/transactions/{id}"), key, None);
                    assert_eq!(
                        got.status, 200,
                        "{when}: acknowledged transaction {id} ({order}) lost: {}",
                        got.text
                    );
                    assert_eq!(
                        got.json()["reference_order_id"],
                        serde_json::json!(order),
                        "{when}: {id} changed"
                    );
                }
            });
        }
    });
}

fn total_tax(client: &Client, key: &str) -> Result<Decimal, String> {
    let body = calc_body(&[10_000]).to_string();
    let a = client.try_send(common::Call {
        method: "POST",
        path: "/tax/calculations",
        key: Some(key),
        version: None,
        body: Some(body.as_bytes()),
        content_type: None,
    })?;
    if a.status != 200 {
        return Err(format!("status {}: {}", a.status, a.text));
    }
    // The fixture table names ZIP 37201's city: the answer holds every local tax, and the
    // header crosses HTTP beside the interface's body.
    if a.coverage.as_deref() != Some("FULL") {
        return Err(format!("Levy-Coverage {:?}, expected FULL", a.coverage));
    }
    Ok(dec(&a.json()["total_tax_amount"]))
}

fn damaged_table_at_start() {
    // A table file with one byte of its content changed: `levy serve` refuses to start on
    // it, says why, and never listens.
    let setup = setup("damaged-start");
    let mut bytes = common::table_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x02;
    std::fs::write(&setup.table, &bytes).unwrap();
    let out = Command::new(LEVY)
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--log", "warn"])
        .arg("--table")
        .arg(&setup.table)
        .arg("--ledger")
        .arg(&setup.ledger)
        .arg("--keys")
        .arg(&setup.keys)
        .current_dir(&setup.dir)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the server started on a damaged table"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("listening on"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("content hash mismatch"), "{stderr}");
}

fn sighup_reload() {
    let setup = setup("sighup");
    let (mut child, addr) = spawn(&setup);
    let base = format!("http://{addr}");
    // Before: 7% + 2.25% of 10000 cents = 925. After: the city rate becomes 2.75%, so
    // 700 + 275 = 975.
    let old = Decimal::from(925);
    let new = Decimal::from(975);
    assert_eq!(
        total_tax(&Client::new(&base), &setup.test_key).unwrap(),
        old
    );
    // The server holds its own copy of the table it serves (no mapping of the file): a
    // table copied over it in place (`cp`, which truncates the file and writes it again)
    // changes nothing until SIGHUP, and does not bring the server down.
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
    let table = std::fs::canonicalize(&setup.table).unwrap();
    assert!(
        !maps.lines().any(|l| l.ends_with(table.to_str().unwrap())),
        "{} is mapped by the server",
        table.display()
    );
    let served = std::fs::read(&setup.table).unwrap();
    std::fs::write(&setup.table, b"").unwrap();
    std::fs::write(
        &setup.table,
        common::table_bytes_with_city_rate(Decimal::new(300, 4)),
    )
    .unwrap();
    assert_eq!(
        total_tax(&Client::new(&base), &setup.test_key).unwrap(),
        old,
        "the table in use changed with the file"
    );
    std::fs::write(&setup.table, &served).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (stop, sent, base, key) = (
            Arc::clone(&stop),
            Arc::clone(&sent),
            base.clone(),
            setup.test_key.clone(),
        );
        clients.push(std::thread::spawn(move || {
            let client = Client::new(&base);
            let mut seen_new = false;
            let deadline = Instant::now() + Duration::from_secs(20);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let tax = total_tax(&client, &key).expect("a request failed during the reload");
                assert!(
                    tax == old || tax == new,
                    "tax {tax} is neither the old nor the new table's"
                );
                if seen_new {
                    assert_eq!(
                        tax, new,
                        "an answer went back to the old table after the new one"
                    );
                }
                seen_new |= tax == new;
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(200));
    // Replace the file atomically (write + rename), then SIGHUP.
    let tmp = setup.dir.join("rates.levy.new");
    std::fs::write(
        &tmp,
        common::table_bytes_with_city_rate(Decimal::new(275, 4)),
    )
    .unwrap();
    std::fs::rename(&tmp, &setup.table).unwrap();
    signal(&child, "HUP");
    let client = Client::new(&base);
    let deadline = Instant::now() + Duration::from_secs(10);
    while total_tax(&client, &setup.test_key).unwrap() != new {
        assert!(
            Instant::now() < deadline,
            "the new table was not in use 10 s after SIGHUP"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    // A damaged table file, put in place as table files are (write + rename: the server
    // maps the file it serves, so files are replaced, never rewritten): one byte in the
    // middle of the archive changed (a city rate of 5.75% written there would pass every
    // structural check); the reload fails on the content hash and the current table stays.
    let mut damaged = common::table_bytes_with_city_rate(Decimal::new(575, 4));
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x01;
    std::fs::write(&tmp, &damaged).unwrap();
    std::fs::rename(&tmp, &setup.table).unwrap();
    signal(&child, "HUP");
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(
        total_tax(&client, &setup.test_key).unwrap(),
        new,
        "a broken table file replaced a good table"
    );
    println!(
        "  {} calculations during two reloads, none failed",
        sent.load(Ordering::Relaxed)
    );
    signal(&child, "TERM");
    assert!(child.wait().unwrap().success());
}

fn sigterm_graceful() {
    // SIGTERM, and SIGINT (what ctrl-c sends).
    for sig in ["TERM", "INT"] {
        stop_gracefully_on(sig);
    }
}

fn stop_gracefully_on(sig: &str) {
    let setup = setup("sigterm");
    let (mut child, addr) = spawn(&setup);
    let client = Client::new(&format!("http://{addr}"));
    assert_eq!(
        total_tax(&client, &setup.test_key).unwrap(),
        Decimal::from(925)
    );
    // A request whose body arrives slowly is in flight when SIGTERM comes: the server must
    // still answer it, then exit 0.
    let stream = std::net::TcpStream::connect(&addr).unwrap();
    let body = calc_body(&[10_000]).to_string();
    let head = format!(
        "POST /tax/calculations HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        setup.test_key,
        body.len()
    );
    use std::io::{Read, Write};
    let mut s = stream;
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&body.as_bytes()[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, sig);
    std::thread::sleep(Duration::from_millis(200));
    s.write_all(&body.as_bytes()[10..]).unwrap();
    let mut answer = String::new();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "in-flight request not answered: {answer}"
    );
    assert!(
        answer.contains("\"total_tax_amount\":925"),
        "unexpected answer: {answer}"
    );
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "levy serve exited with {status} after SIGTERM"
    );
    // After shutdown, new connections are refused.
    assert!(std::net::TcpStream::connect(&addr).is_err());
}

fn request_ids_in_logs() {
    let setup = setup("logs");
    let (mut child, addr) = spawn_with(&setup, "info", Stdio::piped());
    let stderr = child.stderr.take().unwrap();
    let client = Client::new(&format!("http://{addr}"));
    let ok = client.bare("GET", "/tax/ping", &setup.test_key, None);
    let bad = client.bare("GET", "/tax/transactions/tr_nope", &setup.test_key, None);
    assert_eq!(ok.status, 200);
    assert_eq!(bad.status, 404);
    assert_eq!(bad.json()["request_id"], serde_json::json!(bad.request_id));
    signal(&child, "TERM");
    assert!(child.wait().unwrap().success());
    let log: Vec<String> = BufReader::new(stderr).lines().map(Result::unwrap).collect();
    for (answer, path, status) in [
        (&ok, "/tax/ping", 200),
        (&bad, "/tax/transactions/tr_nope", 404),
    ] {
        let line = log
            .iter()
            .find(|l| l.contains(&format!("path={path} ")))
            .unwrap_or_else(|| panic!("no log line for {path}: {log:#?}"));
        assert!(
            line.contains(&format!("request{{id={}}}", answer.request_id)),
            "{line}"
        );
        assert!(line.contains(&format!("status={status}")), "{line}");
    }
}

/// Polls `f` every 100 ms for up to 10 s until it returns true.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let started = Instant::now();
    while !f() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: not within 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn keys_reload() {
    let setup = setup("keys-reload");
    // The file as it holds only `shop`, kept to put back later.
    let shop_only = std::fs::read(&setup.keys).unwrap();
    let (other_test, _) = levy_api::keys::create_account_keys(&setup.keys, "other").unwrap();
    let (mut child, addr) = spawn(&setup);
    let client = Client::new(&format!("http://{addr}"));
    let ping = |key: &str| client.bare("GET", "/tax/ping", key, None).status;
    assert_eq!(ping(&other_test), 200);
    assert_eq!(ping(&setup.test_key), 200);
    // `other` records a sale.
    let (status, tx) = record(&client, &other_test, "order-o1").unwrap();
    assert_eq!(status, 200, "{tx}");
    let old_tx = tx["id"].as_str().unwrap().to_string();

    // `other` is removed: the file is replaced by rename, then SIGHUP.
    let staged = setup.dir.join("keys.toml.new");
    std::fs::write(&staged, &shop_only).unwrap();
    std::fs::rename(&staged, &setup.keys).unwrap();
    signal(&child, "HUP");
    eventually("the removed account's key refused", || {
        ping(&other_test) == 401
    });
    assert_eq!(
        ping(&setup.test_key),
        200,
        "the remaining account still works"
    );

    // A new account made while the server runs works without a signal.
    let (late_test, _) = levy_api::keys::create_account_keys(&setup.keys, "late").unwrap();
    eventually("the new account's key accepted", || ping(&late_test) == 200);
    assert_eq!(ping(&other_test), 401);

    // `other` made again under the same name is a new account: it starts empty (the old
    // account's transaction is not there, and its order id is free again).
    let (new_other, _) = levy_api::keys::create_account_keys(&setup.keys, "other").unwrap();
    eventually("the re-created account's key accepted", || {
        ping(&new_other) == 200
    });
    assert_eq!(
        ping(&other_test),
        401,
        "the removed account's old key stays refused"
    );
    let old = client.bare(
        "GET",
        &format!("/tax/transactions/{old_tx}"),
        &new_other,
        None,
    );
    assert_eq!(old.status, 404, "{}", old.text);
    let (status, tx) = record(&client, &new_other, "order-o1").unwrap();
    assert_eq!(status, 200, "{tx}");

    // A broken keys file keeps the keys in use (and says so in the log).
    std::fs::write(&setup.keys, "this is not toml [[[").unwrap();
    signal(&child, "HUP");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(ping(&late_test), 200);
    assert_eq!(ping(&setup.test_key), 200);
    // The fix arrives in the same file (no rename): the keys of the fixed file apply, the
    // accounts it no longer names are refused.
    std::fs::write(&setup.keys, &shop_only).unwrap();
    eventually("an account the fixed file drops refused", || {
        ping(&late_test) == 401
    });
    assert_eq!(ping(&setup.test_key), 200);
    // An empty keys file refuses every key; so does a deleted one: deleting the file never
    // keeps a removed key alive.
    std::fs::write(&setup.keys, "").unwrap();
    eventually("every key refused with an empty keys file", || {
        ping(&setup.test_key) == 401
    });
    std::fs::write(&setup.keys, &shop_only).unwrap();
    eventually("the key accepted again", || ping(&setup.test_key) == 200);
    std::fs::remove_file(&setup.keys).unwrap();
    eventually("every key refused once the keys file is deleted", || {
        ping(&setup.test_key) == 401
    });

    child.kill().unwrap();
    child.wait().unwrap();
}
