//! The first-level IPv4 index (format 4): a table of many ranges finds each address through
//! its 65,536-address block. Its answers must be those of a plain ordered map of the same
//! ranges, at every edge: a block's first range that began in an earlier block, gaps, the
//! first and last addresses.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use levy_core::*;
use proptest::prelude::*;

/// `n` ranges with gaps between them over the whole IPv4 space; range `i` has postal code
/// `i`. Some ranges span many 65,536-address blocks, most lie inside one.
fn ranges(n: u32, seed: u64) -> Vec<(u32, u32)> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as u32
    };
    let mut cuts: Vec<u32> = (0..2 * n).map(|_| next()).collect();
    cuts.push(0);
    cuts.push(u32::MAX);
    cuts.sort_unstable();
    cuts.dedup();
    cuts.chunks_exact(2).map(|c| (c[0], c[1])).collect()
}

fn table(ranges: &[(u32, u32)]) -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
        .unwrap();
    for (i, &(s, e)) in ranges.iter().enumerate() {
        b.ipv4_range(
            s,
            e,
            IpLocationSpec {
                country: "US".into(),
                region: "TN".into(),
                city: String::new(),
                postal: i.to_string(),
                approx_postal: String::new(),
                coordinates: None,
            },
        )
        .unwrap();
    }
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

/// The reference: the range with the greatest start at or below the address, if it
/// reaches the address.
fn reference(map: &BTreeMap<u32, (u32, usize)>, ip: u32) -> Option<String> {
    let (_, &(end, i)) = map.range(..=ip).next_back()?;
    (ip <= end).then(|| i.to_string())
}

fn check(t: &Table<AlignedBytes>, map: &BTreeMap<u32, (u32, usize)>, ip: u32) {
    let got = t
        .lookup_ip(IpAddr::V4(Ipv4Addr::from(ip)))
        .map(|p| p.postal().to_string());
    assert_eq!(got, reference(map, ip), "{}", Ipv4Addr::from(ip));
}

#[test]
fn every_edge_of_twenty_thousand_ranges_agrees_with_an_ordered_map() {
    let rs = ranges(20_000, 7);
    assert!(rs.len() > 4096, "enough ranges for the index: {}", rs.len());
    let t = table(&rs);
    let map: BTreeMap<u32, (u32, usize)> = rs
        .iter()
        .enumerate()
        .map(|(i, &(s, e))| (s, (e, i)))
        .collect();
    for &(s, e) in &rs {
        for ip in [s, e, s.wrapping_sub(1), e.wrapping_add(1), s / 2 + e / 2] {
            check(&t, &map, ip);
        }
    }
    // The edges of every block: the first address of a block is where a range that began
    // in an earlier block must still be found.
    for h in 0..=u16::MAX as u32 {
        check(&t, &map, h << 16);
        check(&t, &map, (h << 16) | 0xFFFF);
    }
}

#[test]
fn a_few_ranges_are_found_without_the_index() {
    // 100 ranges: no index is written, and the plain search answers the same.
    let rs = ranges(100, 3);
    let t = table(&rs);
    assert!(t.data().ipv4_top.is_empty());
    let map: BTreeMap<u32, (u32, usize)> = rs
        .iter()
        .enumerate()
        .map(|(i, &(s, e))| (s, (e, i)))
        .collect();
    for &(s, e) in &rs {
        for ip in [s, e, s.wrapping_sub(1), e.wrapping_add(1)] {
            check(&t, &map, ip);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Random tables of 5,000 to 9,000 ranges and random addresses.
    #[test]
    fn random_addresses_agree_with_an_ordered_map(
        n in 5_000u32..9_000,
        seed in any::<u64>(),
        ips in proptest::collection::vec(any::<u32>(), 2_000),
    ) {
        let rs = ranges(n, seed);
        let t = table(&rs);
        prop_assert_eq!(t.data().ipv4_top.len(), 65_537);
        let map: BTreeMap<u32, (u32, usize)> =
            rs.iter().enumerate().map(|(i, &(s, e))| (s, (e, i))).collect();
        for ip in ips {
            check(&t, &map, ip);
        }
    }
}
