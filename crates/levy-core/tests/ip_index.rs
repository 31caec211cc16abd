//! The first-level IPv4 index (format 4; its granularity, format 5): a table of many ranges
//! finds each address through its block (/16, or /20 for a city-level database). Its answers
//! must be those of a plain ordered map of the same ranges, at every edge: a block's first
//! range that began in an earlier block, gaps, the first and last addresses.

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
    table_with_index(ranges, None)
}

/// The table of `ranges`, its index over `bits` upper bits when given (else as the number
/// of ranges chooses).
fn table_with_index(ranges: &[(u32, u32)], bits: Option<u8>) -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    if let Some(bits) = bits {
        b.ipv4_index_bits(bits);
    }
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

/// The ordered map of `rs`: each range's start to its end and index (its postal code).
fn map_of(rs: &[(u32, u32)]) -> BTreeMap<u32, (u32, usize)> {
    rs.iter()
        .enumerate()
        .map(|(i, &(s, e))| (s, (e, i)))
        .collect()
}

/// Checks each range's first and last address, the addresses just outside it and its
/// middle.
fn check_range_edges(
    t: &Table<AlignedBytes>,
    map: &BTreeMap<u32, (u32, usize)>,
    rs: &[(u32, u32)],
) {
    for &(s, e) in rs {
        for ip in [s, e, s.wrapping_sub(1), e.wrapping_add(1), s / 2 + e / 2] {
            check(t, map, ip);
        }
    }
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
    let map = map_of(&rs);
    check_range_edges(&t, &map, &rs);
    // The edges of every block: the first address of a block is where a range that began
    // in an earlier block must still be found.
    for h in 0..=u16::MAX as u32 {
        check(&t, &map, h << 16);
        check(&t, &map, (h << 16) | 0xFFFF);
    }
}

#[test]
fn every_edge_agrees_through_a_20_bit_index() {
    // The /20 index a table of a million ranges or more gets, asked for on 20,000 ranges:
    // 1,048,577 entries, and every range edge and every block edge answers as the map.
    let rs = ranges(20_000, 11);
    let t = table_with_index(&rs, Some(20));
    assert_eq!(t.data().ipv4_top_bits, 20);
    assert_eq!(t.data().ipv4_top.len(), (1 << 20) + 1);
    let map = map_of(&rs);
    check_range_edges(&t, &map, &rs);
    // Block edges: one block in five (209,716 blocks, each its first and last address).
    for h in (0..1u32 << 20).step_by(5) {
        check(&t, &map, h << 12);
        check(&t, &map, (h << 12) | 0xFFF);
    }
}

#[test]
fn bits_beyond_24_are_taken_as_24_and_no_index_answers_alike() {
    // An index asked for over 24 bits is built over 24 (16,777,217 entries), at most a
    // builder allows; and a table's answers never depend on which index it has.
    let rs = ranges(300, 5);
    let map = map_of(&rs);
    let t = table_with_index(&rs, Some(200));
    assert_eq!(t.data().ipv4_top_bits, 24);
    assert_eq!(t.data().ipv4_top.len(), (1 << 24) + 1);
    let none = table_with_index(&rs, Some(0));
    assert!(none.data().ipv4_top.is_empty());
    for &(s, e) in &rs {
        for ip in [s, e, s.wrapping_sub(1), e.wrapping_add(1)] {
            check(&t, &map, ip);
            check(&none, &map, ip);
        }
    }
}

#[test]
fn a_few_ranges_are_found_without_the_index() {
    // 100 ranges: no index is written, and the plain search answers the same.
    let rs = ranges(100, 3);
    let t = table(&rs);
    assert!(t.data().ipv4_top.is_empty());
    let map = map_of(&rs);
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
        let map = map_of(&rs);
        for &ip in &ips {
            check(&t, &map, ip);
        }
        // The same ranges under other granularities, from 1 to 18 bits, answer alike.
        for bits in [1u8, 8, 12, 18] {
            let other = table_with_index(&rs, Some(bits));
            prop_assert_eq!(other.data().ipv4_top.len(), (1usize << bits) + 1);
            for &ip in &ips {
                check(&other, &map, ip);
            }
        }
    }
}
