//! The taxability matrix in the calculation: whether a line knows its product's treatment
//! (and the coverage that follows), and rules with a per-sale threshold.
//!
//! Every expected tax here is worked by hand in its comment from the rates the test's own
//! table sets; the tables are small and built here, so each number follows from the rules
//! written a few lines above it.

use levy_core::*;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn day(y: i32, m: u32, dd: u32) -> Date {
    Date::from_ymd(y, m, dd).unwrap()
}

fn spec(
    code: &str,
    level: Level,
    country: &str,
    region: &str,
    tax_type: TaxType,
) -> JurisdictionSpec {
    JurisdictionSpec {
        code: code.into(),
        name: code.into(),
        level,
        country: country.into(),
        region: region.into(),
        authority: String::new(),
        tax_type,
    }
}

fn cell(
    country: &str,
    region: &str,
    levels: TaxabilityLevels,
    codes: &[&str],
) -> TaxabilityCellSpec {
    TaxabilityCellSpec {
        country: country.into(),
        region: region.into(),
        levels,
        scope: "all".into(),
        treatment: Treatment::Taxable,
        summary: "general rate".into(),
        codes: codes.iter().map(|c| c.to_string()).collect(),
        from: Date::MIN,
        to: Date::MAX,
        sale_at_most: None,
        label: String::new(),
        source: "a statute".into(),
        as_of: day(2026, 11, 26),
        note: String::new(),
    }
}

/// Tennessee: state 7% [47] with a county 2.25% [47037] at ZIP 37203 and the state alone
/// at 37204; Canada: GST 5% [CA], Ontario's HST 13% [CA-ON] (no GST beside it) at postal
/// prefix M, British Columbia's PST 7% [CA-BC] beside the GST at prefix V.
///
/// Codes: CLOTHING (in the matrix) with FOOTWEAR under it (outside: it is clothing
/// everywhere), CANDY and SNACKS (in the matrix), and the root GENERAL_MERCHANDISE.
///
/// Cells: Tennessee knows CLOTHING at both levels; CANDY at the state level only; SNACKS at
/// both levels from 2026-01-01 only. Canada knows CLOTHING federally; Ontario and British
/// Columbia know CLOTHING provincially, British Columbia CANDY provincially.
fn table() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    for (code, parent) in [
        ("CLOTHING", "GENERAL_MERCHANDISE"),
        ("FOOTWEAR", "CLOTHING"),
        ("CANDY", "GENERAL_MERCHANDISE"),
        ("SNACKS", "GENERAL_MERCHANDISE"),
    ] {
        b.tax_code(code, Some(parent), code).unwrap();
    }
    b.tax_code_outside_matrix("FOOTWEAR").unwrap();
    for code in [
        "GENERAL_MERCHANDISE",
        "CLOTHING",
        "FOOTWEAR",
        "CANDY",
        "SNACKS",
    ] {
        b.category(code, code);
    }
    let tn = b
        .jurisdiction(spec("47", Level::State, "US", "TN", TaxType::Sales))
        .unwrap();
    let county = b
        .jurisdiction(spec("47037", Level::County, "US", "TN", TaxType::Sales))
        .unwrap();
    let gst = b
        .jurisdiction(spec("CA", Level::Country, "CA", "", TaxType::Gst))
        .unwrap();
    let on = b
        .jurisdiction(spec("CA-ON", Level::Province, "CA", "ON", TaxType::Gst))
        .unwrap();
    let bc = b
        .jurisdiction(spec("CA-BC", Level::Province, "CA", "BC", TaxType::Sales))
        .unwrap();
    for (j, rate) in [
        (tn, "0.07"),
        (county, "0.0225"),
        (gst, "0.05"),
        (on, "0.13"),
        (bc, "0.07"),
    ] {
        b.rule(RuleSpec::flat(
            j,
            "GENERAL_MERCHANDISE",
            d(rate),
            Date::MIN,
            Date::MAX,
            "G",
        ))
        .unwrap();
    }
    b.zip(37203, "TN", "NASHVILLE", &[tn, county], 2).unwrap();
    b.zip(37204, "TN", "NASHVILLE", &[tn], 2).unwrap();
    b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
    b.region("CA", "", "CANADA", &[gst], "").unwrap();
    b.region("CA", "ON", "ONTARIO", &[on], "").unwrap();
    b.region("CA", "BC", "BRITISH COLUMBIA", &[gst, bc], "")
        .unwrap();
    b.postal_prefix("CA", "M", "ON", None).unwrap();
    b.postal_prefix("CA", "V", "BC", None).unwrap();
    let all = TaxabilityLevels::ALL;
    let up = TaxabilityLevels::UPPER;
    let low = TaxabilityLevels::LOWER;
    b.taxability_cell(cell("US", "TN", all, &["CLOTHING"]))
        .unwrap();
    b.taxability_cell(cell("US", "TN", up, &["CANDY"])).unwrap();
    b.taxability_cell(TaxabilityCellSpec {
        from: day(2026, 1, 1),
        ..cell("US", "TN", all, &["SNACKS"])
    })
    .unwrap();
    b.taxability_cell(cell("CA", "", up, &["CLOTHING"]))
        .unwrap();
    b.taxability_cell(cell("CA", "ON", low, &["CLOTHING"]))
        .unwrap();
    b.taxability_cell(cell("CA", "BC", low, &["CLOTHING", "CANDY"]))
        .unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn sale(t: &Table<AlignedBytes>, date: Date, lines: &[(&str, &str)]) -> Sale {
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: Rounding::Line,
        lines: lines
            .iter()
            .map(|(code, cents)| SaleLine {
                amount: d(cents),
                quantity: 1,
                per_unit: false,
                tax_code: t.category(code).unwrap(),
            })
            .collect(),
    }
}

fn at(postal: &str, country: &str) -> Address {
    Address {
        postal_code: postal.into(),
        country: country.into(),
        ..Default::default()
    }
}

#[test]
fn a_known_treatment_keeps_the_place_coverage() {
    let t = table();
    let d0 = day(2026, 3, 1);
    let loc = t.resolve(&at("37203", "US"), d0).unwrap();
    // Clothing, and footwear through it (outside the matrix), and the root: known.
    for code in ["CLOTHING", "FOOTWEAR", "GENERAL_MERCHANDISE"] {
        let c = t
            .calculate(&loc, &sale(&t, d0, &[(code, "10000")]))
            .unwrap();
        assert_eq!(c.taxability, Taxability::Known, "{code}");
        assert_eq!(c.lines[0].taxability, Taxability::Known, "{code}");
        assert_eq!(c.coverage, Coverage::Full, "{code}");
        // 7% + 2.25% of $100.00: 925 cents.
        assert_eq!(c.total_tax, d("925"), "{code}");
    }
}

#[test]
fn an_unknown_level_makes_the_line_unknown_and_the_answer_partial() {
    let t = table();
    let d0 = day(2026, 3, 1);
    // Candy is known at the state level only: with the county in the answer, unknown.
    let loc = t.resolve(&at("37203", "US"), d0).unwrap();
    let c = t
        .calculate(
            &loc,
            &sale(&t, d0, &[("CANDY", "10000"), ("CLOTHING", "100")]),
        )
        .unwrap();
    assert_eq!(c.taxability, Taxability::Unknown);
    assert_eq!(c.lines[0].taxability, Taxability::Unknown);
    assert_eq!(c.lines[1].taxability, Taxability::Known);
    assert_eq!(c.coverage, Coverage::Partial);
    // Taxed at the rule the code inherits (the general rates): 925 cents.
    assert_eq!(c.lines[0].tax, d("925"));
    assert_eq!(
        t.taxability_gaps(c.lines[0].tax_code, &c.lines[0].jurisdictions, d0),
        vec![("US-TN".to_string(), TaxabilityLevels::LOWER)]
    );
    // The usual one-line sale takes the short path: it says the same.
    let one = t
        .calculate(&loc, &sale(&t, d0, &[("CANDY", "10000")]))
        .unwrap();
    assert_eq!(
        (one.taxability, one.coverage),
        (Taxability::Unknown, Coverage::Partial)
    );
    // So does a batch.
    let s = sale(&t, d0, &[("CANDY", "10000")]);
    let mut out = Vec::new();
    assert!(t.calculate_batch([(&loc, &s)], &mut out).is_empty());
    assert_eq!(out[0].taxability, Taxability::Unknown);
    // An exempt buyer owes nothing whatever the product: nothing unknown to say.
    let mut exempt = sale(&t, d0, &[("CANDY", "10000")]);
    exempt.customer.exempt = true;
    let c = t.calculate(&loc, &exempt).unwrap();
    assert_eq!(
        (c.total_tax, c.taxability, c.coverage),
        (d("0"), Taxability::Known, Coverage::Full)
    );
    // Where the answer holds the state alone, the state's cell suffices.
    let state = t.resolve(&at("37204", "US"), d0).unwrap();
    let c = t
        .calculate(&state, &sale(&t, d0, &[("CANDY", "10000")]))
        .unwrap();
    assert_eq!(c.taxability, Taxability::Known);
}

#[test]
fn a_dated_cell_is_known_on_its_days_only() {
    let t = table();
    let loc = t.resolve(&at("37203", "US"), day(2026, 3, 1)).unwrap();
    for (date, want) in [
        (day(2025, 12, 31), Taxability::Unknown),
        (day(2026, 1, 1), Taxability::Known),
    ] {
        let c = t
            .calculate(&loc, &sale(&t, date, &[("SNACKS", "100")]))
            .unwrap();
        assert_eq!(c.taxability, want, "{date}");
    }
}

#[test]
fn canada_asks_the_federal_and_provincial_cells_an_hst_both() {
    let t = table();
    let d0 = day(2026, 3, 1);
    let on = t.resolve(&at("M5V 2T6", "CA"), d0).unwrap();
    let bc = t.resolve(&at("V6B 1A1", "CA"), d0).unwrap();
    let c = t
        .calculate(&on, &sale(&t, d0, &[("CLOTHING", "100")]))
        .unwrap();
    assert_eq!(c.taxability, Taxability::Known);
    // Candy: Ontario's HST needs both the federal and the provincial cell; it has neither.
    let c = t
        .calculate(&on, &sale(&t, d0, &[("CANDY", "100")]))
        .unwrap();
    let gaps = t.taxability_gaps(c.lines[0].tax_code, &c.lines[0].jurisdictions, d0);
    assert_eq!(
        gaps,
        vec![
            ("CA".to_string(), TaxabilityLevels::UPPER),
            ("CA-ON".to_string(), TaxabilityLevels::LOWER)
        ]
    );
    // British Columbia: the PST knows candy, the GST does not.
    let c = t
        .calculate(&bc, &sale(&t, d0, &[("CANDY", "100")]))
        .unwrap();
    let gaps = t.taxability_gaps(c.lines[0].tax_code, &c.lines[0].jurisdictions, d0);
    assert_eq!(gaps, vec![("CA".to_string(), TaxabilityLevels::UPPER)]);
}

#[test]
fn a_table_without_a_matrix_knows_only_the_roots() {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.tax_code("CANDY", Some("GENERAL_MERCHANDISE"), "candy")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CANDY", "CANDY");
    let tn = b
        .jurisdiction(spec("47", Level::State, "US", "TN", TaxType::Sales))
        .unwrap();
    b.rule(RuleSpec::flat(
        tn,
        "GENERAL_MERCHANDISE",
        d("0.07"),
        Date::MIN,
        Date::MAX,
        "G",
    ))
    .unwrap();
    b.zip(37204, "TN", "NASHVILLE", &[tn], 2).unwrap();
    b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
    let t = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    let d0 = day(2026, 3, 1);
    let loc = t.resolve(&at("37204", "US"), d0).unwrap();
    let c = t
        .calculate(&loc, &sale(&t, d0, &[("CANDY", "100")]))
        .unwrap();
    assert_eq!(
        (c.taxability, c.coverage),
        (Taxability::Unknown, Coverage::Partial)
    );
    let c = t
        .calculate(&loc, &sale(&t, d0, &[("GENERAL_MERCHANDISE", "100")]))
        .unwrap();
    assert_eq!(
        (c.taxability, c.coverage),
        (Taxability::Known, Coverage::Full)
    );
}

/// Ontario's HST on prepared food: 5% when the sale's prepared food totals at most $4.00
/// (the provincial 8% rebated), 13% above, as two rules of one group; plain goods at 13%.
fn ontario() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.tax_code("PREPARED_FOOD", Some("GENERAL_MERCHANDISE"), "food")
        .unwrap();
    b.tax_code("COFFEE", Some("PREPARED_FOOD"), "coffee")
        .unwrap();
    for c in ["GENERAL_MERCHANDISE", "PREPARED_FOOD", "COFFEE"] {
        b.category(c, c);
    }
    let on = b
        .jurisdiction(spec("CA-ON", Level::Province, "CA", "ON", TaxType::Gst))
        .unwrap();
    b.rule(RuleSpec::flat(
        on,
        "GENERAL_MERCHANDISE",
        d("0.13"),
        Date::MIN,
        Date::MAX,
        "HST",
    ))
    .unwrap();
    for (rate, above) in [("0.05", false), ("0.13", true)] {
        let mut r = RuleSpec::flat(on, "PREPARED_FOOD", d(rate), Date::MIN, Date::MAX, "HST");
        r.sale = Some(SaleCondition {
            group: 1,
            limit: d("4.00"),
            above,
        });
        b.rule(r).unwrap();
    }
    b.region("CA", "ON", "ONTARIO", &[on], "").unwrap();
    b.postal_prefix("CA", "M", "ON", None).unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn cad_sale(t: &Table<AlignedBytes>, tax_included: bool, lines: &[(&str, &str)]) -> Sale {
    Sale {
        currency: Currency::from_code("CAD").unwrap(),
        tax_included,
        ..sale(t, day(2026, 3, 1), lines)
    }
}

fn taxes(c: &Calculation) -> Vec<Decimal> {
    c.lines.iter().map(|l| l.tax).collect()
}

#[test]
fn a_per_sale_threshold_counts_the_lines_of_its_group_only() {
    let t = ontario();
    let loc = t.resolve(&at("M5V 2T6", "CA"), day(2026, 3, 1)).unwrap();
    // A $3.50 coffee alone: at most $4.00, 5%: 17.5 cents, rounded half up to 18.
    let c = t
        .calculate(&loc, &cad_sale(&t, false, &[("COFFEE", "350")]))
        .unwrap();
    assert_eq!(taxes(&c), vec![d("18")]);
    // Exactly $4.00: still at most, 5%: 20 cents.
    let c = t
        .calculate(&loc, &cad_sale(&t, false, &[("COFFEE", "400")]))
        .unwrap();
    assert_eq!(taxes(&c), vec![d("20")]);
    // A $3.50 coffee and a $1.00 pastry (prepared food, the same group): $4.50, above, 13%
    // on both: 45.5 -> 46 and 13 cents.
    let c = t
        .calculate(
            &loc,
            &cad_sale(&t, false, &[("COFFEE", "350"), ("PREPARED_FOOD", "100")]),
        )
        .unwrap();
    assert_eq!(taxes(&c), vec![d("46"), d("13")]);
    // A coffee beside $10.00 of goods: the goods are not in the group; the coffee stays at
    // 5% (18 cents), the goods at 13% (130 cents).
    let c = t
        .calculate(
            &loc,
            &cad_sale(
                &t,
                false,
                &[("COFFEE", "350"), ("GENERAL_MERCHANDISE", "1000")],
            ),
        )
        .unwrap();
    assert_eq!(taxes(&c), vec![d("18"), d("130")]);
    // Each line's one entry: the rule of the side that applied.
    assert_eq!(c.lines[0].jurisdictions.len(), 1);
    assert_eq!(c.lines[0].jurisdictions[0].rate, d("0.05"));
}

#[test]
fn a_per_sale_threshold_with_amounts_that_include_tax() {
    let t = ontario();
    let loc = t.resolve(&at("M5V 2T6", "CA"), day(2026, 3, 1)).unwrap();
    // $3.68 including tax: at 5% the amount before tax is 3.68 / 1.05 = 3.5047..., 350
    // cents (at most $4.00, so 5% holds), and the tax the rest, 18 cents.
    let c = t
        .calculate(&loc, &cad_sale(&t, true, &[("COFFEE", "368")]))
        .unwrap();
    assert_eq!(
        (c.lines[0].amount_excluding_tax, c.lines[0].tax),
        (d("350"), d("18"))
    );
    // $5.65 including tax: at 5% the amount before tax would be 5.38, above $4.00, so the
    // sale is above the threshold: 5.65 / 1.13 = 5.00, tax 65 cents.
    let c = t
        .calculate(&loc, &cad_sale(&t, true, &[("COFFEE", "565")]))
        .unwrap();
    assert_eq!(
        (c.lines[0].amount_excluding_tax, c.lines[0].tax),
        (d("500"), d("65"))
    );
    // $4.50 including tax: at 5%, 4.2857 before tax, above $4.00; at 13%, 3.98, which would
    // be at most. No reading is consistent; levy takes the threshold as passed (the seller
    // charges the full HST): 4.50 / 1.13 = 3.982..., 398 cents, tax 52 cents.
    let c = t
        .calculate(&loc, &cad_sale(&t, true, &[("COFFEE", "450")]))
        .unwrap();
    assert_eq!(
        (c.lines[0].amount_excluding_tax, c.lines[0].tax),
        (d("398"), d("52"))
    );
}

mod threshold_properties {
    use super::*;
    use proptest::prelude::*;

    /// A table of one Ontario-like jurisdiction: general merchandise at `high`, prepared
    /// food at `low` when the sale's prepared food totals at most `limit`, `high` above.
    fn table(low: Decimal, high: Decimal, limit: Decimal) -> Table<AlignedBytes> {
        let mut b = TableBuilder::new();
        b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
        b.tax_code("PREPARED_FOOD", Some("GENERAL_MERCHANDISE"), "food")
            .unwrap();
        b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
        b.category("PREPARED_FOOD", "PREPARED_FOOD");
        let on = b
            .jurisdiction(spec("CA-ON", Level::Province, "CA", "ON", TaxType::Gst))
            .unwrap();
        b.rule(RuleSpec::flat(
            on,
            "GENERAL_MERCHANDISE",
            high,
            Date::MIN,
            Date::MAX,
            "G",
        ))
        .unwrap();
        for (rate, above) in [(low, false), (high, true)] {
            let mut r = RuleSpec::flat(on, "PREPARED_FOOD", rate, Date::MIN, Date::MAX, "F");
            r.sale = Some(SaleCondition {
                group: 7,
                limit,
                above,
            });
            b.rule(r).unwrap();
        }
        b.region("CA", "ON", "ONTARIO", &[on], "").unwrap();
        b.postal_prefix("CA", "M", "ON", None).unwrap();
        Table::from_bytes(&b.build(0).unwrap()).unwrap()
    }

    /// Half-up rounding of a non-negative decimal to whole cents (minor units).
    fn round(x: Decimal) -> Decimal {
        x.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn each_side_applies_exactly_on_its_side_of_the_groups_total(
            low in 0i64..=800,            // basis points
            extra in 0i64..=1_500,
            limit in 0i64..=2_000,        // cents
            lines in proptest::collection::vec((any::<bool>(), 0i64..=1_500), 1..6),
            included in any::<bool>(),
        ) {
            let (low, high) = (Decimal::new(low, 4), Decimal::new(low + extra, 4));
            let limit_major = Decimal::new(limit, 2);
            let t = table(low, high, limit_major);
            let loc = t.resolve(&at("M5V 2T6", "CA"), day(2026, 3, 1)).unwrap();
            let sale = Sale {
                currency: Currency::from_code("CAD").unwrap(),
                tax_included: included,
                customer: Customer::default(),
                automatic_tax: AutomaticTax::Auto,
                date: day(2026, 3, 1),
                origin_country: None,
                rounding: Rounding::Line,
                lines: lines
                    .iter()
                    .map(|&(food, cents)| SaleLine {
                        amount: Decimal::from(cents),
                        quantity: 1,
                        per_unit: false,
                        tax_code: t
                            .category(if food { "PREPARED_FOOD" } else { "GENERAL_MERCHANDISE" })
                            .unwrap(),
                    })
                    .collect(),
            };
            let c = t.calculate(&loc, &sale).unwrap();
            // Every line adds up, and the totals are the lines' sums.
            let mut sums = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
            for l in &c.lines {
                prop_assert_eq!(l.amount_excluding_tax + l.tax, l.amount_including_tax);
                sums = (sums.0 + l.tax, sums.1 + l.amount_excluding_tax, sums.2 + l.amount_including_tax);
            }
            prop_assert_eq!(sums, (c.total_tax, c.total_excluding_tax, c.total_including_tax));
            // The food lines' total before tax decides the side; every food line is taxed at
            // that side's rate, every other line at the general rate.
            let food_total: Decimal = c
                .lines
                .iter()
                .zip(&lines)
                .filter(|(_, &(food, _))| food)
                .map(|(l, _)| l.amount_excluding_tax)
                .sum();
            let side = if included {
                // Before tax at the lower rate, as the answer works it out first.
                let at_low: Decimal = lines
                    .iter()
                    .filter(|(food, _)| *food)
                    .map(|&(_, cents)| round(Decimal::from(cents) / (Decimal::ONE + low)))
                    .sum();
                if at_low <= Decimal::from(limit) { low } else { high }
            } else if food_total <= Decimal::from(limit) {
                low
            } else {
                high
            };
            for (l, &(food, cents)) in c.lines.iter().zip(&lines) {
                let rate = if food { side } else { high };
                if included {
                    let excl = round(Decimal::from(cents) / (Decimal::ONE + rate));
                    prop_assert_eq!(l.amount_excluding_tax, excl);
                } else {
                    prop_assert_eq!(l.tax, round(Decimal::from(cents) * rate));
                }
            }
        }
    }
}
