//! Resolution outside the US, and regions: a postal code or its longest known prefix, else
//! the province or state, else the country.

use crate::address::{normalize_postal, postal_fits, trim};
use crate::kinds::Coverage;
use crate::lookup::JsetId;
use crate::model::ArchivedRegionRecord;
use crate::table::Table;

use super::{set, set_upper, Address, Location, Precision, ResolutionStatus, ResolveError};

impl<D> Table<D> {
    pub(crate) fn region_record(
        &self,
        country: &str,
        region: &str,
    ) -> Option<&ArchivedRegionRecord> {
        let c = country.as_bytes();
        let regions = &self.data().regions;
        regions
            .binary_search_by(|r| (&r.country[..], r.region.as_str()).cmp(&(c, region)))
            .ok()
            .map(|i| &regions[i])
    }

    /// The jurisdiction set and name of a region (`("US", "TN")`, `("DE", "")`).
    pub fn region(&self, country: &str, region: &str) -> Option<(JsetId, &str)> {
        self.region_record(country, region)
            .map(|r| (JsetId(r.jset.to_native()), r.name.as_str()))
    }

    fn postal_prefix(&self, country: &str, postal: &str) -> Option<(&str, Option<JsetId>)> {
        let c = country.as_bytes();
        let list = &self.data().postal_prefixes;
        // Longest prefix first.
        for len in (1..=postal.len()).rev() {
            let p = postal.get(..len)?;
            if let Ok(i) =
                list.binary_search_by(|r| (&r.country[..], r.prefix.as_str()).cmp(&(c, p)))
            {
                let r = &list[i];
                let jset = r.jset.to_native();
                return Some((
                    r.region.as_str(),
                    (jset != u32::MAX).then_some(JsetId(jset)),
                ));
            }
        }
        None
    }

    /// Places `out` in `region` of `country` (the country alone when the region is empty
    /// or unknown to the table).
    pub(super) fn region_location(
        &self,
        out: &mut Location,
        country: &str,
        region: &str,
        status: ResolutionStatus,
        precision: Precision,
    ) -> Result<(), ResolveError> {
        let (rec, precision) = match self.region_record(country, region) {
            Some(r) if !region.is_empty() => (r, precision),
            _ => match self.region_record(country, "") {
                Some(r) => (r, Precision::Country),
                None => {
                    let place = if region.is_empty() {
                        country.to_string()
                    } else {
                        format!("{country}-{region}")
                    };
                    return Err(ResolveError::Unsupported(place));
                }
            },
        };
        out.place(
            Some(JsetId(rec.jset.to_native())),
            status,
            precision,
            Coverage::from_u8(rec.coverage),
        );
        Ok(())
    }

    pub(super) fn resolve_other(
        &self,
        address: &Address,
        country: &str,
        region: &str,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        let postal = normalize_postal(&address.postal_code);
        if !postal.is_empty() && !postal_fits(country, &postal) {
            // A postal code of another country (a US ZIP given with country CA) would be
            // answered for the country alone, as if the address were in it.
            return Err(ResolveError::MalformedPostal(
                address.postal_code.clone(),
                country.to_string(),
            ));
        }
        let used = &mut out.address;
        set_upper(&mut used.line1, trim(&address.line1));
        set_upper(&mut used.line2, trim(&address.line2));
        set_upper(&mut used.city, trim(&address.city));
        set(&mut used.region, region);
        set(&mut used.postal_code, &postal);
        set(&mut used.country, country);
        if !postal.is_empty() {
            if let Some((prefix_region, jset)) = self.postal_prefix(country, &postal) {
                if !region.is_empty() && !prefix_region.is_empty() && prefix_region != region {
                    return Err(ResolveError::ZipStateMismatch {
                        postal: postal.clone(),
                        given: region.to_string(),
                        actual: prefix_region.to_string(),
                    });
                }
                set(&mut out.address.region, prefix_region);
                let jset = match jset {
                    Some(j) => Some(j),
                    None => self
                        .region_record(country, prefix_region)
                        .or_else(|| self.region_record(country, ""))
                        .map(|r| JsetId(r.jset.to_native())),
                };
                if let Some(jset) = jset {
                    // Postal prefixes place an address in its province; the province's
                    // coverage is the answer's.
                    let coverage = self
                        .region_record(country, prefix_region)
                        .or_else(|| self.region_record(country, ""))
                        .map_or(Coverage::StateOnly, |r| Coverage::from_u8(r.coverage));
                    out.place(
                        Some(jset),
                        ResolutionStatus::PostalOnly,
                        Precision::Postal,
                        coverage,
                    );
                    return Ok(());
                }
                let status = ResolutionStatus::PostalFallback1;
                return self.region_location(
                    out,
                    country,
                    prefix_region,
                    status,
                    Precision::Province,
                );
            }
        }
        let status = if postal.is_empty() {
            ResolutionStatus::PostalOnly
        } else {
            ResolutionStatus::PostalFallback1
        };
        self.region_location(out, country, region, status, Precision::Province)
    }
}
