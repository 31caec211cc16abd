//! Fuzzes levy-build's sst_boundaries reader: any bytes give rows and row errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = levy_build::parse::parse_sst_boundaries(data) {
        // Every reported line lies within the input.
        let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        for (line, _) in &parsed.rows {
            assert!(*line >= 1 && *line <= lines);
        }
        for e in &parsed.errors {
            assert!(e.line >= 1 && e.line <= lines);
        }
    }
});
