//! MaxMind-format input. The test writes its own small database in the MaxMind DB format
//! (as the format's public specification defines it: a binary search tree of 24-bit records,
//! a 16-byte separator, a data section, and a metadata map after `\xAB\xCD\xEFMaxMind.com`),
//! so it needs no download and no file outside the repository.

use std::path::PathBuf;

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

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("levy-build-mmdb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    assert_eq!(loc.address_used.postal_code, "37203");
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
