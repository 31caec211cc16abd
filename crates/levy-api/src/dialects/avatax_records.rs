//! AvaTax's recording of sales: a committed `SalesInvoice` (`POST transactions/create`) is
//! a levy transaction whose `reference_order_id` is the document's `code`; a committed
//! `ReturnInvoice` of a recorded invoice (`referenceCode`), and
//! `POST companies/{companyCode}/transactions/{code}/refund`, a levy refund of it;
//! `POST …/{code}/adjust` and `POST transactions/createoradjust` of a recorded code record
//! a new version of the invoice in its place ([`crate::store::Write::Replacement`]);
//! `POST …/{code}/commit` answers a recorded invoice (committed when it was created);
//! `POST …/{code}/void` deletes the transaction (AvaTax's `Cancelled`), or reverses a
//! return's refund; `GET …/{code}` reads either back. The tax is levy's own calculation of the invoice, as every
//! transaction's; a refund takes back the part of each line's tax its amount is of the
//! line's. `companyCode` is not checked: the key chooses the account and the mode.

use std::borrow::Cow;

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Map, Value};

use super::avatax::{self, field, number, text, LineInfo, Model};
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::store::{
    LineRecord, Made, PartialRefundLine, RecordKind, RefundAsk, RefundRecord, RefundStamp,
    StoreError, TransactionRecord, Write,
};
use levy_core::Date;

/// The metadata key an invoice's `customerCode` is kept under.
const CUSTOMER: &str = "avatax_customer_code";
/// The metadata keys of an adjusted invoice: the `adjustmentReason` and the
/// `adjustmentDescription` of the adjustment that made it. (Its `version` is not counted:
/// a retried adjustment must be the same sale as the version it made, to answer it rather
/// than make another.)
const REASON: &str = "avatax_adjustment_reason";
const DESCRIPTION: &str = "avatax_adjustment_description";

/// AvaTax's `AdjustmentReason` values (the REST v2 reference's enum), but `NotAdjusted`,
/// which is no adjustment.
const REASONS: [&str; 9] = [
    "SourcingIssue",
    "ReconciledWithGeneralLedger",
    "ExemptCertApplied",
    "PriceAdjusted",
    "ProductReturned",
    "ProductExchanged",
    "BadDebt",
    "Other",
    "Offline",
];

/// `yyyy-mm-dd` of epoch seconds.
fn day(at: i64) -> String {
    let (y, m, d) = Date::from_unix_seconds(at).ymd();
    format!("{y:04}-{m:02}-{d:02}")
}

/// The lines of a record as the ledger names them: the client's line number, levy's code.
fn ledger_info(lines: &[LineRecord]) -> Vec<LineInfo<'_>> {
    lines
        .iter()
        .map(|l| {
            (
                Cow::Borrowed(l.reference_line_item_id.as_deref().unwrap_or("")),
                None,
                None,
                Decimal::from(l.quantity),
            )
        })
        .collect()
}

/// The TransactionModel of a recorded invoice: `Committed`, or `Cancelled` once voided.
fn invoice_value(tx: &TransactionRecord, info: Vec<LineInfo<'_>>, notes: &[String]) -> Value {
    let customer = tx
        .metadata
        .as_ref()
        .and_then(|m| m.get(CUSTOMER))
        .and_then(Value::as_str)
        .unwrap_or("");
    let date = day(tx.processed_at);
    let mut v = avatax::model(
        Model {
            lines: &tx.lines,
            info,
            region: &tx.region,
            country: &tx.country,
            tax_included: tx.tax_included,
            total_amount: tx.lines.iter().map(|l| l.amount_excluding_tax).sum(),
            total_tax: tx.lines.iter().map(|l| l.tax_amount).sum(),
            code: &tx.reference_order_id,
            date: &date,
            customer_code: customer,
            currency: &tx.currency,
            status: if tx.deleted_at.is_some() {
                "Cancelled"
            } else {
                "Committed"
            },
            kind: "SalesInvoice",
            messages: notes
                .iter()
                .map(|n| avatax::warning(Cow::Borrowed(n.as_str())))
                .collect(),
            calculation_id: &tx.calculation_id,
            transaction_id: Some(&tx.id),
            refund_id: None,
        },
        |v| serde_json::to_value(v).unwrap_or_default(),
    );
    // An adjusted invoice says why it was made.
    if let Some(m) = &tx.metadata {
        for (key, name) in [
            (REASON, "adjustmentReason"),
            (DESCRIPTION, "adjustmentDescription"),
        ] {
            if let Some(Value::String(s)) = m.get(key) {
                v[name] = Value::String(s.clone());
            }
        }
    }
    v
}

/// The TransactionModel of a refund: a `ReturnInvoice`, its amounts negative.
fn refund_value(r: &RefundRecord, tx: &TransactionRecord, code: &str) -> Value {
    let lines: Vec<LineRecord> = r.lines.iter().map(|l| l.line.clone()).collect();
    let date = day(r.processed_at);
    let customer = tx
        .metadata
        .as_ref()
        .and_then(|m| m.get(CUSTOMER))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut v = avatax::model(
        Model {
            lines: &lines,
            info: ledger_info(&lines),
            region: &tx.region,
            country: &tx.country,
            tax_included: tx.tax_included,
            total_amount: lines.iter().map(|l| l.amount_excluding_tax).sum(),
            total_tax: lines.iter().map(|l| l.tax_amount).sum(),
            code,
            date: &date,
            customer_code: customer,
            currency: &tx.currency,
            status: if r.reversed_at.is_some() {
                "Cancelled"
            } else {
                "Committed"
            },
            kind: "ReturnInvoice",
            messages: Vec::new(),
            calculation_id: &tx.calculation_id,
            transaction_id: Some(&tx.id),
            refund_id: Some(&r.id),
        },
        |v| serde_json::to_value(v).unwrap_or_default(),
    );
    v["referenceCode"] = Value::String(tx.reference_order_id.clone());
    v
}

/// `POST transactions/create` of a committed `SalesInvoice`: calculated as a SalesOrder
/// is, and recorded as a levy transaction under its `code` (a new `levy_…` code when it
/// has none). The same invoice sent again under its code answers the one recorded; another
/// under a recorded code is a 409.
pub(super) fn invoice(ctx: &Ctx<'_>, body: &Value) -> Result<Reply, ApiError> {
    record_invoice(ctx, body, None)
}

/// An adjustment of the invoice `before`: the reason and description it was made for.
struct Adjustment<'a> {
    before: &'a TransactionRecord,
    reason: String,
    description: Option<String>,
}

/// A committed `SalesInvoice` calculated and recorded: a new invoice, or with `adjusting`
/// a new version of a recorded one under its code
/// ([`crate::resources::transactions::record_sale`]).
fn record_invoice(
    ctx: &Ctx<'_>,
    body: &Value,
    adjusting: Option<Adjustment<'_>>,
) -> Result<Reply, ApiError> {
    let doc = avatax::document(ctx, body)?;
    let code = doc
        .code
        .clone()
        .unwrap_or_else(|| crate::ids::new_id("levy_"));
    let mut metadata = Map::new();
    metadata.insert(CUSTOMER.into(), Value::String(doc.customer_code.clone()));
    if let Some(a) = &adjusting {
        metadata.insert(REASON.into(), Value::String(a.reason.clone()));
        if let Some(d) = &a.description {
            metadata.insert(DESCRIPTION.into(), Value::String(d.clone()));
        }
    }
    let info = avatax::doc_info(&doc);
    if let Some(at) = doc.input.transacted_at {
        crate::limits::check_backdating(ctx.service, "date", at, crate::clock::now())?;
    }
    crate::resources::transactions::record_sale(
        ctx,
        &doc.input,
        &code,
        (doc.input.transacted_at, Some(metadata)),
        adjusting.as_ref().map(|a| a.before),
        |tx, c| {
            // levy's notes of the calculation (coverage, place, a state it does not collect
            // in) after the translation's.
            let mut notes = doc.messages.clone();
            notes.extend(c.map(super::notes).unwrap_or_default());
            invoice_value(tx, info.clone(), &notes)
        },
    )
}

/// The recorded invoice `code` (voided or not): 404 `EntityNotFoundError` when there is
/// none in the key's mode.
fn invoice_of(ctx: &Ctx<'_>, code: &str) -> Result<Option<TransactionRecord>, ApiError> {
    Ok(ctx
        .service
        .store
        .transaction_of_order(ctx.scope, code, "order")?
        .filter(|tx| tx.platform.is_none()))
}

fn not_found(code: &str) -> ApiError {
    ApiError::of(
        ErrorKind::NotFound,
        format!("no committed document {code:?} (unknown, or recorded with a key of another mode)"),
    )
}

/// The levy refund id of an AvaTax return's code: one a code, so that a return sent
/// again is found rather than made twice.
fn refund_id(code: &str) -> String {
    format!("ref_av_{code}")
}

/// `GET companies/{companyCode}/transactions/{code}`: the invoice recorded under `code`
/// (`Cancelled` once voided), or the return recorded under it.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let code = &ctx.params[1];
    if let Some(tx) = invoice_of(ctx, code)? {
        return Ok(Reply::tree(invoice_value(&tx, ledger_info(&tx.lines), &[])));
    }
    let r = ctx
        .service
        .store
        .refund(ctx.scope, &refund_id(code))?
        .ok_or_else(|| not_found(code))?;
    let tx = ctx
        .service
        .store
        .transaction(ctx.scope, &r.transaction_id)?
        .ok_or_else(|| not_found(code))?;
    Ok(Reply::tree(refund_value(&r, &tx, code)))
}

/// `POST companies/{companyCode}/transactions/{code}/void` (a VoidTransactionModel,
/// `code` `DocVoided` or `DocDeleted`): the invoice's levy transaction deleted, its sales
/// taken off the nexus totals; answers it `Cancelled`. The code of a return: its levy
/// refund reversed (what it took back may be refunded again), answered `Cancelled`. A
/// voided document voided again answers the same.
pub(crate) fn void(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    if !ctx.req.body.is_empty() {
        let body = super::body_object(ctx.req)?;
        if let Some(reason) = text(&body, "code", "code")? {
            if !["DocVoided", "DocDeleted"].contains(&reason.as_str()) {
                return Err(ApiError::field(
                    ErrorKind::Error,
                    "code",
                    format!(
                        "code {reason}: levy voids a committed document (DocVoided or DocDeleted)"
                    ),
                    "DocVoided | DocDeleted",
                    reason.as_str(),
                ));
            }
        }
    }
    let code = &ctx.params[1];
    let Some(mut tx) = invoice_of(ctx, code)? else {
        return void_return(ctx, code);
    };
    if tx.deleted_at.is_none() {
        let now = crate::clock::now();
        ctx.service
            .store
            .delete_transaction(ctx.scope, &tx.id, now)
            .map_err(crate::error::deletion_error)?;
        tx.deleted_at = Some(now);
    }
    Ok(Reply::tree(invoice_value(&tx, ledger_info(&tx.lines), &[])))
}

/// The void of the return `code`: its refund reversed, unless it was; 404 when levy holds
/// no document under the code.
fn void_return(ctx: &Ctx<'_>, code: &str) -> Result<Reply, ApiError> {
    let store = &ctx.service.store;
    let r = store
        .refund(ctx.scope, &refund_id(code))?
        .ok_or_else(|| not_found(code))?;
    let tx = store
        .transaction(ctx.scope, &r.transaction_id)?
        .ok_or_else(|| not_found(code))?;
    if r.reversed_at.is_some() {
        return Ok(Reply::tree(refund_value(&r, &tx, code)));
    }
    let write = Write::Reversal {
        refund_id: r.id,
        at: crate::clock::now(),
    };
    let code = code.to_string();
    Ok(crate::idempotency::make(
        ctx,
        write,
        move |made| match made {
            Made::Refund(r) => Some(refund_value(r, &tx, &code)),
            _ => None,
        },
    )?)
}

/// The line of `tx` numbered `number`, or a 400 naming `path`.
fn line_of<'t>(
    tx: &'t TransactionRecord,
    number: &str,
    path: &str,
) -> Result<&'t LineRecord, ApiError> {
    tx.lines
        .iter()
        .find(|l| l.reference_line_item_id.as_deref() == Some(number))
        .ok_or_else(|| {
            ApiError::field(
                ErrorKind::LineItemNotFound,
                path,
                format!("document {} has no line {number:?}", tx.reference_order_id),
                "the number of a line of the document",
                number,
            )
        })
}

/// Records `ask` as a refund of `tx` under `code`; the return recorded before under the
/// same code, of the same invoice, answers a repeat.
fn record_refund(
    ctx: &Ctx<'_>,
    tx: TransactionRecord,
    code: String,
    ask: RefundAsk,
) -> Result<Reply, ApiError> {
    // A return sent again is answered before the ledger's rules are asked again of what
    // remains (which it took).
    if let Some(r) = ctx.service.store.refund(ctx.scope, &refund_id(&code))? {
        return if r.transaction_id == tx.id {
            Ok(Reply::tree(refund_value(&r, &tx, &code)))
        } else {
            Err(StoreError::Duplicate {
                what: RecordKind::Refund,
                value: code,
            }
            .into())
        };
    }
    let write = Write::Refund {
        transaction_id: tx.id.clone(),
        ask,
    };
    let (t, c) = (tx.clone(), code.clone());
    match crate::idempotency::make(ctx, write, move |made| match made {
        Made::Refund(r) => Some(refund_value(r, &t, &c)),
        _ => None,
    }) {
        Err(
            taken @ StoreError::Duplicate {
                what: RecordKind::Refund,
                ..
            },
        ) => match ctx.service.store.refund(ctx.scope, &refund_id(&code))? {
            Some(r) if r.transaction_id == tx.id => Ok(Reply::tree(refund_value(&r, &tx, &code))),
            _ => Err(taken.into()),
        },
        made => Ok(made?),
    }
}

/// A refund's time: `date` (`yyyy-mm-dd`) at noon UTC, as a document's; now when absent.
fn refund_time(body: &Value, name: &str) -> Result<i64, ApiError> {
    match text(body, name, name)? {
        None => Ok(crate::clock::now()),
        Some(_) => {
            let mut dated = Map::new();
            dated.insert(
                "date".into(),
                field(body, name).cloned().unwrap_or_default(),
            );
            let (d, _) = avatax::date(&Value::Object(dated)).map_err(|e| ApiError {
                field: Some(name.into()),
                message: e.message.replacen("date", name, 1),
                ..e
            })?;
            Ok(i64::from(d.0) * 86_400 + 43_200)
        }
    }
}

/// `POST companies/{companyCode}/transactions/{code}/refund` (a RefundTransactionModel):
/// `refundType` `Full` (what remains of every line, as levy's full refund), `Partial`
/// (the whole of each line of `refundLines`, by number) or `Percentage`
/// (`refundPercentage` of every line, or of those of `refundLines`); `TaxOnly` is
/// refused (levy takes the tax back with the sale it was charged on). Recorded as a levy
/// refund under `refundTransactionCode` (a new `levy_…` code when absent), answered as a
/// `ReturnInvoice`.
pub(crate) fn refund(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include", "useTaxDateOverride"])?;
    let body = super::body_object(ctx.req)?;
    let code = &ctx.params[1];
    let tx = invoice_of(ctx, code)?
        .filter(|t| t.deleted_at.is_none())
        .ok_or_else(|| not_found(code))?;
    let refund_code = text(&body, "refundTransactionCode", "refundTransactionCode")?
        .unwrap_or_else(|| crate::ids::new_id("levy_"));
    let stamp = RefundStamp {
        id: refund_id(&refund_code),
        processed_at: refund_time(&body, "refundDate")?,
        created_at: crate::clock::now(),
    };
    crate::limits::check_backdating(
        ctx.service,
        "refundDate",
        stamp.processed_at,
        stamp.created_at,
    )?;
    let kind = text(&body, "refundType", "refundType")?
        .ok_or_else(|| ApiError::missing("refundType", "Full | Partial | Percentage"))?;
    let numbers: Option<Vec<String>> = match field(&body, "refundLines") {
        None => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    other => Err(super::bad_field(
                        &format!("refundLines[{i}]"),
                        "a line number",
                        "string",
                        other,
                    )),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(other) => {
            return Err(super::bad_field(
                "refundLines",
                "refundLines must be an array of line numbers",
                "array",
                other,
            ))
        }
    };
    let chosen = |numbers: &[String]| -> Result<Vec<&LineRecord>, ApiError> {
        numbers
            .iter()
            .enumerate()
            .map(|(i, n)| line_of(&tx, n, &format!("refundLines[{i}]")))
            .collect()
    };
    let ask = if kind == "Full" {
        if numbers.as_ref().is_some_and(|n| !n.is_empty()) {
            return Err(avatax::not_taken(
                "refundLines",
                "a Full refund takes back every line; name lines with refundType Partial",
            ));
        }
        RefundAsk::Full(stamp)
    } else if kind == "Partial" {
        let numbers = numbers
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ApiError::missing("refundLines", "the numbers of the lines refunded"))?;
        let lines = chosen(&numbers)?
            .into_iter()
            .map(|l| PartialRefundLine {
                product: None,
                line_id: l.reference_line_item_id.clone(),
                quantity: None,
                sales: -l.amount_excluding_tax,
                tax: -l.tax_amount,
            })
            .collect();
        RefundAsk::Partial(stamp, lines)
    } else if kind == "Percentage" {
        let pct = number(&body, "refundPercentage", "refundPercentage")?
            .ok_or_else(|| ApiError::missing("refundPercentage", "a number from 0 to 100"))?;
        if pct <= Decimal::ZERO || pct > Decimal::ONE_HUNDRED {
            return Err(crate::read::positive(
                "refundPercentage",
                "more than 0 and at most 100",
                pct,
            ));
        }
        let lines: Vec<&LineRecord> = match numbers.filter(|n| !n.is_empty()) {
            Some(n) => chosen(&n)?,
            None => tx.lines.iter().collect(),
        };
        let part = |d: Decimal| {
            (d * pct / Decimal::ONE_HUNDRED)
                .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        };
        let lines: Vec<PartialRefundLine> = lines
            .into_iter()
            .map(|l| (l, part(l.amount_excluding_tax)))
            .map(|(l, sales)| PartialRefundLine {
                product: None,
                line_id: l.reference_line_item_id.clone(),
                quantity: None,
                sales: -sales,
                tax: -super::tax_share(l, sales),
            })
            .filter(|l| !(l.sales.is_zero() && l.tax.is_zero()))
            .collect();
        if lines.is_empty() {
            return Err(crate::read::positive(
                "refundPercentage",
                "a percentage that refunds at least a cent",
                pct,
            ));
        }
        RefundAsk::Partial(stamp, lines)
    } else {
        return Err(ApiError::field(
            ErrorKind::Error,
            "refundType",
            format!(
                "refundType {kind}: levy refunds Full, Partial (by refundLines) or Percentage; \
                 a refund of the tax alone is not taken"
            ),
            "Full | Partial | Percentage",
            kind.as_str(),
        ));
    };
    record_refund(ctx, tx, refund_code, ask)
}

/// `POST transactions/create` of a committed `ReturnInvoice` that names a recorded
/// invoice in `referenceCode`: a levy refund of it, recorded under the return's `code`.
/// Each line names the invoice's line it returns by its `number` and gives the amount
/// returned (negative, as AvaTax writes returns, or positive); the tax returned is the part
/// of that line's tax the amount is of its amount. A return without `referenceCode` (of a
/// sale levy did not record) is refused: levy's refunds are of its own transactions.
pub(super) fn return_invoice(ctx: &Ctx<'_>, body: &Value) -> Result<Reply, ApiError> {
    let reference = text(body, "referenceCode", "referenceCode")?.ok_or_else(|| {
        ApiError::missing(
            "referenceCode",
            "the code of the committed SalesInvoice this return is of",
        )
    })?;
    let tx = invoice_of(ctx, &reference)?
        .filter(|t| t.deleted_at.is_none())
        .ok_or_else(|| ApiError {
            field: Some("referenceCode".into()),
            ..not_found(&reference)
        })?;
    let code = text(body, "code", "code")?.unwrap_or_else(|| crate::ids::new_id("levy_"));
    let processed_at = refund_time(body, "date")?;
    let items = match field(body, "lines") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(ApiError::missing("lines[0]", "at least one line")),
    };
    let mut lines = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = |n: &str| format!("lines[{i}].{n}");
        let number_text = text(item, "number", &at("number"))?.ok_or_else(|| {
            ApiError::missing(&at("number"), "the number of the invoice's line returned")
        })?;
        let line = line_of(&tx, &number_text, &at("number"))?;
        let amount = number(item, "amount", &at("amount"))?
            .ok_or_else(|| ApiError::missing(&at("amount"), "number"))?
            .abs();
        let (minor, _) = super::bounded(
            super::to_minor(amount),
            Decimal::ONE,
            (&at("amount"), &at("amount")),
        )?;
        lines.push(PartialRefundLine {
            product: None,
            line_id: Some(number_text),
            quantity: None,
            sales: -minor,
            tax: -super::tax_share(line, minor),
        });
    }
    crate::limits::check_backdating(ctx.service, "date", processed_at, crate::clock::now())?;
    let stamp = RefundStamp {
        id: refund_id(&code),
        processed_at,
        created_at: crate::clock::now(),
    };
    record_refund(ctx, tx, code, RefundAsk::Partial(stamp, lines))
}

/// The committed invoice `code`, not voided: 404 when there is none, 400
/// `TRANSACTION_ALREADY_DELETED` when it was voided (a voided document is not `done`:
/// adjusted, committed).
fn standing_invoice(ctx: &Ctx<'_>, code: &str, done: &str) -> Result<TransactionRecord, ApiError> {
    let tx = invoice_of(ctx, code)?.ok_or_else(|| not_found(code))?;
    if tx.deleted_at.is_some() {
        return Err(ApiError::of(
            ErrorKind::TransactionAlreadyDeleted,
            format!("document {code:?} was voided; a voided document is not {done}"),
        ));
    }
    Ok(tx)
}

/// The CreateTransactionModel of `body` at `path` (an adjustment's `newTransaction`, a
/// `createoradjust`'s `createTransactionModel`), with its kind ([`avatax::kind`]), the
/// fields at fault named under `path`.
fn model_at(body: &Value, path: &str) -> Result<(Value, avatax::Kind), ApiError> {
    let model = match field(body, path) {
        Some(m @ Value::Object(_)) => m.clone(),
        Some(other) => {
            return Err(super::bad_field(
                path,
                "a CreateTransactionModel",
                "object",
                other,
            ))
        }
        None => return Err(ApiError::missing(path, "a CreateTransactionModel")),
    };
    let kind = avatax::kind(&model).map_err(|e| ApiError {
        field: e.field.as_deref().map(|n| format!("{path}.{n}")),
        ..e
    })?;
    Ok((model, kind))
}

/// The `newTransaction` of an adjustment (a CreateTransactionModel), as the committed
/// `SalesInvoice` it must be, under the document's `code` (the path's: a `code` given in
/// it is that one).
fn new_version(body: &Value, path: &str, code: &str) -> Result<Value, ApiError> {
    let (mut model, kind) = model_at(body, path)?;
    let at = |n: &str| format!("{path}.{n}");
    match kind {
        avatax::Kind::SalesInvoice => {}
        _ => {
            return Err(avatax::not_taken(
                &at("type"),
                "levy adjusts a committed SalesInvoice, by a new SalesInvoice under its code",
            ))
        }
    }
    if let Some(given) = text(&model, "code", &at("code"))? {
        if given != code {
            return Err(ApiError::field(
                ErrorKind::Error,
                &at("code"),
                format!("{path}.code {given:?} is not the document adjusted, {code:?}"),
                "the code of the document adjusted",
                given.as_str(),
            ));
        }
    }
    if let Some(o) = model.as_object_mut() {
        o.retain(|k, _| !k.eq_ignore_ascii_case("code"));
        o.insert("code".into(), Value::String(code.to_string()));
    }
    Ok(model)
}

/// An AdjustTransactionModel's `adjustmentReason` (required, one of AvaTax's reasons but
/// `NotAdjusted`) and `adjustmentDescription`.
fn adjustment_reason(body: &Value) -> Result<(String, Option<String>), ApiError> {
    let reason = text(body, "adjustmentReason", "adjustmentReason")?
        .ok_or_else(|| ApiError::missing("adjustmentReason", &REASONS.join(" | ")))?;
    let Some(known) = REASONS.iter().find(|r| r.eq_ignore_ascii_case(&reason)) else {
        return Err(ApiError::field(
            ErrorKind::Error,
            "adjustmentReason",
            format!("adjustmentReason {reason}: not one of AvaTax's adjustment reasons"),
            REASONS.join(" | "),
            reason.as_str(),
        ));
    };
    let description = text(body, "adjustmentDescription", "adjustmentDescription")?;
    Ok((known.to_string(), description))
}

/// `POST companies/{companyCode}/transactions/{code}/adjust` (an AdjustTransactionModel):
/// the committed invoice `code` replaced by `newTransaction`, a committed `SalesInvoice`
/// calculated by levy as `transactions/create` calculates it. The old version is kept,
/// deleted and marked replaced; the reports and nexus totals hold the new one alone, which
/// the answer is (with the adjustment's `adjustmentReason` and `adjustmentDescription`).
/// An adjustment that changes nothing (a retry whose answer was lost) answers the
/// document as it stands; a voided document, or one with a return not voided, is not
/// adjusted.
pub(crate) fn adjust(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let body = super::body_object(ctx.req)?;
    let code = &ctx.params[1];
    let (reason, description) = adjustment_reason(&body)?;
    let model = new_version(&body, "newTransaction", code)?;
    let before = standing_invoice(ctx, code, "adjusted")?;
    let adjusting = Adjustment {
        before: &before,
        reason,
        description,
    };
    record_invoice(ctx, &model, Some(adjusting))
}

/// `POST transactions/createoradjust` (a CreateOrAdjustTransactionModel): its
/// `createTransactionModel` taken as `transactions/create` takes it, but that a committed
/// `SalesInvoice` whose `code` names a committed invoice adjusts it (as `adjust` with the
/// reason `Other`) instead of being refused as a second document under the code.
pub(crate) fn create_or_adjust(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let body = super::body_object(ctx.req)?;
    let (model, kind) = model_at(&body, "createTransactionModel")?;
    let code = text(&model, "code", "createTransactionModel.code")?;
    let before = match (kind, &code) {
        (avatax::Kind::SalesInvoice, Some(code)) => {
            invoice_of(ctx, code)?.filter(|t| t.deleted_at.is_none())
        }
        _ => None,
    };
    match (kind, before) {
        (avatax::Kind::SalesInvoice, Some(before)) => {
            let adjusting = Adjustment {
                before: &before,
                reason: "Other".into(),
                description: None,
            };
            record_invoice(ctx, &model, Some(adjusting))
        }
        _ => avatax::create_model(ctx, kind, &model),
    }
}

/// `POST companies/{companyCode}/transactions/{code}/commit` (a CommitTransactionModel):
/// levy records an invoice committed when it is created, so committing a recorded invoice
/// answers it as it stands; `commit: false` (uncommitting) is refused, as is a code levy
/// holds no committed invoice under (a saved, uncommitted document is not kept).
pub(crate) fn commit(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let body = super::body_object(ctx.req)?;
    let code = &ctx.params[1];
    match field(&body, "commit") {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => return Err(uncommit_refused()),
        Some(other) => return Err(super::bad_field("commit", "true", "boolean", other)),
        None => return Err(ApiError::missing("commit", "true")),
    }
    let tx = standing_invoice(ctx, code, "committed").map_err(|e| match e.kind {
        ErrorKind::NotFound => ApiError {
            message: format!(
                "no committed document {code:?}: levy records a SalesInvoice when it is \
                 created with commit true (a saved, uncommitted document is not kept, so there \
                 is none to commit), or the code was recorded with a key of another mode"
            ),
            ..e
        },
        _ => e,
    })?;
    Ok(Reply::tree(invoice_value(&tx, ledger_info(&tx.lines), &[])))
}

/// Why a committed document is not uncommitted: levy has no saved, uncommitted state.
fn uncommit_refused() -> ApiError {
    ApiError::field(
        ErrorKind::Error,
        "commit",
        "levy keeps a document committed or not at all: it is not uncommitted. Adjust it \
         (transactions/{code}/adjust) to change it, or void it to take it back"
            .to_string(),
        "true",
        "false",
    )
}

/// `POST companies/{companyCode}/transactions/{code}/uncommit`: refused, as `commit` with
/// `commit: false` is ([`commit`]); a code levy holds no invoice under is a 404.
pub(crate) fn uncommit(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let code = &ctx.params[1];
    standing_invoice(ctx, code, "uncommitted")?;
    Err(uncommit_refused())
}

/// Whether a body posted to `transactions/create` may record (is not a `SalesOrder`),
/// from its `type` alone, without reading the rest: such a request writes the ledger and
/// waits for the write, and is answered where a blocking write may be waited on.
pub(crate) fn records(body: &[u8]) -> bool {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Peek;
    impl<'de> Visitor<'de> for Peek {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut records = false;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key.eq_ignore_ascii_case("type") {
                    let kind: Value = map.next_value()?;
                    records = kind
                        .as_str()
                        .is_some_and(|k| !k.eq_ignore_ascii_case("SalesOrder"));
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(records)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_map(Peek).unwrap_or(false)
}
