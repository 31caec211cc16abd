//! The ZIP+4 starts: each ZIP5's span of the table's ZIP+4 ranges, so that a ZIP+4 lookup
//! searches the ranges of its own ZIP, not every range.

use crate::model::ArchivedZip4Record;

/// `starts[z]..starts[z + 1]` are the ranges of ZIP5 `z` among `ranges` (sorted by ZIP5):
/// 100,001 entries. For a damaged table whose ranges are out of order the spans are wrong
/// but always in bounds.
pub(crate) fn zip4_starts(ranges: &[ArchivedZip4Record]) -> Box<[u32]> {
    let mut starts = Vec::with_capacity(100_001);
    let mut i = 0;
    for z in 0..=100_000u32 {
        while i < ranges.len() && ranges[i].zip5.to_native() < z {
            i += 1;
        }
        starts.push(i as u32);
    }
    starts.into_boxed_slice()
}
