//! `GET /tax/ping`.

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::handler::Ctx;

/// `{status, env, timestamp, api_version}`, and levy's `levy_table`: the table's hash,
/// build time, horizon (the earliest of its inputs', with that input) and whether the
/// server's day is past it.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let now = crate::clock::now();
    let table = ctx.service.table();
    let horizon = crate::table_horizon(&table, now);
    Ok(json!({
        "status": "ok",
        "env": if ctx.testmode() { "test" } else { "prod" },
        "timestamp": crate::clock::iso8601(now),
        "api_version": ctx.version.as_str(),
        "levy_table": {
            "hash": table.header().hash_hex(),
            "built_at": crate::clock::iso8601(table.header().build_time),
            "horizon": horizon.as_ref().map(|(h, _)| h.clone()),
            "stale": horizon.is_some_and(|(_, past)| past),
        },
    }))
}
