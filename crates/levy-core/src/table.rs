//! The `*.levy` file: a fixed 64-byte header followed by an rkyv archive of [`TableData`].
//!
//! ```text
//! offset  size  field
//!      0     8  magic            b"LEVYTABL"
//!      8     4  format version   u32 LE, FORMAT_VERSION
//!     12     4  layout flags     u32 LE, LAYOUT_FLAGS (rkyv little-endian, aligned, 32-bit offsets)
//!     16     8  archive length   u64 LE, bytes after the header
//!     24     8  build time       i64 LE, Unix seconds
//!     32    32  content hash     BLAKE3 of bytes 0..32 and of the whole archive
//!     64     -  archive          rkyv, root at the end, 16-byte aligned
//! ```
//!
//! Opening checks the header in O(1), verifies the content hash over the whole file, and
//! validates the archive once with bytecheck, so a truncated, corrupt, foreign, hostile or
//! merely altered file is an error, never undefined behaviour and never a changed answer.
//! BLAKE3 keeps that affordable on every open (a few milliseconds for a 26 MB table). The
//! one exception is [`Table::open_unchecked`], for bytes compiled into the program. The
//! manifest of sources lives in the archive root (validated with it), not in the fixed
//! header.
//!
//! Format history: version 1 hashed with SHA-256 and gave each ZIP code one jurisdiction
//! set for all dates; version 2 hashes with BLAKE3, gives each ZIP code dated periods with
//! their coverage, and records each region's coverage and the levels its sources name;
//! version 3 lets a holiday exclude codes under the codes it covers; version 4 adds the
//! indexes of the hot path: compact rule keys beside the rules (with each plain rule's
//! rate as an integer mantissa and scale), holiday keys sorted by place, and a first-level
//! IPv4 index on the upper 16 bits; version 5 records the IPv4 index's width (16 bits, or
//! 20 over /20 blocks from 2^20 ranges); version 6 adds the taxability matrix (its cells, with
//! their sources, and keys by place and tax code), marks the codes every place's row must
//! address, and gives rules a per-sale threshold (group, limit, side).

use rkyv::rancor;
use rkyv::util::AlignedVec;
use rust_decimal::Decimal;

use crate::model::{ArchivedTableData, TableData};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"LEVYTABL";
/// The table format this build of levy reads and writes. Bumped on any layout change.
pub const FORMAT_VERSION: u32 = 6;
/// rkyv layout flags: bit 0 little-endian, bit 1 aligned primitives, bits 8..16 the offset
/// width in bits (32).
pub const LAYOUT_FLAGS: u32 = 0b01 | 0b10 | (32 << 8);
/// Size of the fixed header; the archive starts here.
pub const HEADER_LEN: usize = 64;

/// Why a table could not be opened or verified.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableError {
    /// The file is shorter than its header says. Re-copy or rebuild it: it was cut short.
    #[error("table is truncated: {len} bytes, expected at least {expected}")]
    Truncated {
        /// Bytes present.
        len: usize,
        /// Bytes the header requires.
        expected: usize,
    },
    /// The file does not start with the levy magic: it is not a levy table.
    #[error("not a levy table (bad magic); build one with `levy build`")]
    NotATable,
    /// The table was written by another format version. Rebuild it with this levy's
    /// `levy build`, or use the levy release that wrote it.
    #[error("table format version {got}, this levy reads version {expected}; rebuild the table with this release's `levy build`")]
    Version {
        /// The version this levy reads.
        expected: u32,
        /// The version in the file.
        got: u32,
    },
    /// The table was written for another byte order or offset width.
    #[error("table layout flags {got:#x}, this levy needs {expected:#x}; rebuild the table on this platform")]
    Layout {
        /// The flags this levy needs.
        expected: u32,
        /// The flags in the file.
        got: u32,
    },
    /// The archive does not start 16-byte aligned in memory. Open the table from a file
    /// (`AnyTable::open_file`) or with `Table::from_bytes`, which align it.
    #[error(
        "table bytes are not 16-byte aligned in memory; open them with AnyTable::open_file or Table::from_bytes"
    )]
    Misaligned,
    /// The bytes are damaged: the structure at `offset` is invalid. Rebuild or re-copy the file.
    #[error("table is corrupt at byte {offset}: {reason}")]
    Corrupt {
        /// Byte offset in the file where the damage was found (approximate for archive errors).
        offset: usize,
        /// What was wrong.
        reason: String,
    },
    /// The content hash does not match: the file changed after it was built. Re-copy it
    /// from where it was built, or rebuild it with `levy build`.
    #[error("table content hash mismatch: header says {expected}, content hashes to {actual}; the file was modified or damaged: re-copy or rebuild it (`levy build`)")]
    HashMismatch {
        /// Hash written in the header (hex).
        expected: String,
        /// Hash of the content (hex).
        actual: String,
    },
    /// The file could not be read.
    #[error("cannot read table {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// Bytes whose address and content do not change while a [`Table`] holds them.
///
/// # Safety
///
/// `as_ref` must return the same slice (same address, same length, same content) every time
/// it is called for as long as the value lives. The table validates the archive once at
/// open and reads it in place afterwards, relying on this.
pub unsafe trait TableBytes: AsRef<[u8]> {}

// SAFETY: a Vec's buffer does not move or change while it is not mutated, and Table never
// hands out `&mut` access to it.
unsafe impl TableBytes for Vec<u8> {}
// SAFETY: as for Vec.
unsafe impl TableBytes for Box<[u8]> {}
// SAFETY: a shared static slice is immutable for the program's life.
unsafe impl TableBytes for &'static [u8] {}
// SAFETY: an Arc<[u8]> is immutable and its allocation does not move.
unsafe impl TableBytes for std::sync::Arc<[u8]> {}
// SAFETY: the mapping is fixed for its life as long as the file is not rewritten in place,
// which `AnyTable::open_file`'s contract (and any caller that maps a table itself) rules out.
unsafe impl TableBytes for memmap2::Mmap {}
// SAFETY: as for Vec.
unsafe impl TableBytes for AlignedBytes {}

/// An owned, 16-byte aligned byte buffer for tables read into memory.
#[derive(Clone, Debug, Default)]
pub struct AlignedBytes(AlignedVec<16>);

impl AlignedBytes {
    /// Copies `bytes` into a new aligned buffer.
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut v = AlignedVec::<16>::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        AlignedBytes(v)
    }
}

impl AsRef<[u8]> for AlignedBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// The fixed header of a table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub format_version: u32,
    /// Layout flags.
    pub layout_flags: u32,
    /// Length of the archive after the header.
    pub archive_len: u64,
    /// Unix seconds when the table was built (as the builder was told; deterministic builds
    /// set it from their inputs).
    pub build_time: i64,
    /// BLAKE3 content hash.
    pub content_hash: [u8; 32],
}

impl Header {
    /// The content hash as lower-case hex, the form every calculation reports.
    pub fn hash_hex(&self) -> String {
        hex32(&self.content_hash)
    }

    fn parse(bytes: &[u8]) -> Result<Header, TableError> {
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            if bytes.len() < 8 && MAGIC.starts_with(bytes) {
                return Err(TableError::Truncated {
                    len: bytes.len(),
                    expected: HEADER_LEN,
                });
            }
            return Err(TableError::NotATable);
        }
        if bytes.len() < HEADER_LEN {
            return Err(TableError::Truncated {
                len: bytes.len(),
                expected: HEADER_LEN,
            });
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let header = Header {
            format_version: u32_at(8),
            layout_flags: u32_at(12),
            archive_len: u64_at(16),
            build_time: u64_at(24) as i64,
            content_hash: bytes[32..64].try_into().expect("32 bytes"),
        };
        if header.format_version != FORMAT_VERSION {
            return Err(TableError::Version {
                expected: FORMAT_VERSION,
                got: header.format_version,
            });
        }
        if header.layout_flags != LAYOUT_FLAGS {
            return Err(TableError::Layout {
                expected: LAYOUT_FLAGS,
                got: header.layout_flags,
            });
        }
        let expected = (HEADER_LEN as u64).saturating_add(header.archive_len);
        if (bytes.len() as u64) < expected {
            return Err(TableError::Truncated {
                len: bytes.len(),
                expected: usize::try_from(expected).unwrap_or(usize::MAX),
            });
        }
        if (bytes.len() as u64) > expected {
            return Err(TableError::Corrupt {
                offset: usize::try_from(expected).unwrap_or(usize::MAX),
                reason: format!("{} bytes after the archive", bytes.len() as u64 - expected),
            });
        }
        Ok(header)
    }
}

/// 32 bytes as lower-case hex, written by blake3 (the table's hashes are its).
pub(crate) fn hex32(bytes: &[u8; 32]) -> String {
    blake3::Hash::from_bytes(*bytes).to_hex().to_string()
}

fn content_hash(header_prefix: &[u8], archive: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(header_prefix);
    h.update(archive);
    h.finalize().into()
}

/// Serializes `data` into a complete table file (header and archive).
pub(crate) fn encode(data: &TableData, build_time: i64) -> Vec<u8> {
    let archive =
        rkyv::to_bytes::<rancor::Error>(data).expect("serializing owned data cannot fail");
    let mut out = Vec::with_capacity(HEADER_LEN + archive.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&LAYOUT_FLAGS.to_le_bytes());
    out.extend_from_slice(&(archive.len() as u64).to_le_bytes());
    out.extend_from_slice(&build_time.to_le_bytes());
    let hash = content_hash(&out[..32], &archive);
    out.extend_from_slice(&hash);
    out.extend_from_slice(&archive);
    out
}

/// A rate table, read in place from any stable bytes: a `Vec<u8>`, a `&'static [u8]` (the
/// embedded default), an [`AlignedBytes`] or a memory map.
///
/// A `Table` is immutable and `Send + Sync` when its bytes are; share it behind an `Arc`.
pub struct Table<D> {
    data: D,
    header: Header,
    root: *const ArchivedTableData,
    /// `zip4_start[z]..zip4_start[z + 1]` are the ZIP+4 ranges of ZIP5 `z`: an index kept
    /// in memory, not in the file, built on the first ZIP+4 lookup (so opening stays as
    /// cheap as before) and turning the search over every range into one over a ZIP's own.
    zip4_start: std::sync::OnceLock<Box<[u32]>>,
    /// The places of the holiday keys, each with its span of keys and the days its
    /// holidays cover, and the days on which any holiday is in force: kept in memory,
    /// built on the first holiday search, so that a sale on a day with no holiday anywhere
    /// looks no further, and one in a place with no holiday that day looks at a few
    /// entries, not every key.
    holidays: std::sync::OnceLock<HolidayIndex>,
    /// Each jurisdiction's rule keys for the usual tax code, found on its first usual line
    /// (see [`crate::calc::UsualRules`]), so that later lines index them instead of
    /// searching the jurisdiction's rules.
    pub(crate) usual: std::sync::OnceLock<crate::calc::UsualRules>,
    /// Each ZIP code's usual answer (see [`crate::resolve::ZipUsual`]), kept in memory
    /// after the ZIP's first lookup, so that later lookups read neither its record nor
    /// its periods: 8 bytes a possible ZIP code (800 KB), made on the first US ZIP lookup.
    pub(crate) zip_usual: std::sync::OnceLock<crate::resolve::ZipUsual>,
    /// What the taxability matrix says of each place and tax code (see
    /// [`crate::taxability`]), made on the first line whose code is not a root.
    pub(crate) taxability: std::sync::OnceLock<crate::taxability::TaxabilityIndex>,
}

/// What [`Table::holiday_place`] and [`Table::any_holiday_on`] search, built from the
/// holiday keys on first use.
#[derive(Debug, Default)]
struct HolidayIndex {
    /// The places of the keys, in the keys' order (ascending place in a sound table).
    places: Box<[HolidayPlace]>,
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
    fn build(keys: &[crate::model::ArchivedHolidayKey]) -> HolidayIndex {
        let mut places: Vec<HolidayPlace> = Vec::new();
        let mut days: Vec<(i32, i32)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let (p, from, to) = (
                crate::calc::stored_place_key(k),
                k.from.to_native(),
                k.to.to_native(),
            );
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
    fn any_on(&self, day: i32) -> bool {
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

/// One place of a table's holiday keys (see [`Table::holiday_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HolidayPlace {
    /// The place, as `calc::place_key` numbers it.
    pub(crate) place: u64,
    /// The span of `holiday_keys` that holds the place's keys.
    pub(crate) keys: (u32, u32),
    /// The first day any of them starts and the last day any of them ends.
    pub(crate) days: (i32, i32),
}

// SAFETY: `root` points into `data`, which `TableBytes` guarantees is immutable and fixed;
// the archived data is plain bytes, so sharing or sending the table is as safe as sharing
// or sending `D`.
unsafe impl<D: Send> Send for Table<D> {}
// SAFETY: as above; no interior mutability.
unsafe impl<D: Sync> Sync for Table<D> {}

impl<D: TableBytes> Table<D> {
    /// Opens a table: O(1) header checks, the content hash over every byte, then one
    /// validated access of the archive. A table whose bytes differ in any way from what
    /// `levy build` wrote is refused.
    pub fn open(data: D) -> Result<Self, TableError> {
        let bytes = data.as_ref();
        let header = Header::parse(bytes)?;
        let archive = &bytes[HEADER_LEN..];
        if archive.as_ptr() as usize % 16 != 0 {
            return Err(TableError::Misaligned);
        }
        check_hash(bytes, &header)?;
        let root = rkyv::access::<ArchivedTableData, rancor::Error>(archive).map_err(|e| {
            TableError::Corrupt {
                offset: HEADER_LEN,
                reason: e.to_string(),
            }
        })? as *const ArchivedTableData;
        Ok(Table {
            data,
            header,
            root,
            zip4_start: std::sync::OnceLock::new(),
            holidays: std::sync::OnceLock::new(),
            usual: std::sync::OnceLock::new(),
            zip_usual: std::sync::OnceLock::new(),
            taxability: std::sync::OnceLock::new(),
        })
    }

    /// Opens a table without validating the archive: O(1).
    ///
    /// # Safety
    ///
    /// The bytes must be a table written by this release of levy's builder and not altered
    /// since, for example the embedded default compiled into the binary. Damaged bytes
    /// opened this way are undefined behaviour; use [`Table::open`] for anything read at run
    /// time.
    pub unsafe fn open_unchecked(data: D) -> Result<Self, TableError> {
        let bytes = data.as_ref();
        let header = Header::parse(bytes)?;
        let archive = &bytes[HEADER_LEN..];
        if archive.as_ptr() as usize % 16 != 0 {
            return Err(TableError::Misaligned);
        }
        // SAFETY: the caller promises these are untouched bytes from levy's own builder.
        let root = unsafe { rkyv::access_unchecked::<ArchivedTableData>(archive) } as *const _;
        Ok(Table {
            data,
            header,
            root,
            zip4_start: std::sync::OnceLock::new(),
            holidays: std::sync::OnceLock::new(),
            usual: std::sync::OnceLock::new(),
            zip_usual: std::sync::OnceLock::new(),
            taxability: std::sync::OnceLock::new(),
        })
    }

    /// Checks the content hash over the header's first 32 bytes and the whole archive
    /// again (every open but [`Table::open_unchecked`] already did). O(size of the table).
    pub fn verify(&self) -> Result<(), TableError> {
        check_hash(self.data.as_ref(), &self.header)
    }

    /// The bytes the table reads from.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }
}

/// Compares the content hash of `bytes` (a whole table file) with its header's.
fn check_hash(bytes: &[u8], header: &Header) -> Result<(), TableError> {
    let actual = content_hash(&bytes[..32], &bytes[HEADER_LEN..]);
    if actual != header.content_hash {
        return Err(TableError::HashMismatch {
            expected: hex32(&header.content_hash),
            actual: hex32(&actual),
        });
    }
    Ok(())
}

/// The content hash of a table file's bytes, whatever its header says, in lower-case hex;
/// `None` when the bytes are too short to hold a header. For reports such as `levy info`.
pub fn computed_hash_hex(bytes: &[u8]) -> Option<String> {
    (bytes.len() >= HEADER_LEN).then(|| hex32(&content_hash(&bytes[..32], &bytes[HEADER_LEN..])))
}

impl<D> Table<D> {
    /// The place `place` (numbered as `calc::place_key` does) among the holiday keys, if
    /// any key is of it. The keys of a place are consecutive in a sound table; in a damaged
    /// one whose keys are out of order, a place's span may be wrong but is always in bounds.
    pub(crate) fn holiday_place(&self, place: u64) -> Option<&HolidayPlace> {
        let places = &self.holiday_index().places;
        let i = places.partition_point(|p| p.place < place);
        places.get(i).filter(|p| p.place == place)
    }

    /// Whether any holiday key of the table, of any place, is in force on `date`: when
    /// none is (most days of the year), no jurisdiction of a sale can be on a holiday, and
    /// a line looks no further than this.
    pub(crate) fn any_holiday_on(&self, date: crate::Date) -> bool {
        self.holiday_index().any_on(date.0)
    }

    fn holiday_index(&self) -> &HolidayIndex {
        self.holidays
            .get_or_init(|| HolidayIndex::build(&self.data().holiday_keys))
    }

    /// The span of `data().zip4` holding the ranges of `zip5` (empty for none). For a damaged
    /// table whose ranges are out of order the span is wrong but always in bounds.
    pub(crate) fn zip4_span(&self, zip5: u32) -> (usize, usize) {
        let starts = self.zip4_start.get_or_init(|| {
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

    /// The fixed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The archived table data, read in place.
    pub fn data(&self) -> &ArchivedTableData {
        // SAFETY: `root` was produced from `data`'s bytes at open, either validated or under
        // `open_unchecked`'s contract, and `TableBytes` keeps those bytes fixed while `self`
        // lives; the returned reference borrows `self`.
        unsafe { &*self.root }
    }
}

impl Table<AlignedBytes> {
    /// Opens a table from bytes of any alignment by copying them into aligned memory
    /// (verified and validated as [`Table::open`] does). For files, use
    /// [`crate::AnyTable::open_file`], which maps them instead of copying.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TableError> {
        Table::open(AlignedBytes::copy_from(bytes))
    }
}

impl<D> std::fmt::Debug for Table<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// Reads a stored decimal. A malformed value (possible only in a damaged table opened
/// without `verify`) reads as zero rather than panicking.
#[inline]
pub(crate) fn load_decimal(bytes: &[u8; 16]) -> Decimal {
    let flags = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let scale = (flags >> 16) & 0xff;
    if scale > 28 || flags & 0x7f00_ffff != 0 {
        return Decimal::ZERO;
    }
    Decimal::deserialize(*bytes)
}

/// Stores a decimal for a table.
#[inline]
pub(crate) fn store_decimal(d: Decimal) -> [u8; 16] {
    d.serialize()
}

#[cfg(test)]
mod holiday_index_tests {
    use super::HolidayIndex;
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
}
