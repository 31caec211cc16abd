//! Products: create, get, delete, list (50 at a time).

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::MAX_STRING;
use crate::store::{ProductRecord, Write};

/// Products per list page.
pub(crate) const PAGE: usize = 50;

fn render(p: &ProductRecord, ctx: &Ctx<'_>) -> Value {
    json!({
        "object": "tax.product",
        "reference_product_id": p.reference_product_id,
        "reference_product_name": p.reference_product_name,
        "product_category": p.product_category,
        "created_at": p.created_at,
        "updated_at": p.updated_at,
        "testmode": ctx.testmode(),
    })
}

/// `POST /tax/products`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let table = ctx.service.table.load();
    let record = crate::read::body(ctx, |o| {
        let id = o.req_str("reference_product_id", MAX_STRING)?;
        let name = o.req_str("reference_product_name", MAX_STRING)?;
        let category = o.req_str("product_category", MAX_STRING)?;
        if table.category(category).is_none() {
            return Err(ApiError::field(
                ErrorKind::InvalidProductCategory,
                "product_category",
                format!("{category:?} is not a product category of the rate table"),
                "a product category of the rate table",
                category,
            ));
        }
        let now = crate::clock::now();
        Ok(ProductRecord {
            reference_product_id: id.to_string(),
            reference_product_name: name.to_string(),
            product_category: category.to_string(),
            created_at: now,
            updated_at: now,
        })
    })?;
    let view = render(&record, ctx);
    Ok(crate::idempotency::store(
        ctx,
        Write::Product(record),
        view,
    )?)
}

/// `GET /tax/products/{reference_product_id}`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    match ctx.service.store.product(ctx.scope, id)? {
        Some(p) => Ok(render(&p, ctx)),
        None => Err(crate::read::not_found(
            ErrorKind::ProductNotFound,
            "product",
            "reference_product_id",
            id,
        )),
    }
}

/// `DELETE /tax/products/{reference_product_id}`.
pub(crate) fn delete(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    if ctx.service.store.delete_product(ctx.scope, id)? {
        Ok(
            json!({ "object": "tax.product", "reference_product_id": id, "deleted_at": crate::clock::now() }),
        )
    } else {
        Err(crate::read::not_found(
            ErrorKind::ProductNotFound,
            "product",
            "reference_product_id",
            id,
        ))
    }
}

/// `GET /tax/products?cursor=…`: up to 50 products ordered by `reference_product_id`,
/// after the cursor.
pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let mut cursor = None;
    for (_, v) in ctx.query_params(&["cursor"])? {
        cursor = Some(v);
    }
    let mut page = ctx
        .service
        .store
        .list_products(ctx.scope, cursor, PAGE + 1)?;
    let has_more = page.len() > PAGE;
    page.truncate(PAGE);
    let last = page.last().map(|p| p.reference_product_id.clone());
    Ok(json!({
        "products": page.iter().map(|p| render(p, ctx)).collect::<Vec<_>>(),
        "has_more": has_more,
        "last_product_id": last,
    }))
}
