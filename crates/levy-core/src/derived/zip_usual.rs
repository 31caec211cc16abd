//! The ZIP words: each ZIP code's usual answer (its one period's set, coverage and days)
//! in one 64-bit word, so that an address by ZIP alone reads neither the ZIP's record nor
//! its periods.

use crate::date::Date;
use crate::kinds::Coverage;
use crate::lookup::JsetId;
use crate::model::{ArchivedTableData, ArchivedZipRecord};

/// Each ZIP code's usual answer, by ZIP code: when its record holds one period (one source,
/// one set: most ZIPs), that period's set, coverage and days, in one word, so that a lookup
/// reads one word instead of the ZIP's index entry, record and period in turn (three trips
/// to memory on a large table, one after the other).
///
/// A word is filled on the ZIP's first lookup, from the table's bytes alone, so that any
/// thread filling it writes the same value: relaxed atomics suffice. Its bits, from the
/// lowest: the set id (29), the coverage code (2), the first and the last day in force as
/// days since 1970 held within `0..=65535` (16 each), and a top bit set. [`ZipUsual::EMPTY`]
/// is a word not yet filled; [`ZipUsual::NONE`] a ZIP without a usual answer (unknown to
/// the table, several periods, a set id beyond the field, places a named city chooses
/// among, a period with a note). Days outside `1..=65534` are
/// never answered from memory, so that the held days say what the true ones say: a first
/// day before 1970 held as 0 is still before any such day, a last day after 2149 held as
/// 65535 still after it.
#[derive(Debug)]
pub(crate) struct ZipUsual {
    pub(crate) words: Box<[std::sync::atomic::AtomicU64]>,
}

impl ZipUsual {
    /// Empty words, one a ZIP5 slot of `data`.
    pub(crate) fn new(data: &ArchivedTableData) -> ZipUsual {
        ZipUsual {
            words: (0..data.zip5.len())
                .map(|_| std::sync::atomic::AtomicU64::new(ZipUsual::EMPTY))
                .collect(),
        }
    }

    /// The word of ZIP `zip5`, made from its record on the ZIP's first lookup: out of the
    /// lookup's way, so that the lookup of a filled word stays as short as it was.
    #[cold]
    #[inline(never)]
    pub(crate) fn word_of(data: &ArchivedTableData, zip5: u32) -> u64 {
        let named_places = !data.zip_city_records(zip5).is_empty();
        ZipUsual::word(data.zip_record(zip5), named_places)
    }

    pub(crate) const EMPTY: u64 = 0;
    const NONE: u64 = u64::MAX;
    const SET_BITS: u32 = 29;
    pub(crate) const DAYS: std::ops::RangeInclusive<i32> = 1..=65534;

    /// The word of a ZIP whose record is `zip` (`None`: unknown to the table). A ZIP whose
    /// answer a named city may change (it has places by city name), or whose period carries
    /// a note, has none: its record decides, and says so.
    fn word(zip: Option<&ArchivedZipRecord>, named_places: bool) -> u64 {
        if named_places {
            return Self::NONE;
        }
        let [p] = zip.map_or(&[][..], |z| z.periods.as_slice()) else {
            return Self::NONE;
        };
        if p.note != 0 {
            return Self::NONE;
        }
        let jset = u64::from(p.jset.to_native());
        // The set id `2^29 - 1` is left out too, so that no word is `NONE`.
        if jset >= (1 << Self::SET_BITS) - 1 {
            return Self::NONE;
        }
        let coverage = match Coverage::from_u8(p.coverage) {
            Coverage::StateOnly => 0,
            Coverage::Partial => 1,
            Coverage::Full => 2,
        };
        let day = |d: i32| d.clamp(0, 65535) as u64;
        jset | coverage << 29
            | day(p.from.to_native()) << 31
            | day(p.to.to_native()) << 47
            | 1 << 63
    }

    /// The set and coverage a filled `word` gives on `date`; `None` when it holds no usual
    /// answer or the period is not in force that day.
    pub(crate) fn answer(word: u64, date: Date) -> Option<(JsetId, Coverage)> {
        if word == Self::NONE {
            return None;
        }
        let (from, to) = ((word >> 31) & 0xFFFF, (word >> 47) & 0xFFFF);
        if !date.within(from as i32, to as i32) {
            return None;
        }
        let coverage = match (word >> 29) & 3 {
            2 => Coverage::Full,
            1 => Coverage::Partial,
            _ => Coverage::StateOnly,
        };
        Some((
            JsetId((word & ((1 << Self::SET_BITS) - 1)) as u32),
            coverage,
        ))
    }
}
