//! The integer path: a line whose rules are all plain rates of at most 12 decimals, on a
//! whole number of minor units, taxed in integer arithmetic, the decimal path's answer to
//! the last digit; and the usual line taxed by it straight from the rule keys
//! (`direct_line`).

use rust_decimal::Decimal;

use crate::date::Date;
use crate::kinds::Sourced;
use crate::lookup::{JsetId, JurisdictionId, RuleId};
use crate::table::Table;

use super::applied::Applied;
use super::schedule::{code_rule_keys, holiday_for};
use super::{JurisdictionTax, LineTax, Note, SaleLine, MAX_AMOUNT_MINOR};
/// The tax of a line of `amount` minor units (excluding tax) in the jurisdictions of
/// `jset`, in integer arithmetic, its entries pushed onto `entries` straight from the rule
/// keys: what `line_tax` and `integer_line` give for such a line, without an `Applied`
/// per rule. `None`, with `entries` as they were, when a jurisdiction is on a holiday, a
/// rule is not fast (a band, a threshold, a fee, a delivery share, a finer rate), or the
/// amount is outside the integer path's range: the general path answers those.
pub(super) fn direct_line<D>(
    table: &Table<D>,
    jset: JsetId,
    line: &SaleLine,
    date: Date,
    amount: Decimal,
    entries: &mut Vec<JurisdictionTax>,
) -> Option<(i64, i64)> {
    let minor = integer_amount(amount)?;
    let mut holidays = None;
    // On a day with no holiday in force anywhere (most days), no jurisdiction is on one.
    let holiday_today = table.any_holiday_on(date);
    let jurisdictions = table.jurisdiction_count();
    let usual = table.usual_slots(line.tax_code);
    push_fast_entries(entries, minor, amount, |fast| {
        for jid in table.jset(jset) {
            // A jurisdiction the table lacks (a damaged table) is the general path's to
            // skip; a sound one's record is read only when a holiday may apply.
            if jid.0 as usize >= jurisdictions {
                return None;
            }
            if holiday_today {
                let jur = table.jurisdiction(jid)?;
                if holiday_for(table, &jur, line.tax_code, date, &mut holidays).is_some() {
                    return None;
                }
            }
            let usual = usual.and_then(|slots| table.usual_rule(slots, jid, line.tax_code));
            let (first, keys) = match usual {
                // The usual code's one rule of the jurisdiction, read from its slot.
                Some(u) if u.len == 1 => {
                    if date.within(u.from, u.to) {
                        if !u.fast {
                            return None;
                        }
                        let who = (jid, RuleId(u.first), Sourced::Destination);
                        fast.push(who, (u.rate, u.mantissa, u32::from(u.scale)))?;
                    }
                    continue;
                }
                Some(u) => table.usual_keys(u),
                None => code_rule_keys(table, jid, line.tax_code),
            };
            for (i, key) in keys.iter().enumerate() {
                if !key.in_force(date) {
                    continue;
                }
                let rid = RuleId((first + i) as u32);
                fast.push((jid, rid, Sourced::Destination), key.fast_rate()?)?;
            }
        }
        Some(())
    })
    .map(|tax| (minor, tax))
}

/// `line_totals` (`line.rs`) of a line taxed at the destination in whole minor units: `minor`
/// excluding tax (at most [`MAX_AMOUNT_MINOR`]) and its rounded `tax` (at most ten times it
/// either way), the amounts as `line_totals` gives them, built from integers.
pub(super) fn whole_line_totals(out: &mut LineTax, line: &SaleLine, minor: i64, tax: i64) {
    out.tax_code = line.tax_code;
    out.quantity = line.quantity;
    // Whole numbers at scale 0 have no trailing zeros to drop: what `normalized` gives.
    out.amount_excluding_tax = whole(minor);
    out.tax = whole(tax);
    out.amount_including_tax = whole(minor + tax);
    out.holiday = None;
}

/// `n` as a decimal at scale 0, as `Decimal::from` gives it; a non-negative `n` (every
/// amount and, at a rate of zero or more, every tax) is put together from its two 32-bit
/// halves without the sign's work.
#[inline]
fn whole(n: i64) -> Decimal {
    match u64::try_from(n) {
        Ok(u) => Decimal::from_parts(u as u32, (u >> 32) as u32, 0, false, 0),
        Err(_) => Decimal::from(n),
    }
}

/// 10^k for k in 0..=12.
const POW10: [i64; 13] = {
    let mut t = [1i64; 13];
    let mut k = 1;
    while k < 13 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// The integer path: when every applied rule is fast (a plain rate held as a mantissa and
/// a scale of at most 12), nothing zeroes or suspends it, and the amount is a whole number
/// of minor units, fills `entries` and returns the line's rounded tax; else `None`, and the
/// decimal path runs.
///
/// Each entry's tax due is `amount × mantissa` at the rate's scale, exact; the line's tax
/// is their sum at scale 12, rounded half away from zero to a whole minor unit. That is
/// the decimal path's arithmetic to the last digit: `Decimal` multiplies exactly in this
/// range (amount at most 10^15, rate at most 10, so every product is below 10^28), and
/// [`crate::round_minor`] rounds half away from zero.
pub(super) fn integer_line(
    applied: &[Applied],
    excl_minor: Decimal,
    entries: &mut Vec<JurisdictionTax>,
) -> Option<Decimal> {
    let amount = integer_amount(excl_minor)?;
    push_fast_entries(entries, amount, excl_minor, |fast| {
        for a in applied {
            if a.zeroed.is_some() || a.holiday.is_some() {
                return None;
            }
            let (m, scale) = a.fast?;
            fast.push((a.jurisdiction, a.rule, a.sourced), (a.rate, m, scale))?;
        }
        Some(())
    })
    .map(Decimal::from)
}

/// A line's entries on the integer path as its rules are pushed, and the sum of their
/// taxes due at scale 12 (see [`push_fast_entries`]).
struct FastEntries<'a> {
    entries: &'a mut Vec<JurisdictionTax>,
    amount: i64,
    excl_minor: Decimal,
    sum: i128,
}

impl FastEntries<'_> {
    /// Adds the entry of a fast rule: who (jurisdiction, rule, the address that brought it
    /// in) and the rate as a decimal and as its mantissa and scale. `None` when the rule is
    /// out of the path's range.
    #[inline(always)]
    fn push(
        &mut self,
        who: (JurisdictionId, RuleId, Sourced),
        rate: (Decimal, i64, u32),
    ) -> Option<()> {
        let ((jurisdiction, rule, sourced), (rate, m, scale)) = (who, rate);
        let (tax_due, scaled) = fast_due(m, scale, self.amount)?;
        self.sum = self.sum.checked_add(scaled)?;
        self.entries.push(JurisdictionTax {
            jurisdiction,
            rule,
            rate,
            taxable_base: self.excl_minor,
            tax_due,
            fee: Decimal::ZERO,
            note: Note::RateFrac,
            exemption: None,
            sourced,
        });
        Some(())
    }
}

/// The integer path's line: `rules` is handed the line's [`FastEntries`] (on a line of
/// `amount` minor units, `excl_minor` as a decimal, pushed onto `entries`), and pushes each
/// of the line's rules in turn. The answer is the line's tax in minor units, the sum of the
/// taxes due rounded once, half away from zero. When `rules` gives up (`None`: a rule that is not
/// fast, a holiday) or a rule is out of the path's range, `entries` are left as they were
/// and the answer is `None`: the decimal path starts afresh.
fn push_fast_entries(
    entries: &mut Vec<JurisdictionTax>,
    amount: i64,
    excl_minor: Decimal,
    rules: impl FnOnce(&mut FastEntries<'_>) -> Option<()>,
) -> Option<i64> {
    let start = entries.len();
    let mut fast = FastEntries {
        entries,
        amount,
        excl_minor,
        sum: 0,
    };
    let done = rules(&mut fast);
    let (entries, sum) = (fast.entries, fast.sum);
    // At most 10^15 minor units at a rate of at most 10: the tax, and the amount including
    // it, fit an `i64` (a forged key's may not, and is the general path's to refuse).
    let tax = done
        .and_then(|()| i64::try_from(round_half_away(sum, i128::from(POW10[12]))).ok())
        .filter(|&tax| amount.checked_add(tax).is_some());
    if tax.is_none() {
        entries.truncate(start);
    }
    tax
}

/// A line amount in minor units as the integer path takes it: a whole, non-negative number
/// of at most [`MAX_AMOUNT_MINOR`]; `None` for any other.
#[inline]
fn integer_amount(amount: Decimal) -> Option<i64> {
    if amount.scale() != 0 || amount.is_sign_negative() {
        return None;
    }
    i64::try_from(amount.mantissa())
        .ok()
        .filter(|&a| a <= MAX_AMOUNT_MINOR)
}

/// A fast rule's tax due on a line of `amount` minor units, the rate being `m ×
/// 10^-scale`: as the entry shows it (exact, normalized) and scaled to 10^-12, for the
/// line's sum. `None` when the scale is beyond the integer path's.
#[inline]
fn fast_due(m: i64, scale: u32, amount: i64) -> Option<(Decimal, i128)> {
    let due = i128::from(amount) * i128::from(m);
    // The rate at scale 12: at most 10^13 for a sound key (a rate of at most 10), checked
    // so that a forged key is refused rather than wrapped; the product with an amount of
    // at most 10^15 then fits an `i128` without a check.
    let m12 = m.checked_mul(*POW10.get(12usize.checked_sub(scale as usize)?)?)?;
    let scaled = i128::from(amount) * i128::from(m12);
    Some((normalized_parts(due, scale)?, scaled))
}

/// `n / d` rounded half away from zero (`d` positive).
#[inline]
fn round_half_away(n: i128, d: i128) -> i128 {
    if let (Ok(n), Ok(d)) = (u64::try_from(n), u64::try_from(d)) {
        // The usual case, a positive tax below 1.8 × 10^7 minor units: 64-bit division.
        let (q, r) = (n / d, n % d);
        return i128::from(q + u64::from(r >= d - r));
    }
    let (q, r) = (n / d, n % d);
    if r.abs() >= d - r.abs() {
        q + n.signum()
    } else {
        q
    }
}

/// The decimal `n × 10^-scale` without trailing zeros, as [`Decimal::normalize`] gives it;
/// `None` outside `Decimal`'s range.
#[inline]
fn normalized_parts(mut n: i128, mut scale: u32) -> Option<Decimal> {
    if n == 0 {
        return Some(Decimal::ZERO);
    }
    match u64::try_from(n.unsigned_abs()) {
        Ok(mut u) => {
            while scale > 0 && u % 10 == 0 {
                u /= 10;
                scale -= 1;
            }
            // The usual tax due fits an `i64`: built from it without the 96-bit checks.
            if let Ok(v) = i64::try_from(u) {
                return Decimal::try_new(if n < 0 { -v } else { v }, scale).ok();
            }
            n = if n < 0 { -i128::from(u) } else { i128::from(u) };
        }
        Err(_) => {
            while scale > 0 && n % 10 == 0 {
                n /= 10;
                scale -= 1;
            }
        }
    }
    Decimal::try_from_i128_with_scale(n, scale).ok()
}
