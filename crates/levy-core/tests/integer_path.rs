//! The integer hot path (format 4's rule keys): a plain rule whose rate is held as a
//! mantissa and a scale of at most 12 is taxed in integer arithmetic. Its answers must be
//! the decimal arithmetic's to the last digit, scale included; and the batch API must give
//! exactly what one calculation at a time gives.

use levy_core::*;
use levy_testkit::sale::march_2026 as day;
use proptest::prelude::*;

/// A one-region table whose region is taxed by one jurisdiction per rate (state first,
/// then counties), each a flat rule on `GENERAL_MERCHANDISE`.
fn table(rates: &[Decimal]) -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    let mut set = Vec::new();
    for (i, rate) in rates.iter().enumerate() {
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: format!("47{i:03}"),
                name: format!("PLACE {i}"),
                level: if i == 0 { Level::State } else { Level::County },
                country: "US".into(),
                region: "TN".into(),
                authority: "REVENUE".into(),
                tax_type: TaxType::Sales,
            })
            .unwrap();
        b.rule(RuleSpec::flat(
            j,
            "GENERAL_MERCHANDISE",
            *rate,
            Date::MIN,
            Date::MAX,
            "GENERAL",
        ))
        .unwrap();
        set.push(j);
    }
    b.region("US", "TN", "TENNESSEE", &set, "").unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn tennessee<D>(t: &Table<D>) -> Location {
    let a = Address {
        region: "TN".into(),
        country: "US".into(),
        ..Default::default()
    };
    t.resolve(&a, day()).unwrap()
}

fn sale<D>(t: &Table<D>, lines: &[(i64, u32)]) -> Sale {
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date: day(),
        origin_country: None,
        rounding: Rounding::Line,
        lines: lines
            .iter()
            .map(|&(amount, quantity)| SaleLine {
                amount: Decimal::from(amount),
                quantity,
                per_unit: false,
                tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
            })
            .collect(),
    }
}

#[test]
fn a_tennessee_sale_by_hand() {
    // $123.45 at 7% + 2.25%: 12,345 × 0.0925 = 1,141.9125 cents, rounded half away from
    // zero: 1,142. The entries keep each rate's own digits: 12,345 × 0.07 = 864.15 and
    // 12,345 × 0.0225 = 277.7625.
    let t = table(&["0.07".parse().unwrap(), "0.0225".parse().unwrap()]);
    let c = t
        .calculate(&tennessee(&t), &sale(&t, &[(12_345, 1)]))
        .unwrap();
    assert_eq!(c.total_tax.to_string(), "1142");
    let e = &c.lines[0].jurisdictions;
    assert_eq!(e[0].tax_due.to_string(), "864.15");
    assert_eq!(e[0].rate.to_string(), "0.07");
    assert_eq!(e[1].tax_due.to_string(), "277.7625");
    assert_eq!(e[1].taxable_base.to_string(), "12345");
    // The line rounds once, half away from zero, over both entries.
    let c = t
        .calculate(&tennessee(&t), &sale(&t, &[(50, 1), (10, 1)]))
        .unwrap();
    assert_eq!(c.lines[0].tax.to_string(), "5"); // 3.5 + 1.125 = 4.625 -> 5
    assert_eq!(c.lines[1].tax.to_string(), "1"); // 0.7 + 0.225 = 0.925 -> 1
}

#[test]
fn a_rate_finer_than_the_integer_path_takes_the_decimal_path_with_the_same_rules() {
    // 13 decimal places is beyond the integer path (scale 12): the decimal path answers,
    // 10,000 × 0.0700000000001 = 700.000000001 -> 700.
    let t = table(&["0.0700000000001".parse().unwrap()]);
    let c = t
        .calculate(&tennessee(&t), &sale(&t, &[(10_000, 1)]))
        .unwrap();
    assert_eq!(
        c.lines[0].jurisdictions[0].tax_due.to_string(),
        "700.000000001"
    );
    assert_eq!(c.total_tax.to_string(), "700");
}

#[test]
fn a_batch_gives_what_one_at_a_time_gives_and_reuses_its_buffers() {
    let t = table(&["0.07".parse().unwrap(), "0.0275".parse().unwrap()]);
    let loc = tennessee(&t);
    let sales: Vec<Sale> = (1..=5)
        .map(|i| sale(&t, &vec![(1_000 * i, 1); i as usize]))
        .collect();
    let mut out = Vec::new();
    let errors = t.calculate_batch(sales.iter().map(|s| (&loc, s)), &mut out);
    assert!(errors.is_empty());
    assert_eq!(out.len(), 5);
    for (s, c) in sales.iter().zip(&out) {
        assert_eq!(c, &t.calculate(&loc, s).unwrap());
    }
    // A smaller batch into the same buffer: the results shrink to it.
    let errors = t.calculate_batch(sales[..2].iter().map(|s| (&loc, s)), &mut out);
    assert!(errors.is_empty());
    assert_eq!(out.len(), 2);
    assert_eq!(out[1], t.calculate(&loc, &sales[1]).unwrap());
    // A bad sale is reported by index, its entry left empty; the others are answered.
    let mut bad = sales[0].clone();
    bad.lines[0].quantity = 0;
    let batch = [sales[2].clone(), bad, sales[3].clone()];
    let errors = t.calculate_batch(batch.iter().map(|s| (&loc, s)), &mut out);
    assert_eq!(errors, vec![(1, CalcError::Quantity { line: 0 })]);
    assert!(out[1].lines.is_empty());
    assert_eq!(out[1].total_tax, Decimal::ZERO);
    assert_eq!(out[2], t.calculate(&loc, &sales[3]).unwrap());
    // A batch longer than the look-ahead (8 sales), with a place outside the table (no
    // jurisdictions: zero rate) among them and a bad sale at index 12.
    let nowhere = Location::default();
    let mut long: Vec<(&Location, Sale)> = (0..20)
        .map(|i| {
            let at = if i % 3 == 1 { &nowhere } else { &loc };
            (at, sales[i % 5].clone())
        })
        .collect();
    long[12].1.lines[0].quantity = 0;
    let errors = t.calculate_batch(long.iter().map(|(l, s)| (*l, s)), &mut out);
    assert_eq!(errors, vec![(12, CalcError::Quantity { line: 0 })]);
    assert_eq!(out.len(), 20);
    for (i, ((l, s), c)) in long.iter().zip(&out).enumerate() {
        if i == 12 {
            assert!(c.lines.is_empty());
        } else {
            assert_eq!(c, &t.calculate(l, s).unwrap(), "sale {i}");
        }
    }
    // Index 1 is the zero-rate place: no tax; index 0 is Tennessee's.
    assert_eq!(out[1].total_tax, Decimal::ZERO);
    assert_ne!(out[0].total_tax, Decimal::ZERO);
}

/// The reference: the decimal arithmetic written out plainly. Each jurisdiction's tax due
/// is `amount × rate`; the line's tax is their sum rounded half away from zero.
fn reference(rates: &[Decimal], amount: i64) -> (Vec<Decimal>, Decimal) {
    let dues: Vec<Decimal> = rates
        .iter()
        .map(|r| (Decimal::from(amount) * r).normalize())
        .collect();
    let sum: Decimal = dues.iter().copied().sum();
    let tax = sum
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .normalize();
    (dues, tax)
}

use rust_decimal::RoundingStrategy;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// On random rates (mantissas up to 10^7, scales 0 to 14, so some take the decimal
    /// path) and random amounts up to the largest accepted, every line's tax and every
    /// entry's tax due and rate are the reference's, digit for digit.
    #[test]
    fn the_integer_path_is_the_decimal_arithmetic(
        rates in proptest::collection::vec((0i64..10_000_000, 0u32..15), 1..5),
        lines in proptest::collection::vec((0i64..=MAX_AMOUNT_MINOR, 1u32..1000), 1..4),
    ) {
        let rates: Vec<Decimal> = rates
            .into_iter()
            .map(|(m, s)| Decimal::new(m, s).min(MAX_RATE))
            .collect();
        let t = table(&rates);
        let c = t.calculate(&tennessee(&t), &sale(&t, &lines)).unwrap();
        let mut total = Decimal::ZERO;
        for (line, (amount, _)) in c.lines.iter().zip(&lines) {
            let (dues, tax) = reference(&rates, *amount);
            prop_assert_eq!(line.tax.to_string(), tax.to_string());
            for ((e, due), rate) in line.jurisdictions.iter().zip(&dues).zip(&rates) {
                prop_assert_eq!(e.tax_due.to_string(), due.to_string());
                prop_assert_eq!(e.rate.to_string(), rate.to_string());
                prop_assert_eq!(e.taxable_base, Decimal::from(*amount));
            }
            total += tax;
        }
        prop_assert_eq!(c.total_tax, total);
    }
}
