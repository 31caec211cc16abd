//! Platform calculations and platform transactions (from API version 2026-01-01), for
//! marketplaces, payment processors and merchants of record.
//!
//! A platform calculation is a calculation whose line `amount` is the unit price (the
//! taxable base is amount × quantity), whose origin is the merchant's `default_address`,
//! and which may carry fee lines. Fee lines are taxed as their own sale, at the same place
//! as the order (the customer's location), with the `product_category` the fee line names,
//! `GENERAL_MERCHANDISE` when it names none; their `amount` is a unit price too.

use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::calculate;
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::{num, Node, MAX_STRING};
use crate::read::{self, Input};
use crate::render::{self, LineKind};
use crate::store::{
    CalculationReads, LineRecord, MerchantRecord, MerchantStatus, PlatformCalculationRecord,
    PlatformTransactionInfo, RecordKind, StoreError, TransactionRecord, Write,
};

/// The platform roles.
pub(crate) const ROLES: [&str; 3] = [
    "marketplace_provider",
    "payment_processor",
    "merchant_of_record",
];

/// The category of a fee line that names none.
pub(crate) const FEE_DEFAULT_CATEGORY: &str = "GENERAL_MERCHANDISE";

fn totals(lines: &[LineRecord]) -> Value {
    let sum = |f: fn(&LineRecord) -> Decimal| lines.iter().map(f).sum::<Decimal>();
    json!({
        "amount_excluding_tax": num(sum(|l| l.amount_excluding_tax)),
        "tax_amount": num(sum(|l| l.tax_amount)),
        "amount_including_tax": num(sum(|l| l.amount_including_tax)),
    })
}

/// A platform calculation in the version's shape: a calculation's fields plus
/// `merchant`, `roles`, `fee_line_items` and `totals`.
pub(crate) fn render(p: &PlatformCalculationRecord, ctx: &Ctx<'_>) -> Value {
    let mut v = calculate::render(&p.order, ctx.version, ctx.testmode());
    v["object"] = json!("tax.platform_calculation");
    v["merchant"] = json!({
        "merchant_id": p.reference_merchant_id,
        "id": p.merchant_id,
    });
    v["roles"] = json!(p.roles);
    v["fee_line_items"] = Value::Array(
        p.fee_lines
            .iter()
            .map(|l| render::line(l, ctx.version, LineKind::Calculation))
            .collect(),
    );
    let fee_tax: Decimal = p.fee_lines.iter().map(|l| l.tax_amount).sum();
    v["totals"] = json!({ "order": totals(&p.order.lines), "fees": totals(&p.fee_lines) });
    v["total_tax_amount"] = num(p.order.total_tax + fee_tax);
    v["transacted_at"] = json!(p.order.transacted_at);
    v
}

/// A platform calculation's request: the order as a calculation's input, the merchant
/// named, the fee lines and the roles.
struct Request {
    input: Input,
    merchant_id: String,
    fee_lines: Vec<read::LineInput>,
    roles: Vec<String>,
}

/// The request's `roles`: at least one, each of [`ROLES`], each once.
fn read_roles(root: &mut crate::json::Obj<'_>) -> Result<Vec<String>, ApiError> {
    let items = root
        .opt_array("roles")?
        .ok_or_else(|| ApiError::missing("roles", "array of roles"))?;
    if items.is_empty() {
        return Err(ApiError::missing("roles[0]", "at least one role"));
    }
    let mut roles: Vec<String> = Vec::new();
    for (i, r) in items.iter().enumerate() {
        let field = format!("roles[{i}]");
        let s = match r {
            Node::String(s) => s,
            other => return Err(ApiError::incorrect_type(&field, "string", other)),
        };
        if !ROLES.contains(&s.as_ref()) {
            return Err(ApiError::field(
                ErrorKind::IncorrectType,
                &field,
                format!("{field} must be one of {}", ROLES.join(", ")),
                ROLES.join(" | "),
                s.as_ref(),
            ));
        }
        if roles.iter().any(|r| r == s) {
            return Err(ApiError::field(
                ErrorKind::IncorrectType,
                &field,
                format!("{field}: role {s} is given twice"),
                "each role once",
                s.as_ref(),
            ));
        }
        roles.push(s.to_string());
    }
    Ok(roles)
}

/// Reads `POST /tax/platform/calculations`' body.
fn parse(ctx: &Ctx<'_>) -> Result<Request, ApiError> {
    let v = ctx.version;
    crate::read::body(ctx, |root| {
        let customer = read::read_customer(root, v)?;
        let mut m = root.req_obj("merchant")?;
        let merchant_id = m.req_str("merchant_id", MAX_STRING)?.to_string();
        m.finish()?;
        let order = read::read_order(root, v)?;
        let fee_lines = match root.opt_obj("fee_details")? {
            None => Vec::new(),
            Some(mut fd) => {
                let lines = read::read_lines(&mut fd, Some(FEE_DEFAULT_CATEGORY))?;
                fd.finish()?;
                lines
            }
        };
        let roles = read_roles(root)?;
        if roles.iter().any(|r| r == "payment_processor") && fee_lines.is_empty() {
            return Err(ApiError::missing(
                "fee_details.line_items",
                "fee lines: a payment_processor records a fee transaction",
            ));
        }
        let transacted_at =
            read::opt_unix_seconds("transacted_at", root.opt_int("transacted_at")?)?;
        let input = Input {
            customer_id: customer.customer_id,
            customer_type: customer.customer_type,
            fallback_type: customer.fallback_type,
            tax_ids: customer.tax_ids,
            address: customer.address,
            ip: customer.ip,
            currency: order.currency,
            tax_included: order.tax_included,
            automatic_tax: order.automatic_tax,
            lines: order.lines,
            origin_country: None,
            origin: None,
            transacted_at,
            metadata: root.opt_metadata("metadata")?,
            per_unit: true,
            rounding: ctx.req.header(crate::ROUNDING_HEADER).map(str::to_string),
            exchange_rate: ctx
                .req
                .header(crate::EXCHANGE_RATE_HEADER)
                .map(str::to_string),
            seller: None,
            delivery: customer.shipping,
        };
        Ok(Request {
            input,
            merchant_id,
            fee_lines,
            roles,
        })
    })
}

/// The merchant the request names, not deleted: its registrations decide where the order
/// and its fees are collected, and its default address is their origin.
fn sell_as(
    ctx: &Ctx<'_>,
    input: &mut Input,
    merchant_id: &str,
) -> Result<MerchantRecord, ApiError> {
    let merchant = crate::lookup::merchant(ctx, merchant_id, "merchant.merchant_id")?;
    if merchant.status == MerchantStatus::Deleted {
        return Err(crate::read::merchant_deleted(
            merchant_id,
            "merchant.merchant_id",
        ));
    }
    input.seller = Some(merchant.id.clone());
    let a = &merchant.default_address;
    input.origin_country = Some(a.country.clone());
    input.origin = Some(levy_core::Address {
        line1: a.line1.clone(),
        line2: a.line2.clone(),
        city: a.city.clone(),
        region: a.region.clone(),
        postal_code: a.postal_code.clone(),
        country: a.country.clone(),
    });
    Ok(merchant)
}

/// One read of the ledger for the order's lines and the fee lines together: the order's
/// reads and the fees'.
fn reads(
    ctx: &Ctx<'_>,
    input: &Input,
    fee_lines: &[read::LineInput],
    now: i64,
) -> Result<(CalculationReads, CalculationReads), ApiError> {
    let products: Vec<Option<&str>> = input
        .lines
        .iter()
        .chain(fee_lines)
        .map(|l| l.product.as_deref())
        .collect();
    let mut order = crate::lookup::ledger_reads(ctx, input, &products, now)?;
    let fees = CalculationReads {
        products: order.products.split_off(input.lines.len()),
        ..order.clone()
    };
    Ok((order, fees))
}

/// `POST /tax/platform/calculations`, in the shape of `POST /tax/calculations`: the
/// request read, the merchant, the quota, one read of the ledger, the order and its fee
/// lines calculated (pure, on one clock, so both are taxed on the same day), one write,
/// the answer.
pub(crate) fn calculate(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let Request {
        mut input,
        merchant_id,
        fee_lines,
        roles,
    } = parse(ctx)?;
    crate::limits::charge_lines(ctx, input.lines.len() + fee_lines.len())?;
    let merchant = sell_as(ctx, &mut input, &merchant_id)?;
    crate::limits::check_quota(ctx.service, ctx.scope)?;
    let now = crate::clock::now();
    let (order_reads, fee_reads) = reads(ctx, &input, &fee_lines, now)?;
    input.transacted_at = Some(input.transacted_at.unwrap_or(now));
    let id = crate::ids::new_id("plat_calc_");
    let table = ctx.service.table.load();
    let stamp = calculate::Stamp::new(id.clone(), input.lines.len(), now);
    let order = calculate::compute(&table, &input, &order_reads, stamp)?;
    // The headers speak for the whole answer: the order's, and its fee lines' where they
    // say less (a lesser coverage, a code the matrix does not know).
    let mut headers = order.headers();
    let mut fees = Vec::new();
    if !fee_lines.is_empty() {
        let stamp = calculate::Stamp::new(id.clone(), fee_lines.len(), now);
        input.lines = fee_lines;
        let calculated = calculate::compute(&table, &input, &fee_reads, stamp)?;
        headers = order.headers_with(&calculated);
        fees = calculated.record.lines;
    }
    let record = PlatformCalculationRecord {
        id,
        merchant_id: merchant.id,
        reference_merchant_id: merchant.reference_merchant_id,
        roles,
        order: order.record,
        fee_lines: fees,
    };
    let reply = Reply::tree(render(&record, ctx)).with_headers(headers);
    let quote = crate::store::Quote::Platform(&record);
    let (commit, reply) = crate::idempotency::submit(ctx, quote, reply)?;
    reply.after(ctx, commit)
}

/// What a `POST /tax/platform/transactions` asks.
struct Asked {
    calc_id: String,
    order_id: String,
    payment_id: Option<String>,
    processed_at: Option<i64>,
}

impl Asked {
    /// Whether `tx` is this sale's transaction of `kind` recorded before (a request sent
    /// again after its answer was lost): not deleted, of the same platform calculation and
    /// payment, and of the same `transaction_processed_at` when the request gives one.
    fn recorded_as(&self, tx: &TransactionRecord, kind: &str) -> bool {
        tx.deleted_at.is_none()
            && tx.calculation_id == self.calc_id
            && tx
                .platform
                .as_ref()
                .is_some_and(|p| p.kind == kind && p.reference_payment_id == self.payment_id)
            && self.processed_at.is_none_or(|at| at == tx.processed_at)
    }
}

/// The answer: `{"object": "list", "transactions": [...]}`, the order first.
fn answer(ctx: &Ctx<'_>, txs: &[TransactionRecord]) -> Value {
    json!({
        "object": "list",
        "transactions": txs
            .iter()
            .map(|t| crate::render::transaction(t, ctx.version, ctx.testmode()))
            .collect::<Vec<_>>(),
    })
}

/// The answer of the sale `asked` recorded before, if it was: its order, and its fees
/// when they were recorded with it.
fn recorded(ctx: &Ctx<'_>, asked: &Asked) -> Result<Option<Reply>, ApiError> {
    let store = &ctx.service.store;
    let order = store.transaction_of_order(ctx.scope, &asked.order_id, "order")?;
    let Some(order) = order.filter(|t| asked.recorded_as(t, "order")) else {
        return Ok(None);
    };
    let fee = store.transaction_of_order(ctx.scope, &asked.order_id, "fee")?;
    let mut txs = vec![order];
    txs.extend(fee.filter(|t| asked.recorded_as(t, "fee")));
    Ok(Some(Reply::tree(answer(ctx, &txs))))
}

/// `POST /tax/platform/transactions`: records the order (every role) and, for a
/// `payment_processor`, the fees as a second transaction. Answers
/// `{"object": "list", "transactions": [...]}`, the order first. An order id recorded
/// before from the same platform calculation answers what was recorded, as
/// `POST /tax/transactions` does.
pub(crate) fn transact(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let asked = crate::read::body(ctx, |o| {
        Ok(Asked {
            calc_id: o
                .req_str("platform_calculation_id", MAX_STRING)?
                .to_string(),
            order_id: o.req_str("reference_order_id", MAX_STRING)?.to_string(),
            payment_id: o
                .opt_str("reference_payment_id", MAX_STRING)?
                .map(str::to_string),
            processed_at: o.opt_int("transaction_processed_at")?,
        })
    })?;
    let asked = Asked {
        processed_at: read::opt_unix_seconds("transaction_processed_at", asked.processed_at)?,
        ..asked
    };
    if let Some(at) = asked.processed_at {
        crate::limits::check_backdating(ctx.service, "transaction_processed_at", at, now)?;
    }
    let found = ctx
        .service
        .store
        .platform_calculation(ctx.scope, &asked.calc_id, now)?;
    let Some(pc) = found else {
        return recorded(ctx, &asked)?.ok_or_else(|| {
            ApiError::field(
                ErrorKind::PlatformCalculationNotFound,
                "platform_calculation_id",
                format!("platform calculation {} was not found (unknown, expired, or made with a key of another mode)", asked.calc_id),
                "the id of a platform calculation of this mode made in the last 24 hours",
                &asked.calc_id,
            )
        });
    };
    let txs = sale(&pc, &asked, now);
    let view = answer(ctx, &txs);
    match crate::idempotency::store(ctx, Write::Transactions(txs), view) {
        Err(
            taken @ StoreError::Duplicate {
                what: RecordKind::Transaction,
                ..
            },
        ) => recorded(ctx, &asked)?.ok_or_else(|| taken.into()),
        made => Ok(made?),
    }
}

/// The transactions of a platform sale: the order, and for a `payment_processor` the
/// fees.
fn sale(pc: &PlatformCalculationRecord, asked: &Asked, now: i64) -> Vec<TransactionRecord> {
    let make = |kind: &str, lines: Vec<LineRecord>| TransactionRecord {
        id: crate::ids::new_id("tr_"),
        calculation_id: pc.id.clone(),
        reference_order_id: asked.order_id.clone(),
        processed_at: asked.processed_at.unwrap_or(now),
        created_at: now,
        currency: pc.order.currency.clone(),
        tax_included: pc.order.tax_included,
        country: pc.order.place.country.clone(),
        region: pc.order.place.region.clone(),
        lines,
        metadata: None,
        deleted_at: None,
        table_hash: Some(pc.order.table_hash.clone()),
        replaced_by: None,
        platform: Some(PlatformTransactionInfo {
            kind: kind.to_string(),
            reference_payment_id: asked.payment_id.clone(),
            merchant_id: pc.merchant_id.clone(),
        }),
    };
    let mut txs = vec![make("order", pc.order.lines.clone())];
    if pc.roles.iter().any(|r| r == "payment_processor") {
        txs.push(make("fee", pc.fee_lines.clone()));
    }
    txs
}
