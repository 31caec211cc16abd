//! Transactions: record a sale from a calculation, get, delete.

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::json::MAX_STRING;
use crate::render::{self, LineKind};
use crate::router::Ctx;
use crate::store::TransactionRecord;
use crate::ApiVersion;

/// A transaction in the version's shape (`testmode` is a string here, as the spec shows).
pub(crate) fn render(t: &TransactionRecord, v: ApiVersion, testmode: bool) -> Value {
    let mut out = json!({
        "id": t.id,
        "object": "tax.transaction",
        "calculation_id": t.calculation_id,
        "reference_order_id": t.reference_order_id,
        "transaction_processed_at": t.processed_at,
        "customer_currency_code": t.currency,
        "filing_currency_code": t.currency,
        "tax_included_in_amount": t.tax_included,
        "line_items": t.lines.iter().map(|l| render::line(l, v, LineKind::Ledger)).collect::<Vec<_>>(),
        "testmode": if testmode { "true" } else { "false" },
        "metadata": t.metadata.clone().map_or(json!({}), Value::Object),
        "created_at": t.created_at,
    });
    if let Some(p) = &t.platform {
        out["type"] = json!(p.kind);
        out["reference_payment_id"] = json!(p.reference_payment_id);
        out["merchant_id"] = json!(p.merchant_id);
    }
    out
}

/// `POST /tax/transactions`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let now = crate::ids::now();
    let (calculation_id, order_id, processed_at, metadata) = super::body(ctx, |o| {
        Ok((
            o.req_str("calculation_id", MAX_STRING)?.to_string(),
            o.req_str("reference_order_id", MAX_STRING)?.to_string(),
            o.opt_int("transaction_processed_at")?,
            o.opt_metadata("metadata")?,
        ))
    })?;
    if let Some(t) = processed_at {
        if t < 0 {
            return Err(ApiError::field(
                ErrorKind::PositiveNumberRequired,
                "transaction_processed_at",
                "transaction_processed_at must be Unix seconds, zero or more",
                "Unix seconds",
                t.to_string(),
            ));
        }
    }
    let calc = ctx.service.store.calculation(ctx.scope, &calculation_id, now)?.ok_or_else(|| {
        ApiError::of(
            ErrorKind::CalculationNotFound,
            format!("calculation {calculation_id} was not found (unknown, expired, or made with a key of another mode)"),
        )
    })?;
    let record = TransactionRecord {
        id: crate::ids::new_id("tr_"),
        calculation_id,
        reference_order_id: order_id,
        processed_at: processed_at.unwrap_or(now),
        created_at: now,
        currency: calc.currency,
        tax_included: calc.tax_included,
        country: calc.place.country,
        region: calc.place.region,
        lines: calc.lines,
        metadata,
        deleted_at: None,
        platform: None,
    };
    ctx.service
        .store
        .insert_transaction(ctx.scope, record.clone())?;
    Ok(render(&record, ctx.version, ctx.testmode()))
}

/// The transaction of the path, not deleted; `TRANSACTION_NOT_FOUND` (404) otherwise.
pub(crate) fn find(ctx: &Ctx<'_>, id: &str) -> Result<TransactionRecord, ApiError> {
    ctx.service
        .store
        .transaction(ctx.scope, id)?
        .filter(|t| t.deleted_at.is_none())
        .ok_or_else(|| {
            super::not_found(
                ErrorKind::TransactionNotFound,
                "transaction",
                "transaction_id",
                id,
            )
        })
}

/// `GET /tax/transactions/{id}`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let t = find(ctx, &ctx.params[0])?;
    Ok(render(&t, ctx.version, ctx.testmode()))
}

/// `DELETE /tax/transactions/{id}`: 200 `{object, id, deleted_at}`; a failure is a 400.
pub(crate) fn delete(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let now = crate::ids::now();
    ctx.service
        .store
        .delete_transaction(ctx.scope, id, now)
        .map_err(crate::error::deletion_error)?;
    Ok(json!({ "object": "tax.transaction", "id": id, "deleted_at": now }))
}
