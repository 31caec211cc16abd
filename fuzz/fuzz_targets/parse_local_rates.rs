//! Fuzzes the reader of the local rates files (`data/local/us/<ST>.toml`): any text gives
//! a checked file or an error naming the file, never a panic; a file it accepts names its
//! state and every county by a three-digit FIPS code, with rates that are chains of days.
#![no_main]

use levy_build::local_rates::{parse, Rates};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse("FL.toml", text) {
        Ok(file) => {
            assert_eq!(file.state.len(), 2);
            assert_eq!(file.state_fips.len(), 2);
            assert!(!file.publications().is_empty());
            for c in &file.counties {
                assert!(c.fips.len() == 3 && c.fips.bytes().all(|b| b.is_ascii_digit()));
                assert!(c.rates.windows(2).all(|w| w[0].from < w[1].from));
            }
            for d in &file.districts {
                if let Rates::Chain(chain) = &d.rates {
                    assert!(chain.windows(2).all(|w| w[0].from < w[1].from));
                }
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("FL.toml"), "{message}");
        }
    }
});
