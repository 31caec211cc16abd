//! levy-data: the default rate table, compiled at build time from the curated data in the
//! repository's `data/` and embedded in the program.
//!
//! What it covers: US state-level general rates for every state, DC and Puerto Rico, with
//! the curated taxability rules (clothing, food, drugs, software and digital goods), the
//! Tennessee single article tax and the sales tax holidays of 2025 to 2027; every US ZIP
//! code, resolved to its state (no county, city or district rates); Canada's GST, HST, PST
//! and QST by postal code; VAT and GST countries (the EU-27, the United Kingdom, Norway,
//! Switzerland, Australia, New Zealand, Japan, Singapore and more); and country-level IPv4
//! and IPv6 ranges. A full table with local US rates is made with `levy build`; see this
//! crate's README.
//!
//! ```
//! let table = levy_data::default_table();
//! let address = levy_core::Address { postal_code: "37203".into(), country: "US".into(), ..Default::default() };
//! let location = table.resolve(&address, levy_core::Date::from_ymd(2026, 3, 1).unwrap()).unwrap();
//! assert_eq!(location.address_used.region, "TN");
//! ```

#![warn(missing_docs)]

use std::sync::OnceLock;

use levy_core::{AnyBytes, AnyTable, Table};

/// Bytes aligned to 16, as a table's archive requires.
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static DEFAULT: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/default.levy")));

/// The bytes of the embedded default table (a `.levy` file), 16-byte aligned.
pub fn default_bytes() -> &'static [u8] {
    &DEFAULT.0
}

/// The embedded default table, opened on first use and kept for the life of the program.
///
/// The first call validates the archive's structure once (every offset and length is
/// checked): about 2 ms for the default table's 15 MB in a release build on a 2-core
/// machine, against 11 ns for an unchecked open. It does not recompute the content hash;
/// call [`levy_core::Table::verify`] for that (25 to 55 ms). Every later call returns the same
/// table at the cost of an atomic load.
///
/// # Panics
///
/// Only if the embedded bytes fail validation, which the build and this crate's tests
/// rule out: the table is built by this crate's build script from checked inputs.
pub fn default_table() -> &'static AnyTable {
    static TABLE: OnceLock<AnyTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        Table::open(AnyBytes::Static(default_bytes()))
            .expect("the embedded default table is valid (built and tested by levy-data)")
    })
}
