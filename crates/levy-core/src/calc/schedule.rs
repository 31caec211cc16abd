//! The schedule in force: a line's rules in a jurisdiction on the sale's day (walking up
//! the taxonomy to the nearest code that has any), and the holiday that suspends them.

use rust_decimal::Decimal;

use crate::date::Date;
use crate::derived::place_key;
use crate::kinds::Level;
use crate::lookup::{JurisdictionId, RuleId, TaxCodeId};
use crate::model::load_decimal;
use crate::model::{ArchivedHolidayRecord, ArchivedRuleKey};
use crate::table::Table;

use super::MAX_RULE_AMOUNT;
/// The rules of `jurisdiction` in force on `date` for `code`, walking up the taxonomy to
/// the nearest code that has any. Returns the span of rule ids (contiguous).
pub(super) fn rules_for<D>(
    table: &Table<D>,
    jurisdiction: JurisdictionId,
    code: TaxCodeId,
    date: Date,
) -> impl Iterator<Item = RuleId> + '_ {
    rule_keys_for(table, jurisdiction, code, date).map(|(id, _)| id)
}

/// `rules_for`, each rule with its compact key.
pub(super) fn rule_keys_for<D>(
    table: &Table<D>,
    jurisdiction: JurisdictionId,
    code: TaxCodeId,
    date: Date,
) -> impl Iterator<Item = (RuleId, &ArchivedRuleKey)> + '_ {
    let (first, keys) = code_rule_keys(table, jurisdiction, code);
    keys.iter()
        .enumerate()
        .filter(move |(_, r)| r.in_force(date))
        .map(move |(i, r)| (RuleId((first + i) as u32), r))
}

/// The compact keys of every rule of `jurisdiction` for `code` (every period), walking
/// up the taxonomy to the nearest code that has any, and the id of the first: what
/// `rule_keys_for` filters by date.
#[inline]
pub(super) fn code_rule_keys<D>(
    table: &Table<D>,
    jurisdiction: JurisdictionId,
    code: TaxCodeId,
) -> (usize, &[ArchivedRuleKey]) {
    let usual = table.usual_slots(code);
    match usual.and_then(|slots| table.usual_rule(slots, jurisdiction, code)) {
        Some(rule) => table.usual_keys(rule),
        None => table.search_rule_keys(jurisdiction, code),
    }
}

/// The first holiday that suspends `code` in `jur` on `date`, found through the holiday
/// keys of the jurisdiction's place. `span` remembers, for one line's date, the keys of
/// the place last asked for (none when no holiday of the place is in force that day):
/// the jurisdictions of a set mostly share one place (a state and its local
/// jurisdictions), so a line searches the keys once rather than once per jurisdiction.
pub(super) fn holiday_for<'t, D>(
    table: &'t Table<D>,
    jur: &crate::Jurisdiction<'_>,
    code: TaxCodeId,
    date: Date,
    span: &mut Option<(u64, std::ops::Range<usize>)>,
) -> Option<(usize, &'t ArchivedHolidayRecord)> {
    let d = table.data();
    let keys = &d.holiday_keys;
    if keys.is_empty() {
        return None;
    }
    let region = jur.region().as_bytes();
    if region.len() > 6 {
        return None;
    }
    let place = place_key(jur.country_bytes(), region);
    let in_force =
        |k: &crate::model::ArchivedHolidayKey| date.within(k.from.to_native(), k.to.to_native());
    let range = match span {
        Some((p, range)) if *p == place => range.clone(),
        _ => {
            // A place with no holiday, or none of whose holidays is in force on the
            // date (the usual day), keeps an empty span: its other jurisdictions look
            // no further.
            let range = match table.holiday_place(place) {
                Some(p) if date.within(p.days.0, p.days.1) => {
                    let range = p.keys.0 as usize..p.keys.1 as usize;
                    match keys.get(range.clone()) {
                        Some(ks) if ks.iter().any(in_force) => range,
                        _ => 0..0,
                    }
                }
                _ => 0..0,
            };
            *span = Some((place, range.clone()));
            range
        }
    };
    let mut found: Option<(usize, &ArchivedHolidayRecord)> = None;
    for k in keys.get(range).unwrap_or_default() {
        if !in_force(k) {
            continue;
        }
        let i = k.holiday.to_native() as usize;
        // The earliest-written holiday wins, as when every holiday was scanned in order.
        if found.is_some_and(|(f, _)| f < i) {
            continue;
        }
        if let Some(h) = d.holidays.get(i) {
            if holiday_covers(table, h, jur, code, date) {
                found = Some((i, h));
            }
        }
    }
    found
}

fn holiday_covers<D>(
    table: &Table<D>,
    h: &ArchivedHolidayRecord,
    jur: &crate::Jurisdiction<'_>,
    code: TaxCodeId,
    date: Date,
) -> bool {
    if !date.within(h.from.to_native(), h.to.to_native()) {
        return false;
    }
    if jur.country().as_bytes() != h.country || jur.region() != h.region.as_str() {
        return false;
    }
    let cap = load_decimal(&h.max_unit);
    if cap != Decimal::MAX && cap.abs() > MAX_RULE_AMOUNT {
        return false;
    }
    let level_ok = matches!(jur.level(), Level::State | Level::Province)
        || (h.include_local && jur.level().is_local());
    let within = |c: &rkyv::rend::u32_le| table.tax_code_within(code, TaxCodeId(c.to_native()));
    level_ok && h.tax_codes.iter().any(within) && !h.exclude_codes.iter().any(within)
}
