//! Sourcing: which address's jurisdictions tax a sale shipped within one state (origin,
//! modified origin, origin with local use taxes up to a cap), and that a sale between states
//! is always taxed at the destination.

mod common;

use common::d;
use levy_core::*;
use proptest::prelude::*;

/// (code, level, state, rate in ten-thousandths).
const JURISDICTIONS: &[(&str, Level, &str, i64)] = &[
    ("48", Level::State, "TX", 625),
    ("TX-CO-O", Level::County, "TX", 50),
    ("TX-CI-D", Level::City, "TX", 100),
    ("TX-CO-D", Level::County, "TX", 50),
    ("TX-DI-D", Level::District, "TX", 100),
    ("39", Level::State, "OH", 575),
    ("OH-CO-O", Level::County, "OH", 125),
    ("OH-CO-D", Level::County, "OH", 225),
    ("06", Level::State, "CA", 725),
    ("CA-DI-O", Level::District, "CA", 100),
    ("CA-DI-D", Level::District, "CA", 225),
    ("36", Level::State, "NY", 400),
    ("NY-CI-D", Level::City, "NY", 450),
];

/// ZIP codes: (zip, state, the jurisdictions by code).
const ZIPS: &[(u32, &str, &[&str])] = &[
    (75102, "TX", &["48", "TX-CO-O"]),
    (78701, "TX", &["48", "TX-CI-D", "TX-CO-D", "TX-DI-D"]),
    (43215, "OH", &["39", "OH-CO-O"]),
    (44113, "OH", &["39", "OH-CO-D"]),
    (95132, "CA", &["06", "CA-DI-O"]),
    (94043, "CA", &["06", "CA-DI-D"]),
    (10001, "NY", &["36", "NY-CI-D"]),
    (12207, "NY", &["36"]),
];

fn table() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    let mut ids = Vec::new();
    for &(code, level, state, rate) in JURISDICTIONS {
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: code.into(),
                name: code.into(),
                level,
                country: "US".into(),
                region: state.into(),
                authority: String::new(),
                tax_type: TaxType::Sales,
            })
            .unwrap();
        b.rule(RuleSpec::flat(
            j,
            "GENERAL_MERCHANDISE",
            Decimal::new(rate, 4),
            Date::MIN,
            Date::MAX,
            "R",
        ))
        .unwrap();
        ids.push((code, j));
    }
    let id = |code: &str| ids.iter().find(|(c, _)| *c == code).unwrap().1;
    for state in ["TX", "OH", "CA", "NY"] {
        let fips = JURISDICTIONS
            .iter()
            .find(|j| j.2 == state && j.1 == Level::State)
            .unwrap()
            .0;
        b.region("US", state, state, &[id(fips)], "").unwrap();
    }
    for &(zip, state, codes) in ZIPS {
        let js: Vec<_> = codes.iter().map(|c| id(c)).collect();
        b.zip(zip, state, "", &js, 0).unwrap();
    }
    b.region_sourcing("US", "TX", Sourcing::OriginWithUseTax, Decimal::new(2, 2))
        .unwrap();
    // Texas has local taxes: an answer for the state alone is STATE_ONLY.
    b.region_coverage("US", "TX", Coverage::StateOnly).unwrap();
    b.region_sourcing("US", "OH", Sourcing::Origin, Decimal::ZERO)
        .unwrap();
    b.region_sourcing("US", "CA", Sourcing::ModifiedOrigin, Decimal::ZERO)
        .unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn at(t: &Table<AlignedBytes>, zip: u32) -> Location {
    t.resolve(
        &Address {
            postal_code: format!("{zip:05}"),
            country: "US".into(),
            ..Default::default()
        },
        common::day(),
    )
    .unwrap()
}

fn on_100(t: &Table<AlignedBytes>, from: Option<u32>, to: u32) -> Calculation {
    let line = SaleLine {
        amount: Decimal::from(10_000),
        quantity: 1,
        per_unit: false,
        tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
    };
    let origin = from.map(|z| at(t, z));
    t.calculate_from(
        origin.as_ref(),
        &at(t, to),
        &common::sale(vec![line], common::day()),
    )
    .unwrap()
}

/// The (jurisdiction code, address) of each entry of the calculation's one line.
fn entries(t: &Table<AlignedBytes>, c: &Calculation) -> Vec<(String, Sourced)> {
    c.lines[0]
        .jurisdictions
        .iter()
        .map(|e| {
            (
                t.jurisdiction(e.jurisdiction).unwrap().code().to_string(),
                e.sourced,
            )
        })
        .collect()
}

#[test]
fn texas_origin_local_taxes_then_destination_use_taxes_up_to_two_percent() {
    // 34 TAC 3.334: shipped from 75102 (county 0.5%) to 78701 (city 1%, another county
    // 0.5%, a district 1%): the origin's county 0.5%, then the destination's city (1.5%),
    // its county (2.0%, at the cap), and not the district (3.0% would pass it). State
    // 6.25% + 2% local = 8.25% of $100.00 = 8.25.
    let t = table();
    let c = on_100(&t, Some(75102), 78701);
    assert_eq!(c.sourcing, Sourcing::OriginWithUseTax);
    assert_eq!(
        entries(&t, &c),
        vec![
            ("48".to_string(), Sourced::Origin),
            ("TX-CO-O".to_string(), Sourced::Origin),
            ("TX-CI-D".to_string(), Sourced::Destination),
            ("TX-CO-D".to_string(), Sourced::Destination),
        ]
    );
    assert_eq!(c.total_tax, d("825"));
    // At the destination alone: 6.25 + 1 + 0.5 + 1 = 8.75%.
    assert_eq!(on_100(&t, None, 78701).total_tax, d("875"));
    // The other way, from 78701 (2.5% local already) to 75102: the origin's taxes only,
    // 8.75; the destination's county would pass the cap.
    assert_eq!(on_100(&t, Some(78701), 75102).total_tax, d("875"));
}

#[test]
fn ohio_taxes_at_the_origin_and_california_splits_by_level() {
    let t = table();
    // R.C. 5739.033: from Columbus (county 1.25%) to Cleveland (2.25%): 5.75 + 1.25 = 7.00.
    let c = on_100(&t, Some(43215), 44113);
    assert_eq!(c.sourcing, Sourcing::Origin);
    assert_eq!(c.total_tax, d("700"));
    assert!(c.lines[0]
        .jurisdictions
        .iter()
        .all(|e| e.sourced == Sourced::Origin));
    // California: the state from the origin, districts from the destination: 7.25 + 2.25.
    let c = on_100(&t, Some(95132), 94043);
    assert_eq!(c.sourcing, Sourcing::ModifiedOrigin);
    assert_eq!(
        entries(&t, &c),
        vec![
            ("06".to_string(), Sourced::Origin),
            ("CA-DI-D".to_string(), Sourced::Destination),
        ]
    );
    assert_eq!(c.total_tax, d("950"));
    // New York sources at the destination: from Albany to Manhattan, 4 + 4.5.
    let c = on_100(&t, Some(12207), 10001);
    assert_eq!(c.sourcing, Sourcing::Destination);
    assert_eq!(c.total_tax, d("850"));
}

#[test]
fn an_origin_answer_covers_no_more_than_the_origins_place() {
    // 78701 is placed with every local level (FULL); the Texas region alone (no ZIP) is
    // STATE_ONLY. Shipped from the region-level origin, the answer takes the origin's
    // jurisdictions, so it cannot claim more than STATE_ONLY.
    let t = table();
    let dest = at(&t, 78701);
    assert_eq!(dest.coverage, Coverage::Full);
    let origin = t
        .resolve(
            &Address {
                region: "TX".into(),
                country: "US".into(),
                ..Default::default()
            },
            common::day(),
        )
        .unwrap();
    let line = SaleLine {
        amount: Decimal::from(10_000),
        quantity: 1,
        per_unit: false,
        tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
    };
    let sale = common::sale(vec![line], common::day());
    let c = t.calculate_from(Some(&origin), &dest, &sale).unwrap();
    assert_eq!(c.sourcing, Sourcing::OriginWithUseTax);
    assert_eq!(origin.coverage, Coverage::StateOnly);
    assert_eq!(c.coverage, Coverage::StateOnly);
    // At the destination alone the answer is FULL.
    assert_eq!(t.calculate(&dest, &sale).unwrap().coverage, Coverage::Full);
}

proptest! {
    /// A sale between two states is taxed at the destination whatever its origin: the same
    /// numbers as with no origin at all, every entry sourced at the destination.
    #[test]
    fn sourcing_never_changes_an_interstate_result(from in 0usize..8, to in 0usize..8, cents in 0i64..=10_000_000) {
        let t = table();
        let (origin, dest) = (ZIPS[from], ZIPS[to]);
        prop_assume!(origin.1 != dest.1);
        let line = SaleLine {
            amount: Decimal::from(cents),
            quantity: 1,
            per_unit: false,
            tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
        };
        let sale = common::sale(vec![line], common::day());
        let o = at(&t, origin.0);
        let with = t.calculate_from(Some(&o), &at(&t, dest.0), &sale).unwrap();
        let without = t.calculate(&at(&t, dest.0), &sale).unwrap();
        prop_assert_eq!(&with, &without);
        prop_assert_eq!(with.sourcing, Sourcing::Destination);
        prop_assert!(with.lines[0].jurisdictions.iter().all(|e| e.sourced == Sourced::Destination));
    }
}
