//! The economic-nexus crossings worked by hand in `crates/levy-build/tests/worked/nexus.toml`
//! (each from the statute, regulation or revenue department page its `source` names), run
//! through the evaluator against the shipped thresholds of `data/us-nexus.toml`.

use levy_api::nexus::{evaluate, Month, MonthTotal, Standing, Thresholds};
use levy_core::Date;
use rust_decimal::Decimal;
use toml::Value;

const WORKED: &str = include_str!("../../levy-build/tests/worked/nexus.toml");

fn date(v: &Value) -> Date {
    let d = v.as_datetime().and_then(|d| d.date).expect("a TOML date");
    Date::from_ymd(d.year as i32, d.month as u32, d.day as u32).unwrap()
}

#[test]
fn every_worked_crossing_gives_the_status_and_month_worked_by_hand() {
    let worked: toml::Table = WORKED.parse().unwrap();
    let cases = worked["case"].as_array().unwrap();
    assert_eq!(cases.len(), 15);
    let thresholds = Thresholds::shipped();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let state = case["state"].as_str().unwrap();
        let as_of = date(&case["as_of"]);
        let months: Vec<MonthTotal> = case["sales"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| MonthTotal {
                month: Month::parse(m["month"].as_str().unwrap()).unwrap(),
                sales: m["amount"].as_str().unwrap().parse::<Decimal>().unwrap(),
                count: m["count"].as_integer().unwrap(),
            })
            .collect();
        let row = thresholds
            .of(state, as_of)
            .unwrap_or_else(|| panic!("{name}: no {state} row on the day"));
        let got = evaluate(row, as_of, &months);
        let want = match case["status"].as_str().unwrap() {
            "exposed" => {
                let since = date(&case["since"]);
                assert_eq!(
                    since,
                    Month::of(since).first_day(),
                    "{name}: since is a month's first day"
                );
                Standing::Exposed(Month::of(since))
            }
            "approaching" => Standing::Approaching,
            "below" => Standing::Below,
            other => panic!("{name}: status {other}"),
        };
        assert_eq!(got.standing, want, "{name}: {got:?}");
    }
}

/// Figures of single cases, as their workings give them.
#[test]
fn the_workings_figures() {
    let t = Thresholds::shipped();
    let d = |y, m, dd| Date::from_ymd(y, m, dd).unwrap();
    let mt = |m: &str, s: i64, c: i64| MonthTotal {
        month: Month::parse(m).unwrap(),
        sales: Decimal::from(s),
        count: c,
    };
    // California, exactly $500,000 in 2026: 100% of the figure, not crossed (more_than).
    let ca = evaluate(
        t.of("CA", d(2026, 12, 15)).unwrap(),
        d(2026, 12, 15),
        &[
            mt("2025-06", 350_000, 200),
            mt("2026-05", 200_000, 90),
            mt("2026-10", 300_000, 110),
        ],
    );
    assert_eq!(ca.measured[1].sales, Decimal::from(500_000));
    assert_eq!(ca.percent, Some(Decimal::from(100)));
    // Connecticut: 180,000 and 150 sales; with `and` the smaller, 150/200 = 75%.
    let ct = evaluate(
        t.of("CT", d(2026, 11, 2)).unwrap(),
        d(2026, 11, 2),
        &[mt("2025-11", 150_000, 100), mt("2026-05", 30_000, 50)],
    );
    assert_eq!(
        (ct.measured[0].sales, ct.measured[0].count),
        (Decimal::from(180_000), 150)
    );
    assert_eq!(ct.percent, Some(Decimal::from(75)));
    // Illinois from 2026: $80,000 of $100,000 is 80%; the 260 transactions do not count.
    let il_months: Vec<MonthTotal> = [
        ("2025-04", 30),
        ("2025-06", 30),
        ("2025-08", 30),
        ("2025-10", 30),
        ("2025-12", 30),
        ("2026-01", 40),
        ("2026-02", 40),
        ("2026-03", 30),
    ]
    .iter()
    .map(|(m, c)| mt(m, 10_000, *c))
    .collect();
    let il = evaluate(
        t.of("IL", d(2026, 4, 15)).unwrap(),
        d(2026, 4, 15),
        &il_months,
    );
    assert_eq!(
        (il.measured[0].sales, il.measured[0].count),
        (Decimal::from(80_000), 260)
    );
    assert_eq!(il.percent, Some(Decimal::from(80)));
    // The same months under the row before 2026 would have crossed the 200 transactions.
    let il_old = t.of("IL", d(2025, 12, 31)).unwrap();
    assert_eq!(
        evaluate(il_old, d(2026, 4, 15), &il_months).standing,
        Standing::Exposed(Month::parse("2026-02").unwrap())
    );
}
