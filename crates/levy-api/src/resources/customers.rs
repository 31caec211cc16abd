//! Customers: create, get (by id or `reference_customer_id`), delete.

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::handler::Reply;
use crate::json::MAX_STRING;
use crate::read::{customer_type, tax_ids, valid_email};
use crate::store::{CustomerKind, CustomerRecord, Write};
use crate::ApiVersion;

/// The query parameter that says what kind of id the path holds.
pub(crate) const ID_TYPE_PARAM: &str = "id_type";

fn render(c: &CustomerRecord, ctx: &Ctx<'_>) -> Value {
    let mut v = json!({
        "id": c.id,
        "object": "tax.customer",
        "reference_customer_id": c.reference_customer_id,
        "name": c.name,
        "email": c.email,
        "is_tax_exempt": c.is_tax_exempt,
        "testmode": ctx.testmode(),
        "created_at": c.created_at,
    });
    if ctx.version >= ApiVersion::V2025_05_12 {
        v["type"] = json!(c.kind.unwrap_or(CustomerKind::Consumer));
        v["tax_ids"] = json!(c.tax_ids);
    }
    v
}

/// `POST /tax/customers`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let record = crate::read::body(ctx, |o| {
        let email = o.req_str("email", 254)?;
        if !valid_email(email) {
            return Err(ApiError::field(
                ErrorKind::InvalidEmail,
                "email",
                format!("{email:?} is not a valid e-mail address"),
                "an e-mail address",
                email,
            ));
        }
        let name = o.opt_str("name", MAX_STRING)?;
        let is_tax_exempt = o.opt_bool("is_tax_exempt")?.unwrap_or(false);
        let reference = o.opt_str("reference_customer_id", MAX_STRING)?;
        let (kind, ids) = if ctx.version >= ApiVersion::V2025_05_12 {
            (customer_type(o, "type")?, tax_ids(o, "tax_ids")?)
        } else {
            (None, Vec::new())
        };
        Ok(CustomerRecord {
            id: crate::ids::new_id("cus_"),
            reference_customer_id: reference.map(str::to_string),
            name: name.map(str::to_string),
            email: email.to_string(),
            is_tax_exempt,
            kind,
            tax_ids: ids,
            created_at: crate::clock::now(),
        })
    })?;
    let view = render(&record, ctx);
    Ok(crate::idempotency::store(
        ctx,
        Write::Customer(record),
        view,
    )?)
}

/// `GET /tax/customers/{id}`; `?id_type=reference_customer_id` looks the path up as the
/// client's id instead.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let mut by_reference = false;
    for (k, v) in ctx.query_params(&[ID_TYPE_PARAM])? {
        by_reference = match (k, v) {
            (_, "id") => false,
            (_, "reference_customer_id") => true,
            (k, v) => {
                return Err(ApiError::field(
                    ErrorKind::InvalidQueryParameter,
                    k,
                    format!("{k} must be id or reference_customer_id"),
                    "id | reference_customer_id",
                    v,
                ))
            }
        };
    }
    let id = &ctx.params[0];
    match ctx.service.store.customer(ctx.scope, id, by_reference)? {
        Some(c) => Ok(render(&c, ctx)),
        None => Err(crate::read::not_found(
            ErrorKind::CustomerNotFound,
            "customer",
            "customer_id",
            id,
        )),
    }
}

/// `DELETE /tax/customers/{id}`.
pub(crate) fn delete(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let now = crate::clock::now();
    if ctx.service.store.delete_customer(ctx.scope, id, now)? {
        Ok(json!({ "object": "tax.customer", "id": id, "deleted_at": now }))
    } else {
        Err(crate::read::not_found(
            ErrorKind::CustomerNotFound,
            "customer",
            "customer_id",
            id,
        ))
    }
}
