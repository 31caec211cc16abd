//! Arbitrary text as the `customer.ip` value, in every mode: a location or one of the
//! interface's IP errors, never a panic.

#![no_main]

use std::sync::OnceLock;

use levy_core::{
    AlignedBytes, Date, Decimal, IpLocationSpec, IpMode, JurisdictionSpec, Level, ResolveError,
    RuleSpec, Table, TableBuilder, TaxType,
};
use libfuzzer_sys::fuzz_target;

fn table() -> &'static Table<AlignedBytes> {
    static TABLE: OnceLock<Table<AlignedBytes>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut b = TableBuilder::new();
        b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
        let spec = |code: &str, level, country: &str, region: &str| JurisdictionSpec {
            code: code.into(),
            name: code.into(),
            level,
            country: country.into(),
            region: region.into(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        };
        let tn = b
            .jurisdiction(spec("47", Level::State, "US", "TN"))
            .unwrap();
        let ca = b
            .jurisdiction(spec("CA", Level::Country, "CA", ""))
            .unwrap();
        for j in [tn, ca] {
            b.rule(RuleSpec::flat(
                j,
                "GENERAL_MERCHANDISE",
                Decimal::new(5, 2),
                Date::MIN,
                Date::MAX,
                "R",
            ))
            .unwrap();
        }
        b.region("US", "TN", "TENNESSEE", &[tn], "37203").unwrap();
        b.region("CA", "", "CANADA", &[ca], "").unwrap();
        b.zip(37203, "TN", "NASHVILLE", &[tn], 1).unwrap();
        let loc = |country: &str, region: &str, postal: &str| IpLocationSpec {
            country: country.into(),
            region: region.into(),
            postal: postal.into(),
            ..Default::default()
        };
        b.ipv4_range(0x0A00_0000, 0x0AFF_FFFF, loc("US", "TN", "37203"))
            .unwrap();
        b.ipv4_range(0x0B00_0000, 0x0BFF_FFFF, loc("US", "TN", ""))
            .unwrap();
        b.ipv4_range(0x0C00_0000, 0x0CFF_FFFF, loc("CA", "", ""))
            .unwrap();
        b.ipv6_range(
            0x2001_0db8 << 96,
            (0x2001_0db8 << 96) | ((1u128 << 96) - 1),
            loc("US", "TN", "37203"),
        )
        .unwrap();
        b.ipv6_range(
            0x2001_0db9 << 96,
            0x2001_0db9 << 96 | 0xffff,
            loc("CA", "", ""),
        )
        .unwrap();
        Table::from_bytes(&b.build(0).unwrap()).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parses = text.trim().parse::<std::net::IpAddr>().is_ok();
    let date = Date::from_ymd(2026, 3, 1).expect("a real day");
    for mode in [
        IpMode::Strict,
        IpMode::Zero,
        IpMode::Approximate,
        IpMode::BestEffort,
    ] {
        match table().resolve_ip(&text, mode, date) {
            Ok(_) => assert!(parses, "{text:?} resolved without being an IP"),
            Err(ResolveError::InvalidIp(_)) => {
                assert!(!parses, "{text:?} parses but was called invalid")
            }
            Err(e) => {
                assert!(parses);
                assert!(
                    matches!(mode, IpMode::Strict | IpMode::Approximate),
                    "{mode:?} must not fail: {e}"
                );
            }
        }
    }
});
