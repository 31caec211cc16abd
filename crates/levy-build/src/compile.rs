//! The build: inputs layered in order over the curated base, into one table.
//!
//! # Layering
//!
//! The curated base (taxonomy, categories, base jurisdictions) comes first; then each input
//! file in the order given (a folder's files in name order); then the curated product rules.
//! A later source refines an earlier one:
//!
//! * a rule for a jurisdiction and tax code replaces the part of an earlier source's rules
//!   for the same jurisdiction and code that its interval covers (the earlier rule is cut
//!   to what is left). Where the replaced rate differs, that is a [`ConflictKind::RuleReplaced`];
//! * a ZIP code assigned again gets the later source's jurisdictions
//!   ([`ConflictKind::ZipReassigned`] when they differ);
//! * an IP range overlapping an earlier one cuts it ([`ConflictKind::IpRangeReplaced`]).
//!
//! Within one source, the first rule written for a jurisdiction, code and date wins and a
//! second one is a [`ConflictKind::DuplicateRule`]. Every conflict is listed in the
//! [`Summary`]; nothing is dropped silently.
//!
//! # Jurisdiction codes this module defines
//!
//! * ZIP5 tables: the state is its FIPS code (`47`). Each non-zero county, city or special
//!   rate becomes a jurisdiction shared by every ZIP of the state with the same tax region
//!   name, level and rate: `{state FIPS}:{COUNTY|CITY|SPECIAL}:{TaxRegionName}:{rate}`, for
//!   example `47:COUNTY:ADAMS:0.0275`. A row whose state rate differs from the state's most
//!   common one (Nebraska, New Mexico and South Dakota have such rows) gets a state-level
//!   `{FIPS}:STATE:{TaxRegionName}:{rate}` instead of the state; a zero rate at any level
//!   gives no jurisdiction.
//! * SST files: state `SS`, county `SS` + 3-digit county FIPS, city `SS` + 5-digit place
//!   FIPS, other jurisdiction types `SS:TT:CODE`.
//! * CDTFA: California's 7.25% statewide base is split as CDTFA publishes it: 6% state
//!   (`06`) and 1.25% uniform local Bradley-Burns tax (`06:BRADLEY-BURNS`, county level);
//!   the rest of a location's combined rate is its district taxes, one jurisdiction per
//!   location: `06:CDTFA:CITY:{NAME}` or `06:CDTFA:COUNTY:{NAME}` (district level).
//!
//! # ZIP5 component repair
//!
//! In some ZIP5 rows the four component rates sum to 0.000001 less than the combined rate
//! because one component was exported from a binary float and truncated (`0.048499` for
//! Utah's 4.85%). When exactly one component plus the difference has at most five decimal
//! places, that component is corrected (and counted in the summary); otherwise the row is
//! bad.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use levy_core::model::SourceEntry;
use levy_core::{
    Coverage, Date, Decimal, IpLocationSpec, JurisdictionId, JurisdictionSpec, Level, RuleSpec,
    TableBuilder, TaxType,
};
use sha2::{Digest, Sha256};

use crate::curated::CuratedSource;
use crate::error::io_err;
pub use crate::error::BuildError;
use crate::parse::{self, BoundaryTarget, CdtfaKind, Parsed, RowError};
use crate::states;

/// The tax code every data source writes its general rates on.
pub const GENERAL: &str = "GENERAL_MERCHANDISE";
/// The tax code of SST food and drug rates.
pub const GROCERIES: &str = "GROCERIES";

/// The kind of an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// ZIP5 combined-rate table.
    Zip5,
    /// SST rate file.
    SstRates,
    /// SST boundary file.
    SstBoundaries,
    /// CDTFA California city and county list.
    Cdtfa,
    /// MaxMind-format IP database.
    IpMmdb,
    /// Plain CSV IP ranges.
    IpCsv,
    /// ZIP-to-county relationships (`zip,state,county_fips3`): places ZIP codes in the
    /// counties whose SST rates are loaded.
    ZipCounty,
}

impl InputKind {
    /// The name written in the manifest (`zip5`, `sst-rates`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Zip5 => "zip5",
            InputKind::SstRates => "sst-rates",
            InputKind::SstBoundaries => "sst-boundaries",
            InputKind::Cdtfa => "cdtfa",
            InputKind::IpMmdb => "ip-mmdb",
            InputKind::IpCsv => "ip-csv",
            InputKind::ZipCounty => "zip-county",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            InputKind::IpMmdb => "mmdb",
            _ => "csv",
        }
    }
}

/// One input: a file, or a folder whose files of the kind's extension (`.csv`, `.mmdb`) are
/// read in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// What the file is.
    pub kind: InputKind,
    /// File or folder.
    pub path: PathBuf,
}

impl Input {
    /// An input of `kind` at `path`.
    pub fn new(kind: InputKind, path: impl Into<PathBuf>) -> Input {
        Input {
            kind,
            path: path.into(),
        }
    }
}

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Inputs, layered in this order.
    pub inputs: Vec<Input>,
    /// The curated rules: compiled in, or a folder laid out like `data/`; `None` builds
    /// with a minimal taxonomy only.
    pub curated: Option<CuratedSource>,
    /// Fail on the first bad row instead of skipping and counting it.
    pub strict: bool,
    /// Header build time in Unix seconds. `None`: `SOURCE_DATE_EPOCH` when set, else the
    /// latest period start among the inputs (never the wall clock).
    pub build_time: Option<i64>,
    /// Draw progress bars on stderr.
    pub progress: bool,
    /// Before the inputs, place every active USPS ZIP code (the `zipcodes` package) in its
    /// state for every date, marked `STATE_ONLY` (as the embedded default does), so that a
    /// table answers for every US ZIP and the inputs refine the ZIPs they know.
    pub usps_zips: bool,
}

/// A row that was skipped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BadRow {
    /// The file it is in.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// The kinds of conflict between and within sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum ConflictKind {
    /// A later source replaced an earlier source's rule with a different rate.
    RuleReplaced,
    /// One source wrote two rules for the same jurisdiction, code and date; the first wins.
    DuplicateRule,
    /// A ZIP code was assigned other jurisdictions by a later row or source.
    ZipReassigned,
    /// A ZIP code appears in two states' tables; the USPS state's row is kept.
    ZipInTwoStates,
    /// An IP range overlapped an earlier one, which was cut.
    IpRangeReplaced,
}

/// A conflict, reported in the build summary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// Kind.
    pub kind: ConflictKind,
    /// The file whose row caused it.
    pub file: String,
    /// What happened.
    pub detail: String,
}

/// What a build did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// The manifest, in layering order.
    #[serde(skip)]
    pub sources: Vec<SourceEntry>,
    /// Rows skipped as bad.
    pub bad_rows: Vec<BadRow>,
    /// Conflicts between and within sources.
    pub conflicts: Vec<Conflict>,
    /// ZIP5 rows whose components were repaired (see the module docs).
    pub repaired_rows: u64,
    /// Other things worth knowing (rows without a rate, places not located).
    pub notes: Vec<String>,
    /// Header build time written.
    pub build_time: i64,
    /// Content hash of the table, hex.
    pub table_hash: String,
}

impl Summary {
    /// A short text report: sources, counts of bad rows and conflicts by kind, with the
    /// first few of each.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for e in &self.sources {
            let _ = writeln!(
                s,
                "  {:<15} {:<40} read {:>7}  skipped {:>5}  period {}",
                e.kind, e.name, e.rows_read, e.rows_skipped, e.period
            );
        }
        let _ = writeln!(s, "bad rows: {}", self.bad_rows.len());
        for b in self.bad_rows.iter().take(10) {
            let _ = writeln!(s, "  {}:{}: {}", b.file, b.line, b.message);
        }
        let mut by_kind: BTreeMap<ConflictKind, Vec<&Conflict>> = BTreeMap::new();
        for c in &self.conflicts {
            by_kind.entry(c.kind).or_default().push(c);
        }
        let _ = writeln!(s, "conflicts: {}", self.conflicts.len());
        for (k, list) in by_kind {
            let _ = writeln!(s, "  {k:?}: {}", list.len());
            for c in list.iter().take(5) {
                let _ = writeln!(s, "    {}: {}", c.file, c.detail);
            }
        }
        if self.repaired_rows > 0 {
            let _ = writeln!(
                s,
                "ZIP5 rows with repaired components: {}",
                self.repaired_rows
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        let _ = writeln!(
            s,
            "build time {}  table {}",
            self.build_time, self.table_hash
        );
        s
    }
}

/// A built table and what the build did.
#[derive(Debug)]
pub struct BuildReport {
    /// The table file's bytes.
    pub bytes: Vec<u8>,
    /// Summary.
    pub summary: Summary,
}

/// The files an input stands for, in name order.
pub fn expand(input: &Input) -> Result<Vec<PathBuf>, BuildError> {
    let meta = std::fs::metadata(&input.path).map_err(|e| io_err(&input.path, e))?;
    if !meta.is_dir() {
        return Ok(vec![input.path.clone()]);
    }
    let ext = input.kind.extension();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&input.path).map_err(|e| io_err(&input.path, e))? {
        let p = entry.map_err(|e| io_err(&input.path, e))?.path();
        let ok = p.is_file()
            && p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case(ext));
        if ok {
            files.push(p);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(BuildError::NoFiles {
            path: input.path.display().to_string(),
            ext,
        });
    }
    Ok(files)
}

/// The publisher's period of a file, from its name, and the first day of it.
///
/// * ZIP5 tables `..._YYYYMM.csv` -> `YYYY-MM`, the first of the month;
/// * SST files `SSR2026Q2...` / `SSB2026Q2...` -> `2026Q2`, the first day of the quarter;
/// * CDTFA `...M-D-YY.csv` -> `20YY-MM-DD`, that day.
pub fn period_of(kind: InputKind, name: &str) -> Option<(String, Date)> {
    let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
    match kind {
        InputKind::Zip5 => {
            let digits: String = stem
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            let digits: String = digits.chars().rev().collect();
            if digits.len() < 6 {
                return None;
            }
            let d = &digits[digits.len() - 6..];
            let (y, m) = (d[..4].parse().ok()?, d[4..].parse().ok()?);
            Some((format!("{y:04}-{m:02}"), Date::from_ymd(y, m, 1)?))
        }
        InputKind::SstRates | InputKind::SstBoundaries => {
            let b = stem.as_bytes();
            (0..b.len().saturating_sub(5)).find_map(|i| {
                let y = std::str::from_utf8(&b[i..i + 4]).ok()?;
                if !y.bytes().all(|c| c.is_ascii_digit()) || b[i + 4] != b'Q' {
                    return None;
                }
                let q = (b[i + 5] as char)
                    .to_digit(10)
                    .filter(|q| (1..=4).contains(q))?;
                let y: i32 = y.parse().ok()?;
                Some((format!("{y}Q{q}"), Date::from_ymd(y, 3 * (q - 1) + 1, 1)?))
            })
        }
        InputKind::Cdtfa => {
            let tail: String = stem
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            let parts: Vec<&str> = tail.split('-').filter(|p| !p.is_empty()).collect();
            if parts.len() != 3 {
                return None;
            }
            let (m, d): (u32, u32) = (parts[0].parse().ok()?, parts[1].parse().ok()?);
            let mut y: i32 = parts[2].parse().ok()?;
            if parts[2].len() == 2 {
                y += 2000;
            }
            let date = Date::from_ymd(y, m, d)?;
            Some((format!("{y:04}-{m:02}-{d:02}"), date))
        }
        InputKind::IpMmdb | InputKind::IpCsv | InputKind::ZipCounty => None,
    }
}

/// Adds the minimal taxonomy a table needs to be usable without the curated rules:
/// `GENERAL_MERCHANDISE`, `GROCERIES` under it, and the roots `EXEMPT` and `NON_TAXABLE`,
/// each with a category of the same name.
pub fn add_minimal_taxonomy(b: &mut TableBuilder) -> Result<(), levy_core::BuildError> {
    let codes: [(&str, Option<&str>, &str); 4] = [
        (GENERAL, None, "Tangible personal property"),
        (
            GROCERIES,
            Some(GENERAL),
            "Food and drug for home consumption",
        ),
        ("EXEMPT", None, "Exempt from tax"),
        ("NON_TAXABLE", None, "Not subject to tax"),
    ];
    for (name, parent, description) in codes {
        if !b.has_tax_code(name) {
            b.tax_code(name, parent, description)?;
        }
        b.category(name, name);
    }
    Ok(())
}

type RuleKey = (u32, String);
/// State, county, place and special jurisdictions of a boundary record.
type PlaceKey = (String, String, String, Vec<(String, String)>);

struct Ctx {
    b: TableBuilder,
    strict: bool,
    summary: Summary,
    pending: Vec<RuleSpec>,
    pending_iv: HashMap<RuleKey, Vec<(Date, Date, Decimal)>>,
    zip_owner: HashMap<u32, u32>,
    source_kinds: Vec<String>,
    /// IP ranges by start: (end, index into `ip_places`). Places are interned, so millions
    /// of ranges of a city database cost a few words each.
    ip4: BTreeMap<u32, (u32, u32)>,
    ip6: BTreeMap<u128, (u128, u32)>,
    ip_places: Vec<IpLocationSpec>,
    ip_place_ids: HashMap<IpLocationSpec, u32>,
    /// California's statewide split, for CDTFA lists.
    ca_base: crate::ca_base::CaBase,
    latest_period: Option<Date>,
    usps: Option<HashMap<u32, &'static zipcodes::Zipcode>>,
}

fn usps_index() -> HashMap<u32, &'static zipcodes::Zipcode> {
    zipcodes::database()
        .iter()
        .filter_map(|z| z.zip_code.parse::<u32>().ok().map(|n| (n, z)))
        .collect()
}

fn rate_type(level: Level, food: bool) -> String {
    let base = match level {
        Level::Country => "COUNTRY TAX",
        Level::State | Level::Province => "STATE SALES TAX",
        Level::County => "COUNTY SALES TAX",
        Level::City => "CITY SALES TAX",
        Level::District => "SPECIAL DISTRICT SALES TAX",
    };
    if food {
        format!("{base} (FOOD AND DRUG)")
    } else {
        base.to_string()
    }
}

/// `a` minus `cut`, as up to two intervals.
fn subtract(a: (Date, Date), cut: (Date, Date)) -> Vec<(Date, Date)> {
    if cut.1 < a.0 || cut.0 > a.1 {
        return vec![a];
    }
    let mut out = Vec::new();
    if cut.0 > a.0 {
        out.push((a.0, Date(cut.0 .0 - 1)));
    }
    if cut.1 < a.1 {
        out.push((Date(cut.1 .0 + 1), a.1));
    }
    out
}

impl Ctx {
    /// Reports a reader's row errors; returns how many rows they skipped.
    fn bad_rows(&mut self, file: &str, errors: Vec<RowError>) -> Result<u64, BuildError> {
        let n = errors.len() as u64;
        for e in errors {
            self.bad(file, e)?;
        }
        Ok(n)
    }

    /// The postal abbreviation of a state FIPS code; an unknown code is reported as a bad
    /// row of `file` at `line` and gives `None`.
    fn state_abbr(
        &mut self,
        file: &str,
        line: u64,
        fips: &str,
    ) -> Result<Option<&'static str>, BuildError> {
        match states::by_fips(fips) {
            Some((abbr, _)) => Ok(Some(abbr)),
            None => {
                self.bad(
                    file,
                    RowError {
                        line,
                        message: format!("unknown state FIPS {fips:?}"),
                    },
                )?;
                Ok(None)
            }
        }
    }

    fn bad(&mut self, file: &str, e: RowError) -> Result<(), BuildError> {
        if self.strict {
            return Err(BuildError::BadRow {
                file: file.to_string(),
                line: e.line,
                message: e.message,
            });
        }
        self.summary.bad_rows.push(BadRow {
            file: file.to_string(),
            line: e.line,
            message: e.message,
        });
        Ok(())
    }

    fn conflict(&mut self, kind: ConflictKind, file: &str, detail: String) {
        self.summary.conflicts.push(Conflict {
            kind,
            file: file.to_string(),
            detail,
        });
    }

    fn jur_code(&self, j: JurisdictionId) -> String {
        self.b
            .jurisdictions()
            .nth(j.0 as usize)
            .map(|(_, r)| r.code.clone())
            .unwrap_or_default()
    }

    /// The state jurisdiction, created with its region when new.
    fn state(&mut self, abbr: &str) -> Result<JurisdictionId, BuildError> {
        let (fips, name) = states::by_abbr(abbr).ok_or_else(|| {
            BuildError::Table(levy_core::BuildError::Invalid {
                what: "state",
                detail: format!("{abbr:?} is unknown"),
            })
        })?;
        if let Some(j) = self.b.find_jurisdiction(fips) {
            return Ok(j);
        }
        let j = self.b.jurisdiction(JurisdictionSpec {
            code: fips.to_string(),
            name: name.to_string(),
            level: Level::State,
            country: "US".into(),
            region: abbr.to_string(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })?;
        self.b.region("US", abbr, name, &[j], "")?;
        // A state the curated rules do not know: nothing says it levies no local taxes.
        self.b.region_coverage("US", abbr, Coverage::StateOnly)?;
        Ok(j)
    }

    /// A jurisdiction by code, created when new (an existing one is left as it is).
    fn jur(
        &mut self,
        code: &str,
        name: &str,
        level: Level,
        region: &str,
    ) -> Result<JurisdictionId, BuildError> {
        if let Some(j) = self.b.find_jurisdiction(code) {
            return Ok(j);
        }
        Ok(self.b.jurisdiction(JurisdictionSpec {
            code: code.to_string(),
            name: name.to_string(),
            level,
            country: "US".into(),
            region: region.to_string(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })?)
    }

    /// The general rate an earlier source than `source` gives jurisdiction `j` on `day`.
    fn state_rate_on(&self, j: JurisdictionId, day: Date, source: u32) -> Option<Decimal> {
        self.b
            .rules()
            .iter()
            .find(|r| {
                r.jurisdiction == j
                    && r.source != source
                    && r.tax_code == GENERAL
                    && r.from <= day
                    && day <= r.to
                    && r.band == (Decimal::ZERO, None)
                    && r.unit_range == (Decimal::ZERO, None)
                    && r.fee.is_zero()
            })
            .map(|r| r.rate)
    }

    /// Queues a rule of the current source.
    #[allow(clippy::too_many_arguments)]
    fn rule(
        &mut self,
        j: JurisdictionId,
        code: &str,
        rate: Decimal,
        from: Date,
        to: Date,
        level: Level,
        food: bool,
        source: u32,
        file: &str,
    ) -> Result<(), BuildError> {
        let key = (j.0, code.to_string());
        let list = self.pending_iv.entry(key).or_default();
        if let Some(&(f, t, r)) = list.iter().find(|(f, t, _)| *f <= to && from <= *t) {
            let detail = format!(
                "{} {code}: {rate} for {from}..{to} overlaps {r} for {f}..{t} written earlier; kept the first",
                self.jur_code(j)
            );
            self.conflict(ConflictKind::DuplicateRule, file, detail);
            return Ok(());
        }
        list.push((from, to, rate));
        let mut spec = RuleSpec::flat(j, code, rate, from, to, &rate_type(level, food));
        spec.source = source;
        self.pending.push(spec);
        Ok(())
    }

    /// Layers the current source's rules over the earlier ones.
    fn commit(&mut self, source: u32, file: &str) -> Result<(), BuildError> {
        let pending = std::mem::take(&mut self.pending);
        let iv = std::mem::take(&mut self.pending_iv);
        if pending.is_empty() {
            return Ok(());
        }
        let mut cut_pieces = Vec::new();
        let mut conflicts = Vec::new();
        for r in self.b.rules() {
            if r.source == source {
                continue;
            }
            let Some(news) = iv.get(&(r.jurisdiction.0, r.tax_code.clone())) else {
                continue;
            };
            let mut pieces = vec![(r.from, r.to)];
            for &(f, t, rate) in news {
                if f <= r.to && r.from <= t && rate != r.rate {
                    conflicts.push(format!(
                        "{} {}: {} ({}..{}) replaced by {} from {}..{}",
                        r.jurisdiction.0, r.tax_code, r.rate, r.from, r.to, rate, f, t
                    ));
                }
                pieces = pieces
                    .into_iter()
                    .flat_map(|p| subtract(p, (f, t)))
                    .collect();
            }
            if pieces != [(r.from, r.to)] {
                for (f, t) in pieces {
                    let mut s = r.clone();
                    s.from = f;
                    s.to = t;
                    cut_pieces.push(s);
                }
            }
        }
        for c in conflicts {
            // Name the jurisdiction by code rather than by id.
            let (id, rest) = c.split_once(' ').unwrap_or(("", &c));
            let code = id
                .parse::<u32>()
                .map(|i| self.jur_code(JurisdictionId(i)))
                .unwrap_or_default();
            self.conflict(ConflictKind::RuleReplaced, file, format!("{code} {rest}"));
        }
        self.b.retain_rules(|r| {
            r.source == source || !iv.contains_key(&(r.jurisdiction.0, r.tax_code.clone()))
        });
        for s in cut_pieces.into_iter().chain(pending) {
            self.b.rule(s)?;
        }
        Ok(())
    }

    /// Assigns a ZIP code to `js` from `from` to `to` with `coverage`, over what earlier
    /// sources said for those days (outside them the earlier assignment keeps answering);
    /// reports each replaced period whose jurisdictions differ.
    #[allow(clippy::too_many_arguments)]
    fn set_zip(
        &mut self,
        zip: u32,
        state: &str,
        city: &str,
        js: &[JurisdictionId],
        (from, to): (Date, Date),
        coverage: Coverage,
        source: u32,
        file: &str,
    ) -> Result<(), BuildError> {
        let new_jset = self.b.jset(js)?;
        let old_state = self.b.zip_record(zip).map(|r| r.state.clone());
        let replaced = self
            .b
            .zip_period(zip, state, city, js, from, to, coverage, source)?;
        let describe = |ctx: &Ctx, jset: u32| {
            ctx.b
                .jset_members(jset)
                .iter()
                .map(|&j| ctx.jur_code(j))
                .collect::<Vec<_>>()
                .join("+")
        };
        for p in replaced {
            let moved_state = old_state.as_deref().is_some_and(|s| s != state);
            if p.jset == new_jset && !moved_state {
                continue;
            }
            let same = p.source == source;
            let detail = format!(
                "ZIP {zip:05} {state} {}..{}: {} -> {}{}",
                Date(p.from),
                Date(p.to),
                describe(self, p.jset),
                describe(self, new_jset),
                if same {
                    " (written twice in this file; the later row wins)"
                } else {
                    ""
                }
            );
            self.conflict(ConflictKind::ZipReassigned, file, detail);
        }
        self.zip_owner.insert(zip, source);
        Ok(())
    }

    fn add_ip(&mut self, start: IpAddr, end: IpAddr, loc: IpLocationSpec, file: &str) {
        let place = match self.ip_place_ids.get(&loc) {
            Some(&id) => id,
            None => {
                let id = self.ip_places.len() as u32;
                self.ip_places.push(loc.clone());
                self.ip_place_ids.insert(loc, id);
                id
            }
        };
        let (cut, shown) = match (start, end) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (
                layer_range(&mut self.ip4, u32::from(a), u32::from(b), place),
                (start, end),
            ),
            (IpAddr::V6(a), IpAddr::V6(b)) => (
                layer_range(&mut self.ip6, u128::from(a), u128::from(b), place),
                (start, end),
            ),
            _ => return,
        };
        // A finer place in the same country refines a coarser range; only a change of
        // country is a conflict worth reporting.
        let country = &self.ip_places[place as usize].country;
        let replaced = cut
            .iter()
            .filter(|&&old| self.ip_places[old as usize].country != *country)
            .count();
        if replaced > 0 {
            let detail = format!(
                "{}..{} ({}) replaced {replaced} earlier range(s) of another country",
                shown.0, shown.1, country
            );
            self.conflict(ConflictKind::IpRangeReplaced, file, detail);
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Builds a table from `opts`.
pub fn build(opts: &BuildOptions) -> Result<BuildReport, BuildError> {
    let mut files = Vec::new();
    for input in &opts.inputs {
        for f in expand(input)? {
            files.push((input.kind, f));
        }
    }
    let mut ctx = Ctx {
        b: TableBuilder::new(),
        strict: opts.strict,
        summary: Summary::default(),
        pending: Vec::new(),
        pending_iv: HashMap::new(),
        zip_owner: HashMap::new(),
        source_kinds: Vec::new(),
        ip4: BTreeMap::new(),
        ip6: BTreeMap::new(),
        ip_places: Vec::new(),
        ip_place_ids: HashMap::new(),
        ca_base: {
            // A fact needed to read any CDTFA list, so read even without curated rules.
            let source = opts.curated.clone().unwrap_or(CuratedSource::Embedded);
            let text = source
                .read(crate::ca_base::FILE)
                .map_err(|e| BuildError::Curated(e.to_string()))?
                .map_or_else(|| CuratedSource::Embedded.require(crate::ca_base::FILE), Ok)
                .map_err(|e| BuildError::Curated(e.to_string()))?;
            crate::ca_base::parse(&text).map_err(BuildError::Curated)?
        },
        latest_period: None,
        usps: None,
    };
    let curated = match &opts.curated {
        Some(source) => {
            let c = crate::curated_glue::base(source, &mut ctx.b)?;
            for (s, e, place) in crate::curated_glue::ip_ranges(source, &mut ctx.b)? {
                ctx.add_ip(s, e, place, "curated");
            }
            Some(c)
        }
        None => None,
    };
    ctx.source_kinds = ctx.b.sources().iter().map(|s| s.kind.clone()).collect();
    add_minimal_taxonomy(&mut ctx.b)?;
    if opts.usps_zips {
        usps_zips(&mut ctx)?;
    }

    let bar = if opts.progress {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    for (kind, path) in &files {
        bar.set_message(file_name(path));
        ingest(&mut ctx, *kind, path)?;
        bar.inc(1);
    }
    bar.finish_and_clear();

    if let Some(c) = &curated {
        crate::curated_glue::rules(c, &mut ctx.b)?;
    }
    let unrated: Vec<String> = {
        let rated: HashSet<u32> = ctx.b.rules().iter().map(|r| r.jurisdiction.0).collect();
        ctx.b
            .jurisdictions()
            .filter(|(j, _)| !rated.contains(&j.0))
            .map(|(_, r)| r.code.clone())
            .collect()
    };
    if !unrated.is_empty() {
        let mut list = unrated.clone();
        list.truncate(10);
        ctx.summary.notes.push(format!(
            "{} jurisdictions have no rates (first: {})",
            unrated.len(),
            list.join(", ")
        ));
    }
    finish_ip(&mut ctx)?;
    // Region-level coverage of US states: `FULL` only where the curated rules say no local
    // sales tax exists; without curated rules, every state's region-level answer is
    // `STATE_ONLY`.
    let no_local = match &opts.curated {
        Some(source) => match source
            .read(crate::local_taxes::FILE)
            .map_err(|e| BuildError::Curated(e.to_string()))?
        {
            Some(text) => crate::local_taxes::parse(&text).map_err(BuildError::Curated)?,
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    crate::local_taxes::apply(&no_local, &mut ctx.b);
    // How intrastate sales are sourced, state by state (destination where not listed).
    if let Some(source) = &opts.curated {
        if let Some(text) = source
            .read(crate::sourcing::FILE)
            .map_err(|e| BuildError::Curated(e.to_string()))?
        {
            let rows = crate::sourcing::parse(&text).map_err(BuildError::Curated)?;
            crate::sourcing::apply(&rows, &mut ctx.b);
        }
        // Where a seller may round a sale's tax once per invoice.
        if let Some(text) = source
            .read(crate::rounding::FILE)
            .map_err(|e| BuildError::Curated(e.to_string()))?
        {
            let states = crate::rounding::parse(&text).map_err(BuildError::Curated)?;
            crate::rounding::apply(&states, &mut ctx.b);
        }
    }

    let build_time = match opts.build_time {
        Some(t) => t,
        None => match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) if !v.trim().is_empty() => v
                .trim()
                .parse::<i64>()
                .map_err(|_| BuildError::SourceDateEpoch(v.clone()))?,
            _ => ctx.latest_period.map(|d| d.0 as i64 * 86_400).unwrap_or(0),
        },
    };
    let mut summary = std::mem::take(&mut ctx.summary);
    summary.sources = ctx.b.sources().to_vec();
    let bytes = ctx.b.build(build_time)?;
    summary.build_time = build_time;
    summary.table_hash = levy_core::Table::from_bytes(&bytes)
        .map(|t| t.hash_hex())
        .unwrap_or_default();
    Ok(BuildReport { bytes, summary })
}

fn finish_ip(ctx: &mut Ctx) -> Result<(), BuildError> {
    // The places go to the builder once, moved, in the order interned; then the ranges,
    // adjacent ones of the same place merged, by the builder's id of their place.
    ctx.ip_place_ids = HashMap::new();
    let mut ids = Vec::with_capacity(ctx.ip_places.len());
    for place in std::mem::take(&mut ctx.ip_places) {
        ids.push(ctx.b.ip_place(place)?);
    }
    let v4 = merged(std::mem::take(&mut ctx.ip4));
    for (s, e, place) in v4 {
        ctx.b.ipv4_range_at(s, e, ids[place as usize])?;
    }
    let v6 = merged(std::mem::take(&mut ctx.ip6));
    for (s, e, place) in v6 {
        ctx.b.ipv6_range_at(s, e, ids[place as usize])?;
    }
    Ok(())
}

/// The ranges of a layer in order, adjacent ranges of the same place joined.
fn merged<K: Copy + Eq + num_succ::Succ>(map: BTreeMap<K, (K, u32)>) -> Vec<(K, K, u32)> {
    let mut out: Vec<(K, K, u32)> = Vec::new();
    for (s, (e, place)) in map {
        if let Some(last) = out.last_mut() {
            if last.1.succ() == Some(s) && last.2 == place {
                last.1 = e;
                continue;
            }
        }
        out.push((s, e, place));
    }
    out
}

/// Puts `start..=end` (of `place`) into a layer, cutting every earlier range it overlaps to
/// what lies outside it; returns the places of the ranges it cut.
fn layer_range<K: Copy + Ord + num_succ::Succ>(
    map: &mut BTreeMap<K, (K, u32)>,
    start: K,
    end: K,
    place: u32,
) -> Vec<u32> {
    // Earlier ranges start at or before `end`; those whose end reaches `start` overlap.
    let overlapping: Vec<K> = map
        .range(..=end)
        .rev()
        .take_while(|(_, (e, _))| *e >= start)
        .map(|(k, _)| *k)
        .collect();
    // Ranges are disjoint, so walking back from `end` stops at the first one that ends
    // before `start`; nothing before it can overlap.
    let mut cut = Vec::with_capacity(overlapping.len());
    for k in overlapping {
        let Some((e, old)) = map.remove(&k) else {
            continue;
        };
        cut.push(old);
        if k < start {
            if let Some(before) = start.pred() {
                map.insert(k, (before, old));
            }
        }
        if e > end {
            if let Some(after) = end.succ() {
                map.insert(after, (e, old));
            }
        }
    }
    map.insert(start, (end, place));
    cut
}

/// Successor and predecessor of address integers, without overflow.
mod num_succ {
    /// An address type with a next and a previous value.
    pub(super) trait Succ: Sized {
        /// `self + 1`, unless at the top.
        fn succ(self) -> Option<Self>;
        /// `self - 1`, unless at zero.
        fn pred(self) -> Option<Self>;
    }
    impl Succ for u32 {
        fn succ(self) -> Option<u32> {
            self.checked_add(1)
        }
        fn pred(self) -> Option<u32> {
            self.checked_sub(1)
        }
    }
    impl Succ for u128 {
        fn succ(self) -> Option<u128> {
            self.checked_add(1)
        }
        fn pred(self) -> Option<u128> {
            self.checked_sub(1)
        }
    }
}

fn ingest(ctx: &mut Ctx, kind: InputKind, path: &Path) -> Result<(), BuildError> {
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    let name = file_name(path);
    let period = period_of(kind, &name);
    if let Some((_, d)) = &period {
        ctx.latest_period = Some(ctx.latest_period.map_or(*d, |l| l.max(*d)));
    }
    let source = ctx.b.add_source(SourceEntry {
        kind: kind.as_str().to_string(),
        name: name.clone(),
        sha256: hex::encode(Sha256::digest(&bytes)),
        rows_read: 0,
        rows_skipped: 0,
        period: period.as_ref().map(|p| p.0.clone()).unwrap_or_default(),
    });
    ctx.source_kinds.push(kind.as_str().to_string());
    let from = period.map(|p| p.1);
    let display = path.display().to_string();
    let (read, skipped) = match kind {
        InputKind::Zip5 => {
            let parsed = parse::parse_zip5(&bytes[..]).map_err(|e| io_err(path, e))?;
            zip5(ctx, parsed, from.unwrap_or(Date::MIN), source, &display)?
        }
        InputKind::SstRates => {
            let parsed = parse::parse_sst_rates(&bytes[..]).map_err(|e| io_err(path, e))?;
            sst_rates(ctx, parsed, source, &display)?
        }
        InputKind::SstBoundaries => {
            let parsed = parse::parse_sst_boundaries(&bytes[..]).map_err(|e| io_err(path, e))?;
            sst_boundaries(ctx, parsed, source, &display)?
        }
        InputKind::Cdtfa => {
            let parsed = parse::parse_cdtfa(&bytes[..]).map_err(|e| io_err(path, e))?;
            cdtfa(ctx, parsed, from.unwrap_or(Date::MIN), source, &display)?
        }
        InputKind::IpCsv => {
            let parsed = parse::parse_ip_csv(&bytes[..]).map_err(|e| io_err(path, e))?;
            ip_csv(ctx, parsed, &display)?
        }
        InputKind::ZipCounty => {
            let parsed = parse::parse_zip_county(&bytes[..]).map_err(|e| io_err(path, e))?;
            zip_county(ctx, parsed, source, &display)?
        }
        InputKind::IpMmdb => {
            // Streamed: each network goes straight into the layer, never into a list of
            // all of them.
            let mut n = 0u64;
            let skipped = crate::mmdb::for_each(&bytes, |start, end, place| {
                ctx.add_ip(start, end, place, &display);
                n += 1;
            })
            .map_err(|message| BuildError::Mmdb {
                path: display.clone(),
                message,
            })?;
            (n, skipped)
        }
    };
    ctx.commit(source, &display)?;
    if let Some(e) = ctx.b.source_mut(source) {
        e.rows_read = read;
        e.rows_skipped = skipped;
    }
    Ok(())
}

fn zip5(
    ctx: &mut Ctx,
    parsed: Parsed<parse::Zip5Row>,
    from: Date,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    // Repair components, then find each state's most common state rate.
    let mut rows = Vec::with_capacity(parsed.rows.len());
    for (line, mut row) in parsed.rows {
        let sum = row.state_rate + row.county_rate + row.city_rate + row.special_rate;
        if sum != row.combined {
            let diff = row.combined - sum;
            let mut fixable: Vec<usize> = Vec::new();
            for (i, c) in [
                row.state_rate,
                row.county_rate,
                row.city_rate,
                row.special_rate,
            ]
            .iter()
            .enumerate()
            {
                let fixed = (*c + diff).normalize();
                if !c.is_zero() && !fixed.is_sign_negative() && fixed.scale() <= 5 {
                    fixable.push(i);
                }
            }
            if diff.abs() <= Decimal::new(1, 6) && fixable.len() == 1 {
                let c = match fixable[0] {
                    0 => &mut row.state_rate,
                    1 => &mut row.county_rate,
                    2 => &mut row.city_rate,
                    _ => &mut row.special_rate,
                };
                *c = (*c + diff).normalize();
                ctx.summary.repaired_rows += 1;
            } else {
                skipped += 1;
                let message = format!(
                    "component rates sum to {sum}, combined rate is {}",
                    row.combined
                );
                ctx.bad(file, RowError { line, message })?;
                continue;
            }
        }
        if states::by_abbr(&row.state).is_none() {
            skipped += 1;
            ctx.bad(
                file,
                RowError {
                    line,
                    message: format!("unknown state {:?}", row.state),
                },
            )?;
            continue;
        }
        rows.push((line, row));
    }
    let mut counts: HashMap<(String, Decimal), (usize, usize)> = HashMap::new();
    for (i, (_, row)) in rows.iter().enumerate() {
        if !row.state_rate.is_zero() {
            counts
                .entry((row.state.clone(), row.state_rate))
                .or_insert((0, i))
                .0 += 1;
        }
    }
    let mut main_rate: HashMap<String, (usize, usize, Decimal)> = HashMap::new();
    for ((state, rate), (n, first)) in counts {
        let e = main_rate.entry(state).or_insert((n, first, rate));
        // Most rows wins; ties go to the rate seen first, so the choice is deterministic.
        if n > e.0 || (n == e.0 && first < e.1) {
            *e = (n, first, rate);
        }
    }
    let mut written: HashSet<String> = HashSet::new();
    let mut read = 0u64;
    for (_, row) in rows {
        let (fips, _) = states::by_abbr(&row.state).expect("checked above");
        let mut js = Vec::with_capacity(4);
        let state_j = ctx.state(&row.state)?;
        let parts = [
            (Level::State, "STATE", row.state_rate),
            (Level::County, "COUNTY", row.county_rate),
            (Level::City, "CITY", row.city_rate),
            (Level::District, "SPECIAL", row.special_rate),
        ];
        for (level, label, rate) in parts {
            if rate.is_zero() {
                continue;
            }
            let (j, code) =
                if level == Level::State && main_rate.get(&row.state).map(|m| m.2) == Some(rate) {
                    (state_j, fips.to_string())
                } else {
                    let code = format!("{fips}:{label}:{}:{rate}", row.region_name);
                    (ctx.jur(&code, &row.region_name, level, &row.state)?, code)
                };
            // The file speaks for its month on; a state rate an earlier source (the curated
            // chain) already gives on that day is left to that source, so that its
            // scheduled changes still take effect (a December file does not freeze the
            // state's rate for every later date).
            let known = j == state_j && ctx.state_rate_on(state_j, from, source) == Some(rate);
            if written.insert(code) && !known {
                ctx.rule(
                    j,
                    GENERAL,
                    rate,
                    from,
                    Date::MAX,
                    level,
                    false,
                    source,
                    file,
                )?;
            }
            js.push(j);
        }
        read += 1;
        if let Some(old) = ctx.b.zip_record(row.zip) {
            let owner_kind = ctx
                .zip_owner
                .get(&row.zip)
                .and_then(|&s| ctx.source_kinds.get(s as usize));
            if old.state != row.state
                && owner_kind.map(String::as_str) == Some(InputKind::Zip5.as_str())
            {
                let usps = ctx.usps.get_or_insert_with(usps_index);
                let usps_state = usps
                    .get(&row.zip)
                    .map(|z| z.state.clone())
                    .unwrap_or_default();
                let keep_new = usps_state == row.state;
                let old_state = old.state.clone();
                let detail = format!(
                    "ZIP {:05} is in the {} and {} tables; USPS places it in {}; kept {}",
                    row.zip,
                    old_state,
                    row.state,
                    if usps_state.is_empty() {
                        "neither"
                    } else {
                        &usps_state
                    },
                    if keep_new { &row.state } else { &old_state }
                );
                ctx.conflict(ConflictKind::ZipInTwoStates, file, detail);
                // The row's jurisdictions stay in the table (as a set) either way.
                ctx.b.jset(&js)?;
                if !keep_new {
                    continue;
                }
                ctx.b.zip_period(
                    row.zip,
                    &row.state,
                    &row.region_name,
                    &js,
                    from,
                    Date::MAX,
                    Coverage::Full,
                    source,
                )?;
                ctx.zip_owner.insert(row.zip, source);
                continue;
            }
        }
        // The file names every level of its ZIPs (a zero rate is a level that taxes
        // nothing), from its month on, until a later source says otherwise.
        ctx.set_zip(
            row.zip,
            &row.state,
            &row.region_name,
            &js,
            (from, Date::MAX),
            Coverage::Full,
            source,
            file,
        )?;
    }
    Ok((read, skipped))
}

fn sst_code(state: &str, jtype: &str, code: &str) -> (String, Level) {
    match jtype {
        "45" => (state.to_string(), Level::State),
        "00" => (format!("{state}{code}"), Level::County),
        "01" => (format!("{state}{code}"), Level::City),
        _ => (format!("{state}:{jtype}:{code}"), Level::District),
    }
}

fn sst_rates(
    ctx: &mut Ctx,
    parsed: Parsed<parse::SstRateRow>,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    let mut read = 0;
    for (line, row) in parsed.rows {
        let Some(abbr) = ctx.state_abbr(file, line, &row.state)? else {
            skipped += 1;
            continue;
        };
        let state_j = ctx.state(abbr)?;
        let (code, level) = sst_code(&row.state, &row.jtype, &row.code);
        let j = if level == Level::State {
            state_j
        } else {
            ctx.jur(&code, &code, level, abbr)?
        };
        ctx.rule(
            j,
            GENERAL,
            row.general,
            row.from,
            row.to,
            level,
            false,
            source,
            file,
        )?;
        if row.food != row.general {
            ctx.rule(
                j, GROCERIES, row.food, row.from, row.to, level, true, source, file,
            )?;
        }
        read += 1;
    }
    Ok((read, skipped))
}

fn sst_boundaries(
    ctx: &mut Ctx,
    parsed: Parsed<parse::BoundaryRow>,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    let mut read = 0;
    let mut zip_cache: HashMap<PlaceKey, Vec<JurisdictionId>> = HashMap::new();
    for (line, row) in parsed.rows {
        let Some(abbr) = ctx.state_abbr(file, line, &row.state)? else {
            skipped += 1;
            continue;
        };
        let key = (
            row.state.clone(),
            row.county.clone(),
            row.place.clone(),
            row.specials.clone(),
        );
        let js = match zip_cache.get(&key) {
            Some(js) => js.clone(),
            None => {
                let mut js = vec![ctx.state(abbr)?];
                if !row.county.is_empty() {
                    let code = format!("{}{}", row.state, row.county);
                    js.push(ctx.jur(&code, &code, Level::County, abbr)?);
                }
                if !row.place.is_empty() {
                    let code = format!("{}{}", row.state, row.place);
                    js.push(ctx.jur(&code, &code, Level::City, abbr)?);
                }
                for (t, c) in &row.specials {
                    let (code, level) = sst_code(&row.state, t, c);
                    js.push(ctx.jur(&code, &code, level, abbr)?);
                }
                zip_cache.insert(key, js.clone());
                js
            }
        };
        match row.target {
            BoundaryTarget::Address {
                zip5,
                low,
                high,
                parity,
                ref street,
            } => {
                ctx.b
                    .street(zip5, street, low, high, parity, &js, row.from, row.to)?;
            }
            BoundaryTarget::Zip4 {
                zip_low,
                plus4_low,
                zip_high,
                plus4_high,
            } => {
                for z in zip_low..=zip_high {
                    let lo = if z == zip_low { plus4_low } else { 0 };
                    let hi = if z == zip_high { plus4_high } else { 9999 };
                    ctx.b.zip4(z, lo, hi, &js, row.from, row.to)?;
                }
            }
            BoundaryTarget::Zip5 { zip_low, zip_high } => {
                for z in zip_low..=zip_high {
                    ctx.b.zip4(z, 0, 9999, &js, row.from, row.to)?;
                    // The ZIP itself, for the record's own dates (earlier and later
                    // records of the same ZIP keep theirs).
                    {
                        let city = match ctx.b.zip_record(z) {
                            Some(r) => Some(r.city.clone()),
                            None => {
                                let usps = ctx.usps.get_or_insert_with(usps_index);
                                usps.get(&z).map(|u| u.city.to_uppercase())
                            }
                        };
                        if let Some(city) = city {
                            ctx.set_zip(
                                z,
                                abbr,
                                &city,
                                &js,
                                (row.from, row.to),
                                Coverage::Full,
                                source,
                                file,
                            )?;
                        }
                    }
                }
            }
        }
        read += 1;
    }
    Ok((read, skipped))
}

/// A place name as a key: ASCII upper case without accents, punctuation or spaces, `SAINT`
/// for `ST`, no leading `CITY OF`; so that CDTFA's `St. Helena`, `La Cañada Flintridge`,
/// `City of Commerce` and `McFarland` meet USPS's `SAINT HELENA`, `LA CANADA FLINTRIDGE`,
/// `COMMERCE` and `MC FARLAND`.
fn place_key(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'Á' => 'A',
            'é' | 'è' | 'ê' | 'ë' | 'É' => 'E',
            'í' | 'ì' | 'î' | 'ï' | 'Í' => 'I',
            'ó' | 'ò' | 'ô' | 'ö' | 'Ó' => 'O',
            'ú' | 'ù' | 'û' | 'ü' | 'Ú' => 'U',
            'ñ' | 'Ñ' => 'N',
            c => c.to_ascii_uppercase(),
        })
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut words: Vec<&str> = upper.split_whitespace().collect();
    if words.len() > 2 && words[0] == "CITY" && words[1] == "OF" {
        words.drain(..2);
    }
    words
        .iter()
        .map(|w| if *w == "ST" { "SAINT" } else { w })
        .collect()
}

/// A CDTFA location's claim on a ZIP code.
#[derive(Clone)]
struct Claim {
    /// The jurisdictions of the location.
    js: Vec<JurisdictionId>,
    /// The location's combined rate.
    rate: Decimal,
}

fn cdtfa(
    ctx: &mut Ctx,
    parsed: Parsed<parse::CdtfaRow>,
    from: Date,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    let split = ctx.ca_base;
    let state = ctx.state("CA")?;
    ctx.rule(
        state,
        GENERAL,
        split.state,
        from,
        Date::MAX,
        Level::State,
        false,
        source,
        file,
    )?;
    let bb = ctx.jur(
        "06:BRADLEY-BURNS",
        "CALIFORNIA UNIFORM LOCAL (BRADLEY-BURNS)",
        Level::County,
        "CA",
    )?;
    ctx.rule(
        bb,
        GENERAL,
        split.uniform_local,
        from,
        Date::MAX,
        Level::County,
        false,
        source,
        file,
    )?;
    let base = split.state + split.uniform_local;
    // An answer for California as a whole (no ZIP) holds the uniform local part too: it is
    // levied everywhere.
    ctx.b.region_jurisdictions("US", "CA", &[state, bb])?;

    // California ZIPs (USPS, from the zipcodes package): primary city, the other city names
    // USPS accepts for the ZIP, and county.
    struct UspsZip {
        zip: u32,
        city: String,
        county: String,
    }
    let mut zips: Vec<UspsZip> = Vec::new();
    let mut by_primary: HashMap<String, Vec<u32>> = HashMap::new();
    let mut by_acceptable: HashMap<String, Vec<u32>> = HashMap::new();
    for z in zipcodes::database().iter().filter(|z| z.state == "CA") {
        let Ok(n) = z.zip_code.parse::<u32>() else {
            continue;
        };
        by_primary.entry(place_key(&z.city)).or_default().push(n);
        for a in &z.acceptable_cities {
            by_acceptable.entry(place_key(a)).or_default().push(n);
        }
        let county = z.county.to_uppercase();
        zips.push(UspsZip {
            zip: n,
            city: z.city.to_uppercase(),
            county: county
                .strip_suffix(" COUNTY")
                .unwrap_or(&county)
                .to_string(),
        });
    }

    let mut read = 0;
    let mut noted = 0;
    let mut unlocated = Vec::new();
    let mut placed = 0usize;
    let mut placed_by_other_name = 0usize;
    // Per ZIP: the city whose USPS primary name it is, and cities USPS also accepts there.
    let mut primary: HashMap<u32, Claim> = HashMap::new();
    let mut secondary: BTreeMap<u32, Vec<Claim>> = BTreeMap::new();
    let mut counties: HashMap<String, Claim> = HashMap::new();
    let mut headers = Vec::new();
    for (line, row) in parsed.rows {
        let Some(rate) = row.rate else {
            // A county's header row (`Kern County`: "please refer to the applicable tax
            // rates for the unincorporated area and incorporated cities"): its area is its
            // cities' and its unincorporated area's rows.
            skipped += 1;
            noted += 1;
            headers.push((place_key(&row.county), row.location.clone()));
            continue;
        };
        if rate < base {
            skipped += 1;
            let message = format!("rate {rate} is below California's statewide {base}");
            ctx.bad(file, RowError { line, message })?;
            continue;
        }
        read += 1;
        let name = row.location.to_uppercase();
        let mut js = vec![state, bb];
        let district = rate - base;
        let kind = match row.kind {
            CdtfaKind::City => "CITY",
            CdtfaKind::County => "COUNTY",
        };
        if !district.is_zero() {
            let code = format!("06:CDTFA:{kind}:{name}");
            let j = ctx.jur(
                &code,
                &format!("{name} DISTRICT TAXES"),
                Level::District,
                "CA",
            )?;
            ctx.rule(
                j,
                GENERAL,
                district,
                from,
                Date::MAX,
                Level::District,
                false,
                source,
                file,
            )?;
            js.push(j);
        }
        let claim = Claim { js, rate };
        match row.kind {
            CdtfaKind::City => {
                let key = place_key(&row.location);
                let strong = by_primary.get(&key);
                let weak = by_acceptable.get(&key);
                if strong.is_none() && weak.is_none() {
                    unlocated.push(row.location.clone());
                    continue;
                }
                placed += 1;
                if strong.is_none() {
                    placed_by_other_name += 1;
                }
                for &z in strong.into_iter().flatten() {
                    primary.insert(z, claim.clone());
                }
                for &z in weak.into_iter().flatten() {
                    secondary.entry(z).or_default().push(claim.clone());
                }
            }
            CdtfaKind::County => {
                let county = place_key(&row.county);
                if zips.iter().any(|z| place_key(&z.county) == county) {
                    placed += 1;
                    counties.insert(county, claim);
                } else {
                    unlocated.push(row.location.clone());
                }
            }
        }
    }

    // Each ZIP: its primary city's rate; else the one city USPS also accepts there; else
    // its county's unincorporated rate. Where another location that shares the ZIP has a
    // different rate, the ZIP is split between jurisdictions: the answer says PARTIAL.
    let mut split_zips = Vec::new();
    let mut state_only = Vec::new();
    for z in &zips {
        let others = secondary.get(&z.zip).map(Vec::as_slice).unwrap_or(&[]);
        let county = counties.get(&place_key(&z.county));
        // A ZIP whose USPS name is no CDTFA city (an unincorporated place such as Castro
        // Valley, or a shared name such as Belvedere Tiburon) takes its county's
        // unincorporated rate; the cities USPS also accepts there make it PARTIAL when
        // their rates differ.
        let chosen = match primary.get(&z.zip) {
            Some(c) => Some(c),
            None => county.or(others.first()),
        };
        let Some(chosen) = chosen else {
            // No CDTFA location for this ZIP's county: the statewide base alone.
            state_only.push(z.zip);
            ctx.set_zip(
                z.zip,
                "CA",
                &z.city,
                &[state, bb],
                (from, Date::MAX),
                Coverage::StateOnly,
                source,
                file,
            )?;
            continue;
        };
        // The places that may tax an address in this ZIP: the chosen one, every city USPS
        // also accepts there, and the county's unincorporated area when the ZIP's primary
        // name is not a CDTFA city.
        let rates = others.iter().map(|c| c.rate).collect::<Vec<_>>();
        let coverage = if rates.iter().all(|&r| r == chosen.rate) {
            Coverage::Full
        } else {
            split_zips.push(z.zip);
            Coverage::Partial
        };
        let js = chosen.js.clone();
        ctx.set_zip(
            z.zip,
            "CA",
            &z.city,
            &js,
            (from, Date::MAX),
            coverage,
            source,
            file,
        )?;
    }
    let mut headers_placed = 0usize;
    for (county, location) in headers {
        if counties.contains_key(&county) {
            headers_placed += 1;
        } else {
            unlocated.push(location);
        }
    }
    ctx.summary.notes.push(format!(
        "{file}: {} of {} locations placed: {placed} with a rate ({placed_by_other_name} only \
         by a city name USPS accepts in ZIPs named for another place) and {headers_placed} \
         county header rows, whose area their cities' and unincorporated area's rows cover; \
         {} ZIPs shared by places of different rates answer PARTIAL",
        placed + headers_placed,
        placed + headers_placed + unlocated.len(),
        split_zips.len()
    ));
    if noted > 0 {
        ctx.summary.notes.push(format!(
            "{file}: {noted} rows carry only a note and no rate; skipped"
        ));
    }
    if !unlocated.is_empty() {
        ctx.summary.notes.push(format!(
            "{file}: {} locations match no USPS city name or county: {}",
            unlocated.len(),
            unlocated.join(", ")
        ));
    }
    if !state_only.is_empty() {
        ctx.summary.notes.push(format!(
            "{file}: {} ZIPs lie in no county of the list and answer STATE_ONLY",
            state_only.len()
        ));
    }
    Ok((read, skipped))
}

/// Every active five-digit USPS ZIP code in its state, for every date, `STATE_ONLY`; and each
/// state's main postal code for `approximate` IP resolution: the lowest standard ZIP of the
/// city with the most standard ZIPs (the package has no populations; that city is the
/// state's largest in practice).
fn usps_zips(ctx: &mut Ctx) -> Result<(), BuildError> {
    let source = ctx.b.add_source(SourceEntry {
        kind: "usps-zips".into(),
        name: "zipcodes crate (zips.json.bz2)".into(),
        sha256: String::new(),
        rows_read: 0,
        rows_skipped: 0,
        period: String::new(),
    });
    ctx.source_kinds.push("usps-zips".into());
    let (mut read, mut skipped) = (0u64, 0u64);
    let mut cities: BTreeMap<String, BTreeMap<String, (u32, u32)>> = BTreeMap::new();
    for z in zipcodes::database() {
        let Ok(zip) = z.zip_code.parse::<u32>() else {
            skipped += 1;
            continue;
        };
        // Military (AA, AE, AP) and territories without a state jurisdiction are skipped.
        if !z.active || z.zip_code.len() != 5 || states::by_abbr(&z.state).is_none() {
            skipped += 1;
            continue;
        }
        let Some(state) =
            states::by_abbr(&z.state).and_then(|(fips, _)| ctx.b.find_jurisdiction(fips))
        else {
            skipped += 1;
            continue;
        };
        let city = z.city.to_uppercase();
        ctx.b.zip_period(
            zip,
            &z.state,
            &city,
            &[state],
            Date::MIN,
            Date::MAX,
            Coverage::StateOnly,
            source,
        )?;
        ctx.zip_owner.insert(zip, source);
        read += 1;
        if z.zip_code_type == "STANDARD" {
            let e = cities
                .entry(z.state.clone())
                .or_default()
                .entry(city)
                .or_insert((0, u32::MAX));
            e.0 += 1;
            e.1 = e.1.min(zip);
        }
    }
    for (abbr, by_city) in &cities {
        let best = by_city
            .iter()
            .max_by_key(|(name, (count, _))| (*count, std::cmp::Reverse((*name).clone())));
        if let Some((_, (_, zip))) = best {
            // A state the builder has no region for has no main postal code to set.
            let _ = ctx.b.region_main_postal("US", abbr, &format!("{zip:05}"));
        }
    }
    if let Some(e) = ctx.b.source_mut(source) {
        e.rows_read = read;
        e.rows_skipped = skipped;
    }
    Ok(())
}

/// Places ZIP codes in the counties of the SST rate files already loaded: a ZIP wholly in
/// one county (or in several whose rates are the same on every date) gets its state and
/// that county, marked `PARTIAL` (city and district taxes, which a county file cannot place,
/// may apply too), on every day but those an earlier source placed it `FULL` (with every
/// tax: a ZIP5 file from its month on), which keep that placement; so the order of a ZIP5
/// file and this one does not change the table. A ZIP in counties of different rates is not
/// placed (it keeps what earlier sources said: the state alone, unless a ZIP5 file placed
/// it), and is counted and listed. Counties of states whose SST county rates are not loaded
/// are skipped.
fn zip_county(
    ctx: &mut Ctx,
    parsed: Parsed<parse::ZipCountyRow>,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    // ZIP -> (state, counties in file order).
    let mut by_zip: BTreeMap<u32, (String, Vec<String>)> = BTreeMap::new();
    let mut read = 0u64;
    for (line, row) in parsed.rows {
        let Some((fips, _)) = states::by_abbr(&row.state) else {
            skipped += 1;
            let message = format!("unknown state {:?}", row.state);
            ctx.bad(file, RowError { line, message })?;
            continue;
        };
        let code = format!("{fips}{}", row.county);
        if ctx.b.find_jurisdiction(&code).is_none() {
            // No SST county rates for this state in the build: nothing to place.
            skipped += 1;
            continue;
        }
        read += 1;
        let e = by_zip
            .entry(row.zip)
            .or_insert_with(|| (row.state.clone(), Vec::new()));
        if !e.1.contains(&code) {
            e.1.push(code);
        }
    }
    // Each county's general rules, to compare counties of one ZIP on every date.
    let schedule = |ctx: &Ctx, code: &str| -> Vec<(Date, Date, Decimal)> {
        let Some(j) = ctx.b.find_jurisdiction(code) else {
            return Vec::new();
        };
        let mut v: Vec<(Date, Date, Decimal)> = ctx
            .b
            .rules()
            .iter()
            .filter(|r| r.jurisdiction == j && r.tax_code == GENERAL && !r.rate.is_zero())
            .map(|r| (r.from, r.to, r.rate.normalize()))
            .collect();
        v.sort();
        v
    };
    let (mut placed, mut kept_full) = (0usize, 0usize);
    let mut split: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (zip, (state, counties)) in by_zip {
        let first = schedule(ctx, &counties[0]);
        if counties[1..].iter().any(|c| schedule(ctx, c) != first) {
            split.entry(state).or_default().push(zip);
            continue;
        }
        let state_j = ctx.state(&state)?;
        let Some(county) = ctx.b.find_jurisdiction(&counties[0]) else {
            continue;
        };
        let (city, full_days): (String, Vec<(Date, Date)>) = match ctx.b.zip_record(zip) {
            Some(r) => (
                r.city.clone(),
                r.periods
                    .iter()
                    .filter(|p| p.coverage == Coverage::Full as u8)
                    .map(|p| (Date(p.from), Date(p.to)))
                    .collect(),
            ),
            None => (String::new(), Vec::new()),
        };
        // The file has no dates, and a county is less than every tax of a place: on the
        // days an earlier source placed the ZIP with all its taxes (a ZIP5 file from its
        // month on, say), that placement stands, whatever order the inputs came in.
        let mut gaps = vec![(Date::MIN, Date::MAX)];
        for &held in &full_days {
            gaps = gaps.into_iter().flat_map(|g| subtract(g, held)).collect();
        }
        if !full_days.is_empty() {
            kept_full += 1;
        }
        if gaps.is_empty() {
            continue;
        }
        for days in gaps {
            ctx.set_zip(
                zip,
                &state,
                &city,
                &[state_j, county],
                days,
                Coverage::Partial,
                source,
                file,
            )?;
        }
        placed += 1;
    }
    let mut note = format!("{file}: {placed} ZIPs placed in their county");
    if kept_full > 0 {
        note.push_str(&format!(
            "; {kept_full} ZIPs keep, on the days an earlier source placed them with every tax, that placement"
        ));
    }
    for (state, zips) in &split {
        let shown: Vec<String> = zips.iter().take(8).map(|z| format!("{z:05}")).collect();
        note.push_str(&format!(
            "; {} {state} ZIPs lie in counties of different rates and are not placed in one (they keep what earlier sources said) ({}{})",
            zips.len(),
            shown.join(", "),
            if zips.len() > shown.len() { ", ..." } else { "" }
        ));
    }
    ctx.summary.notes.push(note);
    Ok((read, skipped))
}

fn ip_csv(
    ctx: &mut Ctx,
    parsed: Parsed<parse::IpCsvRow>,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let skipped = parsed.errors.len() as u64;
    for e in parsed.errors {
        ctx.bad(file, e)?;
    }
    let mut read = 0;
    for (_, row) in parsed.rows {
        let loc = IpLocationSpec {
            country: row.country,
            region: row.region,
            city: String::new(),
            postal: row.postal,
            approx_postal: String::new(),
            coordinates: None,
        };
        ctx.add_ip(row.start, row.end, loc, file);
        read += 1;
    }
    Ok((read, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_from_names() {
        let d = |y, m, d| Date::from_ymd(y, m, d).unwrap();
        assert_eq!(
            period_of(InputKind::Zip5, "TAXRATES_ZIP5_TN202512.csv"),
            Some(("2025-12".into(), d(2025, 12, 1)))
        );
        assert_eq!(
            period_of(InputKind::SstRates, "GAR2026Q2FEB19.csv"),
            Some(("2026Q2".into(), d(2026, 4, 1)))
        );
        assert_eq!(
            period_of(InputKind::SstBoundaries, "MNB2026Q2FEB18-sample.csv"),
            Some(("2026Q2".into(), d(2026, 4, 1)))
        );
        assert_eq!(
            period_of(InputKind::Cdtfa, "SalesTaxRates1-1-26.csv"),
            Some(("2026-01-01".into(), d(2026, 1, 1)))
        );
        assert_eq!(period_of(InputKind::Zip5, "rates.csv"), None);
    }

    #[test]
    fn subtract_intervals() {
        let (a, b, c, e) = (Date(0), Date(10), Date(3), Date(5));
        assert_eq!(
            subtract((a, b), (c, e)),
            vec![(Date(0), Date(2)), (Date(6), Date(10))]
        );
        assert_eq!(subtract((a, b), (Date::MIN, Date::MAX)), vec![]);
        assert_eq!(subtract((c, e), (Date(6), Date(9))), vec![(c, e)]);
    }
}
