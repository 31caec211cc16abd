//! The typed results Python sees: frozen objects with read-only attributes, amounts as
//! `decimal.Decimal` in major units (dollars), exact.

use levy_core::{AnyTable, Calculation as CoreCalc, Currency, Decimal, Location as CoreLocation};
use pyo3::prelude::*;

/// A postal address as the table used it (normalized: upper case, USPS abbreviations).
#[pyclass(module = "levy_tax", frozen, get_all, eq)]
#[derive(Clone, Debug, PartialEq)]
pub struct Address {
    /// Street line (`123 MAIN ST`), or empty.
    pub street: String,
    /// City, or empty.
    pub city: String,
    /// State or province (`TN`), or empty.
    pub province: String,
    /// Postal code (`37203`, `37203-1234`), or empty.
    pub postal_code: String,
    /// ISO 3166-1 alpha-2 country.
    pub country: String,
}

#[pymethods]
impl Address {
    fn __repr__(&self) -> String {
        format!(
            "Address(street={:?}, city={:?}, province={:?}, postal_code={:?}, country={:?})",
            self.street, self.city, self.province, self.postal_code, self.country
        )
    }
}

impl Address {
    /// From the core's address.
    pub fn of(a: levy_core::Address) -> Address {
        let street = if a.line2.is_empty() {
            a.line1
        } else {
            format!("{} {}", a.line1, a.line2)
        };
        Address {
            street,
            city: a.city,
            province: a.region,
            postal_code: a.postal_code,
            country: a.country,
        }
    }
}

/// A taxing jurisdiction.
#[pyclass(module = "levy_tax", frozen, get_all, eq)]
#[derive(Clone, Debug, PartialEq)]
pub struct Jurisdiction {
    /// Stable code: FIPS in the US (`47`, `47037`), ISO 3166 elsewhere.
    pub code: String,
    /// Name (`TENNESSEE`, `DAVIDSON`).
    pub name: String,
    /// `COUNTRY`, `STATE`, `PROVINCE`, `COUNTY`, `CITY` or `DISTRICT`.
    pub level: String,
    /// `SALES`, `USE`, `VAT` or `GST`.
    pub tax_type: String,
    /// The authority that levies it.
    pub authority: String,
}

#[pymethods]
impl Jurisdiction {
    fn __repr__(&self) -> String {
        format!(
            "Jurisdiction(code={:?}, name={:?}, level={:?})",
            self.code, self.name, self.level
        )
    }
}

impl Jurisdiction {
    /// Jurisdiction `id` of `table`.
    pub fn of(table: &AnyTable, id: levy_core::JurisdictionId) -> Jurisdiction {
        match table.jurisdiction(id) {
            Some(j) => Jurisdiction {
                code: j.code().into(),
                name: j.name().into(),
                level: j.level().as_str().into(),
                tax_type: j.tax_type().as_str().into(),
                authority: j.authority().into(),
            },
            None => Jurisdiction {
                code: String::new(),
                name: String::new(),
                level: String::new(),
                tax_type: String::new(),
                authority: String::new(),
            },
        }
    }
}

/// A resolved place: which jurisdictions tax it, and how it was found.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct Location {
    /// `EXACT` (a street range matched), `POSTAL_FALLBACK_1` or `POSTAL_ONLY`.
    pub status: String,
    /// `STREET`, `POSTAL_PLUS`, `POSTAL`, `PROVINCE`, `COUNTRY` or `APPROXIMATED`.
    pub precision: String,
    /// `address` or `ip`.
    pub source: String,
    /// `FULL`, `PARTIAL` or `STATE_ONLY`: whether every local tax of the place is known.
    pub coverage: String,
    /// The address as the table used it.
    pub address_used: Py<Address>,
    /// The jurisdictions of the place, in level order.
    pub jurisdictions: Vec<Py<Jurisdiction>>,
}

#[pymethods]
impl Location {
    fn __repr__(&self, py: Python<'_>) -> String {
        let a = self.address_used.get();
        let _ = py;
        format!(
            "Location({} {} {}, {} jurisdictions, precision={}, coverage={})",
            a.postal_code,
            a.province,
            a.country,
            self.jurisdictions.len(),
            self.precision,
            self.coverage
        )
    }
}

impl Location {
    /// From the core's location, resolved on `table`.
    pub fn of(py: Python<'_>, table: &AnyTable, l: &CoreLocation) -> PyResult<Location> {
        let jurisdictions = match l.jset {
            Some(set) => table
                .jset(set)
                .map(|id| Py::new(py, Jurisdiction::of(table, id)))
                .collect::<PyResult<Vec<_>>>()?,
            None => Vec::new(),
        };
        Ok(Location {
            status: l.status.as_str().into(),
            precision: l.precision.as_str().into(),
            source: l.source.as_str().into(),
            coverage: l.coverage.as_str().into(),
            address_used: Py::new(py, Address::of(table.address_used(l)))?,
            jurisdictions,
        })
    }
}

/// The tax of one line in one jurisdiction, unrounded (lines round, entries do not).
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct JurisdictionTax {
    /// Jurisdiction code.
    pub code: String,
    /// Jurisdiction name.
    pub name: String,
    /// Level (`STATE`, `COUNTY`, ...).
    pub level: String,
    /// `SALES`, `USE`, `VAT` or `GST`.
    pub tax_type: String,
    /// The authority that levies it.
    pub authority: String,
    /// The rule's rate type (`RATE_FRAC`, ...).
    pub rate_type: String,
    /// The rule's id in the table.
    pub rule_id: u32,
    /// Rate as a fraction (`0.07` for 7%).
    pub rate: Decimal,
    /// The part of the line taxed here, major units.
    pub taxable_base: Decimal,
    /// Tax due here, unrounded, major units.
    pub tax: Decimal,
    /// A flat fee, major units (usually 0).
    pub fee: Decimal,
    /// What the numbers mean: `RATE_FRAC`, `HOLIDAY`, `CUSTOMER_EXEMPT`, ...
    pub note: String,
    /// `DESTINATION` or `ORIGIN`: whose address brought the jurisdiction in.
    pub sourced_from: String,
}

#[pymethods]
impl JurisdictionTax {
    fn __repr__(&self) -> String {
        format!(
            "JurisdictionTax({} {:?} rate={} tax={})",
            self.level, self.name, self.rate, self.tax
        )
    }
}

/// One line of a calculation.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct LineTax {
    /// The category or tax code the line was given.
    pub product: String,
    /// The table's tax code for it.
    pub tax_code: String,
    /// Quantity.
    pub quantity: u32,
    /// Amount excluding tax, major units.
    pub amount_excluding_tax: Decimal,
    /// Tax, rounded to the currency's minor unit, major units.
    pub tax: Decimal,
    /// Amount including tax, major units.
    pub amount_including_tax: Decimal,
    /// Per jurisdiction.
    pub jurisdictions: Vec<Py<JurisdictionTax>>,
}

#[pymethods]
impl LineTax {
    fn __repr__(&self) -> String {
        format!(
            "LineTax({} x{} {} tax={})",
            self.product, self.quantity, self.amount_excluding_tax, self.tax
        )
    }
}

/// The answer for one sale.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct Calculation {
    /// ISO 4217 currency.
    pub currency: String,
    /// Whether the amounts given included tax.
    pub tax_included: bool,
    /// Per line.
    pub lines: Vec<Py<LineTax>>,
    /// Total tax, major units.
    pub total_tax: Decimal,
    /// Total excluding tax, major units.
    pub total_excluding_tax: Decimal,
    /// Total including tax, major units.
    pub total_including_tax: Decimal,
    /// Total tax / total excluding tax (never a sum of rates); 0 for a zero total.
    pub effective_rate: Decimal,
    /// Why nothing is due, when so: `CUSTOMER_EXEMPT`, `ZERO_RATE`, ...
    pub zero_reason: Option<String>,
    /// `FULL`, `PARTIAL` or `STATE_ONLY`.
    pub coverage: String,
    /// `None` while every input of the table the answer used is within its horizon; else
    /// the `STALE_TABLE` note naming the input past it (`coverage` is then at most
    /// `PARTIAL`).
    pub stale_table: Option<String>,
    /// `DESTINATION`, `ORIGIN`, `MODIFIED_ORIGIN` or `ORIGIN_WITH_USE_TAX`.
    pub sourcing: String,
    /// `LINE` or `INVOICE`.
    pub rounding: String,
    /// BLAKE3 hash of the table that answered, hex.
    pub table_hash: String,
    /// Where the sale was taxed.
    pub location: Py<Location>,
}

#[pymethods]
impl Calculation {
    fn __repr__(&self) -> String {
        format!(
            "Calculation(total_tax={} {}, total_excluding_tax={}, {} lines, coverage={})",
            self.total_tax,
            self.currency,
            self.total_excluding_tax,
            self.lines.len(),
            self.coverage
        )
    }
}

fn major(c: Currency, minor: Decimal) -> Decimal {
    c.to_major(minor).normalize()
}

/// Money with the currency's places (`1.80`, not `1.8`).
fn cents(c: Currency, minor: Decimal) -> Decimal {
    let mut m = c.to_major(minor).normalize();
    if m.scale() < c.minor_units() {
        m.rescale(c.minor_units());
    }
    m
}

impl Calculation {
    /// From the core's calculation on `table` at `location`, its lines sold as `products`.
    pub fn of(
        py: Python<'_>,
        table: &AnyTable,
        location: &CoreLocation,
        calc: &CoreCalc,
        products: &[String],
    ) -> PyResult<Calculation> {
        let c = calc.currency;
        let mut lines = Vec::with_capacity(calc.lines.len());
        for (i, line) in calc.lines.iter().enumerate() {
            let mut js = Vec::with_capacity(line.jurisdictions.len());
            for j in &line.jurisdictions {
                let jur = Jurisdiction::of(table, j.jurisdiction);
                js.push(Py::new(
                    py,
                    JurisdictionTax {
                        code: jur.code,
                        name: jur.name,
                        level: jur.level,
                        tax_type: jur.tax_type,
                        authority: jur.authority,
                        rate_type: table
                            .rule(j.rule)
                            .map(|r| r.rate_type().to_string())
                            .unwrap_or_default(),
                        rule_id: j.rule.0,
                        rate: j.rate.normalize(),
                        taxable_base: major(c, j.taxable_base),
                        tax: major(c, j.tax_due),
                        fee: major(c, j.fee),
                        note: j.note.as_str().into(),
                        sourced_from: j.sourced.as_str().into(),
                    },
                )?);
            }
            lines.push(Py::new(
                py,
                LineTax {
                    product: products.get(i).cloned().unwrap_or_default(),
                    tax_code: table
                        .tax_code_name(line.tax_code)
                        .unwrap_or_default()
                        .to_string(),
                    quantity: line.quantity,
                    amount_excluding_tax: cents(c, line.amount_excluding_tax),
                    tax: cents(c, line.tax),
                    amount_including_tax: cents(c, line.amount_including_tax),
                    jurisdictions: js,
                },
            )?);
        }
        Ok(Calculation {
            currency: c.code().into(),
            tax_included: calc.tax_included,
            lines,
            total_tax: cents(c, calc.total_tax),
            total_excluding_tax: cents(c, calc.total_excluding_tax),
            total_including_tax: cents(c, calc.total_including_tax),
            effective_rate: calc.effective_rate().normalize(),
            zero_reason: calc.zero_reason.map(|z| z.note().as_str().to_string()),
            coverage: calc.coverage.as_str().into(),
            stale_table: calc.stale.map(|s| s.describe(table)),
            sourcing: calc.sourcing.as_str().into(),
            rounding: calc.rounding.as_str().into(),
            table_hash: calc.table_hash_hex(),
            location: Py::new(py, Location::of(py, table, location)?)?,
        })
    }
}

/// One input a table was built from (its manifest entry).
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct Source {
    /// `zip5`, `sst-rates`, `curated`, ...
    pub kind: String,
    /// File name.
    pub name: String,
    /// SHA-256 of the file, hex.
    pub sha256: String,
    /// Rows read and used.
    pub rows_read: u64,
    /// Rows skipped.
    pub rows_skipped: u64,
    /// The period the publisher states (`2025-12`).
    pub period: String,
    /// The last day the input is known to hold what is in force (`datetime.date`): a sale
    /// dated after it that uses its rules is answered at most `PARTIAL` with a
    /// `stale_table` note. `None` for an input that makes no claim that ages (IP ranges).
    pub horizon: Option<Py<pyo3::types::PyDate>>,
}

#[pymethods]
impl Source {
    fn __repr__(&self) -> String {
        format!(
            "Source({} {:?} period={:?} rows_read={})",
            self.kind, self.name, self.period, self.rows_read
        )
    }
}

/// What a table is: its header, its sources and its counts. `str()` gives the text
/// `levy info` prints.
#[pyclass(module = "levy_tax", frozen)]
pub struct TableInfo {
    /// Content hash (BLAKE3), hex; verified when the table was opened.
    #[pyo3(get)]
    pub hash: String,
    /// Table format version.
    #[pyo3(get)]
    pub format_version: u32,
    /// Build time, Unix seconds (from the inputs' periods, or SOURCE_DATE_EPOCH).
    #[pyo3(get)]
    pub build_time: i64,
    /// Size of the table file, bytes.
    #[pyo3(get)]
    pub size: u64,
    /// The inputs, in layering order.
    #[pyo3(get)]
    pub sources: Vec<Py<Source>>,
    /// Jurisdictions.
    #[pyo3(get)]
    pub jurisdictions: usize,
    /// Rate rules.
    #[pyo3(get)]
    pub rules: usize,
    /// Product tax codes.
    #[pyo3(get)]
    pub tax_codes: usize,
    /// Product categories.
    #[pyo3(get)]
    pub categories: usize,
    /// Sales tax holidays.
    #[pyo3(get)]
    pub holidays: usize,
    /// US ZIP codes.
    #[pyo3(get)]
    pub zip_codes: usize,
    /// ZIP+4 ranges.
    #[pyo3(get)]
    pub zip4_ranges: usize,
    /// Street address ranges.
    #[pyo3(get)]
    pub street_ranges: usize,
    /// Regions (states, provinces, countries).
    #[pyo3(get)]
    pub regions: usize,
    /// IPv4 ranges.
    #[pyo3(get)]
    pub ipv4_ranges: usize,
    /// IPv6 ranges.
    #[pyo3(get)]
    pub ipv6_ranges: usize,
    text: String,
}

#[pymethods]
impl TableInfo {
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!(
            "TableInfo(hash={:?}, size={}, sources={}, jurisdictions={}, zip_codes={})",
            self.hash,
            self.size,
            self.sources.len(),
            self.jurisdictions,
            self.zip_codes
        )
    }
}

impl TableInfo {
    /// What `table` is.
    pub fn of(py: Python<'_>, table: &AnyTable) -> PyResult<TableInfo> {
        let h = table.header();
        let d = table.data();
        let sources = d
            .manifest
            .iter()
            .map(|e| {
                Py::new(
                    py,
                    Source {
                        kind: e.kind.as_str().into(),
                        name: e.name.as_str().into(),
                        sha256: e.sha256.as_str().into(),
                        rows_read: e.rows_read.to_native(),
                        rows_skipped: e.rows_skipped.to_native(),
                        period: e.period.as_str().into(),
                        horizon: match e.horizon.to_native() {
                            i32::MAX => None,
                            h => {
                                let (y, m, d) = levy_core::Date(h).ymd();
                                Some(pyo3::types::PyDate::new(py, y, m as u8, d as u8)?.unbind())
                            }
                        },
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(TableInfo {
            hash: h.hash_hex(),
            format_version: h.format_version,
            build_time: h.build_time,
            size: table.bytes().len() as u64,
            sources,
            jurisdictions: table.jurisdiction_count(),
            rules: d.rules.len(),
            tax_codes: d.tax_codes.len(),
            categories: d.categories.len(),
            holidays: d.holidays.len(),
            zip_codes: d.zips.len(),
            zip4_ranges: d.zip4.len(),
            street_ranges: d.streets.len(),
            regions: d.regions.len(),
            ipv4_ranges: d.ipv4.len(),
            ipv6_ranges: d.ipv6.len(),
            text: levy_build::info(table),
        })
    }
}

/// What a table knows of a US state or Canadian province.
#[pyclass(module = "levy_tax", frozen, get_all)]
pub struct RegionCoverage {
    /// `US` or `CA`.
    pub country: String,
    /// `TN`, `ON`, ...
    pub region: String,
    /// Its name.
    pub name: String,
    /// The levels the table's places in the region name (`STATE`, `COUNTY`, `CITY`, ...):
    /// what its sources cover there.
    pub levels: Vec<String>,
    /// What an answer that knows only the region covers: `FULL` where there are no local
    /// taxes, `STATE_ONLY` where there are.
    pub coverage: String,
}

#[pymethods]
impl RegionCoverage {
    fn __repr__(&self) -> String {
        format!(
            "RegionCoverage({}-{} levels={:?} coverage={})",
            self.country, self.region, self.levels, self.coverage
        )
    }
}

impl RegionCoverage {
    /// Every US state's and Canadian province's coverage in `table`.
    pub fn all(py: Python<'_>, table: &AnyTable) -> PyResult<Vec<Py<RegionCoverage>>> {
        use levy_core::Level;
        let levels = [
            Level::Country,
            Level::State,
            Level::Province,
            Level::County,
            Level::City,
            Level::District,
        ];
        let mut out = Vec::new();
        for r in table.data().regions.iter() {
            let country = std::str::from_utf8(&r.country).unwrap_or("??");
            if !matches!(country, "US" | "CA") || r.region.is_empty() {
                continue;
            }
            let bits = r.levels;
            out.push(Py::new(
                py,
                RegionCoverage {
                    country: country.into(),
                    region: r.region.as_str().into(),
                    name: r.name.as_str().into(),
                    levels: levels
                        .iter()
                        .filter(|l| bits & (1 << (**l as u8)) != 0)
                        .map(|l| l.as_str().to_string())
                        .collect(),
                    coverage: match r.coverage {
                        2 => "FULL",
                        1 => "PARTIAL",
                        _ => "STATE_ONLY",
                    }
                    .into(),
                },
            )?);
        }
        Ok(out)
    }
}
