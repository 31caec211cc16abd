//! In-process services over a table, with the [`crate::keys`] of the test accounts.

use std::sync::Arc;

use levy_api::{Service, ServiceConfig, TableSource};
use levy_core::AnyTable;

/// A service over `table` with an in-memory ledger and the inline [`crate::keys`].
pub fn over(table: Arc<AnyTable>) -> Service {
    with_ledger(table, ":memory:")
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

/// A service over the default [`crate::tennessee`] table with an in-memory ledger.
pub fn tennessee() -> Service {
    over(crate::tennessee::table())
}
