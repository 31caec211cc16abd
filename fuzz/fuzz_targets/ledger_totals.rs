//! Text as a daily liability total the SQLite ledger stored
//! (`levy_api::store::read_daily_totals`): as it is (any numbers, counts and digest), and
//! with the digest that matches it (the first 128 bits of its BLAKE3 hash, as the ledger
//! seals), so that the reader of the numbers sees arbitrary content behind a sound seal.
//! Either way the answer is the amounts or an error, never a panic; and amounts read back
//! seal again (`seal_daily_totals`) to a text that reads back the same amounts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use levy_api::store::{read_daily_totals, seal_daily_totals};

fuzz_target!(|data: (&str, [i64; 3])| {
    let (text, counts) = data;
    let _ = read_daily_totals::<16>(text, &counts[..1]);
    let _ = read_daily_totals::<4>(text, &counts);
    let digest = hex::encode(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
    let sealed = format!("{text} {digest}");
    let read = (
        read_daily_totals::<16>(&sealed, &counts[..1]),
        read_daily_totals::<4>(&sealed, &counts),
    );
    if let Ok(amounts) = read.0 {
        let again = seal_daily_totals(&amounts, &counts[..1]);
        assert_eq!(read_daily_totals::<16>(&again, &counts[..1]).ok(), Some(amounts));
    }
    if let Ok(amounts) = read.1 {
        let again = seal_daily_totals(&amounts, &counts);
        assert_eq!(read_daily_totals::<4>(&again, &counts).ok(), Some(amounts));
    }
});
