//! A line searches the holiday keys once per place, not once per jurisdiction: a
//! jurisdiction of another place than the one before it must find its own holidays, and
//! must not inherit the other place's.
//!
//! The table: Canada's GST 5% [CA] (country), and two provinces at 7% each, British Columbia
//! [CA-BC] and Ontario [CA-ON]. Ontario has a clothing holiday on 2026-03-01 (a test value;
//! Canadian provinces have none). Two sets: {CA, CA-ON} and {CA-BC, CA-ON}; in a set
//! jurisdictions come by level, then by id, so CA comes before CA-ON, and CA-BC (made
//! first) before CA-ON. Ontario has a second clothing holiday on 2026-03-05 and 2026-03-06,
//! so that its holidays span days on which none of them is in force.

use levy_core::*;
use levy_testkit::sale::{d, sale};

fn spec(code: &str, level: Level, region: &str, tax_type: TaxType) -> JurisdictionSpec {
    JurisdictionSpec {
        code: code.into(),
        name: code.into(),
        level,
        country: "CA".into(),
        region: region.into(),
        authority: format!("{code} REVENUE"),
        tax_type,
    }
}

fn day() -> Date {
    Date::from_ymd(2026, 3, 1).unwrap()
}

/// The table and its two sets: ({CA, CA-ON}, {CA-BC, CA-ON}).
fn table() -> (Table<AlignedBytes>, JsetId, JsetId) {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Goods").unwrap();
    b.tax_code("CLOTHING", Some("GENERAL_MERCHANDISE"), "Clothing")
        .unwrap();
    b.category("CLOTHING", "CLOTHING");
    let ca = b
        .jurisdiction(spec("CA", Level::Country, "", TaxType::Gst))
        .unwrap();
    let bc = b
        .jurisdiction(spec("CA-BC", Level::Province, "BC", TaxType::Sales))
        .unwrap();
    let on = b
        .jurisdiction(spec("CA-ON", Level::Province, "ON", TaxType::Sales))
        .unwrap();
    for (j, rate) in [(ca, "0.05"), (bc, "0.07"), (on, "0.07")] {
        b.rule(RuleSpec::flat(
            j,
            "GENERAL_MERCHANDISE",
            d(rate),
            Date::MIN,
            Date::MAX,
            "GENERAL",
        ))
        .unwrap();
    }
    b.holiday(HolidaySpec {
        name: "ONTARIO TEST HOLIDAY (CLOTHING)".into(),
        country: "CA".into(),
        region: "ON".into(),
        include_local: false,
        from: day(),
        to: day(),
        tax_codes: vec!["CLOTHING".into()],
        exclude_codes: Vec::new(),
        max_unit: None,
        cap_inclusive: false,
    })
    .unwrap();
    b.holiday(HolidaySpec {
        name: "ONTARIO SECOND TEST HOLIDAY (CLOTHING)".into(),
        country: "CA".into(),
        region: "ON".into(),
        include_local: false,
        from: Date::from_ymd(2026, 3, 5).unwrap(),
        to: Date::from_ymd(2026, 3, 6).unwrap(),
        tax_codes: vec!["CLOTHING".into()],
        exclude_codes: Vec::new(),
        max_unit: None,
        cap_inclusive: false,
    })
    .unwrap();
    let ca_on = b.jset(&[ca, on]).unwrap();
    let bc_on = b.jset(&[bc, on]).unwrap();
    b.region("CA", "", "CANADA", &[ca], "").unwrap();
    let bytes = b.build(1_772_323_200).unwrap();
    let table = Table::from_bytes(&bytes).unwrap();
    (table, JsetId(ca_on), JsetId(bc_on))
}

/// The notes and taxes due of one $100.00 clothing line in `jset`, and the line's tax.
fn clothing(table: &Table<AlignedBytes>, jset: JsetId) -> (Vec<(Note, Decimal)>, Decimal) {
    clothing_on(table, jset, day())
}

/// As [`clothing`], on `date`.
fn clothing_on(
    table: &Table<AlignedBytes>,
    jset: JsetId,
    date: Date,
) -> (Vec<(Note, Decimal)>, Decimal) {
    // A place in Canada (the country's own record), then put in `jset`.
    let canada = Address {
        country: "CA".into(),
        ..Address::default()
    };
    let mut location = table.resolve(&canada, date).unwrap();
    location.jset = Some(jset);
    let code = table.category("CLOTHING").unwrap();
    let s = sale(
        vec![SaleLine {
            amount: d("10000"),
            quantity: 1,
            per_unit: false,
            tax_code: code,
        }],
        date,
    );
    let c = table.calculate(&location, &s).unwrap();
    let line = &c.lines[0];
    let entries = line
        .jurisdictions
        .iter()
        .map(|j| (j.note, j.tax_due))
        .collect();
    (entries, line.tax)
}

#[test]
fn a_later_place_finds_its_own_holiday() {
    let (t, ca_on, _) = table();
    // CA has no holiday: 5% of 10000 = 500. Ontario's holiday, found after CA's place was
    // searched, zeroes its 7%. Tax 500.
    let (entries, tax) = clothing(&t, ca_on);
    assert_eq!(
        entries,
        [(Note::RateFrac, d("500")), (Note::Holiday, d("0"))]
    );
    assert_eq!(tax, d("500"));
}

#[test]
fn a_place_without_a_holiday_does_not_share_another_places() {
    let (t, _, bc_on) = table();
    // British Columbia first: no holiday there, 7% of 10000 = 700; Ontario still has its
    // holiday. Tax 700.
    let (entries, tax) = clothing(&t, bc_on);
    assert_eq!(
        entries,
        [(Note::RateFrac, d("700")), (Note::Holiday, d("0"))]
    );
    assert_eq!(tax, d("700"));
}

#[test]
fn a_place_between_its_holidays_is_taxed() {
    let (t, ca_on, _) = table();
    // Ontario's holidays are 2026-03-01 and 2026-03-05 to 03-06. On those days its 7% is
    // zeroed (tax 500, CA's 5% of 10000); the day before the first, the days between them
    // and the day after the last, Ontario taxes 7% of 10000 = 700 as well (tax 1200).
    let on = |y, m, day| clothing_on(&t, ca_on, Date::from_ymd(y, m, day).unwrap());
    let holiday = (
        vec![(Note::RateFrac, d("500")), (Note::Holiday, d("0"))],
        d("500"),
    );
    let taxed = (
        vec![(Note::RateFrac, d("500")), (Note::RateFrac, d("700"))],
        d("1200"),
    );
    assert_eq!(on(2026, 2, 28), taxed);
    assert_eq!(on(2026, 3, 1), holiday);
    assert_eq!(on(2026, 3, 2), taxed);
    assert_eq!(on(2026, 3, 4), taxed);
    assert_eq!(on(2026, 3, 5), holiday);
    assert_eq!(on(2026, 3, 6), holiday);
    assert_eq!(on(2026, 3, 7), taxed);
}
