//! One module per resource of the interface.

pub(crate) mod calculations;
pub(crate) mod certificates;
pub(crate) mod customers;
pub(crate) mod merchants;
pub(crate) mod nexus;
pub(crate) mod ping;
pub(crate) mod platform;
pub(crate) mod products;
pub(crate) mod refunds;
pub(crate) mod registrations;
pub(crate) mod reports;
pub(crate) mod sync;
pub(crate) mod sync_check;
pub(crate) mod transactions;
