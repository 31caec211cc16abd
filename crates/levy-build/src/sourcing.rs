//! `data/us-sourcing.toml`: how each state sources a sale shipped from a place in the same
//! state (origin, modified origin, origin with local use taxes up to a cap). States not
//! listed source every sale at the destination.

use levy_core::{Decimal, Sourcing, TableBuilder};
use serde::Deserialize;

/// The file's name in the curated data folder.
pub const FILE: &str = "us-sourcing.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    state: Vec<Row>,
}

/// One state's rule as written.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Row {
    abbr: String,
    rule: String,
    local_cap: Option<String>,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

/// One state's checked rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateSourcing {
    /// USPS abbreviation.
    pub abbr: String,
    /// The rule for intrastate sales.
    pub rule: Sourcing,
    /// The cap on local rates (a fraction) for [`Sourcing::OriginWithUseTax`], else zero.
    pub local_cap: Decimal,
}

/// Reads the file's text; errors name the file, the state and what is wrong.
pub fn parse(text: &str) -> Result<Vec<StateSourcing>, String> {
    let file: File = toml::from_str(text).map_err(|e| format!("{FILE}: {e}"))?;
    let mut out: Vec<StateSourcing> = Vec::new();
    for r in file.state {
        let key = format!("{FILE}: state[{}]", r.abbr);
        if crate::states::by_abbr(&r.abbr).is_none() {
            return Err(format!("{FILE}: state {:?} is unknown", r.abbr));
        }
        if out.iter().any(|s| s.abbr == r.abbr) {
            return Err(format!("{key}: listed twice"));
        }
        if r.source.trim().is_empty() {
            return Err(format!("{key}.source is empty"));
        }
        if r.as_of.date.is_none() || r.as_of.time.is_some() {
            return Err(format!("{key}.as_of must be a date"));
        }
        let rule = Sourcing::parse(&r.rule)
            .filter(|s| *s != Sourcing::Destination)
            .ok_or_else(|| {
                format!(
                    "{key}.rule: {:?} is not origin, modified_origin or origin_with_use_tax",
                    r.rule
                )
            })?;
        let local_cap = match (rule, &r.local_cap) {
            (Sourcing::OriginWithUseTax, Some(cap)) => {
                let number = cap
                    .trim()
                    .strip_suffix('%')
                    .and_then(|n| n.trim().parse::<Decimal>().ok())
                    .filter(|n| !n.is_sign_negative() && *n <= Decimal::from(100))
                    .ok_or_else(|| format!("{key}.local_cap: {cap:?} is not a percentage"))?;
                number / Decimal::from(100)
            }
            (Sourcing::OriginWithUseTax, None) => {
                return Err(format!("{key}.local_cap is missing"));
            }
            (_, Some(_)) => {
                return Err(format!(
                    "{key}.local_cap applies to origin_with_use_tax only"
                ));
            }
            (_, None) => Decimal::ZERO,
        };
        out.push(StateSourcing {
            abbr: r.abbr,
            rule,
            local_cap,
        });
    }
    Ok(out)
}

/// Writes each state's rule onto its region in `b`; a state the builder has no region for
/// is skipped.
pub fn apply(rows: &[StateSourcing], b: &mut TableBuilder) {
    for r in rows {
        // A table without this state has nothing to source.
        let _ = b.region_sourcing("US", &r.abbr, r.rule, r.local_cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_reads() {
        let text = crate::curated::CuratedSource::Embedded
            .require(FILE)
            .unwrap();
        let rows = parse(&text).unwrap();
        let tx = rows.iter().find(|r| r.abbr == "TX").unwrap();
        // 34 TAC 3.334: the 2% local cap.
        assert_eq!(
            (tx.rule, tx.local_cap),
            (Sourcing::OriginWithUseTax, Decimal::new(2, 2))
        );
        let ca = rows.iter().find(|r| r.abbr == "CA").unwrap();
        assert_eq!(ca.rule, Sourcing::ModifiedOrigin);
        assert!(!rows.iter().any(|r| r.abbr == "NY"));
    }

    #[test]
    fn bad_rows_name_the_state_and_the_field() {
        let row = |extra: &str| {
            format!("[[state]]\nabbr = \"TX\"\nsource = \"x\"\nas_of = 2026-11-23\n{extra}")
        };
        for (extra, want) in [
            ("rule = \"inbound\"", "state[TX].rule"),
            (
                "rule = \"origin_with_use_tax\"",
                "state[TX].local_cap is missing",
            ),
            (
                "rule = \"origin\"\nlocal_cap = \"2%\"",
                "origin_with_use_tax only",
            ),
            (
                "rule = \"origin_with_use_tax\"\nlocal_cap = \"two\"",
                "not a percentage",
            ),
        ] {
            let e = parse(&row(extra)).unwrap_err();
            assert!(e.contains(want), "{extra}: {e}");
        }
    }
}
