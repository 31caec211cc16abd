//! Worked examples: each expected number is computed by hand in the comment beside it.
//! Amounts are minor units (cents unless the test says otherwise).

mod common;

use common::*;
use levy_core::*;

/// The jurisdiction codes of a location, in the order calculation reports them.
fn codes<D>(table: &Table<D>, loc: &Location) -> Vec<String> {
    let jset = loc.jset.expect("a taxed location");
    table
        .jset(jset)
        .map(|j| {
            table
                .jurisdiction(j)
                .expect("jurisdiction")
                .code()
                .to_string()
        })
        .collect()
}

fn at<D: TableBytes>(table: &Table<D>, address: Address) -> Location {
    table.resolve(&address, day()).expect("resolves")
}

/// Calculates one line in `category` at `zip` on `date`, excluding tax and (separately)
/// including it; returns both.
fn both_ways<D: TableBytes>(
    table: &Table<D>,
    zip: &str,
    category: &str,
    excl: i64,
    incl: i64,
    date: Date,
) -> (Calculation, Calculation) {
    let loc = at(table, us_zip(zip));
    let exclusive = table
        .calculate(
            &loc,
            &sale(vec![line(table, category, Decimal::from(excl))], date),
        )
        .unwrap();
    let mut s = sale(vec![line(table, category, Decimal::from(incl))], date);
    s.tax_included = true;
    let inclusive = table.calculate(&loc, &s).unwrap();
    (exclusive, inclusive)
}

/// Checks that `excl` cents excluding tax owe `tax`, and that `excl + tax` including tax
/// splits back into exactly `excl` and `tax`.
fn check_both_ways<D: TableBytes>(
    table: &Table<D>,
    zip: &str,
    category: &str,
    excl: i64,
    tax: i64,
    date: Date,
) -> Calculation {
    let (e, i) = both_ways(table, zip, category, excl, excl + tax, date);
    assert_eq!(
        e.total_tax,
        Decimal::from(tax),
        "{zip} {category} {excl}: tax excluding"
    );
    assert_eq!(e.total_excluding_tax, Decimal::from(excl));
    assert_eq!(e.total_including_tax, Decimal::from(excl + tax));
    assert_eq!(
        i.total_tax,
        Decimal::from(tax),
        "{zip} {category} {excl}: tax including"
    );
    assert_eq!(
        i.total_excluding_tax,
        Decimal::from(excl),
        "{zip} {category} {excl}: backed-out amount"
    );
    assert_eq!(i.total_including_tax, Decimal::from(excl + tax));
    e
}

fn notes(calc: &Calculation) -> Vec<Note> {
    calc.lines[0].jurisdictions.iter().map(|j| j.note).collect()
}

#[test]
fn flat_sale_across_state_county_city_and_districts() {
    let t = scenario();
    let loc = at(&t, us_zip("80012"));
    assert_eq!(codes(&t, &loc), ["08", "08005", "0804000", "RTD", "CD"]);
    // $123.45 at 2.9% + 0.25% + 3.75% + 1% + 0.1% = 8%:
    //   12345 × 0.029 = 358.005, × 0.0025 = 30.8625, × 0.0375 = 462.9375, × 0.01 = 123.45,
    //   × 0.001 = 12.345; sum 987.6 cents, rounded once: 988.
    let calc = check_both_ways(&t, "80012", "GENERAL_MERCHANDISE", 12_345, 988, day());
    let dues: Vec<Decimal> = calc.lines[0]
        .jurisdictions
        .iter()
        .map(|j| j.tax_due)
        .collect();
    assert_eq!(
        dues,
        [
            d("358.005"),
            d("30.8625"),
            d("462.9375"),
            d("123.45"),
            d("12.345")
        ]
    );
    assert!(calc.lines[0]
        .jurisdictions
        .iter()
        .all(|j| j.taxable_base == d("12345") && j.note == Note::RateFrac));
    // Effective rate 988 / 12345, not the 8% sum of rates.
    assert_eq!(calc.effective_rate(), d("988") / d("12345"));
}

#[test]
fn tennessee_single_article() {
    let t = scenario();
    assert_eq!(
        codes(&t, &at(&t, us_zip("37203"))),
        ["47", "47-SA", "47037"]
    );
    // $1,000: state 7% × 1000 = 70.00; single article band 1600..3200 holds none of it;
    // Davidson 2.25% × 1000 = 22.50. Total $92.50.
    let c = check_both_ways(&t, "37203", "GENERAL_MERCHANDISE", 100_000, 9_250, day());
    let dues: Vec<Decimal> = c.lines[0].jurisdictions.iter().map(|j| j.tax_due).collect();
    assert_eq!(dues, [d("7000"), d("0"), d("2250")]);
    // $2,500: 7% × 2500 = 175.00; 2.75% × (2500 − 1600) = 24.75; 2.25% × 1600 = 36.00.
    // Total $235.75.
    let c = check_both_ways(&t, "37203", "GENERAL_MERCHANDISE", 250_000, 23_575, day());
    let bases: Vec<Decimal> = c.lines[0]
        .jurisdictions
        .iter()
        .map(|j| j.taxable_base)
        .collect();
    assert_eq!(bases, [d("250000"), d("90000"), d("160000")]);
    assert_eq!(
        notes(&c),
        [Note::RateFrac, Note::ProgressiveRate, Note::ProgressiveRate]
    );
    // $5,000: 7% × 5000 = 350.00; 2.75% × 1600 (capped at 3200) = 44.00; 2.25% × 1600 = 36.00.
    // Total $430.00.
    let c = check_both_ways(&t, "37203", "GENERAL_MERCHANDISE", 500_000, 43_000, day());
    let dues: Vec<Decimal> = c.lines[0].jurisdictions.iter().map(|j| j.tax_due).collect();
    assert_eq!(dues, [d("35000"), d("4400"), d("3600")]);
}

#[test]
fn tennessee_band_applies_per_unit() {
    // Two $2,500 units in one line of $5,000: the bands apply to each unit's price, so the
    // tax is twice the $2,500 figure, 2 × 235.75 = 471.50, not the $5,000 figure of 430.00.
    let t = scenario();
    let loc = at(&t, us_zip("37203"));
    let mut l = line(&t, "GENERAL_MERCHANDISE", Decimal::from(500_000));
    l.quantity = 2;
    let c = t.calculate(&loc, &sale(vec![l.clone()], day())).unwrap();
    assert_eq!(c.total_tax, d("47150"));
    // The same as a per-unit line of $2,500 × 2.
    l.amount = Decimal::from(250_000);
    l.per_unit = true;
    let c = t.calculate(&loc, &sale(vec![l], day())).unwrap();
    assert_eq!(c.total_tax, d("47150"));
    assert_eq!(c.total_excluding_tax, d("500000"));
}

#[test]
fn massachusetts_clothing_over_175() {
    let t = scenario();
    // $150: wholly under the $175 exemption, nothing taxed.
    let c = check_both_ways(&t, "02110", "CLOTHING", 15_000, 0, day());
    assert_eq!(c.lines[0].jurisdictions[0].taxable_base, d("0"));
    // $200: 6.25% × (200 − 175) = 1.5625 dollars = 156.25 cents, rounded to 156.
    let c = check_both_ways(&t, "02110", "CLOTHING", 20_000, 156, day());
    assert_eq!(c.lines[0].jurisdictions[0].taxable_base, d("2500"));
    assert_eq!(c.lines[0].jurisdictions[0].tax_due, d("156.25"));
    assert_eq!(notes(&c), [Note::ProgressiveRate]);
    // Shoes inherit the clothing rule (CLOTHING_SHOES has no rule of its own).
    check_both_ways(&t, "02110", "SHOES", 20_000, 156, day());
    // General merchandise at $200: 6.25% of all of it, 1250 cents.
    check_both_ways(&t, "02110", "GENERAL_MERCHANDISE", 20_000, 1_250, day());
}

#[test]
fn new_york_clothing_at_110() {
    let t = scenario();
    // $109.99 is below the $110 threshold: nothing due.
    let c = check_both_ways(&t, "10001", "CLOTHING", 10_999, 0, day());
    assert_eq!(notes(&c), [Note::BelowThreshold]);
    // $110.00 meets it: 4% of the whole $110.00 = 440 cents.
    let c = check_both_ways(&t, "10001", "CLOTHING", 11_000, 440, day());
    assert_eq!(notes(&c), [Note::Threshold]);
    assert_eq!(c.lines[0].jurisdictions[0].taxable_base, d("11000"));
    // Including tax, $112.00 has no exact pre-image: 109.99 owes 0 (total 109.99) and 110.00
    // owes 4.40 (total 114.40). levy takes the greatest amount below the threshold, 10999,
    // and the tax is the remainder, 11200 − 10999 = 201 (documented in calc/mod.rs).
    let (_, i) = both_ways(&t, "10001", "CLOTHING", 0, 11_200, day());
    assert_eq!(i.total_excluding_tax, d("10999"));
    assert_eq!(i.total_tax, d("201"));
}

#[test]
fn texas_clothing_holiday() {
    let t = scenario();
    let in_window = Date::from_ymd(2025, 8, 9).unwrap();
    let first = Date::from_ymd(2025, 8, 8).unwrap();
    let last = Date::from_ymd(2025, 8, 10).unwrap();
    let after = Date::from_ymd(2025, 8, 11).unwrap();
    let before = Date::from_ymd(2025, 8, 7).unwrap();
    // Inside the window, $50 of clothing owes nothing to the state or the locals.
    for date in [first, in_window, last] {
        let c = check_both_ways(&t, "78701", "CLOTHING", 5_000, 0, date);
        assert_eq!(notes(&c), [Note::Holiday; 3]);
        assert_eq!(c.lines[0].holiday, Some(0));
    }
    // $99.99 is under the cap: still nothing.
    check_both_ways(&t, "78701", "CLOTHING", 9_999, 0, in_window);
    // Shoes are clothing (a descendant code): nothing.
    check_both_ways(&t, "78701", "SHOES", 5_000, 0, in_window);
    // Outside the window: 6.25% + 1% + 1% = 8.25% of 5000 = 412.5, rounded half away: 413.
    for date in [before, after] {
        let c = check_both_ways(&t, "78701", "CLOTHING", 5_000, 413, date);
        assert_eq!(notes(&c), [Note::RateFrac; 3]);
        assert_eq!(c.lines[0].holiday, None);
    }
    // $100.00 is not under the exclusive $100 cap: 8.25% × 10000 = 825.
    let c = check_both_ways(&t, "78701", "CLOTHING", 10_000, 825, in_window);
    assert_eq!(c.lines[0].holiday, None);
    // General merchandise is not covered: 413 as outside the window.
    check_both_ways(&t, "78701", "GENERAL_MERCHANDISE", 5_000, 413, in_window);
}

#[test]
fn exempt_customer_owes_nothing() {
    let t = scenario();
    let loc = at(&t, us_zip("80012"));
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("12345"))], day());
    s.customer.exempt = true;
    let c = t.calculate(&loc, &s).unwrap();
    // Exempt: tax 0, the amount is the total; every entry says why.
    assert_eq!(
        (c.total_tax, c.total_excluding_tax, c.total_including_tax),
        (d("0"), d("12345"), d("12345"))
    );
    assert_eq!(c.zero_reason, Some(ZeroReason::CustomerExempt));
    assert_eq!(notes(&c), [Note::CustomerExempt; 5]);
    // Including tax, the whole amount is the price.
    s.tax_included = true;
    let c = t.calculate(&loc, &s).unwrap();
    assert_eq!(
        (c.total_tax, c.total_excluding_tax, c.total_including_tax),
        (d("0"), d("12345"), d("12345"))
    );
}

#[test]
fn automatic_tax_disabled_owes_nothing() {
    let t = scenario();
    let loc = at(&t, us_zip("37203"));
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("250000"))], day());
    s.automatic_tax = AutomaticTax::Disabled;
    let c = t.calculate(&loc, &s).unwrap();
    assert_eq!((c.total_tax, c.total_including_tax), (d("0"), d("250000")));
    assert_eq!(c.zero_reason, Some(ZeroReason::AutomaticTaxDisabled));
    assert_eq!(notes(&c), [Note::AutomaticTaxDisabled; 3]);
}

#[test]
fn exemption_certificate_covers_its_region_only() {
    // A certificate for Tennessee zeroes the state, single-article and county entries.
    let t = scenario();
    let loc = at(&t, us_zip("37203"));
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("100000"))], day());
    s.customer.exemptions.push(Exemption {
        country: "US".into(),
        region: "TN".into(),
        reference: "C-1".into(),
        covers: Covers::Region,
    });
    let c = t.calculate(&loc, &s).unwrap();
    assert_eq!(c.total_tax, d("0"));
    assert_eq!(notes(&c), [Note::ExemptionCertificate; 3]);
    assert!(c.lines[0]
        .jurisdictions
        .iter()
        .all(|j| j.exemption == Some(0)));
    // The same certificate in Colorado changes nothing: 8% of 100000 = 8000.
    let c = t.calculate(&at(&t, us_zip("80012")), &s).unwrap();
    assert_eq!(c.total_tax, d("8000"));
}

#[test]
fn an_exemption_of_locals_except_some_keeps_the_state_and_the_listed_locals() {
    // Aurora, CO (80012): state 08 at 2.9%, county 08005 at 0.25%, city 0804000 at 3.75%,
    // districts RTD 1% and CD 0.1% (the sale above). Covering the locals except the city
    // leaves the state and the city: 12345 × (0.029 + 0.0375) = 358.005 + 462.9375 =
    // 820.9425, rounded once: 821.
    let t = scenario();
    let loc = at(&t, us_zip("80012"));
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("12345"))], day());
    s.customer.exemptions.push(Exemption {
        country: "US".into(),
        region: "CO".into(),
        reference: "locals".into(),
        covers: Covers::LocalsExcept(vec!["0804000".into()]),
    });
    let c = t.calculate(&loc, &s).unwrap();
    assert_eq!(c.total_tax, d("821"));
    let zeroed: Vec<Option<usize>> = c.lines[0]
        .jurisdictions
        .iter()
        .map(|j| j.exemption)
        .collect();
    assert_eq!(zeroed, [None, Some(0), None, Some(0), Some(0)]);
    // Covering the region and the country's own zeroes every entry of the region.
    s.customer.exemptions[0].covers = Covers::RegionAndCountry;
    assert_eq!(t.calculate(&loc, &s).unwrap().total_tax, d("0"));
}

fn foreign_sale<D: TableBytes>(
    t: &Table<D>,
    country: &str,
    currency: &str,
    amount: i64,
    tax_included: bool,
) -> Calculation {
    let loc = at(
        t,
        Address {
            country: country.into(),
            ..Default::default()
        },
    );
    let mut s = sale(
        vec![line(t, "GENERAL_MERCHANDISE", Decimal::from(amount))],
        day(),
    );
    s.currency = Currency::from_code(currency).unwrap();
    s.tax_included = tax_included;
    t.calculate(&loc, &s).unwrap()
}

#[test]
fn yen_round_to_whole_yen() {
    let t = scenario();
    // 10% of ¥1,234 = 123.4 → ¥123; of ¥1,235 = 123.5 → ¥124 (half away from zero);
    // of ¥4 = 0.4 → ¥0; of ¥5 = 0.5 → ¥1.
    for (amount, tax) in [(1_234, 123), (1_235, 124), (4, 0), (5, 1)] {
        let c = foreign_sale(&t, "JP", "JPY", amount, false);
        assert_eq!(c.total_tax, Decimal::from(tax), "¥{amount}");
        assert_eq!(c.total_tax.scale(), 0);
    }
    // Including tax: ¥1,357 / 1.1 = 1233.6… → ¥1,234 excluding, tax ¥123.
    let c = foreign_sale(&t, "JP", "JPY", 1_357, true);
    assert_eq!((c.total_excluding_tax, c.total_tax), (d("1234"), d("123")));
}

#[test]
fn dinar_round_to_whole_fils() {
    let t = scenario();
    // KWD has three decimals; amounts are fils. 5% of 1234 fils = 61.7 → 62; of 1230 = 61.5
    // → 62 (half away); of 1229 = 61.45 → 61.
    for (amount, tax) in [(1_234, 62), (1_230, 62), (1_229, 61)] {
        let c = foreign_sale(&t, "KW", "KWD", amount, false);
        assert_eq!(c.total_tax, Decimal::from(tax), "{amount} fils");
    }
    // Including tax: 1291 / 1.05 = 1229.52… → 1230 fils excluding, tax 1291 − 1230 = 61.
    // (1230 fils excluding tax owes 62, so no excluding amount totals exactly 1291; the
    // split still adds up to the amount given.)
    let c = foreign_sale(&t, "KW", "KWD", 1_291, true);
    assert_eq!((c.total_excluding_tax, c.total_tax), (d("1230"), d("61")));
}

#[test]
fn address_resolution_status_and_precision() {
    let t = scenario();
    let addr = |line1: &str, postal: &str| Address {
        line1: line1.into(),
        postal_code: postal.into(),
        country: "US".into(),
        ..Default::default()
    };
    let check = |a: Address, status: ResolutionStatus, precision: Precision, expected: &[&str]| {
        let loc = t
            .resolve(&a, day())
            .unwrap_or_else(|e| panic!("{a:?}: {e}"));
        assert_eq!((loc.status, loc.precision), (status, precision), "{a:?}");
        assert_eq!(codes(&t, &loc), expected, "{a:?}");
        loc
    };
    use Precision::*;
    use ResolutionStatus::*;
    let all5 = ["08", "08005", "0804000", "RTD", "CD"];
    let unincorporated = ["08", "08005", "RTD", "CD"];
    // 1200 is even and in 1000..=1998: the street range (state and county only).
    let loc = check(
        addr("1200 East Alameda Avenue", "80012"),
        Exact,
        Street,
        &["08", "08005"],
    );
    assert_eq!(t.address_used(&loc).line1, "1200 E ALAMEDA AVE");
    // The street beats the ZIP+4 when both match; the ZIP+4 is kept in the address used.
    let loc = check(
        addr("1200 E Alameda Ave Apt 3", "80012-1500"),
        Exact,
        Street,
        &["08", "08005"],
    );
    assert_eq!(
        (
            t.address_used(&loc).postal_code.as_str(),
            t.address_used(&loc).line2.as_str()
        ),
        ("80012-1500", "APT 3")
    );
    // 1201 is odd: the even-only range misses; the ZIP+4 1500 is in 1000..=1999.
    check(
        addr("1201 E Alameda Ave", "80012-1500"),
        PostalFallback1,
        PostalPlus,
        &unincorporated,
    );
    // Street given, no ZIP+4: the ZIP5.
    check(
        addr("1201 E Alameda Ave", "80012"),
        PostalFallback1,
        Postal,
        &all5,
    );
    // A street name the table does not know, with a ZIP+4 outside every range: the ZIP5.
    check(
        addr("5 Elm St", "80012-2000"),
        PostalFallback1,
        Postal,
        &all5,
    );
    // No street line, ZIP+4 in range, then outside, then none.
    check(
        addr("", "80012-1999"),
        PostalOnly,
        PostalPlus,
        &unincorporated,
    );
    check(
        addr("", "800121000"),
        PostalOnly,
        PostalPlus,
        &unincorporated,
    );
    check(addr("", "80012-0999"), PostalOnly, Postal, &all5);
    let loc = check(addr("", "80012"), PostalOnly, Postal, &all5);
    assert_eq!(
        (
            t.address_used(&loc).city.as_str(),
            t.address_used(&loc).region.as_str()
        ),
        ("AURORA", "CO")
    );
    // The state alone.
    check(
        Address {
            region: "tn".into(),
            country: "us".into(),
            ..Default::default()
        },
        PostalOnly,
        Province,
        &["47"],
    );
    // A known ZIP-shaped code the table lacks, with the state: the state.
    let mut a = addr("", "99999");
    a.region = "TN".into();
    check(a, PostalFallback1, Province, &["47"]);
    // A Canadian postal code by its prefix; the region follows from it.
    let loc = check(
        Address {
            postal_code: "m5v 2t6".into(),
            country: "CA".into(),
            ..Default::default()
        },
        PostalOnly,
        Postal,
        &["CA-ON"],
    );
    assert_eq!(
        (
            t.address_used(&loc).region.as_str(),
            t.address_used(&loc).postal_code.as_str()
        ),
        ("ON", "M5V2T6")
    );
    // The country alone.
    check(
        Address {
            country: "DE".into(),
            ..Default::default()
        },
        PostalOnly,
        Country,
        &["DE"],
    );
}

#[test]
fn address_errors() {
    let t = scenario();
    // 37203 is in Tennessee, not Massachusetts.
    let mut a = us_zip("37203");
    a.region = "MA".into();
    let e = t.resolve(&a, day()).unwrap_err();
    assert_eq!(
        e,
        ResolveError::ZipStateMismatch {
            postal: "37203".into(),
            given: "MA".into(),
            actual: "TN".into()
        }
    );
    assert_eq!(e.error_type(), "ZIP_STATE_MISMATCH");
    // The same for a Canadian prefix given with another province.
    let a = Address {
        postal_code: "M5V 2T6".into(),
        region: "QC".into(),
        country: "CA".into(),
        ..Default::default()
    };
    assert_eq!(
        t.resolve(&a, day()).unwrap_err().error_type(),
        "ZIP_STATE_MISMATCH"
    );
    // Four digits are no ZIP.
    assert_eq!(
        t.resolve(&us_zip("3720"), day()).unwrap_err().error_type(),
        "MALFORMED_ADDRESS"
    );
    // A three-letter country.
    let a = Address {
        country: "USA".into(),
        ..Default::default()
    };
    assert_eq!(
        t.resolve(&a, day()).unwrap_err(),
        ResolveError::InvalidCountry("USA".into())
    );
    // A country the table does not cover.
    let a = Address {
        country: "FR".into(),
        ..Default::default()
    };
    assert_eq!(
        t.resolve(&a, day()).unwrap_err(),
        ResolveError::Unsupported("FR".into())
    );
}

#[test]
fn ip_lookups_on_both_sides_of_range_edges() {
    let t = scenario();
    let place = |ip: &str| {
        t.lookup_ip(ip.parse().unwrap())
            .map(|p| (p.country(), p.region(), p.postal()))
    };
    // IPv4: the first range is 203.0.113.0 ..= 203.0.113.127, the next starts at .128.
    assert_eq!(place("203.0.112.255"), None);
    assert_eq!(place("203.0.113.0"), Some(("US", "TN", "37203")));
    assert_eq!(place("203.0.113.127"), Some(("US", "TN", "37203")));
    assert_eq!(place("203.0.113.128"), Some(("US", "TN", "")));
    assert_eq!(place("203.0.113.255"), Some(("US", "TN", "")));
    assert_eq!(place("203.0.114.0"), None);
    assert_eq!(place("0.0.0.0"), None);
    assert_eq!(place("255.255.255.255"), None);
    // IPv6: 2001:db8::/64 is Germany; 2001:db8:0:1::0..=ff Germany, ::100..=1ff US; both of
    // the last share their upper 64 bits.
    assert_eq!(place("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"), None);
    assert_eq!(place("2001:db8::"), Some(("DE", "", "")));
    assert_eq!(place("2001:db8::ffff:ffff:ffff:ffff"), Some(("DE", "", "")));
    assert_eq!(place("2001:db8:0:1::ff"), Some(("DE", "", "")));
    assert_eq!(place("2001:db8:0:1::100"), Some(("US", "TN", "")));
    assert_eq!(place("2001:db8:0:1::1ff"), Some(("US", "TN", "")));
    assert_eq!(place("2001:db8:0:1::200"), None);
    assert_eq!(place("2001:db8:0:2::"), None);
    assert_eq!(place("::"), None);
}

#[test]
fn ip_modes() {
    let t = scenario();
    let nashville = at(&t, us_zip("37203")).jset;
    let r = |ip: &str, mode: IpMode| t.resolve_ip(ip, mode, day());
    use IpMode::*;
    // A US IP with its ZIP resolves like the ZIP, in every mode.
    for mode in [Strict, Zero, Approximate, BestEffort] {
        let loc = r("203.0.113.127", mode).unwrap();
        assert_eq!(
            (loc.jset, loc.precision, loc.source),
            (nashville, Precision::Postal, LocationSource::Ip)
        );
        assert_eq!(t.address_used(&loc).postal_code, "37203");
    }
    // A US IP without a postal code: strict fails; zero answers a zero-rate location;
    // approximate and best_effort take Tennessee's most populous ZIP, 37203.
    assert_eq!(
        r("203.0.113.128", Strict).unwrap_err(),
        ResolveError::IpInsufficientUs("203.0.113.128".into())
    );
    assert_eq!(
        r("203.0.113.128", Strict).unwrap_err().error_type(),
        "IP_RESOLUTION_INSUFFICIENT_US"
    );
    let zero = r("203.0.113.128", Zero).unwrap();
    assert!(zero.is_zero_rate());
    for mode in [Approximate, BestEffort] {
        let loc = r("203.0.113.128", mode).unwrap();
        assert_eq!(
            (loc.jset, loc.precision),
            (nashville, Precision::Approximated)
        );
        assert_eq!(t.address_used(&loc).postal_code, "37203");
    }
    // The same through IPv6 (2001:db8:0:1::100 is the US range without a postal code).
    assert_eq!(
        r("2001:db8:0:1::100", Strict).unwrap_err().error_type(),
        "IP_RESOLUTION_INSUFFICIENT_US"
    );
    assert_eq!(r("2001:db8:0:1::100", BestEffort).unwrap().jset, nashville);
    // A Canadian IP without a province: strict fails; approximate falls back to Canada's own
    // jurisdictions (the table knows no Canadian population), the 5% GST.
    assert_eq!(
        r("198.51.100.1", Strict).unwrap_err(),
        ResolveError::IpInsufficientCa("198.51.100.1".into())
    );
    assert_eq!(
        r("198.51.100.1", Strict).unwrap_err().error_type(),
        "IP_RESOLUTION_INSUFFICIENT_CA"
    );
    assert!(r("198.51.100.1", Zero).unwrap().is_zero_rate());
    let loc = r("198.51.100.1", Approximate).unwrap();
    assert_eq!(
        (codes(&t, &loc), loc.precision),
        (vec!["CA".to_string()], Precision::Approximated)
    );
    // Ontario's IP has its province: Ontario's HST at province precision.
    let loc = r("192.0.2.10", Strict).unwrap();
    assert_eq!(
        (codes(&t, &loc), loc.precision),
        (vec!["CA-ON".to_string()], Precision::Province)
    );
    // Germany by IPv6: the country.
    let loc = r(" 2001:db8::1 ", Strict).unwrap();
    assert_eq!(
        (codes(&t, &loc), loc.precision),
        (vec!["DE".to_string()], Precision::Country)
    );
    // No range holds 10.0.0.1: strict and approximate fail, zero and best_effort answer zero.
    assert_eq!(
        r("10.0.0.1", Strict).unwrap_err().error_type(),
        "IP_RESOLUTION_FAILED"
    );
    assert_eq!(
        r("10.0.0.1", Approximate).unwrap_err().error_type(),
        "IP_RESOLUTION_FAILED"
    );
    assert!(r("10.0.0.1", Zero).unwrap().is_zero_rate());
    assert!(r("10.0.0.1", BestEffort).unwrap().is_zero_rate());
    // Not an IP at all, in any mode.
    for mode in [Strict, Zero, Approximate, BestEffort] {
        assert_eq!(
            r("203.0.113.256", mode).unwrap_err().error_type(),
            "INVALID_IP_FORMAT"
        );
    }
    // A zero-rate location owes nothing, and says so.
    let c = t
        .calculate(
            &zero,
            &sale(vec![line(&t, "GENERAL_MERCHANDISE", d("10000"))], day()),
        )
        .unwrap();
    assert_eq!(
        (c.total_tax, c.zero_reason),
        (d("0"), Some(ZeroReason::ZeroRate))
    );
}

#[test]
fn reverse_charge_for_cross_border_business_vat() {
    let t = scenario();
    let loc = at(
        &t,
        Address {
            country: "DE".into(),
            ..Default::default()
        },
    );
    let business = Customer {
        kind: CustomerType::Business,
        tax_ids: vec![TaxId {
            kind: "VAT".into(),
            value: "DE123456789".into(),
        }],
        ..Default::default()
    };
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("10000"))], day());
    s.currency = Currency::from_code("EUR").unwrap();
    s.customer = business.clone();
    s.origin_country = Some("FR".into());
    // From France to a German business with a VAT id: the buyer accounts for the VAT.
    let c = t.calculate(&loc, &s).unwrap();
    assert_eq!((c.total_tax, c.total_including_tax), (d("0"), d("10000")));
    assert_eq!(notes(&c), [Note::ReverseCharge]);
    // Shipped from within Germany: 19% of €100.00 = €19.00.
    s.origin_country = Some("de".into());
    assert_eq!(t.calculate(&loc, &s).unwrap().total_tax, d("1900"));
    // A consumer across the border pays the VAT: 1900.
    s.origin_country = Some("FR".into());
    s.customer = Customer::default();
    assert_eq!(t.calculate(&loc, &s).unwrap().total_tax, d("1900"));
    // US sales tax is never reverse charged: 8% of $100.00 in Aurora = 800.
    let mut s = sale(vec![line(&t, "GENERAL_MERCHANDISE", d("10000"))], day());
    s.customer = business;
    s.origin_country = Some("CA".into());
    assert_eq!(
        t.calculate(&at(&t, us_zip("80012")), &s).unwrap().total_tax,
        d("800")
    );
}

#[test]
fn invalid_lines_are_rejected() {
    let t = scenario();
    let loc = at(&t, us_zip("80012"));
    let mut l = line(&t, "GENERAL_MERCHANDISE", d("100"));
    l.quantity = 0;
    assert_eq!(
        t.calculate(&loc, &sale(vec![l.clone()], day()))
            .unwrap_err(),
        CalcError::Quantity { line: 0 }
    );
    l.quantity = 1;
    l.amount = d("-1");
    assert_eq!(
        t.calculate(&loc, &sale(vec![l.clone()], day()))
            .unwrap_err(),
        CalcError::Amount { line: 0 }
    );
    // The largest amount is 10^15 minor units (MAX_AMOUNT_MINOR): accepted as it is and at
    // any scale; one more, or a fraction more, is refused.
    for ok in ["1000000000000000", "1000000000000000.000"] {
        l.amount = d(ok);
        assert!(
            t.calculate(&loc, &sale(vec![l.clone()], day())).is_ok(),
            "{ok}"
        );
    }
    for bad in ["1000000000000001", "1000000000000000.01"] {
        l.amount = d(bad);
        assert_eq!(
            t.calculate(&loc, &sale(vec![l.clone()], day()))
                .unwrap_err(),
            CalcError::Amount { line: 0 },
            "{bad}"
        );
    }
    l.amount = d("1");
    l.tax_code = TaxCodeId(999);
    assert_eq!(
        t.calculate(&loc, &sale(vec![l], day())).unwrap_err(),
        CalcError::TaxCode { line: 0, code: 999 }
    );
}

#[test]
fn zip4_ranges_stop_at_their_zip_and_follow_dates() {
    // Two ZIPs' ranges side by side in the sorted index: a plus-4 below 10002's first range
    // must not fall into 10001's range 0000..0500, and a range in force from 2026 overrides
    // an older one it overlaps only from its first day.
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let j = |b: &mut TableBuilder, code: &str, level| {
        b.jurisdiction(JurisdictionSpec {
            code: code.into(),
            name: code.into(),
            level,
            country: "US".into(),
            region: "NY".into(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })
        .unwrap()
    };
    let ny = j(&mut b, "36", Level::State);
    let a = j(&mut b, "A", Level::City);
    let c = j(&mut b, "B", Level::City);
    b.zip(10001, "NY", "NEW YORK", &[ny], 1).unwrap();
    b.zip(10002, "NY", "NEW YORK", &[ny], 1).unwrap();
    b.zip4(10001, 0, 500, &[ny, a], Date::MIN, Date::MAX)
        .unwrap();
    b.zip4(10002, 100, 200, &[ny, c], Date::MIN, Date::MAX)
        .unwrap();
    let y2026 = Date::from_ymd(2026, 1, 1).unwrap();
    b.zip4(10002, 150, 160, &[ny], y2026, Date::MAX).unwrap();
    let t = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    let on = |zip: &str, date: Date| {
        let loc = t.resolve(&us_zip(zip), date).unwrap();
        (codes(&t, &loc), loc.precision)
    };
    let v = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        on("10001-0500", day()),
        (v(&["36", "A"]), Precision::PostalPlus)
    );
    assert_eq!(on("10001-0501", day()), (v(&["36"]), Precision::Postal));
    assert_eq!(on("10002-0050", day()), (v(&["36"]), Precision::Postal));
    assert_eq!(
        on("10002-0100", day()),
        (v(&["36", "B"]), Precision::PostalPlus)
    );
    // 0155 lies in both 0100..0200 and 0150..0160; the later one is in force from 2026-01-01.
    assert_eq!(on("10002-0155", day()), (v(&["36"]), Precision::PostalPlus));
    assert_eq!(
        on("10002-0155", Date::from_ymd(2025, 12, 31).unwrap()),
        (v(&["36", "B"]), Precision::PostalPlus)
    );
    assert_eq!(
        on("10002-0161", day()),
        (v(&["36", "B"]), Precision::PostalPlus)
    );
    assert_eq!(on("10002-0201", day()), (v(&["36"]), Precision::Postal));
}
