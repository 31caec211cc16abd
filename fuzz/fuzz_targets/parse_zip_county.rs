//! Fuzzes levy-build's ZIP-to-county reader: any bytes give rows and row errors, never a
//! panic; every row it accepts is well formed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = levy_build::parse::parse_zip_county(data) {
        let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        for (line, row) in &parsed.rows {
            assert!(*line >= 1 && *line <= lines);
            assert!(row.zip <= 99_999);
            assert_eq!(row.state.len(), 2);
            assert!(row.county.len() == 3 && row.county.bytes().all(|b| b.is_ascii_digit()));
        }
        for e in &parsed.errors {
            assert!(e.line >= 1 && e.line <= lines);
        }
    }
});
