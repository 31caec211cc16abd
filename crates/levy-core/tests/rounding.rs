//! Invoice-level rounding: one rounding for the sale, shared out to the lines, only where
//! the state allows it; the lines always add up to the total.

mod common;

use common::d;
use levy_core::*;
use proptest::prelude::*;

/// Ohio-like (5.75%, invoice rounding allowed) and Texas-like (6.25%, not listed).
fn table() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    for (code, state, rate) in [("39", "OH", 575), ("48", "TX", 625)] {
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: code.into(),
                name: state.into(),
                level: Level::State,
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
        b.region("US", state, state, &[j], "").unwrap();
    }
    b.region_invoice_rounding("US", "OH", true).unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn calc(
    t: &Table<AlignedBytes>,
    state: &str,
    cents: &[i64],
    rounding: Rounding,
    incl: bool,
) -> Calculation {
    let loc = t
        .resolve(
            &Address {
                region: state.into(),
                country: "US".into(),
                ..Default::default()
            },
            common::day(),
        )
        .unwrap();
    let mut sale = common::sale(
        cents
            .iter()
            .map(|c| SaleLine {
                amount: Decimal::from(*c),
                quantity: 1,
                per_unit: false,
                tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
            })
            .collect(),
        common::day(),
    );
    sale.rounding = rounding;
    sale.tax_included = incl;
    t.calculate(&loc, &sale).unwrap()
}

#[test]
fn invoice_rounding_rounds_once_where_the_state_allows_it() {
    let t = table();
    // Three 10-cent items in Ohio at 5.75%: each owes 0.575 cents. Line by line, each
    // rounds half up to 1 cent: 3 cents. Once for the invoice: 1.725 -> 2 cents, shared
    // out from the line rounding (1, 1, 1) by taking a cent back from a line rounded up
    // the most; all three moved equally, so the last one gives it: (1, 1, 0).
    let line = calc(&t, "OH", &[10, 10, 10], Rounding::Line, false);
    assert_eq!((line.rounding, line.total_tax), (Rounding::Line, d("3")));
    let inv = calc(&t, "OH", &[10, 10, 10], Rounding::Invoice, false);
    assert_eq!((inv.rounding, inv.total_tax), (Rounding::Invoice, d("2")));
    let taxes: Vec<Decimal> = inv.lines.iter().map(|l| l.tax).collect();
    assert_eq!(taxes, vec![d("1"), d("1"), d("0")]);
    assert_eq!(inv.total_including_tax, d("32"));
    // Texas is not a Streamlined state here: the request is honoured line by line and the
    // answer says so (6.25% of 10 cents = 0.625 -> 1, three times).
    let tx = calc(&t, "TX", &[10, 10, 10], Rounding::Invoice, false);
    assert_eq!((tx.rounding, tx.total_tax), (Rounding::Line, d("3")));
    // Amounts including tax are backed out line by line.
    let incl = calc(&t, "OH", &[11, 11, 11], Rounding::Invoice, true);
    assert_eq!(incl.rounding, Rounding::Line);
}

proptest! {
    /// With invoice rounding the lines add up to the total, each line keeps
    /// `excluding + tax == including` with its amount unchanged, no line's tax is negative,
    /// and the total is the unrounded sum rounded once, half up.
    #[test]
    fn invoice_rounding_adds_up(cents in proptest::collection::vec(0i64..=100_000, 1..12)) {
        let t = table();
        let c = calc(&t, "OH", &cents, Rounding::Invoice, false);
        prop_assert_eq!(c.rounding, Rounding::Invoice);
        prop_assert_eq!(c.total_tax, c.lines.iter().map(|l| l.tax).sum::<Decimal>());
        let due: Decimal = c.lines.iter().flat_map(|l| l.jurisdictions.iter().map(|j| j.tax_due)).sum();
        prop_assert_eq!(c.total_tax, round_minor(due));
        for (l, a) in c.lines.iter().zip(&cents) {
            prop_assert_eq!(l.amount_excluding_tax, Decimal::from(*a));
            prop_assert_eq!(l.amount_excluding_tax + l.tax, l.amount_including_tax);
            prop_assert!(l.tax >= Decimal::ZERO);
            // Never more than a cent from the line's own rounding.
            let own: Decimal = round_minor(l.jurisdictions.iter().map(|j| j.tax_due).sum());
            prop_assert!((l.tax - own).abs() <= Decimal::ONE);
        }
    }
}
