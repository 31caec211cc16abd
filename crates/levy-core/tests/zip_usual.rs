//! A ZIP code's usual answer is kept in memory after its first lookup (one word a ZIP: its
//! one period's set, coverage and days, the days held within 16 bits). Whatever a ZIP's
//! periods and whatever the day, in whatever order ZIPs and days are asked for, the answer
//! is the one the ZIP's periods give: the set of the period in force that day, else the
//! state's, as the interface defines a ZIP lookup (no cache can make it otherwise).
//!
//! The expected answers are worked out here from the periods the test itself wrote, not by
//! levy: the period whose first and last days enclose the day, or, when none does, the
//! state's set at province precision with `STATE_ONLY` coverage.

mod common;

use levy_core::*;
use proptest::prelude::*;

/// Days where the word's 16-bit fields are cut (0, 65535) and the days around them, the
/// open ends, days of today, and any day at all.
fn any_day() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(i32::MIN),
        Just(i32::MAX),
        -3..=3i32,
        65_530..=65_540i32,
        20_400..=20_500i32,
        any::<i32>(),
    ]
}

/// One ZIP's periods: one to three disjoint intervals, ascending, each with a set (which of
/// three counties join the state) and a coverage code.
type Periods = Vec<(i32, i32, u8, u8)>;

fn periods() -> impl Strategy<Value = Periods> {
    (
        proptest::collection::btree_set(any_day(), 2..=6),
        proptest::collection::vec((0u8..8, 0u8..3), 3),
    )
        .prop_map(|(days, sets)| {
            let days: Vec<i32> = days.into_iter().collect();
            days.chunks_exact(2)
                .zip(sets)
                .map(|(pair, (set, coverage))| (pair[0], pair[1], set, coverage))
                .collect()
        })
}

/// One ZIP's periods as written: first and last day, set id, coverage code.
type Written = Vec<(i32, i32, u32, u8)>;

fn coverage(code: u8) -> Coverage {
    match code {
        2 => Coverage::Full,
        1 => Coverage::Partial,
        _ => Coverage::StateOnly,
    }
}

/// The table: Tennessee (state 47) and three counties; each of the ZIPs 37001, 37002, ...
/// in Tennessee, with city `CITY1`, `CITY2`, ... and the given periods. Also returns, per
/// ZIP, its periods with their set ids, and the state's set id.
fn table(zips: &[Periods]) -> (Table<AlignedBytes>, Vec<Written>, u32) {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let mut jur = |code: &str, level| b.jurisdiction(common::tennessee(code, level)).unwrap();
    let tn = jur("47", Level::State);
    let counties = [
        jur("47001", Level::County),
        jur("47003", Level::County),
        jur("47005", Level::County),
    ];
    b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
    b.region_coverage("US", "TN", Coverage::StateOnly).unwrap();
    let state_set = b.jset(&[tn]).unwrap();
    let mut written = Vec::new();
    for (i, periods) in zips.iter().enumerate() {
        let zip = 37_001 + i as u32;
        let mut mine = Vec::new();
        for &(from, to, set, cov) in periods {
            let mut members = vec![tn];
            members.extend((0..3).filter(|k| set >> k & 1 == 1).map(|k| counties[k]));
            let city = format!("CITY{}", i + 1);
            b.zip_period(
                zip,
                "TN",
                &city,
                &members,
                Date(from),
                Date(to),
                coverage(cov),
                0,
            )
            .unwrap();
            mine.push((from, to, b.jset(&members).unwrap(), cov));
        }
        written.push(mine);
    }
    let table = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    (table, written, state_set)
}

fn zip_address(i: usize, region: &str) -> Address {
    Address {
        postal_code: format!("{}", 37_001 + i),
        region: region.into(),
        country: "US".into(),
        ..Address::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_zips_answer_is_its_periods_on_every_day_and_every_lookup(
        zips in proptest::collection::vec(periods(), 1..=4),
        asks in proptest::collection::vec((0usize..4, any_day(), any::<bool>()), 1..=40),
    ) {
        let (t, written, state_set) = table(&zips);
        let mut kept = Location::default();
        for (i, day, with_region) in asks {
            let i = i % zips.len();
            let date = Date(day);
            let region = if with_region { "TN" } else { "" };
            let address = zip_address(i, region);
            let fresh = t.resolve(&address, date).unwrap();
            t.resolve_into(&address, date, &mut kept).unwrap();
            prop_assert_eq!(&kept, &fresh);
            let expected = written[i]
                .iter()
                .find(|&&(from, to, _, _)| from <= day && day <= to)
                .map_or(
                    (state_set, Coverage::StateOnly, Precision::Province),
                    |&(_, _, set, cov)| (set, coverage(cov), Precision::Postal),
                );
            prop_assert_eq!(
                (fresh.jset, fresh.coverage, fresh.precision),
                (Some(JsetId(expected.0)), expected.1, expected.2),
                "ZIP {} on day {}, periods {:?}", 37_001 + i, day, &written[i]
            );
            // The address used names the ZIP's state and city, read from the table.
            let used = t.address_used(&fresh);
            // Moved out of a location the caller is done with, the same address.
            prop_assert_eq!(&t.take_address_used(&mut fresh.clone()), &used);
            let (city, postal) = (format!("CITY{}", i + 1), format!("{}", 37_001 + i));
            prop_assert_eq!(
                (used.region.as_str(), used.city.as_str(), used.postal_code.as_str()),
                ("TN", city.as_str(), postal.as_str())
            );
            // A region other than the ZIP's is refused, whether or not the ZIP's answer
            // is already in memory.
            let refused = matches!(
                t.resolve(&zip_address(i, "CO"), date),
                Err(ResolveError::ZipStateMismatch { .. })
            );
            prop_assert!(refused, "ZIP {} given as in CO on day {}", 37_001 + i, day);
        }
    }
}

/// The one period of ZIP 37001 runs from day 0 to day 65,535, the edges of the word's day
/// fields: the days at and beyond them are answered as the periods say, before and after
/// the ZIP's word is filled.
#[test]
fn the_days_at_the_edges_of_the_words_fields_answer_as_the_period_says() {
    let (t, written, state_set) = table(&[vec![(0, 65_535, 1, 2)]]);
    let zip_set = written[0][0].2;
    let a = zip_address(0, "");
    for _ in 0..2 {
        for (day, set) in [
            (i32::MIN, state_set),
            (-1, state_set),
            (0, zip_set),
            (1, zip_set),
            (65_534, zip_set),
            (65_535, zip_set),
            (65_536, state_set),
            (i32::MAX, state_set),
        ] {
            let loc = t.resolve(&a, Date(day)).unwrap();
            assert_eq!(loc.jset, Some(JsetId(set)), "day {day}");
        }
    }
}
