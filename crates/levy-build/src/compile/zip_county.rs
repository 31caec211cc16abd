//! The census ZIP-to-county file: ZIP codes placed in the counties of the SST rate files
//! already loaded.

use std::collections::BTreeMap;

use levy_core::{Coverage, Date, Decimal};

use crate::error::BuildError;
use crate::parse::{self, Parsed, RowError};
use crate::states;

use super::layers::{subtract, Ctx};
use super::GENERAL;

/// Places ZIP codes in the counties of the SST rate files already loaded: a ZIP wholly in
/// one county (or in several whose rates are the same on every date) gets its state and
/// that county, marked `PARTIAL` (city and district taxes, which a county file cannot place,
/// may apply too), on every day but those an earlier source placed it `FULL` (with every
/// tax: a ZIP5 file from its month on), which keep that placement; so the order of a ZIP5
/// file and this one does not change the table. A ZIP in counties of different rates is not
/// placed (it keeps what earlier sources said: the state alone, unless a ZIP5 file placed
/// it), and is counted and listed. Counties of states whose SST county rates are not loaded
/// are skipped.
pub(super) fn zip_county(
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
    let (mut placed, mut kept_full) = (0usize, 0usize);
    let mut split: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (zip, (state, counties)) in by_zip {
        let first = schedule(ctx, &counties[0]);
        if counties[1..].iter().any(|c| schedule(ctx, c) != first) {
            split.entry(state).or_default().push(zip);
            continue;
        }
        let Some(kept) = place_in_county(ctx, zip, &state, &counties[0], source, file)? else {
            continue;
        };
        kept_full += usize::from(kept.0);
        placed += usize::from(kept.1);
    }
    ctx.summary
        .notes
        .push(note(file, placed, kept_full, &split));
    Ok((read, skipped))
}

/// A county's general rules, `(from, to, rate)` sorted, to compare the counties of one ZIP
/// on every date.
fn schedule(ctx: &Ctx, code: &str) -> Vec<(Date, Date, Decimal)> {
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
}

/// Places `zip` in its state and county (`county`, a jurisdiction code), `PARTIAL`, on every
/// day an earlier source did not place it `FULL`. `None` when the county is not in the
/// build; else whether an earlier source placed it `FULL` on some days, and whether any
/// day was left to place.
fn place_in_county(
    ctx: &mut Ctx,
    zip: u32,
    state: &str,
    county: &str,
    source: u32,
    file: &str,
) -> Result<Option<(bool, bool)>, BuildError> {
    let state_j = ctx.state(state)?;
    let Some(county) = ctx.b.find_jurisdiction(county) else {
        return Ok(None);
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
    let kept_full = !full_days.is_empty();
    if gaps.is_empty() {
        return Ok(Some((kept_full, false)));
    }
    for days in gaps {
        let js = [state_j, county];
        ctx.set_zip(
            zip,
            state,
            &city,
            &js,
            days,
            Coverage::Partial,
            source,
            file,
        )?;
    }
    Ok(Some((kept_full, true)))
}

/// The summary's note of a ZIP-to-county file: the ZIPs placed, those that keep an earlier
/// `FULL` placement on some days, and, per state, those in counties of different rates.
fn note(file: &str, placed: usize, kept_full: usize, split: &BTreeMap<String, Vec<u32>>) -> String {
    let mut note = format!("{file}: {placed} ZIPs placed in their county");
    if kept_full > 0 {
        note.push_str(&format!(
            "; {kept_full} ZIPs keep, on the days an earlier source placed them with every tax, that placement"
        ));
    }
    for (state, zips) in split {
        let shown: Vec<String> = zips.iter().take(8).map(|z| format!("{z:05}")).collect();
        note.push_str(&format!(
            "; {} {state} ZIPs lie in counties of different rates and are not placed in one (they keep what earlier sources said) ({}{})",
            zips.len(),
            shown.join(", "),
            if zips.len() > shown.len() { ", ..." } else { "" }
        ));
    }
    note
}
