//! Local rates from public government data, as the embedded default holds them: the table
//! of the default's inputs (`data/local/`: the CDTFA list, the SST rate rows, the local
//! rates files of `data/local/us/`, the census ZIP-to-county file) over the curated rules,
//! without the IP ranges.
//!
//! * the hand-worked sales of `tests/worked/local/` (one county at least per state, worked
//!   from each state's publication), each delivered to a ZIP the census places in the
//!   county alone (or the one the sale names), with the city the sale names;
//! * a ZIP split between counties of different rates answers the state and the local taxes
//!   common to all its counties (`PARTIAL`), or the state alone (`STATE_ONLY`), and says why;
//! * the city an address names decides within a ZIP shared by places of different taxes
//!   (Bell and Bell Gardens in 90201; Milwaukee), on any table;
//! * every rule carries its publication into the manifest.
//!
//! The expected values are worked from the sources each names, never read from the data
//! under test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use levy_build::{build, BuildError, BuildOptions, BuildReport, Input, InputKind};
use levy_core::{
    Address, Coverage, Date, Decimal, Location, PlaceNote, SaleLine, Table, Taxability,
};
use serde::Deserialize;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn local() -> PathBuf {
    repo().join("data/local")
}

/// The default's local inputs, in its order.
fn default_inputs() -> Vec<Input> {
    let l = local();
    vec![
        Input::new(InputKind::Cdtfa, l.join("ca-cdtfa-1-1-26.csv")),
        Input::new(InputKind::SstRates, l.join("GAR2026Q2FEB19-local.csv")),
        Input::new(InputKind::SstRates, l.join("MNR2026Q2FEB18-local.csv")),
        Input::new(InputKind::SstRates, l.join("WIR2026Q2FEB18-local.csv")),
        Input::new(InputKind::LocalRates, l.join("us")),
        Input::new(InputKind::ZipCounty, l.join("zip-county.csv")),
    ]
}

/// A copy of `data/` without its IP ranges (links to every other entry), so that a test
/// table builds in seconds.
fn data_without_ip() -> &'static Path {
    static DIR: OnceLock<levy_testkit::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = levy_testkit::target_temp_dir!("levy-build-local-data");
        for e in std::fs::read_dir(repo().join("data")).unwrap() {
            let e = e.unwrap();
            if e.file_name() != "ip" {
                std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).unwrap();
            }
        }
        dir
    })
}

fn build_with(inputs: Vec<Input>) -> Result<BuildReport, BuildError> {
    build(&BuildOptions {
        inputs,
        curated: Some(levy_build::CuratedSource::Dir(
            data_without_ip().to_path_buf(),
        )),
        strict: true,
        build_time: Some(0),
        progress: None,
        usps_zips: true,
    })
}

/// The default's local data over the curated rules, built once.
fn fixture() -> &'static (BuildReport, Table<Vec<u8>>) {
    static T: OnceLock<(BuildReport, Table<Vec<u8>>)> = OnceLock::new();
    T.get_or_init(|| {
        let report = build_with(default_inputs()).expect("the default's local data builds");
        let table = Table::open(report.bytes.clone()).expect("opens");
        (report, table)
    })
}

fn day(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap()
}

fn at(zip: &str, city: &str) -> Address {
    Address {
        postal_code: zip.into(),
        city: city.into(),
        country: "US".into(),
        ..Default::default()
    }
}

/// Tax in cents, and the jurisdiction codes, of one $100.00 line of general merchandise.
fn on_100<D>(t: &Table<D>, loc: &Location, date: Date) -> (Decimal, BTreeSet<String>) {
    let line = SaleLine {
        amount: Decimal::from(10_000),
        quantity: 1,
        per_unit: false,
        tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
    };
    let calc = t
        .calculate(loc, &levy_testkit::sale::sale(vec![line], date))
        .expect("calculate");
    let codes = calc.lines[0]
        .jurisdictions
        .iter()
        .map(|j| t.jurisdiction(j.jurisdiction).unwrap().code().to_string())
        .collect();
    (calc.total_tax, codes)
}

fn codes(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedFile {
    sale: Vec<WorkedSale>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedSale {
    name: String,
    county: String,
    zip: Option<String>,
    city: Option<String>,
    date: toml::value::Datetime,
    lines: Vec<WorkedLine>,
    tax: Vec<String>,
    working: String,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedLine {
    code: String,
    amount: String,
}

/// Each (state, county FIPS) to the first ZIP the census file places in that county alone.
fn zip_in_county_alone() -> BTreeMap<(String, String), String> {
    let mut counties: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let text = std::fs::read_to_string(local().join("zip-county.csv")).unwrap();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        counties
            .entry((f[0].to_string(), f[1].to_string()))
            .or_default()
            .push(f[2].to_string());
    }
    let mut out = BTreeMap::new();
    for ((zip, state), cs) in counties {
        if let [only] = cs.as_slice() {
            out.entry((state, only.clone())).or_insert(zip);
        }
    }
    out
}

#[test]
fn every_local_worked_sale_is_calculated_as_worked_from_its_source() {
    let (_, t) = fixture();
    let alone = zip_in_county_alone();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/worked/local");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let states: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    // One county at least of every state whose county rates the default gained, and the
    // Twin Cities and Milwaukee.
    for st in ["FL", "HI", "NC", "OH", "PA", "VA", "MN", "WI", "TN", "NY"] {
        assert!(states.iter().any(|s| s == st), "no worked sales for {st}");
    }
    let (mut failures, mut n) = (Vec::new(), 0);
    for (f, state) in files.iter().zip(&states) {
        let parsed: WorkedFile = toml::from_str(&std::fs::read_to_string(f).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for s in parsed.sale {
            n += 1;
            assert!(!s.working.trim().is_empty() && !s.source.trim().is_empty());
            let what = format!("{state}: {:?}", s.name);
            let zip = s.zip.clone().unwrap_or_else(|| {
                alone
                    .get(&(state.clone(), s.county.clone()))
                    .unwrap_or_else(|| panic!("{what}: no ZIP lies in county {} alone", s.county))
                    .clone()
            });
            let d = s.date.date.unwrap();
            let date = day(i32::from(d.year), u32::from(d.month), u32::from(d.day));
            let loc = t
                .resolve(&at(&zip, s.city.as_deref().unwrap_or("")), date)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let lines: Vec<SaleLine> = s
                .lines
                .iter()
                .map(|l| SaleLine {
                    amount: l.amount.parse::<Decimal>().unwrap() * Decimal::from(100),
                    quantity: 1,
                    per_unit: false,
                    tax_code: t.tax_code(&l.code).unwrap(),
                })
                .collect();
            let calc = t
                .calculate(&loc, &levy_testkit::sale::sale(lines, date))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            for (i, (want, line)) in s.tax.iter().zip(&calc.lines).enumerate() {
                let want = want.parse::<Decimal>().unwrap() * Decimal::from(100);
                if line.tax != want {
                    failures.push(format!(
                        "{what} (ZIP {zip}): line {}: tax {} cents, worked {} ({})",
                        i + 1,
                        line.tax,
                        want.normalize(),
                        s.working
                    ));
                }
                if line.taxability != Taxability::Known {
                    let gaps = t.taxability_gaps(line.tax_code, &line.jurisdictions, date);
                    failures.push(format!(
                        "{what}: line {}: treatment not known: {gaps:?}",
                        i + 1
                    ));
                }
            }
            if s.tax.len() != calc.lines.len() {
                failures.push(format!(
                    "{what}: {} taxes for {} lines",
                    s.tax.len(),
                    calc.lines.len()
                ));
            }
        }
    }
    assert!(n >= 40, "{n} worked local sales");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_county_of_each_new_state_answers_its_rate_and_what_the_answer_covers() {
    let (_, t) = fixture();
    let date = day(2026, 3, 2);
    // (ZIP in one county, cents on $100.00, coverage), each from the county's publication:
    // Miami 33130 in Miami-Dade: Florida 6% + the county's 1% surtax (DR-15DSS for 2026);
    // Florida's file lists every county's surtax, so the answer is FULL.
    // Raleigh 27601 in Wake: 4.75% + 2.5% (NCDOR rates effective July 1, 2024), FULL.
    // Columbus 43215 in Franklin: 5.75% + 2.25% (Ohio's rate change of April 1, 2025),
    // PARTIAL: sub-county transit districts are not in Ohio's file.
    // Pittsburgh 15222 in Allegheny: 6% + 1%, FULL; Harrisburg 17101 in Dauphin, which levies
    // no local tax (61 Pa. Code § 60.16): 6% alone, FULL.
    // Honolulu 96813: 4% + 0.5% county surcharge, PARTIAL (Kalawao's is not established,
    // so Hawaii's file does not claim every county).
    // Fairfax 22030: 4.3% + 1% + 0.7% Northern Virginia, PARTIAL.
    // Nashville 37203 in Davidson: Tennessee's 7% + 2.25% + the 0.5% transit surcharge (the
    // Department's list and Important Notice #24-11); every city of Davidson levies the
    // county's rate, so FULL.
    let cases = [
        ("33130", 700, Coverage::Full),
        ("27601", 725, Coverage::Full),
        ("43215", 800, Coverage::Partial),
        ("15222", 700, Coverage::Full),
        ("17101", 600, Coverage::Full),
        ("96813", 450, Coverage::Partial),
        ("22030", 600, Coverage::Partial),
        ("37203", 975, Coverage::Full),
    ];
    for (zip, cents, coverage) in cases {
        let loc = t.resolve(&at(zip, ""), date).unwrap();
        assert_eq!(on_100(t, &loc, date).0, Decimal::from(cents), "{zip}");
        assert_eq!(
            (loc.coverage, t.place_note(&loc, date)),
            (coverage, PlaceNote::None),
            "{zip}"
        );
    }
}

#[test]
fn a_zip_split_between_counties_answers_what_they_share_and_says_so() {
    let (report, t) = fixture();
    let date = day(2026, 3, 2);
    // 55317 (Chanhassen) lies in Carver (0.5% county transit) and Hennepin (0.15% and its
    // 0.5% transit district): the counties differ, both are in the seven-county metro area:
    // Minnesota's 6.875% with the metro transportation 0.75% and housing 0.25% taxes over
    // both, 7.875% of $100.00 = 7.875, 788 cents; PARTIAL, and the answer says why.
    let loc = t.resolve(&at("55317", ""), date).unwrap();
    assert_eq!(
        on_100(t, &loc, date),
        (
            Decimal::from(788),
            codes(&["27", "27:63:80008", "27:63:80009"])
        )
    );
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (Coverage::Partial, PlaceNote::SplitCounties)
    );
    // 23603 lies in York County (Hampton Roads and the Historic Triangle) and Newport News
    // (Hampton Roads alone): Virginia's 4.3% and Hampton Roads' 0.7% (Va. Code § 58.1-603.1)
    // are certain; each locality's 1% and the Historic Triangle's 1% depend on the address.
    let loc = t.resolve(&at("23603", ""), date).unwrap();
    assert_eq!(
        on_100(t, &loc, date),
        (Decimal::from(500), codes(&["51", "VA:HAMPTON ROADS"]))
    );
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (Coverage::Partial, PlaceNote::SplitCounties)
    );
    // Nothing local in common: 55009 lies in Dakota (metro) and Goodhue (not), 30004 in
    // three Georgia counties of different rates. The honest answer is the state alone,
    // STATE_ONLY (a local tax is due, which one the ZIP does not say): 6.875% and 4%.
    for (zip, cents, state) in [("55009", 688, "27"), ("30004", 400, "13")] {
        let loc = t.resolve(&at(zip, ""), date).unwrap();
        assert_eq!(
            on_100(t, &loc, date),
            (Decimal::from(cents), codes(&[state])),
            "{zip}"
        );
        assert_eq!(
            (loc.coverage, t.place_note(&loc, date)),
            (Coverage::StateOnly, PlaceNote::SplitCounties),
            "{zip}"
        );
    }
    // A county whose rates the build does not hold: 37072 (Goodlettsville) lies in Davidson
    // and Sumner, which Tennessee's file does not list; 37367 in Bledsoe, Cumberland (both
    // listed, 2.25% and 2.75%) and Van Buren (not). Tennessee's 7% alone, STATE_ONLY.
    for zip in ["37072", "37367"] {
        let loc = t.resolve(&at(zip, ""), date).unwrap();
        assert_eq!(
            on_100(t, &loc, date),
            (Decimal::from(700), codes(&["47", "47:SAT"])),
            "{zip}"
        );
        assert_eq!(
            (loc.coverage, t.place_note(&loc, date)),
            (Coverage::StateOnly, PlaceNote::SplitCounties),
            "{zip}"
        );
    }
    // In a state whose file lists every local tax: 15003 lies in Allegheny (1%) and Beaver
    // (none): Pennsylvania's 6% alone, STATE_ONLY, since Allegheny's 1% may be due.
    let loc = t.resolve(&at("15003", ""), date).unwrap();
    assert_eq!(on_100(t, &loc, date), (Decimal::from(600), codes(&["42"])));
    assert_eq!(loc.coverage, Coverage::StateOnly);
    // The build counts them.
    let note = report
        .summary
        .notes
        .iter()
        .find(|n| n.contains("zip-county.csv"))
        .unwrap();
    assert!(
        note.contains("MN ZIPs lie in counties of different rates"),
        "{note}"
    );
    assert!(
        note.contains("hold a district common to all their counties"),
        "{note}"
    );
}

#[test]
fn the_city_the_buyer_names_decides_within_a_zip() {
    let (_, t) = fixture();
    let date = day(2026, 3, 2);
    // Bell 90201 (USPS: Bell Gardens, also Bell and Cudahy). The CDTFA list of 2026-01-01:
    // `Bell,0.0975`, `Bell Gardens,0.105`, `Cudahy,0.105`.
    for (city, cents) in [
        ("Bell", 975),
        ("BELL", 975),
        ("Bell Gardens", 1050),
        ("bell  gardens", 1050),
        ("Cudahy", 1050),
    ] {
        let loc = t.resolve(&at("90201", city), date).unwrap();
        assert_eq!(on_100(t, &loc, date).0, Decimal::from(cents), "{city}");
        assert_eq!(
            (
                loc.coverage,
                t.place_note(&loc, date),
                loc.precision.as_str()
            ),
            (Coverage::Full, PlaceNote::CityNamed, "POSTAL"),
            "{city}"
        );
    }
    // No city, or one the ZIP does not hold: the ZIP's usual place (Bell Gardens), PARTIAL,
    // saying that places of different taxes share it, and which.
    for city in ["", "Downey"] {
        let loc = t.resolve(&at("90201", city), date).unwrap();
        assert_eq!(on_100(t, &loc, date).0, Decimal::from(1050), "{city:?}");
        assert_eq!(
            (loc.coverage, t.place_note(&loc, date)),
            (Coverage::Partial, PlaceNote::SharedPlaces)
        );
        assert_eq!(t.zip_cities(&loc, date), ["BELL", "BELL GARDENS", "CUDAHY"]);
    }
    // Before the CDTFA list (2025), no place of the list is known: the state's answer.
    let before = day(2025, 12, 31);
    let loc = t.resolve(&at("90201", "Bell"), before).unwrap();
    assert_ne!(t.place_note(&loc, date), PlaceNote::CityNamed);
    // Milwaukee: the city's 2% from 2024-01-01 (Wisconsin DOR, Guidance Document 100315:
    // 5% + Milwaukee County 0.9% + city 2% = 7.9%). Named in 53202, which USPS names for
    // Milwaukee alone: 790 cents, FULL.
    let loc = t.resolve(&at("53202", "Milwaukee"), date).unwrap();
    assert_eq!(
        on_100(t, &loc, date),
        (Decimal::from(790), codes(&["55", "55079", "5553000"]))
    );
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (Coverage::Full, PlaceNote::CityNamed)
    );
    // Not named: the state and county, 590 cents, PARTIAL, saying a city tax may apply.
    let loc = t.resolve(&at("53202", ""), date).unwrap();
    assert_eq!(on_100(t, &loc, date).0, Decimal::from(590));
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (Coverage::Partial, PlaceNote::CityNotNamed)
    );
    // Named in 53209, which USPS also names for Glendale, Brown Deer and River Hills: the
    // city's tax, but PARTIAL (a postal name is not a city limit, as the DOR warns).
    let loc = t.resolve(&at("53209", "Milwaukee"), date).unwrap();
    assert_eq!(on_100(t, &loc, date).0, Decimal::from(790));
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (Coverage::Partial, PlaceNote::CityNamed)
    );
    let loc = t.resolve(&at("53209", "Glendale"), date).unwrap();
    assert_eq!(on_100(t, &loc, date).0, Decimal::from(590));
    assert_eq!(t.place_note(&loc, date), PlaceNote::CityNotNamed);
    // Before the city's tax: nothing to name, and nothing said.
    let loc = t
        .resolve(&at("53202", "Milwaukee"), day(2023, 12, 31))
        .unwrap();
    assert_eq!(t.place_note(&loc, day(2023, 12, 31)), PlaceNote::None);
    assert!(!on_100(t, &loc, day(2023, 12, 31)).1.contains("5553000"));
    // The levels Wisconsin's places name include the city now.
    let wi = t
        .data()
        .regions
        .iter()
        .find(|r| &r.country == b"US" && r.region.as_str() == "WI")
        .unwrap();
    assert_ne!(wi.levels & (1 << levy_core::Level::City as u8), 0);
}

#[test]
fn the_named_city_decides_on_any_table_with_the_cdtfa_list() {
    // The CDTFA list alone, without curated rules or anything else: still Bell and Bell
    // Gardens by name.
    let report = build(&BuildOptions {
        inputs: vec![Input::new(
            InputKind::Cdtfa,
            local().join("ca-cdtfa-1-1-26.csv"),
        )],
        curated: None,
        strict: true,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    })
    .unwrap();
    let t = Table::open(report.bytes).unwrap();
    let date = day(2026, 3, 2);
    for (city, cents) in [("Bell", 975), ("Bell Gardens", 1050)] {
        let loc = t.resolve(&at("90201", city), date).unwrap();
        assert_eq!(on_100(&t, &loc, date).0, Decimal::from(cents), "{city}");
        assert_eq!(t.place_note(&loc, date), PlaceNote::CityNamed);
    }
}

#[test]
fn every_local_rate_carries_its_publication_into_the_manifest() {
    let (_, t) = fixture();
    let d = t.data();
    let manifest =
        |rule: &levy_core::model::ArchivedRuleRecord| &d.manifest[rule.source.to_native() as usize];
    let county = |code: &str| {
        let j = (0..t.jurisdiction_count() as u32)
            .find(|&j| t.jurisdiction(levy_core::JurisdictionId(j)).unwrap().code() == code)
            .unwrap_or_else(|| panic!("no jurisdiction {code}"));
        d.rules.iter().filter(move |r| {
            r.jurisdiction.to_native() == j
                && r.tax_code.to_native() == t.tax_code("GENERAL_MERCHANDISE").unwrap().0
        })
    };
    // Miami-Dade's rules: FL.toml, the file's own publication (Form DR-15DSS).
    for r in county("12086") {
        let e = manifest(r);
        assert_eq!(
            (e.kind.as_str(), e.name.as_str()),
            ("local-rates", "FL.toml")
        );
        assert!(
            e.publication.as_str().contains("DR-15DSS"),
            "{:?}",
            e.publication
        );
        assert_eq!(e.sha256.len(), 64);
        // Florida's surtax on the first $5,000 of an item (s. 212.054(2)(b)1., F.S.).
        assert_eq!(
            levy_core::Decimal::deserialize(r.base_max),
            Decimal::from(5000)
        );
    }
    // Hawaii County's rules name the county's own publication.
    let hawaii: Vec<_> = county("15001").collect();
    assert!(!hawaii.is_empty());
    for r in hawaii {
        assert!(manifest(r)
            .publication
            .as_str()
            .starts_with("County of Hawaii"));
    }
    // Every rule of a local rates file's jurisdiction names a publication.
    for r in d.rules.iter() {
        let e = manifest(r);
        if e.kind.as_str() == "local-rates" {
            assert!(!e.publication.as_str().is_empty());
        }
    }
}

#[test]
fn a_local_rates_file_that_breaks_its_grammar_fails_the_build_naming_file_and_key() {
    let dir = levy_testkit::target_temp_dir!("levy-build-local-bad");
    let text = std::fs::read_to_string(local().join("us/PA.toml"))
        .unwrap()
        .replacen("rate = \"1%\"", "rate = \"0.01\"", 1);
    std::fs::write(dir.join("PA.toml"), text).unwrap();
    let Err(e) = build_with(vec![Input::new(InputKind::LocalRates, dir.join("PA.toml"))]) else {
        panic!("a rate written as a fraction was accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("PA.toml") && e.contains("county[0].rates[0].rate"),
        "{e}"
    );
}

/// Names reach a table without their control characters, whatever the input's format (a
/// local rates file's TOML, a ZIP5 table's CSV): `ESC [2J`, a carriage return and a bell
/// in a county name would clear a terminal and print a false line where `levy calc` or
/// `levy info` shows the name. A name longer than `parse::MAX_NAME` (100) characters is
/// refused, never cut, naming its file and row.
#[test]
fn names_lose_their_control_characters_and_a_long_one_is_refused_naming_its_row() {
    let dir = levy_testkit::target_temp_dir!("levy-build-local-names");
    let local_rates = |county: &str| {
        format!(
            "state = \"TN\"\nsource = \"Tennessee Department of Revenue\"\nas_of = 2026-01-01\n\
             [[county]]\nfips = \"037\"\nname = \"{county}\"\nlabel = \"LOCAL\\u0007 SALES TAX\"\n\
             rates = [ {{ rate = \"2.25%\", from = 2024-01-01 }} ]\n"
        )
    };
    std::fs::write(
        dir.join("TN.toml"),
        local_rates("\\u001B[2J\\rDAVIDSON\\u0007\\u009B"),
    )
    .unwrap();
    let zip5 = dir.join("TAXRATES_ZIP5_TN202512.csv");
    std::fs::write(
        &zip5,
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n\
         TN,37203,\"\u{1b}[2JNASH\rVILLE\u{7}\",0.092500,0.070000,0.022500,0.000000,0.000000,0\n",
    )
    .unwrap();
    let opts = |inputs: Vec<Input>| BuildOptions {
        inputs,
        curated: None,
        strict: true,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    };
    let report = build(&opts(vec![
        Input::new(InputKind::Zip5, &zip5),
        Input::new(InputKind::LocalRates, dir.join("TN.toml")),
    ]))
    .unwrap();
    let t = Table::open(report.bytes).unwrap();
    let jurisdictions: Vec<(String, String)> = (0..t.jurisdiction_count() as u32)
        .map(|j| t.jurisdiction(levy_core::JurisdictionId(j)).unwrap())
        .map(|j| (j.code().to_string(), j.name().to_string()))
        .collect();
    // The county of the local rates file (state FIPS 47, county 037), and the ZIP5 file's
    // county-level jurisdiction, named by its TaxRegionName.
    assert!(
        jurisdictions.contains(&("47037".into(), "[2JDAVIDSON".into())),
        "{jurisdictions:?}"
    );
    assert!(
        jurisdictions
            .iter()
            .any(|(code, name)| code.starts_with("47:COUNTY:") && name == "[2JNASHVILLE"),
        "{jurisdictions:?}"
    );
    for (code, name) in &jurisdictions {
        assert!(
            !code.chars().chain(name.chars()).any(char::is_control),
            "{code:?} {name:?}"
        );
    }
    // The label is the rules' rate type: without its bell too.
    let rate_types: BTreeSet<&str> = t
        .data()
        .rules
        .iter()
        .map(|r| r.rate_type.as_str())
        .collect();
    assert!(rate_types.contains("LOCAL SALES TAX"), "{rate_types:?}");

    // A 1 MB county name is refused, naming the file and the key, and not echoed whole.
    std::fs::write(dir.join("TN.toml"), local_rates(&"D".repeat(1 << 20))).unwrap();
    let Err(e) = build(&opts(vec![Input::new(
        InputKind::LocalRates,
        dir.join("TN.toml"),
    )])) else {
        panic!("a 1 MB name was accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("TN.toml") && e.contains("county[0].name") && e.contains("1048576 characters"),
        "{e}"
    );
    assert!(e.len() < 400, "{} bytes", e.len());
    // 101 characters are refused; 100 are read.
    std::fs::write(dir.join("TN.toml"), local_rates(&"D".repeat(101))).unwrap();
    assert!(build(&opts(vec![Input::new(
        InputKind::LocalRates,
        dir.join("TN.toml")
    )]))
    .is_err());
    std::fs::write(dir.join("TN.toml"), local_rates(&"D".repeat(100))).unwrap();
    build(&opts(vec![Input::new(
        InputKind::LocalRates,
        dir.join("TN.toml"),
    )]))
    .unwrap();
    // A ZIP5 row's 101-character TaxRegionName: a bad row, named by its line.
    std::fs::write(
        &zip5,
        format!(
            "{}\nTN,37203,{},0.092500,0.070000,0.022500,0.000000,0.000000,0\n",
            levy_build::parse::ZIP5_HEADER.join(","),
            "N".repeat(101)
        ),
    )
    .unwrap();
    let Err(e) = build(&opts(vec![Input::new(InputKind::Zip5, &zip5)])) else {
        panic!("a 101-character TaxRegionName was accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("TAXRATES_ZIP5_TN202512.csv:2") && e.contains("TaxRegionName"),
        "{e}"
    );
}

/// A ZIP5 file's rows for ZIPs the census puts wholly in counties Tennessee's file holds
/// every local tax of, as published in the December 2025 file of `../shared/data`: Nashville
/// without Davidson's transit surcharge, two Anderson County ZIPs at its 2.75%, and 37705,
/// which lies in Anderson and Union (a county the file does not reach).
const TN_ZIP5: &str = "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel
TN,37203,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0
TN,37705,NORRIS,0.097500,0.070000,0.027500,0.000000,0.000000,0
TN,37710,ANDERSON,0.097500,0.070000,0.027500,0.000000,0.000000,0
TN,37716,NORRIS,0.097500,0.070000,0.027500,0.000000,0.000000,0
";

#[test]
fn the_counties_own_rates_replace_a_zip5_estimate_whatever_the_order_and_say_where_they_differ() {
    let dir = levy_testkit::target_temp_dir!("levy-build-local-zip5");
    let zip5 = dir.join("TAXRATES_ZIP5_TN202512.csv");
    std::fs::write(&zip5, TN_ZIP5).unwrap();
    let first = {
        let mut inputs = vec![Input::new(InputKind::Zip5, zip5.clone())];
        inputs.extend(default_inputs());
        inputs
    };
    let last = {
        let mut inputs = default_inputs();
        inputs.push(Input::new(InputKind::Zip5, zip5.clone()));
        inputs
    };
    let date = day(2025, 12, 15);
    for (order, inputs) in [("ZIP5 first", first), ("ZIP5 last", last)] {
        let report = build_with(inputs).expect("builds");
        let t = Table::open(report.bytes.clone()).unwrap();
        // Nashville 37203, in Davidson alone: 7% + Davidson's 2.25% + the 0.5% transit
        // surcharge from 2025-02-01 (Important Notice #24-11) = 9.75% on $100.00, where the
        // estimate says 9.25%. The two disagree, so the answer is PARTIAL.
        let loc = t.resolve(&at("37203", ""), date).unwrap();
        let (cents, js) = on_100(&t, &loc, date);
        assert_eq!(cents, Decimal::from(975), "{order}");
        assert!(js.contains("TN:DAVIDSON TRANSIT"), "{order}: {js:?}");
        assert_eq!(loc.coverage, Coverage::Partial, "{order}");
        // 37710 and Norris 37716, in Anderson alone: 7% + 2.75% (the Department's list, Jul
        // 2006), as the estimate says too: FULL.
        for zip in ["37710", "37716"] {
            let loc = t.resolve(&at(zip, ""), date).unwrap();
            assert_eq!(
                on_100(&t, &loc, date).0,
                Decimal::from(975),
                "{order} {zip}"
            );
            let js = on_100(&t, &loc, date).1;
            assert!(js.contains("47001"), "{order} {zip}: {js:?}");
            assert_eq!(loc.coverage, Coverage::Full, "{order} {zip}");
        }
        // Norris 37705 also lies in Union County, whose rate the build does not hold: the
        // estimate stands (9.75%, its own county jurisdiction).
        let loc = t.resolve(&at("37705", ""), date).unwrap();
        let (cents, js) = on_100(&t, &loc, date);
        assert_eq!(cents, Decimal::from(975), "{order}");
        assert!(js.contains("47:COUNTY:NORRIS:0.0275"), "{order}: {js:?}");
        let s = &report.summary;
        assert!(
            s.conflicts
                .iter()
                .any(|c| c.kind == levy_build::ConflictKind::ZipReassigned
                    && c.detail.starts_with("ZIP 37203 TN 2025-12-01..")),
            "{order}: the replaced estimate is listed"
        );
        assert!(
            s.notes.iter().any(|n| n.contains("1 estimates differed")
                && n.contains("37203 TN from 2025-12-01: 0.0925 -> 0.0975")),
            "{order}: {:?}",
            s.notes
        );
    }
}
