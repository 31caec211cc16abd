//! Address normalization, the way postal data writes addresses.
//!
//! Street lines are upper-cased, punctuation is dropped, USPS street suffixes and
//! directionals are abbreviated (Publication 28, appendices B and C1), and unit designators
//! (`APT`, `SUITE`, `#`, ...) split the unit off. ZIP codes are read with or without the
//! ZIP+4 and its hyphen. The same functions normalize boundary files when a table is built,
//! so both sides of a street lookup are written alike.

/// A street line split into its parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreetLine {
    /// House number, when the line starts with one (`123` of `123A MAIN ST`).
    pub number: Option<u32>,
    /// Normalized street: pre-directional, name, suffix, post-directional (`N MAIN ST`).
    pub street: String,
    /// Unit, normalized (`APT 4`), empty when none.
    pub unit: String,
}

/// USPS Publication 28 appendix C1: common street suffixes and their abbreviations.
static SUFFIXES: phf::Map<&'static str, &'static str> = phf::phf_map! {
    "ALLEY" => "ALY", "ALLEE" => "ALY", "ALLY" => "ALY", "ANNEX" => "ANX", "ARCADE" => "ARC",
    "AVENUE" => "AVE", "AV" => "AVE", "AVEN" => "AVE", "AVENU" => "AVE", "AVN" => "AVE", "AVNUE" => "AVE",
    "BAYOU" => "BYU", "BEACH" => "BCH", "BEND" => "BND", "BLUFF" => "BLF", "BOTTOM" => "BTM",
    "BOULEVARD" => "BLVD", "BOUL" => "BLVD", "BOULV" => "BLVD", "BRANCH" => "BR", "BRIDGE" => "BRG",
    "BROOK" => "BRK", "BYPASS" => "BYP", "CAMP" => "CP", "CANYON" => "CYN", "CAPE" => "CPE",
    "CAUSEWAY" => "CSWY", "CENTER" => "CTR", "CENTRE" => "CTR", "CENTR" => "CTR", "CIRCLE" => "CIR",
    "CIRC" => "CIR", "CLIFF" => "CLF", "CLUB" => "CLB", "COMMON" => "CMN", "CORNER" => "COR",
    "CORNERS" => "CORS", "COURSE" => "CRSE", "COURT" => "CT", "COURTS" => "CTS", "COVE" => "CV",
    "CREEK" => "CRK", "CRESCENT" => "CRES", "CROSSING" => "XING", "CROSSROAD" => "XRD",
    "CURVE" => "CURV", "DALE" => "DL", "DAM" => "DM", "DIVIDE" => "DV", "DRIVE" => "DR", "DRIV" => "DR",
    "DRV" => "DR", "ESTATE" => "EST", "ESTATES" => "ESTS", "EXPRESSWAY" => "EXPY", "EXPRESS" => "EXPY",
    "EXTENSION" => "EXT", "FALLS" => "FLS", "FERRY" => "FRY", "FIELD" => "FLD", "FIELDS" => "FLDS",
    "FLAT" => "FLT", "FORD" => "FRD", "FOREST" => "FRST", "FORGE" => "FRG", "FORK" => "FRK",
    "FORT" => "FT", "FREEWAY" => "FWY", "GARDEN" => "GDN", "GARDENS" => "GDNS", "GATEWAY" => "GTWY",
    "GLEN" => "GLN", "GREEN" => "GRN", "GROVE" => "GRV", "HARBOR" => "HBR", "HAVEN" => "HVN",
    "HEIGHTS" => "HTS", "HIGHWAY" => "HWY", "HIGHWY" => "HWY", "HIWAY" => "HWY", "HILL" => "HL",
    "HILLS" => "HLS", "HOLLOW" => "HOLW", "ISLAND" => "IS", "JUNCTION" => "JCT", "KEY" => "KY",
    "KNOLL" => "KNL", "LAKE" => "LK", "LAKES" => "LKS", "LANDING" => "LNDG", "LANE" => "LN",
    "LIGHT" => "LGT", "LOCK" => "LCK", "LODGE" => "LDG", "MANOR" => "MNR", "MEADOW" => "MDW",
    "MEADOWS" => "MDWS", "MILL" => "ML", "MISSION" => "MSN", "MOUNT" => "MT", "MOUNTAIN" => "MTN",
    "ORCHARD" => "ORCH", "PARKWAY" => "PKWY", "PARKWY" => "PKWY", "PKY" => "PKWY", "PASSAGE" => "PSGE",
    "PINE" => "PNE", "PINES" => "PNES", "PLACE" => "PL", "PLAIN" => "PLN", "PLAINS" => "PLNS",
    "PLAZA" => "PLZ", "POINT" => "PT", "POINTS" => "PTS", "PORT" => "PRT", "PRAIRIE" => "PR",
    "RANCH" => "RNCH", "RAPIDS" => "RPDS", "RIDGE" => "RDG", "RIVER" => "RIV", "ROAD" => "RD",
    "ROADS" => "RDS", "ROUTE" => "RTE", "SHORE" => "SHR", "SHORES" => "SHRS", "SKYWAY" => "SKWY",
    "SPRING" => "SPG", "SPRINGS" => "SPGS", "SQUARE" => "SQ", "STATION" => "STA", "STREAM" => "STRM",
    "STREET" => "ST", "STR" => "ST", "STRT" => "ST", "SUMMIT" => "SMT", "TERRACE" => "TER",
    "TRACE" => "TRCE", "TRACK" => "TRAK", "TRAIL" => "TRL", "TRAILS" => "TRL", "TUNNEL" => "TUNL",
    "TURNPIKE" => "TPKE", "UNION" => "UN", "VALLEY" => "VLY", "VIADUCT" => "VIA", "VIEW" => "VW",
    "VILLAGE" => "VLG", "VILLE" => "VL", "VISTA" => "VIS", "WELLS" => "WLS",
};

/// USPS Publication 28 appendix B: directionals.
static DIRECTIONALS: phf::Map<&'static str, &'static str> = phf::phf_map! {
    "NORTH" => "N", "SOUTH" => "S", "EAST" => "E", "WEST" => "W",
    "NORTHEAST" => "NE", "NORTHWEST" => "NW", "SOUTHEAST" => "SE", "SOUTHWEST" => "SW",
    "N" => "N", "S" => "S", "E" => "E", "W" => "W", "NE" => "NE", "NW" => "NW", "SE" => "SE", "SW" => "SW",
};

/// USPS Publication 28 appendix C2: secondary unit designators.
static UNITS: phf::Map<&'static str, &'static str> = phf::phf_map! {
    "APARTMENT" => "APT", "APT" => "APT", "BASEMENT" => "BSMT", "BSMT" => "BSMT", "BUILDING" => "BLDG",
    "BLDG" => "BLDG", "DEPARTMENT" => "DEPT", "DEPT" => "DEPT", "FLOOR" => "FL", "FL" => "FL",
    "FRONT" => "FRNT", "HANGAR" => "HNGR", "KEY" => "KEY", "LOBBY" => "LBBY", "LOT" => "LOT",
    "LOWER" => "LOWR", "OFFICE" => "OFC", "OFC" => "OFC", "PENTHOUSE" => "PH", "PH" => "PH",
    "PIER" => "PIER", "REAR" => "REAR", "ROOM" => "RM", "RM" => "RM", "SIDE" => "SIDE", "SLIP" => "SLIP",
    "SPACE" => "SPC", "SPC" => "SPC", "STOP" => "STOP", "SUITE" => "STE", "STE" => "STE",
    "TRAILER" => "TRLR", "TRLR" => "TRLR", "UNIT" => "UNIT", "UPPER" => "UPPR", "#" => "#",
};

fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in line.chars() {
        if ch.is_alphanumeric() {
            cur.extend(ch.to_uppercase());
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if ch == '#' {
                out.push("#".to_string());
            }
            // Other punctuation (.,'-/) separates words and is dropped.
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Normalizes a street line (`123 North Main Street, Apt. 4` -> number 123, street
/// `N MAIN ST`, unit `APT 4`).
pub fn parse_street_line(line: &str) -> StreetLine {
    if line.is_empty() {
        // The usual line of a sale addressed by postal code alone: nothing to split.
        return StreetLine::default();
    }
    let mut toks = tokens(line);
    let mut number = None;
    if let Some(first) = toks.first() {
        let digits: String = first.chars().take_while(char::is_ascii_digit).collect();
        // `1ST`, `2ND`, `3RD`, `4TH` begin a numbered street (`1st Avenue`), not a house number.
        let ordinal = matches!(&first[digits.len()..], "ST" | "ND" | "RD" | "TH");
        if !digits.is_empty() && !ordinal {
            number = digits.parse::<u32>().ok();
            toks.remove(0);
        }
    }
    // Split the unit off at the first unit designator that is not the street's only word.
    let mut unit = String::new();
    if let Some(pos) = toks
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, t)| UNITS.contains_key(t.as_str()))
        .map(|(i, _)| i)
    {
        let rest = toks.split_off(pos);
        let mut parts = Vec::with_capacity(rest.len());
        parts.push(
            UNITS
                .get(rest[0].as_str())
                .copied()
                .unwrap_or("#")
                .to_string(),
        );
        parts.extend(rest.into_iter().skip(1).filter(|t| t != "#"));
        unit = parts.join(" ");
    }
    let street = normalize_street_tokens(toks);
    StreetLine {
        number,
        street,
        unit,
    }
}

fn normalize_street_tokens(mut toks: Vec<String>) -> String {
    let n = toks.len();
    if n >= 2 {
        if let Some(d) = DIRECTIONALS.get(toks[0].as_str()) {
            toks[0] = d.to_string();
        }
        // Post-directional, then the suffix before it (or last when there is none).
        let mut last = n - 1;
        if let Some(d) = DIRECTIONALS.get(toks[last].as_str()) {
            if n >= 3 {
                toks[last] = d.to_string();
                last -= 1;
            }
        }
        if last >= 1 {
            if let Some(s) = SUFFIXES.get(toks[last].as_str()) {
                toks[last] = s.to_string();
            }
        }
    }
    toks.join(" ")
}

/// Normalizes a street name written in parts, as boundary files give it (pre-directional,
/// name, suffix, post-directional), to the same form as [`parse_street_line`]'s `street`.
pub fn normalize_street(pre: &str, name: &str, suffix: &str, post: &str) -> String {
    let mut toks = Vec::new();
    for part in [pre, name, suffix, post] {
        toks.extend(tokens(part));
    }
    normalize_street_tokens(toks)
}

/// Normalizes a postal code: upper case, no spaces or hyphens (`k1a 0b1` -> `K1A0B1`).
pub fn normalize_postal(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Whether `postal` (as [`normalize_postal`] writes it: letters and digits, upper case) has
/// a shape of `country`'s postal codes, for the countries levy's data covers; `true` for a
/// country whose shape levy does not hold (the United Arab Emirates have no postal codes).
/// US ZIPs are read by [`parse_us_zip`].
///
/// Shapes (`9` a digit, `A` a letter, `?` either) from the Universal Postal Union's
/// "Postal addressing systems" pages of each member country (as of 2026-11-01); a country
/// prefix some countries write (`L-1234`, `LV-1010`, `LT-12345`, `SI-1000`) is accepted.
pub fn postal_fits(country: &str, postal: &str) -> bool {
    let shapes: &[&str] = match country {
        "CA" => &["A9A9A9", "A9A"],
        "AT" | "BE" | "BG" | "CY" | "DK" | "HU" | "NO" | "CH" | "LI" | "AU" | "NZ" | "ZA" => {
            &["9999"]
        }
        "HR" | "CZ" | "EE" | "FI" | "FR" | "DE" | "GR" | "IT" | "SK" | "ES" | "SE" | "KR"
        | "MX" | "TR" | "PL" => &["99999"],
        "LU" => &["9999", "L9999"],
        "LV" => &["9999", "LV9999"],
        "LT" => &["99999", "LT99999"],
        "SI" => &["9999", "SI9999"],
        "PT" => &["9999999", "9999"],
        "NL" => &["9999AA", "9999"],
        "RO" | "SG" => &["999999"],
        "IS" => &["999"],
        "JP" | "IL" => &["9999999"],
        "SA" => &["99999", "999999999"],
        "MT" => &["AAA9999", "AAA99"],
        "IE" => &["A99????", "A9W????", "A99", "A9W"],
        "GB" => return uk_postcode(postal),
        _ => return true,
    };
    shapes.iter().any(|shape| fits(postal, shape))
}

/// Whether `postal` has `shape`: `9` a digit, `A` a letter, `?` either, any other byte
/// itself.
fn fits(postal: &str, shape: &str) -> bool {
    postal.len() == shape.len()
        && postal.bytes().zip(shape.bytes()).all(|(c, s)| match s {
            b'9' => c.is_ascii_digit(),
            b'A' => c.is_ascii_uppercase(),
            b'?' => c.is_ascii_alphanumeric(),
            s => c == s,
        })
}

/// A UK postcode: an outward code (`A9`, `A99`, `AA9`, `AA99`, `A9A`, `AA9A`) and an inward
/// code (`9AA`), or the Girobank's `GIR0AA`.
fn uk_postcode(postal: &str) -> bool {
    let Some(outward) = postal.len().checked_sub(3).map(|n| &postal[..n]) else {
        return false;
    };
    let inward = &postal[outward.len()..];
    postal == "GIR0AA"
        || (fits(inward, "9AA")
            && ["A9", "A99", "AA9", "AA99", "A9A", "AA9A"]
                .iter()
                .any(|shape| fits(outward, shape)))
}

/// A city name as a key, so that the names a buyer writes and the names published lists
/// give meet: ASCII upper case without accents, punctuation or spaces, `SAINT` for `ST`
/// and `SAINTE` for `STE`, no leading `CITY OF`. CDTFA's `St. Helena`, `La Cañada
/// Flintridge`, `City of Commerce` and `McFarland` meet USPS's `SAINT HELENA`, `LA CANADA
/// FLINTRIDGE`, `COMMERCE` and `MC FARLAND`, and a buyer's `bell gardens` meets `Bell
/// Gardens`: `BELLGARDENS`.
pub fn city_key(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' | 'Á' | 'À' | 'Â' | 'Ä' | 'Ã' => 'A',
            'é' | 'è' | 'ê' | 'ë' | 'É' | 'È' | 'Ê' | 'Ë' => 'E',
            'í' | 'ì' | 'î' | 'ï' | 'Í' | 'Ì' | 'Î' | 'Ï' => 'I',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' | 'Ó' | 'Ò' | 'Ô' | 'Ö' | 'Õ' => 'O',
            'ú' | 'ù' | 'û' | 'ü' | 'Ú' | 'Ù' | 'Û' | 'Ü' => 'U',
            'ñ' | 'Ñ' => 'N',
            'ç' | 'Ç' => 'C',
            c => c.to_ascii_uppercase(),
        })
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut words: Vec<&str> = upper.split_whitespace().collect();
    if words.len() > 2 && words[0] == "CITY" && words[1] == "OF" {
        words.drain(..2);
    }
    words
        .iter()
        .map(|w| match *w {
            "ST" => "SAINT",
            "STE" => "SAINTE",
            w => w,
        })
        .collect()
}

/// Parses a US ZIP code, `37203`, `37203-1234`, `37203 1234` or `372031234`, into the
/// ZIP5 and the optional plus-4. `None` when it is not five or nine digits.
pub fn parse_us_zip(code: &str) -> Option<(u32, Option<u16>)> {
    /// The number `ds` (five or four bytes here, at most eight) writes, when every byte of
    /// it is an ASCII digit: the bytes read as one `u64` after leading `'0'`s, checked and
    /// combined eight at a time rather than one by one.
    fn number(ds: &[u8]) -> Option<u32> {
        let mut buf = [b'0'; 8];
        buf.get_mut(8usize.checked_sub(ds.len())?..)?
            .copy_from_slice(ds);
        // The first digit in the lowest byte: each byte's digit value, 0 to 9.
        let d = u64::from_le_bytes(buf).wrapping_sub(0x3030_3030_3030_3030);
        // A byte below '0' wraps to 0xD0 or more, one above '9' reaches 0x80 once 0x76 is
        // added; a digit does neither (and so borrows or carries nothing into the next).
        if (d | d.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080 != 0 {
            return None;
        }
        // Pairs of digits, then fours, then all eight: each group the value of its first
        // half (in the lower bytes) times the weight of its second half, plus the second.
        let d = (d * 10 + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
        let d = (d * 100 + (d >> 16)) & 0x0000_FFFF_0000_FFFF;
        let d = (d * 10_000 + (d >> 32)) & 0xFFFF_FFFF;
        Some(d as u32)
    }
    // As `str::trim`, without decoding the usual postal code's characters.
    let b = trim(code).as_bytes();
    // Five digits; nine; or five, one separator, four.
    match b.len() {
        5 => Some((number(b)?, None)),
        9 => Some((number(&b[..5])?, Some(number(&b[5..])? as u16))),
        10 if matches!(b[5], b'-' | b' ') => {
            Some((number(&b[..5])?, Some(number(&b[6..])? as u16)))
        }
        _ => None,
    }
}

/// `s` without leading and trailing whitespace, as [`str::trim`] gives it, but without
/// decoding a character when the string begins and ends with a visible ASCII one (a
/// postal code, a country code: the usual field), which no whitespace can be.
pub(crate) fn trim(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (None, _) => s,
        (Some(a), Some(b)) if a.is_ascii_graphic() && b.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn postal_codes_fit_their_country_only() {
        // UPU shapes: Ottawa's K1A 0B1, Berlin's 10115, London's SW1A 1AA and EC1A 1BB,
        // Dublin's D02 X285 (Eircode), Valletta's VLT 1117, Amsterdam's 1012 AB.
        for (country, postal) in [
            ("CA", "K1A0B1"),
            ("DE", "10115"),
            ("GB", "SW1A1AA"),
            ("GB", "EC1A1BB"),
            ("GB", "M11AE"),
            ("IE", "D02X285"),
            ("IE", "D6W1234"),
            ("MT", "VLT1117"),
            ("NL", "1012AB"),
            ("LU", "L1234"),
            ("JP", "1000001"),
            ("AE", "ANYTHING"),
        ] {
            assert!(postal_fits(country, postal), "{country} {postal}");
        }
        // A US ZIP is no Canadian, British or Japanese postal code; a Canadian one no German.
        for (country, postal) in [
            ("CA", "37203"),
            ("GB", "37203"),
            ("JP", "37203"),
            ("DE", "K1A0B1"),
            ("NL", "AB1012"),
            ("GB", "SW1A1A"),
        ] {
            assert!(!postal_fits(country, postal), "{country} {postal}");
        }
    }

    use super::*;

    /// The parser as first written, byte by byte: the reference the straight-line one is
    /// checked against.
    fn parse_us_zip_bytewise(code: &str) -> Option<(u32, Option<u16>)> {
        let trimmed = code.trim();
        let mut digits = [0u8; 9];
        let mut n = 0;
        for (i, b) in trimmed.bytes().enumerate() {
            match b {
                b'0'..=b'9' => {
                    if n == 9 {
                        return None;
                    }
                    digits[n] = b - b'0';
                    n += 1;
                }
                b'-' | b' ' if n == 5 && i == 5 => {}
                _ => return None,
            }
        }
        let num = |ds: &[u8]| ds.iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d));
        match n {
            5 if trimmed.len() == 5 => Some((num(&digits[..5]), None)),
            9 => Some((num(&digits[..5]), Some(num(&digits[5..9]) as u16))),
            _ => None,
        }
    }

    proptest::proptest! {
        /// Digits, separators, spaces around and other bytes (among them '/' and ':', the
        /// bytes on either side of the digits, and multi-byte characters), at every length
        /// up to 12: the same answer as the byte-by-byte parser.
        #[test]
        fn parses_as_the_bytewise_parser(code in "[0-9]{0,10}|[ ]?[0-9]{5}[- /]?[0-9]{4}[ \t]?|[0-9 a/é-]{0,12}|[/0-9:]{5}|[0-9]{5}-?[/0-9:é]{4}") {
            proptest::prop_assert_eq!(parse_us_zip(&code), parse_us_zip_bytewise(&code));
        }
    }

    #[test]
    fn street_lines_normalize_like_postal_data() {
        // Publication 28: NORTH -> N, STREET -> ST, APARTMENT -> APT.
        let s = parse_street_line("123 North Main Street, Apartment 4");
        assert_eq!(
            s,
            StreetLine {
                number: Some(123),
                street: "N MAIN ST".into(),
                unit: "APT 4".into()
            }
        );
        let s = parse_street_line("600 w. peachtree st nw #1200");
        assert_eq!(
            s,
            StreetLine {
                number: Some(600),
                street: "W PEACHTREE ST NW".into(),
                unit: "# 1200".into()
            }
        );
        let s = parse_street_line("1 Avenue of the Americas Suite 5");
        assert_eq!(s.street, "AVENUE OF THE AMERICAS");
        assert_eq!(s.unit, "STE 5");
        // A one-word street keeps its word even when it looks like a suffix or directional.
        assert_eq!(parse_street_line("10 Broadway").street, "BROADWAY");
        assert_eq!(parse_street_line("10 North").street, "NORTH");
        assert_eq!(normalize_street("north", "Main", "Street", ""), "N MAIN ST");
        // A leading ordinal is the street's name, not a house number.
        let s = parse_street_line("1st Avenue");
        assert_eq!((s.number, s.street.as_str()), (None, "1ST AVE"));
        let s = parse_street_line("350 5th Avenue");
        assert_eq!((s.number, s.street.as_str()), (Some(350), "5TH AVE"));
        // A house number with a letter keeps its number.
        assert_eq!(parse_street_line("123A Main St").number, Some(123));
    }

    #[test]
    fn city_names_meet_whatever_their_spelling() {
        assert_eq!(city_key("Bell Gardens"), "BELLGARDENS");
        assert_eq!(city_key(" bell  gardens "), "BELLGARDENS");
        assert_eq!(city_key("St. Helena"), city_key("SAINT HELENA"));
        assert_eq!(
            city_key("La Cañada Flintridge"),
            city_key("LA CANADA FLINTRIDGE")
        );
        assert_eq!(city_key("City of Commerce"), "COMMERCE");
        assert_eq!(city_key("McFarland"), city_key("MC FARLAND"));
        // `City of` alone is a name, not a prefix; nothing is never a name.
        assert_eq!(city_key("City Of"), "CITYOF");
        assert_eq!(city_key(" - "), "");
    }

    #[test]
    fn zip_codes_with_and_without_plus_four() {
        assert_eq!(parse_us_zip("37203"), Some((37203, None)));
        assert_eq!(parse_us_zip("37203-1234"), Some((37203, Some(1234))));
        assert_eq!(parse_us_zip("372031234"), Some((37203, Some(1234))));
        assert_eq!(parse_us_zip(" 02110 "), Some((2110, None)));
        assert_eq!(parse_us_zip("3720"), None);
        assert_eq!(parse_us_zip("37203-12"), None);
        assert_eq!(parse_us_zip("3720-31234"), None);
        assert_eq!(parse_us_zip("abcde"), None);
        assert_eq!(normalize_postal("k1a 0b1"), "K1A0B1");
    }
}

#[cfg(test)]
mod trim_tests {
    use proptest::prelude::*;

    proptest! {
        /// The shortcut trims exactly as `str::trim`: strings drawn from ASCII letters and
        /// digits, ASCII and Unicode whitespace (NBSP, the ideographic space, line and
        /// paragraph separators) and other non-ASCII letters, at either end or inside.
        #[test]
        fn trims_as_str_trim(s in "[ a-z0-9\t\n\r\u{a0}\u{3000}\u{2028}\u{2029}é漢-]{0,12}") {
            prop_assert_eq!(super::trim(&s), s.trim());
        }
    }

    #[test]
    fn keeps_visible_ends_and_trims_whitespace() {
        // By hand: nothing to take off a plain ZIP; ASCII and Unicode spaces come off.
        assert_eq!(super::trim("37203"), "37203");
        assert_eq!(super::trim(" 37203\t"), "37203");
        assert_eq!(super::trim("\u{a0}TN\u{3000}"), "TN");
        assert_eq!(super::trim(""), "");
        assert_eq!(super::trim(" "), "");
    }
}
