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

/// The curated IP ranges (`data/ip/`), when the folder has them, as ranges for the build's
/// IP layer with their manifest entries: the country ranges first, then the state and
/// province ranges over them (so that they refine the country ranges, and finer IP inputs
/// refine both).
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
    let country = |c: [u8; 2]| IpLocationSpec {
        country: String::from_utf8_lossy(&c).into_owned(),
        ..Default::default()
    };
    let v4 = |s: u32, e: u32| (IpAddr::V4(Ipv4Addr::from(s)), IpAddr::V4(Ipv4Addr::from(e)));
    let v6 = |s: u128, e: u128| (IpAddr::V6(Ipv6Addr::from(s)), IpAddr::V6(Ipv6Addr::from(e)));
    let mut out = Vec::with_capacity(r.v4.len() + r.v6.len());
    for &(s, e, c) in &r.v4 {
        let (s, e) = v4(s, e);
        out.push((s, e, country(c)));
    }
    for &(s, e, c) in &r.v6 {
        let (s, e) = v6(s, e);
        out.push((s, e, country(c)));
    }
    if let Some(regions) = &r.regions {
        let place = |i: u32| regions.places[i as usize].clone();
        for &(s, e, p) in &regions.v4 {
            let (s, e) = v4(s, e);
            out.push((s, e, place(p)));
        }
        for &(s, e, p) in &regions.v6 {
            let (s, e) = v6(s, e);
            out.push((s, e, place(p)));
        }
    }
    Ok(out)
}

/// Applies the curated product rules over every jurisdiction in the builder.
pub(crate) fn rules(c: &Curated, b: &mut TableBuilder) -> Result<(), BuildError> {
    c.apply_rules(b)
        .map_err(|e| BuildError::Curated(e.to_string()))?;
    Ok(())
}
