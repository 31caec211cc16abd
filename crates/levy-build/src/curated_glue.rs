//! The one place the build calls the curated rules reader ([`crate::curated`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use levy_core::{IpLocationSpec, TableBuilder};

use crate::curated::{self, Curated, CuratedSource, IpRanges};
use crate::error::BuildError;

/// Loads the curated rules, records their files in the manifest and applies the base
/// (taxonomy, base jurisdictions and rates, holidays).
pub(crate) fn base(source: &CuratedSource, b: &mut TableBuilder) -> Result<Curated, BuildError> {
    let c = curated::load_from(source).map_err(|e| BuildError::Curated(e.to_string()))?;
    for s in c.sources() {
        b.add_source(s);
    }
    c.apply_base(b)
        .map_err(|e| BuildError::Curated(e.to_string()))?;
    Ok(c)
}

/// The curated country-level IP ranges (`data/ip/`), when the folder exists, as ranges for
/// the build's IP layer (so that finer IP inputs refine them), with their manifest entries.
pub(crate) fn ip_ranges(
    source: &CuratedSource,
    b: &mut TableBuilder,
) -> Result<Vec<(IpAddr, IpAddr, IpLocationSpec)>, BuildError> {
    let Some(r) = IpRanges::load_from(source).map_err(|e| BuildError::Curated(e.to_string()))?
    else {
        return Ok(Vec::new());
    };
    for s in r.sources() {
        b.add_source(s);
    }
    let place = |c: [u8; 2]| IpLocationSpec {
        country: String::from_utf8_lossy(&c).into_owned(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(r.v4.len() + r.v6.len());
    for &(s, e, c) in &r.v4 {
        out.push((
            IpAddr::V4(Ipv4Addr::from(s)),
            IpAddr::V4(Ipv4Addr::from(e)),
            place(c),
        ));
    }
    for &(s, e, c) in &r.v6 {
        out.push((
            IpAddr::V6(Ipv6Addr::from(s)),
            IpAddr::V6(Ipv6Addr::from(e)),
            place(c),
        ));
    }
    Ok(out)
}

/// Applies the curated product rules over every jurisdiction in the builder.
pub(crate) fn rules(c: &Curated, b: &mut TableBuilder) -> Result<(), BuildError> {
    c.apply_rules(b)
        .map_err(|e| BuildError::Curated(e.to_string()))?;
    Ok(())
}
