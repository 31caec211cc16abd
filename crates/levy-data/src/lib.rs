//! levy-data: the default rate table, compiled at build time from the curated data in the
//! repository's `data/` and embedded in the program.
//!
//! What it covers: US state-level general rates for every state, DC and Puerto Rico, with
//! the curated taxability rules (clothing, food, drugs, software and digital goods), the
//! Tennessee single article tax and the sales tax holidays of 2025 to 2027; every US ZIP
//! code, resolved to its state; the local rates public government data allows: California's
//! city, county and district rates from the CDTFA list (from 2026-01-01), and the county
//! rates of Georgia, Minnesota and Wisconsin from their SST rate files placed by the census
//! ZIP-to-county file; Canada's GST, HST, PST and QST by postal code; VAT and GST countries
//! (the EU-27, the United Kingdom, Norway, Switzerland, Australia, New Zealand, Japan,
//! Singapore and more); IPv4 and IPv6 ranges by country, and by state or province
//! in the US and Canada (DB-IP City Lite, CC BY 4.0), each US range with a ZIP code of its
//! state for `ip_mode: approximate`. Every answer says what it
//! covers: `STATE_ONLY` where local taxes exist that the default does not hold (Nashville,
//! say), `PARTIAL` where counties are placed but city or district taxes may apply, `FULL`
//! otherwise. A full table with local US rates is made with `levy build`; see this crate's
//! README.
//!
//! ```
//! let table = levy_data::default_table();
//! let address = levy_core::Address { postal_code: "37203".into(), country: "US".into(), ..Default::default() };
//! let location = table.resolve(&address, levy_core::Date::from_ymd(2026, 3, 1).unwrap()).unwrap();
//! assert_eq!(table.address_used(&location).region, "TN");
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
/// The embedded bytes were written at compile time by this crate's build script, with the
/// same levy-core this crate links, so they are opened without re-validating the archive:
/// the first call costs a header check (about 11 ns), every later call an atomic load.
/// This crate's tests open the same bytes with full validation and check their content
/// hash, so a damaged build cannot pass unnoticed. To validate them again at run time (about
/// hash and validating the archive, a few milliseconds), use
/// `Table::open(AnyBytes::Static(default_bytes()))`.
pub fn default_table() -> &'static AnyTable {
    static TABLE: OnceLock<AnyTable> = OnceLock::new();
    TABLE.get_or_init(open_default)
}

/// A new handle on the embedded default table, in O(1): for callers that own their table
/// (an `Arc<AnyTable>` they may later swap for a file's). The same bytes and the same
/// checks as [`default_table`].
pub fn open_default() -> AnyTable {
    // SAFETY: `default_bytes()` is the table this crate's build script wrote with
    // `levy_core::TableBuilder` from the same levy-core version, embedded unaltered and
    // immutable for the life of the program: `open_unchecked`'s contract.
    let opened = unsafe { Table::open_unchecked(AnyBytes::Static(default_bytes())) };
    match opened {
        Ok(table) => table,
        // The header of bytes this build wrote cannot fail its O(1) checks; the verified
        // open's error would name the problem.
        Err(_) => Table::open(AnyBytes::Static(default_bytes()))
            .unwrap_or_else(|e| unreachable!("embedded default table: {e}")),
    }
}
