//! SST rate files: each row a jurisdiction's general and food rates over its interval.

use levy_core::Level;

use crate::error::BuildError;
use crate::parse::{self, Parsed};

use super::layers::Ctx;
use super::{GENERAL, GROCERIES};

pub(super) fn sst_code(state: &str, jtype: &str, code: &str) -> (String, Level) {
    match jtype {
        "45" => (state.to_string(), Level::State),
        "00" => (format!("{state}{code}"), Level::County),
        "01" => (format!("{state}{code}"), Level::City),
        _ => (format!("{state}:{jtype}:{code}"), Level::District),
    }
}

pub(super) fn sst_rates(
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
