//! Calculations as the SQLite ledger stores them: compressed against a fixed dictionary,
//! with a digest of the compressed bytes.
//!
//! A calculation is a 24-hour quote, and a busy till makes one per sale, so calculations
//! are most of what the ledger writes. Their sealed JSON (about 1.5 KB for one line in two
//! jurisdictions) is mostly the names of fields and words that every calculation repeats.
//!
//! Stored form (a BLOB in the `data` column), format 4 ([`FORMAT_LAYOUT_2_DICT_2`]): one
//! format byte, the first 128 bits of the BLAKE3 hash of all that follows it, the
//! uncompressed length as a little-endian `u32`, then an LZ4 block of the calculation in
//! its binary layout ([`layout`], about a third of its JSON) compressed with [`DICT_2`] as
//! its dictionary: 348 bytes for the sample one-line calculation. The digest is the seal: a
//! damaged byte anywhere after the format byte is an error, never a changed amount, and a
//! damaged format byte reads as another form, which then fails.
//!
//! Read as well, as earlier releases wrote them: format 3 ([`FORMAT_LAYOUT_1_DICT_2`]: as
//! format 4, in layout 1, whose entries have no taxable base), format 2 ([`FORMAT_LZ4_DICT_1_SUMMED`]:
//! as format 4, but the block holds the record's JSON compressed with [`DICT_1`]; still
//! written for platform calculations), format 1 ([`FORMAT_LZ4_DICT_1`]: the format byte, the
//! length, then the LZ4 block of the sealed JSON, whose seal is checked when it is read)
//! and sealed JSON text (a TEXT value). Every form is read back as sealed JSON text, which
//! is what the readers and `levy ledger copy` take. Transactions and every other record
//! stay JSON text, to be read with any SQLite tool.

use std::borrow::Cow;

use rusqlite::types::ValueRef;
use serde::Serialize;

use super::layout;
use super::seal::{damaged, seal, to_json};
use super::StoreError;
use crate::store::CalculationRecord;

/// The format byte of an LZ4 block of sealed JSON compressed against [`DICT_1`] (read, no
/// longer written).
pub(super) const FORMAT_LZ4_DICT_1: u8 = 1;

/// The format byte of a digest and an LZ4 block of JSON compressed against [`DICT_1`].
pub(super) const FORMAT_LZ4_DICT_1_SUMMED: u8 = 2;

/// The format byte of a digest and an LZ4 block of a calculation in binary layout 1
/// ([`layout`]) compressed against [`DICT_2`] (read, no longer written).
pub(super) const FORMAT_LAYOUT_1_DICT_2: u8 = 3;

/// The format byte of a digest and an LZ4 block of a calculation in binary layout 2 (layout
/// 1 with each entry's taxable base) compressed against [`DICT_2`].
pub(super) const FORMAT_LAYOUT_2_DICT_2: u8 = 4;

/// The bytes of the digest of formats 2 and 3: the first 128 bits of BLAKE3, as the seal's.
const SUM_BYTES: usize = 16;

/// Kept per thread between records: a buffer larger than this after a record is let go.
const KEEP_BYTES: usize = 1 << 20;

/// The dictionary of formats 1 and 2: the keys and the common words of a calculation record.
/// Fixed for ever once written: a calculation stored with it is read back with it (a new
/// dictionary is a new format byte).
pub(super) const DICT_1: &[u8] = include_bytes!("calculation-dict-1.json");

/// The dictionary of format 3: the words that calculations repeat (statuses, categories,
/// the names of common rates and authorities). Fixed for ever once written, as
/// [`DICT_1`].
pub(super) const DICT_2: &[u8] = include_bytes!("calculation-dict-2.txt");

/// The largest record unpacked: far above any calculation the body limits let in, so a
/// damaged length cannot make the reader allocate without bound.
const MAX_UNPACKED: usize = 256 << 20;

/// The digest of format 2: the first 128 bits of the BLAKE3 hash of the length and the block.
fn summed(len: &[u8; 4], block: &[u8]) -> [u8; SUM_BYTES] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(len);
    hasher.update(block);
    let mut sum = [0u8; SUM_BYTES];
    sum.copy_from_slice(&hasher.finalize().as_bytes()[..SUM_BYTES]);
    sum
}

thread_local! {
    // A record's bytes and room for their compressed form, kept: a calculation is packed
    // on every request, and fresh buffers would be allocated (and zeroed) each time.
    static BUFFERS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// A record in its stored form (format 2): its JSON written and compressed in buffers kept
/// by the thread, the digest taken over the compressed bytes. Should compression fail, the
/// record is stored as sealed JSON, uncompressed.
pub(super) fn pack_record<T: Serialize>(record: &T) -> Result<Vec<u8>, StoreError> {
    BUFFERS.with_borrow_mut(|(json, room)| {
        json.clear();
        serde_json::to_writer(&mut *json, record).map_err(StoreError::ledger)?;
        let packed = match summed_block(FORMAT_LZ4_DICT_1_SUMMED, json, room, DICT_1) {
            Some(packed) => packed,
            None => {
                let text = std::str::from_utf8(json).map_err(StoreError::ledger)?;
                seal(text)?.into_bytes()
            }
        };
        let_go(json, room);
        Ok(packed)
    })
}

/// A calculation in its stored form (format 4): its binary layout ([`layout`]) compressed
/// against [`DICT_2`], the digest taken over the compressed bytes. Should compression
/// fail, it is stored as sealed JSON, uncompressed.
pub(super) fn pack_calculation(record: &CalculationRecord) -> Result<Vec<u8>, StoreError> {
    BUFFERS.with_borrow_mut(|(raw, room)| {
        raw.clear();
        layout::write_calculation(raw, record)?;
        let packed = match summed_block(FORMAT_LAYOUT_2_DICT_2, raw, room, DICT_2) {
            Some(packed) => packed,
            None => to_json(record)?.into_bytes(),
        };
        let_go(raw, room);
        Ok(packed)
    })
}

/// `format`, the digest, the length of `input` and its LZ4 block compressed against
/// `dict`, written through `room`; `None` if it cannot be compressed.
fn summed_block(format: u8, input: &[u8], room: &mut Vec<u8>, dict: &[u8]) -> Option<Vec<u8>> {
    let need = lz4_flex::block::get_maximum_output_size(input.len());
    if room.len() < need {
        room.resize(need, 0);
    }
    // The room is the block format's maximum for the input, so compression cannot run out
    // of it, and the length fits a `u32` far below any body the limits let in.
    let len = u32::try_from(input.len()).ok()?;
    let n = lz4_flex::block::compress_into_with_dict(input, &mut room[..need], dict).ok()?;
    let (len, block) = (len.to_le_bytes(), &room[..n]);
    let mut out = Vec::with_capacity(1 + SUM_BYTES + 4 + n);
    out.push(format);
    out.extend_from_slice(&summed(&len, block));
    out.extend_from_slice(&len);
    out.extend_from_slice(block);
    Some(out)
}

/// Lets go of kept buffers that a large record made larger than [`KEEP_BYTES`].
fn let_go(raw: &mut Vec<u8>, room: &mut Vec<u8>) {
    if raw.capacity() > KEEP_BYTES {
        *raw = Vec::new();
    }
    if room.len() > KEEP_BYTES {
        *room = Vec::new();
    }
}

/// A sealed record in format 1, as releases before format 2 stored calculations: for the
/// tests that read such ledgers.
#[cfg(test)]
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
    match *format {
        FORMAT_LZ4_DICT_1 => {
            let (len, block) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| damaged("truncated packed record"))?;
            decompress(len, block)
        }
        FORMAT_LZ4_DICT_1_SUMMED => {
            let (sum, rest) = rest
                .split_first_chunk::<SUM_BYTES>()
                .ok_or_else(|| damaged("truncated packed record"))?;
            let (len, block) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| damaged("truncated packed record"))?;
            if *sum != summed(len, block) {
                return Err(damaged("digest mismatch"));
            }
            seal(&decompress(len, block)?)
        }
        FORMAT_LAYOUT_1_DICT_2 | FORMAT_LAYOUT_2_DICT_2 => {
            let layout = if *format == FORMAT_LAYOUT_1_DICT_2 {
                1
            } else {
                2
            };
            let (sum, rest) = rest
                .split_first_chunk::<SUM_BYTES>()
                .ok_or_else(|| damaged("truncated packed record"))?;
            let (len, block) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| damaged("truncated packed record"))?;
            if *sum != summed(len, block) {
                return Err(damaged("digest mismatch"));
            }
            let raw = decompress_bytes(len, block, DICT_2)?;
            let record = layout::read_calculation(&raw, layout)?;
            to_json(&record)
        }
        // Uncompressed sealed JSON, kept when compression failed.
        _ => String::from_utf8(b.to_vec()).map_err(|_| damaged("unknown packing")),
    }
}

/// The text of an LZ4 block of `len` bytes compressed against [`DICT_1`].
fn decompress(len: &[u8; 4], block: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(decompress_bytes(len, block, DICT_1)?).map_err(|_| damaged("not UTF-8"))
}

/// The bytes of an LZ4 block of `len` bytes compressed against `dict`.
fn decompress_bytes(len: &[u8; 4], block: &[u8], dict: &[u8]) -> Result<Vec<u8>, StoreError> {
    let len = u32::from_le_bytes(*len) as usize;
    // An LZ4 block expands at most 255 times.
    if len > MAX_UNPACKED || len > block.len().saturating_mul(255) + 16 {
        return Err(damaged("packed record length out of range"));
    }
    let mut out = vec![0u8; len];
    match lz4_flex::block::decompress_into_with_dict(block, &mut out, dict) {
        Ok(n) if n == len => Ok(out),
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

    /// The record inside [`SAMPLE`], as the ledger hands it to [`pack_record`].
    fn sample_record() -> crate::store::CalculationRecord {
        super::super::seal::from_json(SAMPLE).unwrap()
    }

    #[test]
    fn a_calculation_packs_to_a_fraction_with_a_digest_of_its_compressed_bytes() {
        let packed = pack_record(&sample_record()).unwrap();
        // Format byte, 16 bytes of digest, 4 of length, the block.
        assert_eq!(packed[0], FORMAT_LZ4_DICT_1_SUMMED);
        // The digest is the first 128 bits of BLAKE3 over everything after it (computed
        // here in one call, where the writer hashes the length and the block in two).
        assert_eq!(packed[1..17], blake3::hash(&packed[17..]).as_bytes()[..16]);
        // The length is the record's JSON: the sealed sample less the seal around it
        // (`{"blake3":"` + 32 hex digits + `","record":` before it, `}` after it).
        let json_len = SAMPLE.len() - (11 + 32 + 11) - 1;
        assert_eq!(
            u32::from_le_bytes(packed[17..21].try_into().unwrap()) as usize,
            json_len
        );
        // 1,513 bytes of sealed JSON; measured 474 bytes of block. Bound at a third.
        assert!(packed.len() < SAMPLE.len() / 3, "{} bytes", packed.len());
        // Read back as the readers take every form: the sealed JSON, exactly.
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), SAMPLE);
    }

    #[test]
    fn every_bit_flipped_in_a_format_2_record_is_an_error() {
        let packed = pack_record(&sample_record()).unwrap();
        // After the format byte, the digest covers every byte: each of the flips is
        // refused by `unpack` itself. A flipped format byte reads as another form, whose
        // text (if it is text at all) has no valid seal.
        for i in 0..packed.len() {
            for bit in 0..8 {
                let mut b = packed.clone();
                b[i] ^= 1 << bit;
                match unpack(ValueRef::Blob(&b)) {
                    Err(_) => {}
                    Ok(text) => {
                        assert_eq!(i, 0, "flip of bit {bit} of byte {i} unpacked");
                        assert!(super::super::seal::unseal(&text).is_err());
                    }
                }
            }
        }
        // Cut short anywhere: refused.
        for n in 0..packed.len() {
            assert!(unpack(ValueRef::Blob(&packed[..n])).is_err(), "cut at {n}");
        }
    }

    #[test]
    fn a_calculation_packs_to_its_binary_layout_with_a_digest_of_its_compressed_bytes() {
        let packed = pack_calculation(&sample_record()).unwrap();
        assert_eq!(packed[0], FORMAT_LAYOUT_2_DICT_2);
        // As format 2: the digest is the first 128 bits of BLAKE3 over everything after it.
        assert_eq!(packed[1..17], blake3::hash(&packed[17..]).as_bytes()[..16]);
        // 1,513 bytes of sealed JSON; measured 348 bytes packed in format 3 (format 2:
        // 500). Bound at a quarter.
        assert!(packed.len() < SAMPLE.len() / 4, "{} bytes", packed.len());
        // Read back as the readers take every form: the sealed JSON, exactly.
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), SAMPLE);
        // The layout and its dictionary are fixed for ever: the sample packs to the same
        // bytes as when format 4 was made (BLAKE3 of the packed bytes, taken then).
        assert_eq!(
            blake3::hash(&packed).to_hex().as_str(),
            SAMPLE_FORMAT_4_BLAKE3,
            "layout 2 or calculation-dict-2.txt changed: add a new format byte instead"
        );
        assert_eq!(
            blake3::hash(DICT_2).to_hex().as_str(),
            DICT_2_BLAKE3,
            "calculation-dict-2.txt changed: add a new format byte and dictionary instead"
        );
    }

    #[test]
    fn a_format_3_calculation_is_still_read_exactly() {
        // The sample as format 3 (layout 1) packed it, byte for byte, when format 3 was
        // written: read back as the same sealed JSON, its entries without a base.
        let packed = hex::decode(SAMPLE_FORMAT_3).unwrap();
        assert_eq!(packed[0], FORMAT_LAYOUT_1_DICT_2);
        assert_eq!(
            blake3::hash(&packed).to_hex().as_str(),
            "15b7896456c315b65c14cc49c69a0ad7e8ae03907b6bfda0e0e3525e5ea0a9ea"
        );
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), SAMPLE);
        // Read as layout 2, the same bytes are damaged (an entry's base flag is missing).
        let mut as_4 = packed.clone();
        as_4[0] = FORMAT_LAYOUT_2_DICT_2;
        assert!(unpack(ValueRef::Blob(&as_4)).is_err());
    }

    /// The sample packed in format 3.
    const SAMPLE_FORMAT_3: &str = concat!(
        "0339abab36b263bc389fcc1c7ba455d10f2402000011254201f11c30316132303963386565353165",
        "396566326432633662653931653130346464668c8d046b000000000cdf050800041000c403555344",
        "00046175746f00087f01170b670112060c0013074d01f90d0000094e41534856494c4c4502544e05",
        "333732303102555301236c698400f309626562643731383936343362316666386165353300000013",
        "6501088701100190006000000002102708003102bc02070091cc29020000020001070e0002150023",
        "001740000c5001400954454e32026545450234371f0d000f67010311053d00110557011509580110",
        "fe680064000004000213920046000000224c00013600f0002053494e474c452041525449434c45e3",
        "010f2300107f0634373a5341549900191c10e80114039600042101032f01f015cc29015bb6efade0",
        "f0336aa03d3529e2c068faceec93897755c24fd4d019d586a9eddf00",
    );

    const SAMPLE_FORMAT_4_BLAKE3: &str =
        "812beccdf9e69283ade31917c315fe7c4447ac8d0cae27e84ad1640aa3747a35";
    const DICT_2_BLAKE3: &str = "22c81903e1160c56ad05cbc2688f956c20aa7dde2312685ff8669660009cd774";

    /// A calculation with every optional field set and values at the edges of their types.
    fn full_record() -> crate::store::CalculationRecord {
        let mut r = sample_record();
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        r.customer_id = Some("cus_ü \"quoted\"\n".into());
        r.transacted_at = i64::MIN;
        r.created_at = i64::MAX;
        r.place.line1 = "1 Main St — Suite ½".into();
        r.table_hash = "not hex at all".into();
        r.total_tax = d("-0.0000000000000000000000000001");
        r.total_excluding_tax = d("79228162514264337593543950335");
        r.total_including_tax = d("700.00");
        r.metadata = serde_json::from_str(
            r#"{"order":"A-1","nested":{"list":[1,2.50,1e3,null,true]},"é":"\u0000"}"#,
        )
        .unwrap();
        let mut line = r.lines[0].clone();
        line.reference_product_id = Some("prod_1".into());
        line.reference_product_name = Some(String::new());
        line.reference_line_item_id = Some("x".repeat(300));
        line.quantity = u32::MAX;
        line.jurisdictions[1].exemption_certificate_id = Some("cert_9".into());
        line.jurisdictions[0].rule_id = u32::MAX;
        line.jurisdictions[0].taxable_base = Some(d("9999.5000"));
        line.jurisdictions[1].taxable_base = Some(rust_decimal::Decimal::ZERO);
        let mut bare = line.clone();
        bare.jurisdictions.clear();
        r.lines = vec![line, bare, r.lines[0].clone()];
        r
    }

    #[test]
    fn every_field_of_a_calculation_comes_back_from_format_3() {
        for record in [sample_record(), full_record()] {
            let mut raw = Vec::new();
            layout::write_calculation(&mut raw, &record).unwrap();
            assert_eq!(
                layout::read_calculation(&raw, 2).map_err(|e| format!("{e:?}")),
                Ok(record.clone())
            );
            // Through the ledger's form: the same sealed JSON that format 2 gives.
            let packed = pack_calculation(&record).unwrap();
            let text = unpack(ValueRef::Blob(&packed)).unwrap();
            assert_eq!(text, to_json(&record).unwrap());
            assert_eq!(
                text,
                unpack(ValueRef::Blob(&pack_record(&record).unwrap())).unwrap()
            );
            // Decimals keep their scale: `700.00` is not read back as `700`.
            let back: crate::store::CalculationRecord =
                super::super::seal::from_json(&text).unwrap();
            assert_eq!(
                back.total_including_tax.scale(),
                record.total_including_tax.scale()
            );
        }
    }

    #[test]
    fn every_bit_flipped_in_a_format_3_record_is_an_error() {
        let packed = pack_calculation(&sample_record()).unwrap();
        for i in 0..packed.len() {
            for bit in 0..8 {
                let mut b = packed.clone();
                b[i] ^= 1 << bit;
                match unpack(ValueRef::Blob(&b)) {
                    Err(_) => {}
                    Ok(text) => {
                        assert_eq!(i, 0, "flip of bit {bit} of byte {i} unpacked");
                        assert!(super::super::seal::unseal(&text).is_err());
                    }
                }
            }
        }
        for n in 0..packed.len() {
            assert!(unpack(ValueRef::Blob(&packed[..n])).is_err(), "cut at {n}");
        }
    }

    #[test]
    fn a_stored_calculation_reads_back_from_its_bytes_in_every_form() {
        // What `levy_api::store::read_stored_calculation` gives tools: the record, from
        // any form a ledger holds; a damaged one is an error.
        let record = full_record();
        let json = to_json(&record).unwrap();
        for stored in [
            pack_calculation(&record).unwrap(),
            pack_record(&record).unwrap(),
            pack(&json),
            json.clone().into_bytes(),
        ] {
            assert_eq!(
                crate::store::read_stored_calculation(&stored).unwrap(),
                record
            );
            let mut damaged = stored.clone();
            let last = damaged.len() - 1;
            damaged[last] ^= 0x01;
            assert!(crate::store::read_stored_calculation(&damaged).is_err());
        }
    }

    #[test]
    fn a_damaged_layout_is_an_error_never_a_panic() {
        // The digest refuses damage before the layout is read; this is the reader on its
        // own, given what only a forger could store: every cut and every flipped bit of a
        // valid layout, and random bytes (a fixed xorshift sequence).
        let mut raw = Vec::new();
        layout::write_calculation(&mut raw, &full_record()).unwrap();
        for n in 0..raw.len() {
            assert!(
                layout::read_calculation(&raw[..n], 2).is_err(),
                "cut at {n}"
            );
        }
        for i in 0..raw.len() {
            for bit in 0..8 {
                let mut b = raw.clone();
                b[i] ^= 1 << bit;
                let _ = layout::read_calculation(&b, 2);
            }
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for len in 0..2_000 {
            let bytes: Vec<u8> = (0..len % 300)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = layout::read_calculation(&bytes, 2);
        }
        // A length that claims more than the record holds is refused before anything is
        // allocated for it.
        assert!(layout::read_calculation(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F], 2).is_err());
    }

    #[test]
    fn a_format_1_calculation_is_still_read_exactly() {
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
    fn the_kept_buffers_leave_nothing_of_one_record_in_the_next() {
        // The same thread packs a record, one with ten times its lines, and the first
        // again: each unpacks to itself, and the first packs to the same bytes both times.
        let record = sample_record();
        let mut big = record.clone();
        big.lines = std::iter::repeat_n(&record.lines, 10)
            .flatten()
            .cloned()
            .collect();
        let first = pack_record(&record).unwrap();
        let large = pack_record(&big).unwrap();
        let again = pack_record(&record).unwrap();
        assert_eq!(first, again);
        let back = |p: &[u8]| {
            let text = unpack(ValueRef::Blob(p)).unwrap();
            super::super::seal::from_json::<crate::store::CalculationRecord>(&text).unwrap()
        };
        assert_eq!(back(&large), big);
        assert_eq!(back(&again), record);
        assert_eq!(unpack(ValueRef::Blob(&again)).unwrap(), SAMPLE);
    }

    #[test]
    fn damaged_format_1_records_are_errors() {
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
