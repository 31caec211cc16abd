//! `levy_tax.Table`: a rate table, opened once (memory-mapped and verified), shared by every
//! thread, answering one sale at a time or a whole Arrow table at once.

use std::path::PathBuf;
use std::sync::Arc;

use levy_core::{AnyTable, Date, Decimal, SaleLine};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple, PyType};

use crate::arrow_io::{self, ArrowBatches};
use crate::batch::{self, BatchError, Options, Shapes};
use crate::errors::{err, guard, resolve_err, sale_err, Kind};
use crate::results::{Calculation, Location, RegionCoverage, TableInfo};
use crate::sale::{self, Place, Product, Terms, Worker};

/// A levy rate table.
///
/// Open a file built with `levy build` (or `levy_tax.build`) with `Table.open(path)`, or
/// take the table embedded in levy with `Table.default()`. A file is memory-mapped, not
/// read: its pages are shared by every process that opens it, and its content hash
/// (BLAKE3) and archive are verified before the first answer, so a damaged file raises
/// `TableError` and never answers. A table is immutable and safe to share between threads.
#[pyclass(module = "levy_tax", frozen)]
pub struct Table {
    pub(crate) table: Arc<AnyTable>,
    path: Option<PathBuf>,
}

fn table_err(e: levy_core::TableError) -> PyErr {
    err(Kind::Table, e.to_string())
}

/// The day of a Python argument: `None` for today (UTC), a `datetime.date`, a
/// `datetime.datetime` (its UTC day; naive ones are taken as UTC) or text `YYYY-MM-DD`.
fn date_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Date> {
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(sale::today());
    };
    if let Ok(s) = v.cast::<PyString>() {
        return sale::parse_date(s.to_str()?).map_err(PyValueError::new_err);
    }
    let py = v.py();
    static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static DATE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let datetime = DATETIME.import(py, "datetime", "datetime")?;
    let date = DATE.import(py, "datetime", "date")?;
    let day = if v.is_instance(datetime)? {
        let v = if v.getattr("tzinfo")?.is_none() {
            v.clone()
        } else {
            let utc = py.import("datetime")?.getattr("timezone")?.getattr("utc")?;
            v.call_method1("astimezone", (utc,))?
        };
        v.call_method0("date")?
    } else if v.is_instance(date)? {
        v.clone()
    } else {
        return Err(PyTypeError::new_err(format!(
            "date: expected a datetime.date, a datetime.datetime or text YYYY-MM-DD, got {}",
            v.get_type().name()?
        )));
    };
    let text: String = day.call_method0("isoformat")?.extract()?;
    sale::parse_date(&text).map_err(PyValueError::new_err)
}

/// The `default_date` argument of `calculate_batch`: `None` for none (a row without a day
/// is then an error), `"today"` for today's UTC day, or a day as [`date_arg`] takes it.
fn default_date_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Date>> {
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(s) = v.cast::<PyString>() {
        if s.to_str()?.trim().eq_ignore_ascii_case("today") {
            return Ok(Some(sale::today()));
        }
    }
    date_arg(Some(v)).map(Some).map_err(|e| {
        let py = v.py();
        let message = format!("default_date: {}", e.value(py));
        if e.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(message)
        } else {
            PyValueError::new_err(message)
        }
    })
}

/// An amount argument in minor units: an `int` is minor units (cents); a
/// `decimal.Decimal` or text is major units (dollars). Floats are refused.
fn amount_arg(v: &Bound<'_, PyAny>, currency: levy_core::Currency) -> PyResult<Decimal> {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "amount {}: floats cannot hold cents exactly; pass a decimal.Decimal or text for \
             major units (Decimal(\"19.99\")), or an int for minor units (1999)",
            v.repr()?
        )));
    }
    let bad = |e: String| err(Kind::Calculation, e);
    if v.is_instance_of::<PyInt>() {
        let minor: i64 = v.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "amount {}: too large",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        if minor < 0 {
            return Err(bad(format!(
                "amount {minor} is negative: amounts must not be negative"
            )));
        }
        return Ok(Decimal::from(minor));
    }
    let major: Decimal = if let Ok(s) = v.cast::<PyString>() {
        s.to_str()?.trim().parse().map_err(|_| {
            PyValueError::new_err(format!(
                "amount {:?} is not a decimal number",
                s.to_string()
            ))
        })?
    } else {
        v.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "amount: expected a decimal.Decimal, text or an int, got {}",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?
    };
    sale::major_to_minor(major, currency).map_err(bad)
}

/// A non-negative decimal argument (an exchange rate, the seller's sales): a
/// `decimal.Decimal`, text or an `int`; `None` for none. Floats are refused.
fn decimal_arg(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Decimal>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "{what}: floats are not exact; pass a decimal.Decimal or text (\"0.0067\")"
        )));
    }
    let d: Decimal = if let Ok(s) = v.cast::<PyString>() {
        s.to_str()?.trim().parse().map_err(|_| {
            PyValueError::new_err(format!(
                "{what} {:?} is not a decimal number",
                s.to_string()
            ))
        })?
    } else {
        v.extract()
            .map_err(|_| PyTypeError::new_err(format!("{what}: expected a decimal.Decimal")))?
    };
    if d.is_sign_negative() {
        return Err(PyValueError::new_err(format!(
            "{what} {d} must not be negative"
        )));
    }
    Ok(Some(d))
}

/// One line, read from what Python gave: a `Line`, or a `levy calc --line` string.
struct LineArg {
    amount: Decimal,
    quantity: u32,
    product: (bool, String),
}

fn line_arg(v: &Bound<'_, PyAny>, currency: levy_core::Currency) -> PyResult<LineArg> {
    let bad = |e: String| err(Kind::Calculation, e);
    if let Ok(s) = v.cast::<PyString>() {
        let spec = s.to_str()?;
        let (major, quantity, category) =
            sale::parse_line_spec(spec).map_err(PyValueError::new_err)?;
        return Ok(LineArg {
            amount: sale::major_to_minor(major, currency).map_err(bad)?,
            quantity: sale::quantity(quantity as i64).map_err(bad)?,
            product: (true, category.to_ascii_uppercase()),
        });
    }
    if let Ok(line) = v.cast::<Line>() {
        let line = line.get();
        let amount = amount_arg(line.amount.bind(v.py()), currency)?;
        let product = match (&line.category, &line.tax_code) {
            (Some(c), _) => (true, c.clone()),
            (None, Some(t)) => (false, t.clone()),
            (None, None) => (true, "GENERAL_MERCHANDISE".to_string()),
        };
        return Ok(LineArg {
            amount,
            quantity: sale::quantity(line.quantity).map_err(bad)?,
            product,
        });
    }
    Err(PyTypeError::new_err(format!(
        "a line is a levy_tax.Line or text such as \"19.99x2:CLOTHING\", got {}",
        v.get_type().name()?
    )))
}

/// One line of a sale: an amount, a quantity, and what is sold.
///
/// `amount` is the line's total: a `decimal.Decimal` or text in major units
/// (`Decimal("19.99")`), or an `int` in minor units (`1999`). Give a `category` of the
/// interface (`CLOTHING`, the default `GENERAL_MERCHANDISE`) or an exact `tax_code`
/// (`CLOTHING_GENERAL`), not both.
#[pyclass(module = "levy_tax", frozen)]
pub struct Line {
    amount: Py<PyAny>,
    quantity: i64,
    category: Option<String>,
    tax_code: Option<String>,
}

#[pymethods]
impl Line {
    #[new]
    #[pyo3(signature = (amount, quantity=1, category=None, *, tax_code=None))]
    fn new(
        amount: Py<PyAny>,
        quantity: i64,
        category: Option<String>,
        tax_code: Option<String>,
    ) -> PyResult<Line> {
        if category.is_some() && tax_code.is_some() {
            return Err(PyValueError::new_err(
                "Line: give a category or a tax_code, not both",
            ));
        }
        Ok(Line {
            amount,
            quantity,
            category: category.map(|c| c.trim().to_ascii_uppercase()),
            tax_code: tax_code.map(|t| t.trim().to_string()),
        })
    }

    /// The amount as given.
    #[getter]
    fn amount(&self, py: Python<'_>) -> Py<PyAny> {
        self.amount.clone_ref(py)
    }
    /// Quantity.
    #[getter]
    fn quantity(&self) -> i64 {
        self.quantity
    }
    /// The category, when given.
    #[getter]
    fn category(&self) -> Option<String> {
        self.category.clone()
    }
    /// The tax code, when given.
    #[getter]
    fn tax_code(&self) -> Option<String> {
        self.tax_code.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = |s: &str| PyString::new(py, s).repr().map(|r| r.to_string());
        let what = match (&self.category, &self.tax_code) {
            (_, Some(t)) => format!(", tax_code={}", r(t)?),
            (Some(c), None) => format!(", category={}", r(c)?),
            (None, None) => String::new(),
        };
        Ok(format!(
            "Line({}, quantity={}{what})",
            self.amount.bind(py).repr()?,
            self.quantity
        ))
    }
}

fn text(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}

impl Table {
    fn new(table: AnyTable, path: Option<PathBuf>) -> Table {
        Table {
            table: Arc::new(table),
            path,
        }
    }
}

fn batch_err(e: BatchError) -> PyErr {
    match e {
        BatchError::Type(m) => PyTypeError::new_err(m),
        BatchError::Value(m) => PyValueError::new_err(m),
        BatchError::Internal(m) => err(
            Kind::Internal,
            format!("levy failed inside calculate_batch (a bug: please report it): {m}"),
        ),
    }
}

fn keep_arg(keep: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(k) = keep.filter(|k| !k.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(s) = k.cast::<PyString>() {
        return Ok(vec![s.to_string()]);
    }
    k.try_iter()?
        .map(|n| {
            n?.extract::<String>()
                .map_err(|_| PyTypeError::new_err("keep: expected column names (text)"))
        })
        .collect()
}

fn pyarrow_table<'py>(py: Python<'py>, batches: ArrowBatches) -> PyResult<Bound<'py, PyAny>> {
    static TABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let make = TABLE
        .get_or_try_init(py, || {
            py.import("pyarrow")
                .and_then(|pa| pa.getattr("table"))
                .map(Bound::unbind)
                .map_err(|_| {
                    pyo3::exceptions::PyImportError::new_err(
                        "calculate_batch returns pyarrow Tables: pip install pyarrow",
                    )
                })
        })?
        .bind(py);
    make.call1((Bound::new(py, batches)?,))
}

fn schema_of(obj: &Bound<'_, PyAny>) -> PyResult<arrow_schema::Schema> {
    use arrow_array::ffi::FFI_ArrowSchema;
    let capsule = if obj.hasattr("__arrow_c_schema__")? {
        obj.call_method0("__arrow_c_schema__")?
    } else {
        return Err(PyTypeError::new_err(
            "schema: expected an Arrow schema (an object with __arrow_c_schema__, such as a \
             pyarrow.Schema)",
        ));
    };
    let capsule = capsule
        .cast::<pyo3::types::PyCapsule>()
        .map_err(|_| PyTypeError::new_err("__arrow_c_schema__ returned no capsule"))?;
    let ptr = capsule.pointer_checked(Some(c"arrow_schema"))?;
    // SAFETY: a capsule named "arrow_schema" holds an ArrowSchema (the interface's
    // contract); it is only borrowed here, the capsule keeps owning it.
    let ffi = unsafe { &*ptr.as_ptr().cast::<FFI_ArrowSchema>() };
    arrow_schema::Schema::try_from(ffi)
        .map_err(|e| PyValueError::new_err(format!("reading the Arrow schema: {e}")))
}

#[pymethods]
impl Table {
    /// Opens a table file: memory-mapped, its header checked, its content hash verified
    /// over every byte and its archive validated. Raises `TableError` (saying what to do)
    /// for a missing, foreign, outdated or damaged file.
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Table> {
        guard(|| {
            // SAFETY: the documented contract of `Table.open` (the package's README): table
            // files are replaced by rename, never rewritten in place, as `levy build` and
            // `levy_tax.build` write them.
            let opened = py.detach(|| unsafe { AnyTable::open_file_mapped(&path) });
            let table = opened.map_err(table_err)?;
            Ok(Table::new(table, Some(path)))
        })
    }

    /// The table embedded in levy: every US state, DC and Puerto Rico at state level with
    /// the curated taxability rules, California's local rates, Georgia's, Minnesota's and
    /// Wisconsin's county rates, Canada, and VAT and GST countries. Elsewhere its answers
    /// say `STATE_ONLY`: build a table with local rates for those.
    #[staticmethod]
    fn default() -> PyResult<Table> {
        guard(|| Ok(Table::new(levy_data::open_default(), None)))
    }

    /// The table's content hash (BLAKE3, hex): every calculation names it.
    #[getter]
    fn hash(&self) -> String {
        self.table.header().hash_hex()
    }

    /// The file the table was opened from; `None` for the embedded default.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// The table's header, sources and counts (`str()` of it is `levy info`'s text).
    fn info(&self, py: Python<'_>) -> PyResult<TableInfo> {
        guard(|| TableInfo::of(py, &self.table))
    }

    /// For each US state and Canadian province: the levels the table's places name, and
    /// what an answer knowing only the region covers.
    fn coverage(&self, py: Python<'_>) -> PyResult<Vec<Py<RegionCoverage>>> {
        guard(|| RegionCoverage::all(py, &self.table))
    }

    /// The product categories the table knows (`CLOTHING`, `GROCERIES`, ...), sorted.
    fn categories(&self) -> Vec<String> {
        self.table.category_names().map(str::to_string).collect()
    }

    /// The product tax codes the table knows, sorted.
    fn tax_codes(&self) -> Vec<String> {
        self.table
            .data()
            .tax_codes
            .iter()
            .map(|c| c.name.as_str().to_string())
            .collect()
    }

    /// Resolves an address to the place that taxes it, on `date` (today when `None`).
    /// Raises `ResolveError` (with `.error_type`) when it resolves nowhere.
    #[pyo3(signature = (postal_code=None, province=None, country="US", *, city=None, street=None, date=None))]
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &self,
        py: Python<'_>,
        postal_code: Option<String>,
        province: Option<String>,
        country: &str,
        city: Option<String>,
        street: Option<String>,
        date: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Location> {
        guard(|| {
            let date = date_arg(date)?;
            let place = Place {
                street: text(&street),
                city: text(&city),
                province: text(&province),
                postal_code: text(&postal_code),
                country,
            };
            let mut address = levy_core::Address::default();
            place.fill(&mut address);
            let location = self
                .table
                .resolve(&address, date)
                .map_err(|e| resolve_err(format!("{e} ({})", e.error_type()), e.error_type()))?;
            Location::of(py, &self.table, &location)
        })
    }

    /// Calculates the tax of one sale of `lines` (each a `Line`, or text as `levy calc
    /// --line` takes it: `"19.99x2:CLOTHING"`), as `levy calc` does with the same
    /// arguments. Amounts in the answer are `decimal.Decimal`s in major units.
    #[pyo3(signature = (
        lines, *, postal_code=None, province=None, country="US", city=None, street=None,
        date=None, currency="USD", tax_included=false, exempt=false, rounding="line",
        origin_postal_code=None, origin_province=None, origin_country=None,
        origin_city=None, origin_street=None, ip=None, ip_mode="strict", delivery=false,
        seller_sales=None, exchange_rate=None, strict=false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn calculate(
        &self,
        py: Python<'_>,
        lines: &Bound<'_, PyAny>,
        postal_code: Option<String>,
        province: Option<String>,
        country: &str,
        city: Option<String>,
        street: Option<String>,
        date: Option<&Bound<'_, PyAny>>,
        currency: &str,
        tax_included: bool,
        exempt: bool,
        rounding: &str,
        origin_postal_code: Option<String>,
        origin_province: Option<String>,
        origin_country: Option<String>,
        origin_city: Option<String>,
        origin_street: Option<String>,
        ip: Option<String>,
        ip_mode: &str,
        delivery: bool,
        seller_sales: Option<&Bound<'_, PyAny>>,
        exchange_rate: Option<&Bound<'_, PyAny>>,
        strict: bool,
    ) -> PyResult<Calculation> {
        guard(|| {
            let bad = |e: String| err(Kind::Calculation, e);
            let currency = sale::currency(currency).map_err(bad)?;
            let date = date_arg(date)?;
            let lines: Vec<LineArg> =
                if lines.is_instance_of::<PyString>() || lines.cast::<Line>().is_ok() {
                    vec![line_arg(lines, currency)?]
                } else {
                    lines
                        .try_iter()?
                        .map(|l| line_arg(&l?, currency))
                        .collect::<PyResult<_>>()?
                };
            if lines.is_empty() {
                return Err(PyValueError::new_err("calculate: give at least one line"));
            }
            let mut worker = Worker::new(&self.table);
            let mut products = Vec::with_capacity(lines.len());
            for l in &lines {
                let product = match l.product.0 {
                    true => Product::Category(&l.product.1),
                    false => Product::TaxCode(&l.product.1),
                };
                let tax_code = product.lookup(&self.table).map_err(bad)?;
                worker.lines().push(SaleLine {
                    amount: l.amount,
                    quantity: l.quantity,
                    per_unit: false,
                    tax_code,
                });
                products.push(l.product.1.clone());
            }
            let from = Place {
                street: text(&origin_street),
                city: text(&origin_city),
                province: text(&origin_province),
                postal_code: text(&origin_postal_code),
                country: "",
            };
            let terms = Terms {
                to: Place {
                    street: text(&street),
                    city: text(&city),
                    province: text(&province),
                    postal_code: text(&postal_code),
                    country,
                },
                ip: text(&ip),
                ip_mode: sale::ip_mode(ip_mode).map_err(PyValueError::new_err)?,
                from: from.has_address().then_some(from),
                origin_country: text(&origin_country),
                date,
                currency,
                exchange_rate: decimal_arg(exchange_rate, "exchange_rate")?,
                tax_included,
                exempt,
                rounding: sale::rounding(rounding).map_err(PyValueError::new_err)?,
                delivery,
                seller_sales: decimal_arg(seller_sales, "seller_sales")?,
            };
            worker.calculate(&terms).map_err(|e| sale_err(&e))?;
            let calc = worker
                .calc()
                .ok_or_else(|| err(Kind::Internal, "no calculation"))?;
            if strict && calc.coverage != levy_core::Coverage::Full {
                let name = batch::output::COVERAGE[calc.coverage as u8 as usize];
                let e = err(
                    Kind::Calculation,
                    format!(
                        "coverage {name}: the table does not hold every local tax of this \
                         place on this day, so the tax may be short (strict=True refuses it)"
                    ),
                );
                let _ = e.value(py).setattr("kind", batch::input::COVERAGE_NOT_FULL);
                return Err(e);
            }
            Calculation::of(py, &self.table, &worker.location, calc, &products)
        })
    }

    /// Calculates every row of `data` (a pyarrow Table or RecordBatch(Reader), a Polars
    /// DataFrame, a DuckDB relation, a pandas DataFrame: anything with the Arrow PyCapsule
    /// interface), a one-line sale a row, and returns a pyarrow Table row for row, or with
    /// `jurisdictions=True` a pair (sales, jurisdictions). See the package's README for
    /// the columns. The GIL is released; the rows are spread over `threads` threads (one
    /// per core when `None`). A row without a day is an error unless `default_date` is
    /// given (`"today"` for today's UTC day); with `strict=True` a row whose coverage is
    /// short of `FULL` is an error (`COVERAGE_NOT_FULL`). A negative amount is a refund:
    /// the negation of the sale of its absolute amount.
    #[pyo3(signature = (data, *, jurisdictions=false, keep=None, threads=None, strict=false, default_date=None))]
    #[allow(clippy::too_many_arguments)]
    fn calculate_batch<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        jurisdictions: bool,
        keep: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
        strict: bool,
        default_date: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let threads = match threads {
                None => 0,
                Some(n) if n >= 1 => n as usize,
                Some(n) => {
                    return Err(PyValueError::new_err(format!(
                        "threads={n}: give 1 or more, or None for one per core"
                    )))
                }
            };
            let opts = Options {
                jurisdictions,
                keep: keep_arg(keep)?,
                threads,
                strict,
                default_date: default_date_arg(default_date)?,
            };
            let input = arrow_io::take(data)?;
            let table = Arc::clone(&self.table);
            let done = py.detach(move || -> Result<_, BatchError> {
                let input = input
                    .read_all()
                    .map_err(|e| BatchError::Value(format!("reading the input: {e}")))?;
                let shapes = Shapes::new(&input.schema, &opts.keep, opts.default_date.is_some())?;
                let out = batch::run(&table, &shapes, &input.batches, &opts)?;
                Ok((shapes, out))
            });
            let (shapes, out) = done.map_err(batch_err)?;
            let sales = pyarrow_table(py, ArrowBatches::new(shapes.sales.clone(), out.sales))?;
            if !jurisdictions {
                return Ok(sales);
            }
            let jur = pyarrow_table(
                py,
                ArrowBatches::new(shapes.jurisdictions.clone(), out.jurisdictions),
            )?;
            Ok(PyTuple::new(py, [sales, jur])?.into_any())
        })
    }

    /// The schema `calculate_batch` returns for input of `schema` (a pyarrow.Schema, or
    /// anything with `__arrow_c_schema__`): a pyarrow.Schema, or with
    /// `jurisdictions=True` a pair. For engines that need it before running, such as
    /// Spark's `mapInArrow`. Raises as `calculate_batch` would for a schema it cannot read.
    /// `default_date` as `calculate_batch` takes it (without it, `schema` needs a `date`).
    #[pyo3(signature = (schema, *, jurisdictions=false, keep=None, default_date=None))]
    fn batch_schema<'py>(
        &self,
        py: Python<'py>,
        schema: &Bound<'py, PyAny>,
        jurisdictions: bool,
        keep: Option<&Bound<'py, PyAny>>,
        default_date: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let schema = schema_of(schema)?;
            let default_date = default_date_arg(default_date)?.is_some();
            let shapes = Shapes::new(&schema, &keep_arg(keep)?, default_date).map_err(batch_err)?;
            let pa = py.import("pyarrow")?;
            let as_py = |s: &arrow_schema::SchemaRef| {
                pa.call_method1(
                    "schema",
                    (Bound::new(py, ArrowBatches::new(s.clone(), vec![]))?,),
                )
            };
            let sales = as_py(&shapes.sales)?;
            if !jurisdictions {
                return Ok(sales);
            }
            Ok(PyTuple::new(py, [sales, as_py(&shapes.jurisdictions)?])?.into_any())
        })
    }

    /// The input column names `calculate_batch` reads.
    #[staticmethod]
    fn batch_columns() -> Vec<&'static str> {
        batch::input::column_names().collect()
    }

    /// Pickles as the path it was opened from (each process maps the file itself), or as
    /// the embedded default.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let class = slf.get_type();
        match &slf.get().path {
            Some(p) => PyTuple::new(
                py,
                [
                    class.getattr("open")?,
                    PyTuple::new(py, [p.clone()])?.into_any(),
                ],
            ),
            None => PyTuple::new(
                py,
                [class.getattr("default")?, PyTuple::empty(py).into_any()],
            ),
        }
    }

    fn __repr__(&self) -> String {
        match &self.path {
            Some(p) => format!(
                "Table.open({:?}) hash={}",
                p.display().to_string(),
                self.hash()
            ),
            None => format!("Table.default() hash={}", self.hash()),
        }
    }
}
