//! Transactions: record a sale from a calculation, get, delete.

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::json::MAX_STRING;
use crate::store::TransactionRecord;

/// `POST /tax/transactions`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let now = crate::clock::now();
    let (calculation_id, order_id, processed_at, metadata) = crate::read::body(ctx, |o| {
        Ok((
            o.req_str("calculation_id", MAX_STRING)?.to_string(),
            o.req_str("reference_order_id", MAX_STRING)?.to_string(),
            o.opt_int("transaction_processed_at")?,
            o.opt_metadata("metadata")?,
        ))
    })?;
    let processed_at = crate::read::opt_unix_seconds("transaction_processed_at", processed_at)?;
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
        table_hash: Some(calc.table_hash),
    };
    ctx.service
        .store
        .insert_transaction(ctx.scope, record.clone())?;
    Ok(crate::render::transaction(
        &record,
        ctx.version,
        ctx.testmode(),
    ))
}

/// `GET /tax/transactions/{id}`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let t = crate::lookup::transaction(ctx, &ctx.params[0])?;
    Ok(crate::render::transaction(&t, ctx.version, ctx.testmode()))
}

/// `DELETE /tax/transactions/{id}`: 200 `{object, id, deleted_at}`; a failure is a 400.
pub(crate) fn delete(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let now = crate::clock::now();
    ctx.service
        .store
        .delete_transaction(ctx.scope, id, now)
        .map_err(crate::error::deletion_error)?;
    Ok(json!({ "object": "tax.transaction", "id": id, "deleted_at": now }))
}
