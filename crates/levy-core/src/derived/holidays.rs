//! The holiday index: the places of the table's holiday keys, each with its span of keys
//! and the days its holidays cover, and the days on which any holiday is in force, so that
//! a sale on a day with no holiday anywhere looks no further, and one in a place with no
//! holiday that day looks at a few entries, not every key.

use crate::model::ArchivedHolidayKey;

/// A place of the holiday keys as one number that orders places as `(country, region)`
/// does: the two country bytes, then the region's (at most six; the rest count as the zero
/// bytes a stored key is padded with), big-endian. Built by shifts, without a copy into a
/// padded array.
#[inline]
pub(crate) fn place_key(country: [u8; 2], region: &[u8]) -> u64 {
    let mut key = u64::from(country[0]) << 56 | u64::from(country[1]) << 48;
    for (i, &b) in region.iter().take(6).enumerate() {
        key |= u64::from(b) << (40 - 8 * i);
    }
    key
}

/// The place of a stored holiday key, as [`place_key`] orders it: the stored region is
/// already padded to six bytes, so the eight bytes read as one big-endian number.
#[inline]
pub(crate) fn stored_place_key(k: &ArchivedHolidayKey) -> u64 {
    let [c0, c1] = k.country;
    let [r0, r1, r2, r3, r4, r5] = k.region;
    u64::from_be_bytes([c0, c1, r0, r1, r2, r3, r4, r5])
}

/// What [`crate::Table::holiday_place`] and [`crate::Table::any_holiday_on`] search, built from the
/// holiday keys on first use.
#[derive(Debug, Default)]
pub(crate) struct HolidayIndex {
    /// The places of the keys, in the keys' order (ascending place in a sound table).
    pub(crate) places: Box<[HolidayPlace]>,
    /// The days on which at least one key is in force, as inclusive `(from, to)` day
    /// numbers, ascending and disjoint.
    days: Box<[(i32, i32)]>,
    /// The same days as bits, day `first_day + i` at bit `i % 64` of word `i / 64`, when
    /// they lie within [`HolidayIndex::MAX_BITMAP_DAYS`] of each other (a table's holidays
    /// span a few years: a few hundred bytes); else empty, and `days` is searched.
    bits: Box<[u64]>,
    /// The day of bit 0.
    first_day: i32,
}

impl HolidayIndex {
    pub(crate) fn build(keys: &[ArchivedHolidayKey]) -> HolidayIndex {
        let mut places: Vec<HolidayPlace> = Vec::new();
        let mut days: Vec<(i32, i32)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let (p, from, to) = (stored_place_key(k), k.from.to_native(), k.to.to_native());
            match places.last_mut() {
                Some(last) if last.place == p && last.keys.1 == i as u32 => {
                    last.keys.1 += 1;
                    last.days = (last.days.0.min(from), last.days.1.max(to));
                }
                _ => places.push(HolidayPlace {
                    place: p,
                    keys: (i as u32, i as u32 + 1),
                    days: (from, to),
                }),
            }
            // A key that ends before it starts is in force on no day.
            if from <= to {
                days.push((from, to));
            }
        }
        days.sort_unstable();
        let mut merged: Vec<(i32, i32)> = Vec::with_capacity(days.len());
        for (from, to) in days {
            match merged.last_mut() {
                Some(last) if from <= last.1.saturating_add(1) => last.1 = last.1.max(to),
                _ => merged.push((from, to)),
            }
        }
        let (first_day, bits) = match (merged.first(), merged.last()) {
            (Some(&(first, _)), Some(&(_, last)))
                if i64::from(last) - i64::from(first) < HolidayIndex::MAX_BITMAP_DAYS =>
            {
                let mut bits = vec![0u64; ((last - first) as usize) / 64 + 1];
                for &(from, to) in &merged {
                    for i in (from - first) as usize..=(to - first) as usize {
                        bits[i / 64] |= 1 << (i % 64);
                    }
                }
                (first, bits)
            }
            _ => (0, Vec::new()),
        };
        HolidayIndex {
            places: places.into_boxed_slice(),
            days: merged.into_boxed_slice(),
            bits: bits.into_boxed_slice(),
            first_day,
        }
    }

    /// The widest span of days kept as bits: 2^16 days (about 179 years, 8 KB).
    const MAX_BITMAP_DAYS: i64 = 1 << 16;

    /// Whether any key is in force on `day`.
    pub(crate) fn any_on(&self, day: i32) -> bool {
        if !self.bits.is_empty() {
            return usize::try_from(i64::from(day) - i64::from(self.first_day))
                .ok()
                .and_then(|i| Some(self.bits.get(i / 64)? >> (i % 64)))
                .is_some_and(|w| w & 1 == 1);
        }
        let i = self.days.partition_point(|&(from, _)| from <= day);
        i > 0 && day <= self.days[i - 1].1
    }
}

/// One place of a table's holiday keys (see [`crate::Table::holiday_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HolidayPlace {
    /// The place, as [`place_key`] numbers it.
    pub(crate) place: u64,
    /// The span of `holiday_keys` that holds the place's keys.
    pub(crate) keys: (u32, u32),
    /// The first day any of them starts and the last day any of them ends.
    pub(crate) days: (i32, i32),
}

#[cfg(test)]
mod tests {
    use super::{place_key, stored_place_key, HolidayIndex};
    use crate::model::{ArchivedHolidayKey, HolidayKey};

    fn index(keys: &[(&[u8; 2], &[u8; 6], i32, i32)]) -> HolidayIndex {
        let keys: Vec<HolidayKey> = keys
            .iter()
            .enumerate()
            .map(|(i, &(country, region, from, to))| HolidayKey {
                country: *country,
                region: *region,
                from,
                to,
                holiday: i as u32,
            })
            .collect();
        let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&keys).unwrap();
        let archived =
            rkyv::access::<rkyv::vec::ArchivedVec<ArchivedHolidayKey>, rkyv::rancor::Error>(&bytes)
                .unwrap();
        HolidayIndex::build(archived)
    }

    #[test]
    fn the_days_of_every_place_merge_into_disjoint_spans() {
        // Keys as a table stores them, by place: Ontario on days 10 and 15 to 16; Texas 11
        // to 12 (the day after Ontario's first: adjacent spans merge), 16 to 20 (overlaps
        // Ontario's second), 30 to 31, and one that ends before it starts (in force on no
        // day). By hand: 10..=12, 15..=20, 30..=31.
        let idx = index(&[
            (b"CA", b"ON\0\0\0\0", 10, 10),
            (b"CA", b"ON\0\0\0\0", 15, 16),
            (b"US", b"TX\0\0\0\0", 11, 12),
            (b"US", b"TX\0\0\0\0", 16, 20),
            (b"US", b"TX\0\0\0\0", 30, 31),
            (b"US", b"TX\0\0\0\0", 40, 39),
        ]);
        assert_eq!(&*idx.days, &[(10, 12), (15, 20), (30, 31)]);
        // Kept as bits from day 10: 22 days, one word.
        assert_eq!((idx.first_day, idx.bits.len()), (10, 1));
        // Two places, each with its span of keys and the days its keys cover.
        assert_eq!(idx.places.len(), 2);
        assert_eq!((idx.places[0].keys, idx.places[0].days), ((0, 2), (10, 16)));
        assert_eq!((idx.places[1].keys, idx.places[1].days), ((2, 6), (11, 39)));
        // Searched by day: in force on every day of a span, its first and last included,
        // and on no day between or around them.
        let in_force: Vec<i32> = (0..50).filter(|&d| idx.any_on(d)).collect();
        let expected: Vec<i32> = (10..=12).chain(15..=20).chain(30..=31).collect();
        assert_eq!(in_force, expected);
    }

    #[test]
    fn days_too_far_apart_for_bits_are_searched() {
        // Spans 2^16 days apart or more are kept as a list only (a damaged table's keys may
        // run from the first day to the last a date can hold): the same answers.
        let far = 10 + (1 << 16);
        let idx = index(&[
            (b"US", b"TX\0\0\0\0", 10, 12),
            (b"US", b"TX\0\0\0\0", far, far + 1),
        ]);
        assert!(idx.bits.is_empty());
        let in_force: Vec<i32> = [9, 10, 12, 13, far - 1, far, far + 1, far + 2]
            .into_iter()
            .filter(|&d| idx.any_on(d))
            .collect();
        assert_eq!(in_force, [10, 12, far, far + 1]);
        let idx = index(&[(b"US", b"TX\0\0\0\0", i32::MIN, i32::MAX)]);
        assert!(idx.bits.is_empty());
        assert!(idx.any_on(i32::MIN) && idx.any_on(0) && idx.any_on(i32::MAX));
        // Just inside the limit: bits, the last day included.
        let far = 1 << 16;
        let idx = index(&[
            (b"US", b"TX\0\0\0\0", 0, 0),
            (b"US", b"TX\0\0\0\0", far - 1, far - 1),
        ]);
        assert_eq!(idx.bits.len(), 1024);
        let in_force: Vec<i32> = [-1, 0, 1, far - 2, far - 1, far]
            .into_iter()
            .filter(|&d| idx.any_on(d))
            .collect();
        assert_eq!(in_force, [0, far - 1]);
    }

    #[test]
    fn no_keys_no_days() {
        let idx = index(&[]);
        assert!(idx.days.is_empty() && idx.places.is_empty());
        assert!(!idx.any_on(0) && !idx.any_on(i32::MIN) && !idx.any_on(i32::MAX));
    }

    /// The holiday keys are searched by the place of each stored key read as one number;
    /// it must order and match exactly as the jurisdiction's place does, or a holiday would
    /// be missed (or found in the wrong state).
    #[test]
    fn a_stored_holiday_place_reads_as_the_jurisdictions_place() {
        let places: [(&[u8; 2], &[u8]); 6] = [
            (b"US", b"TX"),
            (b"US", b""),
            (b"US", b"T"),
            (b"CA", b"QC"),
            (b"US", b"TXABCD"),
            (b"ZZ", b"\xff\xff"),
        ];
        let mut keys = Vec::new();
        for (country, region) in places {
            let mut padded = [0u8; 6];
            padded[..region.len()].copy_from_slice(region);
            let key = crate::model::HolidayKey {
                country: *country,
                region: padded,
                from: 0,
                to: 0,
                holiday: 0,
            };
            let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&key).unwrap();
            let archived =
                rkyv::access::<crate::model::ArchivedHolidayKey, rkyv::rancor::Error>(&bytes)
                    .unwrap();
            let stored = stored_place_key(archived);
            assert_eq!(
                stored,
                place_key(*country, region),
                "{country:?} {region:?}"
            );
            keys.push((stored, (country, padded)));
        }
        // And the numbers order as (country, region) does.
        let mut by_number = keys.clone();
        by_number.sort_by_key(|k| k.0);
        let mut by_place = keys;
        by_place.sort_by_key(|k| k.1);
        assert_eq!(by_number, by_place);
    }
}
