//! `us-states.toml`: the US states, DC and Puerto Rico, each with its state rate chain.

use std::collections::BTreeSet;

use levy_core::{JurisdictionId, JurisdictionSpec, Level, RuleSpec, TableBuilder, TaxType};
use serde::Deserialize;

use super::rewrite::part_rule;
use super::values::{
    build_error, chain, date, invalid, is_country, nonempty, parse_toml, ChainRow, PartRate, Period,
};
use super::{Curated, CuratedError, CuratedStats, FILES, GENERAL};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatesFile {
    #[serde(default)]
    state: Vec<StateRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateRow {
    fips: String,
    abbr: String,
    name: String,
    authority: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    rates: Vec<ChainRow>,
}

/// A US state.
#[derive(Clone, Debug)]
pub(super) struct State {
    pub(super) fips: String,
    pub(super) abbr: String,
    pub(super) name: String,
    pub(super) authority: String,
    pub(super) periods: Vec<Period>,
}

/// Validates `us-states.toml`: FIPS codes and abbreviations, unique, each state with its
/// authority, source and a dated rate chain.
pub(super) fn us_states(text: &str) -> Result<Vec<State>, CuratedError> {
    let f = FILES[1];
    let sf: StatesFile = parse_toml(f, text)?;
    let mut states = Vec::with_capacity(sf.state.len());
    let mut abbrs = BTreeSet::new();
    let mut fips = BTreeSet::new();
    for (i, s) in sf.state.iter().enumerate() {
        let key = format!("state[{i}]");
        if s.fips.len() != 2 || !s.fips.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(
                f,
                format!("{key}.fips"),
                format!("{:?} is not a 2-digit FIPS code", s.fips),
            ));
        }
        if !is_country(&s.abbr) {
            return Err(invalid(
                f,
                format!("{key}.abbr"),
                format!("{:?} is not a 2-letter abbreviation", s.abbr),
            ));
        }
        let key = format!("state[{}]", s.abbr);
        if !abbrs.insert(s.abbr.clone()) || !fips.insert(s.fips.clone()) {
            return Err(invalid(f, key, "listed twice"));
        }
        nonempty(f, &format!("{key}.name"), &s.name)?;
        nonempty(f, &format!("{key}.authority"), &s.authority)?;
        nonempty(f, &format!("{key}.source"), &s.source)?;
        date(f, &format!("{key}.as_of"), &s.as_of)?;
        states.push(State {
            fips: s.fips.clone(),
            abbr: s.abbr.clone(),
            name: s.name.clone(),
            authority: s.authority.clone(),
            periods: chain(f, &format!("{key}.rates"), &s.rates)?,
        });
    }
    Ok(states)
}

impl Curated {
    /// Adds each US state's jurisdiction, its rates (`src.0`, the manifest index of
    /// `us-states.toml`) and its region, with the state's add-on jurisdictions of
    /// `us-rules.toml` (`src.1`).
    pub(super) fn apply_states(
        &self,
        b: &mut TableBuilder,
        src: (u32, u32),
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        for s in &self.states {
            let key = format!("state[{}]", s.abbr);
            let j = b
                .jurisdiction(JurisdictionSpec {
                    code: s.fips.clone(),
                    name: s.name.clone(),
                    level: Level::State,
                    country: "US".into(),
                    region: s.abbr.clone(),
                    authority: s.authority.clone(),
                    tax_type: TaxType::Sales,
                })
                .map_err(build_error(FILES[1], &key))?;
            stats.jurisdictions += 1;
            for p in &s.periods {
                let mut r =
                    RuleSpec::flat(j, GENERAL, p.rate, p.from, p.to, "GENERAL STATE SALES TAX");
                r.source = src.0;
                b.rule(r).map_err(build_error(FILES[1], &key))?;
                stats.rules += 1;
            }
            let mut set = vec![j];
            set.extend(self.apply_extras(b, &s.abbr, src.1, stats)?);
            b.region("US", &s.abbr, &s.name, &set, "")
                .map_err(build_error(FILES[1], &key))?;
            stats.regions += 1;
        }
        Ok(())
    }

    /// Adds the add-on jurisdictions of state `abbr` (Tennessee's single article tax) with
    /// their rules (`src`, the manifest index of `us-rules.toml`); answers those that go
    /// into every set of the state.
    fn apply_extras(
        &self,
        b: &mut TableBuilder,
        abbr: &str,
        src: u32,
        stats: &mut CuratedStats,
    ) -> Result<Vec<JurisdictionId>, CuratedError> {
        let mut in_every_set = Vec::new();
        for x in self.extras.iter().filter(|x| x.state == abbr) {
            let xj = b
                .jurisdiction(JurisdictionSpec {
                    code: x.code.clone(),
                    name: x.name.clone(),
                    level: Level::State,
                    country: "US".into(),
                    region: x.state.clone(),
                    authority: x.authority.clone(),
                    tax_type: TaxType::Sales,
                })
                .map_err(build_error(FILES[2], &x.key))?;
            stats.jurisdictions += 1;
            for (code, from, to, parts) in &x.rules {
                for p in parts {
                    let rate = match p.rate {
                        PartRate::Fixed(r) => r * p.scale,
                        PartRate::General => continue,
                    };
                    b.rule(part_rule(xj, code, *from, *to, rate, p, &x.name, src))
                        .map_err(build_error(FILES[2], &x.key))?;
                    stats.rules += 1;
                }
            }
            if x.in_every_set {
                in_every_set.push(xj);
            }
        }
        Ok(in_every_set)
    }
}

#[cfg(test)]
mod tests {
    use levy_core::{Date, Decimal};

    use super::super::values::{chain, Period};
    use super::StatesFile;

    fn d(y: i32, m: u32, day: u32) -> Date {
        Date::from_ymd(y, m, day).unwrap()
    }

    #[test]
    fn chain_ends_each_rate_the_day_before_the_next() {
        let rows: StatesFile = toml::from_str(
            "[[state]]\nfips='46'\nabbr='SD'\nname='X'\nauthority='X'\nsource='x'\nas_of=2026-11-23\nrates=[{rate='4.5%'},{rate='4.2%',from=2023-07-01}]",
        )
        .unwrap();
        let p = chain("f", "k", &rows.state[0].rates).unwrap();
        assert_eq!(
            p[0],
            Period {
                from: Date::MIN,
                to: d(2023, 6, 30),
                rate: Decimal::new(45, 3)
            }
        );
        assert_eq!(
            p[1],
            Period {
                from: d(2023, 7, 1),
                to: Date::MAX,
                rate: Decimal::new(42, 3)
            }
        );
    }
}
