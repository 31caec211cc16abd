//! Unguessable identifiers: the interface's prefix, the time and random bits. The clock is
//! `crate::clock`'s, the randomness `crate::random`'s.

/// Hexadecimal digits after an id's prefix.
pub(crate) const ID_DIGITS: usize = 32;

/// Whether `id` is an id [`new_id`] makes with `prefix`: the prefix, then exactly
/// [`ID_DIGITS`] lower-case hexadecimal digits (`0-9`, `a-f`), and nothing else. Every
/// release of levy has made its ids so.
pub(crate) fn is_id(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == ID_DIGITS && rest.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A new id with the interface's prefix (`calc_`, `tr_`, ...) and 32 lower-case hex digits:
/// the first 12 are the milliseconds since 1970 (48 bits), the other 20 are random
/// (80 bits from the operating system's generator, so an id cannot be guessed from
/// another). Ids made later sort after earlier ones, so the ledger's indexes on ids grow
/// at their end, as the tables do, instead of being written at a random page for each
/// record: a group of calculations commits a few pages, not one page per calculation.
pub(crate) fn new_id(prefix: &str) -> String {
    let millis = crate::clock::now_millis();
    let mut s = String::with_capacity(prefix.len() + 32);
    s.push_str(prefix);
    let mut bytes = [0u8; 16];
    bytes[..6].copy_from_slice(&(millis & 0xFFFF_FFFF_FFFF).to_be_bytes()[2..]);
    if crate::random::fill_random(&mut bytes[6..]).is_ok() {
        // Written through a buffer on the stack: `hex::encode` builds its text a character
        // at a time, and a calculation makes an id for itself and one for each line.
        let mut text = [0u8; 32];
        if hex::encode_to_slice(bytes, &mut text).is_ok() {
            s.push_str(std::str::from_utf8(&text).unwrap_or_default());
        }
    } else {
        // `hex128` logs the failure and keeps ids unique.
        s.push_str(&hex::encode(&bytes[..6]));
        s.push_str(&crate::random::hex128()[..20]);
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_start_with_the_time_and_end_with_80_random_bits() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let a = super::new_id("calc_");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = super::new_id("calc_");
        assert!(a.starts_with("calc_") && a.len() == 5 + 32, "{a}");
        assert!(a[5..]
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        let millis = u64::from_str_radix(&a[5..17], 16).unwrap();
        assert!(
            millis >= before && millis < before + 1_000,
            "{millis} vs {before}"
        );
        // Made 2 ms later, so its time prefix is larger and it sorts after.
        assert!(b > a, "{b} should sort after {a}");
        // Two ids of the same millisecond still differ in their random part.
        let same: std::collections::HashSet<String> =
            (0..1_000).map(|_| super::new_id("tr_")).collect();
        assert_eq!(same.len(), 1_000);
    }

    #[test]
    fn the_grammar_of_ids_is_the_prefix_and_32_lower_case_hex_digits() {
        for prefix in ["tr_", "ref_tr_", "calc_", "plat_calc_"] {
            let id = super::new_id(prefix);
            assert!(super::is_id(prefix, &id), "{id}");
        }
        let digits = "0123456789abcdef0123456789abcdef";
        assert!(super::is_id("tr_", &format!("tr_{digits}")));
        for bad in [
            String::new(),
            "tr_".to_string(),
            "tr_../../x".to_string(),
            format!("tr_{}", &digits[1..]),
            format!("tr_{digits}0"),
            format!("tr_{}", digits.to_uppercase()),
            format!("tr_{}g", &digits[1..]),
            format!("ref_tr_{digits}"),
            format!("TR_{digits}"),
            format!("tr_{}é", &digits[2..]),
        ] {
            assert!(!super::is_id("tr_", &bad), "{bad:?}");
        }
    }
}
