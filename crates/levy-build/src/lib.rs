//! levy-build: compiles published rate files, boundary files and curated rules into one
//! `.levy` table.
//!
//! * [`parse`]: readers for each published format, over any reader, never panicking;
//! * [`local_rates`]: the reader of the local rates files (`data/local/us/<ST>.toml`);
//! * [`fees`]: the per-order fees on retail deliveries (`data/us-fees.toml`);
//! * [`build`]: layers the inputs over the curated base into table bytes and a [`Summary`];
//! * [`info`] and [`diff`]: what a table holds, and what changed between two tables.
//!
//! The `levy build`, `levy info` and `levy diff` commands (flags, writing the table file)
//! are in the `levy` binary, `crates/levy-cli`.

#![warn(missing_docs)]

pub mod bench;
pub mod ca_base;
mod compile;
pub mod curated;
mod curated_glue;
mod embedded;
mod error;
pub mod fees;
pub mod horizon;
mod inspect;
pub mod local_rates;
pub mod local_taxes;
mod matrix;
pub mod mmdb;
pub mod nearest_zip;
pub mod parse;
pub mod rounding;
pub mod sourcing;
pub mod states;
pub mod update;

pub use compile::{
    add_minimal_taxonomy, build, expand, period_of, BadRow, BuildError, BuildOptions, BuildReport,
    Conflict, ConflictKind, Input, InputKind, Progress, Summary, GENERAL, GROCERIES,
};
pub use curated::CuratedSource;
pub use inspect::{diff, info, Change, Diff, RuleChange, TaxabilityChange, ZoneChange};
