//! `levy serve` cut off from its PostgreSQL ledger by the network (custom harness;
//! `cargo test -p levy-cli --test partition`): the real `levy` binary, a PostgreSQL server
//! of the test's own, and a real network fault.
//!
//! Each test makes a network namespace of its own (`ip netns add`) and runs itself again
//! inside it (`ip netns exec`), where it starts PostgreSQL and `levy serve` on the
//! namespace's loopback. The link between them is cut with `iptables` rules that drop
//! every packet to and from PostgreSQL's port (nothing is refused or reset: the network
//! goes silent, as a partition does), and healed by deleting the rules. The namespace is
//! removed when the test ends, however it ends (a guard kills what is left in it by id).
//! Skipped, saying why, when not root or `ip`, `iptables` or PostgreSQL's programs are
//! missing; under `CI=true` that is a failure.
//!
//! * `partition`: twelve clients (more than the account's eight requests at once) record
//!   sales while the link is cut for 15 s. Every request answers within the bound; during
//!   the cut each answers `503 LEDGER_UNAVAILABLE` with `Retry-After`, none `429` or
//!   `500`; after the heal the server answers again without a restart; every acknowledged
//!   sale is stored once and nothing is stored twice (a client retries a sale with the
//!   same `reference_order_id`).
//! * `restart_while_unreachable`: PostgreSQL restarts while the link is cut, so every
//!   pooled connection is stale when it heals; the requests after the heal all succeed
//!   (no run of `500`s, one per stale connection).
//!
//! Both print what they measure (the longest answer, the statuses, the time to the first
//! success after the heal). `LEVY_MEASURE_BIN` names another `levy` binary to measure
//! (the release before, for the figures before; its checks then report what it did).

#[path = "../../levy-server/tests/common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{calc_body, Call, Client};
use serde_json::json;

/// PostgreSQL's port inside the namespace (the namespace is the test's own: nothing else
/// listens there).
const PG_PORT: u16 = 55432;

/// The longest a request may wait for its answer while the ledger is unreachable, with
/// the store's defaults: a connection within 5 s (`connect_timeout`), each statement
/// within `statement_timeout` (5 s) and one more second, and a margin of 1 s.
const BOUND: Duration = Duration::from_secs(12);

/// How long the link is cut.
const CUT: Duration = Duration::from_secs(15);

fn levy() -> String {
    std::env::var("LEVY_MEASURE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_levy").to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tests: [(&str, fn()); 2] = [
        ("partition", partition),
        ("restart_while_unreachable", restart_while_unreachable),
    ];
    if let Some(i) = args.iter().position(|a| a == "--inside") {
        // Inside the namespace: bring its loopback up, and run the one test named.
        run("ip", &["link", "set", "lo", "up"]);
        let name = &args[i + 1];
        let (_, f) = tests.iter().find(|(n, _)| n == name).unwrap();
        f();
        return;
    }
    if args.iter().any(|a| a == "--list") {
        for (name, _) in tests {
            println!("{name}: test");
        }
        return;
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let mut ran = 0;
    for (name, _) in tests {
        if !filters.is_empty() && !filters.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        if let Err(why) = preflight() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "the partition tests must run under CI=true: {why}"
            );
            println!("test {name} ... skipped: {why}");
            continue;
        }
        let started = Instant::now();
        println!("test {name} ...");
        run_inside_namespace(name);
        let took = started.elapsed().as_secs_f64();
        println!("test {name} ... ok ({took:.1} s)");
        ran += 1;
    }
    println!("test result: ok. {ran} passed");
}

/// Why the tests cannot run here, if they cannot.
fn preflight() -> Result<(), String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| e.to_string())?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root (a network namespace and iptables need root)".into());
    }
    for tool in ["ip", "iptables", "runuser"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !found {
            return Err(format!("no `{tool}` program"));
        }
    }
    pg_bin().map(drop)
}

/// The newest `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package), or
/// `$LEVY_PG_BIN`.
fn pg_bin() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("LEVY_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no PostgreSQL programs in /usr/lib/postgresql/*/bin".to_string())
}

/// A network namespace of the test's own, removed when dropped, with whatever still runs
/// in it killed first (by id: only what the test started runs there).
struct Namespace(String);

impl Namespace {
    fn create(name: &str) -> Namespace {
        let ns = Namespace(name.to_string());
        run("ip", &["netns", "add", name]);
        ns
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Ok(out) = Command::new("ip").args(["netns", "pids", &self.0]).output() {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Runs the test `name` again inside a namespace of its own, and fails when it fails.
fn run_inside_namespace(name: &str) {
    let ns = Namespace::create(&format!("levy-{}-{}", std::process::id(), &name[..4]));
    let status = Command::new("ip")
        .args(["netns", "exec", &ns.0])
        .arg(std::env::current_exe().unwrap())
        .args(["--inside", name])
        .status()
        .unwrap();
    assert!(status.success(), "{name} failed inside its namespace");
}

/// Runs a command that must succeed.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The iptables rules that cut PostgreSQL off: every packet to or from its port dropped.
const CUT_RULES: [[&str; 6]; 2] = [
    ["INPUT", "-p", "tcp", "--dport", "55432", "-j"],
    ["INPUT", "-p", "tcp", "--sport", "55432", "-j"],
];

/// Cuts (`-A`) or heals (`-D`) the link to PostgreSQL.
fn link(action: &str) {
    for rule in CUT_RULES {
        let mut args = vec!["-w", action];
        args.extend(rule);
        args.push("DROP");
        run("iptables", &args);
    }
}

/// A PostgreSQL server of the test's own on the namespace's loopback, stopped (and its
/// directory removed) when dropped.
struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
}

impl Postgres {
    fn start() -> Postgres {
        let bin = pg_bin().unwrap();
        let dir = std::env::temp_dir().join(format!("levy-partition-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        run("chown", &["postgres:", &dir.to_string_lossy()]);
        let pg = Postgres { bin, dir };
        let data = pg.dir.join("data");
        pg.as_postgres(
            "initdb",
            &["-D", &data.to_string_lossy(), "-U", "levy", "-A", "trust"],
        );
        pg.ctl(&["start"]);
        pg.psql("postgres", "CREATE DATABASE levy");
        pg
    }

    /// Runs one of PostgreSQL's programs as the `postgres` user.
    fn as_postgres(&self, program: &str, args: &[&str]) {
        let path = self.bin.join(program);
        let mut all = vec!["-u", "postgres", "--", path.to_str().unwrap()];
        all.extend(args);
        run("runuser", &all);
    }

    /// `pg_ctl ACTION`, waiting for it to finish.
    fn ctl(&self, action: &[&str]) {
        let data = self.dir.join("data").to_string_lossy().into_owned();
        let log = self.dir.join("log").to_string_lossy().into_owned();
        let options = format!(
            "-p {PG_PORT} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.dir.display()
        );
        let mut args = vec!["-D", &data, "-l", &log, "-w", "-o", &options];
        args.extend(action);
        self.as_postgres("pg_ctl", &args);
    }

    /// One SQL command through the Unix socket (which the cut leaves alone).
    fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                &self.dir.to_string_lossy(),
                "-p",
                &PG_PORT.to_string(),
            ])
            .args([
                "-U",
                "levy",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-tAc",
                sql,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://levy@127.0.0.1:{PG_PORT}/levy")
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &data.to_string_lossy(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A running `levy serve` with its default limits, killed when dropped.
struct Serve {
    child: Child,
    base: String,
    key: String,
    _dir: levy_testkit::TempDir,
}

impl Serve {
    fn start(name: &str, ledger: &str) -> Serve {
        let dir = common::scratch_dir(name);
        let table = dir.join("rates.levy");
        std::fs::write(&table, common::table_bytes()).unwrap();
        let keys = dir.join("keys.toml");
        let (key, _live) = levy_api::keys::create_account_keys(&keys, "shop").unwrap();
        let mut child = Command::new(levy())
            .args(["serve", "--listen", "127.0.0.1:0", "--log", "error"])
            .arg("--table")
            .arg(&table)
            .args(["--ledger", ledger])
            .arg("--keys")
            .arg(&keys)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let line = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .next()
            .expect("levy serve exited before listening")
            .unwrap();
        let addr = line
            .strip_prefix("listening on http://")
            .unwrap()
            .to_string();
        Serve {
            child,
            base: format!("http://{addr}"),
            key,
            _dir: dir,
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request as a client saw it.
#[derive(Clone, Debug)]
struct Seen {
    /// When it was sent, from the test's start.
    sent: Duration,
    took: Duration,
    /// The status; 0 for no answer (the connection failed or timed out).
    status: u16,
    /// The error's `type` (flat format), if any.
    kind: String,
    retry_after: Option<String>,
}

impl Seen {
    fn answered(&self) -> Duration {
        self.sent + self.took
    }
}

/// Sends one POST, and notes what came back.
fn post(
    c: &Client,
    key: &str,
    path: &str,
    body: &serde_json::Value,
    t0: Instant,
) -> (Seen, serde_json::Value) {
    let text = body.to_string();
    let sent = t0.elapsed();
    let answer = c.try_send(Call {
        method: "POST",
        path,
        key: Some(key),
        version: Some("2026-01-01"),
        body: Some(text.as_bytes()),
        content_type: None,
    });
    let took = t0.elapsed() - sent;
    let (status, value, retry_after) = match answer {
        Ok(a) => {
            let value = serde_json::from_str(&a.text).unwrap_or(serde_json::Value::Null);
            (a.status, value, a.retry_after)
        }
        Err(_) => (0, serde_json::Value::Null, None),
    };
    let kind = value["type"].as_str().unwrap_or("").to_string();
    let seen = Seen {
        sent,
        took,
        status,
        kind,
        retry_after,
    };
    (seen, value)
}

/// What one client did: every request, and the fate of each of its sales.
#[derive(Default)]
struct Sales {
    seen: Vec<Seen>,
    /// Sales answered 200.
    acknowledged: BTreeSet<String>,
    /// Sales answered 503 at least once, then 409 `DUPLICATE_REFERENCE_ORDER_ID` on a
    /// retry: stored by the attempt whose answer was lost.
    stored_unanswered: BTreeSet<String>,
    /// Sales answered 503 and not yet retried to the end when the client stopped.
    unresolved: BTreeSet<String>,
}

/// Records one sale (a calculation, then its transaction), retrying the transaction with
/// the same order id after a 503 until `until`.
fn sale(c: &Client, key: &str, order: &str, t0: Instant, until: Duration, out: &mut Sales) {
    let (seen, calc) = post(c, key, "/tax/calculations", &calc_body(&[10_000]), t0);
    let ok = seen.status == 200;
    out.seen.push(seen);
    if !ok {
        std::thread::sleep(Duration::from_millis(100));
        return;
    }
    let body = json!({"calculation_id": calc["id"], "reference_order_id": order});
    let mut refused = false;
    loop {
        let (seen, _) = post(c, key, "/tax/transactions", &body, t0);
        let status = seen.status;
        let kind = seen.kind.clone();
        out.seen.push(seen);
        match status {
            200 => {
                out.acknowledged.insert(order.to_string());
                return;
            }
            409 if refused && kind == "DUPLICATE_REFERENCE_ORDER_ID" => {
                out.stored_unanswered.insert(order.to_string());
                return;
            }
            503 | 0 if t0.elapsed() < until => {
                refused = true;
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => {
                if refused || status == 503 || status == 0 {
                    out.unresolved.insert(order.to_string());
                }
                return;
            }
        }
    }
}

/// `clients` clients recording sales until `until` from `t0`.
fn drive(serve: &Serve, clients: usize, t0: Instant, until: Duration) -> Vec<Sales> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let c = Client::new(&serve.base);
                let key = serve.key.clone();
                s.spawn(move || {
                    let mut out = Sales::default();
                    let mut n = 0;
                    while t0.elapsed() < until {
                        n += 1;
                        sale(&c, &key, &format!("c{i}-{n}"), t0, until, &mut out);
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Counts of statuses (0: no answer).
fn statuses<'a>(seen: impl Iterator<Item = &'a Seen>) -> BTreeMap<u16, usize> {
    let mut by = BTreeMap::new();
    for s in seen {
        *by.entry(s.status).or_insert(0) += 1;
    }
    by
}

fn partition() {
    let pg = Postgres::start();
    let serve = Serve::start("partition", &pg.url());
    let t0 = Instant::now();
    let until = Duration::from_secs(3) + CUT + Duration::from_secs(14);
    // When the rules were in place, and when they began to be removed.
    let (clients, cut_at, heal_at) = std::thread::scope(|s| {
        let driver = s.spawn(|| drive(&serve, 12, t0, until));
        std::thread::sleep(Duration::from_secs(3));
        link("-A");
        let cut_at = t0.elapsed();
        std::thread::sleep(CUT);
        let heal_at = t0.elapsed();
        link("-D");
        (driver.join().unwrap(), cut_at, heal_at)
    });
    let seen: Vec<&Seen> = clients.iter().flat_map(|c| &c.seen).collect();
    let sent_during: Vec<&Seen> = seen
        .iter()
        .copied()
        .filter(|s| s.sent >= cut_at && s.sent < heal_at)
        .collect();
    let during: Vec<&Seen> = sent_during
        .iter()
        .copied()
        .filter(|s| s.answered() < heal_at)
        .collect();
    let first_ok = seen
        .iter()
        .filter(|s| s.status == 200 && s.sent >= heal_at)
        .map(|s| s.answered() - heal_at)
        .min();
    let longest = seen.iter().map(|s| s.took).max().unwrap();
    let before: Vec<&Seen> = seen.iter().copied().filter(|s| s.sent < cut_at).collect();
    println!(
        "  cut {} s, 12 clients: longest answer {:.1} s; before the cut: {:?}; sent during the cut: {:?}; whole run: {:?} (0: no answer); first success {} after the heal",
        CUT.as_secs(),
        longest.as_secs_f64(),
        statuses(before.iter().copied()),
        statuses(sent_during.iter().copied()),
        statuses(seen.iter().copied()),
        first_ok.map_or("never".to_string(), |d| format!("{:.1} s", d.as_secs_f64())),
    );
    check_answers(&seen, &sent_during, &during, heal_at);
    check_records(&pg, &clients);
}

/// Every request answered within the bound, none 500; none sent during the cut 429
/// (twelve clients are more than the account's eight requests at once, so some are
/// refused with 429 while the ledger answers: their own load); every answer during the
/// cut a 503 `LEDGER_UNAVAILABLE` with `Retry-After`; from 10 s after the heal every
/// answer a success (or a 429 of the clients' own load).
fn check_answers(seen: &[&Seen], sent_during: &[&Seen], during: &[&Seen], heal_at: Duration) {
    for s in seen {
        assert!(s.status != 0, "a request got no answer: {s:?}");
        assert!(
            s.took <= BOUND,
            "a request waited longer than {BOUND:?}: {s:?}"
        );
        assert!(s.status != 500, "{s:?}");
    }
    for s in sent_during {
        assert!(s.status != 429, "a 429 while the ledger was cut off: {s:?}");
    }
    assert!(
        during.len() >= 12,
        "too few requests during the cut: {}",
        during.len()
    );
    for s in during {
        assert_eq!(
            (s.status, s.kind.as_str()),
            (503, "LEDGER_UNAVAILABLE"),
            "{s:?}"
        );
        assert!(s.retry_after.is_some(), "a 503 without Retry-After: {s:?}");
    }
    let late: Vec<&&Seen> = seen
        .iter()
        .filter(|s| s.sent >= heal_at + Duration::from_secs(10))
        .collect();
    assert!(!late.is_empty(), "no request late after the heal");
    for s in &late {
        assert!([200, 429].contains(&s.status), "after the heal: {s:?}");
    }
    assert!(
        late.iter().any(|s| s.status == 200),
        "no success after the heal"
    );
}

/// Every acknowledged sale stored once, and nothing stored that no client sent or that
/// was refused for good.
fn check_records(pg: &Postgres, clients: &[Sales]) {
    let rows = pg.psql("levy", "SELECT reference_order_id FROM transactions");
    let stored: Vec<&str> = rows.lines().collect();
    let distinct: BTreeSet<&str> = stored.iter().copied().collect();
    assert_eq!(distinct.len(), stored.len(), "a sale stored twice");
    let mut known = BTreeSet::new();
    for c in clients {
        for order in &c.acknowledged {
            assert!(
                distinct.contains(order.as_str()),
                "acknowledged sale {order} lost"
            );
        }
        for order in &c.stored_unanswered {
            assert!(
                distinct.contains(order.as_str()),
                "{order} answered 409 but not stored"
            );
        }
        known.extend(
            c.acknowledged
                .iter()
                .chain(&c.stored_unanswered)
                .chain(&c.unresolved),
        );
    }
    for order in &distinct {
        assert!(
            known.contains(&order.to_string()),
            "{order} stored though refused for good"
        );
    }
    let acknowledged: usize = clients.iter().map(|c| c.acknowledged.len()).sum();
    let unanswered: usize = clients.iter().map(|c| c.stored_unanswered.len()).sum();
    println!(
        "  {} sales stored: {acknowledged} acknowledged, {unanswered} stored though their answer was lost (found by a retry), none twice",
        stored.len()
    );
    assert!(
        acknowledged >= 100,
        "too few sales for the test to mean anything"
    );
}

fn restart_while_unreachable() {
    let pg = Postgres::start();
    let serve = Serve::start("restart", &pg.url());
    // Sixteen clients at once open the pool's sixteen connections.
    let t0 = Instant::now();
    let warm = drive(&serve, 16, t0, Duration::from_secs(2));
    let opened = pg.psql(
        "levy",
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'levy'",
    );
    println!("  {opened} pooled connections before the cut");
    link("-A");
    pg.ctl(&["-m", "fast", "restart"]);
    std::thread::sleep(Duration::from_secs(2));
    link("-D");
    // One client, one request after another: each would meet a stale connection.
    let c = Client::new(&serve.base);
    let t1 = Instant::now();
    let mut seen = Vec::new();
    for n in 0..40 {
        let order = format!("after-{n}");
        let mut out = Sales::default();
        sale(&c, &serve.key, &order, t1, Duration::ZERO, &mut out);
        seen.extend(out.seen);
    }
    let by = statuses(seen.iter());
    let failed_in_a_row = seen.iter().take_while(|s| s.status != 200).count();
    println!(
        "  after the heal: {by:?} of {} requests; {failed_in_a_row} failed before the first success; longest {:.1} s",
        seen.len(),
        seen.iter().map(|s| s.took).max().unwrap().as_secs_f64()
    );
    let warmed: usize = warm.iter().map(|c| c.acknowledged.len()).sum();
    assert!(warmed > 0, "no sale before the cut");
    for s in &seen {
        assert_eq!(s.status, 200, "after the restart: {s:?}");
    }
    let stored = pg.psql(
        "levy",
        "SELECT count(*) FROM transactions WHERE reference_order_id LIKE 'after-%'",
    );
    assert_eq!(stored, "40", "every sale after the restart stored once");
}
