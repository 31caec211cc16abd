//! The totals: the sale's lines taxed together (per-sale threshold groups, delivery charges
//! in proportion to the goods), rounded by line or once per invoice, and summed.

use rust_decimal::Decimal;

use crate::kinds::Rounding;
use crate::lookup::JurisdictionId;
use crate::money::{round_minor, Currency};
use crate::table::Table;
use crate::taxability::Taxability;

use super::applied::Scratch;
use super::groups::SaleGroups;
use super::line::line_tax;
use super::line::LineCtx;
use super::{
    normalized, CalcError, Calculation, LineTax, SaleLine, MAX_AMOUNT_MINOR, MAX_QUANTITY,
};
/// Fills `out` with the calculation of the sale of `ctx`: its lines (`fill_lines`),
/// then the sale's rounding, totals and what the matrix knows of its products. On an
/// error `out` holds no lines.
pub(super) fn calculate_lines<D>(
    table: &Table<D>,
    out: &mut Calculation,
    ctx: LineCtx<'_>,
    scratch: &mut Scratch,
) -> Result<(), CalcError> {
    let LineCtx {
        location,
        sale,
        zero_reason,
        ..
    } = ctx;
    out.reset(table.header().content_hash, sale);
    let mut lines = std::mem::take(&mut out.lines);
    lines.truncate(sale.lines.len());
    let result = fill_lines(table, &ctx, scratch, &mut lines);
    out.lines = lines;
    match result {
        Ok(()) => {}
        Err(e) => {
            out.lines.clear();
            return Err(e);
        }
    }
    let lines = &mut out.lines;
    let rounding = if sale.rounding == Rounding::Invoice
        && !sale.tax_included
        && zero_reason.is_none()
        && table.region_invoice_rounding(location.country(), table.location_region(location))
    {
        round_invoice(lines);
        Rounding::Invoice
    } else {
        Rounding::Line
    };
    let (total_tax, total_excl, total_incl) = line_sums(lines);
    let taxability = lines_taxability(table, ctx, lines);
    out.rounding = rounding;
    out.sourcing = ctx.sourcing;
    out.coverage = with_taxability(ctx.coverage, taxability);
    out.taxability = taxability;
    out.total_tax = normalized(total_tax);
    out.total_excluding_tax = normalized(total_excl);
    out.total_including_tax = normalized(total_incl);
    out.zero_reason = zero_reason;
    Ok(())
}

/// What the matrix knows of each line's product, written on each line, and of the
/// sale's; a sale that owes nothing whatever the product (an exempt buyer, tax disabled,
/// a zero-rate place) needs nothing of it.
fn lines_taxability<D>(table: &Table<D>, ctx: LineCtx<'_>, lines: &mut [LineTax]) -> Taxability {
    let sale = ctx.sale;
    let mut taxability = Taxability::Known;
    for (l, sl) in lines.iter_mut().zip(&sale.lines) {
        l.taxability = match ctx.zero_reason {
            Some(_) => Taxability::Known,
            None => table.line_taxability(sl.tax_code, &l.jurisdictions, sale.date),
        };
        if l.taxability == Taxability::Unknown {
            taxability = Taxability::Unknown;
        }
    }
    taxability
}

/// Fills `lines` (truncated to at most the sale's line count; entries already there are
/// overwritten, their vectors reused) with the tax of every line of the sale: each line
/// with every per-sale threshold taken as met and every delivery charge in full, then
/// the lines of a threshold group again on the group's total, and the delivery charges
/// again on the goods' shares.
fn fill_lines<D>(
    table: &Table<D>,
    ctx: &LineCtx<'_>,
    scratch: &mut Scratch,
    lines: &mut Vec<LineTax>,
) -> Result<(), CalcError> {
    let sale = ctx.sale;
    // Delivery lines (not goods), and those of them whose tax waits for the goods' shares.
    let mut delivery = Vec::new();
    let mut waiting = Vec::new();
    // The per-sale threshold groups each line's rules name, as (line, group).
    let mut grouped: Vec<(usize, u32)> = Vec::new();
    for (index, line) in sale.lines.iter().enumerate() {
        check_line(table, index, line)?;
        if index == lines.len() {
            lines.push(LineTax::empty(line.tax_code));
        }
        let mut groups = SaleGroups::first(&mut grouped, index);
        let proportional = line_tax(
            table,
            ctx,
            line,
            scratch,
            &[],
            &mut groups,
            &mut lines[index],
        );
        if table.tax_code_is_delivery(line.tax_code) {
            delivery.push(index);
        }
        if proportional {
            waiting.push(index);
        }
    }
    if !grouped.is_empty() {
        // The first pass took every per-sale threshold as met; now that the lines'
        // amounts excluding tax are known, the grouped lines are taxed again on each
        // group's total.
        let totals = group_totals(lines, &grouped, sale.currency);
        let mut lines_grouped: Vec<usize> = grouped.iter().map(|&(i, _)| i).collect();
        lines_grouped.dedup();
        for i in lines_grouped {
            let mut groups = SaleGroups::Totals(&totals);
            line_tax(
                table,
                ctx,
                &sale.lines[i],
                scratch,
                &[],
                &mut groups,
                &mut lines[i],
            );
        }
    }
    if !waiting.is_empty() {
        let shares = goods_shares(lines, &delivery);
        for &i in &waiting {
            let mut groups = SaleGroups::None;
            line_tax(
                table,
                ctx,
                &sale.lines[i],
                scratch,
                &shares,
                &mut groups,
                &mut lines[i],
            );
        }
    }
    Ok(())
}

/// Checks line `index` of a sale: its quantity, its amount and its tax code.
fn check_line<D>(table: &Table<D>, index: usize, line: &SaleLine) -> Result<(), CalcError> {
    if line.quantity == 0 || line.quantity > MAX_QUANTITY {
        return Err(CalcError::Quantity { line: index });
    }
    // A whole amount (the usual) compares as an integer; any other as a decimal.
    let too_large = if line.amount.scale() == 0 {
        line.amount.mantissa() > i128::from(MAX_AMOUNT_MINOR)
    } else {
        line.amount > Decimal::from(MAX_AMOUNT_MINOR)
    };
    if line.amount.is_sign_negative() || too_large {
        return Err(CalcError::Amount { line: index });
    }
    if table
        .data()
        .tax_codes
        .get(line.tax_code.0 as usize)
        .is_none()
    {
        return Err(CalcError::TaxCode {
            line: index,
            code: line.tax_code.0,
        });
    }
    Ok(())
}

/// The sums of the lines' tax, amounts excluding tax and amounts including it. A one-line
/// sale (most of them) takes its line's amounts as they are: adding them to zero gives the
/// same value at the same scale.
fn line_sums(lines: &[LineTax]) -> (Decimal, Decimal, Decimal) {
    match lines {
        [l] => (l.tax, l.amount_excluding_tax, l.amount_including_tax),
        _ => lines.iter().fold(
            (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO),
            |(t, e, i), l| {
                (
                    t + l.tax,
                    e + l.amount_excluding_tax,
                    i + l.amount_including_tax,
                )
            },
        ),
    }
}

/// Rounds a sale's tax once and shares it out (amounts excluding tax): the total is the
/// unrounded sum of every line's tax due, rounded half up; each line starts from its own
/// rounded tax, and the difference (a few minor units at most) goes, one unit each, to the
/// lines whose own rounding moved them furthest the other way (the earlier line on a tie).
/// Every line keeps `excluding + tax == including`.
fn round_invoice(lines: &mut [LineTax]) {
    let due: Vec<Decimal> = lines
        .iter()
        .map(|l| l.jurisdictions.iter().map(|j| j.tax_due).sum())
        .collect();
    let total = round_minor(due.iter().copied().sum());
    let mut taxes: Vec<Decimal> = due.iter().map(|d| round_minor(*d)).collect();
    let mut diff = total - taxes.iter().copied().sum::<Decimal>();
    // Lines by how far their rounding moved them down (due - rounded), most first.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| {
        (due[b] - taxes[b])
            .cmp(&(due[a] - taxes[a]))
            .then(a.cmp(&b))
    });
    let mut k = 0;
    while diff > Decimal::ZERO && !order.is_empty() {
        taxes[order[k % order.len()]] += Decimal::ONE;
        diff -= Decimal::ONE;
        k += 1;
    }
    let mut k = 0;
    while diff < Decimal::ZERO && !order.is_empty() {
        // From the other end: the lines rounded up the most give a unit back, never below
        // zero.
        let i = order[order.len() - 1 - (k % order.len())];
        if taxes[i] > Decimal::ZERO {
            taxes[i] -= Decimal::ONE;
            diff += Decimal::ONE;
        }
        k += 1;
        if k > 4 * order.len() {
            break;
        }
    }
    for (l, t) in lines.iter_mut().zip(taxes) {
        l.tax = normalized(t);
        l.amount_including_tax = normalized(l.amount_excluding_tax + t);
    }
}

/// Each per-sale threshold group's total: the amounts excluding tax of the lines whose
/// rules name it, in major units.
fn group_totals(
    lines: &[LineTax],
    grouped: &[(usize, u32)],
    currency: Currency,
) -> Vec<(u32, Decimal)> {
    let mut totals: Vec<(u32, Decimal)> = Vec::new();
    for &(i, group) in grouped {
        let amount = lines
            .get(i)
            .map_or(Decimal::ZERO, |l| l.amount_excluding_tax);
        match totals.iter_mut().find(|(g, _)| *g == group) {
            Some((_, t)) => *t += amount,
            None => totals.push((group, amount)),
        }
    }
    for (_, t) in totals.iter_mut() {
        *t = currency.to_major(*t);
    }
    totals
}

/// A calculation's coverage, at most `PARTIAL` when a line's product treatment is unknown.
pub(super) fn with_taxability(
    coverage: crate::Coverage,
    taxability: Taxability,
) -> crate::Coverage {
    match taxability {
        Taxability::Known => coverage,
        Taxability::Unknown => coverage.min(crate::Coverage::Partial),
    }
}

/// For each jurisdiction of the goods lines (every line not in `delivery`), the share of the
/// goods' amount it taxes: the sum over goods lines of the largest taxable base of an entry
/// of that jurisdiction that owes tax (at most the line's amount), over the sum of the goods'
/// amounts. With no goods amount at all, a delivery charge stands alone and counts in full
/// (`ONE` for every jurisdiction).
fn goods_shares(lines: &[LineTax], delivery: &[usize]) -> Vec<(JurisdictionId, Decimal)> {
    let mut total = Decimal::ZERO;
    let mut taxed: Vec<(JurisdictionId, Decimal)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if delivery.contains(&i) {
            continue;
        }
        total += l.amount_excluding_tax;
        for e in &l.jurisdictions {
            if !taxed.iter().any(|(j, _)| *j == e.jurisdiction) {
                taxed.push((e.jurisdiction, Decimal::ZERO));
            }
        }
        for (j, sum) in taxed.iter_mut() {
            let base = l
                .jurisdictions
                .iter()
                .filter(|e| e.jurisdiction == *j && e.tax_due > Decimal::ZERO)
                .map(|e| e.taxable_base)
                .max()
                .unwrap_or(Decimal::ZERO)
                .min(l.amount_excluding_tax);
            *sum += base;
        }
    }
    if total.is_zero() {
        return Vec::new();
    }
    taxed.into_iter().map(|(j, sum)| (j, sum / total)).collect()
}
