//! `holidays.toml`: the sales tax holidays.

use std::collections::BTreeSet;

use levy_core::{Date, HolidaySpec, TableBuilder};
use serde::Deserialize;

use super::taxonomy::Taxonomy;
use super::us_states::State;
use super::values::{amount, build_error, date, invalid, nonempty, parse_toml};
use super::{Curated, CuratedError, CuratedStats, FILES};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidaysFile {
    #[serde(default)]
    holiday: Vec<HolidayRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidayRow {
    name: String,
    state: String,
    from: toml::value::Datetime,
    to: toml::value::Datetime,
    include_local: bool,
    /// The codes of a holiday with one cap; `items` instead for one cap per group.
    #[serde(default)]
    codes: Vec<String>,
    max_unit: Option<String>,
    #[serde(default)]
    cap_inclusive: bool,
    /// Codes under a covered code that the holiday does not cover (every item group).
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    items: Vec<HolidayItemRow>,
    basis: String,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file; levy does not use it
    note: String,
}

/// One group of a holiday's items with its own per-item cap.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HolidayItemRow {
    codes: Vec<String>,
    max_unit: Option<String>,
    #[serde(default)]
    cap_inclusive: bool,
    #[serde(default)]
    exclude: Vec<String>,
}

/// One group of a holiday's items with the same cap, as written in the file.
struct ItemGroup<'a> {
    key: String,
    codes: &'a [String],
    max_unit: &'a Option<String>,
    cap_inclusive: bool,
    exclude: &'a [String],
}

/// Validates `holidays.toml`: each holiday in a known state, over a valid interval, with
/// known tax codes, an optional cap and a basis (`announced` or `statute`).
pub(super) fn holidays(
    text: &str,
    tax: &Taxonomy,
    states: &[State],
) -> Result<Vec<HolidaySpec>, CuratedError> {
    let f = FILES[3];
    let abbrs: BTreeSet<&str> = states.iter().map(|s| s.abbr.as_str()).collect();
    let hf: HolidaysFile = parse_toml(f, text)?;
    let mut holidays = Vec::new();
    for (i, h) in hf.holiday.iter().enumerate() {
        let key = format!("holiday[{i}]");
        nonempty(f, &format!("{key}.name"), &h.name)?;
        if !abbrs.contains(h.state.as_str()) {
            return Err(invalid(
                f,
                format!("{key}.state"),
                format!("unknown state {:?}", h.state),
            ));
        }
        let from = date(f, &format!("{key}.from"), &h.from)?;
        let to = date(f, &format!("{key}.to"), &h.to)?;
        if from > to {
            return Err(invalid(f, key, "`to` is before `from`"));
        }
        if !matches!(h.basis.as_str(), "announced" | "statute") {
            return Err(invalid(
                f,
                format!("{key}.basis"),
                format!("{:?} is not `announced` or `statute`", h.basis),
            ));
        }
        nonempty(f, &format!("{key}.source"), &h.source)?;
        date(f, &format!("{key}.as_of"), &h.as_of)?;
        for group in item_groups(&key, h)? {
            holidays.push(group_holiday(h, group, (from, to), tax)?);
        }
    }
    Ok(holidays)
}

/// The groups of holiday `h`'s items (at `key`), one per cap: the row's own `codes`, or
/// each of its `items`.
fn item_groups<'a>(key: &str, h: &'a HolidayRow) -> Result<Vec<ItemGroup<'a>>, CuratedError> {
    let f = FILES[3];
    Ok(match (h.codes.is_empty(), h.items.is_empty()) {
        (false, true) => vec![ItemGroup {
            key: key.to_string(),
            codes: &h.codes,
            max_unit: &h.max_unit,
            cap_inclusive: h.cap_inclusive,
            exclude: &[],
        }],
        (true, false) if h.max_unit.is_none() && !h.cap_inclusive => h
            .items
            .iter()
            .enumerate()
            .map(|(n, it)| ItemGroup {
                key: format!("{key}.items[{n}]"),
                codes: &it.codes,
                max_unit: &it.max_unit,
                cap_inclusive: it.cap_inclusive,
                exclude: &it.exclude,
            })
            .collect(),
        (true, true) => return Err(invalid(f, format!("{key}.codes"), "names no tax code")),
        _ => {
            return Err(invalid(
                f,
                key,
                "give either `codes` (with `max_unit`) or `items`, not both",
            ))
        }
    })
}

/// The holiday of one group of holiday `h`'s items over `days`: its codes known to `tax`,
/// each exclusion (the row's and the group's) under a covered code, its cap an amount.
fn group_holiday(
    h: &HolidayRow,
    group: ItemGroup<'_>,
    (from, to): (Date, Date),
    tax: &Taxonomy,
) -> Result<HolidaySpec, CuratedError> {
    let f = FILES[3];
    let ItemGroup {
        key: k,
        codes,
        max_unit,
        cap_inclusive,
        exclude: item_exclude,
    } = group;
    if codes.is_empty() {
        return Err(invalid(f, format!("{k}.codes"), "names no tax code"));
    }
    for c in codes {
        tax.known(f, &format!("{k}.codes"), c)?;
    }
    let exclude: Vec<String> = h.exclude.iter().chain(item_exclude).cloned().collect();
    for c in &exclude {
        tax.known(f, &format!("{k}.exclude"), c)?;
        // An exclusion must lie under a covered code, or it says nothing.
        if !codes.iter().any(|covered| tax.within(c, covered)) {
            return Err(invalid(
                f,
                format!("{k}.exclude"),
                format!("{c} is not under any of the covered codes"),
            ));
        }
    }
    let max_unit = match max_unit {
        Some(m) => Some(amount(f, &format!("{k}.max_unit"), m)?),
        None => None,
    };
    Ok(HolidaySpec {
        name: h.name.clone(),
        country: "US".into(),
        region: h.state.clone(),
        include_local: h.include_local,
        from,
        to,
        tax_codes: codes.to_vec(),
        exclude_codes: exclude,
        max_unit,
        cap_inclusive,
    })
}

impl Curated {
    /// Adds the sales tax holidays.
    pub(super) fn apply_holidays(
        &self,
        b: &mut TableBuilder,
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        for (i, h) in self.holidays.iter().enumerate() {
            b.holiday(h.clone())
                .map_err(build_error(FILES[3], &format!("holiday[{i}]")))?;
            stats.holidays += 1;
        }
        Ok(())
    }
}
