//! Transactions: record a sale from a calculation, get, delete.

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::MAX_STRING;
use crate::store::{RecordKind, StoreError, TransactionRecord, Write};

/// What a `POST /tax/transactions` asks: the sale of a calculation under an order id.
struct Asked {
    calculation_id: String,
    order_id: String,
    processed_at: Option<i64>,
    metadata: Option<Map<String, Value>>,
}

impl Asked {
    /// Whether `tx` is this sale recorded before (a request sent again after its answer
    /// was lost): the order's transaction, not deleted, of the same calculation, with the
    /// same metadata and, when the request gives one, the same `transaction_processed_at`.
    fn recorded_as(&self, tx: &TransactionRecord) -> bool {
        tx.deleted_at.is_none()
            && tx.platform.is_none()
            && tx.calculation_id == self.calculation_id
            && tx.metadata == self.metadata
            && self.processed_at.is_none_or(|at| at == tx.processed_at)
    }
}

/// `POST /tax/transactions`. An order id already recorded from the same calculation with
/// the same content answers that transaction (the same id and body): a retry of a
/// request whose answer was lost records nothing twice. Another sale under a recorded
/// order id is `409 DUPLICATE_REFERENCE_ORDER_ID`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let asked = crate::read::body(ctx, |o| {
        Ok(Asked {
            calculation_id: o.req_str("calculation_id", MAX_STRING)?.to_string(),
            order_id: o.req_str("reference_order_id", MAX_STRING)?.to_string(),
            processed_at: o.opt_int("transaction_processed_at")?,
            metadata: o.opt_metadata("metadata")?,
        })
    })?;
    let asked = Asked {
        processed_at: crate::read::opt_unix_seconds(
            "transaction_processed_at",
            asked.processed_at,
        )?,
        ..asked
    };
    if let Some(at) = asked.processed_at {
        crate::limits::check_backdating(ctx.service, "transaction_processed_at", at, now)?;
    }
    let Some(calc) = ctx
        .service
        .store
        .calculation(ctx.scope, &asked.calculation_id, now)?
    else {
        // Expired since the sale was recorded, perhaps: a retry still gets its sale.
        return recorded(ctx, &asked)?.ok_or_else(|| {
            ApiError::of(
                ErrorKind::CalculationNotFound,
                format!("calculation {} was not found (unknown, expired, or made with a key of another mode)", asked.calculation_id),
            )
        });
    };
    let record = TransactionRecord {
        id: crate::ids::new_id("tr_"),
        calculation_id: asked.calculation_id.clone(),
        reference_order_id: asked.order_id.clone(),
        processed_at: asked.processed_at.unwrap_or(now),
        created_at: now,
        currency: calc.currency,
        tax_included: calc.tax_included,
        country: calc.place.country,
        region: calc.place.region,
        lines: calc.lines,
        metadata: asked.metadata.clone(),
        deleted_at: None,
        platform: None,
        table_hash: Some(calc.table_hash),
        replaced_by: None,
    };
    let view = crate::render::transaction(&record, ctx.version, ctx.testmode());
    match crate::idempotency::store(ctx, Write::Transaction(record), view) {
        Err(
            taken @ StoreError::Duplicate {
                what: RecordKind::Transaction,
                ..
            },
        ) => recorded(ctx, &asked)?.ok_or_else(|| taken.into()),
        made => Ok(made?),
    }
}

/// The answer of the sale `asked` recorded before, if it was ([`Asked::recorded_as`]).
fn recorded(ctx: &Ctx<'_>, asked: &Asked) -> Result<Option<Reply>, ApiError> {
    let found = ctx
        .service
        .store
        .transaction_of_order(ctx.scope, &asked.order_id, "order")?;
    Ok(found
        .filter(|tx| asked.recorded_as(tx))
        .map(|tx| Reply::tree(crate::render::transaction(&tx, ctx.version, ctx.testmode()))))
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

/// A sale calculated from `input` and recorded at once as the transaction of `order_id`
/// (sold at `processed_at`, now when `None`; with the client's `metadata`), for a request
/// shape that records a sale in one call ([`crate::dialects`]): the calculation is levy's
/// own ([`crate::calculate::compute`], as `POST /tax/calculations` makes it, counted
/// against the same rate and quota) and is not stored apart; the transaction names it as
/// its `calculation_id`. Answered with what `render` makes of the transaction (and of the
/// calculation, for its notes; `None` for a sale recorded before), kept under the
/// request's idempotency key in the same commit.
///
/// A new sale (`replacing` `None`): the same sale sent again under the same order id (the
/// same lines, amounts, tax and place: a retry whose answer was lost) answers the
/// transaction recorded before; another sale under a recorded order id is `409
/// DUPLICATE_REFERENCE_ORDER_ID`. A new version of the sale `replacing` (an adjusted
/// document, an updated order; `order_id` is its): recorded as its replacement
/// ([`Write::Replacement`]), unless it is the same sale, which answers `replacing` and
/// writes nothing (a retry whose answer was lost, an update that changes nothing); a
/// refunded sale is not replaced (`409 TRANSACTION_REFUNDED`).
pub(crate) fn record_sale(
    ctx: &Ctx<'_>,
    input: &crate::read::Input,
    order_id: &str,
    (processed_at, metadata): (Option<i64>, Option<Map<String, Value>>),
    replacing: Option<&TransactionRecord>,
    render: impl Fn(&TransactionRecord, Option<&crate::calculate::Calculated>) -> Value,
) -> Result<Reply, ApiError> {
    crate::limits::charge_lines(ctx, input.lines.len())?;
    crate::limits::check_quota(ctx.service, ctx.scope)?;
    let now = crate::clock::now();
    let reads = crate::lookup::calculation_reads(ctx, input, now)?;
    let table = ctx.service.table.load();
    let stamp = crate::calculate::Stamp::new(crate::ids::new_id("calc_"), input.lines.len(), now);
    let calculated = crate::calculate::compute(&table, input, &reads, stamp)?;
    let headers = calculated.headers();
    let calc = &calculated.record;
    let record = TransactionRecord {
        id: crate::ids::new_id("tr_"),
        calculation_id: calc.id.clone(),
        reference_order_id: order_id.to_string(),
        processed_at: processed_at.unwrap_or(now),
        created_at: now,
        currency: calc.currency.clone(),
        tax_included: calc.tax_included,
        country: calc.place.country.clone(),
        region: calc.place.region.clone(),
        lines: calc.lines.clone(),
        metadata,
        deleted_at: None,
        platform: None,
        table_hash: Some(calc.table_hash.clone()),
        replaced_by: None,
    };
    let timed = processed_at.is_some();
    // The sale as it stands under the order id, when it is the one asked for.
    let standing = || -> Result<Option<TransactionRecord>, ApiError> {
        let found = ctx
            .service
            .store
            .transaction_of_order(ctx.scope, order_id, "order")?;
        Ok(found.filter(|tx| same_sale(tx, &record, timed)))
    };
    let write = match replacing {
        Some(before) if same_sale(before, &record, timed) => {
            return Ok(Reply::tree(render(before, None)).with_headers(headers));
        }
        Some(before) => Write::Replacement {
            replaced: before.id.clone(),
            tx: record.clone(),
            at: now,
        },
        None => Write::Transaction(record.clone()),
    };
    let view = render(&record, Some(&calculated));
    match crate::idempotency::store_with(ctx, write, view, headers.clone()) {
        // Recorded by a request at the same time (a retry racing the request it repeats):
        // that one's answer.
        Err(
            refused @ (StoreError::Duplicate {
                what: RecordKind::Transaction,
                ..
            }
            | StoreError::NotFound {
                what: RecordKind::Transaction,
                ..
            }),
        ) => match standing()? {
            Some(tx) => Ok(Reply::tree(render(&tx, None)).with_headers(headers)),
            None => Err(refused.into()),
        },
        made => Ok(made?),
    }
}

/// Whether `stored` is the sale `asked` recorded before: not deleted, not a platform's,
/// in the same place and currency, line for line the same (client id, tax code, quantity,
/// amount and tax), with the same metadata, and sold at the same time when the request
/// gave one.
fn same_sale(stored: &TransactionRecord, asked: &TransactionRecord, timed: bool) -> bool {
    let key = |t: &TransactionRecord| {
        t.lines
            .iter()
            .map(|l| {
                (
                    l.reference_line_item_id.clone(),
                    l.product_tax_code.clone(),
                    l.quantity,
                    l.amount_excluding_tax,
                    l.tax_amount,
                )
            })
            .collect::<Vec<_>>()
    };
    stored.deleted_at.is_none()
        && stored.platform.is_none()
        && stored.currency == asked.currency
        && stored.tax_included == asked.tax_included
        && (stored.country.as_str(), stored.region.as_str())
            == (asked.country.as_str(), asked.region.as_str())
        && stored.metadata == asked.metadata
        && (!timed || stored.processed_at == asked.processed_at)
        && key(stored) == key(asked)
}
