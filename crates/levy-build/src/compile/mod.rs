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
//! * an IP range overlapping an earlier one cuts it ([`ConflictKind::IpRangeReplaced`]);
//! * one exception to order: a ZIP5 file is a vendor's estimate, so where the census puts a
//!   ZIP wholly in counties a local rates file holds every local tax of, the counties' rates
//!   replace the estimate whichever came first (`PARTIAL` where the two differ; see
//!   `local_rates::finish`).
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
//! * Local rates files (`data/local/us/<ST>.toml`): county `SS` + 3-digit county FIPS (the
//!   SST files' county codes, so that either places the same county), districts the file's
//!   `<ST>:<NAME>` (or the SST file's `SS:63:CODE` it names), cities `SS` + 5-digit place
//!   FIPS.
//! * CDTFA: California's 7.25% statewide base is split as CDTFA publishes it: 6% state
//!   (`06`) and 1.25% uniform local Bradley-Burns tax (`06:BRADLEY-BURNS`, county level);
//!   the rest of a location's combined rate is its district taxes, one jurisdiction per
//!   location: `06:CDTFA:CITY:{NAME}` or `06:CDTFA:COUNTY:{NAME}` (district level).
//!
//! # Layout
//!
//! `layers` is the layering core (the build's state, rules, ZIP codes and IP ranges over
//! earlier sources); beside it one module per source format: `zip5` (with its component
//! repair), `sst_rates`, `sst_boundaries`, `cdtfa`, `local_rates` (with the districts and
//! cities it places once every input is read), `zip_county`, `usps_zips` and `ip` (CSV
//! ranges and MaxMind databases). `inputs` names the inputs and their periods, `report`
//! what a build reports; this module runs the build.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use levy_core::model::SourceEntry;
use levy_core::{Date, TableBuilder};
use sha2::{Digest, Sha256};

use crate::curated::CuratedSource;
use crate::error::io_err;
pub use crate::error::BuildError;
use crate::parse;

mod cdtfa;
mod inputs;
mod ip;
mod layers;
mod local_rates;
mod report;
mod sst_boundaries;
mod sst_rates;
mod usps_zips;
mod zip5;
mod zip_county;

pub use inputs::{expand, period_of, BuildOptions, Input, InputKind, Progress};
pub use report::{BadRow, BuildReport, Conflict, ConflictKind, Summary};

use layers::{finish_ip, Ctx};

/// The tax code every data source writes its general rates on.
pub const GENERAL: &str = "GENERAL_MERCHANDISE";

/// The tax code of SST food and drug rates.
pub const GROCERIES: &str = "GROCERIES";

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

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Builds a table from `opts`: the curated base, then every input file in order, then the
/// curated product rules and the facts of every state (local taxes, sourcing, rounding).
pub fn build(opts: &BuildOptions) -> Result<BuildReport, BuildError> {
    let mut files = Vec::new();
    for input in &opts.inputs {
        for f in expand(input)? {
            files.push((input.kind, f));
        }
    }
    let mut ctx = Ctx::new(opts.strict, ca_base(opts)?);
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
    add_minimal_taxonomy(&mut ctx.b)?;
    if opts.usps_zips {
        usps_zips::usps_zips(&mut ctx)?;
    }
    ingest_all(&mut ctx, &files, opts.progress.as_deref())?;
    local_rates::finish(&mut ctx)?;
    if let Some(c) = &curated {
        crate::curated_glue::rules(c, &mut ctx.b)?;
    }
    note_unrated(&mut ctx);
    finish_ip(&mut ctx)?;
    if let Some(source) = &opts.curated {
        state_facts(source, &mut ctx.b)?;
    } else {
        // Without curated rules, every state's region-level answer is `STATE_ONLY`.
        crate::local_taxes::apply(&[], &mut ctx.b);
    }
    let build_time = build_time(opts, ctx.latest_period)?;
    date_undated(&mut ctx.b, build_time);
    let mut summary = std::mem::take(&mut ctx.summary);
    summary.sources = ctx.b.sources().to_vec();
    let bytes = ctx.b.build(build_time)?;
    summary.build_time = build_time;
    summary.table_hash = levy_core::Table::from_bytes(&bytes)
        .map(|t| t.hash_hex())
        .unwrap_or_default();
    Ok(BuildReport { bytes, summary })
}

/// The provisional horizon of a rate file whose name gives no period, until the build's
/// day is known.
const UNDATED: i32 = i32::MIN;

/// Each rate file whose name gives no period dated by the build's day (see
/// [`crate::horizon`]).
fn date_undated(b: &mut TableBuilder, build_time: i64) {
    let built = Date::from_unix_seconds(build_time);
    for i in 0..b.sources().len() as u32 {
        if let Some(e) = b.source_mut(i) {
            if e.horizon == UNDATED {
                e.horizon = crate::horizon::checked(built).0;
            }
        }
    }
}

/// California's statewide split, for CDTFA lists: a fact needed to read any of them, so read
/// even without curated rules (from the embedded data then).
fn ca_base(opts: &BuildOptions) -> Result<crate::ca_base::CaBase, BuildError> {
    let source = opts.curated.clone().unwrap_or(CuratedSource::Embedded);
    let text = source
        .read(crate::ca_base::FILE)
        .map_err(|e| BuildError::Curated(e.to_string()))?
        .map_or_else(|| CuratedSource::Embedded.require(crate::ca_base::FILE), Ok)
        .map_err(|e| BuildError::Curated(e.to_string()))?;
    crate::ca_base::parse(&text).map_err(BuildError::Curated)
}

/// Reads every input file in order, telling `progress` (when there is one) of each.
fn ingest_all(
    ctx: &mut Ctx,
    files: &[(InputKind, PathBuf)],
    progress: Option<&dyn Progress>,
) -> Result<(), BuildError> {
    if let Some(p) = progress {
        p.start(files.len());
    }
    for (kind, path) in files {
        if let Some(p) = progress {
            p.reading(&file_name(path));
        }
        ingest(ctx, *kind, path)?;
        if let Some(p) = progress {
            p.read();
        }
    }
    if let Some(p) = progress {
        p.done();
    }
    Ok(())
}

/// Notes the jurisdictions that have no rates.
fn note_unrated(ctx: &mut Ctx) {
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
}

/// The curated facts of every state: region-level coverage of US states (`FULL` only where
/// the curated rules say no local sales tax exists), how intrastate sales are sourced
/// (destination where not listed) and where a seller may round a sale's tax once per
/// invoice.
fn state_facts(source: &CuratedSource, b: &mut TableBuilder) -> Result<(), BuildError> {
    let read = |file: &str| {
        source
            .read(file)
            .map_err(|e| BuildError::Curated(e.to_string()))
    };
    let no_local = match read(crate::local_taxes::FILE)? {
        Some(text) => crate::local_taxes::parse(&text).map_err(BuildError::Curated)?,
        None => Vec::new(),
    };
    crate::local_taxes::apply(&no_local, b);
    if let Some(text) = read(crate::sourcing::FILE)? {
        let rows = crate::sourcing::parse(&text).map_err(BuildError::Curated)?;
        crate::sourcing::apply(&rows, b);
    }
    if let Some(text) = read(crate::rounding::FILE)? {
        let states = crate::rounding::parse(&text).map_err(BuildError::Curated)?;
        crate::rounding::apply(&states, b);
    }
    if let Some(text) = read(crate::fees::FILE)? {
        let fees = crate::fees::parse(&text, &|code| b.has_tax_code(code))
            .map_err(|e| BuildError::Curated(e.to_string()))?;
        crate::fees::apply(&fees, b).map_err(|e| BuildError::Curated(e.to_string()))?;
    }
    Ok(())
}

/// The header's build time: as asked, else `SOURCE_DATE_EPOCH` when set, else the latest
/// period start among the inputs (never the wall clock).
fn build_time(opts: &BuildOptions, latest_period: Option<Date>) -> Result<i64, BuildError> {
    Ok(match opts.build_time {
        Some(t) => t,
        None => match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) if !v.trim().is_empty() => v
                .trim()
                .parse::<i64>()
                .map_err(|_| BuildError::SourceDateEpoch(v.clone()))?,
            _ => latest_period.map(|d| d.0 as i64 * 86_400).unwrap_or(0),
        },
    })
}

/// Reads one input file as a source of its own: its manifest entry, its rows by its
/// format's module, then its rules layered over the earlier sources'.
fn ingest(ctx: &mut Ctx, kind: InputKind, path: &Path) -> Result<(), BuildError> {
    let name = file_name(path);
    let period = period_of(kind, &name);
    if let Some((_, d)) = &period {
        ctx.latest_period = Some(ctx.latest_period.map_or(*d, |l| l.max(*d)));
    }
    let source = ctx.b.add_source(SourceEntry {
        kind: kind.as_str().to_string(),
        name: name.clone(),
        sha256: String::new(),
        rows_read: 0,
        rows_skipped: 0,
        period: period.as_ref().map(|p| p.0.clone()).unwrap_or_default(),
        publication: String::new(),
        // An undated rate file waits for the build's day ([`date_undated`]).
        horizon: match &period {
            Some((_, start)) => crate::horizon::of_file(kind, Some(*start), *start),
            None if crate::horizon::dated_by_name(kind) => UNDATED,
            None => i32::MAX,
        },
    });
    let from = period.map(|p| p.1);
    let display = path.display().to_string();
    let io = |e| io_err(path, e);
    // The file streams through its reader, hashed as it goes: a file of any size is read
    // in bounded memory (the SHA-256 of the manifest is the file's, as before).
    let file = open_regular(path)?;
    let mut hashed = Hashed {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        hash: Sha256::new(),
    };
    // The SHA-256 of a first pass over the file, for a format read twice (a ZIP5 table).
    let mut first_pass: Option<String> = None;
    let (read, skipped) = match kind {
        InputKind::Zip5 => {
            let at = (from.unwrap_or(Date::MIN), source, display.as_str());
            let (read, skipped, sha) = zip5::zip5(ctx, path, &mut hashed, at)?;
            first_pass = Some(sha);
            (read, skipped)
        }
        InputKind::SstRates => {
            let parsed = parse::parse_sst_rates(&mut hashed).map_err(io)?;
            sst_rates::sst_rates(ctx, parsed, source, &display)?
        }
        InputKind::SstBoundaries => {
            sst_boundaries::sst_boundaries(ctx, &mut hashed, source, &display)?
        }
        InputKind::Cdtfa => {
            let parsed = parse::parse_cdtfa(&mut hashed).map_err(io)?;
            cdtfa::cdtfa(ctx, parsed, from.unwrap_or(Date::MIN), source, &display)?
        }
        InputKind::IpCsv => {
            let parsed = parse::parse_ip_csv(&mut hashed).map_err(io)?;
            ip::ip_csv(ctx, parsed, &display)?
        }
        InputKind::ZipCounty => {
            let parsed = parse::parse_zip_county(&mut hashed).map_err(io)?;
            zip_county::zip_county(ctx, parsed, source, &display)?
        }
        InputKind::LocalRates => {
            local_rates::local_rates(ctx, &mut hashed, &name, source, &display)?
        }
        InputKind::IpMmdb => {
            // A MaxMind database is read as a whole: its reader needs every byte at once.
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut hashed, &mut bytes).map_err(io)?;
            ip::ip_mmdb(ctx, &bytes, &display)?
        }
    };
    // What a reader left unread (a CSV reader stops at the last record) is hashed too.
    std::io::copy(&mut hashed, &mut std::io::sink()).map_err(io)?;
    // The file's entry, and the entries it added for the publications it names (a local
    // rates file's), carry its hash.
    let sha = hex::encode(hashed.hash.finalize());
    if first_pass.is_some_and(|first| first != sha) {
        return Err(io_err(
            path,
            "the file changed while it was read (its two passes read different bytes): build again",
        ));
    }
    for i in source..ctx.b.sources().len() as u32 {
        if let Some(e) = ctx.b.source_mut(i).filter(|e| e.name == name) {
            e.sha256 = sha.clone();
        }
    }
    ctx.commit(source, &display)?;
    if let Some(e) = ctx.b.source_mut(source) {
        e.rows_read = read;
        e.rows_skipped = skipped;
    }
    Ok(())
}

/// An input file opened for reading: refused, without being opened, when it is not a
/// regular file (a FIFO would block the open until a writer came, a device such as
/// `/dev/zero` would read forever), and checked again once open.
fn open_regular(path: &Path) -> Result<std::fs::File, BuildError> {
    const NOT_A_FILE: &str = "not a regular file (a FIFO, a device or a socket): an input is \
                              a file, or a folder of files";
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if !meta.is_file() {
        return Err(io_err(path, NOT_A_FILE));
    }
    let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    if !file.metadata().map_err(|e| io_err(path, e))?.is_file() {
        return Err(io_err(path, NOT_A_FILE));
    }
    Ok(file)
}

/// A reader that hashes what passes through it.
pub(super) struct Hashed<R> {
    pub(super) inner: R,
    pub(super) hash: Sha256,
}

impl<R: std::io::Read> std::io::Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}
