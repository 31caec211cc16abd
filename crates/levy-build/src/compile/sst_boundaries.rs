//! SST boundary files (`A`, `4`, `Z` records): street ranges, ZIP+4 ranges and whole ZIP
//! codes placed in their jurisdictions over each record's interval.

use std::collections::HashMap;

use levy_core::{Coverage, JurisdictionId, Level};

use crate::error::BuildError;
use crate::parse::{self, BoundaryTarget};

use super::layers::{usps_index, Ctx};
use super::sst_rates::sst_code;

/// State, county, place and special jurisdictions of a boundary record.
type PlaceKey = (String, String, String, Vec<(String, String)>);

/// Places the records of an SST boundary file (read by `read`, which streams them in:
/// boundary files run to millions of records, and none is kept once placed). Returns the
/// records read and skipped.
pub(super) fn sst_boundaries<R: std::io::Read>(
    ctx: &mut Ctx,
    read: R,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut zip_cache: HashMap<PlaceKey, Vec<JurisdictionId>> = HashMap::new();
    let (mut placed, mut skipped) = (0, 0);
    let mut failed: Option<BuildError> = None;
    let errors = parse::each_sst_boundary(read, |line, row| {
        if failed.is_some() {
            return;
        }
        match place(ctx, &mut zip_cache, line, row, source, file) {
            Ok(true) => placed += 1,
            Ok(false) => skipped += 1,
            Err(e) => failed = Some(e),
        }
    })
    .map_err(|e| BuildError::Io {
        path: file.to_string(),
        message: e.to_string(),
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    skipped += ctx.bad_rows(file, errors)?;
    Ok((placed, skipped))
}

/// Places one boundary record in its jurisdictions (made once per place key); `false`
/// when its state is skipped.
fn place(
    ctx: &mut Ctx,
    zip_cache: &mut HashMap<PlaceKey, Vec<JurisdictionId>>,
    line: u64,
    row: parse::BoundaryRow,
    source: u32,
    file: &str,
) -> Result<bool, BuildError> {
    let Some(abbr) = ctx.state_abbr(file, line, &row.state)? else {
        return Ok(false);
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
    Ok(true)
}
