//! `us-rules.toml`: the jurisdictions added to a state (Tennessee's single article tax) and
//! the rules that change a state's general rules.

use std::collections::BTreeSet;

use levy_core::{Date, Decimal};
use serde::Deserialize;

use super::taxonomy::Taxonomy;
use super::us_states::State;
use super::values::{
    date, invalid, nonempty, optional_interval, parse_toml, part, Part, PartRate, PartRow,
};
use super::{CuratedError, FILES, GENERAL};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    jurisdiction: Vec<ExtraJurisdictionRow>,
    #[serde(default)]
    rule: Vec<RuleRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraJurisdictionRow {
    code: String,
    state: String,
    name: String,
    authority: String,
    #[serde(default)]
    in_every_set: bool,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    #[serde(default)]
    rules: Vec<ExtraRuleRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraRuleRow {
    code: String,
    from: Option<toml::value::Datetime>,
    to: Option<toml::value::Datetime>,
    parts: Vec<PartRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleRow {
    states: Vec<String>,
    #[serde(default)]
    except: Vec<String>,
    code: String,
    applies_to: Vec<String>,
    from: Option<toml::value::Datetime>,
    to: Option<toml::value::Datetime>,
    label: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
    parts: Vec<PartRow>,
}

/// Which jurisdictions of a state a rule is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    State,
    StateAll,
    Local,
    /// The county-level jurisdictions (a county, a Virginia independent city).
    County,
    /// The city-level jurisdictions.
    City,
    District,
    Code(String),
}

/// A product-specific rule over some jurisdictions.
#[derive(Clone, Debug)]
pub(super) struct Modifier {
    pub(super) states: Vec<String>,
    pub(super) code: String,
    pub(super) scopes: Vec<Scope>,
    pub(super) from: Date,
    pub(super) to: Date,
    /// The rules' rate type; empty to keep the general rules' own (a `taxable` matrix cell).
    pub(super) label: String,
    pub(super) parts: Vec<Part>,
    /// A per-sale threshold: the parts apply at or below it (the group, the limit), and
    /// above it the code keeps what it has without this modifier.
    pub(super) sale: Option<(u32, Decimal)>,
    /// Where it was written, for messages: `us-rules.toml rule[3]`, a matrix cell.
    pub(super) origin: String,
    /// Whether it comes from the taxability matrix.
    pub(super) matrix: bool,
}

/// An extra state-level jurisdiction (Tennessee's single article tax).
#[derive(Clone, Debug)]
pub(super) struct Extra {
    pub(super) key: String,
    pub(super) code: String,
    pub(super) state: String,
    pub(super) name: String,
    pub(super) authority: String,
    pub(super) in_every_set: bool,
    pub(super) rules: Vec<(String, Date, Date, Vec<Part>)>,
}

/// Validates `us-rules.toml`: the added jurisdictions (absolute rates only) and the rules
/// that modify states' rates by tax code, each naming known states and codes.
pub(super) fn us_rules(
    text: &str,
    tax: &Taxonomy,
    states: &[State],
) -> Result<(Vec<Extra>, Vec<Modifier>), CuratedError> {
    let f = FILES[2];
    let abbrs: BTreeSet<String> = states.iter().map(|s| s.abbr.clone()).collect();
    let rf: RulesFile = parse_toml(f, text)?;
    let mut extras = Vec::new();
    for (i, x) in rf.jurisdiction.iter().enumerate() {
        extras.push(extra(
            &format!("jurisdiction[{i}]"),
            x,
            tax,
            states,
            &abbrs,
        )?);
    }
    let mut modifiers = Vec::new();
    for (i, r) in rf.rule.iter().enumerate() {
        modifiers.push(modifier(&format!("rule[{i}]"), r, &abbrs)?);
    }
    Ok((extras, modifiers))
}

/// Validates the added jurisdiction `x` (at `key`): a state of `abbrs`, a code of its own,
/// its rules' codes known to `tax` and their parts absolute.
fn extra(
    key: &str,
    x: &ExtraJurisdictionRow,
    tax: &Taxonomy,
    states: &[State],
    abbrs: &BTreeSet<String>,
) -> Result<Extra, CuratedError> {
    let f = FILES[2];
    nonempty(f, &format!("{key}.code"), &x.code)?;
    if !abbrs.contains(&x.state) {
        return Err(invalid(
            f,
            format!("{key}.state"),
            format!("unknown state {:?}", x.state),
        ));
    }
    if states.iter().any(|s| s.fips == x.code) {
        return Err(invalid(
            f,
            format!("{key}.code"),
            "must differ from every state's FIPS code",
        ));
    }
    nonempty(f, &format!("{key}.name"), &x.name)?;
    nonempty(f, &format!("{key}.source"), &x.source)?;
    date(f, &format!("{key}.as_of"), &x.as_of)?;
    let mut rules = Vec::new();
    for (j, r) in x.rules.iter().enumerate() {
        let k = format!("{key}.rules[{j}]");
        tax.known(f, &format!("{k}.code"), &r.code)?;
        let (from, to) = optional_interval(f, &k, &r.from, &r.to)?;
        let mut parts = Vec::new();
        for (n, p) in r.parts.iter().enumerate() {
            let p = part(f, &format!("{k}.parts[{n}]"), p)?;
            if p.rate == PartRate::General {
                return Err(invalid(
                    f,
                    format!("{k}.parts[{n}].rate"),
                    "an added jurisdiction's rates must be absolute",
                ));
            }
            parts.push(p);
        }
        if parts.is_empty() {
            return Err(invalid(f, format!("{k}.parts"), "no parts"));
        }
        rules.push((r.code.clone(), from, to, parts));
    }
    Ok(Extra {
        key: key.to_string(),
        code: x.code.clone(),
        state: x.state.clone(),
        name: x.name.clone(),
        authority: x.authority.clone(),
        in_every_set: x.in_every_set,
        rules,
    })
}

/// Validates rule `r` (at `key`): the general code only, states of `abbrs`, the
/// jurisdictions it applies to, its interval, label, source and parts.
fn modifier(key: &str, r: &RuleRow, abbrs: &BTreeSet<String>) -> Result<Modifier, CuratedError> {
    let f = FILES[2];
    if r.code != GENERAL {
        return Err(invalid(
            f,
            format!("{key}.code"),
            format!(
                "{:?}: a rule here changes the general rules ({GENERAL}) only; how a \
                 product is treated goes in the taxability matrix, taxability/us/<state>.toml",
                r.code
            ),
        ));
    }
    let states = rule_states(key, r, abbrs)?;
    let scopes = scopes(key, &r.applies_to)?;
    let (from, to) = optional_interval(f, key, &r.from, &r.to)?;
    nonempty(f, &format!("{key}.label"), &r.label)?;
    nonempty(f, &format!("{key}.source"), &r.source)?;
    date(f, &format!("{key}.as_of"), &r.as_of)?;
    let mut parts = Vec::new();
    for (n, p) in r.parts.iter().enumerate() {
        parts.push(part(f, &format!("{key}.parts[{n}]"), p)?);
    }
    if parts.is_empty() {
        return Err(invalid(f, format!("{key}.parts"), "no parts"));
    }
    Ok(Modifier {
        states,
        code: r.code.clone(),
        scopes,
        from,
        to,
        label: r.label.clone(),
        parts,
        sale: None,
        origin: format!("{f} {key}"),
        matrix: false,
    })
}

/// The states rule `r` (at `key`) names, `*` for all of `abbrs`, less those it excepts;
/// sorted, at least one.
fn rule_states(
    key: &str,
    r: &RuleRow,
    abbrs: &BTreeSet<String>,
) -> Result<Vec<String>, CuratedError> {
    let f = FILES[2];
    let mut st = Vec::new();
    for s in &r.states {
        if s == "*" {
            st.extend(abbrs.iter().cloned());
        } else if abbrs.contains(s) {
            st.push(s.clone());
        } else {
            return Err(invalid(
                f,
                format!("{key}.states"),
                format!("unknown state {s:?}"),
            ));
        }
    }
    for s in &r.except {
        if !abbrs.contains(s) {
            return Err(invalid(
                f,
                format!("{key}.except"),
                format!("unknown state {s:?}"),
            ));
        }
    }
    st.retain(|s| !r.except.contains(s));
    st.sort();
    st.dedup();
    if st.is_empty() {
        return Err(invalid(f, format!("{key}.states"), "names no state"));
    }
    Ok(st)
}

/// The jurisdictions of a state a rule's `applies_to` (at `key`) names; at least one.
fn scopes(key: &str, applies_to: &[String]) -> Result<Vec<Scope>, CuratedError> {
    let f = FILES[2];
    let mut scopes = Vec::new();
    for a in applies_to {
        match a.as_str() {
            "state" => scopes.push(Scope::State),
            "state_all" => scopes.push(Scope::StateAll),
            "local" => scopes.push(Scope::Local),
            "county" => scopes.push(Scope::County),
            "city" => scopes.push(Scope::City),
            "district" => scopes.push(Scope::District),
            "all" => scopes.extend([Scope::StateAll, Scope::Local]),
            "" => return Err(invalid(f, format!("{key}.applies_to"), "empty entry")),
            code => scopes.push(Scope::Code(code.to_string())),
        }
    }
    if scopes.is_empty() {
        return Err(invalid(
            f,
            format!("{key}.applies_to"),
            "names no jurisdiction",
        ));
    }
    Ok(scopes)
}
