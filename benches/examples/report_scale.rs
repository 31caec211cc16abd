//! The liability report of a chain's year at a size of your choosing, on SQLite and on
//! PostgreSQL, beside a plain SQL `GROUP BY` over a flat table of the same entries in the
//! same database: the figures `benches/README.md` gives for large ledgers, which a
//! criterion run would take too long to fill.
//!
//! `cargo run --release -p levy-benches --example report_scale -- N [sqlite|postgres|both]`
//! fills a fresh ledger with N sales of 2026 (`levy_benches::report`), then times, best of
//! three, `Store::liability` of the year (the daily totals kept at write time), the
//! same report recounted from the records (`Store::liability_recount`, one run above a
//! million sales) and the `GROUP BY`. PostgreSQL runs on the
//! test kit's own server (`levy_testkit::postgres`, the server programs of the machine);
//! its `GROUP BY` is timed by `psql`'s `\timing`, on the server.

use std::io::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use levy_api::store::liability::Period;
use levy_benches::report::{
    fill, flat_rows, flat_sqlite, group_by_sqlite, scope, FLAT_TABLE, GROUP_BY, YEAR, YEAR_START,
};

fn best_of_three<T>(mut f: impl FnMut() -> T) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn period() -> Period {
    Period {
        from: YEAR_START,
        to: YEAR_START + YEAR,
        region: None,
    }
}

/// The times of the report from the daily totals and recounted from the records, once
/// they agree.
fn report_on(ledger: &str, n: u64) -> (Duration, Duration) {
    let store = levy_api::store::open(ledger).expect("the ledger");
    let t = Instant::now();
    fill(store.as_ref(), n);
    let filled = t.elapsed();
    eprintln!(
        "  filled {n} sales in {filled:.1?} ({:.1} µs a sale, refunds included)",
        filled.as_secs_f64() * 1e6 / n.max(1) as f64
    );
    let totals = store.liability(&scope(), &period()).unwrap();
    let t = Instant::now();
    let recounted = store.liability_recount(&scope(), &period()).unwrap();
    let mut recount = t.elapsed();
    assert_eq!(totals, recounted, "the daily totals and the records agree");
    if n <= 1_000_000 {
        recount = best_of_three(|| store.liability_recount(&scope(), &period()).unwrap());
    }
    let report = best_of_three(|| store.liability(&scope(), &period()).unwrap());
    (report, recount)
}

fn sqlite(n: u64) {
    let dir = levy_testkit::TempDir::new("levy-report-scale");
    let report = report_on(&dir.join("ledger.sqlite").display().to_string(), n);
    let flat = flat_sqlite(n);
    let baseline = best_of_three(|| group_by_sqlite(&flat));
    print_line("sqlite", n, report, baseline);
}

/// Runs `psql` on the test kit's server with `commands` (each a `-c`).
fn psql(port: u16, database: &str, commands: &[&str]) -> String {
    let mut cmd = Command::new("psql");
    cmd.args([
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-U",
        "levy",
        "-d",
        database,
    ])
    .args(["-v", "ON_ERROR_STOP=1", "-tA"]);
    for c in commands {
        cmd.args(["-c", c]);
    }
    let out = cmd.output().expect("psql runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn postgres(n: u64) {
    let Some(server) = levy_testkit::postgres::server() else {
        eprintln!("no PostgreSQL server could be started: skipped");
        return;
    };
    let url = server.database();
    let database = url.rsplit('/').next().unwrap().to_string();
    let report = report_on(&url, n);
    // The flat rows, by COPY from a CSV file.
    let dir = levy_testkit::TempDir::new("levy-report-scale-pg");
    let csv = dir.join("entries.csv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    for (at, region, code, gross, tax) in flat_rows(n) {
        writeln!(out, "{at},{region},{code},{gross},{tax}").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let copy = format!("\\copy entries FROM '{}' CSV", csv.display());
    psql(
        server.port(),
        &database,
        &[FLAT_TABLE, &copy, "ANALYZE entries"],
    );
    let query = GROUP_BY
        .replace("$1", &YEAR_START.to_string())
        .replace("$2", &(YEAR_START + YEAR).to_string());
    let timed = psql(
        server.port(),
        &database,
        &["\\timing on", &query, &query, &query],
    );
    let baseline = timed
        .lines()
        .filter_map(|l| l.strip_prefix("Time: "))
        .filter_map(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ms| Duration::from_micros((ms * 1000.0) as u64))
        .min()
        .expect("psql's timings");
    print_line("postgres", n, report, baseline);
}

fn print_line(store: &str, n: u64, (report, recount): (Duration, Duration), baseline: Duration) {
    println!(
        "{store:9} {n:>10} sales  report {report:>10.3?}  recount {recount:>10.3?}  GROUP BY {baseline:>10.3?}  report/GROUP BY {:>7.3}",
        report.as_secs_f64() / baseline.as_secs_f64()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let which = args.next().unwrap_or_else(|| "both".into());
    if which != "postgres" {
        sqlite(n);
    }
    if which != "sqlite" {
        postgres(n);
    }
}
