//! Fixtures shared by levy's tests and benches, written once.
//!
//! - [`tennessee`]: the Tennessee table (state 7%, Davidson County 2.25% at ZIP 37203,
//!   Nashville city 2.25% at ZIP 37201) that most tests compute their expected values from.
//! - `keys` and `service` (feature `api`): the inline keys of the two test accounts and
//!   an in-memory `levy_api::Service` over a table.
//! - [`TempDir`] and [`target_temp_dir!`]: scratch directories removed when dropped.
//! - [`shared_data`]: the published data files beside the project, skipped when absent
//!   except under `CI=true`.
//! - [`postgres`]: a real PostgreSQL server for the tests that need one, and the
//!   `LEVY_TEST_LEDGER=postgres` switch that runs the suites on it.
//! - [`sale`]: small constructors for decimals, dates, addresses and sales.
//!
//! The crate is never published; it is a dev-dependency only.

#![warn(missing_docs)]

pub mod postgres;
pub mod sale;
pub mod shared;
mod temp;
pub mod tennessee;

#[cfg(feature = "api")]
pub mod keys;
#[cfg(feature = "api")]
pub mod service;

pub use shared::shared_data;
pub use temp::TempDir;
