//! `data/us-local-taxes.toml`: the US states (and DC) where no local sales tax exists, so
//! that an answer which knows only the state is complete there.
//!
//! Every US state region starts as [`Coverage::StateOnly`] at the region level; the states
//! this file lists become [`Coverage::Full`]. A state missing from the file is never taken
//! to be free of local taxes.

use levy_core::{Coverage, TableBuilder};
use serde::Deserialize;

/// The file's name in the curated data folder.
pub const FILE: &str = "us-local-taxes.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    state: Vec<Row>,
}

/// One state without local sales taxes.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// USPS abbreviation.
    pub abbr: String,
    /// Why no local tax applies.
    pub reason: String,
    /// The statute or revenue department page.
    pub source: String,
    /// When the fact was last checked.
    pub as_of: toml::value::Datetime,
}

/// Reads the file's text; errors name the file and what is wrong.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let file: File = toml::from_str(text).map_err(|e| format!("{FILE}: {e}"))?;
    for r in &file.state {
        if crate::states::by_abbr(&r.abbr).is_none() {
            return Err(format!("{FILE}: state {:?} is unknown", r.abbr));
        }
        if r.source.trim().is_empty() {
            return Err(format!("{FILE}: state[{}].source is empty", r.abbr));
        }
    }
    Ok(file.state)
}

/// Marks every US state region in `b` [`Coverage::StateOnly`] at the region level, except
/// the states of `rows`, which are [`Coverage::Full`]. Regions not in the builder are
/// skipped.
pub fn apply(rows: &[Row], b: &mut TableBuilder) {
    for (abbr, _) in crate::states::all() {
        let coverage = if rows.iter().any(|r| r.abbr == abbr) {
            Coverage::Full
        } else {
            Coverage::StateOnly
        };
        // A state the builder has no region for has nothing to mark.
        let _ = b.region_coverage("US", abbr, coverage);
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
        let abbrs: Vec<&str> = rows.iter().map(|r| r.abbr.as_str()).collect();
        // The thirteen listed in the file's own header comment and rows.
        assert_eq!(
            abbrs,
            ["CT", "DC", "DE", "IN", "KY", "ME", "MD", "MA", "MI", "NH", "NJ", "OR", "RI"]
        );
        assert!(
            !abbrs.contains(&"TN"),
            "Tennessee has county and city taxes"
        );
    }

    #[test]
    fn an_unknown_state_or_key_is_an_error() {
        let bad = "[[state]]\nabbr = \"XX\"\nreason = \"r\"\nsource = \"s\"\nas_of = 2026-01-01\n";
        assert!(parse(bad).unwrap_err().contains("\"XX\" is unknown"));
        let extra = "[[state]]\nabbr = \"CT\"\nreason = \"r\"\nsource = \"s\"\nas_of = 2026-01-01\nrate = 1\n";
        assert!(parse(extra).unwrap_err().contains("us-local-taxes.toml"));
    }
}
