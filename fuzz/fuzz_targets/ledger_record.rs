//! Bytes as a calculation the SQLite ledger stored (`levy_api::store::read_stored_calculation`):
//! as they are (any format byte, digest, length and block), and wrapped as a format-3 and
//! a format-4 record that pass their digest (their LZ4 block, the digest that matches), so
//! that the readers of binary layouts 1 and 2 see arbitrary content behind a sound seal.
//! Either way the answer is a record or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The format bytes of layouts 1 and 2 (`levy-api` `store/pack.rs`).
const LAYOUT_FORMATS: [u8; 2] = [3, 4];

fuzz_target!(|data: &[u8]| {
    let _ = levy_api::store::read_stored_calculation(data);
    // A block compressed without the dictionary unpacks the same with it.
    let block = lz4_flex::block::compress(data);
    let len = (data.len() as u32).to_le_bytes();
    let mut hasher = blake3::Hasher::new();
    hasher.update(&len);
    hasher.update(&block);
    let digest = hasher.finalize();
    for format in LAYOUT_FORMATS {
        let mut stored = vec![format];
        stored.extend_from_slice(&digest.as_bytes()[..16]);
        stored.extend_from_slice(&len);
        stored.extend_from_slice(&block);
        let _ = levy_api::store::read_stored_calculation(&stored);
    }
});
