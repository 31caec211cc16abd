//! Delivery charges taxed in proportion to the taxable goods of the same sale: a hand-worked
//! case, and the invariants over random sales (lines sum to the totals, the tax-included
//! identity holds, a delivery charge never pays more than in full nor anything beside only
//! exempt goods).

mod common;

use common::d;
use levy_core::*;
use proptest::prelude::*;

/// Tennessee-like: a state at `state` ten-thousandths and a county at `county`; general
/// goods taxed by both, groceries exempt in both, shipping taxed in proportion by both.
fn table(state: i64, county: i64) -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.tax_code("GROCERIES", Some("GENERAL_MERCHANDISE"), "food")
        .unwrap();
    b.tax_code("SHIPPING", Some("GENERAL_MERCHANDISE"), "shipping")
        .unwrap();
    for c in ["GENERAL_MERCHANDISE", "GROCERIES", "SHIPPING"] {
        b.category(c, c);
    }
    let mut ids = Vec::new();
    for (code, level, rate) in [("S", Level::State, state), ("C", Level::County, county)] {
        let j = b.jurisdiction(common::tennessee(code, level)).unwrap();
        let rate = Decimal::new(rate, 4);
        let flat = |code: &str, rate| RuleSpec::flat(j, code, rate, Date::MIN, Date::MAX, "R");
        b.rule(flat("GENERAL_MERCHANDISE", rate)).unwrap();
        b.rule(flat("GROCERIES", Decimal::ZERO)).unwrap();
        let mut ship = flat("SHIPPING", rate);
        ship.proportional = true;
        b.rule(ship).unwrap();
        ids.push(j);
    }
    b.region("US", "TN", "TENNESSEE", &ids, "").unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn place(t: &Table<AlignedBytes>) -> Location {
    t.resolve(
        &Address {
            region: "TN".into(),
            country: "US".into(),
            ..Default::default()
        },
        common::day(),
    )
    .unwrap()
}

fn line(t: &Table<AlignedBytes>, code: &str, cents: i64) -> SaleLine {
    SaleLine {
        amount: Decimal::from(cents),
        quantity: 1,
        per_unit: false,
        tax_code: t.category(code).unwrap(),
    }
}

#[test]
fn shipping_is_taxed_by_the_taxable_share_of_the_goods() {
    // 7% state and 2.25% county. Goods: $60.00 taxable, $40.00 of exempt groceries; $10.00
    // of shipping. The taxable share is 60 / 100, so $6.00 of the shipping is taxed:
    // 7% of 6.00 = 0.42 and 2.25% of 6.00 = 0.135, 0.555 in all, rounded half up to 0.56.
    // The goods: 9.25% of 60.00 = 5.55. Total 6.11.
    let t = table(700, 225);
    let sale = common::sale(
        vec![
            line(&t, "GENERAL_MERCHANDISE", 6_000),
            line(&t, "GROCERIES", 4_000),
            line(&t, "SHIPPING", 1_000),
        ],
        common::day(),
    );
    let c = t.calculate(&place(&t), &sale).unwrap();
    assert_eq!(c.lines[2].tax, d("56"));
    assert_eq!(c.lines[2].jurisdictions[0].taxable_base, d("600"));
    assert_eq!(c.lines[2].jurisdictions[0].tax_due, d("42"));
    assert_eq!(c.lines[2].jurisdictions[1].tax_due, d("13.5"));
    assert_eq!(c.total_tax, d("611"));
    // With only exempt goods the shipping owes nothing; with only taxable goods, or alone,
    // all of it: 9.25% of 10.00 = 0.925 -> 0.93.
    let only = |goods: &str| {
        let mut lines = vec![line(&t, "SHIPPING", 1_000)];
        if !goods.is_empty() {
            lines.insert(0, line(&t, goods, 5_000));
        }
        t.calculate(&place(&t), &common::sale(lines, common::day()))
            .unwrap()
            .lines
            .last()
            .unwrap()
            .tax
    };
    assert_eq!(only("GROCERIES"), d("0"));
    assert_eq!(only("GENERAL_MERCHANDISE"), d("93"));
    assert_eq!(only(""), d("93"));
    // Tax included: $10.56 of shipping beside the same goods (the goods given as $60.00
    // + 5.55 and $40.00) backs out to $10.00 and 0.56 of tax.
    let mut sale = common::sale(
        vec![
            line(&t, "GENERAL_MERCHANDISE", 6_555),
            line(&t, "GROCERIES", 4_000),
            line(&t, "SHIPPING", 1_056),
        ],
        common::day(),
    );
    sale.tax_included = true;
    let c = t.calculate(&place(&t), &sale).unwrap();
    assert_eq!(
        (c.lines[2].amount_excluding_tax, c.lines[2].tax),
        (d("1000"), d("56"))
    );
}

#[derive(Clone, Debug)]
enum Kind {
    Goods,
    Food,
    Shipping,
}

fn gen_lines() -> impl Strategy<Value = Vec<(Kind, i64)>> {
    proptest::collection::vec(
        (
            prop_oneof![Just(Kind::Goods), Just(Kind::Food), Just(Kind::Shipping)],
            0i64..=5_000_000,
        ),
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The tax of delivery lines, allocated line by line, sums exactly to the order's total,
    /// each line keeps `excluding + tax == including` with the given side unchanged, and a
    /// delivery line owes between nothing and its tax in full.
    #[test]
    fn delivery_tax_adds_up(state in 0i64..=1_000, county in 0i64..=500, lines in gen_lines(), incl in any::<bool>()) {
        let t = table(state, county);
        let code = |k: &Kind| match k {
            Kind::Goods => "GENERAL_MERCHANDISE",
            Kind::Food => "GROCERIES",
            Kind::Shipping => "SHIPPING",
        };
        let mut sale = common::sale(lines.iter().map(|(k, a)| line(&t, code(k), *a)).collect(), common::day());
        sale.tax_included = incl;
        let c = t.calculate(&place(&t), &sale).unwrap();
        let sum = |f: fn(&LineTax) -> Decimal| c.lines.iter().map(f).sum::<Decimal>();
        prop_assert_eq!(c.total_tax, sum(|l| l.tax));
        prop_assert_eq!(c.total_excluding_tax, sum(|l| l.amount_excluding_tax));
        prop_assert_eq!(c.total_including_tax, sum(|l| l.amount_including_tax));
        let goods = lines.iter().any(|(k, a)| matches!(k, Kind::Goods) && *a > 0);
        let food = lines.iter().any(|(k, a)| matches!(k, Kind::Food) && *a > 0);
        for (l, (k, a)) in c.lines.iter().zip(&lines) {
            prop_assert_eq!(l.amount_excluding_tax + l.tax, l.amount_including_tax);
            let given = if incl { l.amount_including_tax } else { l.amount_excluding_tax };
            prop_assert_eq!(given, Decimal::from(*a));
            prop_assert_eq!(l.tax, l.tax.trunc());
            prop_assert!(l.tax >= Decimal::ZERO);
            if matches!(k, Kind::Shipping) && !incl {
                // In full at most: the rates on the whole amount, rounded half up.
                let full = (Decimal::from(*a) * Decimal::new(state + county, 4))
                    .round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
                prop_assert!(l.tax <= full, "{} > {}", l.tax, full);
                if food && !goods {
                    prop_assert_eq!(l.tax, Decimal::ZERO);
                }
                if goods && !food {
                    prop_assert_eq!(l.tax, full);
                }
            }
        }
    }
}
