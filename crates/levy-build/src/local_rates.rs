//! The local rates files of `data/local/us/<ST>.toml` (`levy build --local-rates`): a
//! state's county rates, the districts over several counties and the city taxes a county
//! cannot place, each with its dated rates and the publication they come from.
//!
//! The grammar is in each file's header and in `data/README.md`; in brief:
//!
//! ```toml
//! state = "FL"                     # USPS abbreviation
//! source = "Florida Department of Revenue, Form DR-15DSS ..."
//! as_of = 2026-11-26
//! single_item_cap = "5000"         # optional: local taxes on the first $5,000 of an item
//! complete = true                  # optional: every local sales tax of the state is here
//!
//! [[county]]                       # a county, or a county-equivalent (Virginia's cities)
//! fips = "086"
//! name = "MIAMI-DADE"
//! label = "DISCRETIONARY SALES SURTAX"
//! rates = [ { rate = "1%", from = 2024-01-01 } ]
//! complete = true                  # optional: no city of the county levies beyond it
//! source = "..."                   # optional, when not the file's
//! note = "..."                     # optional
//!
//! [[district]]                     # a tax over several counties, on top of theirs
//! code = "VA:HAMPTON ROADS"        # or, instead of code and rates, the SST rate file's
//! name = "..."                     #   jurisdiction: sst = "63:80008"
//! counties = ["093", "095"]
//! rates = [ { rate = "0.7%", from = 2013-07-01 } ]
//! source = "..."
//!
//! [[city]]                         # a city tax an address brings by naming the city
//! name = "MILWAUKEE"
//! counties = ["079", "131", "133"]
//! sst = "01:53000"                 # or fips = "53000" and rates = [...]
//! complete = true                  # optional: with the city named, nothing else applies
//! source = "..."
//! ```
//!
//! Names, labels and district codes lose their control characters and are at most
//! [`crate::parse::MAX_NAME`] (100) characters, as every input's names ([`crate::parse::name`]):
//! a longer one is refused, naming the key (`county[3].name`); sources and notes lose their
//! control characters.
//!
//! [`parse`] reads and checks a file; every error names the file and the key, and nothing
//! here panics on any input. The build (`compile/local_rates.rs`) turns it into
//! jurisdictions and rules.

use std::collections::BTreeSet;

use levy_core::{Date, Decimal};
use serde::Deserialize;

use crate::curated::{amount, date, invalid, nonempty, parse_toml, percent, CuratedError};

/// The folder of the local rates files in the repository's `data/`.
pub const DIR: &str = "local/us";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRow {
    state: String,
    source: String,
    as_of: toml::value::Datetime,
    single_item_cap: Option<String>,
    #[serde(default)]
    complete: bool,
    #[serde(default)]
    county: Vec<CountyRow>,
    #[serde(default)]
    district: Vec<DistrictRow>,
    #[serde(default)]
    city: Vec<CityRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateRow {
    rate: String,
    from: toml::value::Datetime,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountyRow {
    fips: String,
    name: String,
    label: String,
    rates: Vec<RateRow>,
    #[serde(default)]
    complete: bool,
    source: Option<String>,
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DistrictRow {
    code: Option<String>,
    sst: Option<String>,
    name: String,
    label: Option<String>,
    counties: Vec<String>,
    rates: Option<Vec<RateRow>>,
    source: String,
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CityRow {
    name: String,
    fips: Option<String>,
    sst: Option<String>,
    label: Option<String>,
    counties: Vec<String>,
    rates: Option<Vec<RateRow>>,
    #[serde(default)]
    complete: bool,
    source: String,
    note: Option<String>,
}

/// A rate in force from `from` to `to` (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// First day.
    pub from: Date,
    /// Last day (inclusive); [`Date::MAX`] for the chain's open-ended last rate.
    pub to: Date,
    /// The rate as a fraction (0.015 for 1.5%).
    pub rate: Decimal,
}

/// Where a district's or city's rates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rates {
    /// Written in the file, oldest first.
    Chain(Vec<Rate>),
    /// The rows an SST rate file of the build gives the jurisdiction of this type (`63` a
    /// special district, `01` a city) and code, in the state.
    Sst {
        /// The SST jurisdiction type.
        jtype: String,
        /// The SST jurisdiction code.
        code: String,
    },
}

/// A county (or county-equivalent) and its county-level rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct County {
    /// Three-digit county FIPS code.
    pub fips: String,
    /// Name, upper case.
    pub name: String,
    /// The tax's name as the state calls it: the rate type of its rules.
    pub label: String,
    /// The rate chain.
    pub rates: Vec<Rate>,
    /// Whether the county's rate and its districts' are every local sales tax of an address
    /// in the county (its cities levy nothing beyond them).
    pub complete: bool,
    /// The publication the rates come from, when not the file's.
    pub source: Option<String>,
    /// What the rate does and does not include.
    pub note: String,
}

/// A tax levied over several counties, on top of each county's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct District {
    /// The jurisdiction code: the file's `<ST>:<NAME>`, or the SST file's
    /// `<state FIPS>:<type>:<code>` for [`Rates::Sst`] (filled when compiled).
    pub code: Option<String>,
    /// Name, upper case.
    pub name: String,
    /// The rate type of its rules (`SPECIAL DISTRICT SALES TAX` when the file gives none).
    pub label: String,
    /// The three-digit FIPS codes of the counties it covers.
    pub counties: Vec<String>,
    /// Its rates.
    pub rates: Rates,
    /// The publication its rates and counties come from.
    pub source: String,
    /// What it does and does not include.
    pub note: String,
}

/// A city tax that a county cannot place: it applies to an address that names the city.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct City {
    /// The city's name as an address writes it, upper case.
    pub name: String,
    /// The city's five-digit place FIPS code (its jurisdiction is `<state FIPS><place>`).
    pub fips: String,
    /// The rate type of its rules (`CITY SALES TAX` when the file gives none).
    pub label: String,
    /// The three-digit FIPS codes of the counties the city lies in.
    pub counties: Vec<String>,
    /// Its rates.
    pub rates: Rates,
    /// Whether, with the city named and its county known, the state, the county, the
    /// county's districts and the city are every sales tax of the address.
    pub complete: bool,
    /// The publication its rates and counties come from.
    pub source: String,
    /// What it does and does not include.
    pub note: String,
}

/// One state's local rates file, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalRates {
    /// USPS abbreviation of the state.
    pub state: String,
    /// The state's two-digit FIPS code.
    pub state_fips: String,
    /// The publication the rates come from.
    pub source: String,
    /// The day the rates were last checked against it.
    pub as_of: Date,
    /// The local taxes apply to at most this much of a single item's price.
    pub single_item_cap: Option<Decimal>,
    /// Whether every local sales tax of the state is in the file: a county it does not
    /// list levies none.
    pub complete: bool,
    /// The counties, in file order.
    pub counties: Vec<County>,
    /// The districts, in file order.
    pub districts: Vec<District>,
    /// The cities, in file order.
    pub cities: Vec<City>,
}

impl LocalRates {
    /// Every publication the file names (the file's own first, then the others in order of
    /// appearance, each once).
    pub fn publications(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![self.source.as_str()];
        let others = self
            .counties
            .iter()
            .filter_map(|c| c.source.as_deref())
            .chain(self.districts.iter().map(|d| d.source.as_str()))
            .chain(self.cities.iter().map(|c| c.source.as_str()));
        for s in others {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

/// Reads and checks the local rates file `file` (its name, for messages: `FL.toml`).
pub fn parse(file: &str, text: &str) -> Result<LocalRates, CuratedError> {
    let row: FileRow = parse_toml(file, text)?;
    let Some((state_fips, _)) = crate::states::by_abbr(&row.state) else {
        return Err(invalid(
            file,
            "state",
            format!("{:?} is not a US state's abbreviation", row.state),
        ));
    };
    // A file named for a state (`FL.toml`) speaks for that state.
    if let Some(stem) = file.strip_suffix(".toml").filter(|s| s.len() == 2) {
        if stem != row.state {
            return Err(invalid(
                file,
                "state",
                format!("{:?} in a file named for {stem}", row.state),
            ));
        }
    }
    nonempty(file, "source", &clean(&row.source))?;
    let as_of = date(file, "as_of", &row.as_of)?;
    let single_item_cap = match &row.single_item_cap {
        Some(s) => {
            let cap = amount(file, "single_item_cap", s)?;
            if cap.is_zero() {
                return Err(invalid(file, "single_item_cap", "must be above 0"));
            }
            Some(cap)
        }
        None => None,
    };
    let counties = counties(file, &row.county)?;
    let districts = districts(file, &row.state, &row.district)?;
    let cities = cities(file, &row.city)?;
    if counties.is_empty() && districts.is_empty() && cities.is_empty() {
        return Err(invalid(
            file,
            "county",
            "the file names no county, district or city",
        ));
    }
    Ok(LocalRates {
        state: row.state.clone(),
        state_fips: state_fips.to_string(),
        source: clean(&row.source),
        as_of,
        single_item_cap,
        complete: row.complete,
        counties,
        districts,
        cities,
    })
}

fn counties(file: &str, rows: &[CountyRow]) -> Result<Vec<County>, CuratedError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(rows.len());
    for (i, c) in rows.iter().enumerate() {
        let key = format!("county[{i}]");
        fips(file, &format!("{key}.fips"), &c.fips, 3)?;
        if !seen.insert(c.fips.as_str()) {
            return Err(invalid(
                file,
                format!("{key}.fips"),
                format!("{} is listed twice", c.fips),
            ));
        }
        out.push(County {
            fips: c.fips.clone(),
            name: name(file, &format!("{key}.name"), &c.name)?,
            label: name(file, &format!("{key}.label"), &c.label)?,
            rates: chain(file, &format!("{key}.rates"), &c.rates)?,
            complete: c.complete,
            source: optional_text(file, &format!("{key}.source"), &c.source)?,
            note: clean(c.note.as_deref().unwrap_or("")),
        });
    }
    Ok(out)
}

fn districts(file: &str, state: &str, rows: &[DistrictRow]) -> Result<Vec<District>, CuratedError> {
    let mut codes = BTreeSet::new();
    let mut out = Vec::with_capacity(rows.len());
    for (i, d) in rows.iter().enumerate() {
        let key = format!("district[{i}]");
        let district_name = name(file, &format!("{key}.name"), &d.name)?;
        nonempty(file, &format!("{key}.source"), &clean(&d.source))?;
        let (code, rates) =
            match (&d.code, &d.sst, &d.rates) {
                (Some(code), None, Some(rates)) => {
                    let code = &crate::parse::name(code)
                        .map_err(|e| invalid(file, format!("{key}.code"), e))?;
                    let prefix = format!("{state}:");
                    let ok = code
                        .strip_prefix(&prefix)
                        .is_some_and(|rest| !rest.trim().is_empty());
                    if !ok {
                        return Err(invalid(
                            file,
                            format!("{key}.code"),
                            format!("{code:?} is not \"{state}:<NAME>\""),
                        ));
                    }
                    let rates = Rates::Chain(chain(file, &format!("{key}.rates"), rates)?);
                    (Some(code.trim().to_string()), rates)
                }
                (None, Some(sst), None) => (None, sst_ref(file, &format!("{key}.sst"), sst, "63")?),
                _ => return Err(invalid(
                    file,
                    &key,
                    "give `code` and `rates`, or `sst` alone (the SST rate file's jurisdiction)",
                )),
            };
        let id = code.clone().unwrap_or_else(|| format!("{rates:?}"));
        if !codes.insert(id) {
            return Err(invalid(file, &key, "names a district given before"));
        }
        out.push(District {
            code,
            name: district_name,
            label: label(file, &key, &d.label, "SPECIAL DISTRICT SALES TAX")?,
            counties: county_list(file, &format!("{key}.counties"), &d.counties)?,
            rates,
            source: clean(&d.source),
            note: clean(d.note.as_deref().unwrap_or("")),
        });
    }
    Ok(out)
}

fn cities(file: &str, rows: &[CityRow]) -> Result<Vec<City>, CuratedError> {
    let mut names = BTreeSet::new();
    let mut out = Vec::with_capacity(rows.len());
    for (i, c) in rows.iter().enumerate() {
        let key = format!("city[{i}]");
        let city_name = name(file, &format!("{key}.name"), &c.name)?;
        nonempty(file, &format!("{key}.source"), &clean(&c.source))?;
        if levy_core::city_key(&city_name).is_empty() {
            return Err(invalid(
                file,
                format!("{key}.name"),
                "has no letter or digit",
            ));
        }
        if !names.insert(levy_core::city_key(&city_name)) {
            return Err(invalid(
                file,
                format!("{key}.name"),
                format!("{:?} is given twice", c.name),
            ));
        }
        let (place, rates) = match (&c.fips, &c.sst, &c.rates) {
            (Some(place), None, Some(rates)) => {
                fips(file, &format!("{key}.fips"), place, 5)?;
                let rates = Rates::Chain(chain(file, &format!("{key}.rates"), rates)?);
                (place.clone(), rates)
            }
            (None, Some(sst), None) => {
                let rates = sst_ref(file, &format!("{key}.sst"), sst, "01")?;
                let Rates::Sst { code, .. } = &rates else {
                    return Err(invalid(file, &key, "not an SST city"));
                };
                fips(file, &format!("{key}.sst"), code, 5)?;
                (code.clone(), rates)
            }
            _ => {
                return Err(invalid(
                    file,
                    &key,
                    "give `fips` and `rates`, or `sst` alone (the SST rate file's city)",
                ))
            }
        };
        out.push(City {
            name: city_name,
            fips: place,
            label: label(file, &key, &c.label, "CITY SALES TAX")?,
            counties: county_list(file, &format!("{key}.counties"), &c.counties)?,
            rates,
            complete: c.complete,
            source: clean(&c.source),
            note: clean(c.note.as_deref().unwrap_or("")),
        });
    }
    Ok(out)
}

/// A FIPS code of `width` digits.
fn fips(file: &str, key: &str, s: &str, width: usize) -> Result<(), CuratedError> {
    if s.len() == width && s.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(invalid(
            file,
            key,
            format!("{s:?} is not a {width}-digit FIPS code"),
        ))
    }
}

/// A list of three-digit county FIPS codes: not empty, each once.
fn county_list(file: &str, key: &str, list: &[String]) -> Result<Vec<String>, CuratedError> {
    if list.is_empty() {
        return Err(invalid(file, key, "names no county"));
    }
    let mut seen = BTreeSet::new();
    for (i, c) in list.iter().enumerate() {
        fips(file, &format!("{key}[{i}]"), c, 3)?;
        if !seen.insert(c.as_str()) {
            return Err(invalid(
                file,
                format!("{key}[{i}]"),
                format!("{c} is listed twice"),
            ));
        }
    }
    Ok(list.to_vec())
}

/// `"<type>:<code>"`, the SST jurisdiction whose rows give the rates; `want` the type.
fn sst_ref(file: &str, key: &str, s: &str, want: &str) -> Result<Rates, CuratedError> {
    let (jtype, code) = s.split_once(':').unwrap_or(("", ""));
    let digits = |t: &str| !t.is_empty() && t.len() <= 10 && t.bytes().all(|b| b.is_ascii_digit());
    if jtype != want || !digits(code) {
        return Err(invalid(
            file,
            key,
            format!("{s:?} is not \"{want}:<code>\" (an SST jurisdiction of type {want})"),
        ));
    }
    Ok(Rates::Sst {
        jtype: jtype.to_string(),
        code: code.to_string(),
    })
}

/// A name of the file at `key` ([`crate::parse::name`], as every input's names are read):
/// not empty, its control characters dropped, at most [`crate::parse::MAX_NAME`]
/// characters (a longer one is refused, naming the file and the key), upper case.
fn name(file: &str, key: &str, s: &str) -> Result<String, CuratedError> {
    let clean = crate::parse::name(s).map_err(|e| invalid(file, key, e))?;
    nonempty(file, key, &clean)?;
    Ok(clean.to_uppercase())
}

/// Text of the file (a source, a note): its control characters dropped, trimmed.
fn clean(s: &str) -> String {
    crate::parse::text(s).trim().to_string()
}

fn label(
    file: &str,
    key: &str,
    given: &Option<String>,
    default: &str,
) -> Result<String, CuratedError> {
    match given {
        Some(l) => name(file, &format!("{key}.label"), l),
        None => Ok(default.to_string()),
    }
}

fn optional_text(
    file: &str,
    key: &str,
    s: &Option<String>,
) -> Result<Option<String>, CuratedError> {
    match s {
        Some(s) => {
            nonempty(file, key, &clean(s))?;
            Ok(Some(clean(s)))
        }
        None => Ok(None),
    }
}

/// A rate chain: oldest first, each from its `from` until the day before the next's.
fn chain(file: &str, key: &str, rows: &[RateRow]) -> Result<Vec<Rate>, CuratedError> {
    if rows.is_empty() {
        return Err(invalid(file, key, "no rates"));
    }
    let mut starts = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let from = date(file, &format!("{key}[{i}].from"), &r.from)?;
        if starts.last().is_some_and(|&prev| from <= prev) {
            return Err(invalid(
                file,
                format!("{key}[{i}].from"),
                "rates must be in date order, oldest first",
            ));
        }
        starts.push(from);
    }
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let to = starts.get(i + 1).map_or(Date::MAX, |next| Date(next.0 - 1));
        out.push(Rate {
            from: starts[i],
            to,
            rate: percent(file, &format!("{key}[{i}].rate"), &r.rate)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "state = \"FL\"\nsource = \"DR-15DSS\"\nas_of = 2026-11-26\n";

    fn county(rates: &str) -> String {
        format!("{HEAD}[[county]]\nfips = \"086\"\nname = \"MIAMI-DADE\"\nlabel = \"SURTAX\"\nrates = {rates}\n")
    }

    #[test]
    fn a_county_chain_reads_exactly() {
        let text = county(
            "[ { rate = \"1%\", from = 2024-01-01 }, { rate = \"0.5%\", from = 2026-01-01 } ]",
        );
        let f = parse("FL.toml", &text).unwrap();
        let c = &f.counties[0];
        assert_eq!(c.rates.len(), 2);
        assert_eq!(c.rates[0].rate, Decimal::new(1, 2));
        assert_eq!(c.rates[0].to, Date::from_ymd(2025, 12, 31).unwrap());
        assert_eq!(c.rates[1].to, Date::MAX);
        assert!(!c.complete);
        assert_eq!(f.publications(), vec!["DR-15DSS"]);
        // A county whose cities levy nothing beyond it says so.
        let text = format!(
            "{}complete = true\n",
            county("[ { rate = \"1%\", from = 2024-01-01 } ]")
        );
        assert!(parse("FL.toml", &text).unwrap().counties[0].complete);
    }

    #[test]
    fn what_breaks_the_grammar_is_named_by_file_and_key() {
        let cases = [
            (county("[ { rate = \"1\", from = 2024-01-01 } ]"), "county[0].rates[0].rate"),
            (county("[ { rate = \"1%\" } ]"), "missing field `from`"),
            (county("[]"), "county[0].rates"),
            (
                county("[ { rate = \"1%\", from = 2025-01-01 }, { rate = \"2%\", from = 2024-01-01 } ]"),
                "county[0].rates[1].from",
            ),
            (
                format!("{}\nbogus = 1\n", county("[ { rate = \"1%\", from = 2024-01-01 } ]")),
                "bogus",
            ),
            (HEAD.replace("\"FL\"", "\"XX\""), "state"),
            (HEAD.to_string(), "names no county"),
        ];
        for (text, want) in cases {
            let e = parse("FL.toml", &text).unwrap_err().to_string();
            assert!(e.starts_with("FL.toml"), "{e}");
            assert!(e.contains(want), "{want}: {e}");
        }
        // A file named for another state.
        let e = parse(
            "GA.toml",
            &county("[ { rate = \"1%\", from = 2024-01-01 } ]"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("named for GA"), "{e}");
    }

    #[test]
    fn districts_and_cities_take_rates_or_an_sst_jurisdiction_not_both() {
        let base = county("[ { rate = \"1%\", from = 2024-01-01 } ]");
        let ok = format!(
            "{base}[[district]]\nsst = \"63:80008\"\nname = \"METRO\"\ncounties = [\"086\"]\nsource = \"x\"\n\
             [[city]]\nname = \"Miami\"\nsst = \"01:45000\"\ncounties = [\"086\"]\nsource = \"y\"\n"
        );
        let f = parse("FL.toml", &ok).unwrap();
        assert_eq!(
            f.districts[0].rates,
            Rates::Sst {
                jtype: "63".into(),
                code: "80008".into()
            }
        );
        assert_eq!(f.cities[0].fips, "45000");
        assert_eq!(f.publications(), vec!["DR-15DSS", "x", "y"]);
        for bad in [
            "[[district]]\nsst = \"63:80008\"\ncode = \"FL:X\"\nname = \"M\"\ncounties = [\"086\"]\nsource = \"x\"\n",
            "[[district]]\nsst = \"01:80008\"\nname = \"M\"\ncounties = [\"086\"]\nsource = \"x\"\n",
            "[[district]]\ncode = \"GA:X\"\nname = \"M\"\ncounties = [\"086\"]\nrates = [ { rate = \"1%\", from = 2024-01-01 } ]\nsource = \"x\"\n",
            "[[district]]\ncode = \"FL:X\"\nname = \"M\"\ncounties = []\nrates = [ { rate = \"1%\", from = 2024-01-01 } ]\nsource = \"x\"\n",
            "[[city]]\nname = \"M\"\nsst = \"01:1\"\ncounties = [\"086\"]\nsource = \"y\"\n",
            "[[city]]\nname = \"--\"\nsst = \"01:45000\"\ncounties = [\"086\"]\nsource = \"y\"\n",
        ] {
            let text = format!("{base}{bad}");
            assert!(parse("FL.toml", &text).is_err(), "{bad}");
        }
    }
}
