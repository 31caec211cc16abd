//! The taxability index: what the table's matrix says of each (place, tax code), one byte
//! a pair, so that a line asks one load per place of its answer; and the reading of the
//! matrix's keys that builds it and answers the days it leaves open.

use super::holidays::place_key;
use crate::date::Date;
use crate::kinds::Level;
use crate::kinds::TaxabilityLevels;
use crate::lookup::TaxCodeId;
use crate::model::{ArchivedTableData, ArchivedTaxabilityKey};

/// What a table's matrix says of each (place, tax code), made on the first question: one
/// byte per pair, so that a line asks one load per place of its answer.
#[derive(Debug, Default)]
pub(crate) struct TaxabilityIndex {
    /// The places with cells, ascending.
    pub(crate) places: Box<[u64]>,
    /// `status[p * codes + c]`: the [`TaxabilityLevels`] known on every day for code `c` in
    /// place `p`, plus [`TaxabilityIndex::DATED`] when what is known depends on the day
    /// (the place's keys then decide).
    pub(crate) status: Box<[u8]>,
    /// The number of tax codes.
    pub(crate) codes: usize,
    /// The Canadian provinces whose tax is an HST (their region's jurisdictions hold no
    /// federal GST beside it), as places: an HST answers to the federal cells and the
    /// province's alike.
    pub(crate) hst: Box<[u64]>,
}

impl TaxabilityIndex {
    /// Known on some days and not others: the keys decide.
    pub(crate) const DATED: u8 = 0x80;

    pub(crate) fn build(table: &ArchivedTableData) -> TaxabilityIndex {
        let d = table;
        let keys = &d.taxability_keys;
        let codes = d.tax_codes.len();
        let mut places: Vec<u64> = keys.iter().map(|k| k.place.to_native()).collect();
        places.dedup();
        let mut status = vec![0u8; places.len() * codes];
        for (p, &place) in places.iter().enumerate() {
            let span = place_span(keys, place);
            let place_keys = &keys[span];
            for c in 0..codes {
                status[p * codes + c] = resolve_status(table, place_keys, TaxCodeId(c as u32));
            }
        }
        let mut hst: Vec<u64> = d
            .regions
            .iter()
            .filter(|r| r.country == *b"CA" && !r.region.is_empty())
            .filter(|r| {
                !table.jset(crate::JsetId(r.jset.to_native())).any(|j| {
                    table
                        .jurisdiction(j)
                        .is_some_and(|x| x.level() == Level::Country)
                })
            })
            .map(|r| place_key(r.country, r.region.as_bytes()))
            .collect();
        hst.sort_unstable();
        TaxabilityIndex {
            places: places.into_boxed_slice(),
            status: status.into_boxed_slice(),
            codes,
            hst: hst.into_boxed_slice(),
        }
    }
}

/// The span of `keys` (sorted by place) holding `place`'s keys.
pub(crate) fn place_span(keys: &[ArchivedTaxabilityKey], place: u64) -> std::ops::Range<usize> {
    let lo = keys.partition_point(|k| k.place.to_native() < place);
    let hi = keys.partition_point(|k| k.place.to_native() <= place);
    // Keys out of order (a damaged table) find less, never a reversed span.
    lo..hi.max(lo)
}

/// The span of `keys` (one place's, sorted by code) holding `code`'s keys.
pub(crate) fn code_span(keys: &[ArchivedTaxabilityKey], code: u32) -> std::ops::Range<usize> {
    let lo = keys.partition_point(|k| k.tax_code.to_native() < code);
    let hi = keys.partition_point(|k| k.tax_code.to_native() <= code);
    lo..hi.max(lo)
}

/// Whether one place's keys make `code`'s treatment known at the level `bit` on `day`:
/// a key of the code itself for that level in force that day decides (an `unknown` cell
/// says no); without one, a code outside the matrix asks its parent, a root is known, and
/// any other code is not.
pub(crate) fn known_at(
    table: &ArchivedTableData,
    place_keys: &[ArchivedTaxabilityKey],
    code: TaxCodeId,
    bit: u8,
    day: i32,
) -> bool {
    let mut c = code;
    for _ in 0..64 {
        let mut own = place_keys[code_span(place_keys, c.0)].iter().filter(|k| {
            k.levels & bit != 0 && Date(day).within(k.from.to_native(), k.to.to_native())
        });
        if let Some(first) = own.next() {
            return first.known & bit != 0 || own.any(|k| k.known & bit != 0);
        }
        match table.tax_codes.get(c.0 as usize) {
            Some(r) if r.parent.to_native() == u32::MAX => return true,
            Some(r) if !r.matrix => c = TaxCodeId(r.parent.to_native()),
            _ => return false,
        }
    }
    false
}

/// What one place's keys say of `code`: the levels known on every day, with
/// [`TaxabilityIndex::DATED`] when some level is known on some days only (then
/// [`known_at`] decides, day by day).
fn resolve_status(
    table: &ArchivedTableData,
    place_keys: &[ArchivedTaxabilityKey],
    code: TaxCodeId,
) -> u8 {
    // The days on which the answer may change: those of the keys of the code and of every
    // code above it through codes outside the matrix.
    let mut days = vec![Date::MIN.0];
    let mut c = code;
    for _ in 0..64 {
        for k in &place_keys[code_span(place_keys, c.0)] {
            days.push(k.from.to_native());
            days.push(k.to.to_native().saturating_add(1));
        }
        match table.tax_codes.get(c.0 as usize) {
            Some(r) if r.parent.to_native() != u32::MAX && !r.matrix => {
                c = TaxCodeId(r.parent.to_native())
            }
            _ => break,
        }
    }
    days.sort_unstable();
    days.dedup();
    let mut status = 0u8;
    for bit in [TaxabilityLevels::UPPER.0, TaxabilityLevels::LOWER.0] {
        let known: Vec<bool> = days
            .iter()
            .map(|&d| known_at(table, place_keys, code, bit, d))
            .collect();
        if known.iter().all(|&k| k) {
            status |= bit;
        } else if known.iter().any(|&k| k) {
            status |= TaxabilityIndex::DATED;
        }
    }
    status
}
