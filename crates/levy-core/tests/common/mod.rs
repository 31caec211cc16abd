//! The table every integration test reads: a handful of real-shaped places, built with
//! `TableBuilder` exactly as `levy build` would, and helpers to make sales.
//!
//! Places (jurisdiction codes in brackets; rates as the tests use them):
//! - Colorado ZIP 80012: state 2.9% [08], Arapahoe County 0.25% [08005], Aurora 3.75%
//!   [0804000], RTD 1% [RTD], Cultural District 0.1% [CD]. ZIP+4 80012-1000..1999 is
//!   unincorporated (no Aurora); the street range 1000..1998 even E ALAMEDA AVE is state and
//!   county only.
//! - Tennessee ZIP 37203: state 7% [47], single article 2.75% on the band $1,600..$3,200
//!   [47-SA], Davidson County 2.25% on the first $1,600 [47037].
//! - Massachusetts ZIP 02110: 6.25% [25]; clothing taxed only above $175.
//! - New York ZIP 10001: 4% [36]; clothing taxed only when priced $110 or more.
//! - Texas ZIP 78701: state 6.25% [48], Austin 1% [4805000], Capital Metro 1% [CMTA]; a
//!   clothing holiday 2025-08-08..2025-08-10 under $100, state and local.
//! - Germany: VAT 19% [DE]; Canada: GST 5% [CA], Ontario HST 13% [CA-ON] with postal
//!   prefix `M`; Japan: consumption tax 10% [JP]; a three-decimal place [KW] taxed 5% to
//!   exercise fils (Kuwait levies no VAT; the rate is a test value).

#![allow(dead_code, unused_imports)]

use levy_core::*;

/// A decimal from text; the day of most sales in these tests (2026-03-01); a US address
/// with only a ZIP; a USD sale excluding tax for a consumer.
pub use levy_testkit::sale::{d, march_2026 as day, sale, us_zip};

fn spec(
    code: &str,
    name: &str,
    level: Level,
    country: &str,
    region: &str,
    tax_type: TaxType,
) -> JurisdictionSpec {
    JurisdictionSpec {
        code: code.into(),
        name: name.into(),
        level,
        country: country.into(),
        region: region.into(),
        authority: format!("{name} REVENUE"),
        tax_type,
    }
}

/// A Tennessee sales-tax jurisdiction named by its code, no authority named: the shape of
/// the small tables a test builds for itself.
pub fn tennessee(code: &str, level: Level) -> JurisdictionSpec {
    JurisdictionSpec {
        code: code.into(),
        name: code.into(),
        level,
        country: "US".into(),
        region: "TN".into(),
        authority: String::new(),
        tax_type: TaxType::Sales,
    }
}

fn flat(b: &mut TableBuilder, j: JurisdictionId, code: &str, rate: &str) {
    b.rule(RuleSpec::flat(
        j,
        code,
        d(rate),
        Date::MIN,
        Date::MAX,
        "GENERAL",
    ))
    .expect("rule");
}

fn banded(
    b: &mut TableBuilder,
    j: JurisdictionId,
    code: &str,
    rate: &str,
    band: (&str, Option<&str>),
) {
    let mut r = RuleSpec::flat(j, code, d(rate), Date::MIN, Date::MAX, "BAND");
    r.band = (d(band.0), band.1.map(d));
    b.rule(r).expect("rule");
}

/// Builds the scenario table's bytes.
pub fn scenario_bytes() -> Vec<u8> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
        .unwrap();
    b.tax_code("CLOTHING", Some("GENERAL_MERCHANDISE"), "Clothing")
        .unwrap();
    b.tax_code("CLOTHING_SHOES", Some("CLOTHING"), "Shoes")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CLOTHING", "CLOTHING");
    b.category("SHOES", "CLOTHING_SHOES");

    // Colorado.
    let co = b
        .jurisdiction(spec(
            "08",
            "COLORADO",
            Level::State,
            "US",
            "CO",
            TaxType::Sales,
        ))
        .unwrap();
    let arapahoe = b
        .jurisdiction(spec(
            "08005",
            "ARAPAHOE",
            Level::County,
            "US",
            "CO",
            TaxType::Sales,
        ))
        .unwrap();
    let aurora = b
        .jurisdiction(spec(
            "0804000",
            "AURORA",
            Level::City,
            "US",
            "CO",
            TaxType::Sales,
        ))
        .unwrap();
    let rtd = b
        .jurisdiction(spec(
            "RTD",
            "REGIONAL TRANSPORTATION",
            Level::District,
            "US",
            "CO",
            TaxType::Sales,
        ))
        .unwrap();
    let cd = b
        .jurisdiction(spec(
            "CD",
            "SCIENTIFIC AND CULTURAL",
            Level::District,
            "US",
            "CO",
            TaxType::Sales,
        ))
        .unwrap();
    flat(&mut b, co, "GENERAL_MERCHANDISE", "0.029");
    flat(&mut b, arapahoe, "GENERAL_MERCHANDISE", "0.0025");
    flat(&mut b, aurora, "GENERAL_MERCHANDISE", "0.0375");
    flat(&mut b, rtd, "GENERAL_MERCHANDISE", "0.01");
    flat(&mut b, cd, "GENERAL_MERCHANDISE", "0.001");
    b.region("US", "CO", "COLORADO", &[co], "80012").unwrap();
    b.zip(
        80012,
        "CO",
        "AURORA",
        &[co, arapahoe, aurora, rtd, cd],
        50_000,
    )
    .unwrap();
    b.zip4(
        80012,
        1000,
        1999,
        &[co, arapahoe, rtd, cd],
        Date::MIN,
        Date::MAX,
    )
    .unwrap();
    let street = normalize_street("E", "ALAMEDA", "AVENUE", "");
    b.street(
        80012,
        &street,
        1000,
        1998,
        b'E',
        &[co, arapahoe],
        Date::MIN,
        Date::MAX,
    )
    .unwrap();

    // Tennessee.
    let tn = b
        .jurisdiction(spec(
            "47",
            "TENNESSEE",
            Level::State,
            "US",
            "TN",
            TaxType::Sales,
        ))
        .unwrap();
    let tn_sa = b
        .jurisdiction(spec(
            "47-SA",
            "TENNESSEE SINGLE ARTICLE",
            Level::State,
            "US",
            "TN",
            TaxType::Sales,
        ))
        .unwrap();
    let davidson = b
        .jurisdiction(spec(
            "47037",
            "DAVIDSON",
            Level::County,
            "US",
            "TN",
            TaxType::Sales,
        ))
        .unwrap();
    flat(&mut b, tn, "GENERAL_MERCHANDISE", "0.07");
    banded(
        &mut b,
        tn_sa,
        "GENERAL_MERCHANDISE",
        "0.0275",
        ("1600", Some("3200")),
    );
    banded(
        &mut b,
        davidson,
        "GENERAL_MERCHANDISE",
        "0.0225",
        ("0", Some("1600")),
    );
    b.region("US", "TN", "TENNESSEE", &[tn], "37203").unwrap();
    b.zip(37203, "TN", "NASHVILLE", &[tn, tn_sa, davidson], 20_000)
        .unwrap();

    // Massachusetts.
    let ma = b
        .jurisdiction(spec(
            "25",
            "MASSACHUSETTS",
            Level::State,
            "US",
            "MA",
            TaxType::Sales,
        ))
        .unwrap();
    flat(&mut b, ma, "GENERAL_MERCHANDISE", "0.0625");
    banded(&mut b, ma, "CLOTHING", "0.0625", ("175", None));
    b.region("US", "MA", "MASSACHUSETTS", &[ma], "").unwrap();
    b.zip(2110, "MA", "BOSTON", &[ma], 2_000).unwrap();

    // New York.
    let ny = b
        .jurisdiction(spec(
            "36",
            "NEW YORK",
            Level::State,
            "US",
            "NY",
            TaxType::Sales,
        ))
        .unwrap();
    flat(&mut b, ny, "GENERAL_MERCHANDISE", "0.04");
    let mut r = RuleSpec::flat(
        ny,
        "CLOTHING",
        d("0.04"),
        Date::MIN,
        Date::MAX,
        "CLOTHING $110 AND OVER",
    );
    r.unit_range = (d("110"), None);
    b.rule(r).unwrap();
    b.region("US", "NY", "NEW YORK", &[ny], "").unwrap();
    b.zip(10001, "NY", "NEW YORK", &[ny], 20_000).unwrap();

    // Texas, with its August clothing holiday.
    let tx = b
        .jurisdiction(spec(
            "48",
            "TEXAS",
            Level::State,
            "US",
            "TX",
            TaxType::Sales,
        ))
        .unwrap();
    let austin = b
        .jurisdiction(spec(
            "4805000",
            "AUSTIN",
            Level::City,
            "US",
            "TX",
            TaxType::Sales,
        ))
        .unwrap();
    let cmta = b
        .jurisdiction(spec(
            "CMTA",
            "CAPITAL METRO",
            Level::District,
            "US",
            "TX",
            TaxType::Sales,
        ))
        .unwrap();
    flat(&mut b, tx, "GENERAL_MERCHANDISE", "0.0625");
    flat(&mut b, austin, "GENERAL_MERCHANDISE", "0.01");
    flat(&mut b, cmta, "GENERAL_MERCHANDISE", "0.01");
    b.region("US", "TX", "TEXAS", &[tx], "78701").unwrap();
    b.zip(78701, "TX", "AUSTIN", &[tx, austin, cmta], 10_000)
        .unwrap();
    b.holiday(HolidaySpec {
        name: "TEXAS SALES TAX HOLIDAY 2025 (CLOTHING)".into(),
        country: "US".into(),
        region: "TX".into(),
        include_local: true,
        from: Date::from_ymd(2025, 8, 8).unwrap(),
        to: Date::from_ymd(2025, 8, 10).unwrap(),
        tax_codes: vec!["CLOTHING".into()],
        exclude_codes: Vec::new(),
        max_unit: Some(d("100")),
        cap_inclusive: false,
    })
    .unwrap();

    // Countries.
    let de = b
        .jurisdiction(spec(
            "DE",
            "GERMANY",
            Level::Country,
            "DE",
            "",
            TaxType::Vat,
        ))
        .unwrap();
    flat(&mut b, de, "GENERAL_MERCHANDISE", "0.19");
    b.region("DE", "", "GERMANY", &[de], "").unwrap();
    let ca = b
        .jurisdiction(spec("CA", "CANADA", Level::Country, "CA", "", TaxType::Gst))
        .unwrap();
    let on = b
        .jurisdiction(spec(
            "CA-ON",
            "ONTARIO",
            Level::Province,
            "CA",
            "ON",
            TaxType::Gst,
        ))
        .unwrap();
    flat(&mut b, ca, "GENERAL_MERCHANDISE", "0.05");
    flat(&mut b, on, "GENERAL_MERCHANDISE", "0.13");
    b.region("CA", "", "CANADA", &[ca], "").unwrap();
    b.region("CA", "ON", "ONTARIO", &[on], "").unwrap();
    b.postal_prefix("CA", "M", "ON", None).unwrap();
    let jp = b
        .jurisdiction(spec("JP", "JAPAN", Level::Country, "JP", "", TaxType::Vat))
        .unwrap();
    flat(&mut b, jp, "GENERAL_MERCHANDISE", "0.10");
    b.region("JP", "", "JAPAN", &[jp], "").unwrap();
    let kw = b
        .jurisdiction(spec(
            "KW",
            "TEST THREE-DECIMAL PLACE",
            Level::Country,
            "KW",
            "",
            TaxType::Vat,
        ))
        .unwrap();
    flat(&mut b, kw, "GENERAL_MERCHANDISE", "0.05");
    b.region("KW", "", "KUWAIT", &[kw], "").unwrap();

    // IP ranges (documentation blocks of RFC 5737 and RFC 3849).
    let ip = |country: &str, region: &str, postal: &str| IpLocationSpec {
        country: country.into(),
        region: region.into(),
        postal: postal.into(),
        ..Default::default()
    };
    // 203.0.113.0 ..= 203.0.113.127: Nashville with its ZIP.
    b.ipv4_range(0xCB00_7100, 0xCB00_717F, ip("US", "TN", "37203"))
        .unwrap();
    // 203.0.113.128 ..= 203.0.113.255: Tennessee, no postal code.
    b.ipv4_range(0xCB00_7180, 0xCB00_71FF, ip("US", "TN", ""))
        .unwrap();
    // 198.51.100.0 ..= 198.51.100.255: Canada, no province.
    b.ipv4_range(0xC633_6400, 0xC633_64FF, ip("CA", "", ""))
        .unwrap();
    // 192.0.2.0 ..= 192.0.2.255: Ontario.
    b.ipv4_range(0xC000_0200, 0xC000_02FF, ip("CA", "ON", ""))
        .unwrap();
    // 2001:db8:: ..= 2001:db8:0:0:ffff:ffff:ffff:ffff (one /64): Germany.
    let v6 = 0x2001_0db8u128 << 96;
    b.ipv6_range(v6, v6 | 0xFFFF_FFFF_FFFF_FFFF, ip("DE", "", ""))
        .unwrap();
    // Two ranges inside one /64, so the upper halves tie: 2001:db8:0:1::0..=ff is Germany,
    // 2001:db8:0:1::100..=1ff is the US without a postal code.
    let v6b = v6 | (1u128 << 64);
    b.ipv6_range(v6b, v6b | 0xFF, ip("DE", "", "")).unwrap();
    b.ipv6_range(v6b | 0x100, v6b | 0x1FF, ip("US", "TN", ""))
        .unwrap();

    b.build(1_772_323_200).expect("the scenario table builds")
}

/// The scenario table, opened and validated.
pub fn scenario() -> Table<AlignedBytes> {
    Table::from_bytes(&scenario_bytes()).expect("the scenario table opens")
}

/// One line of `amount` minor units in `category`.
pub fn line<D>(table: &Table<D>, category: &str, amount: Decimal) -> SaleLine {
    SaleLine {
        amount,
        quantity: 1,
        per_unit: false,
        tax_code: table.category(category).expect("category"),
    }
}
