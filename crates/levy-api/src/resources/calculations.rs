//! `POST /tax/calculations`: the body read (with [`crate::read`]), calculated (with
//! [`crate::calculate`]: address/IP -> location -> sale -> tax), stored with one INSERT and
//! rendered in the request's version.

use crate::calculate;
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::read::{
    opt_unix_seconds, read_address, read_customer, read_order, CustomerInput, Input, OrderInput,
};
use crate::ApiVersion;

fn parse(ctx: &Ctx<'_>) -> Result<Input, ApiError> {
    let v = ctx.version;
    crate::read::body(ctx, |root| {
        let CustomerInput {
            customer_id,
            customer_type,
            fallback_type,
            tax_ids,
            address,
            ip,
            shipping,
        } = read_customer(root, v)?;
        let OrderInput {
            currency,
            tax_included,
            automatic_tax,
            lines,
        } = read_order(root, v)?;

        let origin = root
            .opt_obj("origin_address")?
            .map(|o| read_address(o, false))
            .transpose()?;
        if origin.is_none() && v >= ApiVersion::V2025_05_12 {
            return Err(ApiError::field(
                ErrorKind::MissingOriginAddress,
                "origin_address",
                "origin_address (where the goods ship from) is required from API version 2025-05-12",
                "object",
                "nothing",
            ));
        }
        let transacted_at = if v >= ApiVersion::V2026_03_01 {
            opt_unix_seconds("transacted_at", root.opt_int("transacted_at")?)?
        } else {
            None
        };
        let metadata = root.opt_metadata("metadata")?;
        Ok(Input {
            customer_id,
            customer_type,
            fallback_type,
            tax_ids,
            address,
            ip,
            currency,
            tax_included,
            automatic_tax,
            lines,
            origin_country: origin
                .as_ref()
                .map(|o| o.country.trim().to_ascii_uppercase()),
            origin,
            transacted_at,
            metadata,
            per_unit: false,
            rounding: ctx.asked(crate::ROUNDING_HEADER),
            exchange_rate: ctx.asked(crate::EXCHANGE_RATE_HEADER),
            seller: None,
            delivery: shipping,
        })
    })
}

/// `POST /tax/calculations`, one way through: the request read, then [`answer`].
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let input = parse(ctx)?;
    answer(ctx, &input, |calculated| {
        Reply::json(&calculate::CalculationView {
            c: &calculated.record,
            version: ctx.version,
            testmode: ctx.testmode(),
        })
    })
}

/// A calculation read into `input`, answered: the quota, one read of the ledger
/// (customer, products, certificates, registrations), the calculation (pure), the levy
/// headers, the reply `render` writes of it, one write (the reply kept under the
/// request's idempotency key, if any). What `POST /tax/calculations` and every request
/// shape `levy serve` accepts besides its own ([`crate::dialects`]) calculate through.
pub(crate) fn answer(
    ctx: &Ctx<'_>,
    input: &Input,
    render: impl FnOnce(&calculate::Calculated) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    // A calculation of N lines is the work of N: it counts as N requests of the rate.
    crate::limits::charge_lines(ctx, input.lines.len())?;
    crate::limits::check_quota(ctx.service, ctx.scope)?;
    // One clock for the reads and the calculation: the registrations read are those
    // active at the time the calculation is made for.
    let now = crate::clock::now();
    let reads = crate::lookup::calculation_reads(ctx, input, now)?;
    let table = ctx.service.table.load();
    let stamp = calculate::Stamp::new(crate::ids::new_id("calc_"), input.lines.len(), now);
    let calculated = calculate::compute(&table, input, &reads, stamp)?;
    let reply = render(&calculated)?.with_headers(calculated.headers());
    let quote = crate::store::Quote::Calculation(&calculated.record);
    let (commit, reply) = crate::idempotency::submit(ctx, quote, reply)?;
    reply.after(ctx, commit)
}

/// A calculation read into `input`, answered and not stored: a lookup of what a sale would
/// owe (the dialects' rates lookups, [`crate::dialects`]). The same reads of the ledger
/// and the same calculation as [`answer`], charged against the rate as its lines are, and
/// the levy headers; no write, so nothing counts against the stored calculations' quota and
/// nothing is kept under an idempotency key (a `GET` has none).
pub(crate) fn look_up(
    ctx: &Ctx<'_>,
    input: &Input,
    render: impl FnOnce(&calculate::Calculated) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    crate::limits::charge_lines(ctx, input.lines.len())?;
    let now = crate::clock::now();
    let reads = crate::lookup::calculation_reads(ctx, input, now)?;
    let table = ctx.service.table.load();
    let stamp = calculate::Stamp::new(crate::ids::new_id("calc_"), input.lines.len(), now);
    let calculated = calculate::compute(&table, input, &reads, stamp)?;
    Ok(render(&calculated)?.with_headers(calculated.headers()))
}
