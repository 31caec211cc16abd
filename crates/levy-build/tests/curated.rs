//! The curated data in `data/`, loaded and applied to a table, calculated by hand.
//!
//! Local jurisdictions that levy ships no data for (Davidson County, New York City, ...) are
//! added here as another source would add them, with the published local rate, so that
//! the curated rules can be seen reaching them.

use std::path::PathBuf;

use levy_build::curated::{self, Curated, CuratedError, CuratedText, IpRanges};
use levy_core::*;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn pct(s: &str) -> Decimal {
    s.parse::<Decimal>().unwrap() / Decimal::from(100)
}

fn local(
    b: &mut TableBuilder,
    code: &str,
    name: &str,
    level: Level,
    state: &str,
    rate: &str,
) -> JurisdictionId {
    let j = b
        .jurisdiction(JurisdictionSpec {
            code: code.into(),
            name: name.into(),
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
        pct(rate),
        Date::MIN,
        Date::MAX,
        "LOCAL SALES TAX",
    ))
    .unwrap();
    j
}

/// A table of the curated data plus a few ZIP codes with local jurisdictions.
fn table() -> Table<AlignedBytes> {
    let c = curated::load(&data_dir()).unwrap();
    let mut b = TableBuilder::new();
    let base = c.apply_base(&mut b).unwrap();
    assert!(base.jurisdictions > 100 && base.holidays >= 30, "{base:?}");

    // Davidson County, Tennessee: 2.25% local rate (Tennessee Department of Revenue, local
    // sales tax rate list).
    let tn = b.find_jurisdiction("47").unwrap();
    let davidson = local(&mut b, "47037", "DAVIDSON", Level::County, "TN", "2.25");
    b.zip(37203, "TN", "NASHVILLE", &[tn, davidson], 0).unwrap();
    // New York City: 4.5% city rate and the 3/8% MCTD tax (New York State Department of
    // Taxation and Finance, publication 718). Albany County: 4% (same publication). Staten
    // Island as `levy build` names the ZIP5 tables' jurisdictions.
    let ny = b.find_jurisdiction("36").unwrap();
    let nyc = local(&mut b, "3651000", "NEW YORK CITY", Level::City, "NY", "4.5");
    let mctd = local(
        &mut b,
        "36:SPECIAL:MCTD:0.00375",
        "MCTD",
        Level::District,
        "NY",
        "0.375",
    );
    let albany = local(&mut b, "36001", "ALBANY", Level::County, "NY", "4");
    let richmond = local(
        &mut b,
        "36:CITY:RICHMOND:0.045",
        "RICHMOND",
        Level::City,
        "NY",
        "4.5",
    );
    b.zip(10001, "NY", "NEW YORK", &[ny, nyc, mctd], 0).unwrap();
    b.zip(10301, "NY", "STATEN ISLAND", &[ny, richmond, mctd], 0)
        .unwrap();
    b.zip(12207, "NY", "ALBANY", &[ny, albany], 0).unwrap();
    let ma = b.find_jurisdiction("25").unwrap();
    b.zip(2108, "MA", "BOSTON", &[ma], 0).unwrap();
    let ri = b.find_jurisdiction("44").unwrap();
    b.zip(2903, "RI", "PROVIDENCE", &[ri], 0).unwrap();
    let tx = b.find_jurisdiction("48").unwrap();
    b.zip(78701, "TX", "AUSTIN", &[tx], 0).unwrap();
    let il = b.find_jurisdiction("17").unwrap();
    b.zip(62701, "IL", "SPRINGFIELD", &[il], 0).unwrap();

    let rules = c.apply_rules(&mut b).unwrap();
    // Every set holding Tennessee gained the single article tax: the region's own set
    // already had it, the ZIP's did not.
    assert_eq!(rules.sets_extended, 1, "{rules:?}");
    let bytes = b.build(0).unwrap();
    Table::from_bytes(&bytes).unwrap()
}

fn us(zip: &str) -> Address {
    Address {
        postal_code: zip.into(),
        country: "US".into(),
        ..Default::default()
    }
}

fn day(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap()
}

/// Tax in minor units of one line of `cents` in `category` at `address` on `date`.
fn tax_at(
    t: &Table<AlignedBytes>,
    address: &Address,
    date: Date,
    category: &str,
    cents: i64,
    currency: Currency,
) -> Decimal {
    calc_at(t, address, date, category, cents, currency).total_tax
}

fn calc_at(
    t: &Table<AlignedBytes>,
    address: &Address,
    date: Date,
    category: &str,
    cents: i64,
    currency: Currency,
) -> Calculation {
    let location = t.resolve(address, date).unwrap();
    let sale = Sale {
        currency,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![SaleLine {
            amount: Decimal::from(cents),
            quantity: 1,
            per_unit: false,
            tax_code: t
                .category(category)
                .unwrap_or_else(|| panic!("no category {category}")),
        }],
    };
    t.calculate(&location, &sale).unwrap()
}

const USD: Currency = Currency::USD;

#[test]
fn tennessee_single_article() {
    // Tennessee Department of Revenue, "Single Article": the 7% state rate applies to the whole
    // price, the local rate (2.25% in Davidson County) only to the first $1,600, and the state
    // single article tax of 2.75% to the part from $1,600.01 to $3,200.
    let t = table();
    let a = us("37203");
    let d = day(2026, 3, 1);
    // $1,000: 70.00 + 22.50 = 92.50.
    assert_eq!(
        tax_at(&t, &a, d, "GENERAL_MERCHANDISE", 100_000, USD),
        Decimal::from(9_250)
    );
    // $2,500: 175.00 + 2.25% of 1,600 = 36.00 + 2.75% of 900 = 24.75; 235.75.
    assert_eq!(
        tax_at(&t, &a, d, "GENERAL_MERCHANDISE", 250_000, USD),
        Decimal::from(23_575)
    );
    // $5,000: 350.00 + 36.00 + 2.75% of 1,600 = 44.00; 430.00.
    assert_eq!(
        tax_at(&t, &a, d, "GENERAL_MERCHANDISE", 500_000, USD),
        Decimal::from(43_000)
    );
    // The single article tax is its own STATE-level jurisdiction.
    let calc = calc_at(&t, &a, d, "GENERAL_MERCHANDISE", 250_000, USD);
    let sat = t.jurisdiction_by_code("47:SAT").unwrap();
    let entry = calc.lines[0]
        .jurisdictions
        .iter()
        .find(|j| j.jurisdiction == sat)
        .unwrap();
    assert_eq!(entry.tax_due, Decimal::from(2_475));
    assert_eq!(t.jurisdiction(sat).unwrap().level(), Level::State);
    // A state-only address (no ZIP) reaches it through the region: $2,500 = 175 + 24.75.
    let state_only = Address {
        region: "TN".into(),
        country: "US".into(),
        ..Default::default()
    };
    assert_eq!(
        tax_at(&t, &state_only, d, "GENERAL_MERCHANDISE", 250_000, USD),
        Decimal::from(19_975)
    );
}

#[test]
fn tennessee_food_rate_and_prescriptions() {
    // Food and food ingredients: 4% state rate plus the full local rate (Tennessee Department
    // of Revenue); $100 of groceries in Davidson County is 4.00 + 2.25 = 6.25.
    let t = table();
    let d = day(2026, 3, 1);
    assert_eq!(
        tax_at(&t, &us("37203"), d, "GROCERIES", 10_000, USD),
        Decimal::from(625)
    );
    // Before 2017-07-01 the state food rate was 5%: 5.00 + 2.25.
    assert_eq!(
        tax_at(&t, &us("37203"), day(2017, 6, 30), "GROCERIES", 10_000, USD),
        Decimal::from(725)
    );
    // Prescription drugs are exempt everywhere in Tennessee, single article tax included,
    // even for a $3,000 prescription.
    assert_eq!(
        tax_at(&t, &us("37203"), d, "PRESCRIPTION_DRUGS", 300_000, USD),
        Decimal::ZERO
    );
}

#[test]
fn massachusetts_clothing_above_175() {
    // Massachusetts DOR: clothing is exempt up to $175 per item; 6.25% on the part above.
    let t = table();
    let d = day(2026, 3, 1);
    assert_eq!(
        tax_at(&t, &us("02108"), d, "CLOTHING", 15_000, USD),
        Decimal::ZERO
    );
    // $200: 6.25% of 25 = 1.5625 dollars = 156.25 cents, rounded to 156.
    assert_eq!(
        tax_at(&t, &us("02108"), d, "CLOTHING_GENERAL", 20_000, USD),
        Decimal::from(156)
    );
    // Ordinary goods still pay 6.25% of the whole price: $200 -> 12.50.
    assert_eq!(
        tax_at(&t, &us("02108"), d, "GENERAL_MERCHANDISE", 20_000, USD),
        Decimal::from(1_250)
    );
}

#[test]
fn rhode_island_clothing_above_250() {
    // Rhode Island Division of Taxation: clothing exempt up to $250; 7% on the part above.
    // $300: 7% of 50 = 3.50.
    let t = table();
    assert_eq!(
        tax_at(&t, &us("02903"), day(2026, 3, 1), "CLOTHING", 30_000, USD),
        Decimal::from(350)
    );
}

#[test]
fn new_york_clothing_under_110() {
    // NY DTF, clothing and footwear: items under $110 are exempt from the 4% state tax, the
    // 3/8% MCTD tax and New York City's 4.5%; an item of $110 or more is taxed in full.
    let t = table();
    let d = day(2026, 3, 1);
    assert_eq!(
        tax_at(&t, &us("10001"), d, "CLOTHING", 10_999, USD),
        Decimal::ZERO
    );
    assert_eq!(
        tax_at(&t, &us("10301"), d, "FOOTWEAR", 10_999, USD),
        Decimal::ZERO
    );
    // $110.00 at 8.875% = 9.7625 -> 9.76.
    assert_eq!(
        tax_at(&t, &us("10001"), d, "CLOTHING", 11_000, USD),
        Decimal::from(976)
    );
    assert_eq!(
        tax_at(&t, &us("10301"), d, "CLOTHING", 11_000, USD),
        Decimal::from(976)
    );
    // General merchandise under $110 is taxed: $100 at 8.875% = 8.875 -> 8.88.
    assert_eq!(
        tax_at(&t, &us("10001"), d, "GENERAL_MERCHANDISE", 10_000, USD),
        Decimal::from(888)
    );
    // Outside New York City the locality keeps its general rate (documented in
    // us-rules.toml): Albany County's 4% on $109.99 = 4.3996 -> 4.40.
    assert_eq!(
        tax_at(&t, &us("12207"), d, "CLOTHING", 10_999, USD),
        Decimal::from(440)
    );
}

#[test]
fn texas_back_to_school_holiday() {
    // Texas Comptroller: clothing, footwear and school supplies priced under $100 are exempt
    // from state and local tax from Friday 2025-08-08 through Sunday 2025-08-10.
    let t = table();
    let a = us("78701");
    let inside = day(2025, 8, 9);
    assert_eq!(
        tax_at(&t, &a, inside, "CLOTHING", 9_999, USD),
        Decimal::ZERO
    );
    let calc = calc_at(&t, &a, inside, "FOOTWEAR", 9_999, USD);
    assert_eq!(calc.lines[0].jurisdictions[0].note, Note::Holiday);
    // $100.00 is not under the cap: 6.25% of 100 = 6.25.
    assert_eq!(
        tax_at(&t, &a, inside, "CLOTHING", 10_000, USD),
        Decimal::from(625)
    );
    // The day after: 6.25% of 99.99 = 6.249375 -> 6.25.
    assert_eq!(
        tax_at(&t, &a, day(2025, 8, 11), "CLOTHING", 9_999, USD),
        Decimal::from(625)
    );
    // Not a covered item: $40 of general merchandise pays 2.50.
    assert_eq!(
        tax_at(&t, &a, inside, "GENERAL_MERCHANDISE", 4_000, USD),
        Decimal::from(250)
    );
    // 2026 by the statute's rule: the Friday before the second Monday in August (August 10)
    // is August 7; Sunday August 9 is the last day.
    assert_eq!(
        tax_at(&t, &a, day(2026, 8, 7), "CLOTHING", 5_000, USD),
        Decimal::ZERO
    );
    assert_eq!(
        tax_at(&t, &a, day(2026, 8, 9), "SCHOOL_SUPPLIES", 5_000, USD),
        Decimal::ZERO
    );
    // 6.25% of 50 = 3.125 -> 3.13 (half away from zero).
    assert_eq!(
        tax_at(&t, &a, day(2026, 8, 6), "CLOTHING", 5_000, USD),
        Decimal::from(313)
    );
}

#[test]
fn texas_saas_is_80_percent_taxable() {
    // Tax Code 151.351: 20% of data processing is exempt; 6.25% of 80% of $100 = 5.00.
    let t = table();
    assert_eq!(
        tax_at(
            &t,
            &us("78701"),
            day(2026, 3, 1),
            "SAAS_GENERAL",
            10_000,
            USD
        ),
        Decimal::from(500)
    );
}

#[test]
fn illinois_grocery_and_drug_low_rate() {
    // Illinois: food and drugs 1% (state) until the state grocery tax ended 2025-12-31.
    let t = table();
    assert_eq!(
        tax_at(&t, &us("62701"), day(2025, 6, 1), "GROCERIES", 10_000, USD),
        Decimal::from(100)
    );
    assert_eq!(
        tax_at(&t, &us("62701"), day(2026, 1, 1), "GROCERIES", 10_000, USD),
        Decimal::ZERO
    );
    assert_eq!(
        tax_at(
            &t,
            &us("62701"),
            day(2026, 1, 1),
            "PRESCRIPTION_DRUGS",
            10_000,
            USD
        ),
        Decimal::from(100)
    );
    // General merchandise: 6.25% of 100.
    assert_eq!(
        tax_at(
            &t,
            &us("62701"),
            day(2026, 1, 1),
            "GENERAL_MERCHANDISE",
            10_000,
            USD
        ),
        Decimal::from(625)
    );
}

#[test]
fn germany_vat_standard_and_reduced() {
    // Umsatzsteuergesetz s. 12: 19% standard, 7% on food and books.
    let t = table();
    let eur = Currency::from_code("EUR").unwrap();
    let de = Address {
        postal_code: "10115".into(),
        country: "DE".into(),
        ..Default::default()
    };
    let d = day(2026, 3, 1);
    assert_eq!(
        tax_at(&t, &de, d, "GENERAL_MERCHANDISE", 10_000, eur),
        Decimal::from(1_900)
    );
    assert_eq!(
        tax_at(&t, &de, d, "GROCERIES", 10_000, eur),
        Decimal::from(700)
    );
    assert_eq!(
        tax_at(&t, &de, d, "ELECTRONIC_GOODS", 10_000, eur),
        Decimal::from(1_900)
    );
    let calc = calc_at(&t, &de, d, "BOOKS", 10_000, eur);
    let j = t
        .jurisdiction(calc.lines[0].jurisdictions[0].jurisdiction)
        .unwrap();
    assert_eq!(
        (j.code(), j.level(), j.tax_type()),
        ("DE", Level::Country, TaxType::Vat)
    );
}

#[test]
fn vat_rate_changes_take_effect_on_their_day() {
    // Swiss Federal Tax Administration: 7.7% until 2023-12-31, 8.1% from 2024-01-01.
    let t = table();
    let chf = Currency::from_code("CHF").unwrap();
    let ch = Address {
        country: "CH".into(),
        ..Default::default()
    };
    assert_eq!(
        tax_at(
            &t,
            &ch,
            day(2023, 12, 31),
            "GENERAL_MERCHANDISE",
            10_000,
            chf
        ),
        Decimal::from(770)
    );
    assert_eq!(
        tax_at(&t, &ch, day(2024, 1, 1), "GENERAL_MERCHANDISE", 10_000, chf),
        Decimal::from(810)
    );
    // IRAS: Singapore GST 9% from 2024-01-01.
    let sgd = Currency::from_code("SGD").unwrap();
    let sg = Address {
        country: "SG".into(),
        ..Default::default()
    };
    assert_eq!(
        tax_at(&t, &sg, day(2024, 1, 1), "GENERAL_MERCHANDISE", 10_000, sgd),
        Decimal::from(900)
    );
}

#[test]
fn canada_hst_gst_and_pst() {
    // CRA GST/HST rates: Ontario HST 13%; British Columbia GST 5% plus PST 7%.
    let t = table();
    let cad = Currency::from_code("CAD").unwrap();
    let d = day(2026, 3, 1);
    let on = Address {
        postal_code: "M5V 3L9".into(),
        country: "CA".into(),
        ..Default::default()
    };
    let calc = calc_at(&t, &on, d, "GENERAL_MERCHANDISE", 10_000, cad);
    assert_eq!(calc.total_tax, Decimal::from(1_300));
    assert_eq!(calc.lines[0].jurisdictions.len(), 1);
    let bc = Address {
        postal_code: "V6B 1A1".into(),
        country: "CA".into(),
        ..Default::default()
    };
    let calc = calc_at(&t, &bc, d, "GENERAL_MERCHANDISE", 10_000, cad);
    assert_eq!(calc.total_tax, Decimal::from(1_200));
    let mut parts: Vec<(String, Decimal)> = calc.lines[0]
        .jurisdictions
        .iter()
        .map(|j| {
            (
                t.jurisdiction(j.jurisdiction).unwrap().code().to_string(),
                j.tax_due,
            )
        })
        .collect();
    parts.sort();
    assert_eq!(
        parts,
        vec![
            ("CA".to_string(), Decimal::from(500)),
            ("CA-BC".to_string(), Decimal::from(700))
        ]
    );
    // Basic groceries are zero-rated under the HST.
    assert_eq!(tax_at(&t, &on, d, "GROCERIES", 10_000, cad), Decimal::ZERO);
    // Nova Scotia HST: 15% until 2025-03-31, 14% from 2025-04-01.
    let ns = Address {
        postal_code: "B3H 1A1".into(),
        country: "CA".into(),
        ..Default::default()
    };
    assert_eq!(
        tax_at(
            &t,
            &ns,
            day(2025, 3, 31),
            "GENERAL_MERCHANDISE",
            10_000,
            cad
        ),
        Decimal::from(1_500)
    );
    assert_eq!(
        tax_at(&t, &ns, day(2025, 4, 1), "GENERAL_MERCHANDISE", 10_000, cad),
        Decimal::from(1_400)
    );
    // Quebec: GST 5% + QST 9.975% = 14.975% of 100 = 14.975 -> 14.98.
    let qc = Address {
        postal_code: "H2X 1Y4".into(),
        country: "CA".into(),
        ..Default::default()
    };
    assert_eq!(
        tax_at(&t, &qc, d, "GENERAL_MERCHANDISE", 10_000, cad),
        Decimal::from(1_498)
    );
    // Nunavut (X0A) has only the GST; Yellowknife (X1A, Northwest Territories) likewise.
    let nu = t
        .resolve(
            &Address {
                postal_code: "X0A 0H0".into(),
                country: "CA".into(),
                ..Default::default()
            },
            d,
        )
        .unwrap();
    assert_eq!(t.address_used(&nu).region, "NU");
    let nt = t
        .resolve(
            &Address {
                postal_code: "X1A 2L9".into(),
                country: "CA".into(),
                ..Default::default()
            },
            d,
        )
        .unwrap();
    assert_eq!(t.address_used(&nt).region, "NT");
}

#[test]
fn every_category_of_the_interface_exists() {
    // spec/interface-notes.md, "Product categories".
    let t = table();
    for c in [
        "GENERAL_MERCHANDISE",
        "EXEMPT",
        "NON_TAXABLE",
        "CLOTHING",
        "CLOTHING_GENERAL",
        "SAAS_GENERAL",
        "ELECTRONIC_GOODS",
        "SOFTWARE_PREWRITTEN_DOWNLOADED",
        "DIGITAL_GOODS",
        "BEVERAGES",
        "GIFT_CARDS",
        "PRODUCT_INSURANCE",
        "TOBACCO",
        "VAPOR_PRODUCTS",
        "EV_CHARGING",
    ] {
        assert!(t.category(c).is_some(), "{c}");
    }
    // EXEMPT, NON_TAXABLE and GIFT_CARDS are never taxed.
    for c in ["EXEMPT", "NON_TAXABLE", "GIFT_CARDS"] {
        assert_eq!(
            tax_at(&t, &us("37203"), day(2026, 3, 1), c, 10_000, USD),
            Decimal::ZERO,
            "{c}"
        );
    }
}

fn texts() -> Vec<String> {
    curated::FILES
        .iter()
        .map(|f| std::fs::read_to_string(data_dir().join(f)).unwrap())
        .collect()
}

fn parse_with(replace: usize, text: &str) -> Result<Curated, CuratedError> {
    let t = texts();
    let get = |i: usize| if i == replace { text } else { t[i].as_str() };
    Curated::from_strs(&CuratedText {
        taxonomy: get(0),
        us_states: get(1),
        us_rules: get(2),
        holidays: get(3),
        countries: get(4),
        canada: get(5),
        taxability: &[],
    })
}

#[test]
fn bad_input_names_the_file_and_the_line_or_key() {
    let t = texts();
    // A rate that is not a percentage.
    let bad = t[1].replacen(
        "rate = \"7%\", from = 2002-07-15",
        "rate = \"0.07\", from = 2002-07-15",
        1,
    );
    let e = parse_with(1, &bad).unwrap_err().to_string();
    assert!(
        e.starts_with("us-states.toml: state[TN].rates[0].rate:"),
        "{e}"
    );
    // Broken TOML: the message carries the line.
    let e = parse_with(3, "[[holiday]\nname = 1\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("holidays.toml:") && e.contains("line 1"),
        "{e}"
    );
    // A tax code the taxonomy does not define.
    let bad = t[2].replacen("code = \"GROCERIES\"", "code = \"FOODSTUFF\"", 1);
    let e = parse_with(2, &bad).unwrap_err().to_string();
    assert!(
        e.contains("us-rules.toml: jurisdiction[0].rules[1].code")
            && e.contains("unknown tax code \"FOODSTUFF\""),
        "{e}"
    );
    // A rule on a product's own treatment belongs in the matrix.
    let bad = t[2].replacen(
        "code = \"GENERAL_MERCHANDISE\"\napplies_to",
        "code = \"CLOTHING\"\napplies_to",
        1,
    );
    assert_ne!(bad, t[2]);
    let e = parse_with(2, &bad).unwrap_err().to_string();
    assert!(e.contains("taxability/us/"), "{e}");
    // A holiday that ends before it starts.
    let bad = t[3].replacen("to = 2025-08-10", "to = 2025-08-01", 1);
    let e = parse_with(3, &bad).unwrap_err().to_string();
    assert_eq!(e, "holidays.toml: holiday[0]: `to` is before `from`");
    // Unknown fields are refused rather than ignored.
    let e = parse_with(5, &format!("{}\nsurprise = 1\n", t[5]))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("canada.toml:") && e.contains("surprise"),
        "{e}"
    );
    // A missing directory names the file.
    let e = curated::load(std::path::Path::new("/nonexistent"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/nonexistent/taxonomy.toml: cannot read"),
        "{e}"
    );
}

#[test]
fn sources_hash_each_file() {
    let c = curated::load(&data_dir()).unwrap();
    let s = c.sources();
    // Each file, then the taxability matrix as one entry (its files' hashes hashed).
    let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names[..curated::FILES.len()], curated::FILES);
    assert_eq!(names[curated::FILES.len()..], ["taxability/"]);
    assert!(s
        .iter()
        .all(|s| s.kind == "curated" && s.sha256.len() == 64));
    // 50 states, DC and Puerto Rico.
    assert_eq!(s[1].rows_read, 52);
}

#[test]
fn ip_ranges_load_sorted_and_disjoint() {
    let r = IpRanges::load(&data_dir().join("ip")).unwrap();
    assert!(r.v4.len() > 100_000 && r.v6.len() > 100_000);
    assert!(r.v4.windows(2).all(|w| w[0].1 < w[1].0));
    assert!(r.v6.windows(2).all(|w| w[0].1 < w[1].0));
    // 1.0.0.0/24 is registered to APNIC's research network in Australia.
    let first = r.v4[0];
    assert_eq!(
        (first.0, first.1, &first.2),
        (0x0100_0000, 0x0100_00ff, b"AU")
    );
}

/// The most common `StateRate` of each state in the published December 2025 ZIP5 tables
/// (`shared/data/zip5-rates-2025-12`, read from the project's root as `../shared/data`).
/// `None` when the folder is absent (a bare checkout), which fails under `CI=true` like
/// every real-data test; a file that is there but unreadable or malformed always fails.
fn published_state_rates() -> Option<std::collections::BTreeMap<String, Decimal>> {
    let dir = levy_testkit::shared_data("zip5-rates-2025-12")?;
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut counts: std::collections::BTreeMap<String, std::collections::BTreeMap<Decimal, u32>> =
        Default::default();
    for e in entries {
        let path = e.expect("a directory entry").path();
        let mut r =
            csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (i, row) in r.records().enumerate() {
            let row = row.unwrap_or_else(|e| panic!("{} row {i}: {e}", path.display()));
            let (Some(state), Some(rate)) = (row.get(0), row.get(4)) else {
                panic!("{} row {i}: fewer than five columns", path.display());
            };
            let rate: Decimal = rate
                .parse()
                .unwrap_or_else(|e| panic!("{} row {i}: StateRate {rate:?}: {e}", path.display()));
            *counts
                .entry(state.to_string())
                .or_default()
                .entry(rate.normalize())
                .or_default() += 1;
        }
    }
    Some(
        counts
            .into_iter()
            .map(|(s, c)| (s, c.into_iter().max_by_key(|(_, n)| *n).unwrap().0))
            .collect(),
    )
}

#[test]
fn state_rates_agree_with_published_december_2025_tables() {
    // When the shared data is not beside the project (a bare checkout), there is nothing to
    // compare with; under CI its absence fails (in `published_state_rates`).
    let Some(published) = published_state_rates() else {
        eprintln!("skipped: shared/data not found");
        return;
    };
    let t = table();
    let d = day(2025, 12, 15);
    let gm = t.tax_code("GENERAL_MERCHANDISE").unwrap();
    let mut compared = 0;
    for (state, rate) in &published {
        // The region's first jurisdiction is the state itself (sets are ordered by level,
        // then by the order added).
        let region = t
            .data()
            .regions
            .iter()
            .find(|r| r.country == *b"US" && r.region.as_str() == state)
            .unwrap();
        let j = t.jset(JsetId(region.jset.to_native())).next().unwrap();
        assert_eq!(t.jurisdiction(j).unwrap().region(), state);
        let ours: Decimal = t
            .rules_of(j)
            .filter(|(_, r)| r.tax_code() == gm && r.interval().0 <= d && d <= r.interval().1)
            .map(|(_, r)| r.rate())
            .sum();
        match state.as_str() {
            // The tables split the statewide base: California 6% state + 1.25% uniform local;
            // Nevada 4.6% state + 2.25% local school support tax. levy's state-level row is the
            // statewide minimum (us-states.toml notes).
            "CA" => assert_eq!((ours, *rate), (pct("7.25"), pct("6").normalize())),
            "NV" => assert_eq!((ours, *rate), (pct("6.85"), pct("4.6").normalize())),
            // Utah's table has 0.048499 for 4.85% (a float export artefact).
            "UT" => assert_eq!((ours, *rate), (pct("4.85"), "0.048499".parse().unwrap())),
            _ => assert_eq!(ours.normalize(), *rate, "{state}"),
        }
        compared += 1;
    }
    // 50 states, DC and Puerto Rico.
    assert_eq!(compared, 52);
}

#[test]
fn truncated_files_give_errors_naming_the_file_never_a_panic() {
    // Every file cut short at 64 points along its length: each cut either still parses (a
    // cut between whole entries) or fails with an error that starts with a file's name.
    let t = texts();
    for (i, name) in curated::FILES.iter().enumerate() {
        let text = &t[i];
        for k in 1..64 {
            let mut cut = text.len() * k / 64;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            if let Err(e) = parse_with(i, &text[..cut]) {
                let m = e.to_string();
                // The taxonomy and the states are referred to by the other files, whose
                // references then fail; the other files fail on their own.
                if i <= 1 {
                    assert!(
                        curated::FILES.iter().any(|f| m.starts_with(f)),
                        "cut at {cut}: {m}"
                    );
                } else {
                    assert!(m.starts_with(name), "cut at {cut}: {m}");
                }
            }
        }
    }
}

#[test]
fn the_same_data_builds_the_same_bytes() {
    // Two independent loads and builds with the same build time give identical tables
    // (levy-data relies on this for a reproducible embedded default).
    let build = || {
        let c = curated::load(&data_dir()).unwrap();
        let mut b = TableBuilder::new();
        c.apply_base(&mut b).unwrap();
        let tn = b.find_jurisdiction("47").unwrap();
        b.zip(37203, "TN", "NASHVILLE", &[tn], 0).unwrap();
        c.apply_rules(&mut b).unwrap();
        b.build(1_750_000_000).unwrap()
    };
    let (a, b) = (build(), build());
    assert!(a == b, "two builds differ");
}

/// Day of the week, Monday = 0 (1970-01-01 was a Thursday).
fn weekday(d: Date) -> i32 {
    (d.0 + 3).rem_euclid(7)
}

/// The `n`th (1-based) `weekday` (Monday = 0) of a month, or with `n = 0` its last.
fn nth_weekday(year: i32, month: u32, weekday_wanted: i32, n: u32) -> Date {
    if n == 0 {
        let next = if month == 12 {
            Date::from_ymd(year + 1, 1, 1)
        } else {
            Date::from_ymd(year, month + 1, 1)
        }
        .unwrap();
        let last = Date(next.0 - 1);
        return Date(last.0 - (weekday(last) - weekday_wanted).rem_euclid(7));
    }
    let first = Date::from_ymd(year, month, 1).unwrap();
    Date(first.0 + (weekday_wanted - weekday(first)).rem_euclid(7) + 7 * (n as i32 - 1))
}

#[test]
fn statutory_holiday_dates_follow_their_rules() {
    // Each holiday's date rule, as its statute gives it (holidays.toml notes), checked on
    // every year listed: (state, start of the name, first day for a year, days after it).
    const FRI: i32 = 4;
    const SAT: i32 = 5;
    const SUN: i32 = 6;
    const MON: i32 = 0;
    type Rule = fn(i32) -> Date;
    let rules: &[(&str, &str, Rule, i32)] = &[
        // Texas: the Friday before the second Monday in August, through Sunday.
        (
            "TX",
            "TEXAS SALES TAX HOLIDAY (CLOTHING",
            |y| Date(nth_weekday(y, 8, MON, 2).0 - 3),
            2,
        ),
        // Texas 151.3565: the Saturday before the last Monday in April, through that Monday.
        (
            "TX",
            "TEXAS EMERGENCY",
            |y| Date(nth_weekday(y, 4, MON, 0).0 - 2),
            2,
        ),
        // Texas 151.333, 151.3335: Memorial Day weekend, Saturday through Monday.
        (
            "TX",
            "TEXAS ENERGY STAR",
            |y| Date(nth_weekday(y, 5, MON, 0).0 - 2),
            2,
        ),
        (
            "TX",
            "TEXAS WATER-EFFICIENT",
            |y| Date(nth_weekday(y, 5, MON, 0).0 - 2),
            2,
        ),
        // Tennessee: the last Friday in July, through Sunday.
        ("TN", "TENNESSEE", |y| nth_weekday(y, 7, FRI, 0), 2),
        // Alabama: the third Friday in July, through Sunday; severe weather: the last full
        // weekend (Friday to Sunday) of February.
        (
            "AL",
            "ALABAMA BACK-TO-SCHOOL",
            |y| nth_weekday(y, 7, FRI, 3),
            2,
        ),
        (
            "AL",
            "ALABAMA SEVERE WEATHER",
            |y| Date(nth_weekday(y, 2, SUN, 0).0 - 2),
            2,
        ),
        // Mississippi (S.B. 2470, 2024): the second Friday in July through Sunday; the
        // Second Amendment weekend: the last Friday in August through Sunday.
        (
            "MS",
            "MISSISSIPPI SALES TAX HOLIDAY",
            |y| nth_weekday(y, 7, FRI, 2),
            2,
        ),
        (
            "MS",
            "MISSISSIPPI SECOND AMENDMENT",
            |y| nth_weekday(y, 8, FRI, 0),
            2,
        ),
        // The first Friday in August through Sunday (Ohio from 2026, Missouri, South
        // Carolina, Virginia, Oklahoma) or Saturday (Iowa).
        (
            "OH",
            "OHIO SALES TAX HOLIDAY (",
            |y| nth_weekday(y, 8, FRI, 1),
            2,
        ),
        (
            "MO",
            "MISSOURI BACK-TO-SCHOOL",
            |y| nth_weekday(y, 8, FRI, 1),
            2,
        ),
        ("SC", "SOUTH CAROLINA", |y| nth_weekday(y, 8, FRI, 1), 2),
        ("VA", "VIRGINIA", |y| nth_weekday(y, 8, FRI, 1), 2),
        ("OK", "OKLAHOMA", |y| nth_weekday(y, 8, FRI, 1), 2),
        // New Mexico (NMSA 1978 7-9-95 as amended in 2025): the last Friday in July through
        // Sunday.
        ("NM", "NEW MEXICO", |y| nth_weekday(y, 7, FRI, 0), 2),
        ("IA", "IOWA", |y| nth_weekday(y, 8, FRI, 1), 1),
        // West Virginia 11-15-9s: the Friday before the first Sunday in August, through
        // the Monday after it.
        (
            "WV",
            "WEST VIRGINIA",
            |y| Date(nth_weekday(y, 8, SUN, 1).0 - 2),
            3,
        ),
        // Missouri Show Me Green (RSMo 144.526): April 19 to 25.
        (
            "MO",
            "MISSOURI SHOW ME GREEN",
            |y| Date::from_ymd(y, 4, 19).unwrap(),
            6,
        ),
        // Arkansas: the first Saturday in August and the Sunday.
        ("AR", "ARKANSAS", |y| nth_weekday(y, 8, SAT, 1), 1),
        // Connecticut: the third Sunday in August through the Saturday.
        ("CT", "CONNECTICUT", |y| nth_weekday(y, 8, SUN, 3), 6),
        // Maryland: the second Sunday in August through the Saturday; the energy weekend:
        // Presidents' Day weekend, Saturday through Monday.
        (
            "MD",
            "MARYLAND SHOP MARYLAND TAX-FREE",
            |y| nth_weekday(y, 8, SUN, 2),
            6,
        ),
        (
            "MD",
            "MARYLAND SHOP MARYLAND ENERGY",
            |y| Date(nth_weekday(y, 2, MON, 3).0 - 2),
            2,
        ),
        // Florida: every August.
        (
            "FL",
            "FLORIDA BACK-TO-SCHOOL",
            |y| Date::from_ymd(y, 8, 1).unwrap(),
            30,
        ),
    ];
    let t = table();
    let mut checked = 0;
    for h in t.data().holidays.iter() {
        let (from, to) = (Date(h.from.to_native()), Date(h.to.to_native()));
        let Some((_, _, rule, days)) = rules
            .iter()
            .find(|(st, prefix, _, _)| h.region.as_str() == *st && h.name.starts_with(prefix))
        else {
            continue;
        };
        let (year, _, _) = from.ymd();
        assert_eq!((from, to.0 - from.0), (rule(year), *days), "{}", h.name);
        checked += 1;
    }
    // Every row of those holidays (item groups are separate holidays in the table).
    assert!(checked >= 100, "{checked} holiday rows checked");
    // The rule helper on known days: 2026-08-07 is the first Friday of August 2026,
    // 2026-07-31 the last Friday of July, 2026-05-25 Memorial Day.
    assert_eq!(
        nth_weekday(2026, 8, FRI, 1),
        Date::from_ymd(2026, 8, 7).unwrap()
    );
    assert_eq!(
        nth_weekday(2026, 7, FRI, 0),
        Date::from_ymd(2026, 7, 31).unwrap()
    );
    assert_eq!(
        nth_weekday(2026, 5, MON, 0),
        Date::from_ymd(2026, 5, 25).unwrap()
    );
}
