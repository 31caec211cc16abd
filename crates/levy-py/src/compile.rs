//! `levy_tax.build` and `levy_tax.diff`: the table compiler and the comparison of two
//! tables, as `levy build` and `levy diff` run them.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use levy_build::{BuildOptions, CuratedSource, Input, InputKind};
use levy_core::AnyTable;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use crate::errors::{err, guard, Kind};
use crate::table::Table;

/// The input keywords of `build`, each a kind of published file.
const KINDS: [(&str, InputKind); 7] = [
    ("zip5", InputKind::Zip5),
    ("sst_rates", InputKind::SstRates),
    ("sst_boundaries", InputKind::SstBoundaries),
    ("cdtfa", InputKind::Cdtfa),
    ("zip_county", InputKind::ZipCounty),
    ("ip_mmdb", InputKind::IpMmdb),
    ("ip_csv", InputKind::IpCsv),
];

/// A row a build skipped.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct BadRow {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// What is wrong with it.
    pub message: String,
}

#[pymethods]
impl BadRow {
    fn __repr__(&self) -> String {
        format!("BadRow({}:{}: {})", self.file, self.line, self.message)
    }
}

/// A conflict between or within sources that a build resolved.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct Conflict {
    /// `RuleReplaced`, `DuplicateRule`, `ZipReassigned`, `ZipInTwoStates` or
    /// `IpRangeReplaced`.
    pub kind: String,
    /// The file whose row caused it.
    pub file: String,
    /// What happened.
    pub detail: String,
}

#[pymethods]
impl Conflict {
    fn __repr__(&self) -> String {
        format!("Conflict({} {}: {})", self.kind, self.file, self.detail)
    }
}

/// What a build did. `str()` gives the summary `levy build` prints.
#[pyclass(module = "levy_tax", frozen)]
pub struct BuildSummary {
    /// The table file written.
    #[pyo3(get)]
    pub path: PathBuf,
    /// Its size, bytes.
    #[pyo3(get)]
    pub size: u64,
    /// Its content hash, hex.
    #[pyo3(get)]
    pub table_hash: String,
    /// The header's build time, Unix seconds.
    #[pyo3(get)]
    pub build_time: i64,
    /// Rows skipped as bad.
    #[pyo3(get)]
    pub bad_rows: Vec<Py<BadRow>>,
    /// Conflicts between and within sources.
    #[pyo3(get)]
    pub conflicts: Vec<Py<Conflict>>,
    /// ZIP5 rows whose components were repaired.
    #[pyo3(get)]
    pub repaired_rows: u64,
    /// Other things worth knowing.
    #[pyo3(get)]
    pub notes: Vec<String>,
    text: String,
}

#[pymethods]
impl BuildSummary {
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!(
            "BuildSummary(path={:?}, table_hash={:?}, bad_rows={}, conflicts={})",
            self.path.display().to_string(),
            self.table_hash,
            self.bad_rows.len(),
            self.conflicts.len()
        )
    }
}

fn paths(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = v.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    let bad = || PyTypeError::new_err(format!("{key}: expected a path or a list of paths"));
    v.try_iter()
        .map_err(|_| bad())?
        .map(|p| p?.extract::<PathBuf>().map_err(|_| bad()))
        .collect()
}

fn curated_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<CuratedSource>> {
    let Some(v) = v else {
        return Ok(Some(CuratedSource::Embedded));
    };
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(b.is_true().then_some(CuratedSource::Embedded));
    }
    v.extract::<PathBuf>()
        .map(|p| Some(CuratedSource::Dir(p)))
        .map_err(|_| {
            PyTypeError::new_err(
                "curated: True (the rules compiled into levy), False (a minimal taxonomy) or \
                 the path of a folder laid out like levy's data/",
            )
        })
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed
/// (a table file is replaced, never rewritten in place: processes may have it mapped).
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "table".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Builds a table from published files, as `levy build` does, and writes it to `out`
/// (atomically). The inputs are keyword arguments, layered in the order given: `zip5`,
/// `sst_rates`, `sst_boundaries`, `cdtfa`, `zip_county`, `ip_mmdb`, `ip_csv`, each a path
/// (a file, or a folder whose files are read in name order) or a list of paths. The same
/// inputs give the same bytes and hash. Raises `BuildError`.
#[pyfunction]
#[pyo3(signature = (out, *, usps_zips=false, curated=None, strict=false, build_time=None, **inputs))]
pub fn build(
    py: Python<'_>,
    out: PathBuf,
    usps_zips: bool,
    curated: Option<&Bound<'_, PyAny>>,
    strict: bool,
    build_time: Option<i64>,
    inputs: Option<&Bound<'_, PyDict>>,
) -> PyResult<BuildSummary> {
    guard(|| {
        let mut list = Vec::new();
        if let Some(inputs) = inputs {
            // A dict keeps the order the keywords were written in.
            for (k, v) in inputs.iter() {
                let key = k.cast::<PyString>()?.to_string();
                let Some((_, kind)) = KINDS.iter().find(|(n, _)| *n == key) else {
                    let names: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
                    return Err(PyTypeError::new_err(format!(
                        "build: unknown input {key:?}; the inputs are {}",
                        names.join(", ")
                    )));
                };
                for p in paths(&key, &v)? {
                    list.push(Input::new(*kind, p));
                }
            }
        }
        if list.is_empty() && !usps_zips {
            return Err(PyValueError::new_err(
                "build: no inputs; give zip5=..., sst_rates=..., cdtfa=..., ... (or \
                 usps_zips=True)",
            ));
        }
        let opts = BuildOptions {
            inputs: list,
            curated: curated_arg(curated)?,
            strict,
            build_time,
            progress: None,
            usps_zips,
        };
        let built = py.detach(|| -> Result<_, String> {
            let report = levy_build::build(&opts).map_err(|e| e.to_string())?;
            write_atomic(&out, &report.bytes).map_err(|e| format!("{}: {e}", out.display()))?;
            Ok(report)
        });
        let report = built.map_err(|e| err(Kind::Build, e))?;
        let s = &report.summary;
        Ok(BuildSummary {
            path: out.clone(),
            size: report.bytes.len() as u64,
            table_hash: s.table_hash.clone(),
            build_time: s.build_time,
            bad_rows: s
                .bad_rows
                .iter()
                .map(|b| {
                    Py::new(
                        py,
                        BadRow {
                            file: b.file.clone(),
                            line: b.line,
                            message: b.message.clone(),
                        },
                    )
                })
                .collect::<PyResult<_>>()?,
            conflicts: s
                .conflicts
                .iter()
                .map(|c| {
                    Py::new(
                        py,
                        Conflict {
                            kind: format!("{:?}", c.kind),
                            file: c.file.clone(),
                            detail: c.detail.clone(),
                        },
                    )
                })
                .collect::<PyResult<_>>()?,
            repaired_rows: s.repaired_rows,
            notes: s.notes.clone(),
            text: s.render(),
        })
    })
}

/// A jurisdiction added or removed.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct JurisdictionChange {
    /// Code.
    pub code: String,
    /// Name.
    pub name: String,
    /// Level.
    pub level: String,
}

#[pymethods]
impl JurisdictionChange {
    fn __repr__(&self) -> String {
        format!(
            "JurisdictionChange({} {:?} {})",
            self.code, self.name, self.level
        )
    }
}

/// A rule added (`old` None), removed (`new` None) or changed.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct RuleChange {
    /// Jurisdiction code.
    pub jurisdiction: String,
    /// Tax code.
    pub tax_code: String,
    /// Dates in force, `FROM..TO` (`-` for open).
    pub interval: String,
    /// The old rate (and fee), or None.
    pub old: Option<String>,
    /// The new rate (and fee), or None.
    pub new: Option<String>,
}

#[pymethods]
impl RuleChange {
    fn __repr__(&self) -> String {
        format!(
            "RuleChange({} {} {} {:?} -> {:?})",
            self.jurisdiction, self.tax_code, self.interval, self.old, self.new
        )
    }
}

/// A place (ZIP code, street range, IP range) whose jurisdictions changed.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct ZoneChange {
    /// The place.
    pub place: String,
    /// Its jurisdiction codes before.
    pub old: Vec<String>,
    /// And after.
    pub new: Vec<String>,
}

#[pymethods]
impl ZoneChange {
    fn __repr__(&self) -> String {
        format!(
            "ZoneChange({} {:?} -> {:?})",
            self.place, self.old, self.new
        )
    }
}

/// What changed from one table to another. `str()` gives `levy diff`'s text.
#[pyclass(module = "levy_tax", frozen)]
pub struct Diff {
    /// Jurisdictions in the new table only.
    #[pyo3(get)]
    pub jurisdictions_added: Vec<Py<JurisdictionChange>>,
    /// Jurisdictions in the old table only.
    #[pyo3(get)]
    pub jurisdictions_removed: Vec<Py<JurisdictionChange>>,
    /// Rules added, removed or changed.
    #[pyo3(get)]
    pub rules: Vec<Py<RuleChange>>,
    /// ZIP codes whose jurisdictions changed.
    #[pyo3(get)]
    pub zips: Vec<Py<ZoneChange>>,
    /// Street ranges whose jurisdictions changed.
    #[pyo3(get)]
    pub streets: Vec<Py<ZoneChange>>,
    /// IP ranges whose place changed.
    #[pyo3(get)]
    pub ip_ranges: Vec<Py<ZoneChange>>,
    text: String,
    json: String,
}

#[pymethods]
impl Diff {
    /// Whether nothing changed.
    #[getter]
    fn is_empty(&self) -> bool {
        self.jurisdictions_added.is_empty()
            && self.jurisdictions_removed.is_empty()
            && self.rules.is_empty()
            && self.zips.is_empty()
            && self.streets.is_empty()
            && self.ip_ranges.is_empty()
    }
    /// As JSON, the text `levy diff --json` prints.
    fn to_json(&self) -> String {
        self.json.clone()
    }
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!(
            "Diff(jurisdictions +{} -{}, rules {}, zips {}, streets {}, ip_ranges {})",
            self.jurisdictions_added.len(),
            self.jurisdictions_removed.len(),
            self.rules.len(),
            self.zips.len(),
            self.streets.len(),
            self.ip_ranges.len()
        )
    }
}

fn table_arg(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<std::sync::Arc<AnyTable>> {
    if let Ok(t) = v.cast::<Table>() {
        return Ok(std::sync::Arc::clone(&t.get().table));
    }
    let path: PathBuf = v.extract().map_err(|_| {
        PyTypeError::new_err("diff: expected a levy_tax.Table or the path of a table file")
    })?;
    py.detach(|| AnyTable::open_file(&path))
        .map(std::sync::Arc::new)
        .map_err(|e| err(Kind::Table, e.to_string()))
}

/// What changed from `old` to `new` (each a `Table` or a table file's path), as
/// `levy diff` reports it: jurisdictions, rules with their dates, and the places whose
/// jurisdictions changed.
#[pyfunction]
pub fn diff(py: Python<'_>, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<Diff> {
    guard(|| {
        let (old, new) = (table_arg(py, old)?, table_arg(py, new)?);
        let d = py.detach(|| levy_build::diff(&old, &new));
        let changes = |v: &[levy_build::Change]| {
            v.iter()
                .map(|c| {
                    Py::new(
                        py,
                        JurisdictionChange {
                            code: c.code.clone(),
                            name: c.name.clone(),
                            level: c.level.clone(),
                        },
                    )
                })
                .collect::<PyResult<Vec<_>>>()
        };
        let zones = |v: &[levy_build::ZoneChange]| {
            v.iter()
                .map(|z| {
                    Py::new(
                        py,
                        ZoneChange {
                            place: z.place.clone(),
                            old: z.old.clone(),
                            new: z.new.clone(),
                        },
                    )
                })
                .collect::<PyResult<Vec<_>>>()
        };
        Ok(Diff {
            jurisdictions_added: changes(&d.jurisdictions_added)?,
            jurisdictions_removed: changes(&d.jurisdictions_removed)?,
            rules: d
                .rules
                .iter()
                .map(|r| {
                    Py::new(
                        py,
                        RuleChange {
                            jurisdiction: r.jurisdiction.clone(),
                            tax_code: r.tax_code.clone(),
                            interval: r.interval.clone(),
                            old: r.old.clone(),
                            new: r.new.clone(),
                        },
                    )
                })
                .collect::<PyResult<_>>()?,
            zips: zones(&d.zips)?,
            streets: zones(&d.streets)?,
            ip_ranges: zones(&d.ip_ranges)?,
            text: d.to_text(),
            json: d.to_json(),
        })
    })
}
