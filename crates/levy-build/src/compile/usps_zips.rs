//! Every active USPS ZIP code in its state (`--usps-zips`), from the `zipcodes` package.

use std::collections::BTreeMap;

use levy_core::model::SourceEntry;
use levy_core::{Coverage, Date};

use crate::error::BuildError;
use crate::states;

use super::layers::Ctx;

/// Every active five-digit USPS ZIP code in its state, for every date, `STATE_ONLY`; and each
/// state's main postal code for `approximate` IP resolution: the lowest standard ZIP of the
/// city with the most standard ZIPs (the package has no populations; that city is the
/// state's largest in practice).
pub(super) fn usps_zips(ctx: &mut Ctx) -> Result<(), BuildError> {
    let source = ctx.b.add_source(SourceEntry {
        kind: "usps-zips".into(),
        name: "zipcodes crate (zips.json.bz2)".into(),
        sha256: String::new(),
        rows_read: 0,
        rows_skipped: 0,
        period: String::new(),
        publication: String::new(),
        horizon: i32::MAX,
    });
    let (mut read, mut skipped) = (0u64, 0u64);
    let mut cities: BTreeMap<String, BTreeMap<String, (u32, u32)>> = BTreeMap::new();
    for z in zipcodes::database() {
        let Ok(zip) = z.zip_code.parse::<u32>() else {
            skipped += 1;
            continue;
        };
        // Military (AA, AE, AP) and territories without a state jurisdiction are skipped.
        if !z.active || z.zip_code.len() != 5 || states::by_abbr(&z.state).is_none() {
            skipped += 1;
            continue;
        }
        let Some(state) =
            states::by_abbr(&z.state).and_then(|(fips, _)| ctx.b.find_jurisdiction(fips))
        else {
            skipped += 1;
            continue;
        };
        let city = z.city.to_uppercase();
        ctx.b.zip_period(
            zip,
            &z.state,
            &city,
            &[state],
            Date::MIN,
            Date::MAX,
            Coverage::StateOnly,
            source,
        )?;
        ctx.zip_owner.insert(zip, source);
        read += 1;
        if z.zip_code_type == "STANDARD" {
            let e = cities
                .entry(z.state.clone())
                .or_default()
                .entry(city)
                .or_insert((0, u32::MAX));
            e.0 += 1;
            e.1 = e.1.min(zip);
        }
    }
    for (abbr, by_city) in &cities {
        let best = by_city
            .iter()
            .max_by_key(|(name, (count, _))| (*count, std::cmp::Reverse((*name).clone())));
        if let Some((_, (_, zip))) = best {
            // A state the builder has no region for has no main postal code to set.
            let _ = ctx.b.region_main_postal("US", abbr, &format!("{zip:05}"));
        }
    }
    if let Some(e) = ctx.b.source_mut(source) {
        e.rows_read = read;
        e.rows_skipped = skipped;
    }
    Ok(())
}
