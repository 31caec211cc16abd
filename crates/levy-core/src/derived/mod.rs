//! What a table derives from its archive and keeps in memory beside it: indexes the file
//! does not hold, each built on its first use from the archive alone (so opening a table
//! stays as cheap as before, and whichever thread builds one builds the same). The table
//! holds them (`table.rs`) and hands them out (`indexes.rs`); resolution (`resolve/`) and
//! the calculation (`calc/`) read them there. This module reads only the archive
//! (`lookup.rs`, `model.rs`), never the table or anything above it.
//!
//! | index | module | made on | so that |
//! |---|---|---|---|
//! | ZIP+4 starts: each ZIP5's span of ZIP+4 ranges | `zip4` | the first ZIP+4 lookup | a ZIP+4 is searched among its ZIP's ranges, not all |
//! | ZIP words: each ZIP's usual answer in one word | `zip_usual` | the first US ZIP lookup | an address by ZIP alone reads neither the ZIP's record nor its periods |
//! | holiday index: places, their key spans and days; the days any holiday is in force | `holidays` | the first holiday search | a sale on a day without holidays looks no further |
//! | usual rules: each jurisdiction's keys for `GENERAL_MERCHANDISE` | `usual_rules` | a jurisdiction's first usual line | the usual line indexes its rules instead of searching them |
//! | taxability index: what the matrix says of each (place, code) | `taxability` | the first line whose code is not a root | a line asks one load per place |
//! | spans: each jurisdiction's first day and horizon | `spans` | a jurisdiction's first quote | a sale before a state's first day is refused, one after a horizon noted, without reading its rules again |

use std::sync::OnceLock;

pub(crate) mod holidays;
pub(crate) mod spans;
pub(crate) mod taxability;
pub(crate) mod usual_rules;
pub(crate) mod zip4;
pub(crate) mod zip_usual;

pub(crate) use holidays::place_key;
pub(crate) use taxability::{code_span, known_at, place_span, TaxabilityIndex};

/// The derived indexes of one table, each empty until its first use.
#[derive(Default)]
pub(crate) struct Derived {
    /// `zip4_start[z]..zip4_start[z + 1]` are the ZIP+4 ranges of ZIP5 `z`, built on the
    /// first ZIP+4 lookup, turning the search over every range into one over a ZIP's own.
    pub(crate) zip4_start: OnceLock<Box<[u32]>>,
    /// The places of the holiday keys, each with its span of keys and the days its
    /// holidays cover, and the days on which any holiday is in force, built on the first
    /// holiday search.
    pub(crate) holidays: OnceLock<holidays::HolidayIndex>,
    /// Each jurisdiction's rule keys for the usual tax code, found on its first usual line
    /// (see [`usual_rules::UsualRules`]).
    pub(crate) usual: OnceLock<usual_rules::UsualRules>,
    /// Each ZIP code's usual answer (see [`zip_usual::ZipUsual`]), filled on the ZIP's
    /// first lookup: 8 bytes a possible ZIP code (800 KB), made on the first US ZIP lookup.
    pub(crate) zip_usual: OnceLock<zip_usual::ZipUsual>,
    /// What the taxability matrix says of each place and tax code, made on the first line
    /// whose code is not a root.
    pub(crate) taxability: OnceLock<TaxabilityIndex>,
    /// Each jurisdiction's first day and horizon (see [`spans::Span`]), one slot a
    /// jurisdiction, each filled on its first quote.
    pub(crate) spans: OnceLock<spans::Spans>,
    /// The table's bounds in time (the latest first day of a state, the earliest
    /// horizon), worked out on the first quote.
    pub(crate) bounds: OnceLock<spans::Bounds>,
}
