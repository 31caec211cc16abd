//! levy for Python: the `levy_tax` package's native module, `levy_tax._levy`.
//!
//! * [`table::Table`]: open a table file (memory-mapped, verified) or the embedded default;
//!   resolve an address; calculate one sale; calculate a whole Arrow table
//!   ([`batch`], over the cores, the GIL released);
//! * [`compile`]: build a table from published files, and compare two;
//! * [`errors`]: the exceptions, and the panic boundary every call goes through.
//!
//! It wraps levy-core (and levy-build for build and diff) through their public APIs only.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod arrow_io;
pub mod batch;
pub mod compile;
pub mod errors;
pub mod results;
pub mod sale;
pub mod table;

use pyo3::prelude::*;

/// Panics inside the panic boundary, for the tests that check that no panic reaches
/// Python (it raises `InternalError`). Not part of the API.
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    errors::guard(|| panic!("{message}"))
}

/// The native module.
#[pymodule]
fn _levy(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<table::Table>()?;
    m.add_class::<table::Line>()?;
    m.add_class::<results::Address>()?;
    m.add_class::<results::Jurisdiction>()?;
    m.add_class::<results::Location>()?;
    m.add_class::<results::JurisdictionTax>()?;
    m.add_class::<results::LineTax>()?;
    m.add_class::<results::Calculation>()?;
    m.add_class::<results::Source>()?;
    m.add_class::<results::TableInfo>()?;
    m.add_class::<results::RegionCoverage>()?;
    m.add_class::<compile::BadRow>()?;
    m.add_class::<compile::Conflict>()?;
    m.add_class::<compile::BuildSummary>()?;
    m.add_class::<compile::JurisdictionChange>()?;
    m.add_class::<compile::RuleChange>()?;
    m.add_class::<compile::ZoneChange>()?;
    m.add_class::<compile::Diff>()?;
    m.add_class::<arrow_io::ArrowBatches>()?;
    m.add_function(wrap_pyfunction!(compile::build, m)?)?;
    m.add_function(wrap_pyfunction!(compile::diff, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TABLE_FORMAT_VERSION", levy_core::table::FORMAT_VERSION)?;
    Ok(())
}
