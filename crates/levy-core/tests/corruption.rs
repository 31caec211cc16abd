//! Damaged tables: every single-byte change to a valid table is caught, either by
//! `Table::open` (a clean error) or by `Table::verify` (the content hash), and a damaged
//! table that opens still answers lookups and calculations without panicking.

use std::panic::{catch_unwind, AssertUnwindSafe};

use levy_core::table::{FORMAT_VERSION, HEADER_LEN};
use levy_core::*;
use levy_testkit::sale::{d, sale};

/// A small table with something in every index but the ZIP index (whose dense array alone
/// would be 400 KB): jurisdictions, rules of each kind, a holiday, regions, a postal
/// prefix, IPv4 and IPv6 ranges.
fn small_table() -> Vec<u8> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.tax_code("CLOTHING", Some("GENERAL_MERCHANDISE"), "clothing")
        .unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    b.category("CLOTHING", "CLOTHING");
    let j = |b: &mut TableBuilder, code: &str, level, country: &str, region: &str, tax_type| {
        b.jurisdiction(JurisdictionSpec {
            code: code.into(),
            name: code.into(),
            level,
            country: country.into(),
            region: region.into(),
            authority: "A".into(),
            tax_type,
        })
        .unwrap()
    };
    let tn = j(&mut b, "47", Level::State, "US", "TN", TaxType::Sales);
    let county = j(&mut b, "47037", Level::County, "US", "TN", TaxType::Sales);
    let ca = j(&mut b, "CA", Level::Country, "CA", "", TaxType::Gst);
    b.rule(RuleSpec::flat(
        tn,
        "GENERAL_MERCHANDISE",
        d("0.07"),
        Date::MIN,
        Date::MAX,
        "S",
    ))
    .unwrap();
    let mut band = RuleSpec::flat(
        county,
        "GENERAL_MERCHANDISE",
        d("0.0225"),
        Date::MIN,
        Date::MAX,
        "L",
    );
    band.band = (d("0"), Some(d("1600")));
    b.rule(band).unwrap();
    let mut threshold = RuleSpec::flat(tn, "CLOTHING", d("0.04"), Date::MIN, Date::MAX, "T");
    threshold.unit_range = (d("110"), None);
    threshold.fee = d("0.25");
    b.rule(threshold).unwrap();
    b.rule(RuleSpec::flat(
        ca,
        "GENERAL_MERCHANDISE",
        d("0.05"),
        Date::MIN,
        Date::MAX,
        "G",
    ))
    .unwrap();
    b.holiday(HolidaySpec {
        name: "H".into(),
        country: "US".into(),
        region: "TN".into(),
        include_local: true,
        from: Date::from_ymd(2026, 2, 1).unwrap(),
        to: Date::from_ymd(2026, 3, 31).unwrap(),
        tax_codes: vec!["CLOTHING".into()],
        exclude_codes: Vec::new(),
        max_unit: Some(d("100")),
        cap_inclusive: true,
    })
    .unwrap();
    // A per-sale threshold (two rules of one group) and the matrix's cells, so that damaged
    // bytes reach them too.
    for (rate, above) in [("0", false), ("0.05", true)] {
        let mut r = RuleSpec::flat(ca, "CLOTHING", d(rate), Date::MIN, Date::MAX, "R");
        r.sale = Some(SaleCondition {
            group: 1,
            limit: d("4"),
            above,
        });
        b.rule(r).unwrap();
    }
    for (country, region, levels, treatment) in [
        ("US", "TN", TaxabilityLevels::ALL, Treatment::Parts),
        ("CA", "", TaxabilityLevels::UPPER, Treatment::Unknown),
    ] {
        b.taxability_cell(TaxabilityCellSpec {
            country: country.into(),
            region: region.into(),
            levels,
            scope: "all".into(),
            treatment,
            summary: "s".into(),
            codes: vec!["CLOTHING".into()],
            from: Date::MIN,
            to: Date::MAX,
            sale_at_most: Some(d("4")),
            label: "L".into(),
            source: "S".into(),
            as_of: Date::from_ymd(2026, 11, 26).unwrap(),
            note: "N".into(),
        })
        .unwrap();
    }
    b.region("US", "TN", "TENNESSEE", &[tn, county], "")
        .unwrap();
    b.region("CA", "", "CANADA", &[ca], "").unwrap();
    b.postal_prefix("CA", "M", "ON", None).unwrap();
    let ip = |country: &str, region: &str, postal: &str| IpLocationSpec {
        country: country.into(),
        region: region.into(),
        postal: postal.into(),
        ..Default::default()
    };
    b.ipv4_range(0xCB00_7100, 0xCB00_71FF, ip("US", "TN", ""))
        .unwrap();
    b.ipv4_range(0xC633_6400, 0xC633_64FF, ip("CA", "", ""))
        .unwrap();
    b.ipv6_range(
        0x2001_0db8u128 << 96,
        (0x2001_0db8u128 << 96) | 0xFFFF,
        ip("CA", "", "M5V"),
    )
    .unwrap();
    b.build(1_772_323_200).unwrap()
}

/// Resolves and calculates everything the small table knows; the answers do not matter,
/// only that there are answers.
fn exercise<D: TableBytes>(t: &Table<D>) {
    let date = Date::from_ymd(2026, 3, 1).unwrap();
    let mut locations = Vec::new();
    for a in [
        Address {
            region: "TN".into(),
            country: "US".into(),
            ..Default::default()
        },
        Address {
            postal_code: "M5V 2T6".into(),
            country: "CA".into(),
            ..Default::default()
        },
        Address {
            country: "CA".into(),
            ..Default::default()
        },
        Address {
            postal_code: "37203".into(),
            region: "TN".into(),
            country: "US".into(),
            ..Default::default()
        },
    ] {
        locations.extend(t.resolve(&a, date).ok());
    }
    for ip in ["203.0.113.9", "198.51.100.9", "2001:db8::9", "10.0.0.1"] {
        for mode in [
            IpMode::Strict,
            IpMode::Zero,
            IpMode::Approximate,
            IpMode::BestEffort,
        ] {
            locations.extend(t.resolve_ip(ip, mode, date).ok());
        }
    }
    let codes: Vec<TaxCodeId> = t
        .category_names()
        .filter_map(|n| t.category(n))
        .chain([TaxCodeId(0), TaxCodeId(1)])
        .collect();
    for loc in &locations {
        for tax_included in [false, true] {
            for amount in [0i64, 9_999, 11_000, 250_000] {
                let sale = Sale {
                    currency: Currency::USD,
                    tax_included,
                    customer: Customer::default(),
                    automatic_tax: AutomaticTax::Auto,
                    date,
                    origin_country: Some("US".into()),
                    rounding: Rounding::Line,
                    lines: codes
                        .iter()
                        .map(|&tax_code| SaleLine {
                            amount: Decimal::from(amount),
                            quantity: 3,
                            per_unit: false,
                            tax_code,
                        })
                        .collect(),
                };
                let _ = t.calculate(loc, &sale);
            }
        }
    }
    for j in 0..t.jurisdiction_count() as u32 + 1 {
        if let Some(jur) = t.jurisdiction(JurisdictionId(j)) {
            let _ = (
                jur.code(),
                jur.name(),
                jur.level(),
                jur.country(),
                jur.tax_type(),
            );
        }
        for (_, r) in t.rules_of(JurisdictionId(j)) {
            let _ = (
                r.rate(),
                r.band(),
                r.unit_range(),
                r.fee(),
                r.rate_type(),
                r.interval(),
                r.sale_condition(),
            );
        }
    }
    for c in t.taxability_cells() {
        let _ = (
            c.place(),
            c.levels(),
            c.scope(),
            c.treatment(),
            c.summary(),
            c.codes().count(),
            c.interval(),
            c.sale_at_most(),
            c.label(),
            c.source(),
            c.as_of(),
            c.note(),
        );
    }
    for code in [TaxCodeId(0), TaxCodeId(1), TaxCodeId(7)] {
        let _ = t.taxability_answer("US", "TN", code, Some(date));
        let _ = t.taxability_cells_for("CA", "", code, None);
    }
}

#[test]
fn the_small_table_is_valid_and_exercised() {
    // Baseline for the flips: unchanged bytes open, verify, and give the right answer:
    // $100.00 of general merchandise in Tennessee is 7% + 2.25% = 9.25% = 925 cents.
    let bytes = small_table();
    let t = Table::from_bytes(&bytes).unwrap();
    t.verify().unwrap();
    exercise(&t);
    let date = Date::from_ymd(2026, 3, 1).unwrap();
    let loc = t
        .resolve(
            &Address {
                region: "TN".into(),
                country: "US".into(),
                ..Default::default()
            },
            date,
        )
        .unwrap();
    let sale = sale(
        vec![SaleLine {
            amount: d("10000"),
            quantity: 1,
            per_unit: false,
            tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
        }],
        date,
    );
    assert_eq!(t.calculate(&loc, &sale).unwrap().total_tax, d("925"));
}

/// Writes the content hash of `bytes` into its header, as a hostile writer who knows the
/// format could: the damage then passes the hash and must be caught (or be harmless) later.
fn reseal(bytes: &mut [u8]) {
    let mut h = blake3::Hasher::new();
    h.update(&bytes[..32]);
    h.update(&bytes[HEADER_LEN..]);
    let hash: [u8; 32] = h.finalize().into();
    bytes[32..64].copy_from_slice(&hash);
}

#[test]
fn every_single_byte_flip_is_refused_at_open() {
    let good = small_table();
    for mask in [0xFFu8, 0x01, 0x80, 0x10] {
        for i in 0..good.len() {
            let mut bytes = good.clone();
            bytes[i] ^= mask;
            let e = Table::from_bytes(&bytes).unwrap_err();
            // The header fields map to their own errors; any other byte fails the hash.
            match i {
                0..8 => assert_eq!(e, TableError::NotATable, "byte {i}"),
                8..12 => assert!(matches!(e, TableError::Version { .. }), "byte {i}: {e:?}"),
                12..16 => assert!(matches!(e, TableError::Layout { .. }), "byte {i}: {e:?}"),
                16..24 => assert!(
                    matches!(e, TableError::Truncated { .. } | TableError::Corrupt { .. }),
                    "byte {i}: {e:?}"
                ),
                _ => assert!(
                    matches!(e, TableError::HashMismatch { .. }),
                    "byte {i} ^ {mask:#x}: {e:?}"
                ),
            }
        }
    }
}

#[test]
fn a_resealed_flip_is_an_error_or_harmless_never_a_panic() {
    // A hostile file whose hash was recomputed after the damage: bytecheck must refuse a
    // broken structure, and anything it cannot judge (a string's bytes, a number) must
    // still be answered without a panic.
    let good = small_table();
    let mut opened = 0usize;
    let mut failures = Vec::new();
    for mask in [0xFFu8, 0x01, 0x80, 0x10] {
        for i in 24..good.len() {
            if (32..64).contains(&i) {
                continue; // the hash itself, rewritten by `reseal`
            }
            let mut bytes = good.clone();
            bytes[i] ^= mask;
            reseal(&mut bytes);
            let outcome = catch_unwind(AssertUnwindSafe(|| match Table::from_bytes(&bytes) {
                Err(e) => {
                    assert!(
                        matches!(e, TableError::Corrupt { .. } | TableError::Truncated { .. }),
                        "byte {i}: {e:?}"
                    );
                    false
                }
                Ok(t) => {
                    exercise(&t);
                    true
                }
            }));
            match outcome {
                Ok(true) => opened += 1,
                Ok(false) => {}
                Err(_) => failures.push((i, mask)),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "panics or wrong errors at (byte, mask): {failures:?}"
    );
    println!(
        "{} bytes x 4 masks resealed; {opened} passed bytecheck and were answered",
        good.len()
    );
}

#[test]
fn truncation_at_every_length_is_an_error() {
    let good = small_table();
    for len in 0..good.len() {
        let e = Table::from_bytes(&good[..len]).unwrap_err();
        assert_eq!(
            e,
            TableError::Truncated {
                len,
                expected: if len < HEADER_LEN {
                    HEADER_LEN
                } else {
                    good.len()
                }
            }
        );
    }
    // One byte too many is not a table either.
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(
        Table::from_bytes(&long).unwrap_err(),
        TableError::Corrupt { .. }
    ));
}

#[test]
fn a_newer_format_version_is_refused() {
    let mut bytes = small_table();
    bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = Table::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        e,
        TableError::Version {
            expected: FORMAT_VERSION,
            got: FORMAT_VERSION + 1
        }
    );
    // The message tells the reader what to do.
    assert!(e.to_string().contains("rebuild"), "{e}");
}

#[test]
fn foreign_bytes_are_not_a_table() {
    for foreign in [
        &b"SQLite format 3\0 and then some pages of a database file, long enough for a header"[..],
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR and more bytes to pass the length of a levy header....",
        b"LEVYTAB",
        b"{\"not\": \"a table\"}",
    ] {
        let e = Table::from_bytes(foreign).unwrap_err();
        let expected = if foreign == b"LEVYTAB" {
            // A prefix of the magic is a table cut short.
            TableError::Truncated {
                len: 7,
                expected: HEADER_LEN,
            }
        } else {
            TableError::NotATable
        };
        assert_eq!(e, expected);
    }
}

#[test]
fn a_misaligned_archive_is_refused_not_read() {
    // AlignedBytes starts 16-byte aligned, so its bytes from offset 1 on are not.
    let good = small_table();
    let padded: &'static AlignedBytes = Box::leak(Box::new(AlignedBytes::copy_from(
        &[&[0u8][..], &good].concat(),
    )));
    let shifted: &'static [u8] = &padded.as_ref()[1..];
    assert_eq!(Table::open(shifted).unwrap_err(), TableError::Misaligned);
    // The same bytes copied into aligned memory open.
    assert!(Table::from_bytes(shifted).is_ok());
}

#[test]
fn the_builder_refuses_numbers_calculation_cannot_hold() {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let j = b
        .jurisdiction(JurisdictionSpec {
            code: "X".into(),
            name: "X".into(),
            level: Level::State,
            country: "US".into(),
            region: "TN".into(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })
        .unwrap();
    let rule =
        |rate: Decimal| RuleSpec::flat(j, "GENERAL_MERCHANDISE", rate, Date::MIN, Date::MAX, "R");
    // 10 (1000%) is the largest rate; 10.0001 is refused.
    assert!(b.rule(rule(MAX_RATE)).is_ok());
    assert!(matches!(
        b.rule(rule(d("10.0001"))),
        Err(BuildError::Invalid { what: "rule", .. })
    ));
    // A fee, band or unit-range edge above 10^12 major units is refused.
    let mut r = rule(d("0.05"));
    r.fee = MAX_RULE_AMOUNT + Decimal::ONE;
    assert!(b.rule(r).is_err());
    let mut r = rule(d("0.05"));
    r.band = (d("0"), Some(MAX_RULE_AMOUNT + Decimal::ONE));
    assert!(b.rule(r).is_err());
}

#[test]
fn the_largest_accepted_values_calculate_exactly() {
    // A 1000% rate with a 10^12 fee per unit, on the largest line: a per-unit price of
    // 10^15 cents (10^13 dollars) times 10^9 units. Tax per unit: 10 × 10^13 + 10^12 =
    // 1.01 × 10^14 dollars; times 10^9 units = 1.01 × 10^23 dollars = 1.01 × 10^25 cents.
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let j = b
        .jurisdiction(JurisdictionSpec {
            code: "X".into(),
            name: "X".into(),
            level: Level::State,
            country: "US".into(),
            region: "TN".into(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })
        .unwrap();
    let mut r = RuleSpec::flat(
        j,
        "GENERAL_MERCHANDISE",
        MAX_RATE,
        Date::MIN,
        Date::MAX,
        "R",
    );
    r.fee = MAX_RULE_AMOUNT;
    b.rule(r).unwrap();
    b.region("US", "TN", "T", &[j], "").unwrap();
    let t = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    let date = Date::from_ymd(2026, 3, 1).unwrap();
    let loc = t
        .resolve(
            &Address {
                region: "TN".into(),
                country: "US".into(),
                ..Default::default()
            },
            date,
        )
        .unwrap();
    let mut sale = sale(
        vec![SaleLine {
            amount: Decimal::from(MAX_AMOUNT_MINOR),
            quantity: MAX_QUANTITY,
            per_unit: true,
            tax_code: t.tax_code("GENERAL_MERCHANDISE").unwrap(),
        }],
        date,
    );
    let c = t.calculate(&loc, &sale).unwrap();
    assert_eq!(c.total_tax, d("10100000000000000000000000"));
    assert_eq!(c.total_including_tax, d("11100000000000000000000000"));
    // Including tax, the same largest line: each unit's 10^13 dollars is u + 10u + 10^12,
    // so u = 9 × 10^12 / 11 = 818181818181.8181… dollars; times 10^9 units in cents is
    // 81818181818181818181818.18… → 81818181818181818181818, and the tax is the rest of
    // 10^24: 918181818181818181818182.
    sale.tax_included = true;
    let c = t.calculate(&loc, &sale).unwrap();
    assert_eq!(c.total_excluding_tax, d("81818181818181818181818"));
    assert_eq!(c.total_tax, d("918181818181818181818182"));
    assert_eq!(c.total_including_tax, d("1000000000000000000000000"));
}

#[test]
fn the_fuzz_seed_is_the_small_table_of_this_format() {
    // `fuzz/corpus/table_open/seed-small.levy` seeds the table opener's fuzz target; it must
    // be a table this format opens, or the fuzzer starts from nothing. Regenerate it after a
    // format change with `LEVY_WRITE_FUZZ_SEED=1 cargo test -p levy-core --test corruption`.
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/table_open/seed-small.levy"
    ));
    let bytes = small_table();
    if std::env::var("LEVY_WRITE_FUZZ_SEED").as_deref() == Ok("1") {
        std::fs::write(path, &bytes).unwrap();
    }
    let seed = std::fs::read(path).unwrap();
    assert!(
        seed == bytes,
        "the fuzz seed is stale: regenerate it (see this test's comment)"
    );
    Table::from_bytes(&seed).unwrap();
}
