//! Refunds: create (full or partial), list a transaction's, reverse.

use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::{Obj, MAX_STRING};
use crate::render::{self, LineKind};
use crate::store::{
    Made, PartialRefundLine, RefundAsk, RefundRecord, RefundStamp, StoreError, Write,
};
use crate::ApiVersion;

/// A refund in the version's shape.
pub(crate) fn render(r: &RefundRecord, v: ApiVersion, testmode: bool) -> Value {
    json!({
        "id": r.id,
        "object": "tax.refund",
        "transaction_id": r.transaction_id,
        "refund_type": r.refund_type,
        "testmode": testmode,
        "refund_processed_at": r.processed_at,
        "line_items": r.lines.iter().map(|l| render::line(&l.line, v, LineKind::Ledger)).collect::<Vec<_>>(),
        "reversed_at": r.reversed_at,
    })
}

fn non_positive(o: &mut Obj<'_>, name: &str) -> Result<Decimal, ApiError> {
    let d = o
        .opt_decimal(name)?
        .ok_or_else(|| ApiError::missing(&o.path(name), "negative number"))?;
    if d < -Decimal::from(levy_core::MAX_AMOUNT_MINOR) {
        let field = o.path(name);
        return Err(ApiError::field(
            ErrorKind::NumberTooLarge,
            &field,
            format!("{field} must be at least -{}", levy_core::MAX_AMOUNT_MINOR),
            format!("at least -{}", levy_core::MAX_AMOUNT_MINOR),
            d.to_string(),
        ));
    }
    if d > Decimal::ZERO {
        let field = o.path(name);
        return Err(ApiError::field(
            ErrorKind::NegativeNumberRequired,
            &field,
            format!("{field} must be a negative number (refunds take money back)"),
            "a number of zero or less",
            d.to_string(),
        ));
    }
    Ok(d)
}

fn partial_line(o: &mut Obj<'_>) -> Result<PartialRefundLine, ApiError> {
    let product = o
        .opt_str("reference_product_id", MAX_STRING)?
        .map(str::to_string);
    let line_id = o
        .opt_str("reference_line_item_id", MAX_STRING)?
        .map(str::to_string);
    if product.is_none() && line_id.is_none() {
        return Err(ApiError::missing(
            &o.path("reference_product_id"),
            "reference_product_id or reference_line_item_id",
        ));
    }
    let quantity = match o.opt_int("quantity")? {
        None => None,
        Some(q) if q < 1 || q > i64::from(u32::MAX) => {
            let field = o.path("quantity");
            return Err(ApiError::field(
                ErrorKind::PositiveNumberRequired,
                &field,
                format!("{field} must be a positive integer"),
                "a positive integer",
                q.to_string(),
            ));
        }
        Some(q) => Some(q as u32),
    };
    let sales = non_positive(o, "sales_amount_refunded")?;
    let tax = non_positive(o, "tax_amount_refunded")?;
    if sales.is_zero() && tax.is_zero() {
        // A refund of nothing changes nothing but costs a write: refused.
        let field = o.path("sales_amount_refunded");
        return Err(ApiError::field(
            ErrorKind::NegativeNumberRequired,
            &field,
            format!(
                "{} refunds nothing: sales_amount_refunded and tax_amount_refunded are both 0; one of them must be negative",
                o.path("").trim_end_matches('.')
            ),
            "a negative sales_amount_refunded or tax_amount_refunded",
            "0 and 0",
        ));
    }
    Ok(PartialRefundLine {
        product,
        line_id,
        quantity,
        sales,
        tax,
    })
}

/// `POST /tax/refunds`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let (transaction_id, full, processed_at, lines) =
        crate::read::body(ctx, |o| {
            let tx = o.req_str("transaction_id", MAX_STRING)?.to_string();
            let full = match o.req_str("type", 16)? {
                "full" => true,
                "partial" => false,
                other => {
                    return Err(ApiError::field(
                        ErrorKind::IncorrectType,
                        "type",
                        "type must be full or partial",
                        "full | partial",
                        other,
                    ))
                }
            };
            let processed_at = crate::read::opt_unix_seconds(
                "refund_processed_at",
                o.opt_int("refund_processed_at")?,
            )?;
            let mut lines = Vec::new();
            match (full, o.opt_array("line_items")?) {
                (true, Some(_)) => return Err(ApiError::field(
                    ErrorKind::UnrecognizedField,
                    "line_items",
                    "a full refund takes back every line; line_items is only for partial refunds",
                    "no line_items",
                    "array",
                )),
                (false, None) => return Err(ApiError::missing("line_items", "array")),
                (false, Some([])) => {
                    return Err(ApiError::missing("line_items[0]", "at least one line item"))
                }
                (false, Some(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        let mut lo = o.element("line_items", i, item)?;
                        lines.push(partial_line(&mut lo)?);
                        lo.finish()?;
                    }
                }
                (true, None) => {}
            }
            Ok((tx, full, processed_at, lines))
        })?;
    if let Some(at) = processed_at {
        crate::limits::check_backdating(ctx.service, "refund_processed_at", at, now)?;
    }
    let stamp = RefundStamp {
        id: crate::ids::new_id("ref_tr_"),
        processed_at: processed_at.unwrap_or(now),
        created_at: now,
    };
    let ask = if full {
        RefundAsk::Full(stamp)
    } else {
        RefundAsk::Partial(stamp, lines)
    };
    let write = Write::Refund {
        transaction_id,
        ask,
    };
    Ok(crate::idempotency::make(ctx, write, rendered(ctx))?)
}

/// Renders the refund a write made, in the request's version.
fn rendered(ctx: &Ctx<'_>) -> impl FnOnce(&Made) -> Option<Value> + Send + 'static {
    let (version, testmode) = (ctx.version, ctx.testmode());
    move |made| match made {
        Made::Refund(r) => Some(render(r, version, testmode)),
        _ => None,
    }
}

/// Refunds per page of `GET /tax/transactions/{id}/refunds`, when `limit` is not given,
/// and the most a page may hold.
pub(crate) const REFUND_PAGE: usize = 100;

/// `GET /tax/transactions/{id}/refunds?cursor=…&limit=…`: up to `limit` refunds (1 to
/// [`REFUND_PAGE`], [`REFUND_PAGE`] by default), oldest first, after the refund `cursor`
/// (the `last_refund_id` of the page before); `has_more` when more follow.
pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let (mut cursor, mut limit) = (None, REFUND_PAGE);
    for (k, v) in ctx.query_params(&["cursor", "limit"])? {
        match k {
            "cursor" => cursor = Some(v),
            _ => {
                limit = v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=REFUND_PAGE).contains(n))
                    .ok_or_else(|| {
                        ApiError::field(
                            ErrorKind::InvalidQueryParameter,
                            "limit",
                            format!("limit must be a whole number from 1 to {REFUND_PAGE}"),
                            format!("1 to {REFUND_PAGE}"),
                            v,
                        )
                    })?
            }
        }
    }
    let id = &ctx.params[0];
    let tx = crate::lookup::transaction(ctx, id)?;
    let mut page = ctx
        .service
        .store
        .refunds_page(ctx.scope, &tx.id, cursor, limit + 1)
        .map_err(|e| match e {
            StoreError::NotFound { id, .. } => ApiError::field(
                ErrorKind::InvalidQueryParameter,
                "cursor",
                format!("cursor {id:?} is not a refund of transaction {}", tx.id),
                "the last_refund_id of the page before",
                id,
            ),
            other => other.into(),
        })?;
    let has_more = page.len() > limit;
    page.truncate(limit);
    Ok(json!({
        "refunds": page.iter().map(|r| render(r, ctx.version, ctx.testmode())).collect::<Vec<_>>(),
        "has_more": has_more,
        "last_refund_id": page.last().map(|r| r.id.clone()),
    }))
}

/// `POST /tax/refund_reversals`: marks the refund reversed; what it took back may be
/// refunded again. Answers the refund, with `reversed_at` set.
pub(crate) fn reverse(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let refund_id =
        crate::read::body(ctx, |o| Ok(o.req_str("refund_id", MAX_STRING)?.to_string()))?;
    let write = Write::Reversal {
        refund_id,
        at: crate::clock::now(),
    };
    Ok(crate::idempotency::make(ctx, write, rendered(ctx))?)
}
