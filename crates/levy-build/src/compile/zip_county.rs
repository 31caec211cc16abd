//! The census ZIP-to-county file: ZIP codes placed in the counties of the rate files
//! already loaded (SST rate files, local rates files).

use std::collections::BTreeMap;

use levy_core::{Coverage, Date, JurisdictionId, PlaceNote};

use crate::error::BuildError;
use crate::parse::{self, Parsed, RowError};
use crate::states;

use super::layers::{subtract, Ctx};
use super::local_rates::{common_districts, local_schedule};

/// Places ZIP codes in the counties of the rate files already loaded.
///
/// * A ZIP wholly in one county (or in several whose local rates, the county's and its
///   districts', are the same on every date) gets its state and that county (its districts
///   join once every input is read), marked `PARTIAL` (city and district taxes a county
///   file cannot place may apply too), or `FULL` where a local rates file lists every local
///   tax of the state (`complete`); there a county the file does not list levies none.
///   `FULL` too where every county of the ZIP is one its file calls `complete` (no city of
///   it levies beyond the county's rate).
/// * A ZIP that also lies in a county of its state whose rates the build does not hold
///   (a state whose file lists only some counties) is split the same way.
/// * A ZIP in counties of different local rates gets its state and the districts common to
///   all its counties (a district over every one), `PARTIAL`; with none in common, the
///   state alone, `STATE_ONLY`. Either way the period says why
///   ([`PlaceNote::SplitCounties`]): which county taxes the address is not known from the
///   ZIP.
///
/// Each on every day but those an earlier source placed the ZIP `FULL` (with every tax: a
/// ZIP5 file from its month on), which keep that placement; so the order of a ZIP5 file and
/// this one does not change the table. Counties of states whose rates are not loaded are
/// skipped. Each ZIP's counties are kept for the cities of the local rates files, and a ZIP
/// placed `FULL` by the `complete` counties of a local rates file is kept too: once every
/// input is read, that placement replaces a ZIP5 file's estimate of the ZIP (see
/// [`super::local_rates::finish`]).
pub(super) fn zip_county(
    ctx: &mut Ctx,
    parsed: Parsed<parse::ZipCountyRow>,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    // ZIP -> (state, counties in file order).
    let mut by_zip: BTreeMap<u32, (String, Vec<String>)> = BTreeMap::new();
    // ZIP -> state, for the ZIPs that lie in a county of the state whose rates are not held.
    let mut unknown: BTreeMap<u32, String> = BTreeMap::new();
    let mut read = 0u64;
    for (line, row) in parsed.rows {
        let Some((fips, _)) = states::by_abbr(&row.state) else {
            skipped += 1;
            let message = format!("unknown state {:?}", row.state);
            ctx.bad(file, RowError { line, message })?;
            continue;
        };
        let code = format!("{fips}{}", row.county);
        let complete = ctx.local.complete.contains(&row.state);
        if !complete && ctx.b.find_jurisdiction(&code).is_none() {
            // A county whose rates the build does not hold: nothing to place there, and a
            // ZIP that also lies in a county the build holds is split (which county taxes
            // the address is not known).
            skipped += 1;
            unknown.entry(row.zip).or_insert(row.state.clone());
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
    let mut report = Report::default();
    for (zip, (state, counties)) in by_zip {
        let partly_unknown = unknown.get(&zip).is_some_and(|s| *s == state);
        let placement = placement(ctx, &counties, &state, partly_unknown);
        if placement.note == PlaceNote::SplitCounties {
            report.split.entry(state.clone()).or_default().push(zip);
            report.split_common += usize::from(!placement.local.is_empty());
        }
        let (kept_full, placed) = place(ctx, zip, &state, &placement, source, file)?;
        report.kept_full += usize::from(kept_full);
        report.placed += usize::from(placed);
        if placement.coverage == Coverage::Full && placement.note == PlaceNote::None {
            let mut js = vec![ctx.state(&state)?];
            js.extend(&placement.local);
            ctx.local
                .complete_zips
                .insert(zip, (state.clone(), js, source));
        }
        ctx.local.zip_counties.insert(zip, (state, counties));
    }
    ctx.summary.notes.push(report.note(file));
    Ok((read, skipped))
}

/// Where a ZIP of `state` in `counties` goes (`partly_unknown`: it also lies in a county of
/// the state whose rates the build does not hold). Counties of one local rate on every day:
/// the first of them, `FULL` where the state's file lists every local tax or every county
/// is `complete`, else `PARTIAL`. Otherwise the districts common to all (none with a county
/// not held), `PARTIAL`, or the state alone, `STATE_ONLY`; either way [`PlaceNote::SplitCounties`].
fn placement(ctx: &Ctx, counties: &[String], state: &str, partly_unknown: bool) -> Placement {
    let first = local_schedule(ctx, &counties[0]);
    let same = !partly_unknown
        && counties[1..]
            .iter()
            .all(|c| local_schedule(ctx, c) == first);
    if same {
        let complete = ctx.local.complete.contains(state)
            || counties
                .iter()
                .all(|c| ctx.local.complete_counties.contains(c));
        return Placement {
            local: ctx.b.find_jurisdiction(&counties[0]).into_iter().collect(),
            coverage: if complete {
                Coverage::Full
            } else {
                Coverage::Partial
            },
            note: PlaceNote::None,
        };
    }
    let common = if partly_unknown {
        Vec::new()
    } else {
        common_districts(ctx, counties)
    };
    Placement {
        coverage: if common.is_empty() {
            Coverage::StateOnly
        } else {
            Coverage::Partial
        },
        local: common,
        note: PlaceNote::SplitCounties,
    }
}

/// Where a ZIP goes: its local jurisdictions beside the state, their coverage, and why.
struct Placement {
    local: Vec<JurisdictionId>,
    coverage: Coverage,
    note: PlaceNote,
}

/// Places `zip` in its state and `placement`'s local jurisdictions on every day an earlier
/// source did not place it `FULL`. Whether an earlier source placed it `FULL` on some days,
/// and whether any day was left to place.
fn place(
    ctx: &mut Ctx,
    zip: u32,
    state: &str,
    placement: &Placement,
    source: u32,
    file: &str,
) -> Result<(bool, bool), BuildError> {
    let state_j = ctx.state(state)?;
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
    let kept_full = !full_days.is_empty();
    if gaps.is_empty() {
        return Ok((kept_full, false));
    }
    let mut js = vec![state_j];
    js.extend(&placement.local);
    for days in gaps {
        ctx.set_zip(
            zip,
            state,
            &city,
            &js,
            days,
            placement.coverage,
            source,
            file,
        )?;
        if placement.note != PlaceNote::None {
            ctx.b.zip_note(zip, days.0, days.1, placement.note);
        }
    }
    Ok((kept_full, true))
}

/// What a ZIP-to-county file came to.
#[derive(Default)]
struct Report {
    placed: usize,
    kept_full: usize,
    /// Per state, the ZIPs in counties of different rates.
    split: BTreeMap<String, Vec<u32>>,
    /// Of them, those with a district common to all their counties.
    split_common: usize,
}

impl Report {
    /// The summary's note of a ZIP-to-county file: the ZIPs placed, those that keep an
    /// earlier `FULL` placement on some days, and, per state, those in counties of
    /// different rates.
    fn note(&self, file: &str) -> String {
        let mut note = format!(
            "{file}: {} ZIPs placed in their county (or, where their counties' rates differ, with what those counties share)",
            self.placed
        );
        if self.kept_full > 0 {
            note.push_str(&format!(
                "; {} ZIPs keep, on the days an earlier source placed them with every tax, that placement",
                self.kept_full
            ));
        }
        for (state, zips) in &self.split {
            let shown: Vec<String> = zips.iter().take(8).map(|z| format!("{z:05}")).collect();
            note.push_str(&format!(
                "; {} {state} ZIPs lie in counties of different rates and hold the state and only the local taxes common to them ({}{})",
                zips.len(),
                shown.join(", "),
                if zips.len() > shown.len() { ", ..." } else { "" }
            ));
        }
        if self.split_common > 0 {
            note.push_str(&format!(
                "; {} of those hold a district common to all their counties (PARTIAL), the others the state alone (STATE_ONLY)",
                self.split_common
            ));
        }
        note
    }
}
