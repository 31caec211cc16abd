//! Properties of the calculation over randomly generated tables: every rule kind (flat,
//! band, unit-price threshold, per-unit fee, holiday), several jurisdictions per place.

mod common;

use common::d;
use levy_core::*;
use proptest::prelude::*;

/// One rule as generated: rate in ten-thousandths, band and unit range edges in cents (of
/// major units, so `12345` is $123.45), fee in cents.
#[derive(Clone, Debug)]
struct GenRule {
    rate: i64,
    band: (i64, Option<i64>),
    unit_range: (i64, Option<i64>),
    fee: i64,
}

#[derive(Clone, Debug)]
struct GenHoliday {
    cap: Option<i64>,
    inclusive: bool,
    include_local: bool,
}

#[derive(Clone, Debug)]
struct GenTable {
    /// Rules of each jurisdiction (the first is the state, the others local).
    jurisdictions: Vec<Vec<GenRule>>,
    holiday: Option<GenHoliday>,
}

/// A rule of one kind. `upper_unit_edge` allows unit ranges with an upper edge (a rule that
/// stops applying above a price), the one kind that makes tax fall as the price rises.
fn rule(upper_unit_edge: bool) -> impl Strategy<Value = GenRule> {
    let rate = 0i64..=2_000; // 0% ..= 20%
    prop_oneof![
        // Flat.
        rate.clone().prop_map(|rate| GenRule {
            rate,
            band: (0, None),
            unit_range: (0, None),
            fee: 0
        }),
        // Band.
        (
            rate.clone(),
            0i64..=300_000,
            proptest::option::of(1i64..=300_000)
        )
            .prop_map(|(rate, lo, width)| GenRule {
                rate,
                band: (lo, width.map(|w| lo + w)),
                unit_range: (0, None),
                fee: 0,
            }),
        // Unit-price threshold (all or nothing).
        (
            rate.clone(),
            0i64..=300_000,
            proptest::option::of(1i64..=300_000)
        )
            .prop_map(move |(rate, lo, width)| {
                GenRule {
                    rate,
                    band: (0, None),
                    unit_range: (lo, width.filter(|_| upper_unit_edge).map(|w| lo + w)),
                    fee: 0,
                }
            }),
        // Flat with a per-unit fee.
        (rate, 0i64..=500).prop_map(|(rate, fee)| GenRule {
            rate,
            band: (0, None),
            unit_range: (0, None),
            fee
        }),
    ]
}

fn gen_table(upper_unit_edge: bool) -> impl Strategy<Value = GenTable> {
    let holiday = (
        proptest::option::of(1i64..=300_000),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(cap, inclusive, include_local)| GenHoliday {
            cap,
            inclusive,
            include_local,
        });
    (
        proptest::collection::vec(
            proptest::collection::vec(rule(upper_unit_edge), 1..=2),
            1..=4,
        ),
        proptest::option::of(holiday),
    )
        .prop_map(|(jurisdictions, holiday)| GenTable {
            jurisdictions,
            holiday,
        })
}

fn cents(c: i64) -> Decimal {
    Decimal::new(c, 2)
}

/// Builds the generated table: every jurisdiction taxes Tennessee (region only, no ZIPs),
/// rules on general merchandise, which clothing inherits; the holiday covers clothing.
fn build(g: &GenTable) -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.tax_code("CLOTHING", Some("GENERAL_MERCHANDISE"), "clothing")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CLOTHING", "CLOTHING");
    let levels = [Level::State, Level::County, Level::City, Level::District];
    let mut ids = Vec::new();
    for (i, rules) in g.jurisdictions.iter().enumerate() {
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: format!("J{i}"),
                name: format!("J{i}"),
                level: levels[i],
                country: "US".into(),
                region: "TN".into(),
                authority: String::new(),
                tax_type: TaxType::Sales,
            })
            .unwrap();
        for r in rules {
            let mut spec = RuleSpec::flat(
                j,
                "GENERAL_MERCHANDISE",
                Decimal::new(r.rate, 4),
                Date::MIN,
                Date::MAX,
                "R",
            );
            spec.band = (cents(r.band.0), r.band.1.map(cents));
            spec.unit_range = (cents(r.unit_range.0), r.unit_range.1.map(cents));
            spec.fee = cents(r.fee);
            b.rule(spec).unwrap();
        }
        ids.push(j);
    }
    b.region("US", "TN", "TENNESSEE", &ids, "").unwrap();
    if let Some(h) = &g.holiday {
        b.holiday(HolidaySpec {
            name: "H".into(),
            country: "US".into(),
            region: "TN".into(),
            include_local: h.include_local,
            from: Date::MIN,
            to: Date::MAX,
            tax_codes: vec!["CLOTHING".into()],
            exclude_codes: Vec::new(),
            max_unit: h.cap.map(cents),
            cap_inclusive: h.inclusive,
        })
        .unwrap();
    }
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn place<D: TableBytes>(t: &Table<D>) -> Location {
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

#[derive(Clone, Debug)]
struct GenLine {
    amount: i64,
    quantity: u32,
    per_unit: bool,
    clothing: bool,
}

fn gen_line() -> impl Strategy<Value = GenLine> {
    let amount = prop_oneof![4 => 0i64..=1_000_000, 1 => 0i64..=100_000_000_000];
    (
        amount,
        prop_oneof![4 => Just(1u32), 1 => 1u32..=7],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(amount, quantity, per_unit, clothing)| GenLine {
            amount,
            quantity,
            per_unit,
            clothing,
        })
}

fn to_line<D: TableBytes>(t: &Table<D>, l: &GenLine) -> SaleLine {
    SaleLine {
        amount: Decimal::from(l.amount),
        quantity: l.quantity,
        per_unit: l.per_unit,
        tax_code: t
            .category(if l.clothing {
                "CLOTHING"
            } else {
                "GENERAL_MERCHANDISE"
            })
            .unwrap(),
    }
}

fn sale_of(lines: Vec<SaleLine>, tax_included: bool) -> Sale {
    let mut s = common::sale(lines, common::day());
    s.tax_included = tax_included;
    s
}

fn one(t: &Table<AlignedBytes>, loc: &Location, l: &GenLine, tax_included: bool) -> LineTax {
    let c = t
        .calculate(loc, &sale_of(vec![to_line(t, l)], tax_included))
        .unwrap();
    c.lines.into_iter().next().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Order totals are the sums of the lines, and each line's total is its amount plus tax.
    #[test]
    fn totals_are_sums_of_lines(g in gen_table(true), lines in proptest::collection::vec(gen_line(), 1..6), incl in any::<bool>()) {
        let t = build(&g);
        let loc = place(&t);
        let c = t.calculate(&loc, &sale_of(lines.iter().map(|l| to_line(&t, l)).collect(), incl)).unwrap();
        let sum = |f: fn(&LineTax) -> Decimal| c.lines.iter().map(f).sum::<Decimal>();
        prop_assert_eq!(c.total_tax, sum(|l| l.tax));
        prop_assert_eq!(c.total_excluding_tax, sum(|l| l.amount_excluding_tax));
        prop_assert_eq!(c.total_including_tax, sum(|l| l.amount_including_tax));
        for (line, g) in c.lines.iter().zip(&lines) {
            prop_assert_eq!(line.amount_excluding_tax + line.tax, line.amount_including_tax);
            let given = Decimal::from(g.amount) * if g.per_unit { Decimal::from(g.quantity) } else { Decimal::ONE };
            let side = if incl { line.amount_including_tax } else { line.amount_excluding_tax };
            prop_assert_eq!(side, given);
            // Whole minor units only.
            prop_assert_eq!(line.tax, line.tax.trunc());
        }
    }

    /// Including tax: excluding + tax == including, to the minor unit, for every rule kind
    /// (upper unit edges and holiday caps included), and neither part is negative.
    #[test]
    fn inclusive_identity(g in gen_table(true), l in gen_line()) {
        let t = build(&g);
        let line = one(&t, &place(&t), &l, true);
        let given = Decimal::from(l.amount) * if l.per_unit { Decimal::from(l.quantity) } else { Decimal::ONE };
        prop_assert_eq!(line.amount_including_tax, given);
        prop_assert_eq!(line.amount_excluding_tax + line.tax, given);
        prop_assert_eq!(line.amount_excluding_tax, line.amount_excluding_tax.trunc());
        prop_assert!(line.tax >= Decimal::ZERO && line.amount_excluding_tax >= Decimal::ZERO);
    }

    /// Tax never decreases as the amount grows (for every rule kind except a unit range with
    /// an upper edge, which by definition stops taxing above a price; see `gen_table`).
    /// Checked excluding tax, and including tax on the excluding side of the split.
    #[test]
    fn tax_is_monotone_in_the_amount(g in gen_table(false), l in gen_line(), step in 0i64..=50_000) {
        let t = build(&g);
        let loc = place(&t);
        let mut bigger = l.clone();
        bigger.amount += step;
        let (a, b) = (one(&t, &loc, &l, false), one(&t, &loc, &bigger, false));
        prop_assert!(a.tax <= b.tax, "{} at {} > {} at {}", a.tax, l.amount, b.tax, bigger.amount);
        let (a, b) = (one(&t, &loc, &l, true), one(&t, &loc, &bigger, true));
        prop_assert!(a.tax <= b.tax, "including: {} at {} > {} at {}", a.tax, l.amount, b.tax, bigger.amount);
        prop_assert!(a.amount_excluding_tax <= b.amount_excluding_tax);
    }

    /// The tax is at most round(Σ rates × amount + Σ fees × quantity).
    ///
    /// This is the form that holds exactly. The literal "effective rate ≤ sum of rates" does
    /// not: the line's tax is rounded half away from zero once, so 1 cent at 50% owes 0.5
    /// cent, rounded to 1 cent, an effective rate of 100%. Each jurisdiction's unrounded due
    /// is at most its rate times the amount (plus its fee), their sum is at most the sum of
    /// those, and rounding is monotone, so the rounded forms compare the same way.
    #[test]
    fn tax_is_bounded_by_the_sum_of_rates(g in gen_table(true), l in gen_line()) {
        let t = build(&g);
        let line = one(&t, &place(&t), &l, false);
        let qty = Decimal::from(l.quantity);
        let amount = line.amount_excluding_tax;
        let rates: Decimal = g.jurisdictions.iter().flatten().map(|r| Decimal::new(r.rate, 4)).sum();
        let fees: Decimal = g.jurisdictions.iter().flatten().map(|r| Decimal::from(r.fee) * qty).sum();
        let bound = round_minor(rates * amount + fees);
        prop_assert!(line.tax <= bound, "tax {} > bound {} (rates {}, amount {})", line.tax, bound, rates, amount);
    }

    /// Line order does not matter: the per-line results permute with the lines and the
    /// totals are equal.
    #[test]
    fn line_order_does_not_matter(
        g in gen_table(true),
        lines in proptest::collection::vec(gen_line(), 1..6),
        rotate in 0usize..6,
        incl in any::<bool>(),
    ) {
        let t = build(&g);
        let loc = place(&t);
        let sale_lines: Vec<SaleLine> = lines.iter().map(|l| to_line(&t, l)).collect();
        let mut permuted = sale_lines.clone();
        permuted.reverse();
        let k = rotate % permuted.len();
        permuted.rotate_left(k);
        let a = t.calculate(&loc, &sale_of(sale_lines.clone(), incl)).unwrap();
        let b = t.calculate(&loc, &sale_of(permuted.clone(), incl)).unwrap();
        prop_assert_eq!((a.total_tax, a.total_excluding_tax, a.total_including_tax),
                        (b.total_tax, b.total_excluding_tax, b.total_including_tax));
        // Line i of the permuted sale is the original line at the position it came from.
        let n = sale_lines.len();
        for (i, line) in b.lines.iter().enumerate() {
            let from = n - 1 - ((i + k) % n);
            prop_assert_eq!(line, &a.lines[from]);
        }
    }

    /// An exempt customer owes nothing on any line, either way round.
    #[test]
    fn exempt_means_zero(g in gen_table(true), lines in proptest::collection::vec(gen_line(), 1..6), incl in any::<bool>()) {
        let t = build(&g);
        let mut s = sale_of(lines.iter().map(|l| to_line(&t, l)).collect(), incl);
        s.customer.exempt = true;
        let c = t.calculate(&place(&t), &s).unwrap();
        prop_assert_eq!(c.total_tax, Decimal::ZERO);
        prop_assert_eq!(c.total_excluding_tax, c.total_including_tax);
        for line in &c.lines {
            prop_assert_eq!(line.tax, Decimal::ZERO);
            prop_assert!(line.jurisdictions.iter().all(|j| j.tax_due.is_zero() && j.note == Note::CustomerExempt));
        }
    }
}

#[test]
fn generated_tables_reproduce_a_hand_worked_case() {
    // Guards the generator itself: one flat 7% state and a 2.25% band to $1,600 on a $2,500
    // line: 175.00 + 36.00 = 211.00 dollars = 21100 cents.
    let g = GenTable {
        jurisdictions: vec![
            vec![GenRule {
                rate: 700,
                band: (0, None),
                unit_range: (0, None),
                fee: 0,
            }],
            vec![GenRule {
                rate: 225,
                band: (0, Some(160_000)),
                unit_range: (0, None),
                fee: 0,
            }],
        ],
        holiday: None,
    };
    let t = build(&g);
    let l = GenLine {
        amount: 250_000,
        quantity: 1,
        per_unit: false,
        clothing: false,
    };
    assert_eq!(one(&t, &place(&t), &l, false).tax, d("21100"));
}
