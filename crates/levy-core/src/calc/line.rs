//! The line: its tax in every jurisdiction of the sale (`line_tax`), by the usual
//! line's direct path, the integer path or the decimal path, and its totals.

use rust_decimal::Decimal;

use crate::kinds::{Sourced, Sourcing, TaxType};
use crate::lookup::{Jurisdiction, JurisdictionId, RuleId};
use crate::model::load_decimal;
use crate::money::{round_minor, Currency};
use crate::resolve::Location;
use crate::table::Table;

use super::applied::{back_out, rule_in_range, Applied, Parts, Scratch, Terms};
use super::groups::SaleGroups;
use super::integer::direct_line;
use super::integer::{integer_line, whole_line_totals};
use super::schedule::{holiday_for, rule_keys_for};
use super::{normalized, JurisdictionTax, LineTax, Note, Sale, SaleLine, ZeroReason, MAX_RATE};

/// What every line of one calculation shares.
#[derive(Clone, Copy)]
pub(super) struct LineCtx<'a> {
    /// Whether a line may be taxed by `direct_line`: `false` when
    /// `usual_sale` already tried it on the sale's one line and it gave up.
    pub(super) direct: bool,
    pub(super) location: &'a Location,
    pub(super) sale: &'a Sale,
    pub(super) zero_reason: Option<ZeroReason>,
    pub(super) reverse_charge: bool,
    /// The jurisdictions as sourcing chose them; `None`: the location's own set.
    pub(super) sourced: Option<&'a [(JurisdictionId, Sourced)]>,
    pub(super) sourcing: Sourcing,
    /// What the answer covers: the destination's, or the lesser of both places' when the
    /// origin's jurisdictions are in it.
    pub(super) coverage: crate::Coverage,
}
/// The tax of one (checked) line, and whether any of its rules is a delivery charge's.
/// `shares` gives, per jurisdiction, the share of the sale's goods it taxes; empty in the
/// first pass, when a delivery rule counts in full. `groups` says how a rule with a
/// per-sale threshold is decided (see [`SaleGroups`]).
///
/// The usual line is taxed straight from the rule keys (`direct_line_tax`);
/// any other has its rules decoded (`decode_rules`), its amount excluding tax
/// backed out when the amount includes tax, and is taxed in integers when every rule
/// allows it ([`integer_line`]), else in decimals ([`decimal_entries`]).
pub(super) fn line_tax<D>(
    table: &Table<D>,
    ctx: &LineCtx<'_>,
    line: &SaleLine,
    scratch: &mut Scratch,
    shares: &[(JurisdictionId, Decimal)],
    groups: &mut SaleGroups<'_>,
    out: &mut LineTax,
) -> bool {
    let sale = ctx.sale;
    let qty = Decimal::from(line.quantity);
    let given_minor = if line.per_unit {
        line.amount * qty
    } else {
        line.amount
    };
    if direct_line_tax(table, ctx, line, given_minor, out) {
        return false;
    }
    let applied = scratch.applied();
    applied.clear();
    let proportional = decode_rules(table, ctx, line, shares, groups, applied);
    let currency = sale.currency;
    let excl_minor = if sale.tax_included && ctx.zero_reason.is_none() {
        back_out(applied, currency.to_major(given_minor), qty, currency)
    } else {
        given_minor
    };
    let entries = &mut out.jurisdictions;
    entries.clear();
    let (tax, holiday) = match integer_line(applied, excl_minor, entries) {
        // Every rule was fast: taxed in integers (see `integer_line`).
        Some(tax) => (tax, None),
        None => decimal_entries(applied, line.quantity, currency, excl_minor, entries),
    };
    let amounts = (given_minor, excl_minor, tax);
    line_totals(out, line, sale.tax_included, amounts, holiday);
    proportional
}

/// The usual line (taxed at the destination, nothing zeroed or exempted, amounts
/// excluding tax) whose rules are all fast and on no holiday: its entries and totals
/// straight from the rule keys, without decoding them (see `direct_line`).
/// `false`, with `out` to be filled afresh, for any other line.
#[inline]
fn direct_line_tax<D>(
    table: &Table<D>,
    ctx: &LineCtx<'_>,
    line: &SaleLine,
    given_minor: Decimal,
    out: &mut LineTax,
) -> bool {
    let sale = ctx.sale;
    let (true, None, false, None, true, false, Some(jset)) = (
        ctx.direct,
        ctx.zero_reason,
        ctx.reverse_charge,
        ctx.sourced,
        sale.customer.exemptions.is_empty(),
        sale.tax_included,
        ctx.location.jset,
    ) else {
        return false;
    };
    out.jurisdictions.clear();
    let direct = direct_line(
        table,
        jset,
        line,
        sale.date,
        given_minor,
        &mut out.jurisdictions,
    );
    let Some((minor, tax)) = direct else {
        return false;
    };
    whole_line_totals(out, line, minor, tax);
    true
}

/// Decodes the line's rules in every jurisdiction of the sale, once, onto `applied`,
/// each with its jurisdiction's [`Terms`]; answers whether any is a delivery charge's
/// (taxed in proportion to the goods: see `line_tax`).
fn decode_rules<D>(
    table: &Table<D>,
    ctx: &LineCtx<'_>,
    line: &SaleLine,
    shares: &[(JurisdictionId, Decimal)],
    groups: &mut SaleGroups<'_>,
    applied: &mut Vec<Applied>,
) -> bool {
    let Some(jset) = ctx.location.jset else {
        return false;
    };
    let (date, exempt) = (ctx.sale.date, &ctx.sale.customer.exemptions);
    let mut proportional = false;
    let mut holidays = None;
    let holiday_today = table.any_holiday_on(date);
    let (mut listed, mut own);
    let jurisdictions: &mut dyn Iterator<Item = (JurisdictionId, Sourced)> = match ctx.sourced {
        Some(list) => {
            listed = list.iter().copied();
            &mut listed
        }
        None => {
            own = table.jset(jset).map(|j| (j, Sourced::Destination));
            &mut own
        }
    };
    for (jid, sourced) in jurisdictions {
        let Some(jur) = table.jurisdiction(jid) else {
            continue;
        };
        let hol = if holiday_today {
            holiday_for(table, &jur, line.tax_code, date, &mut holidays)
        } else {
            None
        };
        // Most lines have nothing that could zero them: nothing to look up.
        let zeroing = ctx.zero_reason.is_some() || ctx.reverse_charge || !exempt.is_empty();
        let terms = Terms {
            jurisdiction: jid,
            sourced,
            zeroed: if zeroing { zeroed_in(ctx, &jur) } else { None },
            holiday: hol.map(|(i, h)| (load_decimal(&h.max_unit), h.cap_inclusive, i as u32)),
        };
        for (rid, key) in rule_keys_for(table, jid, line.tax_code, date) {
            // A fast rule is read from its key alone; any other from its record.
            let rule = match key.fast_rate() {
                Some(rate) => Some(Applied::fast(&terms, rid, rate)),
                None => decoded_rule(table, &terms, rid, shares, groups, &mut proportional),
            };
            applied.extend(rule);
        }
    }
    proportional
}

/// Rule `rid` decoded from its record for a line in the jurisdiction of `terms`; `None`
/// when its per-sale threshold keeps it out (see [`SaleGroups`]) or its numbers are out
/// of range (a damaged table). A delivery charge's rule sets `proportional` and is scaled
/// by its jurisdiction's share of `shares`.
fn decoded_rule<D>(
    table: &Table<D>,
    terms: &Terms,
    rid: RuleId,
    shares: &[(JurisdictionId, Decimal)],
    groups: &mut SaleGroups<'_>,
    proportional: &mut bool,
) -> Option<Applied> {
    let rule = table.rule(rid)?;
    if let Some((group, limit, above)) = rule.sale_condition() {
        if !groups.applies(group, limit, above) {
            return None;
        }
    }
    let plain = rule.is_plain();
    let rate = rule.rate();
    let parts = if plain {
        Parts {
            band: (Decimal::ZERO, Decimal::MAX),
            units: (Decimal::ZERO, Decimal::MAX),
            fee: Decimal::ZERO,
        }
    } else {
        Parts {
            band: rule.band(),
            units: rule.unit_range(),
            fee: rule.fee(),
        }
    };
    let in_range = if plain {
        rate.abs() <= MAX_RATE
    } else {
        rule_in_range(rate, parts.band, parts.units, parts.fee)
    };
    if !in_range {
        return None;
    }
    let share = if rule.is_proportional() {
        *proportional = true;
        match shares.iter().find(|(j, _)| *j == terms.jurisdiction) {
            Some(&(_, share)) => share,
            // First pass, or a delivery charge with no goods beside it: in full. A
            // jurisdiction the goods never name taxes none.
            None if shares.is_empty() => Decimal::ONE,
            None => Decimal::ZERO,
        }
    } else {
        Decimal::ONE
    };
    Some(Applied::decoded(terms, rid, rate, parts, plain, share))
}

/// What zeroes the tax of a line in `jur`, if anything: the whole sale's reason (an exempt
/// buyer, tax disabled, a zero-rate place), an exemption certificate of the jurisdiction's
/// region (with its index), or the reverse charge of a cross-border business sale of VAT
/// or GST.
#[inline]
fn zeroed_in(ctx: &LineCtx<'_>, jur: &Jurisdiction<'_>) -> Option<(Note, Option<usize>)> {
    let exemption = ctx
        .sale
        .customer
        .exemptions
        .iter()
        .position(|e| e.covers(jur.country(), jur.region(), jur.level(), jur.code()));
    match (ctx.zero_reason, exemption) {
        (Some(z), _) => Some((z.note(), None)),
        (None, Some(i)) => Some((Note::ExemptionCertificate, Some(i))),
        _ if ctx.reverse_charge && matches!(jur.tax_type(), TaxType::Vat | TaxType::Gst) => {
            Some((Note::ReverseCharge, None))
        }
        _ => None,
    }
}

/// The decimal path: the entries of every rule of `applied` on a line of `quantity` units,
/// `excl_minor` minor units excluding tax in all, pushed onto `entries`; answers the line's
/// tax (their taxes due, rounded once with [`round_minor`]) and the holiday that suspended
/// a rule, if one did.
fn decimal_entries(
    applied: &[Applied],
    quantity: u32,
    currency: Currency,
    excl_minor: Decimal,
    entries: &mut Vec<JurisdictionTax>,
) -> (Decimal, Option<u32>) {
    let qty = Decimal::from(quantity);
    let excl_major = currency.to_major(excl_minor);
    // One unit (the usual line) needs no division.
    let unit = if quantity == 1 {
        excl_major
    } else {
        excl_major / qty
    };
    let mut due_sum = Decimal::ZERO;
    let mut holiday = None;
    for a in applied {
        if a.is_whole() {
            due_sum += a.push_whole(excl_minor, entries);
            continue;
        }
        if let Some(h) = a.holiday_at(unit) {
            holiday = Some(h);
        }
        due_sum += a.push_entry((unit, excl_major, qty), currency, entries);
    }
    (round_minor(due_sum), holiday)
}

/// A line's totals in minor units. Tax included: the given amount holds the tax, which is
/// what remains once `excl_minor` was backed out. Excluded: `tax` is added to the amount.
/// `amounts` are the amount given, the amount excluding tax and the rounded tax.
fn line_totals(
    out: &mut LineTax,
    line: &SaleLine,
    tax_included: bool,
    amounts: (Decimal, Decimal, Decimal),
    holiday: Option<u32>,
) {
    let (given_minor, excl_minor, tax) = amounts;
    let (tax, excl, incl) = if tax_included {
        (given_minor - excl_minor, excl_minor, given_minor)
    } else {
        (tax, given_minor, given_minor + tax)
    };
    out.tax_code = line.tax_code;
    out.quantity = line.quantity;
    out.amount_excluding_tax = normalized(excl);
    out.tax = normalized(tax);
    out.amount_including_tax = normalized(incl);
    out.holiday = holiday;
}
