//! `canada.toml`: the federal GST and each province's own tax, and postal prefixes.

use std::collections::BTreeSet;

use levy_core::{
    BuildError, JurisdictionId, JurisdictionSpec, Level, RuleSpec, TableBuilder, TaxType,
};
use serde::Deserialize;

use super::values::{
    build_error, chain, date, invalid, is_country, nonempty, parse_toml, tax_type, ChainRow, Period,
};
use super::{Curated, CuratedError, CuratedStats, FILES, GENERAL};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CanadaFile {
    federal: FederalRow,
    #[serde(default)]
    province: Vec<ProvinceRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FederalRow {
    code: String,
    name: String,
    tax_name: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    chain: Vec<ChainRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProvinceRow {
    code: String,
    name: String,
    federal: bool,
    tax_name: Option<String>,
    tax_type: Option<String>,
    authority: Option<String>,
    source: Option<String>,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    chain: Vec<ChainRow>,
    #[serde(default)]
    postal_prefixes: Vec<String>,
}

/// A Canadian province or territory.
#[derive(Clone, Debug)]
pub(super) struct Province {
    pub(super) code: String,
    pub(super) name: String,
    pub(super) federal: bool,
    pub(super) tax: Option<(String, TaxType, String, Vec<Period>)>,
    pub(super) postal_prefixes: Vec<String>,
}

/// Canada.
#[derive(Clone, Debug)]
pub(super) struct Canada {
    pub(super) code: String,
    pub(super) name: String,
    pub(super) tax_name: String,
    pub(super) authority: String,
    pub(super) periods: Vec<Period>,
    pub(super) provinces: Vec<Province>,
}

/// Validates `canada.toml`: the federal GST and each province's own tax (their general rates;
/// how each product is treated is in the taxability matrix, `taxability/ca/`) and postal
/// prefixes.
pub(super) fn canada(text: &str) -> Result<Canada, CuratedError> {
    let f = FILES[5];
    let cf: CanadaFile = parse_toml(f, text)?;
    let fed = &cf.federal;
    if fed.code != "CA" {
        return Err(invalid(f, "federal.code", "must be \"CA\""));
    }
    nonempty(f, "federal.source", &fed.source)?;
    date(f, "federal.as_of", &fed.as_of)?;
    let mut provinces = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, p) in cf.province.iter().enumerate() {
        if !is_country(&p.code) {
            return Err(invalid(
                f,
                format!("province[{i}].code"),
                format!("{:?} is not a 2-letter province code", p.code),
            ));
        }
        let key = format!("province[{}]", p.code);
        if !seen.insert(p.code.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        date(f, &format!("{key}.as_of"), &p.as_of)?;
        let tax = if p.chain.is_empty() {
            if !p.federal {
                return Err(invalid(
                    f,
                    key,
                    "a province without the federal GST must levy its own tax",
                ));
            }
            None
        } else {
            let name = p
                .tax_name
                .clone()
                .ok_or_else(|| invalid(f, format!("{key}.tax_name"), "missing"))?;
            let tt = tax_type(
                f,
                &format!("{key}.tax_type"),
                p.tax_type.as_deref().unwrap_or(""),
            )?;
            let authority = p
                .authority
                .clone()
                .ok_or_else(|| invalid(f, format!("{key}.authority"), "missing"))?;
            if p.source.as_deref().is_none_or(|s| s.trim().is_empty()) {
                return Err(invalid(f, format!("{key}.source"), "missing"));
            }
            Some((
                name,
                tt,
                authority,
                chain(f, &format!("{key}.chain"), &p.chain)?,
            ))
        };
        for (j, pre) in p.postal_prefixes.iter().enumerate() {
            if levy_core::normalize_postal(pre).is_empty() {
                return Err(invalid(
                    f,
                    format!("{key}.postal_prefixes[{j}]"),
                    "empty prefix",
                ));
            }
        }
        provinces.push(Province {
            code: p.code.clone(),
            name: p.name.clone(),
            federal: p.federal,
            tax,
            postal_prefixes: p.postal_prefixes.clone(),
        });
    }
    let canada = Canada {
        code: fed.code.clone(),
        name: fed.name.clone(),
        tax_name: fed.tax_name.clone(),
        authority: fed.authority.clone(),
        periods: chain(f, "federal.chain", &fed.chain)?,
        provinces,
    };
    Ok(canada)
}

/// Flat rules for a chain of periods on GENERAL_MERCHANDISE. Returns how many rules were
/// added.
pub(super) fn write_periods(
    b: &mut TableBuilder,
    j: JurisdictionId,
    periods: &[Period],
    label: &str,
    src: u32,
) -> Result<usize, BuildError> {
    for p in periods {
        let mut r = RuleSpec::flat(j, GENERAL, p.rate, p.from, p.to, label);
        r.source = src;
        b.rule(r)?;
    }
    Ok(periods.len())
}

impl Curated {
    /// Adds Canada's federal GST and each province's own tax, with their rates (`src`, the
    /// manifest index of `canada.toml`), regions and postal prefixes.
    pub(super) fn apply_canada(
        &self,
        b: &mut TableBuilder,
        src: u32,
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        let ca = &self.canada;
        let fed = b
            .jurisdiction(JurisdictionSpec {
                code: ca.code.clone(),
                name: ca.tax_name.clone(),
                level: Level::Country,
                country: "CA".into(),
                region: String::new(),
                authority: ca.authority.clone(),
                tax_type: TaxType::Gst,
            })
            .map_err(build_error(FILES[5], "federal"))?;
        stats.jurisdictions += 1;
        stats.rules += write_periods(b, fed, &ca.periods, "GST", src)
            .map_err(build_error(FILES[5], "federal"))?;
        b.region("CA", "", &ca.name, &[fed], "")
            .map_err(build_error(FILES[5], "federal"))?;
        stats.regions += 1;
        for p in &ca.provinces {
            apply_province(b, p, fed, src, stats)?;
        }
        Ok(())
    }
}

/// Adds province `p`: its own tax's jurisdiction and rates (`src`) when it levies one, its
/// region (with the federal GST `fed` when it applies there) and its postal prefixes.
fn apply_province(
    b: &mut TableBuilder,
    p: &Province,
    fed: JurisdictionId,
    src: u32,
    stats: &mut CuratedStats,
) -> Result<(), CuratedError> {
    let key = format!("province[{}]", p.code);
    let mut set = Vec::new();
    if p.federal {
        set.push(fed);
    }
    if let Some((name, tt, authority, periods)) = &p.tax {
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: format!("CA-{}", p.code),
                name: name.clone(),
                level: Level::Province,
                country: "CA".into(),
                region: p.code.clone(),
                authority: authority.clone(),
                tax_type: *tt,
            })
            .map_err(build_error(FILES[5], &key))?;
        stats.jurisdictions += 1;
        let label = name.rsplit(' ').next().unwrap_or("TAX");
        stats.rules +=
            write_periods(b, j, periods, label, src).map_err(build_error(FILES[5], &key))?;
        set.push(j);
    }
    b.region("CA", &p.code, &p.name, &set, "")
        .map_err(build_error(FILES[5], &key))?;
    stats.regions += 1;
    for pre in &p.postal_prefixes {
        b.postal_prefix("CA", pre, &p.code, None)
            .map_err(build_error(FILES[5], &key))?;
        stats.postal_prefixes += 1;
    }
    Ok(())
}
