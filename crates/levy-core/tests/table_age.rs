//! A table's span in time, at the front door: a sale before the first day the table holds
//! its state's tax is refused (`DATE_BEFORE_TABLE`), one after the horizon of an input
//! whose rules it used is answered at most `PARTIAL` with the `STALE_TABLE` note, one
//! between the two as before; alike one at a time and in a batch.

mod common;

use common::{tennessee, us_zip};
use levy_core::model::SourceEntry;
use levy_core::quote::{Order, Quoter};
use levy_core::*;

fn day(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap()
}

/// Tennessee 7% from 2002-07-15 (Tenn. Code Ann. 67-6-202, data/us-states.toml) from a
/// curated input held to 2027-03-31, and Davidson County 2.25% from an input held to
/// 2026-03-31 (a rate file for the first quarter of 2026), in ZIP 37203.
fn table() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    let curated = b.add_source(SourceEntry {
        kind: "curated".into(),
        name: "us-states.toml".into(),
        horizon: day(2027, 3, 31).0,
        ..Default::default()
    });
    let quarterly = b.add_source(SourceEntry {
        kind: "sst-rates".into(),
        name: "TNR2026Q1.csv".into(),
        period: "2026Q1".into(),
        horizon: day(2026, 3, 31).0,
        ..Default::default()
    });
    let tn = b.jurisdiction(tennessee("47", Level::State)).unwrap();
    let davidson = b.jurisdiction(tennessee("47037", Level::County)).unwrap();
    let mut state = RuleSpec::flat(
        tn,
        "GENERAL_MERCHANDISE",
        Decimal::new(7, 2),
        day(2002, 7, 15),
        Date::MAX,
        "GENERAL",
    );
    state.source = curated;
    b.rule(state).unwrap();
    // The county's rate since long before the state's record began: only a state's or a
    // country's first day bounds the table.
    let mut county = RuleSpec::flat(
        davidson,
        "GENERAL_MERCHANDISE",
        Decimal::new(225, 4),
        Date::MIN,
        Date::MAX,
        "GENERAL",
    );
    county.source = quarterly;
    b.rule(county).unwrap();
    b.region("US", "TN", "TENNESSEE", &[tn], "37203").unwrap();
    b.zip(37203, "TN", "NASHVILLE", &[tn, davidson], 20_000)
        .unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn order(t: &Table<AlignedBytes>, date: Date) -> Order {
    let mut o = Order::new();
    o.address = Some(us_zip("37203"));
    o.date = Some(date);
    o.sale.lines.push(SaleLine {
        amount: Decimal::from(10_000),
        quantity: 1,
        per_unit: false,
        tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
    });
    o
}

#[test]
fn a_sale_before_the_states_first_day_is_refused() {
    let t = table();
    let mut q = Quoter::new();
    let e = q.quote(&t, &mut order(&t, day(2002, 7, 14))).unwrap_err();
    assert_eq!(e.kind(), QuoteErrorKind::DateBeforeTable);
    assert_eq!(e.kind().name(), "DATE_BEFORE_TABLE");
    assert!(e.to_string().contains("2002-07-15"), "{e}");
    // On the first day: 7% + 2.25% of $100.00 = $9.25, complete.
    let got = q.quote(&t, &mut order(&t, day(2002, 7, 15))).unwrap();
    assert_eq!(got.calculation.total_tax, Decimal::from(925));
    assert_eq!(got.calculation.stale, None);
    assert_eq!(t.first_day(JurisdictionId(0)), Some(day(2002, 7, 15)));
}

#[test]
fn a_sale_after_a_horizon_says_which_input_and_is_at_most_partial() {
    let t = table();
    let mut q = Quoter::new();
    // At the county's horizon: as before.
    let got = q.quote(&t, &mut order(&t, day(2026, 3, 31))).unwrap();
    assert_eq!(got.calculation.coverage, Coverage::Full);
    assert_eq!(got.calculation.stale, None);
    // The day after: the same tax, $9.25 (the table knows no other), but at most
    // PARTIAL, naming the county's input.
    let got = q.quote(&t, &mut order(&t, day(2026, 4, 1))).unwrap();
    assert_eq!(got.calculation.total_tax, Decimal::from(925));
    assert_eq!(got.calculation.coverage, Coverage::Partial);
    let stale = got.calculation.stale.expect("stale");
    assert_eq!(stale.horizon, day(2026, 3, 31));
    let note = stale.describe(&t);
    assert_eq!(
        note,
        "STALE_TABLE: sst-rates TNR2026Q1.csv (period 2026Q1) is in force to 2026-03-31; \
         rates may have changed since"
    );
    // Past both horizons: the earliest is named.
    let got = q.quote(&t, &mut order(&t, day(2028, 1, 1))).unwrap();
    assert_eq!(got.calculation.stale.unwrap().horizon, day(2026, 3, 31));
    assert_eq!(t.horizon(JurisdictionId(0)), Some((day(2027, 3, 31), 0)));
}

#[test]
fn a_batch_answers_each_day_as_one_sale_at_a_time() {
    let t = table();
    let days = [day(2002, 7, 14), day(2026, 3, 31), day(2026, 4, 1)];
    let mut orders: Vec<Order> = days.iter().map(|&d| order(&t, d)).collect();
    let mut q = Quoter::new();
    let mut out = Vec::new();
    let errors = q.quote_batch(&t, &mut orders, |_| false, &mut out);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, 0);
    assert_eq!(errors[0].1.kind(), QuoteErrorKind::DateBeforeTable);
    assert_eq!(out[1].coverage, Coverage::Full);
    assert_eq!(out[1].stale, None);
    assert_eq!(out[2].coverage, Coverage::Partial);
    assert_eq!(out[2].stale.map(|s| s.horizon), Some(day(2026, 3, 31)));
    assert_eq!(out[2].total_tax, Decimal::from(925));
}

#[test]
fn a_table_made_without_horizons_never_ages() {
    // The scenario table names no input: its rules claim nothing that ages.
    let t = common::scenario();
    let mut q = Quoter::new();
    let got = q.quote(&t, &mut order_scenario(&t)).unwrap();
    assert_eq!(got.calculation.stale, None);
    assert_eq!(got.calculation.coverage, Coverage::Full);
}

fn order_scenario(t: &Table<AlignedBytes>) -> Order {
    let mut o = order(t, day(9999, 12, 31));
    o.address = Some(us_zip("37203"));
    o
}
