//! Economic-nexus monitoring: the thresholds of `data/us-nexus.toml` ([`thresholds`]) and
//! a seller's monthly sales measured against them ([`measure`]). The ledger keeps the
//! monthly sales ([`crate::store::NexusMonth`]); the service answers `GET /tax/nexus` from
//! both ([`crate::Service::nexus`]).

pub mod measure;
pub mod thresholds;

pub use measure::{evaluate, Evaluation, Measured, Month, MonthTotal, Span, Standing};
pub use thresholds::{
    Combine, Counts, Period, Test, TestRule, Threshold, ThresholdError, Thresholds,
};
