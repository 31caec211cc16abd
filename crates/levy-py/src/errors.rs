//! levy's exceptions, and the panic boundary every call from Python goes through.
//!
//! ```text
//! LevyError(Exception)
//! ├── TableError              a table file that cannot be opened: missing, damaged, foreign
//! ├── ResolveError(ValueError) an address that resolves nowhere (.error_type names why)
//! │                           (this and CalculationError carry .kind: the front door's kind)
//! ├── CalculationError(ValueError) a sale that cannot be calculated
//! ├── BuildError              a table build that failed
//! └── InternalError           a bug in levy (a Rust panic, caught before it reached Python)
//! ```
//!
//! The exception classes are made at import with `type(name, bases, ns)`, so that the
//! domain errors about bad values are also `ValueError`s, as Python code expects.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// The exception classes, made once.
struct Classes {
    levy: Py<PyType>,
    table: Py<PyType>,
    resolve: Py<PyType>,
    calculation: Py<PyType>,
    build: Py<PyType>,
    internal: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn make(
    py: Python<'_>,
    name: &str,
    bases: Vec<Bound<'_, PyAny>>,
    doc: &str,
) -> PyResult<Py<PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__doc__", doc)?;
    ns.set_item("__module__", "levy_tax")?;
    let class = py
        .get_type::<PyType>()
        .call1((name, PyTuple::new(py, bases)?, ns))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let exception = py.get_type::<PyException>().into_any();
        let value_error = py.get_type::<PyValueError>().into_any();
        let levy = make(
            py,
            "LevyError",
            vec![exception],
            "Every error levy raises (apart from TypeError and ValueError for arguments of \
             the wrong type or value) derives from this.",
        )?;
        let base = || levy.bind(py).clone().into_any();
        Ok(Classes {
            table: make(
                py,
                "TableError",
                vec![base()],
                "A table file could not be opened: missing, unreadable, not a levy table, \
                 written by another format version, or damaged (its content hash or archive \
                 does not verify). The message says what to do: re-copy or rebuild it.",
            )?,
            resolve: make(
                py,
                "ResolveError",
                vec![base(), value_error.clone()],
                "An address could not be resolved to a place the table taxes. error_type \
                 names why, as the tax service interface does (ZIP_STATE_MISMATCH, \
                 MALFORMED_ADDRESS, UNSUPPORTED_LOCATION, INVALID_COUNTRY_CODE, ...).",
            )?,
            calculation: make(
                py,
                "CalculationError",
                vec![base(), value_error],
                "A sale could not be calculated: an unknown product category or tax code, \
                 a negative amount, a quantity out of range, an unknown currency.",
            )?,
            build: make(
                py,
                "BuildError",
                vec![base()],
                "A table build failed: an input could not be read, or (with strict=True) a \
                 row was bad.",
            )?,
            internal: make(
                py,
                "InternalError",
                vec![base()],
                "A bug in levy: the Rust code panicked, and the panic was stopped before it \
                 reached Python. Please report it with the call that raised it.",
            )?,
            levy,
        })
    })
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let c = classes(py)?;
    m.add("LevyError", c.levy.bind(py))?;
    m.add("TableError", c.table.bind(py))?;
    m.add("ResolveError", c.resolve.bind(py))?;
    m.add("CalculationError", c.calculation.bind(py))?;
    m.add("BuildError", c.build.bind(py))?;
    m.add("InternalError", c.internal.bind(py))?;
    Ok(())
}

/// The kinds of levy error.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `TableError`.
    Table,
    /// `CalculationError`.
    Calculation,
    /// `BuildError`.
    Build,
    /// `InternalError`.
    Internal,
}

/// A levy exception of `kind` with `message`.
pub fn err(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match classes(py) {
        Ok(c) => {
            let class = match kind {
                Kind::Table => &c.table,
                Kind::Calculation => &c.calculation,
                Kind::Build => &c.build,
                Kind::Internal => &c.internal,
            };
            match class.bind(py).call1((message.clone(),)) {
                Ok(e) => PyErr::from_value(e),
                Err(e) => e,
            }
        }
        Err(e) => e,
    })
}

/// A `ResolveError` with its interface error type.
pub fn resolve_err(message: impl Into<String>, error_type: &str) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let made = classes(py).and_then(|c| {
            let e = c.resolve.bind(py).call1((message,))?;
            e.setattr("error_type", error_type)?;
            Ok(PyErr::from_value(e))
        });
        made.unwrap_or_else(|e| e)
    })
}

/// The exception of a sale the front door refused: `ResolveError` (its `error_type` the
/// resolution's) for a place or an origin that resolves nowhere, else `CalculationError`;
/// either with `kind`, the front door's stable name (`EXCHANGE_RATE_REQUIRED`, ...).
pub fn sale_err(e: &crate::sale::SaleError) -> PyErr {
    let made = match e.error_type {
        Some(t) => resolve_err(e.message.clone(), t),
        None => err(Kind::Calculation, e.message.clone()),
    };
    Python::attach(|py| {
        let _ = made.value(py).setattr("kind", e.kind.name());
    });
    made
}

/// Runs `f`, turning a panic into `InternalError`: no Rust panic reaches Python.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(err(
            Kind::Internal,
            format!(
                "levy panicked (a bug: please report it with the call that raised this): {}",
                crate::batch::panic_message(p.as_ref())
            ),
        )),
    }
}
