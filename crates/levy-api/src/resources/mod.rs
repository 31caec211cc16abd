//! One module per resource of the interface.

pub(crate) mod calculations;
pub(crate) mod certificates;
pub(crate) mod customers;
pub(crate) mod merchants;
pub(crate) mod ping;
pub(crate) mod platform;
pub(crate) mod products;
pub(crate) mod refunds;
pub(crate) mod transactions;

use crate::error::{ApiError, ErrorKind};
use crate::json::Obj;
use crate::router::Ctx;

/// Reads a POST body as a JSON object, runs `f` on it and checks that every field was taken.
pub(crate) fn body<T>(
    ctx: &Ctx<'_>,
    f: impl FnOnce(&mut Obj<'_>) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    ctx.query_params(&[])?;
    let map = crate::json::parse_body(&ctx.req.body)?;
    let mut obj = Obj::root(&map);
    let out = f(&mut obj)?;
    obj.finish()?;
    Ok(out)
}

/// A `*_NOT_FOUND` error naming the id.
pub(crate) fn not_found(kind: ErrorKind, what: &str, field: &str, id: &str) -> ApiError {
    ApiError::field(
        kind,
        field,
        format!("no {what} with id {id:?}"),
        format!("the id of an existing {what}"),
        id,
    )
}
