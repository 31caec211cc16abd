//! The curated facts corrected for 2026, each calculated by hand from the source its row in
//! `data/` names: nonprescription drugs, SaaS, software and digital goods, the District of
//! Columbia's rate, sales tax holidays (caps per kind of item, exclusions), Canada's book
//! rebate and three VAT changes.

use std::path::PathBuf;

use levy_build::curated;
use levy_core::*;

/// A table of the curated data, with one ZIP code per state the tests visit, holding the
/// state alone.
fn table() -> Table<AlignedBytes> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let c = curated::load(&dir).unwrap();
    let mut b = TableBuilder::new();
    c.apply_base(&mut b).unwrap();
    for (zip, state, fips, city) in ZIPS {
        let j = b.find_jurisdiction(fips).unwrap();
        b.zip(*zip, state, city, &[j], 0).unwrap();
    }
    c.apply_rules(&mut b).unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

/// (ZIP, state, state FIPS, city): each state's capital or largest city.
const ZIPS: &[(u32, &str, &str, &str)] = &[
    (6103, "CT", "09", "HARTFORD"),
    (23219, "VA", "51", "RICHMOND"),
    (5602, "VT", "50", "MONTPELIER"),
    (20001, "DC", "11", "WASHINGTON"),
    (43215, "OH", "39", "COLUMBUS"),
    (63101, "MO", "29", "SAINT LOUIS"),
    (50309, "IA", "19", "DES MOINES"),
    (29201, "SC", "45", "COLUMBIA"),
    (21201, "MD", "24", "BALTIMORE"),
    (25301, "WV", "54", "CHARLESTON"),
    (72201, "AR", "05", "LITTLE ROCK"),
    (68102, "NE", "31", "OMAHA"),
    (39201, "MS", "28", "JACKSON"),
    (73102, "OK", "40", "OKLAHOMA CITY"),
    (58102, "ND", "38", "FARGO"),
    (2108, "MA", "25", "BOSTON"),
    (87501, "NM", "35", "SANTA FE"),
    (78701, "TX", "48", "AUSTIN"),
    (95814, "CA", "06", "SACRAMENTO"),
];

fn day(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap()
}

fn at(country: &str, postal: &str) -> Address {
    Address {
        postal_code: postal.into(),
        country: country.into(),
        ..Default::default()
    }
}

/// Tax in minor units on one line of `cents` in `category` at `address` on `date`.
fn tax(t: &Table<AlignedBytes>, address: &Address, date: Date, category: &str, cents: i64) -> i64 {
    taxes(t, address, date, &[(category, cents)])[0]
}

/// The tax in minor units of each line of a sale of `(category, cents)` lines, in the
/// address's currency (USD, CAD, else EUR).
fn taxes(
    t: &Table<AlignedBytes>,
    address: &Address,
    date: Date,
    lines: &[(&str, i64)],
) -> Vec<i64> {
    let location = t.resolve(address, date).unwrap();
    let currency = match address.country.as_str() {
        "US" => Currency::USD,
        "CA" => Currency::from_code("CAD").unwrap(),
        _ => Currency::from_code("EUR").unwrap(),
    };
    let sale = Sale {
        currency,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: lines
            .iter()
            .map(|(c, cents)| SaleLine {
                amount: Decimal::from(*cents),
                quantity: 1,
                per_unit: false,
                tax_code: t.category(c).unwrap_or_else(|| panic!("no category {c}")),
            })
            .collect(),
    };
    t.calculate(&location, &sale)
        .unwrap()
        .lines
        .iter()
        .map(|l| i64::try_from(l.tax.mantissa()).unwrap() / 10i64.pow(l.tax.scale()))
        .collect()
}

fn us(zip: &str) -> Address {
    at("US", zip)
}

#[test]
fn nonprescription_drugs_are_exempt_in_connecticut_virginia_vermont_and_dc() {
    let t = table();
    let d = day(2026, 3, 1);
    for zip in ["06103", "23219", "05602", "20001"] {
        assert_eq!(tax(&t, &us(zip), d, "OTC_DRUGS", 1_000), 0, "{zip}");
    }
    // Connecticut since 2015-04-01 (P.A. 14-47 s. 48); the day before, 6.35% of $10.00 =
    // 0.635, rounded half up to 0.64.
    assert_eq!(
        tax(&t, &us("06103"), day(2015, 3, 31), "OTC_DRUGS", 1_000),
        64
    );
    assert_eq!(
        tax(&t, &us("06103"), day(2015, 4, 1), "OTC_DRUGS", 1_000),
        0
    );
    // Other goods in Vermont still pay its 6%: $10.00 -> 0.60.
    assert_eq!(tax(&t, &us("05602"), d, "GENERAL_MERCHANDISE", 1_000), 60);
}

#[test]
fn saas_by_buyer_in_connecticut_and_ohio_and_not_taxed_elsewhere() {
    let t = table();
    let d = day(2026, 3, 1);
    // Connecticut: a consumer's SaaS is canned software at 6.35% ($100.00 -> 6.35); bought
    // for business use it is a computer service at 1% (Conn. Gen. Stat. 12-408(1)(H)).
    assert_eq!(tax(&t, &us("06103"), d, "SAAS_GENERAL", 10_000), 635);
    assert_eq!(tax(&t, &us("06103"), d, "SAAS_BUSINESS", 10_000), 100);
    // Ohio: taxed only for use in business (R.C. 5739.01(B)(3)(e)): 5.75% of 100 = 5.75.
    assert_eq!(tax(&t, &us("43215"), d, "SAAS_GENERAL", 10_000), 0);
    assert_eq!(tax(&t, &us("43215"), d, "SAAS_BUSINESS", 10_000), 575);
    // Arkansas and Nebraska do not tax SaaS; Mississippi from 2023-07-01 (7% before:
    // 7.00 on $100.00).
    assert_eq!(tax(&t, &us("72201"), d, "SAAS_GENERAL", 10_000), 0);
    assert_eq!(tax(&t, &us("68102"), d, "SAAS_GENERAL", 10_000), 0);
    assert_eq!(
        tax(&t, &us("39201"), day(2023, 6, 30), "SAAS_GENERAL", 10_000),
        700
    );
    assert_eq!(
        tax(&t, &us("39201"), day(2023, 7, 1), "SAAS_GENERAL", 10_000),
        0
    );
    // Downloaded software: exempt in Arkansas and Oklahoma; on a disc Arkansas taxes it at
    // 6.5% ($100.00 -> 6.50).
    assert_eq!(
        tax(
            &t,
            &us("72201"),
            d,
            "SOFTWARE_PREWRITTEN_DOWNLOADED",
            10_000
        ),
        0
    );
    assert_eq!(
        tax(
            &t,
            &us("73102"),
            d,
            "SOFTWARE_PREWRITTEN_DOWNLOADED",
            10_000
        ),
        0
    );
    assert_eq!(
        tax(&t, &us("72201"), d, "SOFTWARE_PREWRITTEN_TANGIBLE", 10_000),
        650
    );
    // North Dakota exempts specified digital products.
    assert_eq!(tax(&t, &us("58102"), d, "DIGITAL_AUDIO", 10_000), 0);
}

#[test]
fn the_district_of_columbia_charges_seven_percent_from_october_2026() {
    // D.C. Code 47-2002(a): 6% until 2026-09-30, 7% from 2026-10-01: $100.00 -> 6.00, 7.00.
    let t = table();
    let dc = us("20001");
    assert_eq!(
        tax(&t, &dc, day(2026, 9, 30), "GENERAL_MERCHANDISE", 10_000),
        600
    );
    assert_eq!(
        tax(&t, &dc, day(2026, 10, 1), "GENERAL_MERCHANDISE", 10_000),
        700
    );
}

#[test]
fn ohio_statutory_holiday_and_the_2025_exclusions() {
    let t = table();
    let oh = us("43215");
    // R.C. 5739.02(B)(55), 2026: Friday August 7 to Sunday August 9. Clothing at $75 or
    // less and school supplies at $20 or less are exempt; 5.75% of $75.01 = 4.313 -> 4.31,
    // of $20.01 = 1.1506 -> 1.15.
    let d = day(2026, 8, 7);
    assert_eq!(tax(&t, &oh, d, "CLOTHING", 7_500), 0);
    assert_eq!(tax(&t, &oh, d, "CLOTHING", 7_501), 431);
    assert_eq!(tax(&t, &oh, day(2026, 8, 9), "SCHOOL_SUPPLIES", 2_000), 0);
    assert_eq!(tax(&t, &oh, d, "SCHOOL_SUPPLIES", 2_001), 115);
    assert_eq!(tax(&t, &oh, day(2026, 8, 10), "CLOTHING", 5_000), 288);
    // 2027: August 6 to 8.
    assert_eq!(tax(&t, &oh, day(2027, 8, 6), "CLOTHING", 5_000), 0);
    // The 2025 holiday of R.C. 5739.41 covered most goods at $500 or less but not tobacco,
    // vapor products or alcohol: 5.75% of $10.00 = 0.575 -> 0.58.
    let d = day(2025, 8, 5);
    assert_eq!(tax(&t, &oh, d, "GENERAL_MERCHANDISE", 1_000), 0);
    assert_eq!(tax(&t, &oh, d, "TOBACCO_CIGARETTES", 1_000), 58);
    assert_eq!(tax(&t, &oh, d, "VAPOR_PRODUCTS", 1_000), 58);
    assert_eq!(tax(&t, &oh, d, "BEVERAGES_ALCOHOLIC", 1_000), 58);
    // Massachusetts 2025 (M.G.L. c. 64H s. 6A) excluded meals: 6.25% of $10.00 -> 0.63.
    let ma = us("02108");
    assert_eq!(tax(&t, &ma, day(2025, 8, 9), "PREPARED_FOOD", 1_000), 63);
    assert_eq!(
        tax(&t, &ma, day(2025, 8, 9), "ELECTRONIC_GOODS", 100_000),
        0
    );
}

#[test]
fn missouri_caps_each_kind_of_item_separately() {
    // RSMo 144.049, 2026: Friday August 7 to Sunday August 9; clothing to $100, school
    // supplies to $50, software to $350, computers to $1,500. Missouri's 4.225%.
    let t = table();
    let mo = us("63101");
    let d = day(2026, 8, 8);
    assert_eq!(tax(&t, &mo, d, "CLOTHING", 10_000), 0);
    assert_eq!(tax(&t, &mo, d, "SCHOOL_SUPPLIES", 5_000), 0);
    assert_eq!(tax(&t, &mo, d, "SOFTWARE_PREWRITTEN_TANGIBLE", 35_000), 0);
    assert_eq!(tax(&t, &mo, d, "COMPUTERS", 150_000), 0);
    // Over a cap: 4.225% of $50.01 = 2.1129 -> 2.11; of $1,500.01 = 63.3754 -> 63.38.
    assert_eq!(tax(&t, &mo, d, "SCHOOL_SUPPLIES", 5_001), 211);
    assert_eq!(tax(&t, &mo, d, "COMPUTERS", 150_001), 6_338);
    // A $60 school supply is over its own $50 cap though under clothing's $100:
    // 4.225% of 60 = 2.535 -> 2.54.
    assert_eq!(tax(&t, &mo, d, "SCHOOL_SUPPLIES", 6_000), 254);
}

#[test]
fn iowa_south_carolina_virginia_maryland_and_west_virginia_holidays() {
    let t = table();
    // Iowa Code 423.3(68): Friday and Saturday, clothing under $100. 2026: August 7-8.
    let ia = us("50309");
    assert_eq!(tax(&t, &ia, day(2026, 8, 8), "CLOTHING", 9_999), 0);
    // $100.00 is not under $100: 6% -> 6.00. Sunday is not in it: 6% of 99.99 -> 6.00.
    assert_eq!(tax(&t, &ia, day(2026, 8, 8), "CLOTHING", 10_000), 600);
    assert_eq!(tax(&t, &ia, day(2026, 8, 9), "CLOTHING", 9_999), 600);
    // S.C. Code 12-36-2120(57): no price limit; a $3,000 computer pays nothing on
    // 2026-08-07, general goods 6%.
    let sc = us("29201");
    assert_eq!(tax(&t, &sc, day(2026, 8, 7), "COMPUTERS", 300_000), 0);
    assert_eq!(
        tax(&t, &sc, day(2026, 8, 7), "GENERAL_MERCHANDISE", 10_000),
        600
    );
    // Va. Code 58.1-611.3: school supplies to $20, clothing to $100; Virginia's state 4.3%
    // of $20.01 = 0.8604 -> 0.86.
    let va = us("23219");
    assert_eq!(tax(&t, &va, day(2026, 8, 9), "CLOTHING", 10_000), 0);
    assert_eq!(tax(&t, &va, day(2026, 8, 9), "SCHOOL_SUPPLIES", 2_000), 0);
    assert_eq!(tax(&t, &va, day(2026, 8, 9), "SCHOOL_SUPPLIES", 2_001), 86);
    // Tax-General 11-228: the second Sunday of August 2026 is the 9th, through Saturday the
    // 15th; clothing to $100, accessories not included (6% of $50 = 3.00).
    let md = us("21201");
    assert_eq!(tax(&t, &md, day(2026, 8, 9), "FOOTWEAR", 10_000), 0);
    assert_eq!(tax(&t, &md, day(2026, 8, 15), "CLOTHING", 10_000), 0);
    assert_eq!(tax(&t, &md, day(2026, 8, 8), "CLOTHING", 10_000), 600);
    assert_eq!(
        tax(&t, &md, day(2026, 8, 10), "CLOTHING_ACCESSORIES", 5_000),
        300
    );
    // W. Va. Code 11-15-9s: the Friday before the first Sunday in August through the
    // Monday after it: Friday July 31 to Monday August 3, 2026; clothing to $125, laptops
    // to $500; 6% of $500.01 = 30.0006 -> 30.00; the Tuesday after, clothing 6% of $125.00
    // = 7.50.
    let wv = us("25301");
    assert_eq!(tax(&t, &wv, day(2026, 8, 3), "CLOTHING", 12_500), 0);
    assert_eq!(tax(&t, &wv, day(2026, 7, 31), "COMPUTERS", 50_000), 0);
    assert_eq!(tax(&t, &wv, day(2026, 7, 31), "COMPUTERS", 50_001), 3_000);
    assert_eq!(tax(&t, &wv, day(2026, 8, 4), "CLOTHING", 12_500), 750);
}

#[test]
fn arkansas_holiday_covers_accessories_under_50_and_electronic_devices() {
    // Ark. Code 26-52-444 (Act 944 of 2021), 2026: Saturday August 1 and Sunday August 2.
    // Accessories under $50; 6.5% of $50.00 = 3.25. Electronic devices with no limit.
    let t = table();
    let ar = us("72201");
    let d = day(2026, 8, 1);
    assert_eq!(tax(&t, &ar, d, "CLOTHING_ACCESSORIES", 4_999), 0);
    assert_eq!(tax(&t, &ar, d, "CLOTHING_ACCESSORIES", 5_000), 325);
    assert_eq!(tax(&t, &ar, d, "COMPUTERS", 200_000), 0);
    assert_eq!(tax(&t, &ar, day(2026, 8, 3), "COMPUTERS", 10_000), 650);
}

#[test]
fn printed_books_pay_only_the_federal_part_of_the_hst() {
    // CRA, point-of-sale rebates: the provincial part of the HST on printed books is
    // rebated in Ontario and Prince Edward Island, so C$100.00 pays the 5% federal part.
    let t = table();
    let d = day(2026, 3, 1);
    let on = at("CA", "K1A 0B1");
    assert_eq!(tax(&t, &on, d, "BOOKS", 10_000), 500);
    assert_eq!(tax(&t, &on, d, "GENERAL_MERCHANDISE", 10_000), 1_300);
    let pe = at("CA", "C1A 4P3");
    assert_eq!(tax(&t, &pe, d, "BOOKS", 10_000), 500);
    assert_eq!(tax(&t, &pe, d, "GENERAL_MERCHANDISE", 10_000), 1_500);
}

#[test]
fn czech_books_austrian_staples_and_slovak_food() {
    let t = table();
    // Czechia (Act 349/2023 Coll.): books 10% until 2023-12-31, 0% from 2024-01-01.
    let cz = at("CZ", "11000");
    assert_eq!(tax(&t, &cz, day(2023, 12, 31), "BOOKS", 10_000), 1_000);
    assert_eq!(tax(&t, &cz, day(2024, 1, 1), "BOOKS", 10_000), 0);
    // Austria: staples at 4.9% from 2026-07-01 (10% before); other food stays at 10%.
    let at_ = at("AT", "1010");
    assert_eq!(
        tax(&t, &at_, day(2026, 6, 30), "GROCERIES_BASIC", 10_000),
        1_000
    );
    assert_eq!(
        tax(&t, &at_, day(2026, 7, 1), "GROCERIES_BASIC", 10_000),
        490
    );
    assert_eq!(tax(&t, &at_, day(2026, 7, 1), "GROCERIES", 10_000), 1_000);
    // Slovakia from 2025 (Act 278/2024 Coll.): basic foods 5%, other food 19%, books 5%.
    let sk = at("SK", "81101");
    let d = day(2026, 3, 1);
    assert_eq!(tax(&t, &sk, d, "GROCERIES_BASIC", 10_000), 500);
    assert_eq!(tax(&t, &sk, d, "GROCERIES", 10_000), 1_900);
    assert_eq!(tax(&t, &sk, d, "BOOKS", 10_000), 500);
}

#[test]
fn every_row_of_the_curated_files_names_a_source_and_an_as_of_date() {
    // The validators refuse a row without them; a file with one removed says which.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let text = std::fs::read_to_string(dir.join("holidays.toml")).unwrap();
    let cut = text.replacen("as_of = 2026-11-23\n", "", 1);
    assert_ne!(cut, text);
    let files: Vec<String> = curated::FILES
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .collect();
    let mut texts = files.clone();
    texts[3] = cut;
    let e = curated::Curated::from_strs(&curated::CuratedText {
        taxonomy: &texts[0],
        us_states: &texts[1],
        us_rules: &texts[2],
        holidays: &texts[3],
        countries: &texts[4],
        canada: &texts[5],
        taxability: &[],
    })
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("holidays.toml") && e.contains("as_of"), "{e}");
}

#[test]
fn texas_taxes_delivery_in_proportion_to_the_taxable_goods() {
    // 34 TAC 3.303 (Comptroller): a delivery charge for taxable and exempt items together is
    // taxable in proportion to the taxable items. Clothing $60.00 (taxed), groceries $40.00
    // (exempt), shipping $10.00: 60% of it, $6.00, at Texas's 6.25% = 0.375 -> 0.38; the
    // clothing 6.25% of 60.00 = 3.75.
    let t = table();
    let tx = us("78701");
    let d = day(2026, 3, 1);
    assert_eq!(
        taxes(
            &t,
            &tx,
            d,
            &[
                ("CLOTHING", 6_000),
                ("GROCERIES", 4_000),
                ("SHIPPING", 1_000)
            ]
        ),
        vec![375, 0, 38]
    );
    // Handling follows the same rule; delivering only groceries is not taxed.
    assert_eq!(
        taxes(&t, &tx, d, &[("GROCERIES", 4_000), ("HANDLING", 500)]),
        vec![0, 0]
    );
}

#[test]
fn california_exempts_separately_stated_shipping_but_not_handling() {
    // Regulation 1628(b)(3): separately stated shipping by common carrier is exempt; handling
    // is part of the taxable price. With $100.00 of taxable goods at California's 7.25%:
    // shipping $10.00 -> 0; handling $5.00 -> 0.3625 -> 0.36; shipping and handling billed
    // as one $10.00 -> 0.725 -> 0.73.
    let t = table();
    let ca = us("95814");
    let d = day(2026, 3, 1);
    assert_eq!(
        taxes(
            &t,
            &ca,
            d,
            &[
                ("GENERAL_MERCHANDISE", 10_000),
                ("SHIPPING", 1_000),
                ("HANDLING", 500),
                ("SHIPPING_AND_HANDLING", 1_000)
            ]
        ),
        vec![725, 0, 36, 73]
    );
}

#[test]
fn new_mexico_back_to_school_holiday() {
    // NMSA 1978 7-9-95 as amended in 2025: the last Friday in July through Sunday, in 2026
    // Friday July 31 to Sunday August 2. Clothing under $100, school supplies under $30,
    // computers up to $1,000. New Mexico's state rate here, 4.875%: a $30.00 school supply
    // is not under $30, 1.4625 -> 1.46.
    let t = table();
    let nm = us("87501");
    let d = day(2026, 8, 1);
    assert_eq!(tax(&t, &nm, d, "CLOTHING", 9_999), 0);
    assert_eq!(tax(&t, &nm, d, "SCHOOL_SUPPLIES", 2_999), 0);
    assert_eq!(tax(&t, &nm, d, "SCHOOL_SUPPLIES", 3_000), 146);
    assert_eq!(tax(&t, &nm, d, "COMPUTERS", 100_000), 0);
}
