//! levy-core: rate tables, location resolution and the calculation engine.
//!
//! A [`Table`] is an immutable, memory-mappable rate table (see [`table`] for the file
//! format). Resolution turns an [`Address`] or an IP address into a [`Location`]; calculation
//! turns a location and a [`Sale`] into a [`Calculation`] with per-line, per-jurisdiction
//! tax, in exact decimal arithmetic.
//!
//! ```
//! use levy_core::*;
//! use rust_decimal::Decimal;
//!
//! // A one-state table: Tennessee's 7% state rate on general merchandise.
//! let mut b = TableBuilder::new();
//! b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property").unwrap();
//! b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
//! let tn = b.jurisdiction(JurisdictionSpec {
//!     code: "47".into(), name: "TENNESSEE".into(), level: Level::State,
//!     country: "US".into(), region: "TN".into(),
//!     authority: "TENNESSEE DEPARTMENT OF REVENUE".into(), tax_type: TaxType::Sales,
//! }).unwrap();
//! b.rule(RuleSpec::flat(tn, "GENERAL_MERCHANDISE", Decimal::new(7, 2), Date::MIN, Date::MAX,
//!     "GENERAL STATE SALES TAX")).unwrap();
//! b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
//! let table = Table::from_bytes(&b.build(0).unwrap()).unwrap();
//!
//! let address = Address { region: "TN".into(), country: "US".into(), ..Default::default() };
//! let date = Date::from_ymd(2026, 3, 1).unwrap();
//! let location = table.resolve(&address, date).unwrap();
//! let sale = Sale {
//!     currency: Currency::USD, tax_included: false, customer: Customer::default(),
//!     automatic_tax: AutomaticTax::Auto, date, origin_country: None, rounding: Rounding::Line,
//!     lines: vec![SaleLine { amount: Decimal::from(10_000), quantity: 1, per_unit: false,
//!         tax_code: table.category("GENERAL_MERCHANDISE").unwrap() }],
//! };
//! let calc = table.calculate(&location, &sale).unwrap();
//! assert_eq!(calc.total_tax, Decimal::from(700)); // 7% of $100.00 is $7.00 = 700 cents
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod address;
mod builder;
mod calc;
mod date;
mod derived;
mod kinds;
mod lookup;
pub mod model;
mod money;
mod resolve;
pub mod table;
mod taxability;

pub use address::{
    normalize_postal, normalize_street, parse_street_line, parse_us_zip, StreetLine,
};
pub use builder::{
    BuildError, HolidaySpec, IpLocationSpec, JurisdictionSpec, RuleSpec, SaleCondition,
    TableBuilder, TaxabilityCellSpec,
};
pub use calc::{
    AutomaticTax, CalcError, Calculation, Customer, CustomerType, Exemption, JurisdictionTax,
    LineTax, Note, Sale, SaleLine, TaxId, ZeroReason, MAX_AMOUNT_MINOR, MAX_QUANTITY, MAX_RATE,
    MAX_RULE_AMOUNT,
};
pub use date::Date;
pub use kinds::{Coverage, Level, Rounding, Sourced, Sourcing, TaxType};
pub use lookup::{JsetId, Jurisdiction, JurisdictionId, Rule, RuleId, TaxCodeId};
pub use money::{round_minor, Currency};
pub use resolve::{
    Address, IpMode, IpPlace, Location, LocationSource, Precision, ResolutionStatus, ResolveError,
};
pub use rust_decimal::Decimal;
pub use table::{computed_hash_hex, AlignedBytes, Header, Table, TableBytes, TableError};
pub use taxability::{Taxability, TaxabilityCell, TaxabilityLevels, Treatment};

/// Table bytes from any of the usual places, so that one table type serves embedded,
/// mapped and in-memory tables alike.
#[derive(Debug)]
pub enum AnyBytes {
    /// Bytes compiled into the program (the embedded default).
    Static(&'static [u8]),
    /// A memory-mapped file.
    Mmap(memmap2::Mmap),
    /// Bytes read into aligned memory.
    Owned(AlignedBytes),
}

impl AsRef<[u8]> for AnyBytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            AnyBytes::Static(b) => b,
            AnyBytes::Mmap(m) => m,
            AnyBytes::Owned(v) => v.as_ref(),
        }
    }
}

// SAFETY: each variant's bytes are fixed for the value's life (see the impls for the inner
// types in `table`).
unsafe impl TableBytes for AnyBytes {}

/// A table over [`AnyBytes`].
pub type AnyTable = Table<AnyBytes>;

impl AnyTable {
    /// Opens a table file: the one way levy opens table files, used by `levy calc`,
    /// `levy serve` (at start and on every reload), levy-api and liblevy.
    ///
    /// The file is memory-mapped, not copied: the table's bytes appear in the process's
    /// memory map (`/proc/PID/maps`) and in no heap buffer. The header is checked, the
    /// content hash (BLAKE3) is verified over every byte, and the archive is validated, so
    /// a damaged, truncated or foreign file is refused with a [`TableError`] that says what
    /// to do, and never answers a calculation.
    ///
    /// # The one contract: table files are replaced, never rewritten
    ///
    /// A mapping shows the file as it is now. A table file must therefore not be modified
    /// or truncated in place while a process has it open; a new table is written to a new
    /// file and renamed over the old one, which is what `levy build` does. Processes that
    /// have the old file open keep reading the old file's bytes until they reopen it.
    pub fn open_file(path: impl AsRef<std::path::Path>) -> Result<AnyTable, TableError> {
        let path = path.as_ref();
        let io = |e: std::io::Error| TableError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < table::HEADER_LEN as u64 {
            // Too short to be a table (and an empty file cannot be mapped): read what is
            // there so that the header check names the problem.
            let bytes = std::fs::read(path).map_err(io)?;
            return Table::open(AnyBytes::Owned(AlignedBytes::copy_from(&bytes)));
        }
        // SAFETY: the mapping is read-only and private to this table; the one way for it to
        // change under us is another process rewriting the file in place, which the
        // contract above rules out (levy writes table files by rename). `populate` reads the
        // file in now, as verifying the hash reads every byte anyway.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(io)?;
        Table::open(AnyBytes::Mmap(map))
    }
}
