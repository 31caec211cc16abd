//! The liability report of a chain's year (`Store::liability`) on an SQLite ledger file,
//! beside a plain SQL `GROUP BY` over a flat table of the same lines' jurisdiction
//! entries, in the same run. The report sums the ledger's daily totals, kept at write
//! time; its recount reads every sealed transaction and refund of the account once; the
//! baseline reads integer columns. The size is
//! `LEVY_BENCH_REPORT_SALES` (default 100,000 sales; 2,000 under `-- --test`); the
//! example `report_scale` measures both stores, PostgreSQL included, at any size.
//!
//! Run with `cargo bench -p levy-benches --bench report`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use levy_api::store::liability::Period;
use levy_benches::report::{fill, flat_sqlite, group_by_sqlite, scope, YEAR, YEAR_START};
use levy_core::Decimal;

fn sales() -> u64 {
    if std::env::args().any(|a| a == "--test") {
        return 2_000;
    }
    std::env::var("LEVY_BENCH_REPORT_SALES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000)
}

fn bench_report(c: &mut Criterion) {
    let n = sales();
    let dir = levy_testkit::TempDir::new("levy-bench-report");
    let ledger = dir.join("ledger.sqlite");
    let store = levy_api::store::open(&ledger.display().to_string()).expect("the ledger");
    fill(store.as_ref(), n);
    let flat = flat_sqlite(n);
    let period = Period {
        from: YEAR_START,
        to: YEAR_START + YEAR,
        region: None,
    };
    // The two agree: the year's tax, to the ten-thousandth of a cent.
    let report = store.liability(&scope(), &period).expect("the report");
    let tax: Decimal = report.rows.values().map(|r| r.net().tax).sum();
    let baseline: i64 = group_by_sqlite(&flat).iter().map(|r| r.3).sum();
    assert_eq!(tax * Decimal::from(10_000), Decimal::from(baseline));

    let mut g = c.benchmark_group(format!("report/sqlite_{n}_sales"));
    g.sample_size(10);
    g.bench_function("baseline: SQL GROUP BY over a flat table", |b| {
        b.iter(|| black_box(group_by_sqlite(black_box(&flat))))
    });
    g.bench_function("Store::liability of the year (daily totals)", |b| {
        b.iter(|| black_box(store.liability(&scope(), black_box(&period)).unwrap()))
    });
    g.bench_function("Store::liability_recount of the year (every record)", |b| {
        b.iter(|| {
            black_box(
                store
                    .liability_recount(&scope(), black_box(&period))
                    .unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench_report);
criterion_main!(benches);
