//! The ledger's rules for a new refund, as pure functions: which lines of the transaction it
//! takes back and how much, checked against what remains of each (the transaction's running
//! refund total, [`super::rules::Refunded`]). A store runs them inside its write, so the
//! check and the insert are one atomic step; a refusal is a typed [`Refusal`], which the
//! interface turns into its error.

use rust_decimal::Decimal;

use super::error::Refusal;
use super::records::{
    LineRecord, PartialRefundLine, RefundAsk, RefundLineRecord, RefundRecord, RefundStamp,
    TransactionRecord,
};
use super::rules::{full_refund, take_refund, Excess};

/// The refund `ask` makes of `tx`, whose lines have `left` (`(sales, tax)` per line) still
/// to refund; or why it is refused.
pub fn build(
    tx: &TransactionRecord,
    left: &[(Decimal, Decimal)],
    ask: RefundAsk,
) -> Result<RefundRecord, Refusal> {
    let (stamp, (lines, kind)) = match ask {
        RefundAsk::Synced(refund) => {
            fits(&refund, tx, left).map_err(|why| Refusal::DoesNotFit { why })?;
            return Ok(refund);
        }
        RefundAsk::Full(stamp) => (after_sale(tx, stamp)?, full(tx, left)?),
        RefundAsk::Partial(stamp, lines) => (after_sale(tx, stamp)?, partial(tx, left, &lines)?),
    };
    Ok(RefundRecord {
        id: stamp.id,
        transaction_id: tx.id.clone(),
        refund_type: kind.to_string(),
        processed_at: stamp.processed_at,
        created_at: stamp.created_at,
        lines,
        reversed_at: None,
    })
}

/// The refund's stamp, when it is dated on or after the sale of `tx`: a refund dated
/// before its sale would be booked (in the liability reports and the monthly sales) in a
/// period before the sale's, taking back tax of a period that never collected it.
fn after_sale(tx: &TransactionRecord, stamp: RefundStamp) -> Result<RefundStamp, Refusal> {
    if stamp.processed_at < tx.processed_at {
        return Err(Refusal::RefundBeforeSale {
            transaction: tx.id.clone(),
            refund_at: stamp.processed_at,
            sale_at: tx.processed_at,
        });
    }
    Ok(stamp)
}

/// The refund's lines and its type (`full`, `partial`).
type Lines = (Vec<RefundLineRecord>, &'static str);

/// Every line with something left, in full.
fn full(tx: &TransactionRecord, left: &[(Decimal, Decimal)]) -> Result<Lines, Refusal> {
    let out: Vec<RefundLineRecord> = full_refund(left)
        .into_iter()
        .map(|(i, sales, tax)| RefundLineRecord {
            index: i,
            line: refund_line(&tx.lines[i], tx.lines[i].quantity, sales, tax),
        })
        .collect();
    if out.is_empty() {
        return Err(Refusal::RefundedInFull {
            transaction: tx.id.clone(),
        });
    }
    Ok((out, "full"))
}

/// The lines asked, each matched to a line of `tx` and taken from what remains of it.
fn partial(
    tx: &TransactionRecord,
    left: &[(Decimal, Decimal)],
    lines: &[PartialRefundLine],
) -> Result<Lines, Refusal> {
    let mut left = left.to_vec();
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let k = find_line(tx, l, i)?;
        left[k] = take_refund(left[k], l.sales, l.tax).map_err(|excess| {
            let (asked, left) = match excess {
                Excess::Sales => (l.sales, left[k].0),
                Excess::Tax => (l.tax, left[k].1),
            };
            Refusal::Exceeds {
                line: i,
                excess,
                asked,
                left,
            }
        })?;
        let most = tx.lines[k].quantity;
        let quantity = l.quantity.unwrap_or(most);
        if quantity > most {
            return Err(Refusal::QuantityExceeds {
                line: i,
                asked: quantity,
                most,
            });
        }
        out.push(RefundLineRecord {
            index: k,
            line: refund_line(&tx.lines[k], quantity, l.sales, l.tax),
        });
    }
    Ok((out, "partial"))
}

/// The refunded line: the transaction's line with the refunded amounts, each
/// jurisdiction's tax due scaled by the share of the line's tax refunded and its taxable
/// base by the share of the line's amount.
fn refund_line(line: &LineRecord, quantity: u32, sales: Decimal, tax: Decimal) -> LineRecord {
    let mut out = line.clone();
    out.quantity = quantity;
    out.amount_excluding_tax = sales;
    out.tax_amount = tax;
    out.amount_including_tax = sales + tax;
    for j in &mut out.jurisdictions {
        // The taxed part of the refund: the entry's base, in the share of the line's
        // amount refunded.
        j.taxable_base = j.taxable_base.map(|base| {
            if line.amount_excluding_tax.is_zero() {
                Decimal::ZERO
            } else {
                (base * sales / line.amount_excluding_tax).normalize()
            }
        });
        if line.tax_amount.is_zero() {
            j.tax_due = Decimal::ZERO;
            j.fee = Decimal::ZERO;
        } else {
            j.tax_due = (j.tax_due * tax / line.tax_amount).normalize();
            j.fee = (j.fee * tax / line.tax_amount).normalize();
        }
    }
    out
}

/// The one line of `tx` that refund line `l` (the `i`th) names: by the client's line id or
/// the `li_` id (and the product, when given too), else by the product.
fn find_line(tx: &TransactionRecord, l: &PartialRefundLine, i: usize) -> Result<usize, Refusal> {
    let matches: Vec<usize> = tx
        .lines
        .iter()
        .enumerate()
        .filter(|(_, t)| match (&l.line_id, &l.product) {
            (Some(id), p) => {
                (t.reference_line_item_id.as_ref() == Some(id) || &t.line_item_id == id)
                    && p.as_ref()
                        .is_none_or(|p| t.reference_product_id.as_ref() == Some(p))
            }
            (None, Some(p)) => t.reference_product_id.as_ref() == Some(p),
            (None, None) => false,
        })
        .map(|(k, _)| k)
        .collect();
    match matches.as_slice() {
        [k] => Ok(*k),
        [] => Err(Refusal::NoSuchLine {
            line: i,
            transaction: tx.id.clone(),
            named: l
                .line_id
                .clone()
                .or_else(|| l.product.clone())
                .unwrap_or_default(),
        }),
        _ => Err(Refusal::AmbiguousLine {
            line: i,
            transaction: tx.id.clone(),
            product: l.product.clone().unwrap_or_default(),
        }),
    }
}

/// The first 64 characters of `s`, for a message about a value that may be long.
fn short(s: &str) -> String {
    s.chars().take(64).collect()
}

/// Whether refund `r`, made by another ledger, fits what remains of its transaction `tx`
/// (`left` per line, as this ledger holds it): every line names a line of the transaction
/// by its index and is that line (same ids and tax code), refunds no more of it than
/// remains and no more than its quantity. `Err` says why not.
pub fn fits(
    r: &RefundRecord,
    tx: &TransactionRecord,
    left: &[(Decimal, Decimal)],
) -> Result<(), String> {
    if r.transaction_id != tx.id {
        return Err(format!(
            "the refund names transaction {}",
            short(&r.transaction_id)
        ));
    }
    if r.processed_at < tx.processed_at {
        return Err(format!(
            "refund {} is dated {}, before its transaction {} ({})",
            short(&r.id),
            r.processed_at,
            tx.id,
            tx.processed_at
        ));
    }
    let mut left = left.to_vec();
    for (i, rl) in r.lines.iter().enumerate() {
        let Some(sold) = tx.lines.get(rl.index) else {
            return Err(format!(
                "line_items[{i}] refunds line {} of transaction {}, which has {} lines",
                rl.index,
                tx.id,
                tx.lines.len()
            ));
        };
        let l = &rl.line;
        if l.line_item_id != sold.line_item_id
            || l.reference_product_id != sold.reference_product_id
            || l.reference_line_item_id != sold.reference_line_item_id
            || l.product_tax_code != sold.product_tax_code
        {
            return Err(format!(
                "line_items[{i}] is not line {} of transaction {} (its ids or tax code differ)",
                rl.index, tx.id
            ));
        }
        if l.quantity > sold.quantity {
            return Err(format!(
                "line_items[{i}] refunds a quantity of {}, more than the line's {}",
                l.quantity, sold.quantity
            ));
        }
        let slot = &mut left[rl.index];
        match take_refund(*slot, l.amount_excluding_tax, l.tax_amount) {
            Ok(after) => *slot = after,
            Err(_) => {
                return Err(format!(
                    "refund {} would take back {} of sales and {} of tax of line {} of transaction {}, but only {} and {} remain in the central ledger",
                    r.id,
                    -l.amount_excluding_tax,
                    -l.tax_amount,
                    rl.index,
                    tx.id,
                    slot.0.max(Decimal::ZERO),
                    slot.1.max(Decimal::ZERO)
                ))
            }
        }
    }
    Ok(())
}
