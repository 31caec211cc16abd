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
mod indexes;
mod kinds;
mod lookup;
pub mod model;
mod money;
pub mod quote;
mod resolve;
pub mod table;
mod taxability;

pub use address::{
    city_key, normalize_postal, normalize_street, parse_street_line, parse_us_zip, postal_fits,
    StreetLine,
};
pub use builder::{
    BuildError, FeeSpec, HolidaySpec, IpLocationSpec, JurisdictionSpec, RuleSpec, SaleCondition,
    SmallSeller, TableBuilder, TaxabilityCellSpec,
};
pub use calc::{
    AutomaticTax, CalcError, Calculation, Covers, Customer, CustomerType, Delivery, Exemption,
    FeeOutcome, JurisdictionTax, LineTax, Note, Sale, SaleLine, Stale, TaxId, ZeroReason,
    MAX_AMOUNT_MINOR, MAX_QUANTITY, MAX_RATE, MAX_RULE_AMOUNT,
};
pub use date::{Date, DateError};
pub use kinds::{
    Coverage, Level, PlaceNote, Rounding, Sourced, Sourcing, TaxType, TaxabilityLevels,
};
pub use lookup::{JsetId, Jurisdiction, JurisdictionId, Rule, RuleId, TaxCodeId};
pub use money::{round_minor, Currency};
pub use quote::{Order, QuoteError, QuoteErrorKind, Quoted, Quoter};
pub use resolve::{
    Address, IpMode, IpPlace, Location, LocationSource, Precision, ResolutionStatus, ResolveError,
};
pub use rust_decimal::Decimal;
pub use table::{computed_hash_hex, AlignedBytes, Header, Table, TableBytes, TableError};
pub use taxability::{Taxability, TaxabilityCell, Treatment};

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
    /// Opens a table file: the way levy opens table files, used by `levy calc`, `levy
    /// serve` (at start and on every reload), levy-api and liblevy.
    ///
    /// The file is read into memory the process owns (one read of the whole file, which
    /// verifying the hash needs anyway), so that nothing done to the file afterwards can
    /// change or take away the bytes a running process answers from: a table copied over
    /// in place (`cp new.levy live.levy`), truncated, or on a network share that goes away
    /// leaves the process answering from the table it opened until it reopens one. The
    /// header is checked, the content hash (BLAKE3) is verified over every byte, and the
    /// archive is validated, so a damaged, truncated or foreign file is refused with a
    /// [`TableError`] that says what to do, and never answers a calculation. Only a regular
    /// file is opened: a device (`/dev/zero`), a FIFO or a directory is refused without
    /// reading it. Its header is read first: a file whose length is not the one its header
    /// gives, or longer than [`table::MAX_TABLE_LEN`] (1 GiB), is refused having read 64
    /// bytes of it.
    ///
    /// The cost is the table's size in memory per process (25 MB for the default, 42 MB for
    /// a table of every shared source), where a mapping shares the page cache between
    /// processes: [`AnyTable::open_file_mapped`] maps instead, under a contract.
    pub fn open_file(path: impl AsRef<std::path::Path>) -> Result<AnyTable, TableError> {
        let path = path.as_ref();
        let (mut file, len) = open_regular(path)?;
        Self::check_length(path, &mut file, len)?;
        let bytes = AlignedBytes::read_exact_len(&mut file, len).map_err(|e| io_error(path, &e))?;
        Table::open(AnyBytes::Owned(bytes))
    }

    /// Reads a table file's header and checks it against the file's length
    /// ([`Header::check_file`]) before the file is read or mapped whole: a file whose
    /// length is not the one its header gives, or that is longer than
    /// [`table::MAX_TABLE_LEN`] (a 60 GB sparse file), is refused having read 64 bytes.
    fn check_length(
        path: &std::path::Path,
        file: &mut std::fs::File,
        len: u64,
    ) -> Result<(), TableError> {
        use std::io::{Read, Seek};
        let mut prefix = Vec::with_capacity(table::HEADER_LEN);
        file.by_ref()
            .take(table::HEADER_LEN as u64)
            .read_to_end(&mut prefix)
            .map_err(|e| io_error(path, &e))?;
        file.rewind().map_err(|e| io_error(path, &e))?;
        // A file shorter than a header is read whole (it is short), so that the open's
        // header check names what it lacks.
        if prefix.len() < table::HEADER_LEN {
            return Ok(());
        }
        Header::check_file(&prefix, len).map(|_| ())
    }

    /// Opens a table file by mapping it into memory: its pages are shared with every other
    /// process that maps it and read from the page cache as they are needed (the hash is
    /// verified over every byte at open, and the header checked against the file's length
    /// first, as [`AnyTable::open_file`] does), so several
    /// processes on one machine (Spark executors, many tills) hold one copy.
    ///
    /// Use it where memory is short (a point-of-sale device) or many processes share one
    /// table; use [`AnyTable::open_file`] wherever another program may rewrite the file.
    ///
    /// # Safety
    ///
    /// The caller promises that the file is replaced, never rewritten, while the table (or
    /// any value read from it) lives. A mapping shows the file as it is now: a table file
    /// modified in place would change the bytes under a validated archive (undefined
    /// behaviour), and one truncated ends the process with SIGBUS. A new table must be
    /// written to a new file and renamed over the old one, which is what `levy build`
    /// does; processes that have the old file open keep reading the old file's bytes until
    /// they reopen it.
    pub unsafe fn open_file_mapped(
        path: impl AsRef<std::path::Path>,
    ) -> Result<AnyTable, TableError> {
        let path = path.as_ref();
        let (mut file, len) = open_regular(path)?;
        if len < table::HEADER_LEN as u64 {
            // Too short to be a table (and an empty file cannot be mapped): read what is
            // there so that the header check names the problem.
            let bytes =
                AlignedBytes::read_exact_len(&mut file, len).map_err(|e| io_error(path, &e))?;
            return Table::open(AnyBytes::Owned(bytes));
        }
        Self::check_length(path, &mut file, len)?;
        // SAFETY: the mapping is read-only and private to this table; the one way for it to
        // change under us is another process rewriting the file in place, which this
        // function's caller promises does not happen (levy writes table files by rename).
        // `populate` reads the file in now, as verifying the hash reads every byte anyway.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
            .map_err(|e| io_error(path, &e))?;
        Table::open(AnyBytes::Mmap(map))
    }
}

/// A table file opened for reading, with its length: refused, without being opened, when
/// it is not a regular file (a device such as `/dev/zero` reads forever; a FIFO blocks the
/// opener until a writer comes).
fn open_regular(path: &std::path::Path) -> Result<(std::fs::File, u64), TableError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, &e))?;
    if !meta.is_file() {
        return Err(TableError::Io {
            path: path.display().to_string(),
            message: "not a regular file (a device, a FIFO or a directory): a table is a file \
                      that `levy build` writes"
                .into(),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let len = file.metadata().map_err(|e| io_error(path, &e))?.len();
    Ok((file, len))
}

fn io_error(path: &std::path::Path, e: &std::io::Error) -> TableError {
    TableError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}
