//! `GET /tax/ping`.

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::handler::Ctx;

/// `{status, env, timestamp, api_version}`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    Ok(json!({
        "status": "ok",
        "env": if ctx.testmode() { "test" } else { "prod" },
        "timestamp": crate::clock::iso8601(crate::clock::now()),
        "api_version": ctx.version.as_str(),
    }))
}
