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
//!
//! # Layout
//!
//! One module per file of `data/`, each with its file's shape, the validator that checks it
//! and what applying it adds to a builder: `taxonomy`, `us_states`, `us_rules`, `holidays`,
//! `countries`, `canada`, `ip` (`data/ip/`); the taxability matrix is `crate::matrix`.
//! Beside them: `values` (dates, percentages, amounts, rate chains and rule parts, read
//! alike in every file), `source` (compiled in or a folder) and `rewrite` (the product rules
//! of `us-rules.toml` and the matrix written over every jurisdiction of the builder).

use std::path::Path;

use levy_core::model::SourceEntry;
use levy_core::{BuildError, HolidaySpec, TableBuilder};

mod canada;
mod countries;
mod holidays;
mod ip;
mod rewrite;
mod source;
mod taxonomy;
mod us_rules;
mod us_states;
mod values;

pub use ip::{
    IpRanges, IpRegionRanges, IPV4_FILE, IPV4_REGIONS_FILE, IPV6_FILE, IPV6_REGIONS_FILE,
};
pub use source::{CuratedSource, EMBEDDED};

pub(crate) use taxonomy::Taxonomy;
pub(crate) use us_rules::Scope;
pub(crate) use values::{
    amount, date, invalid, nonempty, optional_interval, parse_toml, part, percent, sha256_hex,
    Part, PartRate, PartRow,
};

use canada::Canada;
use countries::Country;
use taxonomy::Code;
use us_rules::{Extra, Modifier};
use us_states::State;

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

/// One file read.
#[derive(Clone, Debug)]
struct FileEntry {
    name: String,
    sha256: String,
    rows: u64,
    /// Its horizon (see [`crate::horizon`]), from the earliest `as_of` in it.
    horizon: i32,
}

/// The manifest entry of a curated file.
fn file_entry(name: &str, text: &str, rows: usize) -> FileEntry {
    FileEntry {
        name: name.into(),
        sha256: sha256_hex(text),
        rows: rows as u64,
        horizon: horizon_of_text(text),
    }
}

/// The horizon of a curated file's text ([`crate::horizon::checked`] of the earliest
/// `as_of` date anywhere in it, at any depth); `i32::MAX` for a file that dates no fact
/// (the taxonomy) or that is not TOML.
pub(crate) fn horizon_of_text(text: &str) -> i32 {
    fn earliest(v: &toml::Value, out: &mut Option<levy_core::Date>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    if let (true, toml::Value::Datetime(d)) = (k == "as_of", v) {
                        let day = d.date.and_then(|d| {
                            levy_core::Date::from_ymd(
                                i32::from(d.year),
                                u32::from(d.month),
                                u32::from(d.day),
                            )
                        });
                        if let Some(day) = day {
                            *out = Some(out.map_or(day, |o| o.min(day)));
                        }
                    }
                    earliest(v, out);
                }
            }
            toml::Value::Array(a) => a.iter().for_each(|v| earliest(v, out)),
            _ => {}
        }
    }
    let mut day = None;
    if let Ok(v) = text.parse::<toml::Value>() {
        earliest(&v, &mut day);
    }
    day.map_or(i32::MAX, |d| crate::horizon::checked(d).0)
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

impl Curated {
    /// Parses and checks the curated files from their text, one validator per file.
    pub fn from_strs(text: &CuratedText<'_>) -> Result<Curated, CuratedError> {
        let tax = taxonomy::taxonomy(text.taxonomy)?;
        let states = us_states::us_states(text.us_states)?;
        let (extras, modifiers) = us_rules::us_rules(text.us_rules, &tax, &states)?;
        let holidays = holidays::holidays(text.holidays, &tax, &states)?;
        let countries = countries::countries(text.countries, &tax)?;
        let canada = canada::canada(text.canada)?;
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
                // The matrix writes no rules: an answer's horizon is its rules' inputs'.
                horizon: i32::MAX,
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
                publication: String::new(),
                horizon: f.horizon,
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
        self.apply_taxonomy(b, &mut stats)?;
        self.apply_states(b, (src[1], src[2]), &mut stats)?;
        self.apply_countries(b, src[4], &mut stats)?;
        self.apply_canada(b, src[5], &mut stats)?;
        self.apply_holidays(b, &mut stats)?;
        Ok(stats)
    }
}
