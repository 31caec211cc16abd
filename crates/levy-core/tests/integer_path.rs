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

/// Two ZIP codes of one state, which taxes `GENERAL_MERCHANDISE` at 6% to the end of 2025
/// and 6.5% from 2026. Each has its county, taxing every tangible good (the parent code of
/// `GENERAL_MERCHANDISE` and `CLOTHING`) at 1% to the end of 2026; from 2027 the county
/// of 37201 at 1.5%, that of 37202 at 1% of each unit's first $100 only (a band: not a
/// rule the integer path takes). 37201 also has a city, taxing general merchandise at 0.5%
/// from 2027 (its one rule, limited in time). Rule ids, in the builder's order
/// (jurisdiction, code, date): the state's 0 and 1, 37201's county 2 and 3, 37202's county
/// 4 and 5, the city 6.
fn periods_table() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("TANGIBLE", None, "Tangible personal property")
        .unwrap();
    b.tax_code(
        "GENERAL_MERCHANDISE",
        Some("TANGIBLE"),
        "General merchandise",
    )
    .unwrap();
    b.tax_code("CLOTHING", Some("TANGIBLE"), "Clothing")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CLOTHING", "CLOTHING");
    let spec = |code: &str, level| JurisdictionSpec {
        code: code.into(),
        name: code.into(),
        level,
        country: "US".into(),
        region: "TN".into(),
        authority: "REVENUE".into(),
        tax_type: TaxType::Sales,
    };
    let state = b.jurisdiction(spec("47", Level::State)).unwrap();
    let county_a = b.jurisdiction(spec("47001", Level::County)).unwrap();
    let county_b = b.jurisdiction(spec("47003", Level::County)).unwrap();
    let city = b.jurisdiction(spec("4700100", Level::City)).unwrap();
    let ymd = |y, m, d| Date::from_ymd(y, m, d).unwrap();
    let rate = |r: &str| r.parse::<Decimal>().unwrap();
    let (gm, tangible) = ("GENERAL_MERCHANDISE", "TANGIBLE");
    let (to_2025, from_2026) = (ymd(2025, 12, 31), ymd(2026, 1, 1));
    let (to_2026, from_2027) = (ymd(2026, 12, 31), ymd(2027, 1, 1));
    let rules = [
        RuleSpec::flat(state, gm, rate("0.06"), Date::MIN, to_2025, "S"),
        RuleSpec::flat(state, gm, rate("0.065"), from_2026, Date::MAX, "S"),
        RuleSpec::flat(county_a, tangible, rate("0.01"), Date::MIN, to_2026, "C"),
        RuleSpec::flat(county_a, tangible, rate("0.015"), from_2027, Date::MAX, "C"),
        RuleSpec::flat(county_b, tangible, rate("0.01"), Date::MIN, to_2026, "C"),
        RuleSpec {
            band: (Decimal::ZERO, Some(Decimal::from(100))),
            ..RuleSpec::flat(county_b, tangible, rate("0.01"), from_2027, Date::MAX, "C")
        },
        RuleSpec::flat(city, gm, rate("0.005"), from_2027, Date::MAX, "T"),
    ];
    for rule in rules {
        b.rule(rule).unwrap();
    }
    b.zip(37201, "TN", "A", &[state, county_a, city], 0)
        .unwrap();
    b.zip(37202, "TN", "B", &[state, county_b], 0).unwrap();
    b.region("US", "TN", "TENNESSEE", &[state], "").unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

/// A set's rules for the usual code are gathered on its first usual line and kept; the
/// answers must still follow the date (a rate changing, a band coming into force) and the
/// code (another code of the same place), whichever date asked first.
#[test]
fn the_usual_codes_rules_kept_per_set_follow_the_date_and_the_code() {
    let ymd = |y, m, d| Date::from_ymd(y, m, d).unwrap();
    let dates = [ymd(2025, 6, 1), ymd(2026, 3, 1), ymd(2027, 2, 1)];
    // $150.00 (15,000 cents) by hand, per date. General merchandise in 37201: 6% = 900 and
    // 1% = 150, 1,050; 6.5% = 975 and 150, 1,125; 975, 1.5% = 225 and the city's 0.5% = 75,
    // 1,275. In 37202 the same to 2026, then 975 and 1% of the first $100 only = 100, 1,075.
    // Clothing has the county's rate alone: 150, 150, 225 in 37201; 150, 150, 100 in 37202.
    let places = [
        (
            "37201",
            ["1050", "1125", "1275"],
            vec![vec![0, 2], vec![1, 2], vec![1, 3, 6]],
            ["150", "150", "225"],
        ),
        (
            "37202",
            ["1050", "1125", "1075"],
            vec![vec![0, 4], vec![1, 4], vec![1, 5]],
            ["150", "150", "100"],
        ),
    ];
    // The same answers whichever date comes first (the first fills the kept slots).
    for order in [[0, 1, 2, 0], [2, 1, 0, 2], [1, 0, 2, 1]] {
        let t = periods_table();
        for (zip, taxes, rules, clothing_taxes) in &places {
            let address = Address {
                postal_code: zip.to_string(),
                region: "TN".into(),
                country: "US".into(),
                ..Default::default()
            };
            for i in order {
                let date = dates[i];
                let loc = t.resolve(&address, date).unwrap();
                let mut s = sale(&t, &[(15_000, 1)]);
                s.date = date;
                let c = t.calculate(&loc, &s).unwrap();
                assert_eq!(c.total_tax.to_string(), taxes[i], "{zip} {date:?}");
                // Each entry names the rule in force that day.
                let got: Vec<u32> = c.lines[0].jurisdictions.iter().map(|j| j.rule.0).collect();
                assert_eq!(got, rules[i], "{zip} {date:?}");
                // Clothing at the same place, after the usual code's list was kept.
                let mut clothing = s.clone();
                clothing.lines[0].tax_code = t.category("CLOTHING").unwrap();
                let c = t.calculate(&loc, &clothing).unwrap();
                assert_eq!(c.total_tax.to_string(), clothing_taxes[i], "{zip} {date:?}");
                assert_eq!(c.lines[0].jurisdictions.len(), 1, "{zip} {date:?}");
            }
        }
    }
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

/// One sale of [`kept_and_general`]'s mix: the usual one-line sale, or one of the shapes
/// that leave it (two lines, an amount in fractions of a cent, a unit price, an invalid
/// quantity, an exempt or business buyer, an exemption in the state, amounts including
/// tax, invoice rounding, automatic tax off), at Tennessee or at a place with no
/// jurisdictions.
fn mixed_sale<D>(t: &Table<D>, shape: u8, amount: i64, quantity: u32) -> Sale {
    let mut s = sale(t, &[(amount, quantity)]);
    match shape {
        0..=3 => {}
        4 => s.lines.push(s.lines[0].clone()),
        5 => s.lines[0].amount = Decimal::new(amount, 1),
        6 => s.lines[0].per_unit = true,
        7 => s.lines[0].quantity = 0,
        8 => s.customer.exempt = true,
        9 => {
            s.customer.kind = CustomerType::Business;
            s.customer.tax_ids.push(TaxId {
                kind: "VAT".into(),
                value: "GB123456789".into(),
            });
            s.origin_country = Some("GB".into());
        }
        10 => s.customer.exemptions.push(Exemption {
            country: "US".into(),
            region: "TN".into(),
            reference: "CERT-1".into(),
            covers: Covers::Region,
        }),
        11 => s.tax_included = true,
        12 => s.rounding = Rounding::Invoice,
        _ => s.automatic_tax = AutomaticTax::Disabled,
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The usual sale is answered without the general path's steps (`usual_sale`); its
    /// answer must be the general path's to the last field, into a calculation kept from
    /// sales of every other shape. The general path is what a sale with an origin outside
    /// the buyer's state takes (the origin here has no place: taxed at the destination,
    /// nothing else changed), so each sale is calculated both ways and compared whole;
    /// an error must be the same error, the kept calculation left with no lines.
    #[test]
    fn the_usual_sale_kept_is_what_the_general_path_gives(
        rates in proptest::collection::vec((0i64..10_000_000, 0u32..15), 1..4),
        sales in proptest::collection::vec((0u8..14, 0i64..=MAX_AMOUNT_MINOR, 1u32..5, any::<bool>()), 1..12),
    ) {
        let rates: Vec<Decimal> = rates
            .into_iter()
            .map(|(m, s)| Decimal::new(m, s).min(MAX_RATE))
            .collect();
        let t = table(&rates);
        let (tn, nowhere) = (tennessee(&t), Location::default());
        let mut kept = t.calculate(&tn, &sale(&t, &[(1, 1), (2, 1), (3, 1)])).unwrap();
        for (shape, amount, quantity, at_nowhere) in sales {
            let s = mixed_sale(&t, shape, amount, quantity);
            let loc = if at_nowhere { &nowhere } else { &tn };
            let general = t.calculate_from(Some(&nowhere), loc, &s);
            match (t.calculate_into(None, loc, &s, &mut kept), general) {
                (Ok(()), Ok(general)) => prop_assert_eq!(&kept, &general),
                (Err(a), Err(b)) => {
                    prop_assert_eq!(a, b);
                    prop_assert!(kept.lines.is_empty());
                    prop_assert_eq!(kept.total_tax, Decimal::ZERO);
                }
                (a, b) => prop_assert!(false, "kept {a:?}, general {b:?}"),
            }
        }
    }
}
