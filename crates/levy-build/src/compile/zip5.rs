//! ZIP5 rate tables (`State,ZipCode,TaxRegionName,...`): a file speaks for its month on.
//!
//! # Component repair
//!
//! In some ZIP5 rows the four component rates sum to 0.000001 less than the combined rate
//! because one component was exported from a binary float and truncated (`0.048499` for
//! Utah's 4.85%). When exactly one component plus the difference has at most five decimal
//! places, that component is corrected (and counted in the summary); otherwise the row is
//! bad.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use levy_core::{Coverage, Date, Decimal, JurisdictionId, Level};
use sha2::{Digest, Sha256};

use crate::error::{io_err, BuildError};
use crate::parse::{RowError, Zip5Reader, Zip5Row};
use crate::states;

use super::layers::{usps_index, Ctx};
use super::{ConflictKind, InputKind, GENERAL};

/// Reads a ZIP5 table effective from `from` as it streams in from `reader` (the build's
/// hashed reader of the file at `path`), a row at a time: each row's components repaired
/// where one was truncated, each state's most common state rate taken as the state's, and
/// every ZIP placed with every level of its row. The main state rates are counted first in
/// a pass of their own over the file (`path`, opened again), so that no row is held: a
/// table of 5 million rows is built in the memory of what it places. Returns the rows read
/// and skipped, and the SHA-256 of what the first pass read, which the build checks against
/// the file's (a file changed between the passes is refused).
pub(super) fn zip5(
    ctx: &mut Ctx,
    path: &Path,
    reader: impl Read,
    (from, source, file): (Date, u32, &str),
) -> Result<(u64, u64, String), BuildError> {
    let (main_rate, first_pass) = main_state_rates(path)?;
    let mut rows = Zip5Reader::new(reader);
    let mut written: HashSet<String> = HashSet::new();
    let (mut read, mut skipped) = (0u64, 0u64);
    let at = (from, source, file);
    while let Some(next) = rows.next_row().map_err(|e| io_err(path, e))? {
        let (line, mut row) = match next {
            Ok(row) => row,
            Err(e) => {
                skipped += 1;
                ctx.bad(file, e)?;
                continue;
            }
        };
        if let Err(message) = good(&mut row, &mut ctx.summary.repaired_rows) {
            skipped += 1;
            ctx.bad(file, RowError { line, message })?;
            continue;
        }
        let js = row_jurisdictions(ctx, &row, &main_rate, &mut written, at)?;
        read += 1;
        if in_two_states(ctx, &row, &js, at)? {
            continue;
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
    Ok((read, skipped, first_pass))
}

/// A row repaired ([`repair`], counted in `repaired`) and of a known state, or why not.
fn good(row: &mut Zip5Row, repaired: &mut u64) -> Result<(), String> {
    *repaired += u64::from(repair(row)?);
    if states::by_abbr(&row.state).is_none() {
        return Err(format!("unknown state {:?}", row.state));
    }
    Ok(())
}

/// Repairs a row whose component rates do not sum to its combined rate, when exactly one
/// component was truncated (see the module docs): `Ok(true)` when repaired, `Ok(false)`
/// when the sum was right, the bad row's message otherwise.
fn repair(row: &mut Zip5Row) -> Result<bool, String> {
    let sum = row.state_rate + row.county_rate + row.city_rate + row.special_rate;
    if sum == row.combined {
        return Ok(false);
    }
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
    if diff.abs() > Decimal::new(1, 6) || fixable.len() != 1 {
        return Err(format!(
            "component rates sum to {sum}, combined rate is {}",
            row.combined
        ));
    }
    let c = match fixable[0] {
        0 => &mut row.state_rate,
        1 => &mut row.county_rate,
        2 => &mut row.city_rate,
        _ => &mut row.special_rate,
    };
    *c = (*c + diff).normalize();
    Ok(true)
}

/// Each state's most common state rate among the good rows of the file at `path` (read on
/// its own, nothing held but the counts), with how many rows give it and the first of
/// them: most rows wins; ties go to the rate seen first, so the choice is deterministic.
/// With the SHA-256 of the bytes read.
#[allow(clippy::type_complexity)]
fn main_state_rates(
    path: &Path,
) -> Result<(HashMap<String, (usize, usize, Decimal)>, String), BuildError> {
    let file = super::open_regular(path)?;
    let mut hashed = super::Hashed {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        hash: Sha256::new(),
    };
    let mut counts: HashMap<(String, Decimal), (usize, usize)> = HashMap::new();
    let mut i = 0usize;
    let mut repaired = 0u64;
    {
        let mut rows = Zip5Reader::new(&mut hashed);
        while let Some(next) = rows.next_row().map_err(|e| io_err(path, e))? {
            let Ok((_, mut row)) = next else { continue };
            if good(&mut row, &mut repaired).is_err() {
                continue;
            }
            if !row.state_rate.is_zero() {
                counts
                    .entry((row.state, row.state_rate))
                    .or_insert((0, i))
                    .0 += 1;
            }
            i += 1;
        }
    }
    std::io::copy(&mut hashed, &mut std::io::sink()).map_err(|e| io_err(path, e))?;
    let mut main_rate: HashMap<String, (usize, usize, Decimal)> = HashMap::new();
    for ((state, rate), (n, first)) in counts {
        let e = main_rate.entry(state).or_insert((n, first, rate));
        if n > e.0 || (n == e.0 && first < e.1) {
            *e = (n, first, rate);
        }
    }
    Ok((main_rate, hex::encode(hashed.hash.finalize())))
}

/// The jurisdictions of a row, one per non-zero level (the state's own when the state rate
/// is the state's main one), each jurisdiction's rule written the first time it is seen
/// (`written`; `at`: from, source, file).
fn row_jurisdictions(
    ctx: &mut Ctx,
    row: &Zip5Row,
    main_rate: &HashMap<String, (usize, usize, Decimal)>,
    written: &mut HashSet<String>,
    (from, source, file): (Date, u32, &str),
) -> Result<Vec<JurisdictionId>, BuildError> {
    let (fips, _) = states::by_abbr(&row.state).expect("checked by the caller");
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
        // chain) already gives on that day is left to that source, so that its scheduled
        // changes still take effect (a December file does not freeze the state's rate for
        // every later date).
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
    Ok(js)
}

/// A ZIP an earlier ZIP5 table placed in another state: the conflict is reported and the
/// state USPS places it in kept (the row's, from `at`'s day on, or the earlier one's).
/// `false`, with nothing done, for any other row.
fn in_two_states(
    ctx: &mut Ctx,
    row: &Zip5Row,
    js: &[JurisdictionId],
    (from, source, file): (Date, u32, &str),
) -> Result<bool, BuildError> {
    let Some(old) = ctx.b.zip_record(row.zip) else {
        return Ok(false);
    };
    let owner_kind = ctx
        .zip_owner
        .get(&row.zip)
        .and_then(|&s| ctx.source_kind(s));
    if old.state == row.state || owner_kind != Some(InputKind::Zip5.as_str()) {
        return Ok(false);
    }
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
    ctx.b.jset(js)?;
    if !keep_new {
        return Ok(true);
    }
    ctx.b.zip_period(
        row.zip,
        &row.state,
        &row.region_name,
        js,
        from,
        Date::MAX,
        Coverage::Full,
        source,
    )?;
    ctx.zip_owner.insert(row.zip, source);
    Ok(true)
}
