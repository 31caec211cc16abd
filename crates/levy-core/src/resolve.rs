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

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::IpAddr;

use crate::address::{
    city_key, normalize_postal, parse_street_line, parse_us_zip, postal_fits, trim, StreetLine,
};
use crate::date::Date;
use crate::kinds::{Coverage, PlaceNote};
use crate::lookup::JsetId;
use crate::model::{
    ArchivedIpLocationRecord, ArchivedRegionRecord, ArchivedZip4Record, ArchivedZipCity,
    ArchivedZipPeriod, ArchivedZipRecord,
};
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

/// `37203` or `37203-1234`.
fn zip_text(zip5: u32, plus4: Option<u16>) -> String {
    let mut s = String::with_capacity(10);
    push_zip(&mut s, zip5, plus4);
    s
}

/// Appends `37203` or `37203-1234`, without the formatting machinery (this is on the hot
/// path).
fn push_zip(s: &mut String, zip5: u32, plus4: Option<u16>) {
    push_digits(s, zip5, 5);
    if let Some(p) = plus4 {
        s.push('-');
        push_digits(s, u32::from(p), 4);
    }
}

/// Appends the last `width` decimal digits of `n`, zeros first.
fn push_digits(s: &mut String, n: u32, width: u32) {
    for i in (0..width).rev() {
        s.push(char::from(b'0' + (n / 10u32.pow(i) % 10) as u8));
    }
}

/// Appends the text of `zip5` and `plus4`, parsed from `postal` (trimmed), as [`push_zip`]
/// writes it, copied from `postal` rather than written digit by digit: a postal code
/// [`parse_us_zip`] accepts begins with the ZIP's five digits and, when it has a plus-4,
/// ends with its four.
fn push_zip_of(s: &mut String, postal: &str, zip5: u32, plus4: Option<u16>) {
    let last4 = postal.len().checked_sub(4).and_then(|i| postal.get(i..));
    match (postal.get(..5), plus4, last4) {
        (Some(z), None, _) => s.push_str(z),
        (Some(z), Some(_), Some(p)) if postal.len() >= 9 => {
            s.push_str(z);
            s.push('-');
            s.push_str(p);
        }
        _ => push_zip(s, zip5, plus4),
    }
}

/// Appends `-1234`, the plus-4 of `postal` (trimmed), to the ZIP's five digits that
/// [`push_zip_of`] wrote into `s`: copied from the postal code's last four when it has
/// nine digits or more, as [`push_zip_of`] copies them, written from `plus4` otherwise.
fn push_plus4_of(s: &mut String, postal: &str, plus4: u16) {
    match postal.len().checked_sub(4).and_then(|i| postal.get(i..)) {
        Some(p) if postal.len() >= 9 => {
            s.push('-');
            s.push_str(p);
        }
        _ => {
            s.push('-');
            push_digits(s, u32::from(plus4), 4);
        }
    }
}

/// The jurisdiction set of `plus4` among one ZIP5's ZIP+4 `ranges` (sorted by their low
/// end) on `date`.
fn zip4_jset(ranges: &[ArchivedZip4Record], plus4: u16, date: Date) -> Option<JsetId> {
    let end = ranges.partition_point(|r| r.low.to_native() <= plus4);
    // Ranges of one ZIP5 may overlap across dates; the latest-starting one in force wins.
    ranges[..end]
        .iter()
        .rev()
        .find(|r| plus4 <= r.high.to_native() && date.within(r.from.to_native(), r.to.to_native()))
        .map(|r| JsetId(r.jset.to_native()))
}

/// The period of a ZIP in force on `date`. Periods are sorted and disjoint in a table levy
/// built; in a damaged one the search still stays in bounds.
fn zip_period(zip: &ArchivedZipRecord, date: Date) -> Option<&ArchivedZipPeriod> {
    let periods = zip.periods.as_slice();
    // Most ZIPs have one period (one source, one set): nothing to search.
    if let [p] = periods {
        return date
            .within(p.from.to_native(), p.to.to_native())
            .then_some(p);
    }
    let i = periods
        .partition_point(|p| p.from.to_native() <= date.0)
        .checked_sub(1)?;
    let p = &periods[i];
    date.within(p.from.to_native(), p.to.to_native())
        .then_some(p)
}

/// Writes the address used of a US address: its street line as parsed (`street_line`),
/// unit, city and state (`region`) in upper case, the country `US`, and no postal code yet
/// (the resolve writes the ZIP it matched).
fn write_us_address(used: &mut Address, address: &Address, region: &str, street_line: &StreetLine) {
    used.line1.clear();
    match street_line.number {
        Some(n) if !street_line.street.is_empty() => {
            let _ = write!(used.line1, "{n} {}", street_line.street);
        }
        _ if street_line.street.is_empty() => {}
        _ => used.line1.push_str(&street_line.street),
    }
    if street_line.unit.is_empty() {
        set_upper(&mut used.line2, trim(&address.line2));
    } else {
        set(&mut used.line2, &street_line.unit);
    }
    set_upper(&mut used.city, trim(&address.city));
    set(&mut used.region, region);
    used.postal_code.clear();
    if used.country != "US" {
        set(&mut used.country, "US");
    }
}

/// What decides a ZIP's place on a date: its usual answer, from memory, or its record.
enum ZipAnswer<'a> {
    Usual((JsetId, Coverage)),
    Record(&'a ArchivedZipRecord),
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

    /// `address` with ZIP `zip`'s state, and its city when it has none.
    fn complete_address(&self, zip: Option<u32>, mut address: Address) -> Address {
        if let Some(zip) = zip.and_then(|z| self.zip_record(z)) {
            set(&mut address.region, zip.state.as_str());
            if address.city.is_empty() {
                address.city.push_str(zip.city.as_str());
            }
        }
        address
    }

    /// Places `out` at the place of ZIP `zip5` that its address's city names, on `date`;
    /// `false` when the ZIP has none by that name. Out of the way of the usual lookup: few
    /// ZIPs have such places.
    #[cold]
    #[inline(never)]
    fn place_by_named_city(
        &self,
        zip5: u32,
        status: ResolutionStatus,
        date: Date,
        out: &mut Location,
    ) -> bool {
        let Some(c) = self.zip_city(zip5, &out.address.city, date) else {
            return false;
        };
        let (jset, coverage) = (JsetId(c.jset.to_native()), Coverage::from_u8(c.coverage));
        out.place(Some(jset), status, Precision::Postal, coverage);
        true
    }

    /// What decided among the places that share the ZIP code of `location` (resolved on
    /// `date` by this table), or why its answer holds less than one place's taxes:
    /// [`PlaceNote::CityNamed`] when the city the address names chose the place,
    /// [`PlaceNote::SharedPlaces`], [`PlaceNote::SplitCounties`] or
    /// [`PlaceNote::CityNotNamed`] as the ZIP's period says, [`PlaceNote::None`] for a ZIP
    /// one place answers for, or a location a ZIP+4, a street, a region or an IP address
    /// decided. Worked out when asked, from the ZIP's record, so that resolving stays as
    /// short as it was; ask it with the date the location was resolved on.
    pub fn place_note(&self, location: &Location, date: Date) -> PlaceNote {
        let (Some(zip5), Precision::Postal) = (location.zip, location.precision) else {
            return PlaceNote::None;
        };
        if location.source == LocationSource::Address {
            let named = self.zip_city(zip5, &location.address.city, date);
            if named.is_some_and(|c| Some(JsetId(c.jset.to_native())) == location.jset) {
                return PlaceNote::CityNamed;
            }
        }
        self.zip_record(zip5)
            .and_then(|z| zip_period(z, date))
            .filter(|p| Some(JsetId(p.jset.to_native())) == location.jset)
            .map_or(PlaceNote::None, |p| PlaceNote::from_u8(p.note))
    }

    /// The places a buyer may name in ZIP `zip5` (see [`crate::model::TableData::zip_cities`]):
    /// empty for most ZIPs.
    pub(crate) fn zip_city_records(&self, zip5: u32) -> &[ArchivedZipCity] {
        let all = self.data().zip_cities.as_slice();
        let start = all.partition_point(|c| c.zip.to_native() < zip5);
        let len = all[start..].partition_point(|c| c.zip.to_native() == zip5);
        &all[start..start + len]
    }

    /// The place of ZIP `zip5` that the address's city names, in force on `date`: the city
    /// (upper-cased, as the address used holds it) compared as [`city_key`] writes names.
    /// `None` for a ZIP without such places, an address without a city, or a city the ZIP
    /// does not know. Read only for the few ZIPs shared by places of different taxes (their
    /// ZIP words send every lookup to the record, see `derived::zip_usual`).
    fn zip_city(&self, zip5: u32, city: &str, date: Date) -> Option<&ArchivedZipCity> {
        if city.is_empty() {
            return None;
        }
        let places = self.zip_city_records(zip5);
        if places.is_empty() {
            return None;
        }
        let key = city_key(city);
        places
            .iter()
            .find(|c| c.key.as_str() == key && date.within(c.from.to_native(), c.to.to_native()))
    }

    /// The names of the places that share the ZIP code `location` was resolved in, under
    /// which an address may name them (`BELL`, `BELL GARDENS`, `CUDAHY` in 90201), in force
    /// on `date`, each once, in name order; empty for a ZIP that one place answers for.
    pub fn zip_cities(&self, location: &Location, date: Date) -> Vec<String> {
        let Some(zip) = location.zip else {
            return Vec::new();
        };
        let mut names: Vec<String> = self
            .zip_city_records(zip)
            .iter()
            .filter(|c| date.within(c.from.to_native(), c.to.to_native()))
            .map(|c| c.name.as_str().to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The region (US state, province) of the address used, as [`Table::address_used`]
    /// gives it, without copying the address.
    pub fn location_region<'a>(&'a self, location: &'a Location) -> &'a str {
        match location.zip.and_then(|z| self.zip_record(z)) {
            Some(zip) => zip.state.as_str(),
            None => &location.address.region,
        }
    }

    fn region_record(&self, country: &str, region: &str) -> Option<&ArchivedRegionRecord> {
        let c = country.as_bytes();
        let regions = &self.data().regions;
        regions
            .binary_search_by(|r| (&r.country[..], r.region.as_str()).cmp(&(c, region)))
            .ok()
            .map(|i| &regions[i])
    }

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
                crate::table::load_decimal(&r.local_cap),
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

    /// The jurisdiction set and name of a region (`("US", "TN")`, `("DE", "")`).
    pub fn region(&self, country: &str, region: &str) -> Option<(JsetId, &str)> {
        self.region_record(country, region)
            .map(|r| (JsetId(r.jset.to_native()), r.name.as_str()))
    }

    fn street_jset(&self, zip5: u32, street: &str, number: u32, date: Date) -> Option<JsetId> {
        let ranges = &self.data().streets;
        let start =
            ranges.partition_point(|r| (r.zip5.to_native(), r.street.as_str()) < (zip5, street));
        let end = start
            + ranges[start..].partition_point(|r| {
                r.zip5.to_native() == zip5
                    && r.street.as_str() == street
                    && r.low.to_native() <= number
            });
        let parity_ok = |p: u8| match p {
            b'O' => number % 2 == 1,
            b'E' => number % 2 == 0,
            _ => true,
        };
        ranges[start..end]
            .iter()
            .rev()
            .find(|r| {
                number <= r.high.to_native()
                    && parity_ok(r.parity)
                    && date.within(r.from.to_native(), r.to.to_native())
            })
            .map(|r| JsetId(r.jset.to_native()))
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

    /// Resolves a US address (`region` its state, upper-cased, or empty): the address used
    /// is written, then a street range decides, else a ZIP+4 range, else the ZIP's own
    /// answer on `date`, else the state (see the module's table).
    ///
    /// An address by ZIP alone (no ZIP+4, no street) takes the ZIP's own answer on `date`
    /// when it has one set for all its days (most): from memory, without reading the ZIP's
    /// record. The record is read when it is needed: to check a region given beside the
    /// ZIP, for any other ZIP, and beside a ZIP+4 or a street, which decide first (a word
    /// read for them would be one more trip to memory, seldom used).
    fn resolve_us(
        &self,
        address: &Address,
        region: &str,
        date: Date,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        let postal = trim(&address.postal_code);
        // A line without a street (the usual one of an address given by ZIP) has nothing
        // to parse.
        let no_line1 = trim(&address.line1).is_empty();
        let street_line = if no_line1 {
            StreetLine::default()
        } else {
            parse_street_line(&address.line1)
        };
        let has_street = street_line.number.is_some() && !street_line.street.is_empty();
        write_us_address(&mut out.address, address, region, &street_line);
        if postal.is_empty() {
            let (status, precision) = (ResolutionStatus::PostalOnly, Precision::Province);
            return self.region_location(out, "US", region, status, precision);
        }
        let (zip5, plus4) = parse_us_zip(postal).ok_or_else(|| {
            ResolveError::MalformedPostal(address.postal_code.clone(), "US".into())
        })?;
        let zip4_ranges = plus4.map(|_| self.zip4_ranges_fetched(zip5));
        let by_zip = plus4.is_none() && !has_street;
        let answer = match by_zip.then(|| self.zip_usual(zip5, date)).flatten() {
            Some(usual) if region.is_empty() => ZipAnswer::Usual(usual),
            usual => match self.zip_in_state(zip5, region)? {
                Some(zip) => usual.map_or(ZipAnswer::Record(zip), ZipAnswer::Usual),
                None => {
                    // A well-formed ZIP the table does not know: the state, when given.
                    push_zip_of(&mut out.address.postal_code, postal, zip5, None);
                    let status = ResolutionStatus::PostalFallback1;
                    return self.region_location(out, "US", region, status, Precision::Province);
                }
            },
        };
        // The ZIP's state, and its city when none was given, complete the address when
        // it is asked for (`Table::address_used`).
        out.zip = Some(zip5);
        push_zip_of(&mut out.address.postal_code, postal, zip5, None);
        if has_street && self.place_by_street(&street_line, (zip5, plus4), postal, date, out) {
            return Ok(());
        }
        let status = if no_line1 {
            ResolutionStatus::PostalOnly
        } else {
            ResolutionStatus::PostalFallback1
        };
        if let (Some(p4), Some(ranges)) = (plus4, zip4_ranges) {
            if let Some(jset) = zip4_jset(ranges, p4, date) {
                push_plus4_of(&mut out.address.postal_code, postal, p4);
                out.place(Some(jset), status, Precision::PostalPlus, Coverage::Full);
                return Ok(());
            }
        }
        self.place_by_zip(answer, status, date, out)
    }

    /// The ZIP+4 ranges of `zip5`, asked for all at once before the ZIP's own record is
    /// read: on a large table each is a trip to memory, and they overlap instead of
    /// following each other (the search then finds them in cache).
    #[inline]
    fn zip4_ranges_fetched(&self, zip5: u32) -> &[ArchivedZip4Record] {
        let (start, end) = self.zip4_span(zip5);
        let ranges = &self.data().zip4[start..end];
        crate::lookup::prefetch_slice(ranges);
        ranges
    }

    /// The record of ZIP `zip5`, checked against the state `region` when one is given;
    /// `None` for a ZIP the table does not know.
    fn zip_in_state(
        &self,
        zip5: u32,
        region: &str,
    ) -> Result<Option<&ArchivedZipRecord>, ResolveError> {
        let Some(zip) = self.zip_record(zip5) else {
            return Ok(None);
        };
        if !region.is_empty() && zip.state.as_str() != region {
            return Err(ResolveError::ZipStateMismatch {
                postal: zip_text(zip5, None),
                given: region.to_string(),
                actual: zip.state.as_str().to_string(),
            });
        }
        Ok(Some(zip))
    }

    /// Places `out` by the street range of `street_line` in ZIP `zip` (its ZIP5 and
    /// plus-4), if one is in force on `date`, with the plus-4 of `postal` in the address
    /// used; `false` when none matches.
    fn place_by_street(
        &self,
        street_line: &StreetLine,
        zip: (u32, Option<u16>),
        postal: &str,
        date: Date,
        out: &mut Location,
    ) -> bool {
        let (street, number) = (&street_line.street, street_line.number.unwrap_or(0));
        let Some(jset) = self.street_jset(zip.0, street, number, date) else {
            return false;
        };
        if let Some(p4) = zip.1 {
            push_plus4_of(&mut out.address.postal_code, postal, p4);
        }
        let (status, precision) = (ResolutionStatus::Exact, Precision::Street);
        out.place(Some(jset), status, precision, Coverage::Full);
        true
    }

    /// Places `out` by the ZIP's `answer` on `date`; a ZIP whose record holds no period
    /// that day is answered for its state.
    #[inline]
    fn place_by_zip(
        &self,
        answer: ZipAnswer<'_>,
        status: ResolutionStatus,
        date: Date,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        let (jset, coverage) = match answer {
            ZipAnswer::Usual(usual) => usual,
            ZipAnswer::Record(zip) => {
                // The city the address names decides among the places sharing the ZIP.
                if !out.address.city.is_empty()
                    && self.place_by_named_city(zip.zip.to_native(), status, date, out)
                {
                    return Ok(());
                }
                match zip_period(zip, date) {
                    Some(p) => (JsetId(p.jset.to_native()), Coverage::from_u8(p.coverage)),
                    // No source says what taxes this ZIP on this date: answer for its
                    // state, and say that this is all the answer covers.
                    None => {
                        let state = zip.state.as_str();
                        return self.region_location(out, "US", state, status, Precision::Province);
                    }
                }
            }
        };
        out.place(Some(jset), status, Precision::Postal, coverage);
        Ok(())
    }

    /// Places `out` in `region` of `country` (the country alone when the region is empty
    /// or unknown to the table).
    fn region_location(
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

    fn resolve_other(
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

#[cfg(test)]
mod text_tests {
    use proptest::prelude::*;

    proptest! {
        /// The ZIP text is what `format!` writes: five digits, zero-padded, then a hyphen
        /// and four for a ZIP+4; appended to what the string held.
        #[test]
        fn zip_text_is_zero_padded_digits(zip5 in 0u32..100_000, plus4 in proptest::option::of(0u16..10_000)) {
            let expected = match plus4 {
                None => format!("{zip5:05}"),
                Some(p) => format!("{zip5:05}-{p:04}"),
            };
            prop_assert_eq!(super::zip_text(zip5, plus4), expected.clone());
            let mut s = String::from("x");
            super::push_zip(&mut s, zip5, plus4);
            prop_assert_eq!(s, format!("x{expected}"));
        }

        /// A ZIP code's text is the same whether copied from the postal code it was parsed
        /// from or written from its numbers: five digits, or nine with a hyphen, a space
        /// or nothing between them; with the plus-4 or without it.
        #[test]
        fn zip_text_from_the_postal_code(zip5 in 0u32..100_000, plus4 in proptest::option::of(0u16..10_000), sep in "[- ]?") {
            let postal = match plus4 {
                None => format!("{zip5:05}"),
                Some(p) => format!("{zip5:05}{sep}{p:04}"),
            };
            let (z, p) = crate::address::parse_us_zip(&postal).unwrap();
            let mut s = String::new();
            super::push_zip_of(&mut s, &postal, z, None);
            prop_assert_eq!(&s, &format!("{zip5:05}"));
            if let Some(p4) = p {
                // The plus-4 appended to the five digits already written, as `resolve`
                // does once a ZIP+4 range or a street matches.
                let mut appended = s.clone();
                super::push_plus4_of(&mut appended, &postal, p4);
                prop_assert_eq!(&appended, &super::zip_text(zip5, plus4));
            }
            s.clear();
            super::push_zip_of(&mut s, &postal, z, p);
            prop_assert_eq!(s, super::zip_text(zip5, plus4));
        }

        /// Upper-casing into a kept string gives `str::to_uppercase`, empty and non-ASCII
        /// text included, whatever the string held before.
        #[test]
        fn set_upper_is_to_uppercase(src in "[a-zA-Z0-9 ßéı-]{0,8}", before in "[a-z]{0,4}") {
            let mut dst = before;
            super::set_upper(&mut dst, &src);
            prop_assert_eq!(dst, src.to_uppercase());
        }
    }

    #[test]
    fn zip_text_by_hand() {
        // The lowest ZIP in use (Holtsville, NY) and the ZIP+4 of the README's examples.
        assert_eq!(super::zip_text(501, None), "00501");
        assert_eq!(super::zip_text(501, Some(1)), "00501-0001");
        assert_eq!(super::zip_text(37203, Some(1234)), "37203-1234");
        // A plus-4 not found at the end of the postal code is written from its number.
        let mut s = String::from("00501");
        super::push_plus4_of(&mut s, "00501", 1);
        assert_eq!(s, "00501-0001");
    }
}
