//! Fuzzes the taxability matrix reader and compiler: any text as one matrix file beside
//! the curated files levy ships gives curated data or an error naming that file, never a
//! panic; and data that parses applies to a builder and builds, or fails with an error.
#![no_main]

use levy_build::curated::{Curated, CuratedText, FILES};
use libfuzzer_sys::fuzz_target;

/// The paths the input is tried as: a US state's, Canada's, a province's and a country's.
const PATHS: [&str; 4] = [
    "taxability/us/TN.toml",
    "taxability/ca/CA.toml",
    "taxability/ca/ON.toml",
    "taxability/intl/DE.toml",
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let shipped: Vec<String> = FILES
        .iter()
        .map(|f| {
            levy_build::curated::CuratedSource::Embedded
                .require(f)
                .expect("shipped")
                .into_owned()
        })
        .collect();
    let path = PATHS[usize::from(which) % PATHS.len()];
    let matrix = [(path, text)];
    let files = CuratedText {
        taxonomy: &shipped[0],
        us_states: &shipped[1],
        us_rules: &shipped[2],
        holidays: &shipped[3],
        countries: &shipped[4],
        canada: &shipped[5],
        taxability: &matrix,
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
            assert!(message.starts_with("taxability/"), "{message}");
        }
    }
});
