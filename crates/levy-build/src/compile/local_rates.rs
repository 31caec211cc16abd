//! Local rates files (`data/local/us/<ST>.toml`, `--local-rates`): each county's
//! jurisdiction, `<state FIPS><county FIPS>`, with its dated rates (on the first
//! `single_item_cap` dollars of an item, where the file has a cap); each district over its
//! counties and each city a buyer may name, placed once every ZIP is (see [`finish`]).
//!
//! Every rule points at the manifest entry of the publication it comes from: the file's
//! own entry for the file's `source`, and one more entry of the file per other
//! publication its counties, districts and cities name.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use levy_core::model::SourceEntry;
use levy_core::{city_key, Coverage, Date, Decimal, JurisdictionId, Level, PlaceNote, RuleSpec};

use crate::error::BuildError;
use crate::local_rates::{LocalRates, Rates};

use super::layers::Ctx;
use super::sst_rates::sst_code;
use super::GENERAL;

/// What the local rates files said that later inputs and the end of the build need.
#[derive(Debug, Default)]
pub(super) struct LocalState {
    /// The states whose file lists every local sales tax: a county it does not list levies
    /// none.
    pub(super) complete: BTreeSet<String>,
    /// The counties (jurisdiction codes) whose rate and districts are every local sales
    /// tax of an address in them.
    pub(super) complete_counties: BTreeSet<String>,
    /// The districts over each county, by the county's jurisdiction code.
    pub(super) districts_of: HashMap<String, Vec<JurisdictionId>>,
    /// The districts, to add to every set that holds one of their counties.
    districts: Vec<PendingDistrict>,
    /// The cities a buyer may name.
    cities: Vec<PendingCity>,
    /// Each ZIP's state and counties (jurisdiction codes) as the ZIP-to-county files give
    /// them.
    pub(super) zip_counties: BTreeMap<u32, (String, Vec<String>)>,
    /// The ZIPs a ZIP-to-county file placed `FULL` in counties a local rates file holds
    /// every local tax of: the state, the jurisdictions placed and the ZIP-to-county file's
    /// manifest entry.
    pub(super) complete_zips: BTreeMap<u32, (String, Vec<JurisdictionId>, u32)>,
}

#[derive(Debug)]
struct PendingDistrict {
    j: JurisdictionId,
    /// `VA.toml district[2]`, for messages.
    what: String,
    counties: Vec<String>,
}

#[derive(Debug)]
struct PendingCity {
    j: JurisdictionId,
    what: String,
    name: String,
    state: String,
    counties: Vec<String>,
    complete: bool,
    source: u32,
}

/// The largest local rates file read: a file is a few hundred counties, some tens of KB.
const MAX_BYTES: u64 = 16 << 20;

/// Reads one local rates file (`source` its manifest entry, `file` its name): its counties
/// with their rates, its districts and cities for [`finish`].
pub(super) fn local_rates(
    ctx: &mut Ctx,
    reader: &mut impl std::io::Read,
    name: &str,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let text = read_bounded(reader, file)?;
    let rates = crate::local_rates::parse(name, &text)
        .map_err(|e| BuildError::LocalRates(e.to_string()))?;
    let sources = publications(ctx, &rates, source);
    let f = LocalFile {
        rates: &rates,
        name,
        file,
        source,
        sources,
    };
    let abbr = rates.state.as_str();
    ctx.state(abbr)?;
    if rates.complete {
        ctx.local.complete.insert(abbr.to_string());
    }
    let counties = read_counties(ctx, &f)?;
    let (districts, skipped_districts) = read_districts(ctx, &f)?;
    let (cities, skipped_cities) = read_cities(ctx, &f)?;
    Ok((
        counties + districts + cities,
        skipped_districts + skipped_cities,
    ))
}

/// One local rates file being read: what it says, its names for messages and the manifest
/// entries of its publications.
struct LocalFile<'a> {
    /// What the file says.
    rates: &'a LocalRates,
    /// The file's name, `VA.toml`, for messages.
    name: &'a str,
    /// The file's path as the build was given it, for its rules.
    file: &'a str,
    /// The file's own manifest entry.
    source: u32,
    /// The manifest entry of each publication the file names (see [`publications`]).
    sources: HashMap<&'a str, u32>,
}

impl LocalFile<'_> {
    /// The manifest entry of publication `publication`, the file's own `source` when `None`.
    fn source_of(&self, publication: Option<&str>) -> u32 {
        self.sources
            .get(publication.unwrap_or(&self.rates.source))
            .copied()
            .unwrap_or(self.source)
    }

    /// The band of each item's price the file's rates apply to: all of it, or the first
    /// `single_item_cap` dollars.
    fn band(&self) -> (Decimal, Option<Decimal>) {
        (Decimal::ZERO, self.rates.single_item_cap)
    }

    /// The jurisdiction code of the county or city `fips` of the file's state.
    fn local_code(&self, fips: &str) -> String {
        format!("{}{fips}", self.rates.state_fips)
    }
}

/// The text of a local rates file, refused when longer than [`MAX_BYTES`].
fn read_bounded(reader: &mut impl std::io::Read, file: &str) -> Result<String, BuildError> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(reader, MAX_BYTES + 1), &mut text)
        .map_err(|e| BuildError::LocalRates(format!("{file}: {e}")))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(BuildError::LocalRates(format!(
            "{file}: longer than {MAX_BYTES} bytes; a local rates file is a few hundred counties"
        )));
    }
    Ok(text)
}

/// Each county of the file as its jurisdiction, with its rates queued; how many were read.
fn read_counties(ctx: &mut Ctx, f: &LocalFile) -> Result<u64, BuildError> {
    let abbr = f.rates.state.as_str();
    let mut read = 0u64;
    for c in &f.rates.counties {
        let code = f.local_code(&c.fips);
        let j = named(ctx, &code, &c.name, Level::County, abbr)?;
        if c.complete {
            ctx.local.complete_counties.insert(code.clone());
        }
        let s = f.source_of(c.source.as_deref());
        for r in &c.rates {
            queue(ctx, j, r, f.band(), &c.label, s, f.file);
        }
        read += 1;
    }
    Ok(read)
}

/// Each district of the file as its jurisdiction (its own rates queued, or the one an SST
/// rate file gave), recorded over its counties and kept for [`finish`]; how many were read
/// and how many skipped for want of that SST rate file.
fn read_districts(ctx: &mut Ctx, f: &LocalFile) -> Result<(u64, u64), BuildError> {
    let abbr = f.rates.state.as_str();
    let (mut read, mut skipped) = (0u64, 0u64);
    for (i, d) in f.rates.districts.iter().enumerate() {
        let what = format!("{} district[{i}]", f.name);
        let j = match (&d.rates, &d.code) {
            (Rates::Chain(chain), Some(code)) => {
                let j = named(ctx, code, &d.name, Level::District, abbr)?;
                for r in chain {
                    let s = f.source_of(Some(&d.source));
                    queue(ctx, j, r, f.band(), &d.label, s, f.file);
                }
                Some(j)
            }
            (Rates::Sst { jtype, code }, _) => {
                sst_jurisdiction(ctx, f.rates, jtype, code, &d.name)?
            }
            (Rates::Chain(_), None) => None,
        };
        let Some(j) = j else {
            skipped += 1;
            note_not_placed(ctx, &what, &d.name);
            continue;
        };
        let counties: Vec<String> = d.counties.iter().map(|c| f.local_code(c)).collect();
        for c in &counties {
            let list = ctx.local.districts_of.entry(c.clone()).or_default();
            if !list.contains(&j) {
                list.push(j);
            }
        }
        ctx.local
            .districts
            .push(PendingDistrict { j, what, counties });
        read += 1;
    }
    Ok((read, skipped))
}

/// Each city of the file as its jurisdiction (its own rates queued, or the one an SST rate
/// file gave), kept for [`finish`] to place; how many were read and how many skipped for
/// want of that SST rate file.
fn read_cities(ctx: &mut Ctx, f: &LocalFile) -> Result<(u64, u64), BuildError> {
    let abbr = f.rates.state.as_str();
    let (mut read, mut skipped) = (0u64, 0u64);
    for (i, c) in f.rates.cities.iter().enumerate() {
        let what = format!("{} city[{i}]", f.name);
        let j = match &c.rates {
            Rates::Chain(chain) => {
                let code = f.local_code(&c.fips);
                let j = named(ctx, &code, &c.name, Level::City, abbr)?;
                for r in chain {
                    let s = f.source_of(Some(&c.source));
                    queue(ctx, j, r, f.band(), &c.label, s, f.file);
                }
                Some(j)
            }
            Rates::Sst { jtype, code } => sst_jurisdiction(ctx, f.rates, jtype, code, &c.name)?,
        };
        let Some(j) = j else {
            skipped += 1;
            note_not_placed(ctx, &what, &c.name);
            continue;
        };
        ctx.local.cities.push(PendingCity {
            j,
            what,
            name: c.name.clone(),
            state: abbr.to_string(),
            counties: c.counties.iter().map(|k| f.local_code(k)).collect(),
            complete: c.complete,
            source: f.source_of(Some(&c.source)),
        });
        read += 1;
    }
    Ok((read, skipped))
}

/// Notes that district or city `what`, named `name`, is not placed: its jurisdiction comes
/// from an SST rate file the build was not given before it.
fn note_not_placed(ctx: &mut Ctx, what: &str, name: &str) {
    ctx.summary.notes.push(format!(
        "{what} ({name}): no SST rate file given before it defines its jurisdiction; not placed"
    ));
}

/// The manifest entry of each publication the file names: the file's own entry for its
/// `source`, a copy of it for each other.
fn publications<'a>(ctx: &mut Ctx, rates: &'a LocalRates, source: u32) -> HashMap<&'a str, u32> {
    let mut out = HashMap::new();
    let base = ctx
        .b
        .sources()
        .get(source as usize)
        .cloned()
        .unwrap_or_default();
    for (i, p) in rates.publications().into_iter().enumerate() {
        let index = if i == 0 {
            source
        } else {
            ctx.b.add_source(SourceEntry {
                publication: String::new(),
                ..base.clone()
            })
        };
        if let Some(e) = ctx.b.source_mut(index) {
            e.publication = p.to_string();
            e.period = rates.as_of.to_string();
            e.horizon = crate::horizon::checked(rates.as_of).0;
        }
        out.insert(p, index);
    }
    out
}

/// The jurisdiction `code`, created with `name` when new; one a rate file named by its
/// code (the SST files do) takes `name`.
fn named(
    ctx: &mut Ctx,
    code: &str,
    name: &str,
    level: Level,
    abbr: &str,
) -> Result<JurisdictionId, BuildError> {
    let j = ctx.jur(code, name, level, abbr)?;
    let unnamed = ctx
        .b
        .jurisdictions()
        .nth(j.0 as usize)
        .is_some_and(|(_, r)| r.name == r.code);
    if unnamed {
        ctx.b.rename_jurisdiction(j, name)?;
    }
    Ok(j)
}

/// The jurisdiction an SST rate file of the build gave this type and code in the state,
/// named `name`; `None` when no such file was given before.
fn sst_jurisdiction(
    ctx: &mut Ctx,
    rates: &LocalRates,
    jtype: &str,
    code: &str,
    name: &str,
) -> Result<Option<JurisdictionId>, BuildError> {
    let (code, _) = sst_code(&rates.state_fips, jtype, code);
    let Some(j) = ctx.b.find_jurisdiction(&code) else {
        return Ok(None);
    };
    ctx.b.rename_jurisdiction(j, name)?;
    Ok(Some(j))
}

/// Queues the general rule of rate `r` for `j`: on `band` of each item's price, labelled
/// `label`, from manifest entry `source`.
fn queue(
    ctx: &mut Ctx,
    j: JurisdictionId,
    r: &crate::local_rates::Rate,
    band: (Decimal, Option<Decimal>),
    label: &str,
    source: u32,
    file: &str,
) {
    let mut spec = RuleSpec::flat(j, GENERAL, r.rate, r.from, r.to, label);
    spec.band = band;
    spec.source = source;
    ctx.queue_rule(spec, file);
}

/// The general rate of a county's local taxes on every day: its own and its districts'
/// rules summed, as `(from, to, total)` runs of the same total, zero totals left out; so
/// that two counties compare equal exactly when every day's local rate is the same.
pub(super) fn local_schedule(ctx: &Ctx, county: &str) -> Vec<(Date, Date, Decimal)> {
    let mut js: Vec<JurisdictionId> = ctx.b.find_jurisdiction(county).into_iter().collect();
    js.extend(ctx.local.districts_of.get(county).into_iter().flatten());
    let rules: Vec<(Date, Date, Decimal)> = ctx
        .b
        .rules()
        .iter()
        .filter(|r| js.contains(&r.jurisdiction) && r.tax_code == GENERAL && !r.rate.is_zero())
        .map(|r| (r.from, r.to, r.rate))
        .collect();
    // Every day on which some rule starts or ends splits the days into runs.
    let mut cuts: BTreeSet<i64> = BTreeSet::new();
    for &(f, t, _) in &rules {
        cuts.insert(i64::from(f.0));
        cuts.insert(i64::from(t.0) + 1);
    }
    let cuts: Vec<i64> = cuts.into_iter().collect();
    let mut out: Vec<(Date, Date, Decimal)> = Vec::new();
    for w in cuts.windows(2) {
        let (from, to) = (w[0], w[1] - 1);
        let total: Decimal = rules
            .iter()
            .filter(|(f, t, _)| i64::from(f.0) <= from && to <= i64::from(t.0))
            .map(|r| r.2)
            .sum();
        if total.is_zero() {
            continue;
        }
        let (from, to) = (Date(from as i32), Date(to as i32));
        match out.last_mut() {
            Some(last) if last.2 == total && last.1 .0 + 1 == from.0 => last.1 = to,
            _ => out.push((from, to, total.normalize())),
        }
    }
    out
}

/// The local jurisdictions of a county: itself when it exists, and its districts.
pub(super) fn county_set(ctx: &Ctx, county: &str) -> Vec<JurisdictionId> {
    let mut js: Vec<JurisdictionId> = ctx.b.find_jurisdiction(county).into_iter().collect();
    js.extend(ctx.local.districts_of.get(county).into_iter().flatten());
    js
}

/// The districts common to every county of `counties` (none for an empty list).
pub(super) fn common_districts(ctx: &Ctx, counties: &[String]) -> Vec<JurisdictionId> {
    let Some((first, rest)) = counties.split_first() else {
        return Vec::new();
    };
    let of = |c: &String| ctx.local.districts_of.get(c).cloned().unwrap_or_default();
    of(first)
        .into_iter()
        .filter(|d| rest.iter().all(|c| of(c).contains(d)))
        .collect()
}

/// After every input: each district added to every jurisdiction set that holds one of its
/// counties (whichever source placed them), and each city a buyer may name placed in the
/// ZIPs USPS names for it within its counties.
pub(super) fn finish(ctx: &mut Ctx) -> Result<(), BuildError> {
    over_estimates(ctx)?;
    let districts = std::mem::take(&mut ctx.local.districts);
    for d in &districts {
        let mut sets = 0;
        for c in &d.counties {
            if let Some(cj) = ctx.b.find_jurisdiction(c) {
                sets += ctx.b.add_to_sets_containing(cj, d.j)?;
            }
        }
        let code = ctx.jur_code(d.j);
        ctx.summary.notes.push(format!(
            "{}: district {code} added to {sets} jurisdiction sets of its counties",
            d.what
        ));
    }
    let cities = std::mem::take(&mut ctx.local.cities);
    for c in &cities {
        place_city(ctx, c)?;
    }
    Ok(())
}

/// A ZIP5 file is a vendor's estimate of each ZIP's combined rate; a local rates file that
/// holds every local tax of a county (`complete`) is the revenue department's own list. On
/// every day a ZIP5 file placed a ZIP that the census puts wholly in such counties, the
/// counties' placement replaces the estimate (their districts join after), whatever order
/// the inputs came in; each replaced period whose jurisdictions differ is a
/// [`super::ConflictKind::ZipReassigned`]. Where the estimate's combined rate is the
/// counties' the answer stays `FULL`; where it differs it is `PARTIAL`, since a census ZIP
/// area is not the post office's and part of the ZIP may lie where other taxes apply, and
/// the summary lists the ZIPs. (A December 2025 ZIP5 file's Nashville rows miss Davidson
/// County's transit surcharge of 2025-02-01, county-wide: they answered 9.25% where the
/// Department's notice gives 9.75%.)
fn over_estimates(ctx: &mut Ctx) -> Result<(), BuildError> {
    let zip5 = crate::compile::InputKind::Zip5.as_str();
    let complete = std::mem::take(&mut ctx.local.complete_zips);
    let mut general: HashMap<JurisdictionId, Vec<(Date, Date, Decimal)>> = HashMap::new();
    for r in ctx.b.rules().iter().filter(|r| r.tax_code == GENERAL) {
        general
            .entry(r.jurisdiction)
            .or_default()
            .push((r.from, r.to, r.rate));
    }
    let total = |js: &[JurisdictionId], day: Date| -> Decimal {
        js.iter()
            .flat_map(|j| general.get(j).into_iter().flatten())
            .filter(|(f, t, _)| *f <= day && day <= *t)
            .map(|r| r.2)
            .sum::<Decimal>()
            .normalize()
    };
    let (mut zips, mut differ) = (0usize, Vec::new());
    for (&zip, (state, js, source)) in &complete {
        let Some(record) = ctx.b.zip_record(zip) else {
            continue;
        };
        let city = record.city.clone();
        let estimated: Vec<(Date, Date, u32)> = record
            .periods
            .iter()
            .filter(|p| ctx.source_kind(p.source) == Some(zip5))
            .map(|p| (Date(p.from), Date(p.to), p.jset))
            .collect();
        if estimated.is_empty() {
            continue;
        }
        zips += 1;
        // The county's rate with its districts (which join the set after this).
        let mut primary = js.clone();
        for j in js {
            let code = ctx.jur_code(*j);
            primary.extend(ctx.local.districts_of.get(&code).into_iter().flatten());
        }
        for (from, to, jset) in estimated {
            let (was, is) = (
                total(&ctx.b.jset_members(jset), from),
                total(&primary, from),
            );
            let coverage = if was == is {
                Coverage::Full
            } else {
                differ.push(format!("{zip:05} {state} from {from}: {was} -> {is}"));
                Coverage::Partial
            };
            ctx.set_zip(
                zip,
                state,
                &city,
                js,
                (from, to),
                coverage,
                *source,
                "local rates",
            )?;
        }
    }
    if zips > 0 {
        let shown: Vec<&str> = differ.iter().take(8).map(String::as_str).collect();
        ctx.summary.notes.push(format!(
            "local rates: {zips} ZIPs a ZIP5 file placed lie wholly in counties a local rates file holds every local tax of, whose rates replace the ZIP5 estimate there (listed as ZipReassigned); {} estimates differed from the counties' combined rate and answer PARTIAL{}{}",
            differ.len(),
            if shown.is_empty() { "" } else { ": " },
            shown.join(", ") + if differ.len() > shown.len() { ", ..." } else { "" }
        ));
    }
    Ok(())
}

/// What naming a city in one ZIP gives: the set, its coverage and the days.
struct CityPlan {
    js: Vec<JurisdictionId>,
    coverage: Coverage,
    days: (Date, Date),
}

/// Places city `c` in every ZIP of its state that USPS names for it (its primary city or
/// another name it accepts) and that the ZIP-to-county files put in one of the city's
/// counties: an address there naming the city gets the state, the county (the one of the
/// ZIP's counties the city lies in, when one is), its districts and the city, on the days
/// the city's tax is in force; an address naming none keeps the ZIP's answer, marked
/// [`PlaceNote::CityNotNamed`] on those days. The named answer is `FULL` only for a city
/// the file calls complete, in a ZIP of one of its counties that USPS names for no other
/// place; else `PARTIAL`.
fn place_city(ctx: &mut Ctx, c: &PendingCity) -> Result<(), BuildError> {
    let Some(days) = rule_span(ctx, c.j) else {
        ctx.summary.notes.push(format!(
            "{} ({}): no rate in force on any day; not placed",
            c.what, c.name
        ));
        return Ok(());
    };
    let key = city_key(&c.name);
    // The ZIPs USPS names for the city, each with whether USPS names no other place there
    // (a postal city is not a city limit: where USPS accepts another town's name too, an
    // address that writes the city's may lie outside it).
    let zips: BTreeMap<u32, bool> = zipcodes::database()
        .iter()
        .filter(|z| z.state == c.state)
        .filter(|z| {
            city_key(&z.city) == key || z.acceptable_cities.iter().any(|a| city_key(a) == key)
        })
        .filter_map(|z| {
            let sole =
                city_key(&z.city) == key && z.acceptable_cities.iter().all(|a| city_key(a) == key);
            Some((z.zip_code.parse().ok()?, sole))
        })
        .collect();
    let state = ctx.state(&c.state)?;
    let (mut placed, mut outside) = (0usize, 0usize);
    for (zip, sole) in zips {
        let Some((_, counties)) = ctx.local.zip_counties.get(&zip).cloned() else {
            outside += 1;
            continue;
        };
        let in_city: Vec<String> = counties
            .iter()
            .filter(|k| c.counties.contains(k))
            .cloned()
            .collect();
        let Some(first) = in_city.first() else {
            outside += 1;
            continue;
        };
        let same = in_city
            .iter()
            .all(|k| local_schedule(ctx, k) == local_schedule(ctx, first));
        let (local, coverage) = if same {
            let full = c.complete && sole && in_city.len() == 1;
            (
                county_set(ctx, first),
                if full {
                    Coverage::Full
                } else {
                    Coverage::Partial
                },
            )
        } else {
            (common_districts(ctx, &in_city), Coverage::Partial)
        };
        let mut js = vec![state];
        js.extend(local);
        js.push(c.j);
        let plan = CityPlan { js, coverage, days };
        if name_city(ctx, zip, c, &plan)? {
            placed += 1;
        }
    }
    ctx.summary.notes.push(format!(
        "{} ({}): named in {placed} ZIPs; {outside} ZIPs named for it lie in none of its counties or in no county of the ZIP-to-county files",
        c.what, c.name
    ));
    Ok(())
}

/// The first and last day on which `j` has a general rate above zero.
fn rule_span(ctx: &Ctx, j: JurisdictionId) -> Option<(Date, Date)> {
    let rules = ctx
        .b
        .rules()
        .iter()
        .filter(|r| r.jurisdiction == j && r.tax_code == GENERAL && !r.rate.is_zero());
    rules.fold(None, |acc, r| match acc {
        None => Some((r.from, r.to)),
        Some((f, t)) => Some((f.min(r.from), t.max(r.to))),
    })
}

/// Names city `c` in ZIP `zip` by `plan` on the days of each of the ZIP's periods that
/// no source placed with every tax: those days of a period without a note are placed
/// again alone and marked [`PlaceNote::CityNotNamed`], then the city is added. Whether any
/// day was named.
fn name_city(
    ctx: &mut Ctx,
    zip: u32,
    c: &PendingCity,
    plan: &CityPlan,
) -> Result<bool, BuildError> {
    let spans = |ctx: &Ctx| -> Vec<(Date, Date, u32, u8, u8, u32)> {
        ctx.b
            .zip_record(zip)
            .map(|r| {
                r.periods
                    .iter()
                    .filter(|p| p.coverage != Coverage::Full as u8)
                    .filter_map(|p| {
                        let (from, to) = (plan.days.0 .0.max(p.from), plan.days.1 .0.min(p.to));
                        (from <= to).then_some((
                            Date(from),
                            Date(to),
                            p.jset,
                            p.coverage,
                            p.note,
                            p.source,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let state = c.state.clone();
    for (from, to, jset, coverage, note, source) in spans(ctx) {
        if note != PlaceNote::None as u8 {
            continue;
        }
        let members = ctx.b.jset_members(jset);
        let coverage = match coverage {
            1 => Coverage::Partial,
            _ => Coverage::StateOnly,
        };
        ctx.b
            .zip_period(zip, &state, "", &members, from, to, coverage, source)?;
        ctx.b.zip_note(zip, from, to, PlaceNote::CityNotNamed);
    }
    let mut named = false;
    for (from, to, ..) in spans(ctx) {
        ctx.b
            .zip_city(zip, &c.name, &plan.js, from, to, plan.coverage, c.source)?;
        named = true;
    }
    Ok(named)
}
