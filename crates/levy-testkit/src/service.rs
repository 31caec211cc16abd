//! In-process services over a table, with the [`crate::keys`] of the test accounts.

use std::sync::Arc;

use levy_api::{Service, ServiceConfig, TableSource};
use levy_core::AnyTable;

/// A service over `table` with a fresh ledger (in memory, or a new PostgreSQL database
/// under `LEVY_TEST_LEDGER=postgres`: see [`crate::postgres`]) and the inline
/// [`crate::keys`].
pub fn over(table: Arc<AnyTable>) -> Service {
    with_ledger(table, &crate::postgres::ledger_or(":memory:"))
}

/// A service over `table` with the ledger at `ledger` (a path, or `:memory:`) and the
/// inline [`crate::keys`].
pub fn with_ledger(table: Arc<AnyTable>, ledger: &str) -> Service {
    Service::open(ServiceConfig {
        table: TableSource::Table(table),
        ledger: ledger.into(),
        keys: crate::keys::inline(),
    })
    .expect("the service opens")
}

/// A service over the default [`crate::tennessee`] table with a fresh ledger ([`over`]).
pub fn tennessee() -> Service {
    over(crate::tennessee::table())
}
