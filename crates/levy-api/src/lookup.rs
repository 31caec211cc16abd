//! The interface's lookups in the ledger that more than one resource makes: what a
//! calculation reads (in one read of the store), a merchant, a transaction; each answered
//! as a record or as the interface's not-found error naming the request's field.

use levy_core::AutomaticTax;

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::read::Input;
use crate::store::{CalculationReads, MerchantRecord, TransactionRecord};

/// What a calculation reads from the ledger for `input`, in one read.
pub(crate) fn calculation_reads(
    ctx: &Ctx<'_>,
    input: &Input,
) -> Result<CalculationReads, ApiError> {
    let products: Vec<Option<&str>> = input.lines.iter().map(|l| l.product.as_deref()).collect();
    let auto = input.automatic_tax == AutomaticTax::Auto;
    ledger_reads(ctx, input.customer_id.as_deref(), &products, auto)
}

/// [`crate::store::Store::calculation_reads`] for a customer id and each line's product
/// (a platform calculation's order and fee lines together), and, with `registrations`
/// (`automatic_tax: auto`), the account's registrations. A sale that names no stored
/// customer and no product, with automatic tax disabled, reads nothing, and no store is
/// asked.
pub(crate) fn ledger_reads(
    ctx: &Ctx<'_>,
    customer_id: Option<&str>,
    products: &[Option<&str>],
    registrations: bool,
) -> Result<CalculationReads, ApiError> {
    if !registrations && customer_id.is_none() && products.iter().all(Option::is_none) {
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
