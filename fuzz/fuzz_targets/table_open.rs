//! Arbitrary bytes as a table file: opening must answer a clean error or a table, and a
//! table that opens must answer every lookup and calculation without panicking.
//!
//! Opening verifies the content hash first, so nearly every mutation is refused there. To
//! reach the archive's validation and the lookups behind it, a mutation refused only for
//! its hash is opened again with the hash recomputed, as a hostile writer who knows the
//! format could do.

#![no_main]

use levy_core::table::HEADER_LEN;
use levy_core::{
    Address, AlignedBytes, AutomaticTax, Currency, Customer, Date, Decimal, IpMode, Sale, SaleLine,
    Table, TableError, TaxCodeId,
};
use libfuzzer_sys::fuzz_target;

/// The bytes with the BLAKE3 content hash of their header prefix and archive written in.
fn resealed(data: &[u8]) -> Vec<u8> {
    let mut bytes = data.to_vec();
    let mut h = blake3::Hasher::new();
    h.update(&bytes[..32]);
    h.update(&bytes[HEADER_LEN..]);
    bytes[32..64].copy_from_slice(h.finalize().as_bytes());
    bytes
}

fuzz_target!(|data: &[u8]| {
    let table = match Table::open(AlignedBytes::copy_from(data)) {
        Ok(t) => t,
        Err(TableError::HashMismatch { .. }) => {
            match Table::open(AlignedBytes::copy_from(&resealed(data))) {
                Ok(t) => t,
                Err(_) => return,
            }
        }
        Err(_) => return,
    };
    assert!(table.verify().is_ok(), "an opened table verifies");
    let date = Date::from_ymd(2026, 3, 1).expect("a real day");
    let addresses = [
        Address {
            line1: "1200 E Alameda Ave".into(),
            postal_code: "80012-1500".into(),
            country: "US".into(),
            ..Default::default()
        },
        Address {
            postal_code: "37203".into(),
            region: "TN".into(),
            country: "US".into(),
            ..Default::default()
        },
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
            country: "DE".into(),
            ..Default::default()
        },
    ];
    let mut locations: Vec<_> = addresses
        .iter()
        .filter_map(|a| table.resolve(a, date).ok())
        .collect();
    for ip in ["203.0.113.5", "198.51.100.7", "2001:db8::1"] {
        for mode in [
            IpMode::Strict,
            IpMode::Zero,
            IpMode::Approximate,
            IpMode::BestEffort,
        ] {
            if let Ok(loc) = table.resolve_ip(ip, mode, date) {
                locations.push(loc);
            }
        }
    }
    // Every tax code the table claims, and one past the end.
    let codes = table
        .category_names()
        .filter_map(|n| table.category(n))
        .chain([TaxCodeId(0), TaxCodeId(u32::MAX)]);
    let lines: Vec<SaleLine> = codes
        .map(|tax_code| SaleLine {
            amount: Decimal::from(250_000),
            quantity: 2,
            per_unit: false,
            tax_code,
        })
        .collect();
    for location in &locations {
        for tax_included in [false, true] {
            let sale = Sale {
                currency: Currency::USD,
                tax_included,
                customer: Customer::default(),
                automatic_tax: AutomaticTax::Auto,
                date,
                origin_country: None,
                rounding: levy_core::Rounding::Line,
                lines: lines.clone(),
            };
            let _ = table.calculate(location, &sale);
        }
    }
});
