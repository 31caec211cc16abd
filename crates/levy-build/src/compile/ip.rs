//! IP inputs: CSV ranges (`start,end,country[,region,postal]`) and MaxMind-format
//! databases, layered over the curated ranges.

use levy_core::IpLocationSpec;

use crate::error::BuildError;
use crate::parse::{self, Parsed};

use super::layers::Ctx;

pub(super) fn ip_csv(
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

/// Layers a MaxMind-format database's networks, streamed: each goes straight into the
/// layer, never into a list of all of them. Answers the networks read and skipped.
pub(super) fn ip_mmdb(ctx: &mut Ctx, bytes: &[u8], file: &str) -> Result<(u64, u64), BuildError> {
    let mut n = 0u64;
    let skipped = crate::mmdb::for_each(bytes, |start, end, place| {
        ctx.add_ip(start, end, place, file);
        n += 1;
    })
    .map_err(|message| BuildError::Mmdb {
        path: file.to_string(),
        message,
    })?;
    Ok((n, skipped))
}
