//! Location resolution: an address or an IP address to the set of jurisdictions that tax it.
//!
//! # Address resolution, and what the status and precision mean
//!
//! | what matched | `address_resolution_status` | `resolution_precision` |
//! |---|---|---|
//! | a street range (house number, street, ZIP) | `EXACT` | `STREET` |
//! | a ZIP+4 range, a street line was given but matched no range | `POSTAL_FALLBACK_1` | `POSTAL_PLUS` |
//! | the ZIP5, a street line was given but matched no range | `POSTAL_FALLBACK_1` | `POSTAL` |
//! | a ZIP+4 range, no street line given | `POSTAL_ONLY` | `POSTAL_PLUS` |
//! | the ZIP5 (or a non-US postal code or prefix), no street line | `POSTAL_ONLY` | `POSTAL` |
//! | the province or state alone | `POSTAL_ONLY` | `PROVINCE` |
//! | the state, for a well-formed US ZIP the table does not know | `POSTAL_FALLBACK_1` | `PROVINCE` |
//! | the province, for a non-US postal code that matches no prefix | `POSTAL_FALLBACK_1` | `PROVINCE` |
//! | the country alone | `POSTAL_ONLY` | `COUNTRY` |
//!
//! Where the region is unknown too, the last two fall back to the country (`COUNTRY`).
//!
//! Street and ZIP+4 ranges carry effective dates and are matched on the sale's date.
//!
//! # IP resolution
//!
//! Modes as the interface defines them. `strict` fails with the interface's errors;
//! `zero` answers a zero-rate location when resolution is insufficient; `approximate` takes
//! the most populous postal code of the IP's region (the country's, when the region is
//! unknown), or the region's own jurisdictions when the table knows no populations, with
//! precision `APPROXIMATED`; `best_effort` approximates and falls back to zero.

mod ip;
mod other;
mod us;

pub use ip::{IpMode, IpPlace};

use std::borrow::Cow;

use crate::address::trim;
use crate::date::Date;
use crate::kinds::Coverage;
use crate::lookup::JsetId;
use crate::table::Table;

/// A postal address as the interface sends it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// Street line.
    pub line1: String,
    /// Second line (unit).
    pub line2: String,
    /// City.
    pub city: String,
    /// ISO 3166-2 subdivision without the country (`TN`, `ON`).
    pub region: String,
    /// Postal code.
    pub postal_code: String,
    /// ISO 3166-1 alpha-2 country.
    pub country: String,
}

/// How exactly an address matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResolutionStatus {
    /// The street address matched a street range.
    Exact,
    /// A street line was given but did not match; the postal code decided.
    PostalFallback1,
    /// Only the postal code (or region, or country) was used.
    PostalOnly,
}

impl ResolutionStatus {
    /// The interface's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolutionStatus::Exact => "EXACT",
            ResolutionStatus::PostalFallback1 => "POSTAL_FALLBACK_1",
            ResolutionStatus::PostalOnly => "POSTAL_ONLY",
        }
    }
}

/// How fine the place that decided the tax is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// A street range.
    Street,
    /// A ZIP+4 range.
    PostalPlus,
    /// A postal code.
    Postal,
    /// A province or state.
    Province,
    /// A country.
    Country,
    /// Guessed from an IP address's region.
    Approximated,
}

impl Precision {
    /// The interface's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Street => "STREET",
            Precision::PostalPlus => "POSTAL_PLUS",
            Precision::Postal => "POSTAL",
            Precision::Province => "PROVINCE",
            Precision::Country => "COUNTRY",
            Precision::Approximated => "APPROXIMATED",
        }
    }
}

/// Which input decided the tax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocationSource {
    /// The postal address.
    Address,
    /// The IP address.
    Ip,
}

impl LocationSource {
    /// The interface's name.
    pub fn as_str(self) -> &'static str {
        match self {
            LocationSource::Address => "address",
            LocationSource::Ip => "ip",
        }
    }
}

/// A resolved place: which jurisdictions tax it, and how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The jurisdiction set; `None` for a zero-rate location (IP mode `zero`).
    pub jset: Option<JsetId>,
    /// How exactly the address matched.
    pub status: ResolutionStatus,
    /// How fine the deciding place is.
    pub precision: Precision,
    /// Which input decided.
    pub source: LocationSource,
    /// The address used as the resolve normalized it from the input. A ZIP code's state,
    /// and its city when the input gave none, are not copied here: they are read from the
    /// table when asked for ([`Table::address_used`]), so that a sale resolved by ZIP
    /// copies no string and reads no more of the table than its tax needs.
    address: Address,
    /// The US ZIP code (as a number) whose record completes `address`.
    zip: Option<u32>,
    /// Whether the jurisdiction set names every local jurisdiction of the place.
    pub coverage: Coverage,
}

impl Default for Location {
    /// No place yet: a zero-rate location at country precision with an empty address, for
    /// [`Table::resolve_into`] to fill.
    fn default() -> Location {
        Location {
            jset: None,
            status: ResolutionStatus::PostalOnly,
            precision: Precision::Country,
            source: LocationSource::Address,
            address: Address::default(),
            zip: None,
            coverage: Coverage::StateOnly,
        }
    }
}

impl Location {
    /// Sets what decides the tax (the address used is filled apart).
    fn place(
        &mut self,
        jset: Option<JsetId>,
        status: ResolutionStatus,
        precision: Precision,
        coverage: Coverage,
    ) {
        self.jset = jset;
        self.status = status;
        self.precision = precision;
        self.coverage = coverage;
    }

    /// Whether this location owes no tax because resolution was insufficient (IP `zero` mode).
    pub fn is_zero_rate(&self) -> bool {
        self.jset.is_none()
    }

    /// The ISO country of the address used.
    pub fn country(&self) -> &str {
        &self.address.country
    }
}

/// Why a place could not be resolved. Each variant maps to one error type of the interface.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// The country is not an ISO 3166-1 alpha-2 code (`INVALID_COUNTRY_CODE`).
    #[error("address_country {0:?} is not an ISO 3166-1 alpha-2 country code")]
    InvalidCountry(String),
    /// The postal code cannot be a postal code of the country (`MALFORMED_ADDRESS`).
    #[error("address_postal_code {0:?} is not a valid postal code for {1}")]
    MalformedPostal(String, String),
    /// The postal code lies in another state or province than the one given (`ZIP_STATE_MISMATCH`).
    #[error("postal code {postal} is in {actual}, not in {given}")]
    ZipStateMismatch {
        /// The postal code.
        postal: String,
        /// The region given.
        given: String,
        /// The region the postal code is in.
        actual: String,
    },
    /// The table has no rates for this place (`UNSUPPORTED_LOCATION`). Build a table that
    /// covers it, or check the address.
    #[error("the rate table covers no jurisdiction for {0}")]
    Unsupported(String),
    /// Not an IPv4 or IPv6 address (`INVALID_IP_FORMAT`).
    #[error("ip.value {0:?} is not a valid IPv4 or IPv6 address")]
    InvalidIp(String),
    /// The IP did not resolve to any country (`IP_RESOLUTION_FAILED`).
    #[error("IP address {0} could not be resolved to any country")]
    IpResolutionFailed(String),
    /// A US IP with no postal code (`IP_RESOLUTION_INSUFFICIENT_US`).
    #[error("IP address {0} resolved to the US but to no postal code")]
    IpInsufficientUs(String),
    /// A Canadian IP with no province (`IP_RESOLUTION_INSUFFICIENT_CA`).
    #[error("IP address {0} resolved to Canada but to no province")]
    IpInsufficientCa(String),
}

impl ResolveError {
    /// Every error type [`ResolveError::error_type`] can return, for documents that list
    /// them.
    pub const ERROR_TYPES: [&'static str; 8] = [
        "INVALID_COUNTRY_CODE",
        "MALFORMED_ADDRESS",
        "ZIP_STATE_MISMATCH",
        "UNSUPPORTED_LOCATION",
        "INVALID_IP_FORMAT",
        "IP_RESOLUTION_FAILED",
        "IP_RESOLUTION_INSUFFICIENT_US",
        "IP_RESOLUTION_INSUFFICIENT_CA",
    ];

    /// The interface's error type for this error.
    pub fn error_type(&self) -> &'static str {
        match self {
            ResolveError::InvalidCountry(_) => "INVALID_COUNTRY_CODE",
            ResolveError::MalformedPostal(..) => "MALFORMED_ADDRESS",
            ResolveError::ZipStateMismatch { .. } => "ZIP_STATE_MISMATCH",
            ResolveError::Unsupported(_) => "UNSUPPORTED_LOCATION",
            ResolveError::InvalidIp(_) => "INVALID_IP_FORMAT",
            ResolveError::IpResolutionFailed(_) => "IP_RESOLUTION_FAILED",
            ResolveError::IpInsufficientUs(_) => "IP_RESOLUTION_INSUFFICIENT_US",
            ResolveError::IpInsufficientCa(_) => "IP_RESOLUTION_INSUFFICIENT_CA",
        }
    }
}

/// `s` in ASCII upper case, borrowed when it already is (the usual case).
fn ascii_upper(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_lowercase()) {
        Cow::Owned(s.to_ascii_uppercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// `dst` becomes `src`, in the capacity it already has.
fn set(dst: &mut String, src: &str) {
    dst.clear();
    // An empty field (the usual region of an address given by ZIP): nothing to copy.
    if !src.is_empty() {
        dst.push_str(src);
    }
}

/// `dst` becomes `src` in upper case (as `str::to_uppercase`), in the capacity it has.
fn set_upper(dst: &mut String, src: &str) {
    dst.clear();
    if src.is_empty() {
        // The usual line 2 and, with a ZIP code, often the city: nothing to scan.
    } else if src.is_ascii() {
        dst.push_str(src);
        dst.make_ascii_uppercase();
    } else {
        dst.extend(src.chars().flat_map(char::to_uppercase));
    }
}

fn is_country_code(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

impl<D> Table<D> {
    /// The address `location` was resolved from, normalized (upper case, USPS
    /// abbreviations, ZIP+4 when it decided): the fields the input gave, and for a US ZIP
    /// code its state and, when no city was given, its city, read from this table. Call it
    /// on the table that resolved `location`; fields may be empty.
    pub fn address_used(&self, location: &Location) -> Address {
        self.complete_address(location.zip, location.address.clone())
    }

    /// [`Table::address_used`], the location's strings moved out instead of copied: for a
    /// caller done with the location, which keeps an empty address (and its place).
    pub fn take_address_used(&self, location: &mut Location) -> Address {
        let address = std::mem::take(&mut location.address);
        self.complete_address(location.zip.take(), address)
    }

    /// The region (US state, province) of the address used, as [`Table::address_used`]
    /// gives it, without copying the address.
    pub fn location_region<'a>(&'a self, location: &'a Location) -> &'a str {
        match location.zip.and_then(|z| self.zip_record(z)) {
            Some(zip) => zip.state.as_str(),
            None => &location.address.region,
        }
    }

    /// Resolves a postal address on `date` (ZIP+4 and street ranges carry effective dates).
    pub fn resolve(&self, address: &Address, date: Date) -> Result<Location, ResolveError> {
        let mut out = Location::default();
        self.resolve_into(address, date, &mut out)?;
        Ok(out)
    }

    /// Resolves like [`Table::resolve`], into `out`, reusing the strings of its address: a
    /// caller that keeps one `Location` for sale after sale resolves without allocating
    /// once they have grown (a street line still allocates while it is parsed). On an
    /// error `out` holds no meaningful place.
    pub fn resolve_into(
        &self,
        address: &Address,
        date: Date,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        out.source = LocationSource::Address;
        out.zip = None;
        // The usual address, its country written `US`: what the checks below would make of
        // it, without them (the region is upper-cased as below).
        if address.country == "US" {
            return self.resolve_us(address, &ascii_upper(trim(&address.region)), date, out);
        }
        let mut country = ascii_upper(trim(&address.country));
        if !is_country_code(&country) {
            return Err(ResolveError::InvalidCountry(address.country.clone()));
        }
        let mut region = ascii_upper(trim(&address.region));
        // US territories with their own ISO country code are addressed through USPS ZIPs.
        if matches!(&*country, "PR" | "GU" | "VI" | "AS" | "MP") && region.is_empty() {
            region = country;
            country = Cow::Borrowed("US");
        }
        if country == "US" {
            self.resolve_us(address, &region, date, out)
        } else {
            self.resolve_other(address, &country, &region, out)
        }
    }
}

#[cfg(test)]
mod error_type_tests {
    use super::ResolveError;

    #[test]
    fn error_types_lists_every_variant_once() {
        let s = String::new;
        let all = [
            ResolveError::InvalidCountry(s()),
            ResolveError::MalformedPostal(s(), s()),
            ResolveError::ZipStateMismatch {
                postal: s(),
                given: s(),
                actual: s(),
            },
            ResolveError::Unsupported(s()),
            ResolveError::InvalidIp(s()),
            ResolveError::IpResolutionFailed(s()),
            ResolveError::IpInsufficientUs(s()),
            ResolveError::IpInsufficientCa(s()),
        ];
        let types: Vec<&str> = all.iter().map(ResolveError::error_type).collect();
        assert_eq!(types, ResolveError::ERROR_TYPES);
    }
}
