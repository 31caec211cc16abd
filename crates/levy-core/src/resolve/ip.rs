//! IP resolution: an IP address to the place of its range, in the modes the interface
//! defines (see the parent module).

use std::net::IpAddr;

use crate::date::Date;
use crate::kinds::Coverage;
use crate::lookup::JsetId;
use crate::model::ArchivedIpLocationRecord;
use crate::table::Table;

use crate::address::trim;

use super::{
    set_upper, Address, Location, LocationSource, Precision, ResolutionStatus, ResolveError,
};

/// IP resolution mode, as the interface defines them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IpMode {
    /// Fail when the IP does not resolve to enough detail.
    #[default]
    Strict,
    /// Answer a zero-rate location when resolution is insufficient.
    Zero,
    /// Approximate a postal code from the IP's region.
    Approximate,
    /// Approximate, else zero.
    BestEffort,
}

impl IpMode {
    /// Parses the interface's name (`strict`, `zero`, `approximate`, `best_effort`).
    pub fn parse(s: &str) -> Option<IpMode> {
        Some(match s {
            "strict" => IpMode::Strict,
            "zero" => IpMode::Zero,
            "approximate" => IpMode::Approximate,
            "best_effort" => IpMode::BestEffort,
            _ => return None,
        })
    }
}

/// Where an IP range points, read in place.
#[derive(Clone, Copy, Debug)]
pub struct IpPlace<'t> {
    rec: &'t ArchivedIpLocationRecord,
}

impl<'t> IpPlace<'t> {
    /// ISO 3166-1 alpha-2 country.
    pub fn country(&self) -> &'t str {
        std::str::from_utf8(&self.rec.country).unwrap_or("")
    }
    /// Subdivision, empty when unknown.
    pub fn region(&self) -> &'t str {
        self.rec.region.as_str()
    }
    /// City, empty when unknown.
    pub fn city(&self) -> &'t str {
        self.rec.city.as_str()
    }
    /// Postal code as the IP database gives it, empty when unknown.
    pub fn postal(&self) -> &'t str {
        self.rec.postal.as_str()
    }
    /// A postal code near the range's coordinates (not from the database: derived when the
    /// table was built), for approximation only; empty when unknown.
    pub fn approx_postal(&self) -> &'t str {
        self.rec.approx_postal.as_str()
    }
    /// Latitude and longitude in millionths of a degree, when known.
    pub fn coordinates(&self) -> Option<(i32, i32)> {
        let (lat, lon) = (self.rec.lat_e6.to_native(), self.rec.lon_e6.to_native());
        (lat != i32::MIN && lon != i32::MIN).then_some((lat, lon))
    }
}

impl<D> Table<D> {
    /// Looks an IP address up in the table's ranges. `None` when no range holds it.
    pub fn lookup_ip(&self, ip: IpAddr) -> Option<IpPlace<'_>> {
        let d = self.data();
        let loc = match ip {
            IpAddr::V4(v4) => {
                let x = u32::from(v4);
                // The ranges starting in x's block (/16 or /20), and the one before them
                // (which may reach into the block): a few cache lines, not a search of all.
                let bits = u32::from(d.ipv4_top_bits);
                let indexed = (1..=24).contains(&bits) && d.ipv4_top.len() == (1 << bits) + 1;
                let (lo, hi) = if indexed {
                    let h = (x >> (32 - bits)) as usize;
                    (
                        (d.ipv4_top[h].to_native() as usize).saturating_sub(1),
                        (d.ipv4_top[h + 1].to_native() as usize).min(d.ipv4.len()),
                    )
                } else {
                    // No index (or a damaged one): search every range.
                    (0, d.ipv4.len())
                };
                let block = d.ipv4.get(lo..hi.max(lo))?;
                let i = block
                    .partition_point(|r| r.start.to_native() <= x)
                    .checked_sub(1)?;
                let r = &block[i];
                (x <= r.end.to_native()).then(|| r.location.to_native())?
            }
            IpAddr::V6(v6) => {
                let x = u128::from(v6);
                let hi = (x >> 64) as u64;
                // Cheap u64 search first; then u128 compares within the few equal prefixes.
                let upper = d
                    .ipv6_prefix
                    .partition_point(|&p| p.to_native() <= hi)
                    .min(d.ipv6.len());
                let lower = d.ipv6_prefix[..upper].partition_point(|&p| p.to_native() < hi);
                let i = lower
                    + d.ipv6[lower..upper].partition_point(|r| u128::from_be_bytes(r.start) <= x);
                let r = &d.ipv6[i.checked_sub(1)?];
                (u128::from_be_bytes(r.start) <= x && x <= u128::from_be_bytes(r.end))
                    .then(|| r.location.to_native())?
            }
        };
        d.ip_locations.get(loc as usize).map(|rec| IpPlace { rec })
    }

    /// Resolves an IP address (text, as the interface sends it) in the given mode.
    pub fn resolve_ip(&self, ip: &str, mode: IpMode, date: Date) -> Result<Location, ResolveError> {
        let addr: IpAddr = ip
            .trim()
            .parse()
            .map_err(|_| ResolveError::InvalidIp(ip.to_string()))?;
        let zero = || Location {
            jset: None,
            status: ResolutionStatus::PostalOnly,
            precision: Precision::Country,
            source: LocationSource::Ip,
            address: Address::default(),
            zip: None,
            // No place was found, so no jurisdiction's tax is known to be due or not.
            coverage: Coverage::StateOnly,
        };
        let approximating = matches!(mode, IpMode::Approximate | IpMode::BestEffort);
        let Some(place) = self.lookup_ip(addr) else {
            return match mode {
                IpMode::Strict | IpMode::Approximate => {
                    Err(ResolveError::IpResolutionFailed(ip.to_string()))
                }
                IpMode::Zero | IpMode::BestEffort => Ok(zero()),
            };
        };
        let country = place.country();
        // The IP database's city is shown in the address used, but never chooses among the
        // places that share a ZIP: an IP's city is too uncertain to charge a city's tax on.
        let address = Address {
            region: place.region().to_string(),
            postal_code: place.postal().to_string(),
            country: country.to_string(),
            ..Address::default()
        };
        // Enough detail: resolve the place like an address without a street line.
        let enough = match country {
            "US" => !place.postal().is_empty(),
            "CA" => !place.region().is_empty() || !place.postal().is_empty(),
            _ => true,
        };
        if enough {
            if let Ok(mut loc) = self.resolve(&address, date) {
                loc.source = LocationSource::Ip;
                loc.status = ResolutionStatus::PostalOnly;
                set_upper(&mut loc.address.city, trim(place.city()));
                if country == "US" && loc.precision != Precision::Postal {
                    // The postal code was unknown to the table: treat as insufficient below.
                } else {
                    return Ok(loc);
                }
            }
        }
        if approximating {
            if let Some(loc) = self.approximate(place, date) {
                return Ok(loc);
            }
        }
        match mode {
            IpMode::Zero | IpMode::BestEffort => Ok(zero()),
            IpMode::Strict | IpMode::Approximate => Err(match country {
                "US" => ResolveError::IpInsufficientUs(ip.to_string()),
                "CA" => ResolveError::IpInsufficientCa(ip.to_string()),
                _ => ResolveError::IpResolutionFailed(ip.to_string()),
            }),
        }
    }

    fn approximate(&self, place: IpPlace<'_>, date: Date) -> Option<Location> {
        let country = place.country();
        let region = self
            .region_record(country, place.region())
            .filter(|_| !place.region().is_empty())
            .or_else(|| self.region_record(country, ""))?;
        // The postal code nearest the range's coordinates, when the table has one in the
        // range's region; else the region's most populous one; else the region itself.
        let near =
            self.postal_in_region(place.approx_postal(), country, region.region.as_str(), date);
        let main = || {
            self.postal_in_region(
                region.main_postal.as_str(),
                country,
                region.region.as_str(),
                date,
            )
        };
        let mut loc = match near.or_else(main) {
            Some(loc) => loc,
            None => Location {
                jset: Some(JsetId(region.jset.to_native())),
                status: ResolutionStatus::PostalOnly,
                precision: Precision::Province,
                source: LocationSource::Ip,
                address: Address {
                    region: region.region.as_str().to_string(),
                    country: country.to_string(),
                    ..Address::default()
                },
                zip: None,
                coverage: Coverage::from_u8(region.coverage),
            },
        };
        loc.source = LocationSource::Ip;
        loc.status = ResolutionStatus::PostalOnly;
        loc.precision = Precision::Approximated;
        Some(loc)
    }

    /// Resolves `postal` when it is non-empty and lies in `region`.
    fn postal_in_region(
        &self,
        postal: &str,
        country: &str,
        region: &str,
        date: Date,
    ) -> Option<Location> {
        if postal.is_empty() {
            return None;
        }
        let address = Address {
            region: region.to_string(),
            postal_code: postal.to_string(),
            country: country.to_string(),
            ..Address::default()
        };
        self.resolve(&address, date)
            .ok()
            .filter(|l| l.precision == Precision::Postal)
    }
}
