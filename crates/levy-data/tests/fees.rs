//! Per-order fees on retail deliveries in the embedded default: Colorado's and
//! Minnesota's retail delivery fees (data/us-fees.toml), on both sides of their changes,
//! with their exemptions. Every expected value is worked from the source its comment
//! names, never read from the data under test.

use levy_core::*;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn date(y: i32, m: u32, day: u32) -> Date {
    Date::from_ymd(y, m, day).unwrap()
}

/// A sale at a ZIP code: lines of (product code, cents), the buyer exempt or not.
fn sale(lines: &[(&str, i64)], on: Date, exempt: bool) -> Sale {
    let t = levy_data::default_table();
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer {
            exempt,
            ..Customer::default()
        },
        automatic_tax: AutomaticTax::Auto,
        date: on,
        origin_country: None,
        rounding: Rounding::Line,
        lines: lines
            .iter()
            .map(|(code, cents)| SaleLine {
                amount: Decimal::from(*cents),
                quantity: 1,
                per_unit: false,
                tax_code: t.category(code).unwrap(),
            })
            .collect(),
    }
}

/// The calculation of `sale` delivered to `zip`, with `delivery`, and the fees' outcomes.
fn delivered(zip: &str, sale: &Sale, delivery: Delivery) -> (Calculation, Vec<FeeOutcome>) {
    let t = levy_data::default_table();
    let address = Address {
        postal_code: zip.into(),
        country: "US".into(),
        ..Default::default()
    };
    let location = t.resolve(&address, sale.date).unwrap();
    let mut calc = t.calculate(&location, sale).unwrap();
    let outcomes = t.apply_order_fees(&location, sale, &delivery, &mut calc);
    (calc, outcomes)
}

fn retail() -> Delivery {
    Delivery {
        retail: true,
        seller_sales_previous_year: None,
    }
}

/// The fee entries of the calculation: (rate type, tax due in cents, note).
fn fee_entries(calc: &Calculation) -> Vec<(String, Decimal, &'static str)> {
    let t = levy_data::default_table();
    calc.lines
        .iter()
        .flat_map(|l| &l.jurisdictions)
        .filter(|j| {
            matches!(
                j.note,
                Note::PerOrderFee
                    | Note::SmallSeller
                    | Note::FeeUnknown
                    | Note::CustomerExempt
                    | Note::ExemptionCertificate
            ) && t
                .jurisdiction(j.jurisdiction)
                .is_some_and(|x| x.code().ends_with(":RETAIL DELIVERY FEE"))
        })
        .map(|j| {
            let rt = t.rule(j.rule).unwrap().rate_type().to_string();
            (rt, j.tax_due, j.note.as_str())
        })
        .collect()
}

#[test]
fn colorado_charges_its_fee_and_its_six_parts_on_both_sides_of_a_change() {
    // Colorado Department of Revenue, Retail Delivery Fee Rates
    // (https://tax.colorado.gov/retail-delivery-fee-rates): July 2024 to June 2025, $0.29
    // (Community Access 0.0741, Clean Fleet 0.0569, Clean Transit 0.0322, General 0.0903,
    // Bridge and Tunnel 0.029, Air Pollution Mitigation 0.0075); July 2025 to June 2026,
    // $0.28. A $50.00 delivery of general merchandise to Denver 80202, taxed at the state's
    // 2.9% (C.R.S. 39-26-106): 145 cents of tax, plus the fee.
    let goods = [("GENERAL_MERCHANDISE", 5_000)];
    let (calc, outcomes) = delivered("80202", &sale(&goods, date(2025, 6, 30), false), retail());
    assert_eq!(outcomes, [FeeOutcome::Charged(d("29"))]);
    assert_eq!(calc.total_tax, d("174"));
    assert_eq!(calc.total_including_tax, d("5174"));
    assert_eq!(calc.lines[0].tax, d("174"));
    let parts = fee_entries(&calc);
    assert_eq!(parts.len(), 6, "{parts:?}");
    let total: Decimal = parts.iter().map(|p| p.1).sum();
    assert_eq!(total, d("29"));
    assert!(parts.iter().all(|p| p.2 == "PER_ORDER_FEE"));
    // Community Access, 0.0741 dollars: 7.41 cents, unrounded on its entry.
    assert!(
        parts
            .iter()
            .any(|p| p.0 == "COMMUNITY ACCESS RETAIL DELIVERY FEE" && p.1 == d("7.41")),
        "{parts:?}"
    );
    let (calc, outcomes) = delivered("80202", &sale(&goods, date(2025, 7, 1), false), retail());
    assert_eq!(outcomes, [FeeOutcome::Charged(d("28"))]);
    assert_eq!(calc.total_tax, d("173"));
    // Before the fee (C.R.S. 43-4-218: from 2022-07-01): nothing.
    let (calc, outcomes) = delivered("80202", &sale(&goods, date(2022, 6, 30), false), retail());
    assert!(outcomes.is_empty());
    assert_eq!(calc.total_tax, d("145"));
}

#[test]
fn a_day_whose_fee_is_not_known_says_so_and_charges_nothing() {
    // The Department's amounts from 2026-07-01 were not available (data/us-fees.toml marks
    // the period unknown): the sale's tax alone (145 cents), an entry saying FEE_UNKNOWN,
    // and coverage no better than PARTIAL.
    let goods = [("GENERAL_MERCHANDISE", 5_000)];
    let (calc, outcomes) = delivered("80202", &sale(&goods, date(2026, 11, 26), false), retail());
    assert_eq!(outcomes, [FeeOutcome::Unknown]);
    assert_eq!(calc.total_tax, d("145"));
    let entries = fee_entries(&calc);
    assert_eq!(
        entries,
        [(
            "COLORADO RETAIL DELIVERY FEE".to_string(),
            d("0"),
            "FEE_UNKNOWN"
        )]
    );
    assert!(calc.coverage <= Coverage::Partial);
}

#[test]
fn colorado_exempts_small_sellers_at_most_500000_and_exempt_buyers() {
    // SB 23-143 (Colorado DOR, Retail Delivery Fee Changes): a retailer with $500,000 or
    // less of Colorado retail sales in the previous calendar year is exempt, from
    // 2022-07-01. C.R.S. 43-4-218(3)(d): a purchaser exempt from state sales tax is exempt.
    let goods = [("GENERAL_MERCHANDISE", 5_000)];
    let on = date(2025, 3, 3);
    let small = Delivery {
        retail: true,
        seller_sales_previous_year: Some(d("500000")),
    };
    let (calc, outcomes) = delivered("80202", &sale(&goods, on, false), small);
    assert_eq!(outcomes, [FeeOutcome::Exempt(Note::SmallSeller)]);
    assert_eq!(calc.total_tax, d("145"));
    let larger = Delivery {
        seller_sales_previous_year: Some(d("500000.01")),
        ..small
    };
    assert_eq!(
        delivered("80202", &sale(&goods, on, false), larger).1,
        [FeeOutcome::Charged(d("29"))]
    );
    let (calc, outcomes) = delivered("80202", &sale(&goods, on, true), retail());
    assert_eq!(outcomes, [FeeOutcome::Exempt(Note::CustomerExempt)]);
    assert_eq!(calc.total_tax, d("0"));
}

#[test]
fn minnesota_charges_50_cents_on_100_dollars_of_taxable_goods_from_july_2024() {
    // Minn. Stat. 168E.03 subd. 1: 50 cents on each transaction that equals or exceeds the
    // threshold amount ($100, 168E.01 subd. 17), from 2024-07-01 (Laws 2023, ch. 68, art.
    // 3, s. 10). Minneapolis 55401: 6.875% state + 0.15% Hennepin County + 0.5% Hennepin
    // Transit + 0.75% Metro Transportation + 0.25% Metro Housing = 8.525% (Minnesota DOR,
    // Fact Sheet 164; the SST rate file MNR2026Q2FEB18).
    let hundred = [("GENERAL_MERCHANDISE", 10_000)];
    let (calc, outcomes) = delivered("55401", &sale(&hundred, date(2024, 7, 1), false), retail());
    assert_eq!(outcomes, [FeeOutcome::Charged(d("50"))]);
    // 10000 x 8.525% = 852.5, rounded half up to 853; plus 50.
    assert_eq!(calc.total_tax, d("903"));
    assert_eq!(
        fee_entries(&calc),
        [(
            "ROAD IMPROVEMENT AND FOOD DELIVERY FEE".to_string(),
            d("50"),
            "PER_ORDER_FEE"
        )]
    );
    // The day before: no fee.
    let (_, outcomes) = delivered("55401", &sale(&hundred, date(2024, 6, 30), false), retail());
    assert!(outcomes.is_empty());
    // $99.99 of taxable goods: under the threshold.
    let short = [("GENERAL_MERCHANDISE", 9_999)];
    let (_, outcomes) = delivered("55401", &sale(&short, date(2025, 3, 3), false), retail());
    assert!(outcomes.is_empty());
    // $200.00 of groceries (exempt food, 168E.05 subd. 1) and $60.00 of goods: $60.00 of
    // taxable goods count, under the threshold.
    let mixed = [("GROCERIES", 20_000), ("GENERAL_MERCHANDISE", 6_000)];
    let (_, outcomes) = delivered("55401", &sale(&mixed, date(2025, 3, 3), false), retail());
    assert!(outcomes.is_empty());
    // Picked up, not delivered: no fee.
    let pickup = Delivery::default();
    let (_, outcomes) = delivered("55401", &sale(&hundred, date(2025, 3, 3), false), pickup);
    assert!(outcomes.is_empty());
}

#[test]
fn minnesota_exempts_sellers_under_one_million() {
    // Minn. Stat. 168E.05 subd. 2: not a retailer with retail sales totaling less than
    // $1,000,000 in the previous calendar year.
    let hundred = [("GENERAL_MERCHANDISE", 10_000)];
    let on = date(2025, 3, 3);
    let claim = |sales: &str| Delivery {
        retail: true,
        seller_sales_previous_year: Some(d(sales)),
    };
    assert_eq!(
        delivered("55401", &sale(&hundred, on, false), claim("999999.99")).1,
        [FeeOutcome::Exempt(Note::SmallSeller)]
    );
    assert_eq!(
        delivered("55401", &sale(&hundred, on, false), claim("1000000")).1,
        [FeeOutcome::Charged(d("50"))]
    );
}

#[test]
fn other_states_charge_no_delivery_fee() {
    // Tennessee (Nashville 37203) has no retail delivery fee.
    let goods = [("GENERAL_MERCHANDISE", 10_000)];
    let (_, outcomes) = delivered("37203", &sale(&goods, date(2025, 3, 3), false), retail());
    assert!(outcomes.is_empty());
}
