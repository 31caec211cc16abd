//! The interface's lookups in the ledger that more than one resource makes: what a
//! calculation reads (in one read of the store), a merchant, a transaction; each answered
//! as a record or as the interface's not-found error naming the request's field.

use levy_core::AutomaticTax;

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::read::Input;
use crate::store::{CalculationReads, MerchantRecord, SellerAt, TransactionRecord};

/// What a calculation reads from the ledger for `input`, made at `now` (epoch seconds),
/// in one read.
pub(crate) fn calculation_reads(
    ctx: &Ctx<'_>,
    input: &Input,
    now: i64,
) -> Result<CalculationReads, ApiError> {
    let products: Vec<Option<&str>> = input.lines.iter().map(|l| l.product.as_deref()).collect();
    ledger_reads(ctx, input, &products, now)
}

/// [`crate::store::Store::calculation_reads`] for `input`'s customer id and each line's
/// product in `products` (a platform calculation's order and fee lines together), and,
/// with `automatic_tax: auto`, the seller's registrations active at the sale's time
/// (`transacted_at`, or `now`). A sale that names no stored customer and no product, with
/// automatic tax disabled, reads nothing, and no store is asked.
pub(crate) fn ledger_reads(
    ctx: &Ctx<'_>,
    input: &Input,
    products: &[Option<&str>],
    now: i64,
) -> Result<CalculationReads, ApiError> {
    let customer_id = input.customer_id.as_deref();
    let registrations = (input.automatic_tax == AutomaticTax::Auto).then(|| SellerAt {
        seller: input.seller.as_deref(),
        at: input.transacted_at.unwrap_or(now),
    });
    if registrations.is_none() && customer_id.is_none() && products.iter().all(Option::is_none) {
        return Ok(CalculationReads {
            products: vec![None; products.len()],
            ..CalculationReads::default()
        });
    }
    Ok(ctx
        .service
        .store
        .calculation_reads(ctx.scope, customer_id, products, registrations)?)
}

/// The merchant by `merch_…` id or `reference_merchant_id`, deleted or not.
pub(crate) fn merchant(ctx: &Ctx<'_>, id: &str, field: &str) -> Result<MerchantRecord, ApiError> {
    ctx.service
        .store
        .merchant(ctx.scope, id)?
        .ok_or_else(|| crate::read::merchant_not_found(id, field))
}

/// The transaction of the path, not deleted; `TRANSACTION_NOT_FOUND` (404) otherwise.
pub(crate) fn transaction(ctx: &Ctx<'_>, id: &str) -> Result<TransactionRecord, ApiError> {
    ctx.service
        .store
        .transaction(ctx.scope, id)?
        .filter(|t| t.deleted_at.is_none())
        .ok_or_else(|| {
            crate::read::not_found(
                ErrorKind::TransactionNotFound,
                "transaction",
                "transaction_id",
                id,
            )
        })
}
