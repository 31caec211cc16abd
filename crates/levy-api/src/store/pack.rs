//! Calculations as the SQLite ledger stores them: the sealed JSON, LZ4-compressed against a
//! fixed dictionary.
//!
//! A calculation is a 24-hour quote, and a busy till makes one per sale, so calculations
//! are most of what the ledger writes. Their sealed JSON (about 1.5 KB for one line in two
//! jurisdictions) is mostly the same keys and words each time: compressed against a
//! dictionary holding them, the same record takes about a tenth of that, and the writer
//! thread, the WAL and the checkpointer handle a fraction of the bytes.
//!
//! Stored form (a BLOB in the `data` column): one format byte, [`FORMAT_LZ4_DICT_1`], then
//! the uncompressed length as a little-endian `u32`, then an LZ4 block compressed with
//! [`DICT_1`] as its dictionary. A ledger written before keeps its calculations as JSON
//! text (a TEXT value), and both are read. The seal stays inside: a damaged byte in the
//! compressed form fails the decompression or the digest, so it is an error, never a
//! changed amount. Transactions and every other record stay JSON text, to be read with any
//! SQLite tool.

use std::borrow::Cow;

use rusqlite::types::ValueRef;

use super::seal::damaged;
use super::StoreError;

/// The format byte of an LZ4 block compressed against [`DICT_1`].
pub(super) const FORMAT_LZ4_DICT_1: u8 = 1;

/// The dictionary of format 1: the keys and the common words of a calculation record.
/// Fixed for ever once written: a calculation stored with it is read back with it (a new
/// dictionary is a new format byte).
pub(super) const DICT_1: &[u8] = include_bytes!("calculation-dict-1.json");

/// The largest record unpacked: far above any calculation the body limits let in, so a
/// damaged length cannot make the reader allocate without bound.
const MAX_UNPACKED: usize = 256 << 20;

/// A sealed record in its stored, compressed form.
pub(super) fn pack(sealed: &str) -> Vec<u8> {
    thread_local! {
        // Room for the largest record packed so far on this thread, kept: a calculation
        // is packed on every request, and a fresh buffer would be zeroed each time.
        static ROOM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let input = sealed.as_bytes();
    let packed = ROOM.with_borrow_mut(|room| {
        let need = lz4_flex::block::get_maximum_output_size(input.len());
        if room.len() < need {
            room.resize(need, 0);
        }
        // The room is the block format's maximum for the input, so compression cannot
        // run out of it; should it fail anyway, the record is stored uncompressed.
        let n = lz4_flex::block::compress_into_with_dict(input, &mut room[..need], DICT_1).ok()?;
        let mut out = Vec::with_capacity(5 + n);
        out.push(FORMAT_LZ4_DICT_1);
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        out.extend_from_slice(&room[..n]);
        Some(out)
    });
    packed.unwrap_or_else(|| input.to_vec())
}

/// The sealed text of a stored record: JSON text as it is, a packed BLOB unpacked. A BLOB
/// that does not unpack is a damaged record.
pub(super) fn unpack(stored: ValueRef<'_>) -> Result<Cow<'_, str>, StoreError> {
    match stored {
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map(Cow::Borrowed)
            .map_err(|_| damaged("not UTF-8")),
        ValueRef::Blob(b) => unpack_blob(b).map(Cow::Owned),
        _ => Err(damaged("neither text nor a packed record")),
    }
}

fn unpack_blob(b: &[u8]) -> Result<String, StoreError> {
    let (format, rest) = b.split_first().ok_or_else(|| damaged("empty record"))?;
    if *format != FORMAT_LZ4_DICT_1 {
        // Uncompressed bytes kept by `pack` when compression failed.
        return String::from_utf8(b.to_vec()).map_err(|_| damaged("unknown packing"));
    }
    let (len, block) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| damaged("truncated packed record"))?;
    let len = u32::from_le_bytes(*len) as usize;
    // An LZ4 block expands at most 255 times.
    if len > MAX_UNPACKED || len > block.len().saturating_mul(255) + 16 {
        return Err(damaged("packed record length out of range"));
    }
    let mut out = vec![0u8; len];
    match lz4_flex::block::decompress_into_with_dict(block, &mut out, DICT_1) {
        Ok(n) if n == len => String::from_utf8(out).map_err(|_| damaged("not UTF-8")),
        _ => Err(damaged("packed record does not unpack")),
    }
}

/// A calculation record as levy stores it (one $100.00 line in Nashville, TN 37201): its
/// digest is its record's.
#[cfg(test)]
pub(super) const SAMPLE: &str = r#"{"blake3":"707812ba661a0232731c0185675eb60a","record":{"id":"calc_01a209c8ee51e9ef2d2c6be91e104ddf","created_at":1795460492,"expires_at":1795546892,"transacted_at":1795460492,"currency":"USD","tax_included":false,"automatic_tax":"auto","customer_id":null,"customer_type":"CONSUMER","place":{"status":"POSTAL_ONLY","precision":"POSTAL","source":"address","line1":"","line2":"","city":"NASHVILLE","region":"TN","postal_code":"37201","country":"US"},"lines":[{"line_item_id":"li_01a209c8ee51bebd7189643b1ff8ae53","reference_product_id":null,"reference_product_name":null,"reference_line_item_id":null,"product_tax_code":"GENERAL_MERCHANDISE","quantity":1,"amount_excluding_tax":"10000","tax_amount":"700","amount_including_tax":"10700","jurisdictions":[{"tax_rate":"0.07","tax_due":"700","fee":"0","rate_type":"GENERAL STATE SALES TAX","jurisdiction_name":"TENNESSEE","jurisdiction_code":"47","authority_name":"TENNESSEE DEPARTMENT OF REVENUE","authority_type":"STATE","tax_type":"SALES","note":"RATE_FRAC","rule_id":254},{"tax_rate":"0.0275","tax_due":"0","fee":"0","rate_type":"TENNESSEE STATE SINGLE ARTICLE TAX","jurisdiction_name":"TENNESSEE STATE SINGLE ARTICLE TAX","jurisdiction_code":"47:SAT","authority_name":"TENNESSEE DEPARTMENT OF REVENUE","authority_type":"STATE","tax_type":"SALES","note":"PROGRESSIVE_RATE","rule_id":259}]}],"total_tax":"700","total_excluding_tax":"10000","total_including_tax":"10700","table_hash":"5bb6efade0f0336aa03d3529e2c068faceec93897755c24fd4d019d586a9eddf","metadata":null}}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_never_changes() {
        // Records packed with format 1 can only be read with the very same dictionary:
        // its BLAKE3 digest, taken when format 1 was made.
        assert_eq!(DICT_1.len(), 1443);
        assert_eq!(
            blake3::hash(DICT_1).to_hex().as_str(),
            DICT_1_BLAKE3,
            "calculation-dict-1.json changed: add a new format byte and dictionary instead"
        );
    }

    const DICT_1_BLAKE3: &str = "34f2fbcc1ffcd2441c6fe75411dda2d4ca9a9b95d13ce603c0a9ba5dd1d42daa";

    #[test]
    fn a_calculation_packs_to_a_fraction_and_unpacks_exactly() {
        let packed = pack(SAMPLE);
        assert_eq!(packed[0], FORMAT_LZ4_DICT_1);
        // 1,513 bytes of JSON; measured 476 packed. Bound at a third.
        assert!(packed.len() < SAMPLE.len() / 3, "{} bytes", packed.len());
        let back = unpack(ValueRef::Blob(&packed)).unwrap();
        assert_eq!(back, SAMPLE);
        // Text written before packing is read as it is.
        assert_eq!(unpack(ValueRef::Text(SAMPLE.as_bytes())).unwrap(), SAMPLE);
    }

    #[test]
    fn the_kept_room_leaves_nothing_of_one_record_in_the_next() {
        // The same thread packs a record, one ten times its size, and the first again: each
        // unpacks to itself, and the first packs to the same bytes both times.
        let big = SAMPLE.repeat(10);
        let first = pack(SAMPLE);
        let large = pack(&big);
        let again = pack(SAMPLE);
        assert_eq!(first, again);
        assert_eq!(unpack(ValueRef::Blob(&large)).unwrap(), big);
        assert_eq!(unpack(ValueRef::Blob(&again)).unwrap(), SAMPLE);
    }

    #[test]
    fn damaged_packed_records_are_errors() {
        let packed = pack(SAMPLE);
        let damaged_with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = packed.clone();
            f(&mut b);
            unpack(ValueRef::Blob(&b)).map(|s| s.into_owned())
        };
        // Cut short, lengthened, a huge length, nothing at all, a number.
        assert!(damaged_with(&|b| b.truncate(b.len() / 2)).is_err());
        assert!(damaged_with(&|b| b.truncate(3)).is_err());
        assert!(damaged_with(&|b| b[1..5].copy_from_slice(&u32::MAX.to_le_bytes())).is_err());
        assert!(damaged_with(&|b| b[1..5].copy_from_slice(&2000u32.to_le_bytes())).is_err());
        assert!(unpack(ValueRef::Blob(&[])).is_err());
        assert!(unpack(ValueRef::Integer(7)).is_err());
        // Every single-bit flip in the compressed block fails to unpack, or unpacks to text
        // that the seal's digest refuses, or (a flipped back-reference that points at the
        // same bytes elsewhere) to the very same record: never to an altered record that
        // passes for sound.
        let (mut refused, mut same) = (0, 0);
        for i in 5..packed.len() {
            for bit in 0..8 {
                match damaged_with(&|b| b[i] ^= 1 << bit) {
                    Err(_) => refused += 1,
                    Ok(text) if text == SAMPLE => same += 1,
                    Ok(text) => {
                        assert!(
                            super::super::seal::unseal(&text).is_err(),
                            "flip of bit {bit} of byte {i} gave an altered record with a valid seal"
                        );
                        refused += 1;
                    }
                }
            }
        }
        assert_eq!(refused + same, (packed.len() - 5) * 8);
        assert!(
            same < refused / 10,
            "{same} flips unpacked to the same record"
        );
    }
}
