//! Layering, conflicts, street ranges and the curated base, on small files written here.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use levy_build::{build, BuildOptions, ConflictKind, Input, InputKind};
use levy_core::{Address, Date, Decimal, Precision, ResolutionStatus, Table};

/// A fresh directory under `target/tmp`, removed when the test ends.
fn dir(tag: &str) -> levy_testkit::TempDir {
    levy_testkit::target_temp_dir!(&format!("levy-build-{tag}"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn opts(inputs: Vec<Input>) -> BuildOptions {
    BuildOptions {
        inputs,
        build_time: Some(0),
        ..Default::default()
    }
}

fn rate_on<D>(t: &Table<D>, code: &str, date: Date) -> Vec<Decimal> {
    let j = t.jurisdiction_by_code(code).unwrap();
    t.rules_of(j)
        .filter(|(_, r)| {
            let (f, to) = r.interval();
            f <= date && date <= to
        })
        .map(|(_, r)| r.rate())
        .collect()
}

const ZIP5_HEADER: &str =
    "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n";

#[test]
fn later_sources_refine_earlier_ones_and_conflicts_are_reported() {
    let d = dir("layers");
    let zip5 = write(
        &d,
        "TAXRATES_ZIP5_TN202512.csv",
        &format!("{ZIP5_HEADER}TN,37010,ADAMS,0.097500,0.070000,0.027500,0.000000,0.000000,0\n"),
    );
    // A made-up SST-format file for Tennessee (47): the state at 7.5% from 2026-01-01, and a
    // second, overlapping state row (a duplicate within the file).
    let sst = write(
        &d,
        "TNR2026Q1JAN01.csv",
        "47,45,47,0.075,0.075,0.04,0.04,20260101,29991231\n47,45,47,0.08,0.08,0.04,0.04,20260601,20261231\n",
    );
    let report = build(&opts(vec![
        Input::new(InputKind::Zip5, &zip5),
        Input::new(InputKind::SstRates, &sst),
    ]))
    .unwrap();
    let kinds: Vec<ConflictKind> = report.summary.conflicts.iter().map(|c| c.kind).collect();
    // The second row overlaps the first for GENERAL_MERCHANDISE and for GROCERIES (its food
    // rate differs from its general rate, so it writes both): two duplicates. Then the SST
    // file's 7.5% replaces the ZIP5 table's 7% from 2026-01-01.
    assert_eq!(
        kinds,
        vec![
            ConflictKind::DuplicateRule,
            ConflictKind::DuplicateRule,
            ConflictKind::RuleReplaced
        ],
        "{:?}",
        report.summary.conflicts
    );
    assert!(report.summary.conflicts[2]
        .detail
        .starts_with("47 GENERAL_MERCHANDISE: 0.07"));
    let t = Table::open(report.bytes).unwrap();
    let dec = |s| Decimal::from_str(s).unwrap();
    // December 2025: the ZIP5 table's 7% (cut to end where the SST row starts).
    assert_eq!(
        rate_on(&t, "47", Date::from_ymd(2025, 12, 31).unwrap()),
        vec![dec("0.07")]
    );
    // From 2026-01-01 the SST row's 7.5% (general) and 4% (groceries); the duplicate
    // 8% row is dropped, not summed.
    assert_eq!(
        rate_on(&t, "47", Date::from_ymd(2026, 7, 1).unwrap()),
        vec![dec("0.075"), dec("0.04")]
    );
}

#[test]
fn street_ranges_resolve_exactly() {
    let d = dir("streets");
    let zip5 = write(
        &d,
        "TAXRATES_ZIP5_TN202512.csv",
        &format!(
            "{ZIP5_HEADER}TN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0\n"
        ),
    );
    // Boundary records in the SST layout (89 fields): an `A` record for the even numbers
    // 100-198 of N Main St in 37203 (Davidson County 037, Nashville place 52006), and a bad
    // record type on line 2.
    let mut a = vec![""; 89];
    a[..10].copy_from_slice(&[
        "A", "20200101", "29991231", "100", "198", "E", "N", "MAIN", "ST", "",
    ]);
    a[15] = "37203";
    a[22] = "47";
    a[23] = "47";
    a[24] = "037";
    a[25] = "52006";
    let mut bad = a.clone();
    bad[0] = "Q";
    let boundaries = write(
        &d,
        "TNB2026Q1JAN01.csv",
        &format!("{}\n{}\n", a.join(","), bad.join(",")),
    );
    let report = build(&opts(vec![
        Input::new(InputKind::Zip5, &zip5),
        Input::new(InputKind::SstBoundaries, &boundaries),
    ]))
    .unwrap();
    assert_eq!(report.summary.bad_rows.len(), 1);
    assert_eq!(report.summary.bad_rows[0].line, 2);
    assert_eq!(report.summary.sources[1].rows_skipped, 1);
    let t = Table::open(report.bytes).unwrap();
    let date = Date::from_ymd(2026, 3, 1).unwrap();
    let addr = |line1: &str| Address {
        line1: line1.into(),
        postal_code: "37203".into(),
        region: "TN".into(),
        country: "US".into(),
        ..Default::default()
    };
    let loc = t.resolve(&addr("150 North Main Street"), date).unwrap();
    assert_eq!(
        (loc.status, loc.precision),
        (ResolutionStatus::Exact, Precision::Street)
    );
    let codes: Vec<&str> = t
        .jset(loc.jset.unwrap())
        .map(|j| t.jurisdiction(j).unwrap().code())
        .collect();
    assert_eq!(codes, vec!["47", "47037", "4752006"]);
    // 151 is odd: the even-only range does not hold it; the ZIP decides.
    let loc = t.resolve(&addr("151 N Main St"), date).unwrap();
    assert_eq!(
        (loc.status, loc.precision),
        (ResolutionStatus::PostalFallback1, Precision::Postal)
    );
}

#[test]
fn curated_base_under_published_rates() {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data"));
    if !data.join("taxonomy.toml").is_file() {
        println!("skipped: no curated data at {}", data.display());
        return;
    }
    let d = dir("curated");
    let zip5 = write(
        &d,
        "TAXRATES_ZIP5_TN202512.csv",
        &format!(
            "{ZIP5_HEADER}TN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0\n"
        ),
    );
    let report = build(&BuildOptions {
        inputs: vec![Input::new(InputKind::Zip5, &zip5)],
        curated: Some(levy_build::CuratedSource::Dir(data)),
        build_time: Some(0),
        ..Default::default()
    })
    .unwrap();
    assert!(report.summary.sources.iter().any(|s| s.kind == "curated"));
    let t = Table::open(report.bytes).unwrap();
    let date = Date::from_ymd(2026, 1, 2).unwrap();
    let loc = t
        .resolve(
            &Address {
                postal_code: "37203".into(),
                country: "US".into(),
                ..Default::default()
            },
            date,
        )
        .unwrap();
    // Tennessee's state rule is written once in force on any day (the curated 7% and the
    // ZIP5 table's 7% do not add up): tax on $100.00 of general merchandise is $9.25.
    let sale = levy_core::Sale {
        currency: levy_core::Currency::USD,
        tax_included: false,
        customer: Default::default(),
        automatic_tax: Default::default(),
        date,
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![levy_core::SaleLine {
            amount: Decimal::from(10_000),
            quantity: 1,
            per_unit: false,
            tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
        }],
    };
    assert_eq!(
        t.calculate(&loc, &sale).unwrap().total_tax,
        Decimal::from(925)
    );
}
