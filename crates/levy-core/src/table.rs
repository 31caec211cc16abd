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
//! address, and gives rules a per-sale threshold (group, limit, side); version 7 gives a ZIP
//! code the places that share it under the city names a buyer may write (each with its
//! set, days and coverage: the city an address names decides within the ZIP), gives each
//! ZIP period a note saying why its coverage is what it is (a ZIP split between counties,
//! shared by places, or holding a city tax only a named city brings), and gives each
//! manifest entry the publication its rates come from when the input names one; version 8
//! adds per-order fees on retail deliveries (each with its state, conditions, excluded codes
//! and unknown periods; its amounts are the rules of its own jurisdiction); version 9 gives
//! each manifest entry its horizon, the last day it is known to hold what is in force.

use rkyv::rancor;
use rkyv::util::AlignedVec;

use crate::model::{ArchivedTableData, TableData};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"LEVYTABL";
/// The table format this build of levy reads and writes. Bumped on any layout change.
pub const FORMAT_VERSION: u32 = 9;
/// rkyv layout flags: bit 0 little-endian, bit 1 aligned primitives, bits 8..16 the offset
/// width in bits (32).
pub const LAYOUT_FLAGS: u32 = 0b01 | 0b10 | (32 << 8);
/// Size of the fixed header; the archive starts here.
pub const HEADER_LEN: usize = 64;
/// The longest table file levy opens: 1 GiB, 24 times a table of every shared source
/// (42 MB). A longer file is refused from its length, before it is read.
pub const MAX_TABLE_LEN: u64 = 1 << 30;

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
    /// The file is larger than any table levy opens ([`MAX_TABLE_LEN`]); refused from its
    /// length alone, before any of it is read. Rebuild it with `levy build`.
    #[error("table file is {len} bytes, larger than the {max} bytes a table may hold; it is not a table `levy build` wrote")]
    TooLarge {
        /// The file's length.
        len: u64,
        /// [`MAX_TABLE_LEN`].
        max: u64,
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
// which `AnyTable::open_file_mapped`'s contract (and any caller that maps a table itself) rules out.
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

    /// Reads exactly `len` bytes of `reader` into a new aligned buffer: an error when it
    /// holds fewer, or more (a file that changed length while it was read), so that the
    /// buffer is never larger than the length asked for, whatever the reader is.
    pub fn read_exact_len(reader: &mut impl std::io::Read, len: u64) -> std::io::Result<Self> {
        let size = usize::try_from(len).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                "larger than memory can hold",
            )
        })?;
        let mut v = AlignedVec::<16>::with_capacity(size);
        let mut chunk = vec![0u8; 1 << 20];
        while v.len() < size {
            let want = chunk.len().min(size - v.len());
            let n = reader.read(&mut chunk[..want])?;
            if n == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "the file ended after {} of {len} bytes (it changed while it was read)",
                        v.len()
                    ),
                ));
            }
            v.extend_from_slice(&chunk[..n]);
        }
        let mut probe = [0u8; 1];
        if reader.read(&mut probe)? != 0 {
            return Err(std::io::Error::other(format!(
                "the file is longer than its {len} bytes (it changed while it was read)"
            )));
        }
        Ok(AlignedBytes(v))
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

    /// Checks a table file from its first bytes (`prefix`, [`HEADER_LEN`] of them when the
    /// file holds as many) and its length, before the rest is read: the header must be a
    /// table's of this format, the length the one the header gives, and at most
    /// [`MAX_TABLE_LEN`]. A file of any other length is refused without reading it whole.
    pub fn check_file(prefix: &[u8], file_len: u64) -> Result<Header, TableError> {
        let header = Header::parse_prefix(prefix, file_len)?;
        if file_len > MAX_TABLE_LEN {
            return Err(TableError::TooLarge {
                len: file_len,
                max: MAX_TABLE_LEN,
            });
        }
        Ok(header)
    }

    fn parse(bytes: &[u8]) -> Result<Header, TableError> {
        Header::parse_prefix(bytes, bytes.len() as u64)
    }

    /// The header of `bytes`, the first bytes of a table of `total` bytes.
    fn parse_prefix(bytes: &[u8], total: u64) -> Result<Header, TableError> {
        let short = |len: u64| usize::try_from(len).unwrap_or(usize::MAX);
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
                len: short(total),
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
        if total < expected {
            return Err(TableError::Truncated {
                len: short(total),
                expected: short(expected),
            });
        }
        if total > expected {
            return Err(TableError::Corrupt {
                offset: short(expected),
                reason: format!("{} bytes after the archive", total - expected),
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
    /// The indexes derived from the archive and kept in memory beside it, each made on
    /// first use (see [`crate::derived`]).
    pub(crate) derived: crate::derived::Derived,
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
            derived: Default::default(),
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
            derived: Default::default(),
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
    /// The fixed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The content hash as lower-case hex.
    pub fn hash_hex(&self) -> String {
        self.header.hash_hex()
    }

    /// The archived table data, read in place.
    pub fn data(&self) -> &ArchivedTableData {
        // SAFETY: `root` was produced from `data`'s bytes at open, either validated or under
        // `open_unchecked`'s contract, and `TableBytes` keeps those bytes fixed while `self`
        // lives; the returned reference borrows `self`.
        unsafe { &*self.root }
    }
}

/// A table reads as its archive: the lookups of `crate::lookup` (jurisdictions, rules, tax
/// codes, sets, ZIP records) are the archive's own, so that what is derived from the
/// archive (`crate::derived`) reads it without the table, and the table itself is the
/// file, its checks and what it keeps beside the archive.
impl<D> std::ops::Deref for Table<D> {
    type Target = ArchivedTableData;

    #[inline]
    fn deref(&self) -> &ArchivedTableData {
        self.data()
    }
}

impl Table<AlignedBytes> {
    /// Opens a table from bytes of any alignment by copying them into aligned memory
    /// (verified and validated as [`Table::open`] does). For files, use
    /// [`crate::AnyTable::open_file`], which reads them straight into aligned memory.
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
