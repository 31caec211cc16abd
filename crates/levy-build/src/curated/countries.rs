//! `countries.toml`: VAT and GST countries and their standard rates.

use std::collections::BTreeSet;

use levy_core::{JurisdictionSpec, Level, RuleSpec, TableBuilder, TaxType};
use serde::Deserialize;

use super::taxonomy::Taxonomy;
use super::values::{
    build_error, chain, date, invalid, is_country, nonempty, parse_toml, tax_type, ChainRow, Period,
};
use super::{Curated, CuratedError, CuratedStats, FILES, GENERAL};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountriesFile {
    #[serde(default)]
    country: Vec<CountryRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryRow {
    code: String,
    name: String,
    tax_type: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    eu: bool,
    rates: Vec<CountryRatesRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryRatesRow {
    codes: Option<Vec<String>>,
    chain: Vec<ChainRow>,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

/// A country taxed at country level.
#[derive(Clone, Debug)]
pub(super) struct Country {
    pub(super) code: String,
    pub(super) name: String,
    pub(super) tax_type: TaxType,
    pub(super) authority: String,
    /// (tax codes, periods), standard rate first.
    pub(super) rates: Vec<(Vec<String>, Vec<Period>)>,
}

/// Validates `countries.toml`: VAT and GST countries (not the US or Canada), each with a
/// standard rate and at most one rate entry per tax code.
pub(super) fn countries(text: &str, tax: &Taxonomy) -> Result<Vec<Country>, CuratedError> {
    let f = FILES[4];
    let cf: CountriesFile = parse_toml(f, text)?;
    let mut countries = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, c) in cf.country.iter().enumerate() {
        if !is_country(&c.code) || c.code == "US" || c.code == "CA" {
            return Err(invalid(
                f,
                format!("country[{i}].code"),
                format!(
                    "{:?} is not an ISO 3166-1 alpha-2 code other than US and CA",
                    c.code
                ),
            ));
        }
        let key = format!("country[{}]", c.code);
        if !seen.insert(c.code.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        nonempty(f, &format!("{key}.name"), &c.name)?;
        nonempty(f, &format!("{key}.source"), &c.source)?;
        date(f, &format!("{key}.as_of"), &c.as_of)?;
        let tt = tax_type(f, &format!("{key}.tax_type"), &c.tax_type)?;
        let mut rates = Vec::new();
        let mut covered = BTreeSet::new();
        for (j, r) in c.rates.iter().enumerate() {
            let k = format!("{key}.rates[{j}]");
            if r.codes.is_some() {
                return Err(invalid(
                    f,
                    format!("{k}.codes"),
                    format!(
                        "a country's rates here are its standard rate only; reduced and zero \
                         rates go in the taxability matrix, taxability/intl/{}.toml",
                        c.code
                    ),
                ));
            }
            let cs = vec![GENERAL.to_string()];
            for code in &cs {
                tax.known(f, &format!("{k}.codes"), code)?;
                if !covered.insert(code.clone()) {
                    return Err(invalid(
                        f,
                        format!("{k}.codes"),
                        format!("{code} has rates in two entries"),
                    ));
                }
            }
            rates.push((cs, chain(f, &format!("{k}.chain"), &r.chain)?));
        }
        if !covered.contains(GENERAL) {
            return Err(invalid(
                f,
                format!("{key}.rates"),
                "no standard rate (an entry without `codes`)",
            ));
        }
        countries.push(Country {
            code: c.code.clone(),
            name: c.name.clone(),
            tax_type: tt,
            authority: c.authority.clone(),
            rates,
        });
    }
    Ok(countries)
}

impl Curated {
    /// Adds each country's jurisdiction, its rates (`src`, the manifest index of
    /// `countries.toml`) and its region.
    pub(super) fn apply_countries(
        &self,
        b: &mut TableBuilder,
        src: u32,
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        for c in &self.countries {
            let key = format!("country[{}]", c.code);
            let j = b
                .jurisdiction(JurisdictionSpec {
                    code: c.code.clone(),
                    name: c.name.clone(),
                    level: Level::Country,
                    country: c.code.clone(),
                    region: String::new(),
                    authority: c.authority.clone(),
                    tax_type: c.tax_type,
                })
                .map_err(build_error(FILES[4], &key))?;
            stats.jurisdictions += 1;
            let label = c.tax_type.as_str();
            for (codes, periods) in &c.rates {
                for code in codes {
                    for p in periods {
                        let kind = if code == GENERAL {
                            "STANDARD RATE"
                        } else if p.rate.is_zero() {
                            "ZERO RATE"
                        } else {
                            "REDUCED RATE"
                        };
                        let label = format!("{label} {kind}");
                        let mut r = RuleSpec::flat(j, code, p.rate, p.from, p.to, &label);
                        r.source = src;
                        b.rule(r).map_err(build_error(FILES[4], &key))?;
                        stats.rules += 1;
                    }
                }
            }
            b.region(&c.code, "", &c.name, &[j], "")
                .map_err(build_error(FILES[4], &key))?;
            stats.regions += 1;
        }
        Ok(())
    }
}
