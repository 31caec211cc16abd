//! The ZIP+4 starts: each ZIP5's span of the table's ZIP+4 ranges, so that a ZIP+4 lookup
//! searches the ranges of its own ZIP, not every range.

use crate::table::Table;

impl<D> Table<D> {
    /// The span of `data().zip4` holding the ranges of `zip5` (empty for none). For a damaged
    /// table whose ranges are out of order the span is wrong but always in bounds.
    pub(crate) fn zip4_span(&self, zip5: u32) -> (usize, usize) {
        let starts = self.derived.zip4_start.get_or_init(|| {
            let ranges = &self.data().zip4;
            let mut starts = Vec::with_capacity(100_001);
            let mut i = 0;
            for z in 0..=100_000u32 {
                while i < ranges.len() && ranges[i].zip5.to_native() < z {
                    i += 1;
                }
                starts.push(i as u32);
            }
            starts.into_boxed_slice()
        });
        match (starts.get(zip5 as usize), starts.get(zip5 as usize + 1)) {
            (Some(&s), Some(&e)) => (s as usize, e as usize),
            _ => (0, 0),
        }
    }
}
