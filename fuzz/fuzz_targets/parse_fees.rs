//! Fuzzes the reader of `data/us-fees.toml` and its compilation: any text gives checked fees
//! or an error naming the file, never a panic; fees that read apply to a builder with the
//! codes they name, and the table builds or says why not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match levy_build::fees::parse(text, &|code| code == "GENERAL_MERCHANDISE" || code == "GROCERIES") {
        Ok(fees) => {
            for f in &fees.fees {
                assert!(!f.periods.is_empty());
                assert!(f.periods.windows(2).all(|w| w[0].to.0 + 1 == w[1].from.0));
            }
            let mut b = levy_core::TableBuilder::new();
            if levy_build::add_minimal_taxonomy(&mut b).is_ok()
                && levy_build::fees::apply(&fees, &mut b).is_ok()
            {
                let _ = b.build(0);
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(levy_build::fees::FILE), "{message}");
        }
    }
});
