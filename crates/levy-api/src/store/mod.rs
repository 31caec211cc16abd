//! The ledger: what the service stores, behind the [`Store`] trait, whose methods answer
//! in the ledger's own terms ([`StoreError`], and typed refusals, [`Refusal`]). It is a
//! layer below the interface: nothing here imports the interface's modules (its errors,
//! its JSON, its resources); the interface maps the ledger's errors to its own in one place.
//!
//! - `records.rs`: the records, in every database alike; `error.rs`: [`StoreError`],
//!   [`Refusal`]; `commit.rs`: [`Commit`], a write acknowledged later.
//! - `rules.rs` and `refund.rs`: the ledger's rules as pure functions (nexus effects of
//!   transactions, deletions, refunds and reversals; what remains to refund; a new refund;
//!   a merchant's change).
//! - `recipes.rs`: every operation of [`Store`] and [`PlatformStore`], and the recipe of
//!   every write (transaction, refund, reversal, deletion, outbox), written once for every
//!   [`Database`].
//! - `statements.rs`: what a database supplies, [`Statements`] (one method a statement)
//!   and [`Database`] (how it runs them). [`SqliteStore`] (`sqlite/`) is the embedded one,
//!   [`PostgresStore`] (`postgres/`, feature `postgres`) the shared one; a new store
//!   implements these two traits and writes the shared tables in its words.
//! - `kept.rs`: answers kept under idempotency keys ([`KeptStore`]), each in the same
//!   write as the record it answers.
//! - `tables.rs`: every table, defined once and rendered in each database's words; each
//!   store's `schema.rs` holds its migrations, the history of which definitions it created
//!   when.
//!
//! Every operation is scoped by account and mode. Every write but a calculation's is
//! committed and flushed before it returns; a calculation (a 24-hour quote) is committed
//! without waiting for the flush ([`Store::submit_calculation`]).

mod commit;
pub mod days;
mod error;
pub mod kept;
pub mod liability;
pub mod months;
mod recipes;
mod records;
pub mod refund;
pub mod rules;
mod statements;
mod tables;

pub use commit::Commit;
pub use error::{RecordKind, Refusal, Result, StoreError};
pub use kept::{Answered, Keep, KeptAnswer, KeptCount, KeptStore, Made, Write, KEEP_SECONDS};
pub use records::*;
pub use rules::Excess;
pub use rules::{nexus_sales, remaining};
pub use statements::{
    Database, Health, KeptStatements, Key, OutboxRow, OutboxStatements, Page, PlatformStatements,
    Quote, Statements,
};

#[cfg(feature = "postgres")]
mod copy;
#[cfg(test)]
mod index_check;
mod layout;
mod location;
mod pack;
#[cfg(feature = "postgres")]
mod pg_tls;
#[cfg(feature = "postgres")]
mod postgres;
mod seal;
pub(crate) use seal::from_json as open_sealed;
mod sqlite;
#[cfg(feature = "postgres")]
pub use copy::{copy_ledger, CopyReport, Skipped};
pub use location::{locate, redact, Location};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use sqlite::{inspect, worker_busy, workers_idle, LedgerReport, SqliteStore};

/// A calculation as the SQLite ledger stores it in the `data` column of `calculations`, in
/// any packing format (3, 2, 1, or sealed JSON text as bytes), read back: for tools that
/// read a ledger's rows themselves, and for the fuzz target `ledger_record`. Damage of any
/// kind (a digest or seal that does not match, a cut, a layout out of range) is
/// [`StoreError::Damaged`] or a ledger error, never a changed record and never a panic.
pub fn read_stored_calculation(stored: &[u8]) -> Result<CalculationRecord, StoreError> {
    let text = pack::unpack(rusqlite::types::ValueRef::Blob(stored))?;
    seal::from_json(&text)
}

/// A daily liability total as the SQLite ledger stores it (`liability_rows.amounts`, with
/// its `entries`; `liability_totals.sums` with its three counts), read back: the `N`
/// amounts, once the text's digest matches and its counts are `counts`. For tools that
/// read a ledger's rows themselves, and for the fuzz target `ledger_totals`: damage of any
/// kind is [`StoreError::Damaged`], never other amounts and never a panic.
pub fn read_daily_totals<const N: usize>(
    stored: &str,
    counts: &[i64],
) -> Result<[rust_decimal::Decimal; N], StoreError> {
    sqlite::unseal_numbers(stored, counts, "daily liability total")
}

/// Amounts and counts sealed as the SQLite ledger stores a daily liability total (the
/// text [`read_daily_totals`] reads back).
pub fn seal_daily_totals(amounts: &[rust_decimal::Decimal], counts: &[i64]) -> String {
    sqlite::seal_numbers(amounts, counts)
}

/// Whether a ledger location names a PostgreSQL database (a `postgres://…` or
/// `postgresql://…` URL, or `key=value` pairs) rather than an SQLite file ([`locate`]).
pub fn is_postgres_url(ledger: &str) -> bool {
    matches!(locate(ledger), Ok(Location::Postgres(_)))
}

/// Opens the ledger at `ledger`, read by [`locate`]: a PostgreSQL database for a
/// connection string (in a build with the `postgres` feature), an SQLite file (or
/// `:memory:`) otherwise; a location that is neither is refused.
pub fn open(ledger: &str) -> Result<Box<dyn Store>, StoreError> {
    match locate(ledger)? {
        Location::Postgres(_url) => {
            #[cfg(feature = "postgres")]
            return Ok(Box::new(PostgresStore::open(&_url)?));
            #[cfg(not(feature = "postgres"))]
            return Err(StoreError::ledger(
                "this build of levy has no PostgreSQL support (the levy-api feature `postgres`)",
            ));
        }
        Location::Memory => Ok(Box::new(SqliteStore::open(":memory:")?)),
        Location::Sqlite(path) => Ok(Box::new(SqliteStore::open(&path)?)),
    }
}

/// A kind of record, as a [`StoreError`] names it.
/// The ledger's operations. Each is atomic; each write is durable when it returns `Ok`.
pub trait Store: PlatformStore + KeptStore + Send + Sync {
    /// Whether reads wait on a network (a database server) rather than on a local file:
    /// a server then answers every request on threads that may block, never on its
    /// async workers.
    fn reads_cross_a_network(&self) -> bool;
    /// What the ledger knows of its database answering ([`Health`]): always answering
    /// for a local file; for PostgreSQL, whether it is unreachable, and whether requests
    /// wait on it.
    fn health(&self) -> Health {
        Health::default()
    }
    /// Adds a customer. [`StoreError::Duplicate`] when its `reference_customer_id` is taken.
    fn insert_customer(&self, scope: &Scope, customer: CustomerRecord) -> Result<(), StoreError>;
    /// A customer by id, or by `reference_customer_id` when `by_reference`.
    fn customer(
        &self,
        scope: &Scope,
        id: &str,
        by_reference: bool,
    ) -> Result<Option<CustomerRecord>, StoreError>;
    /// Deletes a customer; `false` when there was none.
    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool, StoreError>;
    /// Adds a product. [`StoreError::Duplicate`] when its id is taken.
    fn insert_product(&self, scope: &Scope, product: ProductRecord) -> Result<(), StoreError>;
    /// A product by `reference_product_id`.
    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>, StoreError>;
    /// Everything a calculation reads from the ledger, in one read that sees one state of
    /// it: the customer named by id (if it exists), the product of each line that names
    /// one (`None` for a line without one, or an unknown product), and, in live mode, the
    /// certificates of that customer when it is not exempt everywhere.
    ///
    /// With `registrations`, for a calculation with `automatic_tax: auto`, the seller's
    /// registrations active at the sale's time and the kinds it has any of
    /// ([`CalculationReads::registered`]), each through an index: not the account's
    /// other registrations, expired ones or other merchants'.
    fn calculation_reads(
        &self,
        scope: &Scope,
        customer_id: Option<&str>,
        product_ids: &[Option<&str>],
        registrations: Option<SellerAt<'_>>,
    ) -> Result<CalculationReads, StoreError>;
    /// Deletes a product; `false` when there was none.
    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool, StoreError>;
    /// Up to `limit` products after `cursor`, ordered by id.
    fn list_products(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProductRecord>, StoreError>;
    /// Stores a calculation.
    fn insert_calculation(&self, scope: &Scope, calc: &CalculationRecord)
        -> Result<(), StoreError>;
    /// Stores a calculation without waiting: the [`Commit`] resolves once it is stored. A
    /// store that writes in place stores it, and returns the commit resolved.
    fn submit_calculation(
        &self,
        scope: &Scope,
        calc: &CalculationRecord,
    ) -> Result<Commit, StoreError>;
    /// How many calculations and platform calculations `scope` stores that have not
    /// expired yet, and their bytes (up to a minute's worth of expired ones may still be
    /// counted: they are purged every minute). Used for
    /// [`crate::Limits::stored_calculations`] and
    /// [`crate::Limits::stored_calculation_bytes`].
    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations, StoreError>;
    /// A calculation that has not expired at `now`.
    fn calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<CalculationRecord>, StoreError>;
    /// Adds a transaction (and, in live mode, its sales to the nexus totals).
    /// [`StoreError::Duplicate`] when the order id is taken.
    fn insert_transaction(&self, scope: &Scope, tx: TransactionRecord) -> Result<(), StoreError>;
    /// A transaction, deleted or not.
    fn transaction(&self, scope: &Scope, id: &str)
        -> Result<Option<TransactionRecord>, StoreError>;
    /// The transaction of an order id and kind (`order`, `fee`), deleted or not: the one
    /// that took the order id.
    fn transaction_of_order(
        &self,
        scope: &Scope,
        order_id: &str,
        kind: &str,
    ) -> Result<Option<TransactionRecord>, StoreError>;
    /// Marks a transaction deleted and takes what remains of it off the nexus totals.
    /// Errors: [`StoreError::NotFound`], [`StoreError::AlreadyDeleted`].
    fn delete_transaction(&self, scope: &Scope, id: &str, at: i64) -> Result<(), StoreError>;
    /// Deletes a transaction as [`Store::delete_transaction`] does, marked replaced by
    /// `replaced_by` and its order id let go of, so that the version that replaced it (sent
    /// after) can take it: how a central ledger applies the deletion of a till's replaced
    /// sale ([`Write::Replacement`] on the till). Errors as `delete_transaction`'s.
    fn delete_replaced_transaction(
        &self,
        scope: &Scope,
        id: &str,
        at: i64,
        replaced_by: &str,
    ) -> Result<(), StoreError>;
    /// Adds the refund `ask` makes of the transaction, checked by the ledger's rules
    /// ([`refund::build`]) against what remains of it (its running refund total, not its
    /// refunds one by one), atomically with the check.
    /// [`StoreError::NotFound`] for an unknown or deleted transaction;
    /// [`StoreError::Rejected`] with the rules' [`Refusal`] when it does not fit;
    /// [`StoreError::Duplicate`] (of [`RecordKind::Refund`]) when the refund's id is
    /// already a refund's in this account and mode.
    fn insert_refund(
        &self,
        scope: &Scope,
        transaction_id: &str,
        ask: RefundAsk,
    ) -> Result<RefundRecord, StoreError>;
    /// Refunds of a transaction, oldest first.
    fn refunds(&self, scope: &Scope, transaction_id: &str)
        -> Result<Vec<RefundRecord>, StoreError>;
    /// Up to `limit` refunds of a transaction, oldest first, after the refund `after`
    /// (from the first when `None`). [`StoreError::NotFound`] (of [`RecordKind::Refund`])
    /// when `after` is not a refund of that transaction.
    fn refunds_page(
        &self,
        scope: &Scope,
        transaction_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RefundRecord>, StoreError>;
    /// A refund by its id, of any transaction of the scope.
    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>, StoreError>;
    /// Reverses a refund. [`StoreError::NotFound`], [`StoreError::AlreadyReversed`].
    fn reverse_refund(
        &self,
        scope: &Scope,
        refund_id: &str,
        at: i64,
    ) -> Result<RefundRecord, StoreError>;
    /// The liability report of `period` ([`liability`]): the transactions made and the
    /// refunds and reversals booked in it, per jurisdiction, read in one state of the
    /// ledger. A period of whole UTC days (every period of `levy report` and
    /// `GET /tax/reports/liability`) sums the ledger's daily totals ([`days`]), kept as
    /// each record is written; any other reads every record, as
    /// [`Store::liability_recount`] does.
    fn liability(
        &self,
        scope: &Scope,
        period: &liability::Period,
    ) -> Result<liability::Liability, StoreError>;
    /// The liability report of `period` from the records themselves: every transaction
    /// and refund of the scope read once, a page at a time. The same report as
    /// [`Store::liability`], which `levy report --recount` checks it against.
    fn liability_recount(
        &self,
        scope: &Scope,
        period: &liability::Period,
    ) -> Result<liability::Liability, StoreError>;
    /// Live nexus totals of an account.
    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>, StoreError>;
    /// The scope's monthly sales in `country` and its `sales_tax` registrations, in one
    /// snapshot: what economic-nexus monitoring reads.
    fn nexus_reads(&self, scope: &Scope, country: &str) -> Result<NexusReads, StoreError>;
    /// Up to `limit` unsent events of the outbox of one mode, oldest first, with their
    /// records sealed: what `levy sync` sends to a central ledger. `account`, when given,
    /// keeps one account's.
    fn outbox(
        &self,
        live: bool,
        account: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutboxEvent>, StoreError>;
    /// Up to `limit` events of the outbox of one mode that the central ledger refused as
    /// conflicts, after seq `after`, oldest first, with their records sealed as
    /// [`Store::outbox`] reads them: what `levy sync` asks the central ledger to check
    /// again. `account`, when given, keeps one account's.
    fn outbox_conflict_events(
        &self,
        live: bool,
        account: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<OutboxEvent>, StoreError>;
    /// The accounts with unsent events of one mode.
    fn outbox_accounts(&self, live: bool) -> Result<Vec<String>, StoreError>;
    /// Puts the events of one mode the central ledger refused as conflicts back in the
    /// outbox, to be sent again (once their cause is settled: the central order id freed,
    /// its body limit raised); returns how many.
    fn retry_conflicts(&self, live: bool) -> Result<usize, StoreError>;
    /// Records what the central ledger answered for events: sent, or a conflict with its
    /// message (kept, and no longer sent).
    fn mark_outbox(&self, marks: Vec<OutboxMark>) -> Result<(), StoreError>;
    /// The events of one mode the central ledger refused as conflicts: `(seq, kind, id,
    /// why)`, oldest first.
    fn outbox_conflicts(
        &self,
        live: bool,
    ) -> Result<Vec<(i64, String, String, String)>, StoreError>;
}

/// The ledger's operations for merchants, platform sales, registrations and certificates.
pub trait PlatformStore: Send + Sync {
    /// Adds a merchant. [`StoreError::Duplicate`] when its `reference_merchant_id` is taken.
    fn insert_merchant(&self, scope: &Scope, merchant: MerchantRecord) -> Result<(), StoreError>;
    /// A merchant by `merch_…` id, else by `reference_merchant_id`.
    fn merchant(&self, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>, StoreError>;
    /// Changes a merchant at `at`, atomically, by the ledger's rules
    /// ([`rules::change_merchant`]); `None` when there is no such merchant;
    /// [`StoreError::Rejected`] ([`Refusal::MerchantDeleted`]) for an update of a deleted
    /// merchant.
    fn change_merchant(
        &self,
        scope: &Scope,
        id: &str,
        change: MerchantChange,
        at: i64,
    ) -> Result<Option<MerchantRecord>, StoreError>;
    /// Up to `limit` merchants after `cursor` (a `merch_…` id), ordered by id.
    fn list_merchants(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: MerchantFilter,
        limit: usize,
    ) -> Result<Vec<MerchantRecord>, StoreError>;
    /// Adds a registration.
    fn insert_registration(
        &self,
        scope: &Scope,
        registration: RegistrationRecord,
    ) -> Result<(), StoreError>;
    /// A registration by `reg_…` id.
    fn registration(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<RegistrationRecord>, StoreError>;
    /// Expires a registration at `at`, asked for at `now`, atomically, by the ledger's
    /// rules ([`rules::expire_registration`]). [`StoreError::NotFound`] (of
    /// [`RecordKind::Registration`]) when there is none; [`StoreError::Rejected`] with
    /// [`Refusal::RegistrationExpired`] or [`Refusal::RegistrationExpiry`].
    fn expire_registration(
        &self,
        scope: &Scope,
        id: &str,
        at: i64,
        now: i64,
    ) -> Result<RegistrationRecord, StoreError>;
    /// Up to `limit` registrations after `cursor` (a `reg_…` id) that `filter` shows,
    /// ordered by id.
    fn list_registrations(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: &RegistrationFilter,
        limit: usize,
    ) -> Result<Vec<RegistrationRecord>, StoreError>;
    /// Stores a platform calculation.
    fn insert_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<(), StoreError>;
    /// Stores a platform calculation without waiting: the [`Commit`] resolves once it is
    /// stored. A store that writes in place stores it, and returns the commit resolved.
    fn submit_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<Commit, StoreError>;
    /// A platform calculation that has not expired at `now`.
    fn platform_calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<PlatformCalculationRecord>, StoreError>;
    /// Adds several transactions at once, all or none (with their nexus totals).
    fn insert_transactions(
        &self,
        scope: &Scope,
        txs: Vec<TransactionRecord>,
    ) -> Result<(), StoreError>;
    /// Adds certificates, their documents and requests, all or none.
    fn import_certificates(&self, account: &str, batch: CertificateBatch)
        -> Result<(), StoreError>;
    /// An account's certificates, oldest id first; only one customer's when given.
    fn certificates(
        &self,
        account: &str,
        customer_id: Option<&str>,
    ) -> Result<Vec<CertificateRecord>, StoreError>;
    /// One certificate of an account.
    fn certificate(&self, account: &str, id: &str)
        -> Result<Option<CertificateRecord>, StoreError>;
    /// A certificate's document, by certificate id: content type and bytes.
    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>, StoreError>;
    /// An account's certificate requests, ordered by id.
    fn certificate_requests(
        &self,
        account: &str,
    ) -> Result<Vec<CertificateRequestRecord>, StoreError>;
    /// One certificate request of an account.
    fn certificate_request(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRequestRecord>, StoreError>;
    /// Cancels a request following the state table; [`StoreError::NotFound`],
    /// [`StoreError::RequestFulfilled`], [`StoreError::RequestInvalid`].
    fn cancel_certificate_request(
        &self,
        account: &str,
        id: &str,
        at: i64,
    ) -> Result<CertificateRequestRecord, StoreError>;
    /// A 32-byte secret of the ledger by name, generated on first use (from the operating
    /// system's generator; [`StoreError::Internal`] when it fails).
    fn secret(&self, name: &str) -> Result<[u8; 32], StoreError>;
}
