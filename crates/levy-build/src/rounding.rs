//! `data/us-rounding.toml`: the states that let a seller round a sale's tax once per
//! invoice ([`levy_core::Rounding::Invoice`]); every other region rounds line by line.

use levy_core::TableBuilder;
use serde::Deserialize;

/// The file's name in the curated data folder.
pub const FILE: &str = "us-rounding.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    invoice: Invoice,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Invoice {
    states: Vec<String>,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

/// Reads the file's text: the states that allow invoice rounding. Errors name the file.
pub fn parse(text: &str) -> Result<Vec<String>, String> {
    let file: File = toml::from_str(text).map_err(|e| format!("{FILE}: {e}"))?;
    let inv = file.invoice;
    if inv.source.trim().is_empty() {
        return Err(format!("{FILE}: invoice.source is empty"));
    }
    if inv.as_of.date.is_none() || inv.as_of.time.is_some() {
        return Err(format!("{FILE}: invoice.as_of must be a date"));
    }
    for (i, s) in inv.states.iter().enumerate() {
        if crate::states::by_abbr(s).is_none() {
            return Err(format!("{FILE}: invoice.states[{i}]: {s:?} is not a state"));
        }
        if inv.states[..i].contains(s) {
            return Err(format!("{FILE}: invoice.states[{i}]: {s} listed twice"));
        }
    }
    Ok(inv.states)
}

/// Marks each listed state's region in `b` as allowing invoice rounding; a state the
/// builder has no region for is skipped.
pub fn apply(states: &[String], b: &mut TableBuilder) {
    for s in states {
        // A table without this state has nothing to mark.
        let _ = b.region_invoice_rounding("US", s, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_lists_the_streamlined_full_members() {
        let text = crate::curated::CuratedSource::Embedded
            .require(FILE)
            .unwrap();
        let states = parse(&text).unwrap();
        // SSUTA: 23 full member states; Texas, California and New York are not members.
        assert_eq!(states.len(), 23);
        assert!(states.iter().any(|s| s == "OH") && !states.iter().any(|s| s == "TX"));
        assert!(
            parse("[invoice]\nstates = [\"ZZ\"]\nsource = \"x\"\nas_of = 2026-11-23\n")
                .unwrap_err()
                .contains("states[0]")
        );
    }
}
