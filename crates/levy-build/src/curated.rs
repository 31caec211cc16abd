//! The curated rules that levy ships in `data/`: the taxonomy, US state rates, US
//! taxability rules, sales tax holidays, Canada, VAT and GST countries, and country-level IP
//! ranges.
//!
//! The formats are described in `data/README.md` and at the top of each file. [`load`] reads
//! and checks every file; [`Curated::apply_base`] then adds the taxonomy, the base
//! jurisdictions, rates, regions and holidays to a [`TableBuilder`], other sources add their
//! own jurisdictions and ZIP codes, and [`Curated::apply_rules`] finally writes the
//! product-specific rules over every jurisdiction in the builder.
//!
//! Every error names the file and the line (for syntax errors) or the key (for values that
//! parse but make no sense), and nothing here panics on bad input.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use levy_core::model::SourceEntry;
use levy_core::{
    BuildError, Date, Decimal, HolidaySpec, IpLocationSpec, JurisdictionId, JurisdictionSpec,
    Level, RuleSpec, SaleCondition, TableBuilder, TaxType,
};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The files [`load`] reads, in the order they are applied.
pub const FILES: [&str; 6] = [
    "taxonomy.toml",
    "us-states.toml",
    "us-rules.toml",
    "holidays.toml",
    "countries.toml",
    "canada.toml",
];

/// The root of ordinary goods; every general rate is written on it.
pub const GENERAL: &str = "GENERAL_MERCHANDISE";

/// The largest amount in dollars a curated file may write (bands, caps, fees).
const MAX_AMOUNT: i64 = 1_000_000_000_000;

/// Why the curated data could not be read or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CuratedError {
    /// A file could not be read.
    #[error("{file}: cannot read: {message}")]
    Io {
        /// The file.
        file: String,
        /// What the system said.
        message: String,
    },
    /// A file is not valid TOML or does not have the expected shape; the message gives
    /// the line and column.
    #[error("{file}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// What is wrong, with line and column.
        message: String,
    },
    /// A value parses but is not acceptable.
    #[error("{file}: {key}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The key, for example `state[TN].rates[0].rate`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The table builder refused an item.
    #[error("{file}: {key}: {source}")]
    Build {
        /// The file.
        file: String,
        /// The key of the item.
        key: String,
        /// The builder's reason.
        source: BuildError,
    },
}

/// What applying the curated data added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CuratedStats {
    /// Tax codes added.
    pub tax_codes: usize,
    /// Product categories added.
    pub categories: usize,
    /// Jurisdictions added.
    pub jurisdictions: usize,
    /// Rules added.
    pub rules: usize,
    /// Rules removed because a curated rule replaced them.
    pub rules_replaced: usize,
    /// Regions (states, provinces, countries) added.
    pub regions: usize,
    /// Postal prefixes added.
    pub postal_prefixes: usize,
    /// Sales tax holidays added.
    pub holidays: usize,
    /// Jurisdiction sets that gained a state-wide add-on jurisdiction.
    pub sets_extended: usize,
    /// IP ranges added.
    pub ip_ranges: usize,
    /// Cells of the taxability matrix recorded.
    pub taxability_cells: usize,
}

// ---------------------------------------------------------------------------------------
// File shapes
// ---------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaxonomyFile {
    #[serde(default)]
    code: Vec<CodeRow>,
    #[serde(default)]
    categories: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeRow {
    name: String,
    parent: Option<String>,
    description: String,
    /// The Streamlined Library of Definitions term the code implements.
    #[serde(default)]
    sst: String,
    /// Whether every place's matrix row must address the code (default: it has a parent).
    matrix: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatesFile {
    #[serde(default)]
    state: Vec<StateRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateRow {
    fips: String,
    abbr: String,
    name: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    rates: Vec<ChainRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChainRow {
    rate: String,
    from: Option<toml::value::Datetime>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    jurisdiction: Vec<ExtraJurisdictionRow>,
    #[serde(default)]
    rule: Vec<RuleRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraJurisdictionRow {
    code: String,
    state: String,
    name: String,
    authority: String,
    #[serde(default)]
    in_every_set: bool,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    rules: Vec<ExtraRuleRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraRuleRow {
    code: String,
    from: Option<toml::value::Datetime>,
    to: Option<toml::value::Datetime>,
    parts: Vec<PartRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleRow {
    states: Vec<String>,
    #[serde(default)]
    except: Vec<String>,
    code: String,
    applies_to: Vec<String>,
    from: Option<toml::value::Datetime>,
    to: Option<toml::value::Datetime>,
    label: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    parts: Vec<PartRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartRow {
    rate: String,
    scale: Option<String>,
    /// A delivery charge's part: taxed in proportion to the sale's taxable goods.
    #[serde(default)]
    proportional: bool,
    band: Option<[String; 2]>,
    units: Option<[String; 2]>,
    fee: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidaysFile {
    #[serde(default)]
    holiday: Vec<HolidayRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidayRow {
    name: String,
    state: String,
    from: toml::value::Datetime,
    to: toml::value::Datetime,
    include_local: bool,
    /// The codes of a holiday with one cap; `items` instead for one cap per group.
    #[serde(default)]
    codes: Vec<String>,
    max_unit: Option<String>,
    #[serde(default)]
    cap_inclusive: bool,
    /// Codes under a covered code that the holiday does not cover (every item group).
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    items: Vec<HolidayItemRow>,
    basis: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

/// One group of a holiday's items with its own per-item cap.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidayItemRow {
    codes: Vec<String>,
    max_unit: Option<String>,
    #[serde(default)]
    cap_inclusive: bool,
    #[serde(default)]
    exclude: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountriesFile {
    #[serde(default)]
    country: Vec<CountryRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryRow {
    code: String,
    name: String,
    tax_type: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    eu: bool,
    rates: Vec<CountryRatesRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryRatesRow {
    codes: Option<Vec<String>>,
    chain: Vec<ChainRow>,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CanadaFile {
    federal: FederalRow,
    #[serde(default)]
    province: Vec<ProvinceRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FederalRow {
    code: String,
    name: String,
    tax_name: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    chain: Vec<ChainRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProvinceRow {
    code: String,
    name: String,
    federal: bool,
    tax_name: Option<String>,
    tax_type: Option<String>,
    authority: Option<String>,
    source: Option<String>,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    chain: Vec<ChainRow>,
    #[serde(default)]
    postal_prefixes: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Checked model
// ---------------------------------------------------------------------------------------

/// A rate in force over an interval.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Period {
    from: Date,
    to: Date,
    rate: Decimal,
}

/// A tax code.
#[derive(Clone, Debug)]
struct Code {
    name: String,
    parent: Option<String>,
    description: String,
    /// The Streamlined Library of Definitions term it implements; empty for none.
    sst: String,
    /// Whether every place's matrix row must address it.
    matrix: bool,
}

/// A US state.
#[derive(Clone, Debug)]
struct State {
    fips: String,
    abbr: String,
    name: String,
    authority: String,
    periods: Vec<Period>,
}

/// The rate of a part: the jurisdiction's general rate, or a fixed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartRate {
    General,
    Fixed(Decimal),
}

/// One rule line of a curated rule.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub(crate) rate: PartRate,
    pub(crate) scale: Decimal,
    pub(crate) proportional: bool,
    pub(crate) band: (Decimal, Option<Decimal>),
    pub(crate) units: (Decimal, Option<Decimal>),
    pub(crate) fee: Decimal,
}

/// Which jurisdictions of a state a rule is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    State,
    StateAll,
    Local,
    District,
    Code(String),
}

/// A product-specific rule over some jurisdictions.
#[derive(Clone, Debug)]
struct Modifier {
    states: Vec<String>,
    code: String,
    scopes: Vec<Scope>,
    from: Date,
    to: Date,
    /// The rules' rate type; empty to keep the general rules' own (a `taxable` matrix cell).
    label: String,
    parts: Vec<Part>,
    /// A per-sale threshold: the parts apply at or below it (the group, the limit), and
    /// above it the code keeps what it has without this modifier.
    sale: Option<(u32, Decimal)>,
    /// Where it was written, for messages: `us-rules.toml rule[3]`, a matrix cell.
    origin: String,
    /// Whether it comes from the taxability matrix.
    matrix: bool,
}

/// An extra state-level jurisdiction (Tennessee's single article tax).
#[derive(Clone, Debug)]
struct Extra {
    key: String,
    code: String,
    state: String,
    name: String,
    authority: String,
    in_every_set: bool,
    rules: Vec<(String, Date, Date, Vec<Part>)>,
}

/// A country taxed at country level.
#[derive(Clone, Debug)]
struct Country {
    code: String,
    name: String,
    tax_type: TaxType,
    authority: String,
    /// (tax codes, periods), standard rate first.
    rates: Vec<(Vec<String>, Vec<Period>)>,
}

/// A Canadian province or territory.
#[derive(Clone, Debug)]
struct Province {
    code: String,
    name: String,
    federal: bool,
    tax: Option<(String, TaxType, String, Vec<Period>)>,
    postal_prefixes: Vec<String>,
}

/// Canada.
#[derive(Clone, Debug)]
struct Canada {
    code: String,
    name: String,
    tax_name: String,
    authority: String,
    periods: Vec<Period>,
    provinces: Vec<Province>,
}

/// One file read.
#[derive(Clone, Debug)]
struct FileEntry {
    name: String,
    sha256: String,
    rows: u64,
}

/// The curated data in `data/`, parsed and checked.
#[derive(Clone, Debug)]
pub struct Curated {
    files: Vec<FileEntry>,
    codes: Vec<Code>,
    aliases: Vec<(String, String)>,
    states: Vec<State>,
    extras: Vec<Extra>,
    modifiers: Vec<Modifier>,
    holidays: Vec<HolidaySpec>,
    countries: Vec<Country>,
    canada: Canada,
    matrix: crate::matrix::Matrix,
}

/// The text of each curated file, for parsing without a file system (tests, fuzzing).
#[derive(Clone, Copy, Debug, Default)]
pub struct CuratedText<'a> {
    /// `taxonomy.toml`.
    pub taxonomy: &'a str,
    /// `us-states.toml`.
    pub us_states: &'a str,
    /// `us-rules.toml`.
    pub us_rules: &'a str,
    /// `holidays.toml`.
    pub holidays: &'a str,
    /// `countries.toml`.
    pub countries: &'a str,
    /// `canada.toml`.
    pub canada: &'a str,
    /// The taxability matrix: `(path inside data/, text)` of each file of
    /// `taxability/` (`taxability/us/TN.toml`); empty for none.
    pub taxability: &'a [(&'a str, &'a str)],
}

/// Every curated file as this build of levy ships it, compiled in: `(path in data/, text)`.
/// A build that names no data folder uses these, so `levy build` works from any folder.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("taxonomy.toml", include_str!("../../../data/taxonomy.toml")),
    (
        "us-states.toml",
        include_str!("../../../data/us-states.toml"),
    ),
    ("us-rules.toml", include_str!("../../../data/us-rules.toml")),
    ("holidays.toml", include_str!("../../../data/holidays.toml")),
    (
        "countries.toml",
        include_str!("../../../data/countries.toml"),
    ),
    ("canada.toml", include_str!("../../../data/canada.toml")),
    (
        crate::local_taxes::FILE,
        include_str!("../../../data/us-local-taxes.toml"),
    ),
    ("ca-base.toml", include_str!("../../../data/ca-base.toml")),
    (
        crate::sourcing::FILE,
        include_str!("../../../data/us-sourcing.toml"),
    ),
    (
        crate::rounding::FILE,
        include_str!("../../../data/us-rounding.toml"),
    ),
    ("ip/ipv4.txt", include_str!("../../../data/ip/ipv4.txt")),
    ("ip/ipv6.txt", include_str!("../../../data/ip/ipv6.txt")),
    (
        "ip/ipv4-regions.txt",
        include_str!("../../../data/ip/ipv4-regions.txt"),
    ),
    (
        "ip/ipv6-regions.txt",
        include_str!("../../../data/ip/ipv6-regions.txt"),
    ),
];

/// Where the curated rules come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CuratedSource {
    /// The files compiled into this build ([`EMBEDDED`]).
    Embedded,
    /// A folder laid out like the repository's `data/` (`--data-dir`): it must hold every
    /// file of [`FILES`]; `ip/` and `us-local-taxes.toml` are optional there (without them,
    /// no curated IP ranges, and every US state's region-level answer is `STATE_ONLY`).
    Dir(std::path::PathBuf),
}

impl CuratedSource {
    /// The files of the taxability matrix (`taxability/<folder>/<place>.toml`), in path
    /// order, with their text; none when a folder has no `taxability/`.
    pub fn taxability_files(
        &self,
    ) -> Result<Vec<(String, std::borrow::Cow<'static, str>)>, CuratedError> {
        match self {
            CuratedSource::Embedded => Ok(crate::embedded::TAXABILITY
                .iter()
                .map(|(n, t)| (n.to_string(), std::borrow::Cow::Borrowed(*t)))
                .collect()),
            CuratedSource::Dir(dir) => {
                let mut out = Vec::new();
                for folder in ["ca", "intl", "us"] {
                    let path = dir.join(crate::matrix::DIR).join(folder);
                    let entries = match std::fs::read_dir(&path) {
                        Ok(e) => e,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => {
                            return Err(CuratedError::Io {
                                file: path.display().to_string(),
                                message: e.to_string(),
                            })
                        }
                    };
                    let mut names: Vec<String> = entries
                        .filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".toml"))
                        .collect();
                    names.sort();
                    for n in names {
                        let name = format!("{}/{folder}/{n}", crate::matrix::DIR);
                        let text = self.require(&name)?;
                        out.push((name, text));
                    }
                }
                Ok(out)
            }
        }
    }

    /// The text of `name` (a path inside `data/`, such as `ip/ipv4.txt`); `Ok(None)` when a
    /// folder lacks it.
    pub fn read(&self, name: &str) -> Result<Option<std::borrow::Cow<'static, str>>, CuratedError> {
        match self {
            CuratedSource::Embedded => Ok(EMBEDDED
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| std::borrow::Cow::Borrowed(*text))),
            CuratedSource::Dir(dir) => {
                let path = dir.join(name);
                match std::fs::read_to_string(&path) {
                    Ok(text) => Ok(Some(std::borrow::Cow::Owned(text))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(CuratedError::Io {
                        file: path.display().to_string(),
                        message: e.to_string(),
                    }),
                }
            }
        }
    }

    /// Like [`CuratedSource::read`], for a file that must be there.
    pub fn require(&self, name: &str) -> Result<std::borrow::Cow<'static, str>, CuratedError> {
        self.read(name)?.ok_or_else(|| CuratedError::Io {
            file: match self {
                CuratedSource::Embedded => format!("(embedded) {name}"),
                CuratedSource::Dir(dir) => dir.join(name).display().to_string(),
            },
            message: "no such file: a data folder holds every file of data/ (see data/README.md)"
                .into(),
        })
    }
}

/// Reads and checks every curated file in `dir` (the repository's `data/`).
pub fn load(dir: &Path) -> Result<Curated, CuratedError> {
    load_from(&CuratedSource::Dir(dir.to_path_buf()))
}

/// Reads and checks every curated file of `source`.
pub fn load_from(source: &CuratedSource) -> Result<Curated, CuratedError> {
    let mut texts = Vec::with_capacity(FILES.len());
    for name in FILES {
        texts.push(source.require(name)?);
    }
    let matrix = source.taxability_files()?;
    let matrix: Vec<(&str, &str)> = matrix.iter().map(|(n, t)| (n.as_str(), &**t)).collect();
    Curated::from_strs(&CuratedText {
        taxonomy: &texts[0],
        us_states: &texts[1],
        us_rules: &texts[2],
        holidays: &texts[3],
        countries: &texts[4],
        canada: &texts[5],
        taxability: &matrix,
    })
}

pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<T, CuratedError> {
    toml::from_str(text).map_err(|e| CuratedError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    })
}

pub(crate) fn invalid(
    file: &str,
    key: impl Into<String>,
    message: impl Into<String>,
) -> CuratedError {
    CuratedError::Invalid {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

pub(crate) fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A TOML date (no time, no offset) as a [`Date`].
pub(crate) fn date(file: &str, key: &str, d: &toml::value::Datetime) -> Result<Date, CuratedError> {
    match (d.date, d.time, d.offset) {
        (Some(day), None, None) => Date::from_ymd(
            i32::from(day.year),
            u32::from(day.month),
            u32::from(day.day),
        )
        .ok_or_else(|| invalid(file, key, format!("{d} is not a calendar date"))),
        _ => Err(invalid(
            file,
            key,
            format!("{d} must be a plain date (YYYY-MM-DD)"),
        )),
    }
}

/// A percentage string ("6.25%") as a fraction (0.0625), 0 to 100 percent.
pub(crate) fn percent(file: &str, key: &str, s: &str) -> Result<Decimal, CuratedError> {
    let t = s.trim();
    let Some(number) = t.strip_suffix('%') else {
        return Err(invalid(
            file,
            key,
            format!("{s:?} is not a percentage (write \"6.25%\")"),
        ));
    };
    let p: Decimal = number.trim().parse().map_err(|_| {
        invalid(
            file,
            key,
            format!("{s:?} is not a percentage (write \"6.25%\")"),
        )
    })?;
    if p.is_sign_negative() || p > Decimal::from(100) {
        return Err(invalid(file, key, format!("{s} is outside 0% to 100%")));
    }
    Ok(p / Decimal::from(100))
}

/// A dollar amount string, non-negative and below [`MAX_AMOUNT`].
pub(crate) fn amount(file: &str, key: &str, s: &str) -> Result<Decimal, CuratedError> {
    let d: Decimal = s
        .trim()
        .parse()
        .map_err(|_| invalid(file, key, format!("{s:?} is not an amount in dollars")))?;
    if d.is_sign_negative() || d > Decimal::from(MAX_AMOUNT) {
        return Err(invalid(
            file,
            key,
            format!("{s} is outside 0 to {MAX_AMOUNT}"),
        ));
    }
    Ok(d)
}

/// `[low, high]` with `""` for an open upper edge.
fn range(
    file: &str,
    key: &str,
    r: &[String; 2],
) -> Result<(Decimal, Option<Decimal>), CuratedError> {
    let lo = amount(file, key, &r[0])?;
    let hi = if r[1].trim().is_empty() {
        None
    } else {
        Some(amount(file, key, &r[1])?)
    };
    if hi.is_some_and(|h| h < lo) {
        return Err(invalid(
            file,
            key,
            format!("[{}, {}] ends before it starts", r[0], r[1]),
        ));
    }
    Ok((lo, hi))
}

/// A chain of rates, oldest first, into periods.
fn chain(file: &str, key: &str, rows: &[ChainRow]) -> Result<Vec<Period>, CuratedError> {
    if rows.is_empty() {
        return Err(invalid(file, key, "no rates"));
    }
    let mut starts = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let k = format!("{key}[{i}].from");
        let from = match &r.from {
            Some(d) => date(file, &k, d)?,
            None if i == 0 => Date::MIN,
            None => {
                return Err(invalid(
                    file,
                    k,
                    "only the first rate of a chain may omit `from`",
                ))
            }
        };
        if let Some(&prev) = starts.last() {
            if from <= prev {
                return Err(invalid(
                    file,
                    k,
                    "rates must be in date order, oldest first",
                ));
            }
        }
        starts.push(from);
    }
    let mut periods = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let to = match starts.get(i + 1) {
            Some(next) => Date(next.0 - 1),
            None => Date::MAX,
        };
        periods.push(Period {
            from: starts[i],
            to,
            rate: percent(file, &format!("{key}[{i}].rate"), &r.rate)?,
        });
    }
    Ok(periods)
}

pub(crate) fn optional_interval(
    file: &str,
    key: &str,
    from: &Option<toml::value::Datetime>,
    to: &Option<toml::value::Datetime>,
) -> Result<(Date, Date), CuratedError> {
    let f = match from {
        Some(d) => date(file, &format!("{key}.from"), d)?,
        None => Date::MIN,
    };
    let t = match to {
        Some(d) => date(file, &format!("{key}.to"), d)?,
        None => Date::MAX,
    };
    if f > t {
        return Err(invalid(file, key, "`to` is before `from`"));
    }
    Ok((f, t))
}

pub(crate) fn part(file: &str, key: &str, p: &PartRow) -> Result<Part, CuratedError> {
    let rate = if p.rate.trim() == "general" {
        PartRate::General
    } else {
        PartRate::Fixed(percent(file, &format!("{key}.rate"), &p.rate)?)
    };
    let scale = match &p.scale {
        Some(s) => percent(file, &format!("{key}.scale"), s)?,
        None => Decimal::ONE,
    };
    let band = match &p.band {
        Some(b) => range(file, &format!("{key}.band"), b)?,
        None => (Decimal::ZERO, None),
    };
    let units = match &p.units {
        Some(u) => range(file, &format!("{key}.units"), u)?,
        None => (Decimal::ZERO, None),
    };
    let fee = match &p.fee {
        Some(f) => amount(file, &format!("{key}.fee"), f)?,
        None => Decimal::ZERO,
    };
    Ok(Part {
        rate,
        scale,
        proportional: p.proportional,
        band,
        units,
        fee,
    })
}

fn tax_type(file: &str, key: &str, s: &str) -> Result<TaxType, CuratedError> {
    TaxType::parse(s).ok_or_else(|| {
        invalid(
            file,
            key,
            format!("{s:?} is not one of SALES, USE, VAT, GST"),
        )
    })
}

fn is_country(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

pub(crate) fn nonempty(file: &str, key: &str, s: &str) -> Result<(), CuratedError> {
    if s.trim().is_empty() {
        Err(invalid(file, key, "must not be empty"))
    } else {
        Ok(())
    }
}

/// What the taxonomy gives the other files' validators: the tax codes and aliases.
pub(crate) struct Taxonomy {
    codes: Vec<Code>,
    aliases: Vec<(String, String)>,
    names: BTreeSet<String>,
}

impl Taxonomy {
    /// Whether `code` is `ancestor` or lies below it.
    fn within(&self, code: &str, ancestor: &str) -> bool {
        let mut cur = Some(code);
        // The taxonomy was checked for loops; the bound is a second guard.
        for _ in 0..=self.codes.len() {
            match cur {
                Some(c) if c == ancestor => return true,
                Some(c) => {
                    cur = self
                        .codes
                        .iter()
                        .find(|x| x.name == c)
                        .and_then(|x| x.parent.as_deref())
                }
                None => return false,
            }
        }
        false
    }

    /// The parent of `code`, if it has one.
    pub(crate) fn parent(&self, code: &str) -> Option<&str> {
        self.codes
            .iter()
            .find(|c| c.name == code)
            .and_then(|c| c.parent.as_deref())
    }

    /// Whether `code` is a root (no parent).
    pub(crate) fn is_root(&self, code: &str) -> bool {
        self.codes
            .iter()
            .any(|c| c.name == code && c.parent.is_none())
    }

    /// The codes every place's matrix row must address, in file order.
    pub(crate) fn matrix_codes(&self) -> impl Iterator<Item = &str> + '_ {
        self.codes
            .iter()
            .filter(|c| c.matrix)
            .map(|c| c.name.as_str())
    }

    /// Checks that `code` is a tax code of the taxonomy.
    pub(crate) fn known(&self, file: &str, key: &str, code: &str) -> Result<(), CuratedError> {
        if self.names.contains(code) {
            Ok(())
        } else {
            Err(invalid(
                file,
                key,
                format!("unknown tax code {code:?} (see taxonomy.toml)"),
            ))
        }
    }
}

/// The manifest entry of a curated file.
fn file_entry(name: &str, text: &str, rows: usize) -> FileEntry {
    FileEntry {
        name: name.into(),
        sha256: sha256_hex(text),
        rows: rows as u64,
    }
}

/// Validates `taxonomy.toml`: unique codes, known parents without loops, the general code
/// defined, aliases to known codes.
fn taxonomy(text: &str) -> Result<Taxonomy, CuratedError> {
    let f = FILES[0];
    let tax: TaxonomyFile = parse_toml(f, text)?;
    let mut names = BTreeSet::new();
    for (i, c) in tax.code.iter().enumerate() {
        nonempty(f, format!("code[{i}].name").as_str(), &c.name)?;
        if !names.insert(c.name.clone()) {
            return Err(invalid(f, format!("code[{}]", c.name), "listed twice"));
        }
    }
    let mut codes = Vec::with_capacity(tax.code.len());
    for c in &tax.code {
        if let Some(p) = &c.parent {
            if !names.contains(p) {
                return Err(invalid(
                    f,
                    format!("code[{}].parent", c.name),
                    format!("unknown tax code {p:?}"),
                ));
            }
        }
        if c.parent.is_none() && c.matrix == Some(true) {
            return Err(invalid(
                f,
                format!("code[{}].matrix", c.name),
                "a root is known everywhere and is never in the matrix",
            ));
        }
        codes.push(Code {
            name: c.name.clone(),
            parent: c.parent.clone(),
            description: c.description.clone(),
            sst: c.sst.clone(),
            matrix: c.parent.is_some() && c.matrix.unwrap_or(true),
        });
    }
    // Reject loops now rather than at build time, naming the code.
    let parents: HashMap<&str, &str> = codes
        .iter()
        .filter_map(|c| c.parent.as_deref().map(|p| (c.name.as_str(), p)))
        .collect();
    for c in &codes {
        let mut cur = c.name.as_str();
        for step in 0..=codes.len() {
            match parents.get(cur) {
                Some(p) => cur = p,
                None => break,
            }
            if step == codes.len() {
                return Err(invalid(
                    f,
                    format!("code[{}].parent", c.name),
                    "parent chain loops",
                ));
            }
        }
    }
    if !names.contains(GENERAL) {
        return Err(invalid(f, "code", format!("{GENERAL} must be defined")));
    }
    let mut aliases = Vec::new();
    for (alias, code) in &tax.categories {
        if !names.contains(code) {
            return Err(invalid(
                f,
                format!("categories.{alias}"),
                format!("unknown tax code {code:?}"),
            ));
        }
        aliases.push((alias.clone(), code.clone()));
    }
    Ok(Taxonomy {
        codes,
        aliases,
        names,
    })
}

/// Validates `us-states.toml`: FIPS codes and abbreviations, unique, each state with its
/// authority, source and a dated rate chain.
fn us_states(text: &str) -> Result<Vec<State>, CuratedError> {
    let f = FILES[1];
    let sf: StatesFile = parse_toml(f, text)?;
    let mut states = Vec::with_capacity(sf.state.len());
    let mut abbrs = BTreeSet::new();
    let mut fips = BTreeSet::new();
    for (i, s) in sf.state.iter().enumerate() {
        let key = format!("state[{i}]");
        if s.fips.len() != 2 || !s.fips.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(
                f,
                format!("{key}.fips"),
                format!("{:?} is not a 2-digit FIPS code", s.fips),
            ));
        }
        if !is_country(&s.abbr) {
            return Err(invalid(
                f,
                format!("{key}.abbr"),
                format!("{:?} is not a 2-letter abbreviation", s.abbr),
            ));
        }
        let key = format!("state[{}]", s.abbr);
        if !abbrs.insert(s.abbr.clone()) || !fips.insert(s.fips.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        nonempty(f, &format!("{key}.name"), &s.name)?;
        nonempty(f, &format!("{key}.authority"), &s.authority)?;
        nonempty(f, &format!("{key}.source"), &s.source)?;
        date(f, &format!("{key}.as_of"), &s.as_of)?;
        states.push(State {
            fips: s.fips.clone(),
            abbr: s.abbr.clone(),
            name: s.name.clone(),
            authority: s.authority.clone(),
            periods: chain(f, &format!("{key}.rates"), &s.rates)?,
        });
    }
    Ok(states)
}

/// Validates `us-rules.toml`: the added jurisdictions (absolute rates only) and the rules
/// that modify states' rates by tax code, each naming known states and codes.
fn us_rules(
    text: &str,
    tax: &Taxonomy,
    states: &[State],
) -> Result<(Vec<Extra>, Vec<Modifier>), CuratedError> {
    let f = FILES[2];
    let abbrs: BTreeSet<String> = states.iter().map(|s| s.abbr.clone()).collect();
    let rf: RulesFile = parse_toml(f, text)?;
    let mut extras = Vec::new();
    for (i, x) in rf.jurisdiction.iter().enumerate() {
        let key = format!("jurisdiction[{i}]");
        nonempty(f, &format!("{key}.code"), &x.code)?;
        if !abbrs.contains(&x.state) {
            return Err(invalid(
                f,
                format!("{key}.state"),
                format!("unknown state {:?}", x.state),
            ));
        }
        if states.iter().any(|s| s.fips == x.code) {
            return Err(invalid(
                f,
                format!("{key}.code"),
                "must differ from every state's FIPS code",
            ));
        }
        nonempty(f, &format!("{key}.name"), &x.name)?;
        nonempty(f, &format!("{key}.source"), &x.source)?;
        date(f, &format!("{key}.as_of"), &x.as_of)?;
        let mut rules = Vec::new();
        for (j, r) in x.rules.iter().enumerate() {
            let k = format!("{key}.rules[{j}]");
            tax.known(f, &format!("{k}.code"), &r.code)?;
            let (from, to) = optional_interval(f, &k, &r.from, &r.to)?;
            let mut parts = Vec::new();
            for (n, p) in r.parts.iter().enumerate() {
                let p = part(f, &format!("{k}.parts[{n}]"), p)?;
                if p.rate == PartRate::General {
                    return Err(invalid(
                        f,
                        format!("{k}.parts[{n}].rate"),
                        "an added jurisdiction's rates must be absolute",
                    ));
                }
                parts.push(p);
            }
            if parts.is_empty() {
                return Err(invalid(f, format!("{k}.parts"), "no parts"));
            }
            rules.push((r.code.clone(), from, to, parts));
        }
        extras.push(Extra {
            key,
            code: x.code.clone(),
            state: x.state.clone(),
            name: x.name.clone(),
            authority: x.authority.clone(),
            in_every_set: x.in_every_set,
            rules,
        });
    }
    let mut modifiers = Vec::new();
    for (i, r) in rf.rule.iter().enumerate() {
        let key = format!("rule[{i}]");
        if r.code != GENERAL {
            return Err(invalid(
                f,
                format!("{key}.code"),
                format!(
                    "{:?}: a rule here changes the general rules ({GENERAL}) only; how a \
                     product is treated goes in the taxability matrix, taxability/us/<state>.toml",
                    r.code
                ),
            ));
        }
        let mut st = Vec::new();
        for s in &r.states {
            if s == "*" {
                st.extend(abbrs.iter().cloned());
            } else if abbrs.contains(s) {
                st.push(s.clone());
            } else {
                return Err(invalid(
                    f,
                    format!("{key}.states"),
                    format!("unknown state {s:?}"),
                ));
            }
        }
        for s in &r.except {
            if !abbrs.contains(s) {
                return Err(invalid(
                    f,
                    format!("{key}.except"),
                    format!("unknown state {s:?}"),
                ));
            }
        }
        st.retain(|s| !r.except.contains(s));
        st.sort();
        st.dedup();
        if st.is_empty() {
            return Err(invalid(f, format!("{key}.states"), "names no state"));
        }
        let mut scopes = Vec::new();
        for a in &r.applies_to {
            match a.as_str() {
                "state" => scopes.push(Scope::State),
                "state_all" => scopes.push(Scope::StateAll),
                "local" => scopes.push(Scope::Local),
                "district" => scopes.push(Scope::District),
                "all" => scopes.extend([Scope::StateAll, Scope::Local]),
                "" => return Err(invalid(f, format!("{key}.applies_to"), "empty entry")),
                code => scopes.push(Scope::Code(code.to_string())),
            }
        }
        if scopes.is_empty() {
            return Err(invalid(
                f,
                format!("{key}.applies_to"),
                "names no jurisdiction",
            ));
        }
        let (from, to) = optional_interval(f, &key, &r.from, &r.to)?;
        nonempty(f, &format!("{key}.label"), &r.label)?;
        nonempty(f, &format!("{key}.source"), &r.source)?;
        date(f, &format!("{key}.as_of"), &r.as_of)?;
        let mut parts = Vec::new();
        for (n, p) in r.parts.iter().enumerate() {
            parts.push(part(f, &format!("{key}.parts[{n}]"), p)?);
        }
        if parts.is_empty() {
            return Err(invalid(f, format!("{key}.parts"), "no parts"));
        }
        modifiers.push(Modifier {
            states: st,
            code: r.code.clone(),
            scopes,
            from,
            to,
            label: r.label.clone(),
            parts,
            sale: None,
            origin: format!("{f} {key}"),
            matrix: false,
        });
    }
    Ok((extras, modifiers))
}

/// One group of a holiday's items with the same cap, as written in the file.
struct ItemGroup<'a> {
    key: String,
    codes: &'a [String],
    max_unit: &'a Option<String>,
    cap_inclusive: bool,
    exclude: &'a [String],
}

/// Validates `holidays.toml`: each holiday in a known state, over a valid interval, with
/// known tax codes, an optional cap and a basis (`announced` or `statute`).
fn holidays(
    text: &str,
    tax: &Taxonomy,
    states: &[State],
) -> Result<Vec<HolidaySpec>, CuratedError> {
    let f = FILES[3];
    let abbrs: BTreeSet<&str> = states.iter().map(|s| s.abbr.as_str()).collect();
    let hf: HolidaysFile = parse_toml(f, text)?;
    let mut holidays = Vec::new();
    for (i, h) in hf.holiday.iter().enumerate() {
        let key = format!("holiday[{i}]");
        nonempty(f, &format!("{key}.name"), &h.name)?;
        if !abbrs.contains(h.state.as_str()) {
            return Err(invalid(
                f,
                format!("{key}.state"),
                format!("unknown state {:?}", h.state),
            ));
        }
        let from = date(f, &format!("{key}.from"), &h.from)?;
        let to = date(f, &format!("{key}.to"), &h.to)?;
        if from > to {
            return Err(invalid(f, key, "`to` is before `from`"));
        }
        if !matches!(h.basis.as_str(), "announced" | "statute") {
            return Err(invalid(
                f,
                format!("{key}.basis"),
                format!("{:?} is not `announced` or `statute`", h.basis),
            ));
        }
        nonempty(f, &format!("{key}.source"), &h.source)?;
        date(f, &format!("{key}.as_of"), &h.as_of)?;
        // One group of items per cap: the row's own `codes`, or each of its `items`.
        let groups: Vec<ItemGroup<'_>> = match (h.codes.is_empty(), h.items.is_empty()) {
            (false, true) => vec![ItemGroup {
                key: key.clone(),
                codes: &h.codes,
                max_unit: &h.max_unit,
                cap_inclusive: h.cap_inclusive,
                exclude: &[],
            }],
            (true, false) if h.max_unit.is_none() && !h.cap_inclusive => h
                .items
                .iter()
                .enumerate()
                .map(|(n, it)| ItemGroup {
                    key: format!("{key}.items[{n}]"),
                    codes: &it.codes,
                    max_unit: &it.max_unit,
                    cap_inclusive: it.cap_inclusive,
                    exclude: &it.exclude,
                })
                .collect(),
            (true, true) => return Err(invalid(f, format!("{key}.codes"), "names no tax code")),
            _ => {
                return Err(invalid(
                    f,
                    key,
                    "give either `codes` (with `max_unit`) or `items`, not both",
                ))
            }
        };
        for ItemGroup {
            key: k,
            codes,
            max_unit,
            cap_inclusive,
            exclude: item_exclude,
        } in groups
        {
            if codes.is_empty() {
                return Err(invalid(f, format!("{k}.codes"), "names no tax code"));
            }
            for c in codes {
                tax.known(f, &format!("{k}.codes"), c)?;
            }
            let exclude: Vec<String> = h.exclude.iter().chain(item_exclude).cloned().collect();
            for c in &exclude {
                tax.known(f, &format!("{k}.exclude"), c)?;
                // An exclusion must lie under a covered code, or it says nothing.
                if !codes.iter().any(|covered| tax.within(c, covered)) {
                    return Err(invalid(
                        f,
                        format!("{k}.exclude"),
                        format!("{c} is not under any of the covered codes"),
                    ));
                }
            }
            let max_unit = match max_unit {
                Some(m) => Some(amount(f, &format!("{k}.max_unit"), m)?),
                None => None,
            };
            holidays.push(HolidaySpec {
                name: h.name.clone(),
                country: "US".into(),
                region: h.state.clone(),
                include_local: h.include_local,
                from,
                to,
                tax_codes: codes.to_vec(),
                exclude_codes: exclude,
                max_unit,
                cap_inclusive,
            });
        }
    }
    Ok(holidays)
}

/// Validates `countries.toml`: VAT and GST countries (not the US or Canada), each with a
/// standard rate and at most one rate entry per tax code.
fn countries(text: &str, tax: &Taxonomy) -> Result<Vec<Country>, CuratedError> {
    let f = FILES[4];
    let cf: CountriesFile = parse_toml(f, text)?;
    let mut countries = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, c) in cf.country.iter().enumerate() {
        if !is_country(&c.code) || c.code == "US" || c.code == "CA" {
            return Err(invalid(
                f,
                format!("country[{i}].code"),
                format!(
                    "{:?} is not an ISO 3166-1 alpha-2 code other than US and CA",
                    c.code
                ),
            ));
        }
        let key = format!("country[{}]", c.code);
        if !seen.insert(c.code.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        nonempty(f, &format!("{key}.name"), &c.name)?;
        nonempty(f, &format!("{key}.source"), &c.source)?;
        date(f, &format!("{key}.as_of"), &c.as_of)?;
        let tt = tax_type(f, &format!("{key}.tax_type"), &c.tax_type)?;
        let mut rates = Vec::new();
        let mut covered = BTreeSet::new();
        for (j, r) in c.rates.iter().enumerate() {
            let k = format!("{key}.rates[{j}]");
            if r.codes.is_some() {
                return Err(invalid(
                    f,
                    format!("{k}.codes"),
                    format!(
                        "a country's rates here are its standard rate only; reduced and zero \
                         rates go in the taxability matrix, taxability/intl/{}.toml",
                        c.code
                    ),
                ));
            }
            let cs = vec![GENERAL.to_string()];
            for code in &cs {
                tax.known(f, &format!("{k}.codes"), code)?;
                if !covered.insert(code.clone()) {
                    return Err(invalid(
                        f,
                        format!("{k}.codes"),
                        format!("{code} has rates in two entries"),
                    ));
                }
            }
            rates.push((cs, chain(f, &format!("{k}.chain"), &r.chain)?));
        }
        if !covered.contains(GENERAL) {
            return Err(invalid(
                f,
                format!("{key}.rates"),
                "no standard rate (an entry without `codes`)",
            ));
        }
        countries.push(Country {
            code: c.code.clone(),
            name: c.name.clone(),
            tax_type: tt,
            authority: c.authority.clone(),
            rates,
        });
    }
    Ok(countries)
}

/// Validates `canada.toml`: the federal GST and each province's own tax (their general rates;
/// how each product is treated is in the taxability matrix, `taxability/ca/`) and postal
/// prefixes.
fn canada(text: &str) -> Result<Canada, CuratedError> {
    let f = FILES[5];
    let cf: CanadaFile = parse_toml(f, text)?;
    let fed = &cf.federal;
    if fed.code != "CA" {
        return Err(invalid(f, "federal.code", "must be \"CA\""));
    }
    nonempty(f, "federal.source", &fed.source)?;
    date(f, "federal.as_of", &fed.as_of)?;
    let mut provinces = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, p) in cf.province.iter().enumerate() {
        if !is_country(&p.code) {
            return Err(invalid(
                f,
                format!("province[{i}].code"),
                format!("{:?} is not a 2-letter province code", p.code),
            ));
        }
        let key = format!("province[{}]", p.code);
        if !seen.insert(p.code.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        date(f, &format!("{key}.as_of"), &p.as_of)?;
        let tax = if p.chain.is_empty() {
            if !p.federal {
                return Err(invalid(
                    f,
                    key,
                    "a province without the federal GST must levy its own tax",
                ));
            }
            None
        } else {
            let name = p
                .tax_name
                .clone()
                .ok_or_else(|| invalid(f, format!("{key}.tax_name"), "missing"))?;
            let tt = tax_type(
                f,
                &format!("{key}.tax_type"),
                p.tax_type.as_deref().unwrap_or(""),
            )?;
            let authority = p
                .authority
                .clone()
                .ok_or_else(|| invalid(f, format!("{key}.authority"), "missing"))?;
            if p.source.as_deref().is_none_or(|s| s.trim().is_empty()) {
                return Err(invalid(f, format!("{key}.source"), "missing"));
            }
            Some((
                name,
                tt,
                authority,
                chain(f, &format!("{key}.chain"), &p.chain)?,
            ))
        };
        for (j, pre) in p.postal_prefixes.iter().enumerate() {
            if levy_core::normalize_postal(pre).is_empty() {
                return Err(invalid(
                    f,
                    format!("{key}.postal_prefixes[{j}]"),
                    "empty prefix",
                ));
            }
        }
        provinces.push(Province {
            code: p.code.clone(),
            name: p.name.clone(),
            federal: p.federal,
            tax,
            postal_prefixes: p.postal_prefixes.clone(),
        });
    }
    let canada = Canada {
        code: fed.code.clone(),
        name: fed.name.clone(),
        tax_name: fed.tax_name.clone(),
        authority: fed.authority.clone(),
        periods: chain(f, "federal.chain", &fed.chain)?,
        provinces,
    };
    Ok(canada)
}

impl Curated {
    /// Parses and checks the curated files from their text, one validator per file.
    pub fn from_strs(text: &CuratedText<'_>) -> Result<Curated, CuratedError> {
        let tax = taxonomy(text.taxonomy)?;
        let states = us_states(text.us_states)?;
        let (extras, modifiers) = us_rules(text.us_rules, &tax, &states)?;
        let holidays = holidays(text.holidays, &tax, &states)?;
        let countries = countries(text.countries, &tax)?;
        let canada = canada(text.canada)?;
        let known = crate::matrix::Known {
            states: states.iter().map(|s| s.abbr.as_str()).collect(),
            provinces: canada.provinces.iter().map(|p| p.code.as_str()).collect(),
            countries: countries.iter().map(|c| c.code.as_str()).collect(),
        };
        let matrix_texts: Vec<(String, std::borrow::Cow<'_, str>)> = text
            .taxability
            .iter()
            .map(|(n, t)| (n.to_string(), std::borrow::Cow::Borrowed(*t)))
            .collect();
        let matrix = crate::matrix::load(&matrix_texts, &tax, &known)?;
        let mut files = vec![
            file_entry(FILES[0], text.taxonomy, tax.codes.len() + tax.aliases.len()),
            file_entry(FILES[1], text.us_states, states.len()),
            file_entry(FILES[2], text.us_rules, extras.len() + modifiers.len()),
            file_entry(FILES[3], text.holidays, holidays.len()),
            file_entry(FILES[4], text.countries, countries.len()),
            file_entry(FILES[5], text.canada, 1 + canada.provinces.len()),
        ];
        if !matrix.files.is_empty() {
            // One manifest entry for the whole matrix: the hash of every file's path and
            // hash, in path order.
            let listing: String = matrix
                .files
                .iter()
                .map(|(name, sha)| format!("{name} {sha}\n"))
                .collect();
            let cells = matrix.places.iter().map(|p| p.cells.len()).sum::<usize>();
            files.push(FileEntry {
                name: format!("{}/", crate::matrix::DIR),
                sha256: sha256_hex(&listing),
                rows: cells as u64,
            });
        }
        Ok(Curated {
            files,
            codes: tax.codes,
            aliases: tax.aliases,
            states,
            extras,
            modifiers,
            holidays,
            countries,
            canada,
            matrix,
        })
    }

    /// The US states, DC and Puerto Rico as `(USPS abbreviation, FIPS code, name)`, in file
    /// order.
    pub fn us_states(&self) -> impl Iterator<Item = (&str, &str, &str)> + '_ {
        self.states
            .iter()
            .map(|s| (s.abbr.as_str(), s.fips.as_str(), s.name.as_str()))
    }

    /// The name and SHA-256 of each file read, for the table manifest (kind `curated`).
    pub fn sources(&self) -> Vec<SourceEntry> {
        self.files
            .iter()
            .map(|f| SourceEntry {
                kind: "curated".into(),
                name: f.name.clone(),
                sha256: f.sha256.clone(),
                rows_read: f.rows,
                rows_skipped: 0,
                period: String::new(),
            })
            .collect()
    }

    /// The manifest index of a curated file in `b`, adding the entry when it is missing.
    fn source_index(&self, b: &mut TableBuilder, file: &str) -> u32 {
        let entry = self
            .sources()
            .into_iter()
            .find(|s| s.name == file)
            .unwrap_or_default();
        match b
            .sources()
            .iter()
            .position(|s| s.kind == entry.kind && s.name == entry.name && s.sha256 == entry.sha256)
        {
            Some(i) => i as u32,
            None => b.add_source(entry),
        }
    }

    /// Adds the taxonomy and categories, the US state jurisdictions, rates and regions, the
    /// jurisdictions that [`Curated::apply_rules`] will add to every set of their state,
    /// VAT and GST countries, Canada, and the sales tax holidays. Call it first, before
    /// other sources add their jurisdictions and ZIP codes.
    pub fn apply_base(&self, b: &mut TableBuilder) -> Result<CuratedStats, CuratedError> {
        let mut stats = CuratedStats::default();
        let src: Vec<u32> = FILES.iter().map(|f| self.source_index(b, f)).collect();
        let build = |file: &str, key: &str| {
            let (file, key) = (file.to_string(), key.to_string());
            move |source: BuildError| CuratedError::Build { file, key, source }
        };

        // Taxonomy.
        for c in &self.codes {
            if b.has_tax_code(&c.name) {
                continue;
            }
            b.tax_code(&c.name, c.parent.as_deref(), &c.description)
                .map_err(build(FILES[0], &format!("code[{}]", c.name)))?;
            if !c.matrix {
                b.tax_code_outside_matrix(&c.name)
                    .map_err(build(FILES[0], &format!("code[{}]", c.name)))?;
            }
            if !c.sst.is_empty() {
                b.tax_code_sst(&c.name, &c.sst)
                    .map_err(build(FILES[0], &format!("code[{}]", c.name)))?;
            }
            b.category(&c.name, &c.name);
            stats.tax_codes += 1;
            stats.categories += 1;
        }
        for (alias, code) in &self.aliases {
            b.category(alias, code);
            stats.categories += 1;
        }

        // US states.
        for s in &self.states {
            let key = format!("state[{}]", s.abbr);
            let j = b
                .jurisdiction(JurisdictionSpec {
                    code: s.fips.clone(),
                    name: s.name.clone(),
                    level: Level::State,
                    country: "US".into(),
                    region: s.abbr.clone(),
                    authority: s.authority.clone(),
                    tax_type: TaxType::Sales,
                })
                .map_err(build(FILES[1], &key))?;
            stats.jurisdictions += 1;
            for p in &s.periods {
                let mut r =
                    RuleSpec::flat(j, GENERAL, p.rate, p.from, p.to, "GENERAL STATE SALES TAX");
                r.source = src[1];
                b.rule(r).map_err(build(FILES[1], &key))?;
                stats.rules += 1;
            }
            let mut set = vec![j];
            // Add-on jurisdictions of the state (Tennessee's single article tax).
            for x in self.extras.iter().filter(|x| x.state == s.abbr) {
                let xj = b
                    .jurisdiction(JurisdictionSpec {
                        code: x.code.clone(),
                        name: x.name.clone(),
                        level: Level::State,
                        country: "US".into(),
                        region: x.state.clone(),
                        authority: x.authority.clone(),
                        tax_type: TaxType::Sales,
                    })
                    .map_err(build(FILES[2], &x.key))?;
                stats.jurisdictions += 1;
                for (code, from, to, parts) in &x.rules {
                    for p in parts {
                        let rate = match p.rate {
                            PartRate::Fixed(r) => r * p.scale,
                            PartRate::General => continue,
                        };
                        b.rule(part_rule(xj, code, *from, *to, rate, p, &x.name, src[2]))
                            .map_err(build(FILES[2], &x.key))?;
                        stats.rules += 1;
                    }
                }
                if x.in_every_set {
                    set.push(xj);
                }
            }
            b.region("US", &s.abbr, &s.name, &set, "")
                .map_err(build(FILES[1], &key))?;
            stats.regions += 1;
        }

        // Countries.
        for c in &self.countries {
            let key = format!("country[{}]", c.code);
            let j = b
                .jurisdiction(JurisdictionSpec {
                    code: c.code.clone(),
                    name: c.name.clone(),
                    level: Level::Country,
                    country: c.code.clone(),
                    region: String::new(),
                    authority: c.authority.clone(),
                    tax_type: c.tax_type,
                })
                .map_err(build(FILES[4], &key))?;
            stats.jurisdictions += 1;
            let label = c.tax_type.as_str();
            for (codes, periods) in &c.rates {
                for code in codes {
                    for p in periods {
                        let kind = if code == GENERAL {
                            "STANDARD RATE"
                        } else if p.rate.is_zero() {
                            "ZERO RATE"
                        } else {
                            "REDUCED RATE"
                        };
                        let mut r = RuleSpec::flat(
                            j,
                            code,
                            p.rate,
                            p.from,
                            p.to,
                            &format!("{label} {kind}"),
                        );
                        r.source = src[4];
                        b.rule(r).map_err(build(FILES[4], &key))?;
                        stats.rules += 1;
                    }
                }
            }
            b.region(&c.code, "", &c.name, &[j], "")
                .map_err(build(FILES[4], &key))?;
            stats.regions += 1;
        }

        // Canada.
        let ca = &self.canada;
        let fed = b
            .jurisdiction(JurisdictionSpec {
                code: ca.code.clone(),
                name: ca.tax_name.clone(),
                level: Level::Country,
                country: "CA".into(),
                region: String::new(),
                authority: ca.authority.clone(),
                tax_type: TaxType::Gst,
            })
            .map_err(build(FILES[5], "federal"))?;
        stats.jurisdictions += 1;
        stats.rules += write_periods(b, fed, &ca.periods, "GST", src[5])
            .map_err(build(FILES[5], "federal"))?;
        b.region("CA", "", &ca.name, &[fed], "")
            .map_err(build(FILES[5], "federal"))?;
        stats.regions += 1;
        for p in &ca.provinces {
            let key = format!("province[{}]", p.code);
            let mut set = Vec::new();
            if p.federal {
                set.push(fed);
            }
            if let Some((name, tt, authority, periods)) = &p.tax {
                let j = b
                    .jurisdiction(JurisdictionSpec {
                        code: format!("CA-{}", p.code),
                        name: name.clone(),
                        level: Level::Province,
                        country: "CA".into(),
                        region: p.code.clone(),
                        authority: authority.clone(),
                        tax_type: *tt,
                    })
                    .map_err(build(FILES[5], &key))?;
                stats.jurisdictions += 1;
                let label = name.rsplit(' ').next().unwrap_or("TAX");
                stats.rules +=
                    write_periods(b, j, periods, label, src[5]).map_err(build(FILES[5], &key))?;
                set.push(j);
            }
            b.region("CA", &p.code, &p.name, &set, "")
                .map_err(build(FILES[5], &key))?;
            stats.regions += 1;
            for pre in &p.postal_prefixes {
                b.postal_prefix("CA", pre, &p.code, None)
                    .map_err(build(FILES[5], &key))?;
                stats.postal_prefixes += 1;
            }
        }

        // Holidays.
        for (i, h) in self.holidays.iter().enumerate() {
            b.holiday(h.clone())
                .map_err(build(FILES[3], &format!("holiday[{i}]")))?;
            stats.holidays += 1;
        }
        Ok(stats)
    }

    /// Writes the product-specific rules of `us-rules.toml` over every jurisdiction in the
    /// builder (matched by country, state and level, or by code), and adds each add-on
    /// jurisdiction (`in_every_set`) to every set that holds its state. A part at the
    /// `general` rate takes the jurisdiction's GENERAL_MERCHANDISE rules as they stand in
    /// the builder, period by period. Call it last, after every source has added its
    /// jurisdictions and rates.
    pub fn apply_rules(&self, b: &mut TableBuilder) -> Result<CuratedStats, CuratedError> {
        let mut stats = CuratedStats::default();
        let f = FILES[2];
        let src = self.source_index(b, f);
        let matrix_src = if self.matrix.files.is_empty() {
            src
        } else {
            self.source_index(b, &format!("{}/", crate::matrix::DIR))
        };

        // Add-on jurisdictions into every set of their state.
        for x in self.extras.iter().filter(|x| x.in_every_set) {
            let Some(state) = self.states.iter().find(|s| s.abbr == x.state) else {
                continue;
            };
            let (Some(sj), Some(xj)) = (
                b.find_jurisdiction(&state.fips),
                b.find_jurisdiction(&x.code),
            ) else {
                return Err(invalid(f, &x.key, "apply_base must run before apply_rules"));
            };
            stats.sets_extended +=
                b.add_to_sets_containing(sj, xj)
                    .map_err(|e| CuratedError::Build {
                        file: f.into(),
                        key: x.key.clone(),
                        source: e,
                    })?;
        }

        // The rules of `us-rules.toml` for what the matrix does not give, then the matrix's.
        let mut modifiers: Vec<Modifier> = Vec::new();
        for m in &self.modifiers {
            let mut m = m.clone();
            m.states.retain(|s| !self.matrix.names_us(s, &m.code));
            if !m.states.is_empty() {
                modifiers.push(m);
            }
        }
        for (place, cell, code) in self.matrix.us_rules() {
            modifiers.push(Modifier {
                states: vec![place.region.clone()],
                code: code.to_string(),
                scopes: cell.scopes.clone(),
                from: cell.from,
                to: cell.to,
                label: cell.label.clone(),
                parts: cell.parts.clone(),
                sale: cell.sale_at_most.map(|limit| (cell.group, limit)),
                origin: format!("{} {}", place.file, cell.key),
                matrix: true,
            });
        }
        let by_target = self.targets(b, &modifiers);
        // Work on a copy of the rules of the jurisdictions concerned, indexed by jurisdiction
        // (a full build has tens of thousands of both), then put them back in one pass.
        let targets: BTreeSet<u32> = by_target.keys().map(|k| k.2).collect();
        let mut index: BTreeMap<u32, Vec<RuleSpec>> = BTreeMap::new();
        for r in b.rules() {
            if targets.contains(&r.jurisdiction.0) {
                index.entry(r.jurisdiction.0).or_default().push(r.clone());
            }
        }
        // Rules a published source wrote (not this curated data), which a `general` part
        // takes as the jurisdiction's own rate for the code.
        let curated: BTreeSet<u32> = b
            .sources()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == "curated")
            .map(|(i, _)| i as u32)
            .collect();
        for ((_, code, j), ms) in by_target {
            let mods: Vec<&Modifier> = ms.iter().map(|&i| &modifiers[i]).collect();
            overlapping(&mods, j)?;
            let rules = index.entry(j).or_default();
            let target = Target {
                code: &code,
                jid: JurisdictionId(j),
                src,
                matrix_src,
                curated: &curated,
            };
            let (added, removed) = self.rewrite(rules, &target, &mods);
            stats.rules += added;
            stats.rules_replaced += removed;
        }
        b.retain_rules(|r| !targets.contains(&r.jurisdiction.0));
        for (j, rules) in index {
            for r in rules {
                b.rule(r).map_err(|e| CuratedError::Build {
                    file: f.into(),
                    key: format!("rules of jurisdiction {j}"),
                    source: e,
                })?;
            }
        }

        // Canada's and the countries' codes, and every cell recorded.
        let tax = Taxonomy {
            codes: self.codes.clone(),
            aliases: Vec::new(),
            names: self.codes.iter().map(|c| c.name.clone()).collect(),
        };
        let (added, removed) = self.matrix.apply_rates(b, &tax, matrix_src)?;
        stats.rules += added;
        stats.rules_replaced += removed;
        stats.taxability_cells += self.matrix.record(b)?;
        Ok(stats)
    }

    /// Which jurisdictions of the builder each modifier reaches, grouped by (depth of the
    /// code, code, jurisdiction): GENERAL_MERCHANDISE first, then parents before children,
    /// so that `general` and inherited rules are final when read.
    fn targets(
        &self,
        b: &TableBuilder,
        modifiers: &[Modifier],
    ) -> BTreeMap<(usize, String, u32), Vec<usize>> {
        let fips: HashMap<&str, &str> = self
            .states
            .iter()
            .map(|s| (s.abbr.as_str(), s.fips.as_str()))
            .collect();
        let depth = |code: &str| -> usize {
            let mut d = 0;
            let mut cur = code;
            while let Some(p) = self
                .codes
                .iter()
                .find(|c| c.name == cur)
                .and_then(|c| c.parent.as_deref())
            {
                d += 1;
                cur = p;
                if d > self.codes.len() {
                    break;
                }
            }
            d
        };
        let mut by_target: BTreeMap<(usize, String, u32), Vec<usize>> = BTreeMap::new();
        for (mi, m) in modifiers.iter().enumerate() {
            for (jid, rec) in b.jurisdictions() {
                if rec.country != *b"US" || !m.states.contains(&rec.region) {
                    continue;
                }
                let level = level_of(rec.level);
                let is_state_code = fips
                    .get(rec.region.as_str())
                    .is_some_and(|f| *f == rec.code);
                let hit = m.scopes.iter().any(|s| match s {
                    Scope::State => is_state_code,
                    Scope::StateAll => level == Level::State,
                    Scope::Local => level.is_local(),
                    Scope::District => level == Level::District,
                    Scope::Code(c) => match c.strip_suffix('*') {
                        Some(prefix) => rec.code.starts_with(prefix),
                        None => *c == rec.code,
                    },
                });
                if hit {
                    by_target
                        .entry((depth(&m.code), m.code.clone(), jid.0))
                        .or_default()
                        .push(mi);
                }
            }
        }
        by_target
    }

    /// Replaces the rules of the target's code in its jurisdiction with the modifiers'
    /// parts over their periods, keeping (or copying down from the nearest ancestor) the
    /// rules outside them. A modifier with a per-sale threshold writes its parts for sales
    /// at or below it, and the rules the code has without it for sales above.
    fn rewrite(
        &self,
        rules: &mut Vec<RuleSpec>,
        target: &Target<'_>,
        mods: &[&Modifier],
    ) -> (usize, usize) {
        let code = target.code;
        // The rules the code has now: its own, or the nearest ancestor's.
        let mut base_code = Some(code.to_string());
        let mut base: Vec<RuleSpec> = Vec::new();
        let mut steps = 0;
        while let Some(c) = base_code.take() {
            base = rules.iter().filter(|r| r.tax_code == c).cloned().collect();
            if !base.is_empty() {
                break;
            }
            base_code = self
                .codes
                .iter()
                .find(|x| x.name == c)
                .and_then(|x| x.parent.clone());
            steps += 1;
            if steps > self.codes.len() {
                break;
            }
        }
        let own = base.first().is_some_and(|r| r.tax_code == code);
        // What a `general` part charges: the code's own rules where a published source wrote
        // them (a rate file's food rate), else the jurisdiction's general rules.
        let published = own && base.iter().all(|r| !target.curated.contains(&r.source));
        let general: Vec<RuleSpec> = if code == GENERAL || published {
            base.clone()
        } else {
            rules
                .iter()
                .filter(|r| r.tax_code == GENERAL)
                .cloned()
                .collect()
        };

        let mut out: Vec<RuleSpec> = Vec::new();
        let mut windows: Vec<(Date, Date)> = Vec::new();
        let (plain, thresholds): (Vec<&Modifier>, Vec<&Modifier>) =
            mods.iter().partition(|m| m.sale.is_none());
        for m in &plain {
            windows.push((m.from, m.to));
            out.extend(self.parts_rules(m, target, &general, None));
        }
        // Outside the modifiers' periods the code keeps what it had.
        for r in &base {
            for (from, to) in uncovered(r.from, r.to, &windows) {
                let mut copy = r.clone();
                copy.tax_code = code.to_string();
                copy.from = from;
                copy.to = to;
                out.push(copy);
            }
        }
        // A threshold's parts at or below it; above it, what the code has without it.
        for m in &thresholds {
            let Some((group, limit)) = m.sale else {
                continue;
            };
            let above = SaleCondition {
                group,
                limit,
                above: true,
            };
            let mut split = Vec::with_capacity(out.len() + 1);
            for r in out.drain(..) {
                if r.sale.is_some() || r.to < m.from || m.to < r.from {
                    split.push(r);
                    continue;
                }
                for (from, to) in uncovered(r.from, r.to, &[(m.from, m.to)]) {
                    let mut outside = r.clone();
                    outside.from = from;
                    outside.to = to;
                    split.push(outside);
                }
                let mut inside = r;
                inside.from = inside.from.max(m.from);
                inside.to = inside.to.min(m.to);
                inside.sale = Some(above);
                split.push(inside);
            }
            out = split;
            let at_most = SaleCondition {
                group,
                limit,
                above: false,
            };
            out.extend(self.parts_rules(m, target, &general, Some(at_most)));
        }
        // Rules that say what the code would inherit anyway are not written: a `taxable`
        // cell over a county that taxes the code at its general rate adds nothing (and a
        // state's hundreds of local jurisdictions would each hold a copy).
        if !own && same_rules(&out, &base) {
            return (0, 0);
        }
        let mut removed = 0;
        if own {
            let before = rules.len();
            rules.retain(|r| r.tax_code != code);
            removed = before - rules.len();
        }
        let added = out.len();
        rules.extend(out);
        (added, removed)
    }

    /// The rules of one modifier's parts over its period: a fixed rate as written, a
    /// `general` part over each of `general`'s periods inside it.
    fn parts_rules(
        &self,
        m: &Modifier,
        target: &Target<'_>,
        general: &[RuleSpec],
        sale: Option<SaleCondition>,
    ) -> Vec<RuleSpec> {
        let src = if m.matrix {
            target.matrix_src
        } else {
            target.src
        };
        let mut out = Vec::new();
        for p in &m.parts {
            match p.rate {
                PartRate::Fixed(rate) => {
                    let mut r = part_rule(
                        target.jid,
                        target.code,
                        m.from,
                        m.to,
                        rate * p.scale,
                        p,
                        &m.label,
                        src,
                    );
                    r.sale = sale;
                    out.push(r);
                }
                PartRate::General => {
                    for g in general {
                        let (from, to) = (g.from.max(m.from), g.to.min(m.to));
                        if from > to {
                            continue;
                        }
                        let band = intersect(g.band, p.band);
                        let units = intersect(g.unit_range, p.units);
                        let (Some(band), Some(units)) = (band, units) else {
                            continue;
                        };
                        // A `taxable` cell keeps the general rule's own label.
                        let label = if m.label.is_empty() {
                            &g.rate_type
                        } else {
                            &m.label
                        };
                        let mut r = part_rule(
                            target.jid,
                            target.code,
                            from,
                            to,
                            g.rate * p.scale,
                            p,
                            label,
                            src,
                        );
                        r.band = band;
                        r.unit_range = units;
                        r.proportional = p.proportional || g.proportional;
                        r.sale = sale;
                        out.push(r);
                    }
                }
            }
        }
        out
    }
}

/// The code and jurisdiction [`Curated::rewrite`] works on, and the sources it writes.
struct Target<'a> {
    code: &'a str,
    jid: JurisdictionId,
    /// The manifest index of `us-rules.toml`.
    src: u32,
    /// The manifest index of the matrix.
    matrix_src: u32,
    /// The manifest indexes of the curated files.
    curated: &'a BTreeSet<u32>,
}

/// Whether two lists of rules say the same on every day, whatever codes they are written
/// for (what a code would inherit from its nearest ancestor with rules).
fn same_rules(a: &[RuleSpec], b: &[RuleSpec]) -> bool {
    let key = |r: &RuleSpec| {
        (
            r.from,
            r.to,
            r.rate,
            r.band,
            r.unit_range,
            r.fee,
            r.rate_type.clone(),
            r.proportional,
            r.sale.map(|s| (s.group, s.limit, s.above)),
        )
    };
    let mut x: Vec<_> = a.iter().map(key).collect();
    let mut y: Vec<_> = b.iter().map(key).collect();
    x.sort();
    y.sort();
    x == y
}

/// Two matrix cells may not write one code in one jurisdiction on one day (a cell with a
/// per-sale threshold may lie over one without): their parts would add up.
fn overlapping(mods: &[&Modifier], j: u32) -> Result<(), CuratedError> {
    for (i, a) in mods.iter().enumerate() {
        for b in &mods[i + 1..] {
            if a.matrix
                && b.matrix
                && a.sale.is_none() == b.sale.is_none()
                && !(a.to < b.from || b.to < a.from)
            {
                return Err(invalid(
                    &a.origin,
                    &a.code,
                    format!(
                        "overlaps {} in jurisdiction {j} on the same days: each jurisdiction, code and day takes one cell",
                        b.origin
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The level of a jurisdiction record.
fn level_of(v: u8) -> Level {
    [
        Level::Country,
        Level::State,
        Level::Province,
        Level::County,
        Level::City,
    ]
    .into_iter()
    .find(|l| *l as u8 == v)
    .unwrap_or(Level::District)
}

/// A rule from a part with a resolved rate.
#[allow(clippy::too_many_arguments)]
fn part_rule(
    jid: JurisdictionId,
    code: &str,
    from: Date,
    to: Date,
    rate: Decimal,
    p: &Part,
    label: &str,
    src: u32,
) -> RuleSpec {
    RuleSpec {
        jurisdiction: jid,
        tax_code: code.to_string(),
        from,
        to,
        rate,
        band: p.band,
        unit_range: p.units,
        fee: p.fee,
        rate_type: label.to_string(),
        source: src,
        proportional: p.proportional,
        sale: None,
    }
}

/// Flat rules for a chain of periods on GENERAL_MERCHANDISE. Returns how many rules were
/// added.
fn write_periods(
    b: &mut TableBuilder,
    j: JurisdictionId,
    periods: &[Period],
    label: &str,
    src: u32,
) -> Result<usize, BuildError> {
    for p in periods {
        let mut r = RuleSpec::flat(j, GENERAL, p.rate, p.from, p.to, label);
        r.source = src;
        b.rule(r)?;
    }
    Ok(periods.len())
}

/// The intersection of two `(low, high)` ranges; `None` when empty.
fn intersect(
    a: (Decimal, Option<Decimal>),
    c: (Decimal, Option<Decimal>),
) -> Option<(Decimal, Option<Decimal>)> {
    let lo = a.0.max(c.0);
    let hi = match (a.1, c.1) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    };
    match hi {
        Some(h) if h < lo => None,
        _ => Some((lo, hi)),
    }
}

/// The parts of `[from, to]` outside every window.
fn uncovered(from: Date, to: Date, windows: &[(Date, Date)]) -> Vec<(Date, Date)> {
    let mut w: Vec<(Date, Date)> = windows.to_vec();
    w.sort();
    let mut out = Vec::new();
    let mut cur = from;
    for (wf, wt) in w {
        if wt < cur || wf > to {
            continue;
        }
        if wf > cur {
            out.push((cur, Date(wf.0 - 1)));
        }
        if wt >= to {
            return out;
        }
        cur = Date(wt.0 + 1);
    }
    if cur <= to {
        out.push((cur, to));
    }
    out
}

// ---------------------------------------------------------------------------------------
// IP ranges
// ---------------------------------------------------------------------------------------

/// The IP ranges of `data/ip/` (see `data/README.md` for the format): country-level ranges
/// for the whole address space and, over them, ranges at the level of a US state or Canadian
/// province.
#[derive(Clone, Debug, Default)]
pub struct IpRanges {
    /// IPv4 ranges, `start..=end`, sorted and not overlapping.
    pub v4: Vec<(u32, u32, [u8; 2])>,
    /// IPv6 ranges, `start..=end`, sorted and not overlapping.
    pub v6: Vec<(u128, u128, [u8; 2])>,
    /// The finer ranges of `ipv4-regions.txt` and `ipv6-regions.txt`, when the folder has
    /// them; they refine the country ranges where both speak.
    pub regions: Option<IpRegionRanges>,
    /// When the data was taken, in seconds since the Unix epoch, from the IPv4 file's
    /// `# snapshot: YYYY-MM-DDTHH:MM:SSZ` header line, if it has one.
    pub snapshot: Option<i64>,
    files: Vec<FileEntry>,
}

/// Ranges at the level of a state or province, each pointing into `places`.
#[derive(Clone, Debug, Default)]
pub struct IpRegionRanges {
    /// The distinct places, in order of first use: country, region and, for a US range, the
    /// ZIP code that `ip_mode: approximate` resolves (`approx_postal`).
    pub places: Vec<IpLocationSpec>,
    /// IPv4 ranges, `start..=end`, sorted and not overlapping, with an index into `places`.
    pub v4: Vec<(u32, u32, u32)>,
    /// IPv6 ranges likewise.
    pub v6: Vec<(u128, u128, u32)>,
}

/// The `# snapshot: YYYY-MM-DDTHH:MM:SSZ` header of a range file, as Unix seconds.
fn snapshot(file: &str, text: &str) -> Result<Option<i64>, CuratedError> {
    let Some(line) = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# snapshot:"))
    else {
        return Ok(None);
    };
    let v = line.trim();
    let bad = || {
        invalid(
            file,
            "# snapshot",
            format!("{v:?} is not YYYY-MM-DDTHH:MM:SSZ"),
        )
    };
    let b = v.as_bytes();
    if b.len() != 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'Z'
    {
        return Err(bad());
    }
    let num =
        |r: std::ops::Range<usize>| v.get(r).and_then(|x| x.parse::<u32>().ok()).ok_or_else(bad);
    let day = Date::from_ymd(num(0..4)? as i32, num(5..7)?, num(8..10)?).ok_or_else(bad)?;
    let (h, m, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || m > 59 || sec > 59 {
        return Err(bad());
    }
    Ok(Some(
        i64::from(day.0) * 86_400 + i64::from(h * 3600 + m * 60 + sec),
    ))
}

/// The IPv4 file in `data/ip/`.
pub const IPV4_FILE: &str = "ipv4.txt";
/// The IPv6 file in `data/ip/`.
pub const IPV6_FILE: &str = "ipv6.txt";
/// The IPv4 file of state and province ranges in `data/ip/`.
pub const IPV4_REGIONS_FILE: &str = "ipv4-regions.txt";
/// The IPv6 file of state and province ranges in `data/ip/`.
pub const IPV6_REGIONS_FILE: &str = "ipv6-regions.txt";

/// Parses a range file: lines `PLACE,GAP,SIZE` (hex; GAP empty for zero) in units of
/// `1 << shift` addresses, `#` comments; `place` reads the first field. Returns
/// `(start, end, place)` ranges.
fn parse_ranges<P>(
    file: &str,
    text: &str,
    shift: u32,
    max: u128,
    mut place: impl FnMut(&str) -> Result<P, String>,
) -> Result<Vec<(u128, u128, P)>, CuratedError> {
    let mut out = Vec::new();
    // The next free address, in units; `None` once the space is used up.
    let mut next: Option<u128> = Some(0);
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = format!("line {}", n + 1);
        let mut fields = line.split(',');
        let (Some(p), Some(gap), Some(size), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(invalid(file, key, "expected PLACE,GAP,SIZE"));
        };
        let p = place(p).map_err(|m| invalid(file, &key, m))?;
        let hex = |s: &str| u128::from_str_radix(s, 16).ok();
        let gap = if gap.is_empty() { Some(0) } else { hex(gap) };
        let (Some(gap), Some(size)) = (gap, hex(size)) else {
            return Err(invalid(file, key, "GAP and SIZE must be hexadecimal"));
        };
        if size == 0 {
            return Err(invalid(file, key, "SIZE must not be zero"));
        }
        let start = next.and_then(|x| x.checked_add(gap));
        let end = start.and_then(|s| s.checked_add(size - 1));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(invalid(
                file,
                key,
                "range runs past the end of the address space",
            ));
        };
        if end > (max >> shift) {
            return Err(invalid(
                file,
                key,
                "range runs past the end of the address space",
            ));
        }
        out.push((start << shift, (end << shift) | ((1u128 << shift) - 1), p));
        next = end.checked_add(1);
    }
    Ok(out)
}

/// A country-file place: an ISO 3166-1 alpha-2 code.
fn country_place(cc: &str) -> Result<[u8; 2], String> {
    if !is_country(cc) {
        return Err(format!("{cc:?} is not an ISO 3166-1 alpha-2 code"));
    }
    let b = cc.as_bytes();
    Ok([b[0], b[1]])
}

/// A regions-file place: `US-ST-ZIP`, `US-ST` or `CA-PR`, interned into `places`.
fn region_place(
    places: &mut Vec<IpLocationSpec>,
    ids: &mut HashMap<String, u32>,
    text: &str,
) -> Result<u32, String> {
    if let Some(&id) = ids.get(text) {
        return Ok(id);
    }
    let bad = || format!("{text:?} is not US-ST-ZIP, US-ST or CA-PR");
    let mut parts = text.split('-');
    let (Some(country), Some(region), zip, None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let ok_region = match country {
        "US" => crate::mmdb::is_subdivision_code(country, region),
        "CA" => crate::mmdb::is_subdivision_code(country, region) && zip.is_none(),
        _ => false,
    };
    let ok_zip = zip.is_none_or(|z| z.len() == 5 && z.bytes().all(|b| b.is_ascii_digit()));
    if !ok_region || !ok_zip {
        return Err(bad());
    }
    let id = places.len() as u32;
    places.push(IpLocationSpec {
        country: country.to_string(),
        region: region.to_string(),
        approx_postal: zip.unwrap_or_default().to_string(),
        ..Default::default()
    });
    ids.insert(text.to_string(), id);
    Ok(id)
}

impl IpRegionRanges {
    /// Parses the two regions files from their text.
    pub fn from_strs(v4: &str, v6: &str) -> Result<IpRegionRanges, CuratedError> {
        let mut places = Vec::new();
        let mut ids = HashMap::new();
        let r4 = parse_ranges(IPV4_REGIONS_FILE, v4, 0, u128::from(u32::MAX), |p| {
            region_place(&mut places, &mut ids, p)
        })?;
        let r6 = parse_ranges(IPV6_REGIONS_FILE, v6, 64, u128::MAX, |p| {
            region_place(&mut places, &mut ids, p)
        })?;
        Ok(IpRegionRanges {
            places,
            v4: r4
                .into_iter()
                .map(|(s, e, p)| (s as u32, e as u32, p))
                .collect(),
            v6: r6,
        })
    }
}

impl IpRanges {
    /// Reads the files of `ip/` in `source`: `ipv4.txt` and `ipv6.txt` (together), then
    /// `ipv4-regions.txt` and `ipv6-regions.txt` (together, optional); `None` when a data
    /// folder has no `ip/` files.
    pub fn load_from(source: &CuratedSource) -> Result<Option<IpRanges>, CuratedError> {
        type Pair<'a> = Option<(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>;
        let pair = |a: &str, b: &str| -> Result<Pair<'_>, CuratedError> {
            match (
                source.read(&format!("ip/{a}"))?,
                source.read(&format!("ip/{b}"))?,
            ) {
                (None, None) => Ok(None),
                (Some(x), Some(y)) => Ok(Some((x, y))),
                _ => Err(CuratedError::Io {
                    file: "ip/".into(),
                    message: format!("{a} and {b} come together; one is missing"),
                }),
            }
        };
        let Some((v4, v6)) = pair(IPV4_FILE, IPV6_FILE)? else {
            return Ok(None);
        };
        let mut r = IpRanges::from_strs(&v4, &v6)?;
        if let Some((v4, v6)) = pair(IPV4_REGIONS_FILE, IPV6_REGIONS_FILE)? {
            r.regions = Some(IpRegionRanges::from_strs(&v4, &v6)?);
            for (name, text) in [(IPV4_REGIONS_FILE, &v4), (IPV6_REGIONS_FILE, &v6)] {
                r.files.push(FileEntry {
                    name: name.into(),
                    sha256: sha256_hex(text),
                    rows: 0,
                });
            }
        }
        Ok(Some(r))
    }

    /// Reads the files of `dir` (the repository's `data/ip/`), as [`IpRanges::load_from`].
    pub fn load(dir: &Path) -> Result<IpRanges, CuratedError> {
        let parent = dir.parent().unwrap_or(dir).to_path_buf();
        IpRanges::load_from(&CuratedSource::Dir(parent))?.ok_or_else(|| CuratedError::Io {
            file: dir.join(IPV4_FILE).display().to_string(),
            message: "not found".into(),
        })
    }

    /// Parses the two country files from their text.
    pub fn from_strs(v4: &str, v6: &str) -> Result<IpRanges, CuratedError> {
        let r4 = parse_ranges(IPV4_FILE, v4, 0, u128::from(u32::MAX), country_place)?;
        let r6 = parse_ranges(IPV6_FILE, v6, 64, u128::MAX, country_place)?;
        Ok(IpRanges {
            snapshot: snapshot(IPV4_FILE, v4)?,
            v4: r4
                .into_iter()
                .map(|(s, e, c)| (s as u32, e as u32, c))
                .collect(),
            v6: r6,
            regions: None,
            files: vec![
                FileEntry {
                    name: IPV4_FILE.into(),
                    sha256: sha256_hex(v4),
                    rows: 0,
                },
                FileEntry {
                    name: IPV6_FILE.into(),
                    sha256: sha256_hex(v6),
                    rows: 0,
                },
            ],
        })
    }

    /// The name and SHA-256 of each file read (kind `ip-country`, or `ip-region` for the
    /// regions files).
    pub fn sources(&self) -> Vec<SourceEntry> {
        let (r4, r6) = self
            .regions
            .as_ref()
            .map_or((0, 0), |r| (r.v4.len() as u64, r.v6.len() as u64));
        let rows = [self.v4.len() as u64, self.v6.len() as u64, r4, r6];
        self.files
            .iter()
            .zip(rows)
            .map(|(f, rows)| SourceEntry {
                kind: if f.name.contains("regions") {
                    "ip-region"
                } else {
                    "ip-country"
                }
                .into(),
                name: f.name.clone(),
                sha256: f.sha256.clone(),
                rows_read: rows,
                rows_skipped: 0,
                period: String::new(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> Date {
        Date::from_ymd(y, m, day).unwrap()
    }

    #[test]
    fn uncovered_splits_around_windows() {
        // [1, 10] less [3, 4] and [8, 20] leaves [1, 2] and [5, 7].
        let got = uncovered(
            Date(1),
            Date(10),
            &[(Date(8), Date(20)), (Date(3), Date(4))],
        );
        assert_eq!(got, vec![(Date(1), Date(2)), (Date(5), Date(7))]);
        // An open window covers everything.
        assert!(uncovered(Date::MIN, Date::MAX, &[(Date::MIN, Date::MAX)]).is_empty());
    }

    #[test]
    fn chain_ends_each_rate_the_day_before_the_next() {
        let rows: StatesFile = toml::from_str(
            "[[state]]\nfips='46'\nabbr='SD'\nname='X'\nauthority='X'\nsource='x'\nas_of=2026-11-23\nrates=[{rate='4.5%'},{rate='4.2%',from=2023-07-01}]",
        )
        .unwrap();
        let p = chain("f", "k", &rows.state[0].rates).unwrap();
        assert_eq!(
            p[0],
            Period {
                from: Date::MIN,
                to: d(2023, 6, 30),
                rate: Decimal::new(45, 3)
            }
        );
        assert_eq!(
            p[1],
            Period {
                from: d(2023, 7, 1),
                to: Date::MAX,
                rate: Decimal::new(42, 3)
            }
        );
    }

    #[test]
    fn percent_is_exact_and_bounded() {
        assert_eq!(percent("f", "k", "9.975%").unwrap(), Decimal::new(9975, 5));
        assert!(percent("f", "k", "0.07").is_err());
        assert!(percent("f", "k", "101%").is_err());
        assert!(percent("f", "k", "-1%").is_err());
    }

    #[test]
    fn ip_ranges_decode_gaps_and_units() {
        // 1.0.0.0/24 AU after a gap of 0x1000000 addresses, then 1.0.1.0-1.0.3.255 CN.
        let r = IpRanges::from_strs("AU,1000000,100\nCN,,300\n", "JP,2001000200000000,10000\n")
            .unwrap();
        assert_eq!(
            r.v4,
            vec![
                (0x0100_0000, 0x0100_00ff, *b"AU"),
                (0x0100_0100, 0x0100_03ff, *b"CN")
            ]
        );
        // 2001:2::/48 is 0x10000 /64 blocks starting at block 0x2001000200000000.
        let start = 0x2001_0002_0000_0000u128 << 64;
        assert_eq!(r.v6, vec![(start, start + (0x10000u128 << 64) - 1, *b"JP")]);
        assert!(IpRanges::from_strs("AU,ffffffff,2\n", "").is_err());
        // 2026-06-17T19:00:00Z is 20621 days and 19 hours after the epoch.
        let r = IpRanges::from_strs("# snapshot: 2026-06-17T19:00:00Z\nAU,,1\n", "").unwrap();
        assert_eq!(r.snapshot, Some(20_621 * 86_400 + 19 * 3_600));
        assert!(IpRanges::from_strs("# snapshot: 2026-13-17T19:00:00Z\n", "").is_err());
        assert!(IpRanges::from_strs("au,,1\n", "").is_err());
    }

    #[test]
    fn region_ranges_read_states_provinces_and_zips() {
        // 8.8.8.0/22 in California near ZIP 94043, then 24.48.0.0
        // /22 in Quebec; one IPv6 /36 (2^28 /64 blocks) in Texas without a ZIP.
        let r = IpRegionRanges::from_strs(
            "US-CA-94043,8080800,400\nUS-CA-94043,,100\nCA-QC,1027f300,400\n",
            "US-TX,2001000000000000,10000000\n",
        )
        .unwrap();
        assert_eq!(
            r.v4,
            vec![
                (0x0808_0800, 0x0808_0bff, 0),
                (0x0808_0c00, 0x0808_0cff, 0),
                (0x1830_0000, 0x1830_03ff, 1)
            ]
        );
        let p = |i: usize| {
            let p = &r.places[i];
            (
                p.country.as_str(),
                p.region.as_str(),
                p.approx_postal.as_str(),
            )
        };
        assert_eq!(p(0), ("US", "CA", "94043"));
        assert_eq!(p(1), ("CA", "QC", ""));
        assert_eq!(p(2), ("US", "TX", ""));
        let start = 0x2001_0000_0000_0000u128 << 64;
        assert_eq!(r.v6, vec![(start, start + (0x1000_0000u128 << 64) - 1, 2)]);
        // Not a state, a province with a ZIP, a ZIP of four digits, another country: refused
        // with the line named.
        for bad in [
            "US-XX,,1",
            "CA-ON-12345,,1",
            "US-CA-9404,,1",
            "MX-JA,,1",
            "US,,1",
        ] {
            let e = IpRegionRanges::from_strs(bad, "").unwrap_err().to_string();
            assert!(
                e.contains("line 1") && e.contains("US-ST-ZIP"),
                "{bad}: {e}"
            );
        }
    }
}
