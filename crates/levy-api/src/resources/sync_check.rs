//! What a synced record must be before the central ledger takes it (`POST /tax/sync`): as
//! strict as the interface is with a request. A till's record holds what the till's own
//! interface took, so a record that fails here was made by something else (or by a till
//! of an older release that took what this one refuses); it is set aside as a conflict,
//! never stored.
//!
//! The pure checks of one record are here; what a refund may take of its transaction
//! (lines, amounts left, quantities) is checked against the central copy inside the
//! store's write ([`refund_fits`]).

use rust_decimal::Decimal;
use serde_json::Value;

use crate::json::MAX_STRING;
use crate::read::{CURRENCIES, MAX_LINES, MAX_TRANSACTED_AT};
use crate::store::{JurisdictionRecord, LineRecord, RefundRecord, TransactionRecord};

/// Why a record is refused: a sentence naming the field.
pub(crate) type Why = String;

/// Most jurisdiction entries of one line (a place has a handful; the engine never makes
/// more than a few dozen).
const MAX_JURISDICTIONS: usize = 64;

/// How far a line's tax may be from the sum of its jurisdictions' unrounded tax due: the
/// rounding of the line (half a unit) and, with rounding per invoice, the unit a line may
/// be given or take back.
const ROUNDING_SLACK: i64 = 2;

/// An id or name: not empty when `required`, at most [`MAX_STRING`] characters, no NUL.
fn text(field: &str, s: &str, required: bool) -> Result<(), Why> {
    if required && s.is_empty() {
        return Err(format!("{field} is empty"));
    }
    let n = s.chars().count();
    if n > MAX_STRING {
        return Err(format!(
            "{field} is {n} characters long, more than {MAX_STRING}"
        ));
    }
    if s.contains('\0') {
        return Err(format!(
            "{field} holds the NUL character (U+0000), which the ledger cannot store"
        ));
    }
    Ok(())
}

fn opt_text(field: &str, s: &Option<String>) -> Result<(), Why> {
    s.as_deref().map_or(Ok(()), |s| text(field, s, false))
}

fn time(field: &str, t: i64) -> Result<(), Why> {
    if (0..=MAX_TRANSACTED_AT).contains(&t) {
        Ok(())
    } else {
        Err(format!(
            "{field} is {t}, not Unix seconds from 0 to {MAX_TRANSACTED_AT}"
        ))
    }
}

fn amount(field: &str, d: Decimal, refund: bool) -> Result<(), Why> {
    let max = Decimal::from(levy_core::MAX_AMOUNT_MINOR);
    if refund && (d > Decimal::ZERO || d < -max) {
        return Err(format!(
            "{field} is {d}: a refund's amounts are from -{max} to 0"
        ));
    }
    if !refund && (d < Decimal::ZERO || d > max) {
        return Err(format!(
            "{field} is {d}: a sale's amounts are from 0 to {max}"
        ));
    }
    Ok(())
}

fn jurisdiction(field: &str, j: &JurisdictionRecord) -> Result<(), Why> {
    if j.tax_rate.abs() > levy_core::MAX_RATE {
        return Err(format!("{field}.tax_rate {} is out of range", j.tax_rate));
    }
    for (name, s) in [
        ("rate_type", &j.rate_type),
        ("jurisdiction_name", &j.jurisdiction_name),
        ("jurisdiction_code", &j.jurisdiction_code),
        ("authority_name", &j.authority_name),
        ("authority_type", &j.authority_type),
        ("tax_type", &j.tax_type),
        ("note", &j.note),
    ] {
        text(&format!("{field}.{name}"), s, false)?;
    }
    opt_text(
        &format!("{field}.exemption_certificate_id"),
        &j.exemption_certificate_id,
    )
}

/// One line of a sale (`refund` false) or of a refund (its amounts zero or negative).
fn line(field: &str, l: &LineRecord, refund: bool, tax_included: bool) -> Result<(), Why> {
    text(&format!("{field}.line_item_id"), &l.line_item_id, true)?;
    opt_text(
        &format!("{field}.reference_product_id"),
        &l.reference_product_id,
    )?;
    opt_text(
        &format!("{field}.reference_product_name"),
        &l.reference_product_name,
    )?;
    opt_text(
        &format!("{field}.reference_line_item_id"),
        &l.reference_line_item_id,
    )?;
    text(
        &format!("{field}.product_tax_code"),
        &l.product_tax_code,
        true,
    )?;
    if l.quantity == 0 || l.quantity > levy_core::MAX_QUANTITY {
        return Err(format!(
            "{field}.quantity is {}, not from 1 to {}",
            l.quantity,
            levy_core::MAX_QUANTITY
        ));
    }
    amount(
        &format!("{field}.amount_excluding_tax"),
        l.amount_excluding_tax,
        refund,
    )?;
    amount(&format!("{field}.tax_amount"), l.tax_amount, refund)?;
    amount(
        &format!("{field}.amount_including_tax"),
        l.amount_including_tax,
        refund,
    )?;
    if l.amount_excluding_tax + l.tax_amount != l.amount_including_tax {
        return Err(format!(
            "{field}: amount_excluding_tax {} and tax_amount {} do not add up to amount_including_tax {}",
            l.amount_excluding_tax, l.tax_amount, l.amount_including_tax
        ));
    }
    if l.jurisdictions.len() > MAX_JURISDICTIONS {
        return Err(format!(
            "{field} has {} jurisdiction entries, more than {MAX_JURISDICTIONS}",
            l.jurisdictions.len()
        ));
    }
    for (k, j) in l.jurisdictions.iter().enumerate() {
        let field = format!("{field}.jurisdictions[{k}]");
        jurisdiction(&field, j)?;
        if let Some(base) = j.taxable_base {
            // The taxed part of the line: between nothing and the whole line, on the
            // line's side of zero.
            let (lo, hi) = if refund {
                (l.amount_excluding_tax, Decimal::ZERO)
            } else {
                (Decimal::ZERO, l.amount_excluding_tax)
            };
            if base < lo || base > hi {
                return Err(format!(
                    "{field}.taxable_base is {base}: the taxed part of a line is from {lo} to {hi}"
                ));
            }
        }
    }
    if !refund && !tax_included {
        // A sale's line tax is its jurisdictions' tax due, rounded once (an amount with
        // tax included is backed out, and may differ more where a threshold jumps).
        let due: Decimal = l.jurisdictions.iter().map(|j| j.tax_due).sum();
        if (l.tax_amount - due).abs() > Decimal::from(ROUNDING_SLACK) {
            return Err(format!(
                "{field}: tax_amount {} is not the sum of its jurisdictions' tax due {}",
                l.tax_amount,
                due.normalize()
            ));
        }
    }
    Ok(())
}

fn metadata(m: &Option<serde_json::Map<String, Value>>) -> Result<(), Why> {
    let Some(m) = m else { return Ok(()) };
    if m.len() > 50 {
        return Err(format!("metadata holds {} keys, more than 50", m.len()));
    }
    for (k, v) in m {
        if k.chars().count() >= 255 || k.contains('\0') {
            return Err("a metadata key is 255 characters or longer, or holds NUL".into());
        }
        let len = match v {
            Value::String(s) if s.contains('\0') => {
                return Err(format!("metadata.{k} holds the NUL character (U+0000)"))
            }
            Value::String(s) => s.chars().count(),
            Value::Number(n) => n.to_string().len(),
            Value::Bool(_) | Value::Null => 5,
            Value::Array(_) | Value::Object(_) => {
                return Err(format!(
                    "metadata.{k} is not a string, number, boolean or null"
                ))
            }
        };
        if len >= 255 {
            return Err(format!("metadata.{k} is 255 characters or longer"));
        }
    }
    Ok(())
}

/// An id of a synced record that is not an id levy makes: the field, the id, and why.
#[derive(Debug)]
pub(crate) struct BadId {
    /// The record's field (`id`, `calculation_id`, `transaction_id`).
    pub field: &'static str,
    /// The id as sent.
    pub id: String,
    /// What it should be.
    pub why: Why,
}

/// `id` in `field`: an id of one of `prefixes` ([`crate::ids::is_id`]), of a `what`.
fn id(field: &'static str, id: &str, prefixes: &[&str], what: &str) -> Result<(), BadId> {
    if prefixes.iter().any(|p| crate::ids::is_id(p, id)) {
        return Ok(());
    }
    Err(BadId {
        field,
        id: id.to_string(),
        why: format!(
            "{field} {:?} is not a {what} id: {} then {} lower-case hexadecimal digits (0-9, a-f), as levy makes them",
            short(id),
            prefixes.join(" or "),
            crate::ids::ID_DIGITS
        ),
    })
}

/// The ids of a synced transaction, as levy makes them ([`crate::ids`]): its own
/// (`tr_…`) and its calculation's (`calc_…`, `plat_calc_…` for a platform transaction).
/// Checked before anything of the batch is applied: an id names the record everywhere
/// (its URL, its refunds, the till's outbox), so a record whose id no levy made is not a
/// record of its kind.
pub(crate) fn transaction_ids(t: &TransactionRecord) -> Result<(), BadId> {
    id("id", &t.id, &["tr_"], "transaction")?;
    if let Some(by) = &t.replaced_by {
        id("replaced_by", by, &["tr_"], "transaction")?;
    }
    let calculation = if t.platform.is_some() {
        ["plat_calc_"]
    } else {
        ["calc_"]
    };
    id(
        "calculation_id",
        &t.calculation_id,
        &calculation,
        "calculation",
    )
}

/// The ids of a synced refund (its own, `ref_tr_…`, and its transaction's, `tr_…`), as
/// [`transaction_ids`].
pub(crate) fn refund_ids(r: &RefundRecord) -> Result<(), BadId> {
    id("id", &r.id, &["ref_tr_"], "refund")?;
    id("transaction_id", &r.transaction_id, &["tr_"], "transaction")
}

/// A transaction as a till records it: the interface's bounds on every field, and lines
/// whose amounts add up (its ids are [`transaction_ids`]).
pub(crate) fn transaction(t: &TransactionRecord) -> Result<(), Why> {
    text("reference_order_id", &t.reference_order_id, true)?;
    time("transaction_processed_at", t.processed_at)?;
    time("created_at", t.created_at)?;
    if let Some(d) = t.deleted_at {
        time("deleted_at", d)?;
    }
    if !CURRENCIES.contains(&t.currency.as_str()) {
        return Err(format!(
            "customer_currency_code {:?} is not a currency levy takes",
            short(&t.currency)
        ));
    }
    // Empty for a sale placed nowhere (an IP resolved in `zero` mode).
    if !t.country.is_empty()
        && (t.country.len() != 2 || !t.country.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(format!(
            "country {:?} is not an ISO 3166-1 alpha-2 code",
            short(&t.country)
        ));
    }
    if t.region.chars().count() > 16 || t.region.contains('\0') {
        return Err(format!(
            "region {:?} is not a region code",
            short(&t.region)
        ));
    }
    if t.lines.is_empty() || t.lines.len() > MAX_LINES {
        return Err(format!(
            "line_items holds {} lines, not from 1 to {MAX_LINES}",
            t.lines.len()
        ));
    }
    for (i, l) in t.lines.iter().enumerate() {
        line(&format!("line_items[{i}]"), l, false, t.tax_included)?;
    }
    metadata(&t.metadata)?;
    if let Some(h) = &t.table_hash {
        if h.len() > 128 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("table_hash is not a table's hash".into());
        }
    }
    if let Some(p) = &t.platform {
        if p.kind != "order" && p.kind != "fee" {
            return Err(format!("type {:?} is not order or fee", short(&p.kind)));
        }
        text("merchant_id", &p.merchant_id, true)?;
        opt_text("reference_payment_id", &p.reference_payment_id)?;
    }
    Ok(())
}

/// A refund as a till records it, on its own (its ids are [`refund_ids`]; what it takes
/// of its transaction is checked in the store's write).
pub(crate) fn refund(r: &RefundRecord) -> Result<(), Why> {
    if r.refund_type != "full" && r.refund_type != "partial" {
        return Err(format!(
            "refund_type {:?} is not full or partial",
            short(&r.refund_type)
        ));
    }
    time("refund_processed_at", r.processed_at)?;
    time("created_at", r.created_at)?;
    if let Some(t) = r.reversed_at {
        time("reversed_at", t)?;
    }
    if r.lines.is_empty() || r.lines.len() > MAX_LINES {
        return Err(format!(
            "line_items holds {} lines, not from 1 to {MAX_LINES}",
            r.lines.len()
        ));
    }
    for (i, rl) in r.lines.iter().enumerate() {
        let field = format!("line_items[{i}]");
        line(&field, &rl.line, true, false)?;
        if rl.line.amount_excluding_tax.is_zero() && rl.line.tax_amount.is_zero() {
            return Err(format!("{field} refunds nothing (0 and 0)"));
        }
    }
    Ok(())
}

/// The first 64 characters of `s`, for a message about a value that may be long.
pub(crate) fn short(s: &str) -> String {
    s.chars().take(64).collect()
}
