//! Fuzzes levy-build's curated data reader: any text in any of the curated files, or in the
//! IP range files, gives curated data or an error naming the file, never a panic; and data
//! that parses applies to a builder and builds, or fails with an error, never a panic.
#![no_main]

use levy_build::curated::{Curated, CuratedText, IpRanges, IpRegionRanges, FILES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The input is up to six files separated by NUL bytes, in the order of FILES.
    let mut parts = text.split('\0');
    let mut next = || parts.next().unwrap_or("");
    let files = CuratedText {
        taxonomy: next(),
        us_states: next(),
        us_rules: next(),
        holidays: next(),
        countries: next(),
        canada: next(),
        taxability: &[],
    };
    match Curated::from_strs(&files) {
        Ok(c) => {
            let mut b = levy_core::TableBuilder::new();
            if c.apply_base(&mut b).is_ok() && c.apply_rules(&mut b).is_ok() {
                let _ = b.build(0);
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(FILES.iter().any(|f| message.starts_with(f)), "{message}");
        }
    }
    // The same text as IP range files.
    if let Ok(r) = IpRanges::from_strs(text, text) {
        assert!(r.v4.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(r.v6.windows(2).all(|w| w[0].1 < w[1].0));
    }
    // And as state and province range files: every place index points at a place.
    if let Ok(r) = IpRegionRanges::from_strs(text, text) {
        assert!(r.v4.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(r.v6.windows(2).all(|w| w[0].1 < w[1].0));
        let n = r.places.len() as u32;
        assert!(r.v4.iter().all(|x| x.2 < n) && r.v6.iter().all(|x| x.2 < n));
    }
});
