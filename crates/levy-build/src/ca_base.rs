//! `data/ca-base.toml`: California's statewide base rate split as CDTFA publishes it (6%
//! state, 1.25% uniform local), which `levy build --cdtfa` needs to split each location's
//! combined rate into state, uniform local and district parts.

use levy_core::Decimal;
use serde::Deserialize;

/// The file's name in the curated data folder.
pub const FILE: &str = "ca-base.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    state_rate: String,
    uniform_local_rate: String,
    source: String,
    as_of: toml::value::Datetime,
}

/// California's statewide base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaBase {
    /// The state's part (0.06).
    pub state: Decimal,
    /// The uniform local (Bradley-Burns) part (0.0125).
    pub uniform_local: Decimal,
}

/// A percentage written as a string (`"1.25%"`) as a fraction.
fn percent(key: &str, text: &str) -> Result<Decimal, String> {
    let Some(number) = text.trim().strip_suffix('%') else {
        return Err(format!(
            "{FILE}: {key}: {text:?} is not a percentage (write \"6%\")"
        ));
    };
    let d: Decimal = number
        .trim()
        .parse()
        .map_err(|_| format!("{FILE}: {key}: {text:?} is not a number"))?;
    if d.is_sign_negative() || d >= Decimal::from(100) {
        return Err(format!("{FILE}: {key}: {text:?} is out of range"));
    }
    Ok(d / Decimal::from(100))
}

/// Reads the file's text; errors name the file and the key.
pub fn parse(text: &str) -> Result<CaBase, String> {
    let f: File = toml::from_str(text).map_err(|e| format!("{FILE}: {e}"))?;
    if f.source.trim().is_empty() {
        return Err(format!("{FILE}: source is empty"));
    }
    let _ = f.as_of;
    Ok(CaBase {
        state: percent("state_rate", &f.state_rate)?,
        uniform_local: percent("uniform_local_rate", &f.uniform_local_rate)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_split_is_cdtfas() {
        // CDTFA: statewide 7.25% = 6.00% state + 1.25% local.
        let text = crate::curated::CuratedSource::Embedded
            .require(FILE)
            .unwrap();
        let base = parse(&text).unwrap();
        assert_eq!(base.state, "0.06".parse().unwrap());
        assert_eq!(base.uniform_local, "0.0125".parse().unwrap());
    }

    #[test]
    fn bad_values_are_named() {
        let bad = "state_rate = \"0.06\"\nuniform_local_rate = \"1.25%\"\nsource = \"s\"\nas_of = 2026-01-01\n";
        assert!(parse(bad).unwrap_err().contains("state_rate"));
        let extra = "state_rate = \"6%\"\nuniform_local_rate = \"1.25%\"\nsource = \"s\"\nas_of = 2026-01-01\nx = 1\n";
        assert!(parse(extra).unwrap_err().contains(FILE));
    }
}
