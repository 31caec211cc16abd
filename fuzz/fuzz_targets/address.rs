//! Arbitrary text through address normalization: never a panic, and the ZIP parser's answer
//! is always a five-digit ZIP with an optional four-digit plus-4.

#![no_main]

use levy_core::{normalize_postal, normalize_street, parse_street_line, parse_us_zip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let line = parse_street_line(text);
    // The street is upper case with single spaces, and normalizing it again changes nothing
    // but directional and suffix abbreviation, which are idempotent.
    assert!(!line.street.starts_with(' ') && !line.street.ends_with(' '));
    assert!(!line.street.contains("  "));
    // A street that starts with digits would have them read as a house number on the second
    // pass; upper-casing some non-ASCII letters yields combining marks, which split words.
    if text.is_ascii() && !line.street.starts_with(|c: char| c.is_ascii_digit()) {
        let again = parse_street_line(&line.street);
        assert_eq!(
            again.street, line.street,
            "street normalization is idempotent"
        );
    }
    let _ = normalize_street(text, text, text, text);
    if let Some((zip5, plus4)) = parse_us_zip(text) {
        assert!(zip5 <= 99_999);
        assert!(plus4.is_none_or(|p| p <= 9_999));
    }
    let postal = normalize_postal(text);
    assert!(postal
        .bytes()
        .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()));
    assert_eq!(normalize_postal(&postal), postal);
});
