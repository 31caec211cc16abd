//! Per-order fees on retail deliveries (Colorado's and Minnesota's retail delivery fees):
//! charged once on a sale delivered into the state, apart from its sales tax, written on
//! the sale's first line that makes it a delivery.
//!
//! A fee is a [`crate::model::FeeRecord`] and the rules of its own jurisdiction: one with no
//! fee whose rate type is the fee's name, over the fee's whole life (what an exempt or
//! unknown answer names), and one per component and period, each with the component's
//! amount as its fee and the component's name as its rate type. No jurisdiction set holds
//! that jurisdiction, so the fee applies to a sale only here.

use rust_decimal::Decimal;

use crate::kinds::{Coverage, Sourced};
use crate::lookup::{JurisdictionId, RuleId, TaxCodeId};
use crate::model::load_decimal;
use crate::model::ArchivedFeeRecord;
use crate::resolve::Location;
use crate::table::Table;

use super::{normalized, Calculation, JurisdictionTax, Note, Sale, ZeroReason};

/// How a sale is delivered, for the per-order fees some states charge on retail
/// deliveries (see [`Table::apply_order_fees`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// The sale is a retail delivery: delivered by motor vehicle (the seller's or a
    /// carrier's) to the buyer's address. `false` for a sale taken away or picked up,
    /// curbside included, which owes no delivery fee.
    pub retail: bool,
    /// The seller's retail sales in the destination state in the previous calendar year, in
    /// major units, when it claims a fee's small-seller exemption; `None` claims none.
    pub seller_sales_previous_year: Option<Decimal>,
}

/// What a per-order fee did to a sale, one per fee of the destination's state that the
/// sale met (see [`Table::apply_order_fees`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeeOutcome {
    /// Charged: this many minor units, added to the line's tax and the totals.
    Charged(Decimal),
    /// Not owed: the buyer is exempt ([`Note::CustomerExempt`] or
    /// [`Note::ExemptionCertificate`]) or the seller is a small seller ([`Note::SmallSeller`]).
    Exempt(Note),
    /// The fee's amount on the sale's day is not known: nothing charged, the entry says
    /// [`Note::FeeUnknown`] and the calculation's coverage is at most `PARTIAL`.
    Unknown,
}

impl<D> Table<D> {
    /// Adds to `calc` (the calculation of `sale` at `location`) the per-order fees of the
    /// destination's state that the delivery owes: on the first line whose product is
    /// subject to the state's sales tax (and not one the fee excludes), one entry per
    /// component of the fee in force on the sale's day, its amount in `tax_due` and `fee`
    /// (minor units) under the note [`Note::PerOrderFee`]; the line's tax, its amount
    /// including tax and the totals grow by the fee. A fee that needs a least total of
    /// taxable items applies only from it. An exempt buyer or a small seller gets one entry
    /// of nothing saying why; a day whose amount is not known gets one saying so, and the
    /// calculation's coverage falls to `PARTIAL`. A sale that is not a retail delivery, that
    /// owes nothing by its mode (tax disabled, a zero-rate place), or that has no such line
    /// is left as it was.
    ///
    /// Call it once, after [`Table::calculate`] (or its kin) and before reading totals;
    /// the outcome of each fee met is returned.
    pub fn apply_order_fees(
        &self,
        location: &Location,
        sale: &Sale,
        delivery: &Delivery,
        calc: &mut Calculation,
    ) -> Vec<FeeOutcome> {
        let mut outcomes = Vec::new();
        if !delivery.retail || location.country() != "US" || calc.lines.is_empty() {
            return outcomes;
        }
        if matches!(
            calc.zero_reason,
            Some(ZeroReason::AutomaticTaxDisabled | ZeroReason::ZeroRate)
        ) {
            return outcomes;
        }
        let region = self.location_region(location);
        for fee in self
            .data()
            .fees
            .iter()
            .filter(|f| f.region.as_str() == region)
        {
            if sale.date.0 < fee.from.to_native() {
                continue;
            }
            if let Some(outcome) = apply_fee(self, fee, sale, delivery, calc) {
                outcomes.push(outcome);
            }
        }
        outcomes
    }
}
/// One fee on one sale: `None` when the sale does not meet it.
fn apply_fee<D>(
    table: &Table<D>,
    fee: &ArchivedFeeRecord,
    sale: &Sale,
    delivery: &Delivery,
    calc: &mut Calculation,
) -> Option<FeeOutcome> {
    let jurisdiction = JurisdictionId(fee.jurisdiction.to_native());
    let exempt_buyer = fee_exempt_buyer(fee, sale, calc);
    let counting = fee_delivery_lines(table, fee, sale, calc, exempt_buyer.is_some());
    let &first = counting.first()?;
    if fee.needs_min_taxable && !meets_min_taxable(fee, sale, calc, &counting) {
        return None;
    }
    let date = sale.date;
    let name_rule = table
        .rules_of(jurisdiction)
        .find(|(_, r)| r.fee().is_zero())
        .map(|(id, _)| id);
    if let Some((note, exemption)) = exempt_buyer {
        let rule = name_rule?;
        let e = fee_entry(jurisdiction, rule, Decimal::ZERO, note, exemption);
        calc.lines[first].jurisdictions.push(e);
        return Some(FeeOutcome::Exempt(note));
    }
    if small_seller(fee, delivery, date) {
        let rule = name_rule?;
        let e = fee_entry(jurisdiction, rule, Decimal::ZERO, Note::SmallSeller, None);
        calc.lines[first].jurisdictions.push(e);
        return Some(FeeOutcome::Exempt(Note::SmallSeller));
    }
    let components = fee_components(table, jurisdiction, sale);
    if fee_unknown_on(fee, date) || components.is_empty() {
        let rule = name_rule?;
        let e = fee_entry(jurisdiction, rule, Decimal::ZERO, Note::FeeUnknown, None);
        calc.lines[first].jurisdictions.push(e);
        calc.coverage = calc.coverage.min(Coverage::Partial);
        return Some(FeeOutcome::Unknown);
    }
    let total = charge_fee(calc, first, jurisdiction, components);
    Some(FeeOutcome::Charged(total))
}

/// Why the buyer owes no fee, when the fee exempts exempt buyers and the buyer is one:
/// an exempt customer ([`Note::CustomerExempt`]), or one holding an exemption
/// certificate for the fee's state ([`Note::ExemptionCertificate`], with the
/// certificate's index in the customer's exemptions).
#[inline]
fn fee_exempt_buyer(
    fee: &ArchivedFeeRecord,
    sale: &Sale,
    calc: &Calculation,
) -> Option<(Note, Option<usize>)> {
    match calc.zero_reason {
        Some(ZeroReason::CustomerExempt) if fee.exempt_buyers => Some((Note::CustomerExempt, None)),
        _ if fee.exempt_buyers => sale
            .customer
            .exemptions
            .iter()
            .position(|e| e.country == "US" && e.region == fee.region.as_str())
            .map(|i| (Note::ExemptionCertificate, Some(i))),
        _ => None,
    }
}

/// The indices of the lines that make the sale a delivery the fee reaches: a product
/// the fee does not exclude, on which the fee's state charges tax. An exempt buyer's
/// lines owe no tax: their products decide.
fn fee_delivery_lines<D>(
    table: &Table<D>,
    fee: &ArchivedFeeRecord,
    sale: &Sale,
    calc: &Calculation,
    exempt_buyer: bool,
) -> Vec<usize> {
    let counts = |index: usize| -> bool {
        let code = sale.lines[index].tax_code;
        if fee_excludes(table, fee, code) {
            return false;
        }
        exempt_buyer
            || calc.lines[index].jurisdictions.iter().any(|j| {
                !j.tax_due.is_zero()
                    && table.jurisdiction(j.jurisdiction).is_some_and(|x| {
                        x.level() == crate::Level::State && x.region() == fee.region.as_str()
                    })
            })
    };
    (0..calc.lines.len().min(sale.lines.len()))
        .filter(|&i| counts(i))
        .collect()
}

/// The components of the fee in force on the sale's day: each amount-bearing rule of
/// the fee's jurisdiction with its amount in the sale's minor units.
#[inline]
fn fee_components<D>(
    table: &Table<D>,
    jurisdiction: JurisdictionId,
    sale: &Sale,
) -> Vec<(RuleId, Decimal)> {
    let date = sale.date;
    table
        .rules_of(jurisdiction)
        .filter(|(_, r)| {
            let (from, to) = r.interval();
            !r.fee().is_zero() && from <= date && date <= to
        })
        .map(|(id, r)| (id, sale.currency.to_minor(r.fee())))
        .collect()
}

/// Whether `code` is, or descends from, a code the fee excludes.
fn fee_excludes<D>(table: &Table<D>, fee: &ArchivedFeeRecord, code: TaxCodeId) -> bool {
    fee.excluded_codes
        .iter()
        .any(|c| table.tax_code_within(code, TaxCodeId(c.to_native())))
}

/// Whether the seller's claim makes it a small seller the fee exempts on `date`.
fn small_seller(fee: &ArchivedFeeRecord, delivery: &Delivery, date: crate::Date) -> bool {
    let Some(sales) = delivery.seller_sales_previous_year else {
        return false;
    };
    if date.0 < fee.small_seller_from.to_native() {
        return false;
    }
    let limit = load_decimal(&fee.small_seller_amount);
    match fee.small_seller_rule {
        1 => sales <= limit,
        2 => sales < limit,
        _ => false,
    }
}

/// Whether the taxable items on the delivery lines (`counting`) reach the least total the
/// fee needs before it applies.
#[inline]
fn meets_min_taxable(
    fee: &ArchivedFeeRecord,
    sale: &Sale,
    calc: &Calculation,
    counting: &[usize],
) -> bool {
    let total: Decimal = counting
        .iter()
        .map(|&i| calc.lines[i].amount_excluding_tax)
        .sum();
    let least = sale.currency.to_minor(load_decimal(&fee.min_taxable));
    total >= least
}

/// Whether `date` falls in a period over which the fee's amount is not known.
#[inline]
fn fee_unknown_on(fee: &ArchivedFeeRecord, date: crate::Date) -> bool {
    fee.unknown
        .iter()
        .any(|p| date.within(p.0.to_native(), p.1.to_native()))
}

/// The entry a fee writes on a line: no rate or taxable base, `due` (minor units) as both
/// its tax due and its fee, sourced at the destination.
#[inline]
fn fee_entry(
    jurisdiction: JurisdictionId,
    rule: RuleId,
    due: Decimal,
    note: Note,
    exemption: Option<usize>,
) -> JurisdictionTax {
    JurisdictionTax {
        rate: Decimal::ZERO,
        taxable_base: Decimal::ZERO,
        tax_due: due,
        fee: due,
        exemption,
        jurisdiction,
        rule,
        note,
        sourced: Sourced::Destination,
    }
}

/// Charges the fee's components on line `first`: one [`Note::PerOrderFee`] entry per
/// component, and the line's tax, its amount including tax and the totals grown by their
/// rounded sum, which is returned.
fn charge_fee(
    calc: &mut Calculation,
    first: usize,
    jurisdiction: JurisdictionId,
    components: Vec<(RuleId, Decimal)>,
) -> Decimal {
    let mut total = Decimal::ZERO;
    for (rule, due) in components {
        total += due;
        let e = fee_entry(jurisdiction, rule, normalized(due), Note::PerOrderFee, None);
        calc.lines[first].jurisdictions.push(e);
    }
    let total = normalized(crate::round_minor(total));
    let line = &mut calc.lines[first];
    line.tax = normalized(line.tax + total);
    line.amount_including_tax = normalized(line.amount_including_tax + total);
    calc.total_tax = normalized(calc.total_tax + total);
    calc.total_including_tax = normalized(calc.total_including_tax + total);
    total
}
