//! Where a sale is taxed: the jurisdictions of a sale within one state, from the seller's
//! place or the buyer's as the state's sourcing rule says, each with the address that
//! brought it in.

use rust_decimal::Decimal;

use super::schedule::rules_for;
use crate::date::Date;
use crate::kinds::{Level, Sourced, Sourcing};
use crate::lookup::{JsetId, JurisdictionId};
use crate::resolve::Location;
use crate::table::Table;

impl<D> Table<D> {
    /// How an intrastate sale in a region is sourced, and the cap on local rates that
    /// [`crate::Sourcing::OriginWithUseTax`] uses; destination for a region the table lacks.
    pub fn region_sourcing(
        &self,
        country: &str,
        region: &str,
    ) -> (crate::Sourcing, rust_decimal::Decimal) {
        match self.region_record(country, region) {
            Some(r) => (
                crate::Sourcing::from_u8(r.sourcing),
                crate::model::load_decimal(&r.local_cap),
            ),
            None => (crate::Sourcing::Destination, rust_decimal::Decimal::ZERO),
        }
    }

    /// Whether a region allows invoice-level rounding ([`crate::Rounding::Invoice`]); false
    /// for a region the table lacks.
    pub fn region_invoice_rounding(&self, country: &str, region: &str) -> bool {
        self.region_record(country, region)
            .is_some_and(|r| r.invoice_rounding)
    }
}
/// The jurisdictions that tax a sale from `origin` to `dest`, each with the address that
/// brought it in, and the rule applied; `None` for the destination's own set (the usual
/// case, which needs no list).
pub(super) fn sourced_jurisdictions<D>(
    table: &Table<D>,
    origin: Option<&Location>,
    dest: &Location,
    date: Date,
) -> (Sourcing, Option<Vec<(JurisdictionId, Sourced)>>) {
    let (Some(origin), Some(dest_jset)) = (origin, dest.jset) else {
        return (Sourcing::Destination, None);
    };
    let Some(origin_jset) = origin.jset else {
        return (Sourcing::Destination, None);
    };
    let dest_region = table.location_region(dest);
    let intrastate = origin.country().eq_ignore_ascii_case(dest.country())
        && !dest_region.is_empty()
        && table
            .location_region(origin)
            .eq_ignore_ascii_case(dest_region);
    if !intrastate {
        return (Sourcing::Destination, None);
    }
    let (rule, cap) = table.region_sourcing(dest.country(), dest_region);
    let level = |j: JurisdictionId| table.jurisdiction(j).map(|x| x.level());
    let from_origin = || table.jset(origin_jset).map(|j| (j, Sourced::Origin));
    let list: Vec<(JurisdictionId, Sourced)> = match rule {
        Sourcing::Destination => return (Sourcing::Destination, None),
        Sourcing::Origin => from_origin().collect(),
        Sourcing::ModifiedOrigin => from_origin()
            .filter(|&(j, _)| level(j) != Some(Level::District))
            .chain(
                table
                    .jset(dest_jset)
                    .filter(|&j| level(j) == Some(Level::District))
                    .map(|j| (j, Sourced::Destination)),
            )
            .collect(),
        Sourcing::OriginWithUseTax => {
            with_use_taxes(table, from_origin().collect(), dest_jset, cap, date)
        }
    };
    (rule, Some(list))
}

/// [`Sourcing::OriginWithUseTax`]: the origin's jurisdictions (`list`), then the
/// buyer's local jurisdictions (of set `dest_jset`) the seller's place lacks: city, then
/// county, then districts; each in full while the local rates stay within `cap`, else
/// not at all.
fn with_use_taxes<D>(
    table: &Table<D>,
    mut list: Vec<(JurisdictionId, Sourced)>,
    dest_jset: JsetId,
    cap: Decimal,
    date: Date,
) -> Vec<(JurisdictionId, Sourced)> {
    let level = |j: JurisdictionId| table.jurisdiction(j).map(|x| x.level());
    let is_local = |j: JurisdictionId| level(j).is_some_and(|l| l.is_local());
    let mut local: Decimal = list
        .iter()
        .filter(|&&(j, _)| is_local(j))
        .map(|&(j, _)| general_rate(table, j, date))
        .sum();
    for wanted in [Level::City, Level::County, Level::District] {
        for j in table.jset(dest_jset) {
            if level(j) != Some(wanted) || list.iter().any(|&(o, _)| o == j) {
                continue;
            }
            let rate = general_rate(table, j, date);
            if local + rate <= cap {
                local += rate;
                list.push((j, Sourced::Destination));
            }
        }
    }
    list
}

/// A jurisdiction's general merchandise rate on `date` (its first plain rule for the
/// general code, or zero): what a local-rate cap counts.
fn general_rate<D>(table: &Table<D>, j: JurisdictionId, date: Date) -> Decimal {
    let Some(general) = table.usual_code() else {
        return Decimal::ZERO;
    };
    rules_for(table, j, general, date)
        .filter_map(|r| table.rule(r))
        .map(|r| r.rate())
        .next()
        .unwrap_or(Decimal::ZERO)
}
