//! Worked sales: for every place of the taxability matrix, sales whose tax was worked out by
//! hand from the primary source each names (the statute, regulation or revenue
//! department page), at least one for each class of product the place treats differently
//! from its general rate, and one on each side of every dated change from 2025 on; and the
//! holidays of `data/holidays.toml`, inside and outside each. The expected taxes are in
//! `tests/worked/` with the arithmetic (`working`) and the source of each; they are never
//! read from the data under test.
//!
//! Each sale is calculated on a table built from the repository's curated data (`data/`)
//! with one ZIP code per US state holding the state alone, and, for a sale with a
//! `local_rate`, a ZIP code of the state with one county that taxes general merchandise at
//! that rate (so a sale also checks the state's local treatment of its codes). Canadian
//! sales resolve a postal code of their province; other countries' sales the country.
//! Every line's treatment must be known in the matrix, and its tax, rounded half up on its
//! own, must be the worked one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use levy_build::curated;
use levy_core::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedFile {
    place: Option<String>,
    currency: Option<String>,
    #[serde(default)]
    sale: Vec<WorkedSale>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedSale {
    name: String,
    place: Option<String>,
    date: toml::value::Datetime,
    lines: Vec<WorkedLine>,
    tax: Vec<String>,
    local_rate: Option<String>,
    currency: Option<String>,
    working: String,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkedLine {
    code: String,
    amount: String,
    quantity: Option<u32>,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn worked_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/worked")
}

/// A postal code of each Canadian province and territory (Canada Post), for resolving.
const CA_POSTAL: &[(&str, &str)] = &[
    ("AB", "T5J 0N3"),
    ("BC", "V6B 1A1"),
    ("MB", "R3C 0A1"),
    ("NB", "E1C 4M3"),
    ("NL", "A1C 5M2"),
    ("NS", "B3H 1A1"),
    ("NT", "X1A 2L9"),
    ("NU", "X0A 0H0"),
    ("ON", "M5V 2T6"),
    ("PE", "C1A 4P3"),
    ("QC", "H2Y 1C6"),
    ("SK", "S4P 3Y2"),
    ("YT", "Y1A 2C6"),
];

/// Every sale of every file, with the file it came from and its place and currency.
fn sales() -> Vec<(String, String, Option<String>, WorkedSale)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for folder in ["us", "ca", "intl"] {
        let dir = worked_dir().join(folder);
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        names.sort();
        files.extend(names);
    }
    files.push(worked_dir().join("holidays.toml"));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let parsed: WorkedFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f
            .strip_prefix(worked_dir())
            .unwrap_or(&f)
            .display()
            .to_string();
        for s in parsed.sale {
            let place = s
                .place
                .clone()
                .or_else(|| parsed.place.clone())
                .unwrap_or_else(|| panic!("{name}: {:?} names no place", s.name));
            let currency = s.currency.clone().or_else(|| parsed.currency.clone());
            out.push((name.clone(), place, currency, s));
        }
    }
    out
}

fn rate(s: &str) -> Decimal {
    let p: Decimal = s.trim().trim_end_matches('%').parse().unwrap();
    p / Decimal::from(100)
}

/// The test table: the curated data, one ZIP per US state holding the state alone
/// (numbered from 10) and one per (state, county rate) the sales ask for (from 90000).
struct Fixture {
    table: Table<AlignedBytes>,
    state_zip: BTreeMap<String, u32>,
    county_zip: BTreeMap<(String, String), u32>,
}

fn fixture(sales: &[(String, String, Option<String>, WorkedSale)]) -> Fixture {
    let c = curated::load(&data_dir()).unwrap();
    let mut b = TableBuilder::new();
    c.apply_base(&mut b).unwrap();
    let states: Vec<(String, String, String)> = c
        .us_states()
        .map(|(a, f, n)| (a.to_string(), f.to_string(), n.to_string()))
        .collect();
    let mut state_zip = BTreeMap::new();
    for (i, (abbr, fips, name)) in states.iter().enumerate() {
        let zip = 10 + i as u32;
        let j = b.find_jurisdiction(fips).unwrap();
        b.zip(zip, abbr, name, &[j], 0).unwrap();
        state_zip.insert(abbr.clone(), zip);
    }
    let mut county_zip = BTreeMap::new();
    for (_, place, _, s) in sales {
        let (Some(abbr), Some(local)) = (place.strip_prefix("US-"), &s.local_rate) else {
            continue;
        };
        let key = (abbr.to_string(), local.clone());
        if county_zip.contains_key(&key) {
            continue;
        }
        let (_, fips, name) = states.iter().find(|(a, _, _)| a == abbr).unwrap();
        let state = b.find_jurisdiction(fips).unwrap();
        let county = b
            .jurisdiction(JurisdictionSpec {
                code: format!("{fips}:TEST COUNTY:{local}"),
                name: format!("TEST COUNTY {local}"),
                level: Level::County,
                country: "US".into(),
                region: abbr.to_string(),
                authority: format!("{name} TEST COUNTY"),
                tax_type: TaxType::Sales,
            })
            .unwrap();
        b.rule(RuleSpec::flat(
            county,
            "GENERAL_MERCHANDISE",
            rate(local),
            Date::MIN,
            Date::MAX,
            "TEST COUNTY SALES TAX",
        ))
        .unwrap();
        let zip = 90_000 + county_zip.len() as u32;
        b.zip(zip, abbr, "TEST", &[state, county], 0).unwrap();
        county_zip.insert(key, zip);
    }
    c.apply_rules(&mut b).unwrap();
    let table = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    Fixture {
        table,
        state_zip,
        county_zip,
    }
}

fn address(fx: &Fixture, place: &str, local: Option<&String>) -> Address {
    let (country, region) = place.split_once('-').unwrap_or((place, ""));
    let postal = match (country, local) {
        ("US", Some(l)) => format!("{:05}", fx.county_zip[&(region.to_string(), l.clone())]),
        ("US", None) => format!("{:05}", fx.state_zip[region]),
        ("CA", _) if !region.is_empty() => CA_POSTAL
            .iter()
            .find(|(p, _)| *p == region)
            .map(|(_, code)| code.to_string())
            .unwrap_or_else(|| panic!("no postal code for {place}")),
        _ => String::new(),
    };
    Address {
        postal_code: postal,
        region: if country == "CA" {
            region.to_string()
        } else {
            String::new()
        },
        country: country.to_string(),
        ..Default::default()
    }
}

fn day(d: &toml::value::Datetime) -> Date {
    let d = d.date.unwrap();
    Date::from_ymd(i32::from(d.year), u32::from(d.month), u32::from(d.day)).unwrap()
}

/// One sale's failures, empty when it is calculated as worked.
fn check(
    fx: &Fixture,
    file: &str,
    place: &str,
    currency: Option<&str>,
    s: &WorkedSale,
) -> Vec<String> {
    let t = &fx.table;
    let what = format!("{file}: {:?}", s.name);
    let date = day(&s.date);
    let country = place.split('-').next().unwrap();
    let currency = currency.unwrap_or(match country {
        "US" => "USD",
        "CA" => "CAD",
        _ => "EUR",
    });
    let currency = Currency::from_code(currency).unwrap();
    let location = match t.resolve(&address(fx, place, s.local_rate.as_ref()), date) {
        Ok(l) => l,
        Err(e) => return vec![format!("{what}: {e}")],
    };
    let mut lines = Vec::new();
    for l in &s.lines {
        let Some(code) = t.tax_code(&l.code) else {
            return vec![format!("{what}: unknown tax code {}", l.code)];
        };
        let major: Decimal = l.amount.parse().unwrap();
        lines.push(SaleLine {
            amount: currency.to_minor(major),
            quantity: l.quantity.unwrap_or(1),
            per_unit: false,
            tax_code: code,
        });
    }
    let sale = Sale {
        currency,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: Rounding::Line,
        lines,
    };
    let calc = match t.calculate(&location, &sale) {
        Ok(c) => c,
        Err(e) => return vec![format!("{what}: {e}")],
    };
    let mut failures = Vec::new();
    if s.tax.len() != calc.lines.len() {
        failures.push(format!(
            "{what}: {} taxes for {} lines",
            s.tax.len(),
            calc.lines.len()
        ));
        return failures;
    }
    for (i, (want, line)) in s.tax.iter().zip(&calc.lines).enumerate() {
        let want: Decimal = want.parse().unwrap();
        let got = currency.to_major(line.tax);
        if got != want {
            failures.push(format!(
                "{what}: line {} ({}): tax {got}, worked {want} ({})",
                i + 1,
                s.lines[i].code,
                s.working
            ));
        }
        if line.taxability != Taxability::Known {
            let gaps = t.taxability_gaps(line.tax_code, &line.jurisdictions, date);
            failures.push(format!(
                "{what}: line {} ({}): treatment not known in the matrix: {gaps:?}",
                i + 1,
                s.lines[i].code
            ));
        }
    }
    failures
}

#[test]
fn every_worked_sale_is_calculated_as_worked_from_its_source() {
    let sales = sales();
    assert!(sales.len() > 500, "{} worked sales", sales.len());
    for (file, _, _, s) in &sales {
        assert!(
            !s.working.trim().is_empty() && !s.source.trim().is_empty(),
            "{file}: {:?} says how it was worked and from what",
            s.name
        );
    }
    let fx = fixture(&sales);
    let mut failures = Vec::new();
    for (file, place, currency, s) in &sales {
        failures.extend(check(&fx, file, place, currency.as_deref(), s));
    }
    assert!(
        failures.is_empty(),
        "{} of {} worked sales differ:\n{}",
        failures.len(),
        sales.len(),
        failures.join("\n")
    );
}

#[test]
fn every_place_of_the_matrix_has_worked_sales() {
    let sales = sales();
    let places: std::collections::BTreeSet<&str> =
        sales.iter().map(|(_, p, _, _)| p.as_str()).collect();
    let matrix = data_dir().join("taxability");
    for folder in ["us", "ca", "intl"] {
        for e in std::fs::read_dir(matrix.join(folder)).unwrap() {
            let path = e.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let place = match folder {
                "us" => format!("US-{stem}"),
                // The federal cells are tested in Alberta, which has the GST alone.
                "ca" if stem == "CA" => "CA-AB".to_string(),
                "ca" => format!("CA-{stem}"),
                _ => stem,
            };
            assert!(
                places.contains(place.as_str()),
                "no worked sale for {place}"
            );
        }
    }
}

/// A place's needed levels: both in a US state with local taxes and where the state has
/// none at all, the state's own; the province's own in Canada (federal in `CA.toml`); the
/// country's elsewhere.
fn needed(folder: &str, stem: &str, no_local: &[String]) -> Vec<TaxabilityLevels> {
    match folder {
        "us" if no_local.iter().any(|s| s == stem) => vec![TaxabilityLevels::UPPER],
        "us" => vec![TaxabilityLevels::UPPER, TaxabilityLevels::LOWER],
        "ca" if stem == "CA" => vec![TaxabilityLevels::UPPER],
        "ca" => vec![TaxabilityLevels::LOWER],
        _ => vec![TaxabilityLevels::UPPER],
    }
}

#[test]
fn every_place_addresses_every_matrix_code_at_every_level_it_needs() {
    // A code a place's file does not name is a silent gap: the file must name every code
    // of the matrix at each level (as `unknown`, with a note, when its treatment is not
    // established), so that what is not known is written down.
    let table = levy_data_free_table();
    let no_local: Vec<String> = std::fs::read_to_string(data_dir().join("us-local-taxes.toml"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("abbr = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect();
    let codes: Vec<TaxCodeId> = (0..table.tax_code_count() as u32)
        .map(TaxCodeId)
        .filter(|&c| table.tax_code_in_matrix(c))
        .collect();
    assert!(codes.len() >= 69, "{} matrix codes", codes.len());
    let mut missing = Vec::new();
    for folder in ["us", "ca", "intl"] {
        for e in std::fs::read_dir(data_dir().join("taxability").join(folder)).unwrap() {
            let stem = e
                .unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let (country, region) = match folder {
                "us" => ("US".to_string(), stem.clone()),
                "ca" if stem == "CA" => ("CA".to_string(), String::new()),
                "ca" => ("CA".to_string(), stem.clone()),
                _ => (stem.clone(), String::new()),
            };
            for level in needed(folder, &stem, &no_local) {
                for &code in &codes {
                    let named = table
                        .taxability_cells_for(&country, &region, code, None)
                        .iter()
                        .any(|c| c.levels().contains(level));
                    if !named {
                        missing.push(format!(
                            "{folder}/{stem} {} {}",
                            level.name(&country),
                            table.tax_code_name(code).unwrap()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} gaps:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The curated data alone, compiled.
fn levy_data_free_table() -> Table<AlignedBytes> {
    let c = curated::load(&data_dir()).unwrap();
    let mut b = TableBuilder::new();
    c.apply_base(&mut b).unwrap();
    c.apply_rules(&mut b).unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

#[test]
fn every_cell_names_a_source_and_an_as_of_date() {
    // Every cell of every file carries both; the reader refuses a cell without either,
    // naming the file and the cell.
    let table = levy_data_free_table();
    let mut n = 0;
    for c in table.taxability_cells() {
        assert!(
            !c.source().trim().is_empty(),
            "{} {:?}",
            c.place(),
            c.label()
        );
        assert!(
            c.as_of() > Date::from_ymd(2020, 1, 1).unwrap(),
            "{}",
            c.place()
        );
        if c.treatment() == Treatment::Unknown {
            assert!(
                !c.note().trim().is_empty(),
                "an unknown cell of {} says why",
                c.place()
            );
        }
        n += 1;
    }
    assert!(n > 1_000, "{n} cells");
    let dir = data_dir();
    let path = "taxability/us/TN.toml";
    let text = std::fs::read_to_string(dir.join(path)).unwrap();
    for (cut, what) in [
        (text.replacen("source = ", "# source = ", 1), "source"),
        (text.replacen("as_of = ", "# as_of = ", 1), "as_of"),
    ] {
        assert_ne!(cut, text);
        let e = parse_with(path, &cut).unwrap_err().to_string();
        assert!(e.starts_with(path) && e.contains(what), "{e}");
    }
}

/// The curated files with one matrix file replaced by `text`.
fn parse_with(path: &str, text: &str) -> Result<curated::Curated, curated::CuratedError> {
    let dir = data_dir();
    let files: Vec<String> = curated::FILES
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .collect();
    let matrix = [(path, text)];
    curated::Curated::from_strs(&curated::CuratedText {
        taxonomy: &files[0],
        us_states: &files[1],
        us_rules: &files[2],
        holidays: &files[3],
        countries: &files[4],
        canada: &files[5],
        taxability: &matrix,
    })
}

#[test]
fn a_matrix_file_that_breaks_its_grammar_is_refused_naming_the_file_and_cell() {
    let path = "taxability/us/TN.toml";
    let base = std::fs::read_to_string(data_dir().join(path)).unwrap();
    let cases: &[(&str, &str)] = &[
        ("level = \"all\"", "level = \"county\""),
        ("treatment = \"taxable\"", "treatment = \"free\""),
        ("place = \"US-TN\"", "place = \"US-TX\""),
    ];
    for (from, to) in cases {
        let cut = base.replacen(from, to, 1);
        assert_ne!(cut, base, "{from}");
        let e = parse_with(path, &cut).unwrap_err().to_string();
        assert!(e.starts_with(path), "{e}");
    }
    // A code the taxonomy lacks, and one given twice on the same days at one level.
    let bad = format!("{base}\n[[cell]]\ncodes = [\"NOT_A_CODE\"]\nlevel = \"all\"\ntreatment = \"exempt\"\nsource = \"x\"\nas_of = 2026-11-26\n");
    let e = parse_with(path, &bad).unwrap_err().to_string();
    assert!(e.contains("NOT_A_CODE"), "{e}");
    let twice = format!("{base}\n[[cell]]\ncodes = [\"CANDY\"]\nlevel = \"all\"\ntreatment = \"exempt\"\nsource = \"x\"\nas_of = 2026-11-26\n");
    let e = parse_with(path, &twice).unwrap_err().to_string();
    assert!(e.contains("CANDY") && e.contains("same days"), "{e}");
    // A path that names no place.
    let e = parse_with("taxability/us/XX.toml", &base)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("taxability/us/XX.toml"), "{e}");
    let _ = Path::new(path);
}

#[test]
fn levy_diff_shows_a_changed_treatment_with_its_place_code_and_days() {
    // Tennessee's 4% state rate on food and food ingredients (Tenn. Code Ann. 67-6-228)
    // changed to 3% in a copy of its file: the diff names the place, the codes, the level
    // and the days, before and after, and nothing else of the matrix.
    let path = "taxability/us/TN.toml";
    let text = std::fs::read_to_string(data_dir().join(path)).unwrap();
    let changed = text.replacen("rate = \"4%\"", "rate = \"3%\"", 1);
    assert_ne!(changed, text);
    let build = |c: curated::Curated| {
        let mut b = TableBuilder::new();
        c.apply_base(&mut b).unwrap();
        c.apply_rules(&mut b).unwrap();
        Table::from_bytes(&b.build(0).unwrap()).unwrap()
    };
    let old = build(parse_with(path, &text).unwrap());
    let new = build(parse_with(path, &changed).unwrap());
    let d = levy_build::diff(&old, &new);
    assert!(!d.taxability.is_empty());
    for t in &d.taxability {
        assert_eq!(
            (t.place.as_str(), t.level.as_str()),
            ("US-TN", "state"),
            "{t:?}"
        );
        assert_eq!(t.interval, "2017-07-01..-", "{t:?}");
        assert!(t.old.as_deref().unwrap().starts_with("rate: 4%"), "{t:?}");
        assert!(t.new.as_deref().unwrap().starts_with("rate: 3%"), "{t:?}");
    }
    let codes: Vec<&str> = d.taxability.iter().map(|t| t.tax_code.as_str()).collect();
    assert!(codes.contains(&"GROCERIES"), "{codes:?}");
    assert!(d
        .to_text()
        .contains("~ taxability US-TN GROCERIES state 2017-07-01..-: rate: 4%"));
    // The rules changed with it: the state's food rule is 3% from 2017-07-01.
    assert!(d
        .rules
        .iter()
        .any(|r| r.jurisdiction == "47" && r.tax_code == "GROCERIES"));
}
