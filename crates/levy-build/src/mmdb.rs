//! MaxMind-format (`.mmdb`) IP databases: every network of the file, with the place it
//! points to (country, first subdivision, English city name, postal code, coordinates).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnetwork::IpNetwork;
use levy_core::IpLocationSpec;
use maxminddb::geoip2;

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

/// Reads every network of a MaxMind database held in `bytes`.
pub fn read(bytes: &[u8]) -> Result<MmdbRead, String> {
    let reader = maxminddb::Reader::from_source(bytes).map_err(|e| e.to_string())?;
    let all: IpNetwork = if reader.metadata.ip_version == 6 {
        IpNetwork::V6("::/0".parse().map_err(|e| format!("{e}"))?)
    } else {
        IpNetwork::V4("0.0.0.0/0".parse().map_err(|e| format!("{e}"))?)
    };
    let mut out = MmdbRead::default();
    let iter = reader
        .within::<geoip2::City>(all)
        .map_err(|e| e.to_string())?;
    for item in iter {
        let item = item.map_err(|e| e.to_string())?;
        let city = item.info;
        let country = city
            .country
            .as_ref()
            .and_then(|c| c.iso_code)
            .or_else(|| city.registered_country.as_ref().and_then(|c| c.iso_code))
            .unwrap_or("");
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_uppercase()) {
            out.skipped += 1;
            continue;
        }
        let region = city
            .subdivisions
            .as_ref()
            .and_then(|s| s.first())
            .and_then(|s| s.iso_code)
            .unwrap_or("")
            .to_ascii_uppercase();
        let name = city
            .city
            .as_ref()
            .and_then(|c| c.names.as_ref())
            .and_then(|n| n.get("en").copied())
            .unwrap_or("");
        let postal = city.postal.as_ref().and_then(|p| p.code).unwrap_or("");
        let coordinates = city
            .location
            .as_ref()
            .and_then(|l| Some((micro_degrees(l.latitude)?, micro_degrees(l.longitude)?)));
        let (start, end) = range_of(item.ip_net);
        out.ranges.push(MmdbRange {
            start,
            end,
            place: IpLocationSpec {
                country: country.to_string(),
                region,
                city: name.to_string(),
                postal: postal.to_string(),
                approx_postal: String::new(),
                coordinates,
            },
        });
    }
    Ok(out)
}
