//! The vendors' product tax codes, mapped to levy's (`data/dialect-tax-codes.toml`): what a
//! TaxJar `product_tax_code` or an AvaTax `taxCode` is taxed as.

use std::sync::OnceLock;

/// One vendor code and the levy code it is taxed as.
#[derive(Clone, Debug, serde::Deserialize)]
pub(crate) struct VendorCode {
    /// The vendor's code, as a request sends it.
    pub code: String,
    /// The vendor's name of it.
    pub name: String,
    /// The vendor's public definition of it.
    pub description: String,
    /// The levy tax code (a product category of levy's taxonomy).
    pub levy: String,
}

/// Both vendors' lists.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Codes {
    /// TaxJar product tax codes.
    pub taxjar: Vec<VendorCode>,
    /// AvaTax system tax codes.
    pub avatax: Vec<VendorCode>,
}

/// The mapping file, compiled in.
const FILE: &str = include_str!("../../../../data/dialect-tax-codes.toml");

/// The mappings, read once.
pub(crate) fn codes() -> &'static Codes {
    static CODES: OnceLock<Codes> = OnceLock::new();
    CODES.get_or_init(|| {
        // The file is part of the build and checked by a test: it always parses.
        toml::from_str(FILE).unwrap_or(Codes {
            taxjar: Vec::new(),
            avatax: Vec::new(),
        })
    })
}

/// What a line's vendor code is taxed as: the mapped levy code, or general merchandise
/// and a message saying why (never silently): a code the file does not map, or one it
/// maps to a code the rate table in use does not know (`known` says which it knows).
/// `None` (no code on the line) is general merchandise without a message, as both vendors
/// define a line without a code.
pub(crate) fn levy_code(
    list: &'static [VendorCode],
    vendor: &str,
    given: Option<&str>,
    line: &str,
    known: &dyn Fn(&str) -> bool,
) -> (&'static str, Option<String>) {
    const GENERAL: &str = "GENERAL_MERCHANDISE";
    let Some(code) = given.map(str::trim).filter(|c| !c.is_empty()) else {
        return (GENERAL, None);
    };
    match list.iter().find(|c| c.code.eq_ignore_ascii_case(code)) {
        Some(c) if known(&c.levy) => (c.levy.as_str(), None),
        Some(c) => (
            GENERAL,
            Some(format!(
                "line {line}: the {vendor} tax code {code:?} is levy's {}, which the rate \
                 table in use does not know; it was taxed as {GENERAL}",
                c.levy
            )),
        ),
        None => (
            GENERAL,
            Some(format!(
                "line {line}: the {vendor} tax code {code:?} is not one levy maps \
                 (data/dialect-tax-codes.toml); it was taxed as {GENERAL}"
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_file_parses_and_names_each_code_once() {
        let c: Codes = toml::from_str(FILE).expect("data/dialect-tax-codes.toml parses");
        assert!(c.taxjar.len() >= 10 && c.avatax.len() >= 5);
        for list in [&c.taxjar, &c.avatax] {
            let mut seen = std::collections::HashSet::new();
            for code in list {
                assert!(seen.insert(code.code.to_ascii_uppercase()), "{}", code.code);
                assert!(!code.description.is_empty() && !code.levy.is_empty());
            }
        }
    }

    #[test]
    fn an_unknown_code_is_general_merchandise_and_said_so() {
        let list = &codes().taxjar;
        let all = |_: &str| true;
        assert_eq!(
            levy_code(list, "TaxJar", Some("20010"), "1", &all),
            ("CLOTHING", None)
        );
        assert_eq!(
            levy_code(list, "TaxJar", None, "1", &all),
            ("GENERAL_MERCHANDISE", None)
        );
        let (code, note) = levy_code(list, "TaxJar", Some("12345"), "7", &all);
        assert_eq!(code, "GENERAL_MERCHANDISE");
        assert!(note.unwrap().contains("\"12345\""));
        // A mapped code the table does not know: general merchandise, and said so.
        let none = |_: &str| false;
        let (code, note) = levy_code(list, "TaxJar", Some("40030"), "2", &none);
        assert_eq!(code, "GENERAL_MERCHANDISE");
        assert!(note.unwrap().contains("GROCERIES"));
    }

    #[test]
    fn every_mapping_names_a_code_of_levys_taxonomy() {
        // data/taxonomy.toml: every code is a category of the same name.
        let taxonomy: toml::Value =
            toml::from_str(include_str!("../../../../data/taxonomy.toml")).unwrap();
        let names: Vec<&str> = taxonomy["code"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        for c in codes().taxjar.iter().chain(&codes().avatax) {
            assert!(names.contains(&c.levy.as_str()), "{} -> {}", c.code, c.levy);
        }
    }
}
