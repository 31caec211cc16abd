//! The embedded default table: it opens, verifies and answers the places it covers.

use levy_core::*;

fn day() -> Date {
    Date::from_ymd(2026, 3, 1).unwrap()
}

fn tax(
    address: &Address,
    category: &str,
    cents: i64,
    currency: Currency,
) -> (Location, Calculation) {
    let t = levy_data::default_table();
    let location = t.resolve(address, day()).unwrap();
    let sale = Sale {
        currency,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date: day(),
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![SaleLine {
            amount: Decimal::from(cents),
            quantity: 1,
            per_unit: false,
            tax_code: t.category(category).unwrap(),
        }],
    };
    let calc = t.calculate(&location, &sale).unwrap();
    (location, calc)
}

fn codes(calc: &Calculation) -> Vec<&'static str> {
    let t = levy_data::default_table();
    let mut v: Vec<&str> = calc.lines[0]
        .jurisdictions
        .iter()
        .map(|j| t.jurisdiction(j.jurisdiction).unwrap().code())
        .collect();
    v.sort();
    v
}

#[test]
fn opens_verifies_and_fits_the_budget() {
    let t = levy_data::default_table();
    t.verify().unwrap();
    assert_eq!(t.bytes().as_ptr() as usize % 16, 0);
    assert_eq!(t.bytes(), levy_data::default_bytes());
    // The size budget for the embedded table is 27 MB, local rates included: 21.9 MB before
    // the taxability matrix, which adds its 1,390 cells with their sources and notes (about
    // 0.9 MB) and some 10,000 rules of product treatment over California's, Georgia's,
    // Minnesota's and Wisconsin's local jurisdictions (about 1.9 MB; a cell that says what a
    // code would inherit anyway writes none): 24.8 MB. The county rates of the local rates
    // files of data/local/us/, their districts and cities, and the places of the whole
    // census ZIP-to-county file add about 1.3 MB.
    assert!(
        levy_data::default_bytes().len() < 27_000_000,
        "{} bytes",
        levy_data::default_bytes().len()
    );
    // Opening the same bytes again gives the same content hash (a second, independent open).
    let again = Table::open(AnyBytes::Static(levy_data::default_bytes())).unwrap();
    assert_eq!(again.hash_hex(), t.hash_hex());
    // Built, in this order, from the curated files and IP range files, the USPS ZIP list,
    // the CDTFA list, the three SST rate files, the local rates files of data/local/us/
    // (an entry for each file, and one for each other publication its counties, districts
    // and cities name), the census ZIP-to-county file, and last the per-order fees
    // (data/us-fees.toml, read with the states' other facts).
    let kinds: Vec<&str> = t.data().manifest.iter().map(|s| s.kind.as_str()).collect();
    let first_local = kinds.iter().position(|k| *k == "usps-zips").unwrap();
    assert!(kinds[..first_local]
        .iter()
        .all(|k| ["curated", "ip-country", "ip-region"].contains(k)));
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/local/us"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("toml".as_ref()))
        .count();
    // After the census file: us-rules.toml's rules over each published input whose rates
    // they rewrite (Tennessee's local cap over data/local/us/TN.toml's entries: an entry
    // each, holding no longer than those rates, levy_build::horizon), then us-fees.toml.
    let zip_county = kinds.iter().position(|k| *k == "zip-county").unwrap();
    let local_rates = zip_county - first_local - 5;
    assert!(local_rates >= files, "{kinds:?}");
    let mut expected = vec!["usps-zips", "cdtfa", "sst-rates", "sst-rates", "sst-rates"];
    expected.extend(std::iter::repeat_n("local-rates", local_rates));
    expected.push("zip-county");
    assert_eq!(kinds[first_local..=zip_county], expected);
    let after: Vec<(&str, &str, &str)> = t.data().manifest[zip_county + 1..]
        .iter()
        .map(|e| (e.kind.as_str(), e.name.as_str(), e.publication.as_str()))
        .collect();
    let (fees, over) = after.split_last().unwrap();
    assert_eq!(*fees, ("curated", "us-fees.toml", ""));
    assert!(!over.is_empty());
    for (kind, name, publication) in over {
        assert_eq!((*kind, *name), ("curated", "us-rules.toml"));
        assert_eq!(*publication, "local-rates TN.toml");
    }
}

#[test]
fn nashville_zip_is_tennessee_with_davidsons_local_taxes() {
    // Tennessee Department of Revenue: 7% state rate; Davidson County's 2.25% (County and
    // City Local Tax Rates) and its 0.5% transit surcharge from 2025-02-01 (Important Notice
    // #24-11), data/local/us/TN.toml. $100.00 of general merchandise at 37203 (Nashville)
    // owes $9.75, and every city of Davidson levies the county's rate: FULL.
    let a = Address {
        postal_code: "37203".into(),
        country: "US".into(),
        ..Default::default()
    };
    let (location, calc) = tax(&a, "GENERAL_MERCHANDISE", 10_000, Currency::USD);
    assert_eq!(
        levy_data::default_table().address_used(&location).region,
        "TN"
    );
    assert_eq!(
        levy_data::default_table().address_used(&location).city,
        "NASHVILLE"
    );
    assert_eq!(calc.total_tax, Decimal::from(975));
    assert_eq!(calc.coverage, Coverage::Full);
    // The state single article tax is in every Tennessee set, and the local taxes apply to
    // the first $1,600 of an article (Tenn. Code Ann. 67-6-702): $2,500 owes 7% of 2,500 =
    // 175.00, 2.75% of the 900 above 1,600 = 24.75, and 2.75% of 1,600 = 44.00: 243.75.
    let (_, calc) = tax(&a, "GENERAL_MERCHANDISE", 250_000, Currency::USD);
    assert_eq!(
        codes(&calc),
        vec!["47", "47037", "47:SAT", "TN:DAVIDSON TRANSIT"]
    );
    assert_eq!(calc.total_tax, Decimal::from(24_375));
}

#[test]
fn every_state_has_a_main_postal_code_in_the_state() {
    // Approximate IP resolution needs each region's main postal code to resolve in that
    // region.
    let t = levy_data::default_table();
    for r in t.data().regions.iter().filter(|r| r.country == *b"US") {
        let postal = r.main_postal.as_str();
        assert_eq!(postal.len(), 5, "{}", r.region);
        let a = Address {
            postal_code: postal.into(),
            country: "US".into(),
            ..Default::default()
        };
        assert_eq!(
            t.address_used(&t.resolve(&a, day()).unwrap()).region,
            r.region.as_str()
        );
    }
}

#[test]
fn toronto_postal_code_is_ontario_hst() {
    // CRA: Ontario HST 13%; $100.00 owes $13.00 in one jurisdiction.
    let a = Address {
        postal_code: "M5V 3L9".into(),
        country: "CA".into(),
        ..Default::default()
    };
    let (location, calc) = tax(
        &a,
        "GENERAL_MERCHANDISE",
        10_000,
        Currency::from_code("CAD").unwrap(),
    );
    assert_eq!(
        levy_data::default_table().address_used(&location).region,
        "ON"
    );
    assert_eq!(codes(&calc), vec!["CA-ON"]);
    assert_eq!(calc.total_tax, Decimal::from(1_300));
}

#[test]
fn berlin_address_is_german_vat() {
    // UStG s. 12: 19% standard rate; EUR 100.00 owes EUR 19.00.
    let a = Address {
        city: "Berlin".into(),
        postal_code: "10115".into(),
        country: "DE".into(),
        ..Default::default()
    };
    let (_, calc) = tax(
        &a,
        "GENERAL_MERCHANDISE",
        10_000,
        Currency::from_code("EUR").unwrap(),
    );
    assert_eq!(codes(&calc), vec!["DE"]);
    assert_eq!(calc.total_tax, Decimal::from(1_900));
}

#[test]
fn ip_addresses_resolve_to_their_country() {
    let t = levy_data::default_table();
    // 193.0.0.0/21 is the RIPE NCC's own network in Amsterdam; 2a01:4f8::/29 and 5.9.0.0/16
    // are Hetzner Online's German allocations (RIPE database).
    for (ip, country) in [
        ("193.0.0.1", "NL"),
        ("5.9.0.1", "DE"),
        ("2a01:4f8::1", "DE"),
    ] {
        let place = t.lookup_ip(ip.parse().unwrap()).unwrap();
        assert_eq!(place.country(), country, "{ip}");
        let loc = t.resolve_ip(ip, IpMode::Strict, day()).unwrap();
        assert_eq!(loc.country(), country, "{ip}");
    }
    // A private address is in no public range.
    assert!(t.lookup_ip("10.0.0.1".parse().unwrap()).is_none());
    // A US address needs a ZIP code, which an IP range never gives with certainty: so a US
    // IP (8.8.8.8, Google's) is insufficient in strict mode and zero-rated in zero mode, as
    // the interface defines.
    assert_eq!(
        t.resolve_ip("8.8.8.8", IpMode::Strict, day()),
        Err(ResolveError::IpInsufficientUs("8.8.8.8".into()))
    );
    assert!(t
        .resolve_ip("8.8.8.8", IpMode::Zero, day())
        .unwrap()
        .is_zero_rate());
}

#[test]
fn approximate_ip_mode_gives_a_zip_in_the_ips_state() {
    let t = levy_data::default_table();
    // DB-IP City Lite places 8.8.8.0/24 in Mountain View, California (37.422, -122.085);
    // data/ip/ipv4-regions.txt keeps it in US-CA with the nearest California ZIP, 94043
    // (Mountain View; the zipcodes package's centroid 37.4056, -122.0775 is 1.2 miles away).
    let place = t.lookup_ip("8.8.8.8".parse().unwrap()).unwrap();
    assert_eq!((place.country(), place.region()), ("US", "CA"));
    let loc = t.resolve_ip("8.8.8.8", IpMode::Approximate, day()).unwrap();
    assert_eq!(loc.precision, Precision::Approximated);
    assert_eq!(t.address_used(&loc).postal_code, "94043");
    // From 2026 the ZIP carries CDTFA's rate for Mountain View: 9.125% (the CDTFA list of
    // 2026-01-01, row "Mountain View, 9.125%, Santa Clara, City"), so $100.00 owes $9.13.
    let (_, calc) = on_100("94043", day());
    assert_eq!(calc.total_tax, Decimal::from(913));
    // A Canadian IP (24.48.0.0/17, Cogeco; DB-IP: Montreal, Quebec) resolves to its
    // province in any mode, since Canada's taxes follow the province: GST and QST.
    let loc = t.resolve_ip("24.48.0.1", IpMode::Strict, day()).unwrap();
    assert_eq!(t.address_used(&loc).region, "QC");
    let set: Vec<&str> = t
        .jset(loc.jset.unwrap())
        .map(|j| t.jurisdiction(j).unwrap().code())
        .collect();
    assert_eq!(set, vec!["CA", "CA-QC"]);
}

fn us(postal: &str) -> Address {
    Address {
        postal_code: postal.into(),
        country: "US".into(),
        ..Default::default()
    }
}

/// Tax on $100.00 of general merchandise at a US ZIP on a day.
fn on_100(postal: &str, date: Date) -> (Location, Calculation) {
    let t = levy_data::default_table();
    let location = t.resolve(&us(postal), date).unwrap();
    let sale = Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![SaleLine {
            amount: Decimal::from(10_000),
            quantity: 1,
            per_unit: false,
            tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
        }],
    };
    let calc = t.calculate(&location, &sale).unwrap();
    (location, calc)
}

#[test]
fn california_has_its_cdtfa_rates_from_2026() {
    // CDTFA list effective 2026-01-01 (data/local/ca-cdtfa-1-1-26.csv): `San Jose,0.09375`.
    // 95132 is San Jose: 6% state + 1.25% uniform local + 2.125% district = 9.375% of
    // $100.00 = 937.5 cents, rounded half away from zero to 938; every level is known.
    let feb = Date::from_ymd(2026, 2, 1).unwrap();
    let (location, calc) = on_100("95132", feb);
    assert_eq!(calc.total_tax, Decimal::from(938));
    assert_eq!(location.coverage, Coverage::Full);
    assert_eq!(
        codes(&calc),
        vec!["06", "06:BRADLEY-BURNS", "06:CDTFA:CITY:SAN JOSE"]
    );
    // Before the list is in force the default knows only the statewide 7.25%
    // (data/us-states.toml): 725 cents, marked STATE_ONLY.
    let dec = Date::from_ymd(2025, 12, 6).unwrap();
    let (location, calc) = on_100("95132", dec);
    assert_eq!(calc.total_tax, Decimal::from(725));
    assert_eq!(location.coverage, Coverage::StateOnly);
    // A location CDTFA names that is no USPS primary city: `McFarland,0.0825` at 93250
    // (USPS `MC FARLAND`): 825 cents.
    assert_eq!(on_100("93250", feb).1.total_tax, Decimal::from(825));
}

#[test]
fn georgia_minnesota_and_wisconsin_have_their_county_rates() {
    let date = day();
    // GA SST rate file: state `13,45,13,0.04`, Fulton County `13,00,121,0.03`; the census
    // file puts 30303 (Atlanta) in Fulton alone: 4% + 3% = 700 cents. Atlanta's own city
    // tax (`13,01,04000,0.019`) cannot be placed by a county file: PARTIAL.
    let (location, calc) = on_100("30303", date);
    assert_eq!(calc.total_tax, Decimal::from(700));
    assert_eq!(codes(&calc), vec!["13", "13121"]);
    assert_eq!(location.coverage, Coverage::Partial);
    // MN rate file: state `27,45,27,0.06875`, Hennepin County `27,00,053,0.0015`, and the
    // special districts Hennepin County Transit `27,63,80004,0.0050` (from 2017-10-01), Metro
    // Area Transportation `27,63,80008,0.0075` and Metro Area Housing `27,63,80009,0.0025`
    // (both from 2023-10-01), which the Department of Revenue's notices place over Hennepin;
    // 55401 lies in Hennepin: 6.875% + 0.15% + 0.5% + 0.75% + 0.25% = 8.525% = 852.5 cents,
    // rounded half up to 853. Minneapolis's own 0.5% is a city tax no county places.
    assert_eq!(on_100("55401", date).1.total_tax, Decimal::from(853));
    // WI: state `55,45,55,0.05`, Dane County `55,00,025,0.005`; 53703 lies in Dane: 550.
    assert_eq!(on_100("53703", date).1.total_tax, Decimal::from(550));
}

#[test]
fn a_zip_in_counties_of_different_rates_stays_at_the_state_level_and_says_so() {
    // The census file puts 30004 in Cherokee (057), Forsyth (117) and Fulton (121)
    // counties, whose GA rates differ, so the default cannot tell which applies: the
    // state's 4% alone (400 cents), marked STATE_ONLY.
    let (location, calc) = on_100("30004", day());
    assert_eq!(calc.total_tax, Decimal::from(400));
    assert_eq!(codes(&calc), vec!["13"]);
    assert_eq!(location.coverage, Coverage::StateOnly);
}
