//! TaxJar's recording of sales, under `/v2/transactions/`: orders (`POST`, `GET`, `PUT`,
//! `DELETE` `/v2/transactions/orders[/{id}]`) and refunds (`POST`, `GET`, `DELETE`
//! `/v2/transactions/refunds[/{id}]`), each a write of levy's own ledger: an order is a
//! levy transaction whose `reference_order_id` is the order's `transaction_id`, an updated
//! order a new version of it in its place ([`crate::store::Write::Replacement`]), a refund
//! a levy refund of it, a deleted order a deleted transaction, a deleted refund a reversed
//! one.
//!
//! TaxJar records the tax the client says it collected (`sales_tax`). levy records its own
//! calculation of the sale instead: its ledger is what its liability reports and nexus
//! totals are summed from, and a figure it did not calculate would make them say what
//! levy cannot stand behind. Where the client's `sales_tax` differs from levy's, the answer
//! says so (`levy_messages`), and the order's `sales_tax` is levy's.

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{json, Value};

use super::{decimal, string, Dollars};
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::store::{
    PartialRefundLine, RecordKind, RefundAsk, RefundRecord, RefundStamp, StoreError,
    TransactionRecord, Write,
};
use levy_core::Date;

/// A `transaction_date`: `YYYY-MM-DD` or `YYYY/MM/DD`, alone or as the head of an ISO
/// 8601 time (`2026-12-01T10:00:00Z`), taken as the day's start in UTC; `None` when absent.
fn transaction_date(body: &Value) -> Result<Option<i64>, ApiError> {
    let Some(given) = string(body, "transaction_date", "transaction_date")? else {
        return Ok(None);
    };
    let day = given.get(..10).unwrap_or(&given).replace('/', "-");
    let date = crate::resources::nexus::parse_date("transaction_date", &day).map_err(|_| {
        ApiError::field(
            ErrorKind::IncorrectType,
            "transaction_date",
            format!("transaction_date {given:?} is not a date written YYYY-MM-DD or YYYY/MM/DD"),
            "a date such as 2026-12-01",
            given.as_str(),
        )
    })?;
    Ok(Some(i64::from(date.0) * 86_400))
}

/// The day of epoch seconds as TaxJar writes it, `YYYY-MM-DDT00:00:00.000Z`.
fn date_text(at: i64) -> String {
    let (y, m, d) = Date::from_unix_seconds(at).ymd();
    format!("{y:04}-{m:02}-{d:02}T00:00:00.000Z")
}

/// The required string `name` of a body, at most the ledger's length.
fn required_id(body: &Value, name: &str) -> Result<String, ApiError> {
    string(body, name, name)?
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ApiError::missing(name, "string"))
}

/// Whether a line of a transaction is the shipping TaxJar's order carries apart.
fn is_shipping(l: &crate::store::LineRecord) -> bool {
    l.reference_line_item_id.as_deref() == Some(super::taxjar::SHIPPING_LINE)
}

/// A line's `unit_price` and `discount` for its amount: the amount over the quantity,
/// rounded up to the cent, and what that leaves over as the discount, so that
/// `quantity × unit_price − discount` is the amount exactly.
fn unit_price(amount: Decimal, quantity: u32) -> (Decimal, Decimal) {
    let q = Decimal::from(quantity.max(1));
    let unit = (amount / q).round_dp_with_strategy(0, RoundingStrategy::ToPositiveInfinity);
    (unit, unit * q - amount)
}

/// The `order` object of a transaction (amounts in dollars; `sales_tax` levy's).
fn render_order(tx: &TransactionRecord, messages: &[String]) -> Value {
    let (shipping, items): (Vec<_>, Vec<_>) = tx.lines.iter().partition(|l| is_shipping(l));
    // TaxJar's `amount` of an order is its total with shipping, excluding sales tax.
    let amount: Decimal = tx.lines.iter().map(|l| l.amount_excluding_tax).sum();
    let shipping_amount: Decimal = shipping.iter().map(|l| l.amount_excluding_tax).sum();
    let tax: Decimal = tx.lines.iter().map(|l| l.tax_amount).sum();
    let line_items: Vec<Value> = items
        .iter()
        .map(|l| {
            let (unit, discount) = unit_price(l.amount_excluding_tax, l.quantity);
            json!({
                "id": l.reference_line_item_id,
                "quantity": l.quantity,
                "product_tax_code": l.product_tax_code,
                "unit_price": Dollars(unit),
                "discount": Dollars(discount),
                "sales_tax": Dollars(l.tax_amount),
            })
        })
        .collect();
    json!({
        "order": {
            "transaction_id": tx.reference_order_id,
            "transaction_date": date_text(tx.processed_at),
            "provider": "api",
            "to_country": tx.country,
            "to_state": tx.region,
            "amount": Dollars(amount),
            "shipping": Dollars(shipping_amount),
            "sales_tax": Dollars(tax),
            "line_items": line_items,
            "levy_transaction_id": tx.id,
            "levy_deleted_at": tx.deleted_at,
            "levy_messages": messages,
        }
    })
}

/// The order `id` of the account's mode, not deleted: 404 in TaxJar's words otherwise.
fn order_of(ctx: &Ctx<'_>, id: &str) -> Result<TransactionRecord, ApiError> {
    ctx.service
        .store
        .transaction_of_order(ctx.scope, id, "order")?
        .filter(|tx| tx.deleted_at.is_none() && tx.platform.is_none())
        .ok_or_else(|| {
            ApiError::of(
                ErrorKind::TransactionNotFound,
                format!("no order transaction {id:?} (unknown, deleted, or made with a key of another mode)"),
            )
        })
}

/// `POST /v2/transactions/orders`: the order calculated by levy (as `POST /v2/taxes`
/// would, for its `transaction_date`) and recorded as a levy transaction under its `transaction_id`.
/// [`crate::resources::transactions::record_sale`] says how a repeat is answered.
pub(crate) fn create_order(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = super::body_object(ctx.req)?;
    let id = required_id(&body, "transaction_id")?;
    record_order(ctx, &body, &id, None)
}

/// `PUT /v2/transactions/orders/{id}`: the order recorded under `id` (not deleted) replaced
/// by the order of the body, calculated by levy as `POST` calculates it; its old version is
/// kept, deleted and marked replaced, and the reports and nexus totals hold the new one
/// alone. levy takes an update as the order whole (its addresses, amount, shipping,
/// `sales_tax` and `line_items`, as `POST` takes them): it keeps no copy of an order's
/// addresses to fill in one left out, and guesses none. The body's `transaction_id`, when
/// given, is the path's. An update that changes nothing answers the order as it is; an
/// order with a refund not reversed is `409` (the refund is of the order as it was).
pub(crate) fn update_order(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = super::body_object(ctx.req)?;
    let id = &ctx.params[0];
    if let Some(given) = string(&body, "transaction_id", "transaction_id")? {
        if &given != id {
            return Err(ApiError::field(
                ErrorKind::Error,
                "transaction_id",
                format!("transaction_id {given:?} is not the order of the path, {id:?}"),
                "the transaction_id of the path",
                given.as_str(),
            ));
        }
    }
    let before = order_of(ctx, id)?;
    record_order(ctx, &body, id, Some(&before))
}

/// An order's body calculated and recorded under `id`: a new order, or a new version of
/// `replacing` ([`crate::resources::transactions::record_sale`]).
fn record_order(
    ctx: &Ctx<'_>,
    body: &Value,
    id: &str,
    replacing: Option<&TransactionRecord>,
) -> Result<Reply, ApiError> {
    let at = transaction_date(body)?
        .ok_or_else(|| ApiError::missing("transaction_date", "a date such as 2026-12-01"))?;
    let asked_tax = decimal(body, "sales_tax", "sales_tax")?
        .ok_or_else(|| ApiError::missing("sales_tax", "number"))?;
    let asked_amount = decimal(body, "amount", "amount")?.ok_or_else(|| {
        ApiError::missing(
            "amount",
            "number (the order's total with shipping, sales tax excluded)",
        )
    })?;
    crate::limits::check_backdating(ctx.service, "transaction_date", at, crate::clock::now())?;
    let mut order = super::taxjar::order(ctx, body)?;
    // The tax of the day of the sale: its rates and rules, as a calculation made for it.
    order.input.transacted_at = Some(at);
    let mut base = order.messages.clone();
    // The order's `amount` is its total with shipping (TaxJar's create-order reference:
    // "total amount of the order with shipping, excluding sales tax").
    let lines: Decimal = order.input.lines.iter().map(|l| l.amount).sum();
    if super::to_minor(asked_amount) != lines {
        base.push(format!(
            "amount {asked_amount} is not the total of line_items and shipping ({}): the lines \
             were recorded",
            lines / Decimal::ONE_HUNDRED
        ));
    }
    crate::resources::transactions::record_sale(
        ctx,
        &order.input,
        id,
        (Some(at), None),
        replacing,
        |tx, c| {
            let mut messages = base.clone();
            // levy's notes of the calculation (coverage, place, a state it does not collect in).
            messages.extend(c.map(super::notes).unwrap_or_default());
            let levy: Decimal = tx.lines.iter().map(|l| l.tax_amount).sum();
            if super::to_minor(asked_tax) != levy {
                messages.push(format!(
                    "sales_tax {asked_tax} was not recorded: levy records its own calculation of \
                 the sale, {}",
                    levy / Decimal::ONE_HUNDRED
                ));
            }
            render_order(tx, &messages)
        },
    )
}

/// `GET /v2/transactions/orders/{id}`.
pub(crate) fn show_order(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let tx = order_of(ctx, &ctx.params[0])?;
    Ok(Reply::tree(render_order(&tx, &[])))
}

/// `DELETE /v2/transactions/orders/{id}`: the levy transaction deleted (its sales taken
/// off the nexus totals, as `DELETE /tax/transactions/{id}`); answers the order as it was.
pub(crate) fn delete_order(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let mut tx = order_of(ctx, &ctx.params[0])?;
    let now = crate::clock::now();
    ctx.service
        .store
        .delete_transaction(ctx.scope, &tx.id, now)
        .map_err(crate::error::deletion_error)?;
    tx.deleted_at = Some(now);
    Ok(Reply::tree(render_order(&tx, &[])))
}

/// The levy refund id of a TaxJar refund's `transaction_id`: one a refund id, so that a
/// refund sent again is found rather than made twice.
fn refund_id(id: &str) -> String {
    format!("ref_tj_{id}")
}

/// The `refund` object: amounts as levy's ledger holds them, negative (what was taken
/// back).
fn render_refund(r: &RefundRecord, order: &TransactionRecord, id: &str) -> Value {
    let (mut amount, mut shipping, mut tax) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
    let mut line_items = Vec::new();
    for l in &r.lines {
        tax += l.line.tax_amount;
        // `amount` is the refund's total with shipping, as an order's.
        amount += l.line.amount_excluding_tax;
        if order.lines.get(l.index).is_some_and(is_shipping) {
            shipping += l.line.amount_excluding_tax;
        } else {
            line_items.push(json!({
                "id": l.line.reference_line_item_id,
                "quantity": l.line.quantity,
                "product_tax_code": l.line.product_tax_code,
                "unit_price": Dollars(l.line.amount_excluding_tax),
                "sales_tax": Dollars(l.line.tax_amount),
            }));
        }
    }
    json!({
        "refund": {
            "transaction_id": id,
            "transaction_reference_id": order.reference_order_id,
            "transaction_date": date_text(r.processed_at),
            "provider": "api",
            "to_country": order.country,
            "to_state": order.region,
            "amount": Dollars(amount),
            "shipping": Dollars(shipping),
            "sales_tax": Dollars(tax),
            "line_items": line_items,
            "levy_refund_id": r.id,
            "levy_refund_type": r.refund_type,
            "levy_reversed_at": r.reversed_at,
        }
    })
}

/// The partial refund of `order` a TaxJar refund's `line_items` and `shipping` ask: each
/// item by its `id` (the order's line of that id), `quantity × unit_price − discount` of
/// it, with the part of the line's tax that amount is of the line's (rounded half up to
/// the cent); the shipping likewise of the order's shipping line.
fn partial_lines(
    body: &Value,
    order: &TransactionRecord,
    shipping: Decimal,
) -> Result<Vec<PartialRefundLine>, ApiError> {
    let mut out = Vec::new();
    if let Some(Value::Array(items)) = body.get("line_items") {
        for (i, item) in items.iter().enumerate() {
            let at = |name: &str| format!("line_items[{i}].{name}");
            let id = string(item, "id", &at("id"))?
                .ok_or_else(|| ApiError::missing(&at("id"), "the id of a line of the order"))?;
            let line = order
                .lines
                .iter()
                .find(|l| {
                    l.reference_line_item_id.as_deref() == Some(id.as_str()) && !is_shipping(l)
                })
                .ok_or_else(|| {
                    ApiError::field(
                        ErrorKind::LineItemNotFound,
                        &at("id"),
                        format!("order {} has no line item {id:?}", order.reference_order_id),
                        "the id of a line of the order",
                        id.as_str(),
                    )
                })?;
            let quantity = decimal(item, "quantity", &at("quantity"))?.unwrap_or(Decimal::ONE);
            let unit = decimal(item, "unit_price", &at("unit_price"))?
                .unwrap_or_default()
                .abs();
            let discount = decimal(item, "discount", &at("discount"))?
                .unwrap_or_default()
                .abs();
            let amount = unit
                .checked_mul(quantity)
                .and_then(|g| g.checked_sub(discount))
                .unwrap_or(Decimal::MAX);
            let (minor, units) = super::bounded(
                super::to_minor(amount),
                quantity,
                (&at("unit_price"), &at("quantity")),
            )?;
            out.push(PartialRefundLine {
                product: None,
                line_id: Some(id),
                quantity: Some(units),
                sales: -minor,
                tax: -super::tax_share(line, minor),
            });
        }
    }
    out.extend(shipping_refund(order, shipping)?);
    Ok(out)
}

/// The refund of `shipping` (dollars) of the order's shipping line, with its part of the
/// line's tax; none for no shipping.
fn shipping_refund(
    order: &TransactionRecord,
    shipping: Decimal,
) -> Result<Option<PartialRefundLine>, ApiError> {
    let shipping = super::to_minor(shipping.abs());
    if !shipping.is_zero() {
        let line = order.lines.iter().find(|l| is_shipping(l)).ok_or_else(|| {
            ApiError::field(
                ErrorKind::Error,
                "shipping",
                format!(
                    "order {} has no shipping to refund",
                    order.reference_order_id
                ),
                "0",
                (shipping / Decimal::ONE_HUNDRED).to_string(),
            )
        })?;
        return Ok(Some(PartialRefundLine {
            product: None,
            line_id: Some(super::taxjar::SHIPPING_LINE.to_string()),
            quantity: None,
            sales: -shipping,
            tax: -super::tax_share(line, shipping),
        }));
    }
    Ok(None)
}

/// The partial refund of `items` (minor units) of an order's items, asked without
/// `line_items` (a reimbursement): taken from the item lines in proportion to their
/// amounts, in whole cents adding up to `items` exactly ([`super::whole_cents`]); each
/// line's tax its part of the line's tax.
fn pro_rata(order: &TransactionRecord, items: Decimal) -> Vec<PartialRefundLine> {
    let lines: Vec<&crate::store::LineRecord> =
        order.lines.iter().filter(|l| !is_shipping(l)).collect();
    let total: Decimal = lines.iter().map(|l| l.amount_excluding_tax).sum();
    if total <= Decimal::ZERO || items <= Decimal::ZERO {
        return Vec::new();
    }
    let exact: Vec<Decimal> = lines
        .iter()
        .map(|l| items * l.amount_excluding_tax / total)
        .collect();
    lines
        .into_iter()
        .zip(super::whole_cents(&exact, items))
        .filter(|(_, c)| !c.is_zero())
        .map(|(l, c)| PartialRefundLine {
            product: None,
            line_id: l.reference_line_item_id.clone(),
            quantity: None,
            sales: -c,
            tax: -super::tax_share(l, c),
        })
        .collect()
}

/// `POST /v2/transactions/refunds`: a levy refund of the order `transaction_reference_id`.
/// `amount` is the refund's total with shipping, as an order's. A refund of the order's
/// whole `amount` and `shipping` without `line_items` is a full refund (every line, with
/// all its tax); one with `line_items` a partial refund of those lines (and of the
/// shipping); one of part of the order without `line_items` (a reimbursement) a partial
/// refund of its `shipping` and of the rest of its `amount` taken from the item lines in
/// proportion to their amounts ([`pro_rata`]). The tax refunded is levy's, the part of each
/// line's tax the amount refunded is of its amount (the client's `sales_tax` is not
/// recorded, as an order's is not). Amounts may be written positive or negative. The same
/// refund sent again under its `transaction_id` answers the refund recorded before.
pub(crate) fn create_refund(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = super::body_object(ctx.req)?;
    let id = required_id(&body, "transaction_id")?;
    let reference = required_id(&body, "transaction_reference_id")?;
    let at = transaction_date(&body)?
        .ok_or_else(|| ApiError::missing("transaction_date", "a date such as 2026-12-01"))?;
    let amount = decimal(&body, "amount", "amount")?
        .ok_or_else(|| ApiError::missing("amount", "number"))?
        .abs();
    let shipping = decimal(&body, "shipping", "shipping")?
        .ok_or_else(|| ApiError::missing("shipping", "number (0 for none)"))?
        .abs();
    // Read to be checked; not recorded: the tax refunded is levy's (as an order's is).
    decimal(&body, "sales_tax", "sales_tax")?
        .ok_or_else(|| ApiError::missing("sales_tax", "number"))?;
    let order = order_of(ctx, &reference).map_err(|e| ApiError {
        field: Some("transaction_reference_id".into()),
        ..e
    })?;
    // A refund sent again is answered before the ledger's rules are asked again of what
    // remains (which it took).
    if let Some(r) = ctx.service.store.refund(ctx.scope, &refund_id(&id))? {
        return if r.transaction_id == order.id && r.reversed_at.is_none() {
            Ok(Reply::tree(render_refund(&r, &order, &id)))
        } else {
            Err(StoreError::Duplicate {
                what: RecordKind::Refund,
                value: id,
            }
            .into())
        };
    }
    let has_items = matches!(body.get("line_items"), Some(Value::Array(a)) if !a.is_empty());
    let (order_amount, order_shipping) =
        order
            .lines
            .iter()
            .fold((Decimal::ZERO, Decimal::ZERO), |(a, s), l| {
                if is_shipping(l) {
                    (a, s + l.amount_excluding_tax)
                } else {
                    (a + l.amount_excluding_tax, s)
                }
            });
    let stamp = RefundStamp {
        id: refund_id(&id),
        processed_at: at,
        created_at: crate::clock::now(),
    };
    crate::limits::check_backdating(ctx.service, "transaction_date", at, stamp.created_at)?;
    // `amount` is the refund's total with shipping, as an order's.
    let (amount, shipping_minor) = (super::to_minor(amount), super::to_minor(shipping));
    let whole = amount == order_amount + order_shipping && shipping_minor == order_shipping;
    let ask = if !has_items && whole {
        RefundAsk::Full(stamp)
    } else if !has_items {
        let items = amount - shipping_minor;
        if items < Decimal::ZERO {
            return Err(ApiError::field(
                ErrorKind::Error,
                "amount",
                format!(
                    "amount {} is less than the shipping {} it includes",
                    amount / Decimal::ONE_HUNDRED,
                    shipping_minor / Decimal::ONE_HUNDRED
                ),
                "the refund's total with shipping",
                (amount / Decimal::ONE_HUNDRED).to_string(),
            ));
        }
        let mut lines = pro_rata(&order, items);
        lines.extend(shipping_refund(&order, shipping)?);
        if lines.is_empty() {
            return Err(crate::read::positive(
                "amount",
                "a refund of at least a cent",
                amount / Decimal::ONE_HUNDRED,
            ));
        }
        RefundAsk::Partial(stamp, lines)
    } else {
        RefundAsk::Partial(stamp, partial_lines(&body, &order, shipping)?)
    };
    let write = Write::Refund {
        transaction_id: order.id.clone(),
        ask,
    };
    let (order_c, id_c) = (order.clone(), id.clone());
    let made = crate::idempotency::make(ctx, write, move |made| match made {
        crate::store::Made::Refund(r) => Some(render_refund(r, &order_c, &id_c)),
        _ => None,
    });
    match made {
        Err(
            taken @ StoreError::Duplicate {
                what: RecordKind::Refund,
                ..
            },
        ) => {
            // Sent before: the refund recorded under this id, if it is of the same order.
            match ctx.service.store.refund(ctx.scope, &refund_id(&id))? {
                Some(r) if r.transaction_id == order.id && r.reversed_at.is_none() => {
                    Ok(Reply::tree(render_refund(&r, &order, &id)))
                }
                _ => Err(taken.into()),
            }
        }
        made => Ok(made?),
    }
}

/// The refund `id` and the order it refunds: 404 when there is none in the mode.
fn refund_of(ctx: &Ctx<'_>, id: &str) -> Result<(RefundRecord, TransactionRecord), ApiError> {
    let missing = || {
        ApiError::of(
            ErrorKind::RefundNotFound,
            format!("no refund transaction {id:?} (unknown, or made with a key of another mode)"),
        )
    };
    let r = ctx
        .service
        .store
        .refund(ctx.scope, &refund_id(id))?
        .ok_or_else(missing)?;
    let order = ctx
        .service
        .store
        .transaction(ctx.scope, &r.transaction_id)?
        .ok_or_else(missing)?;
    Ok((r, order))
}

/// `GET /v2/transactions/refunds/{id}`.
pub(crate) fn show_refund(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let (r, order) = refund_of(ctx, id)?;
    Ok(Reply::tree(render_refund(&r, &order, id)))
}

/// `DELETE /v2/transactions/refunds/{id}`: the levy refund reversed (as
/// `POST /tax/refund_reversals`: what it took back may be refunded again); answers the
/// refund, its `levy_reversed_at` set.
pub(crate) fn delete_refund(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let id = ctx.params[0].clone();
    let (r, order) = refund_of(ctx, &id)?;
    let write = Write::Reversal {
        refund_id: r.id,
        at: crate::clock::now(),
    };
    Ok(crate::idempotency::make(
        ctx,
        write,
        move |made| match made {
            crate::store::Made::Refund(r) => Some(render_refund(r, &order, &id)),
            _ => None,
        },
    )?)
}
