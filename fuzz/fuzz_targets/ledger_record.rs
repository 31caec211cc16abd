//! Bytes as a calculation the SQLite ledger stored (`levy_api::store::read_stored_calculation`):
//! as they are (any format byte, digest, length and block), and wrapped as a format-3
//! record that passes its digest (their LZ4 block, the digest that matches), so that the
//! reader of the binary layout sees arbitrary content behind a sound seal. Either way the
//! answer is a record or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Format 3's byte (`levy-api` `store/pack.rs`).
const FORMAT_3: u8 = 3;

fuzz_target!(|data: &[u8]| {
    let _ = levy_api::store::read_stored_calculation(data);
    // A block compressed without the dictionary unpacks the same with it.
    let block = lz4_flex::block::compress(data);
    let len = (data.len() as u32).to_le_bytes();
    let mut hasher = blake3::Hasher::new();
    hasher.update(&len);
    hasher.update(&block);
    let mut stored = vec![FORMAT_3];
    stored.extend_from_slice(&hasher.finalize().as_bytes()[..16]);
    stored.extend_from_slice(&len);
    stored.extend_from_slice(&block);
    let _ = levy_api::store::read_stored_calculation(&stored);
});
