//! `Table::resolve_into` with one `Location` reused for sale after sale answers exactly as
//! `Table::resolve` does for each address alone, whatever came before: no field of an
//! earlier place survives into a later one.

mod common;

use levy_core::*;
use proptest::prelude::*;

/// Addresses of every kind the scenario table holds (see `common`): a street range, ZIP+4
/// ranges, ZIP5s, a ZIP the table lacks, a region alone, Canada by postal prefix and
/// without one, other countries, a territory, and the errors (bad country, malformed ZIP,
/// a ZIP in another state, a place the table does not cover).
fn addresses() -> Vec<Address> {
    let a =
        |line1: &str, line2: &str, city: &str, region: &str, postal: &str, country: &str| Address {
            line1: line1.into(),
            line2: line2.into(),
            city: city.into(),
            region: region.into(),
            postal_code: postal.into(),
            country: country.into(),
        };
    vec![
        a(
            "1200 E Alameda Avenue",
            "Apt 5",
            "aurora",
            "co",
            "80012-1234",
            "us",
        ),
        a("1201 E Alameda Ave", "", "", "CO", "80012", "US"),
        a("", "", "", "CO", "80012-1500", "US"),
        a("", "", "", "", "80012-2500", "US"),
        a("", "", "Denver", "CO", "80012", "US"),
        a("", "", "", "TN", "37203", "US"),
        a("99 Main St", "Suite 4", "nashville", "tn", "37203", "US"),
        a("", "", "", "TX", "78701", "US"),
        a("", "", "", "MA", "02110", "US"),
        a("", "", "", "NY", "10001", "US"),
        a("", "", "", "TN", "37999", "US"),
        a("", "", "", "TN", "", "US"),
        a("", "", "", "", "", "US"),
        a("10 King St W", "", "Toronto", "", "M5H 1A1", "CA"),
        a("", "", "", "ON", "m5h1a1", "ca"),
        a("", "", "", "", "K1A 0B1", "CA"),
        a("", "", "", "", "", "CA"),
        a("Hauptstraße 1", "", "München", "", "80331", "DE"),
        a("", "", "", "", "100-0001", "JP"),
        a("", "", "", "", "", "KW"),
        a("", "", "", "", "00901", "PR"),
        a("", "", "", "TN", "80012", "US"),
        a("", "", "", "CO", "8001", "US"),
        a("", "", "", "", "12345", "USA"),
        a("", "", "", "", "", "ZZ"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_reused_location_answers_as_a_fresh_one(order in proptest::collection::vec(0usize..25, 1..40)) {
        let table = common::scenario();
        let all = addresses();
        let mut reused = Location::default();
        for &i in &order {
            let address = &all[i];
            let fresh = table.resolve(address, common::day());
            let into = table.resolve_into(address, common::day(), &mut reused);
            match fresh {
                Ok(fresh) => {
                    prop_assert!(into.is_ok(), "{address:?}: {into:?}");
                    prop_assert_eq!(&reused, &fresh, "{:?}", address);
                }
                Err(e) => prop_assert_eq!(into, Err(e), "{:?}", address),
            }
        }
    }
}

#[test]
fn the_addresses_cover_every_outcome() {
    // The list above reaches each resolution the table can give and each error, so the
    // property compares every kind of place after every other kind.
    let table = common::scenario();
    let mut precisions = std::collections::BTreeSet::new();
    let mut errors = std::collections::BTreeSet::new();
    for a in addresses() {
        match table.resolve(&a, common::day()) {
            Ok(l) => {
                precisions.insert(l.precision.as_str());
            }
            Err(e) => {
                errors.insert(e.error_type());
            }
        }
    }
    assert_eq!(
        precisions.into_iter().collect::<Vec<_>>(),
        ["COUNTRY", "POSTAL", "POSTAL_PLUS", "PROVINCE", "STREET"]
    );
    assert_eq!(
        errors.into_iter().collect::<Vec<_>>(),
        [
            "INVALID_COUNTRY_CODE",
            "MALFORMED_ADDRESS",
            "UNSUPPORTED_LOCATION",
            "ZIP_STATE_MISMATCH"
        ]
    );
}
