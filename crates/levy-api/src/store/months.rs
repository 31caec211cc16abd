//! The ledger's monthly sales per place, for economic-nexus monitoring, as pure functions:
//! what a transaction, a refund, a reversal and a deletion do to the sales of a month. Kept
//! in both modes, per account, place (country and region), currency and calendar month
//! (UTC), in the same write as the record ([`super::recipes`]); a ledger from before they
//! were kept computes them once from its records ([`months_of`]).
//!
//! - A transaction adds its sales (every line's amount excluding tax: gross sales), its
//!   taxable sales (the lines with tax, or taxable where the seller does not collect) and
//!   one transaction to the month of its `transacted_at`.
//! - A refund takes its sales off the month of its own `processed_at`, so a refund in a
//!   later month lowers that later month. It takes the transaction out of the count only
//!   when it leaves nothing of it to refund (a full refund, or the last of partial ones); a
//!   partial refund leaves the count alone.
//! - A reversal undoes its refund in the refund's month (the refund did not happen),
//!   unless the transaction was deleted since: the deletion took off only what remained.
//! - A deletion takes what remains of the transaction (after its refunds) off the
//!   transaction's own month, and the transaction out of the count unless a refund already
//!   took it out.
//!
//! Amounts are in minor units, like every amount the ledger keeps.

use rust_decimal::Decimal;

use super::records::{LineRecord, RefundRecord, TransactionRecord};
use super::rules::Refunded;

/// A change to one month's sales of a place (the place and currency are the
/// transaction's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonthChange {
    /// `YYYY-MM`, UTC.
    pub month: String,
    /// Sales excluding tax, minor units.
    pub gross: Decimal,
    /// The part of them on lines with tax.
    pub taxable: Decimal,
    /// Transactions (`1`, `-1` or `0`).
    pub count: i64,
}

/// The `YYYY-MM` (UTC) of Unix seconds.
pub fn month_key(secs: i64) -> String {
    let (y, m, _) = levy_core::Date::from_unix_seconds(secs).ymd();
    format!("{y:04}-{m:02}")
}

/// Whether a line is a taxable sale, as a taxable-sales threshold counts it: taxed, or
/// taxable where the seller does not collect (an entry `NOT_REGISTERED`: its rule would tax
/// the line there; a zero-rate rule reads as exempt instead). What is not collected still
/// counts toward a state's threshold, else a seller would never cross where it has not
/// registered yet.
fn taxable(line: &LineRecord) -> bool {
    line.tax_amount > Decimal::ZERO
        || line
            .jurisdictions
            .iter()
            .any(|j| j.note.starts_with("NOT_REGISTERED"))
}

/// Whether nothing remains of `tx` to refund (`left` as [`Refunded::remaining`] gives
/// it), for a transaction that had something.
pub fn fully_refunded(tx: &TransactionRecord, left: &[(Decimal, Decimal)]) -> bool {
    let had = tx
        .lines
        .iter()
        .any(|l| !l.amount_excluding_tax.is_zero() || !l.tax_amount.is_zero());
    had && left.iter().all(|(s, t)| s.is_zero() && t.is_zero())
}

/// A new transaction: its sales, taxable sales and one transaction, in its month.
pub fn transaction_month(tx: &TransactionRecord) -> MonthChange {
    MonthChange {
        month: month_key(tx.processed_at),
        gross: tx.lines.iter().map(|l| l.amount_excluding_tax).sum(),
        taxable: tx
            .lines
            .iter()
            .filter(|l| taxable(l))
            .map(|l| l.amount_excluding_tax)
            .sum(),
        count: 1,
    }
}

/// A refund's (negative) sales in its own month; `left` is what remains of `tx` after it.
pub fn refund_month(
    tx: &TransactionRecord,
    refund: &RefundRecord,
    left: &[(Decimal, Decimal)],
) -> MonthChange {
    let (gross, taxable) = refund_sales(tx, refund);
    MonthChange {
        month: month_key(refund.processed_at),
        gross,
        taxable,
        count: if fully_refunded(tx, left) { -1 } else { 0 },
    }
}

/// A refund reversed: its refund undone in the refund's month, unless `tx` was deleted
/// (`deleted`); `left` is what remained of `tx` before the reversal.
pub fn reversal_month(
    deleted: bool,
    tx: &TransactionRecord,
    refund: &RefundRecord,
    left: &[(Decimal, Decimal)],
) -> Option<MonthChange> {
    (!deleted).then(|| {
        let (gross, taxable) = refund_sales(tx, refund);
        MonthChange {
            month: month_key(refund.processed_at),
            gross: -gross,
            taxable: -taxable,
            count: if fully_refunded(tx, left) { 1 } else { 0 },
        }
    })
}

/// A deletion: what remains of `tx` (`left`) off its own month, and the transaction out of
/// the count unless a refund took it out already.
pub fn deletion_month(tx: &TransactionRecord, left: &[(Decimal, Decimal)]) -> MonthChange {
    let gross: Decimal = left.iter().map(|(s, _)| *s).sum();
    let taxable: Decimal = tx
        .lines
        .iter()
        .zip(left)
        .filter(|(l, _)| taxable(l))
        .map(|(_, (s, _))| *s)
        .sum();
    MonthChange {
        month: month_key(tx.processed_at),
        gross: -gross,
        taxable: -taxable,
        count: if fully_refunded(tx, left) { 0 } else { -1 },
    }
}

fn refund_sales(tx: &TransactionRecord, refund: &RefundRecord) -> (Decimal, Decimal) {
    let gross = refund
        .lines
        .iter()
        .map(|l| l.line.amount_excluding_tax)
        .sum();
    let taxable = refund
        .lines
        .iter()
        .filter(|l| tx.lines.get(l.index).is_some_and(taxable))
        .map(|l| l.line.amount_excluding_tax)
        .sum();
    (gross, taxable)
}

/// What a transaction and its refunds (in their order, reversed ones included) did to the
/// monthly sales, as the recipes would have written it: the transaction, then its refunds,
/// reversals and deletion in the order they were recorded (`created_at`, `reversed_at`,
/// `deleted_at`; at the same second a refund before a reversal before the deletion). For a
/// ledger from before the monthly sales were kept.
pub fn months_of(tx: &TransactionRecord, refunds: &[RefundRecord]) -> Vec<MonthChange> {
    enum Event<'a> {
        Refund(&'a RefundRecord),
        Reversal(&'a RefundRecord),
        Deletion,
    }
    let mut events: Vec<(i64, u8, usize, Event)> = Vec::new();
    for (i, r) in refunds.iter().enumerate() {
        events.push((r.created_at, 0, i, Event::Refund(r)));
        if let Some(at) = r.reversed_at {
            events.push((at, 1, i, Event::Reversal(r)));
        }
    }
    if let Some(at) = tx.deleted_at {
        events.push((at, 2, 0, Event::Deletion));
    }
    events.sort_by_key(|(at, order, i, _)| (*at, *order, *i));
    let mut out = vec![transaction_month(tx)];
    let mut refunded = Refunded {
        count: 0,
        lines: vec![(Decimal::ZERO, Decimal::ZERO); tx.lines.len()],
    };
    let mut deleted = false;
    for (_, _, _, event) in events {
        match event {
            Event::Refund(r) => {
                refunded.add(r);
                out.push(refund_month(tx, r, &refunded.remaining(tx)));
            }
            Event::Reversal(r) => {
                let before = refunded.remaining(tx);
                refunded.give_back(r);
                out.extend(reversal_month(deleted, tx, r, &before));
            }
            Event::Deletion => {
                out.push(deletion_month(tx, &refunded.remaining(tx)));
                deleted = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RefundLineRecord;

    // 1772323200 is 2026-03-01T00:00:00Z; 1769904000 is 2026-02-01T00:00:00Z.
    const FEB: i64 = 1_769_904_000 + 86_400;
    const MAR: i64 = 1_772_323_200 + 86_400;

    fn line(sales: i64, tax: i64) -> LineRecord {
        LineRecord {
            line_item_id: "l".into(),
            reference_product_id: None,
            reference_product_name: None,
            reference_line_item_id: None,
            product_tax_code: "txcd_99999999".into(),
            quantity: 1,
            amount_excluding_tax: Decimal::from(sales),
            tax_amount: Decimal::from(tax),
            amount_including_tax: Decimal::from(sales + tax),
            jurisdictions: Vec::new(),
        }
    }

    fn tx(lines: Vec<LineRecord>) -> TransactionRecord {
        let mut t: TransactionRecord = serde_json::from_value(serde_json::json!({
            "id": "tr_1", "calculation_id": "c", "reference_order_id": "o",
            "processed_at": FEB, "created_at": FEB, "currency": "usd", "tax_included": false,
            "country": "US", "region": "CA", "lines": [], "metadata": null, "deleted_at": null
        }))
        .unwrap();
        t.lines = lines;
        t
    }

    fn refund(lines: &[(usize, i64, i64)], at: i64, reversed: Option<i64>) -> RefundRecord {
        RefundRecord {
            id: format!("ref_{at}_{}", lines.len()),
            transaction_id: "tr_1".into(),
            refund_type: "partial".into(),
            processed_at: at,
            created_at: at,
            lines: lines
                .iter()
                .map(|&(index, s, t)| RefundLineRecord {
                    index,
                    line: line(-s, -t),
                })
                .collect(),
            reversed_at: reversed,
        }
    }

    fn change(month: &str, gross: i64, taxable: i64, count: i64) -> MonthChange {
        MonthChange {
            month: month.into(),
            gross: Decimal::from(gross),
            taxable: Decimal::from(taxable),
            count,
        }
    }

    #[test]
    fn a_refund_in_a_later_month_lowers_that_month_and_a_full_one_the_count() {
        // $100.00 taxed at $8.00 and an exempt $50.00, sold in February.
        let t = tx(vec![line(10_000, 800), line(5_000, 0)]);
        assert_eq!(transaction_month(&t), change("2026-02", 15_000, 10_000, 1));
        // A partial refund in March of $20.00 of the taxed line: March, the count kept.
        let partial = refund(&[(0, 2_000, 160)], MAR, None);
        assert_eq!(
            months_of(&t, std::slice::from_ref(&partial)),
            [
                change("2026-02", 15_000, 10_000, 1),
                change("2026-03", -2_000, -2_000, 0)
            ]
        );
        // The rest refunded in March too: nothing remains, the transaction leaves the count.
        let rest = refund(&[(0, 8_000, 640), (1, 5_000, 0)], MAR + 60, None);
        let months = months_of(&t, &[partial.clone(), rest.clone()]);
        assert_eq!(months[2], change("2026-03", -13_000, -8_000, -1));
        // Deleted after that: nothing remains and the count was taken already.
        let mut deleted = t.clone();
        deleted.deleted_at = Some(MAR + 120);
        assert_eq!(
            months_of(&deleted, &[partial.clone(), rest])[3],
            change("2026-02", 0, 0, 0)
        );
        // Deleted after the partial refund only: the rest off February, one transaction fewer.
        assert_eq!(
            months_of(&deleted, std::slice::from_ref(&partial))[2],
            change("2026-02", -13_000, -8_000, -1)
        );
    }

    #[test]
    fn a_reversal_undoes_its_refund_in_the_refunds_month_unless_the_sale_was_deleted() {
        let t = tx(vec![line(10_000, 800)]);
        let full = refund(&[(0, 10_000, 800)], MAR, Some(MAR + 3_000_000));
        let months = months_of(&t, std::slice::from_ref(&full));
        assert_eq!(months[1], change("2026-03", -10_000, -10_000, -1));
        assert_eq!(months[2], change("2026-03", 10_000, 10_000, 1));
        // Deleted before the reversal: the deletion took off nothing (all refunded), the
        // reversal gives nothing back, so February's sale stays refunded in March.
        let mut deleted = t.clone();
        deleted.deleted_at = Some(MAR + 60);
        let months = months_of(&deleted, &[full]);
        assert_eq!(months.len(), 3);
        assert_eq!(months[2], change("2026-02", 0, 0, 0));
    }
}
