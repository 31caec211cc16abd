//! What a database supplies to be a ledger: its statements ([`Statements`]), one method a
//! statement, and how it runs them ([`Database`]): in a read, in a read that sees one state
//! of the ledger, in an atomic and durable write, and a calculation's insert that is not
//! waited for. Everything else, the recipes of every write (transaction, refund, reversal,
//! deletion, outbox) and the ledger's rules, is written once in `store/recipes.rs` and
//! `store/rules.rs`, and every [`Database`] is a [`super::Store`] through them.
//!
//! A statement answers in the ledger's terms: records and [`StoreError`]. Inside a write, a
//! read of a row that the write may change (a transaction, a refund, a merchant, a
//! certificate request) keeps others from changing it until the write ends, where writes
//! run side by side (PostgreSQL: `SELECT … FOR UPDATE`); a database with one writer
//! (SQLite) needs nothing for that.

use super::days::{DayChange, DayRow, DayTotal};
use super::error::Result;
use super::kept::{KeptAnswer, KeptCount};
use super::months::MonthChange;
use super::records::*;
use super::rules::{NexusChange, Refunded};
use super::Commit;

/// An outbox event as stored: `(seq, account, kind, record id)`, or, for conflicts,
/// `(seq, kind, record id, why)`.
pub type OutboxRow = (i64, String, String, String);

/// Which record a lookup names: by the service's id, or by the client's own
/// (`reference_customer_id`, `reference_merchant_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'a> {
    /// The service's id (`cus_…`, `merch_…`).
    Id(&'a str),
    /// The client's id.
    Reference(&'a str),
}

impl<'a> Key<'a> {
    /// The statement of this kind of key (`by_id` or `by_reference`), and the id.
    pub fn pick(self, by_id: &'static str, by_reference: &'static str) -> (&'static str, &'a str) {
        match self {
            Key::Id(id) => (by_id, id),
            Key::Reference(id) => (by_reference, id),
        }
    }
}

/// A page of a list ordered by id: the ids after `after` (by bytes), `limit` at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page<'a> {
    /// The last id of the page before (`""` for the first page).
    pub after: &'a str,
    /// The most rows.
    pub limit: i64,
}

/// The statements of a ledger, each run inside the read or write that [`Database`] opened.
/// Every statement that reads or writes an account's records names its [`Scope`] (account
/// and mode). Records are stored sealed ([`super::seal`]), except what a database keeps in
/// a form of its own (SQLite's packed calculations, PostgreSQL's numeric nexus totals).
pub trait Statements: PlatformStatements + OutboxStatements + KeptStatements {
    /// Inserts a customer; [`StoreError::Duplicate`] when its `reference_customer_id` is
    /// taken by a customer not deleted.
    fn insert_customer(&self, scope: &Scope, c: &CustomerRecord) -> Result<()>;
    /// A customer not deleted, by id or by `reference_customer_id`.
    fn customer(&self, scope: &Scope, key: Key) -> Result<Option<CustomerRecord>>;
    /// Marks a customer deleted at `at`; `false` when there was none (or it was deleted).
    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool>;

    /// Inserts a product; [`StoreError::Duplicate`] when its id is taken.
    fn insert_product(&self, scope: &Scope, p: &ProductRecord) -> Result<()>;
    /// A product by `reference_product_id`.
    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>>;
    /// Deletes a product; `false` when there was none.
    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool>;
    /// A page of products, by id (by bytes).
    fn products(&self, scope: &Scope, page: Page) -> Result<Vec<ProductRecord>>;

    /// A calculation that has not expired at `now`.
    fn calculation(&self, scope: &Scope, id: &str, now: i64) -> Result<Option<CalculationRecord>>;
    /// How many calculations and platform calculations the scope stores, and their bytes.
    fn count_calculations(&self, scope: &Scope) -> Result<StoredCalculations>;

    /// Inserts a transaction's row; [`StoreError::Duplicate`] when its order id is taken
    /// for its kind (`order`, `fee`).
    fn insert_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()>;
    /// A transaction, deleted or not.
    fn transaction(&self, scope: &Scope, id: &str) -> Result<Option<TransactionRecord>>;
    /// The transaction of an order id and kind (`order`, `fee`), deleted or not.
    fn transaction_of_order(
        &self,
        scope: &Scope,
        order_id: &str,
        kind: &str,
    ) -> Result<Option<TransactionRecord>>;
    /// Writes a transaction back (its record and `deleted_at`).
    fn update_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()>;
    /// Lets go of a replaced transaction's order id, for the version that replaces it: its
    /// row's kind becomes `replaced:<its id>` (unique, as the id is), so that the order id
    /// reads ([`Statements::transaction_of_order`]) and the unique index of order ids see
    /// the new version alone; the row is kept, and read by its id as before.
    fn retire_order_id(&self, scope: &Scope, id: &str) -> Result<()>;
    /// A transaction's running refund total, when one is kept ([`Refunded`]).
    fn refunded(&self, scope: &Scope, tx_id: &str) -> Result<Option<Refunded>>;
    /// Keeps a transaction's running refund total.
    fn set_refunded(&self, scope: &Scope, tx_id: &str, refunded: &Refunded) -> Result<()>;

    /// Inserts a refund as its transaction's `seq`th; [`StoreError::Duplicate`] (of
    /// [`RecordKind::Refund`]) when its id is taken.
    fn insert_refund(&self, scope: &Scope, r: &RefundRecord, seq: i64) -> Result<()>;
    /// A refund by id.
    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>>;
    /// Writes a refund back.
    fn update_refund(&self, scope: &Scope, r: &RefundRecord) -> Result<()>;
    /// Refunds of a transaction in order: up to `seqs.1` of them, whose place is after `seqs.0`.
    fn refunds(&self, scope: &Scope, tx_id: &str, seqs: (i64, i64)) -> Result<Vec<RefundRecord>>;
    /// The place of refund `id` among its transaction's refunds, when it is one of them.
    fn refund_seq(&self, scope: &Scope, tx_id: &str, id: &str) -> Result<Option<i64>>;
    /// Up to `page.limit` transactions of the scope, deleted or not, after `page.after` in
    /// the order of the primary key (the database's own: a range of its index), as
    /// `(id, sealed record)`: every transaction, a page at a time, for a
    /// report, which unseals only what it reads of them.
    fn transactions_sealed(&self, scope: &Scope, page: Page) -> Result<Vec<(String, String)>>;
    /// Up to `page.limit` refunds of the scope, of any transaction, after `page.after` in
    /// the order of the primary key.
    fn refunds_by_id(&self, scope: &Scope, page: Page) -> Result<Vec<RefundRecord>>;

    /// Adds `change` to the account's nexus total of the place and currency of `tx`.
    fn add_nexus(&self, account: &str, tx: &TransactionRecord, change: NexusChange) -> Result<()>;
    /// The account's nexus totals, ordered by country, region and currency (by bytes).
    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>>;
    /// Adds `change` to the scope's sales of its month in the place and currency of `tx`.
    fn add_nexus_month(
        &self,
        scope: &Scope,
        tx: &TransactionRecord,
        change: &MonthChange,
    ) -> Result<()>;
    /// The scope's monthly sales in `country`, ordered by region, currency and month (by
    /// bytes).
    fn nexus_months(&self, scope: &Scope, country: &str) -> Result<Vec<NexusMonth>>;
    /// Adds `change` (one booking, or a booking taken back) to the scope's daily
    /// liability totals.
    fn add_liability_day(&self, scope: &Scope, change: &DayChange) -> Result<()>;
    /// The scope's daily liability totals of the UTC days `[days.0, days.1)`, of one
    /// region (upper case) or all.
    fn liability_days(
        &self,
        scope: &Scope,
        days: (i64, i64),
        region: Option<&str>,
    ) -> Result<(Vec<DayRow>, Vec<DayTotal>)>;
}

/// The statements of merchants, platform calculations, registrations, certificates and
/// the ledger's secrets (a part of [`Statements`]).
pub trait PlatformStatements {
    /// A platform calculation, expired or not (the caller checks `order.expires_at`).
    fn platform_calc(&self, scope: &Scope, id: &str) -> Result<Option<PlatformCalculationRecord>>;
    /// Inserts a merchant; [`StoreError::Duplicate`] when its reference is taken.
    fn insert_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()>;
    /// A merchant by `merch_…` id, or by `reference_merchant_id`.
    fn merchant(&self, scope: &Scope, key: Key) -> Result<Option<MerchantRecord>>;
    /// Writes a merchant back; [`StoreError::Duplicate`] when its new reference is taken.
    fn update_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()>;
    /// A page of merchants of the statuses `status` matches (a SQL `LIKE` pattern,
    /// [`MerchantFilter::pattern`]), by id (by bytes).
    fn merchants(&self, scope: &Scope, status: &str, page: Page) -> Result<Vec<MerchantRecord>>;

    /// Inserts a registration.
    fn insert_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()>;
    /// A registration by `reg_…` id.
    fn registration(&self, scope: &Scope, id: &str) -> Result<Option<RegistrationRecord>>;
    /// Writes a registration back.
    fn update_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()>;
    /// A page of registrations whose country and region match the SQL `LIKE` patterns of
    /// `filter` ([`RegistrationFilter::country_pattern`]), by id (by bytes).
    fn registrations(
        &self,
        scope: &Scope,
        filter: &RegistrationFilter,
        page: Page,
    ) -> Result<Vec<RegistrationRecord>>;
    /// Every registration of the scope of one kind, expired ones included, by id.
    fn registrations_of_kind(
        &self,
        scope: &Scope,
        kind: RegistrationKind,
    ) -> Result<Vec<RegistrationRecord>>;
    /// What a calculation reads of one seller's registrations of `kind` (`seller`: a
    /// merchant's id, `""` for the account's own, [`RegistrationRecord::seller_key`]):
    /// those active at `at`, by id, and whether it has any of that kind, active or not;
    /// each through the index of a seller's registrations by kind and end
    /// (`registrations_active`), whatever else the account has.
    fn seller_registrations(
        &self,
        scope: &Scope,
        seller: &str,
        kind: RegistrationKind,
        at: i64,
    ) -> Result<(Vec<RegistrationRecord>, bool)>;

    /// Inserts a certificate of an account.
    fn insert_certificate(&self, account: &str, c: &CertificateRecord) -> Result<()>;
    /// Inserts a certificate's document.
    fn insert_document(&self, id: &str, content_type: &str, bytes: &[u8]) -> Result<()>;
    /// Inserts a certificate request of an account.
    fn insert_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()>;
    /// An account's certificates (those of customer `owner` when given), by id.
    fn certificates(&self, account: &str, customer: Option<&str>)
        -> Result<Vec<CertificateRecord>>;
    /// One certificate of an account.
    fn certificate(&self, account: &str, id: &str) -> Result<Option<CertificateRecord>>;
    /// A certificate's document: content type and bytes.
    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>>;
    /// An account's certificate requests, by id.
    fn requests(&self, account: &str) -> Result<Vec<CertificateRequestRecord>>;
    /// One certificate request of an account.
    fn request(&self, account: &str, id: &str) -> Result<Option<CertificateRequestRecord>>;
    /// Writes a certificate request back.
    fn update_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()>;

    /// The secret of that name: `fresh`, stored now, when there is none yet.
    fn secret(&self, name: &str, fresh: &[u8; 32]) -> Result<Vec<u8>>;
}

/// The statements of the outbox: what a till's ledger has yet to send to a central one
/// (`levy sync`), kept in the same write as the record it names (a part of [`Statements`]).
pub trait OutboxStatements {
    /// Appends an event (`transaction`, `refund`, `reversal`, `deletion`) to the outbox.
    fn outbox_add(&self, scope: &Scope, kind: &str, id: &str) -> Result<()>;
    /// Up to `limit` unsent events of one mode (of one account when given), oldest first.
    fn unsent(&self, live: bool, account: Option<&str>, limit: i64) -> Result<Vec<OutboxRow>>;
    /// Up to `limit` events of one mode (of one account when given) held as conflicts,
    /// after `seq` `after`, oldest first: `(seq, account, kind, record id)`.
    fn conflicted(
        &self,
        live: bool,
        account: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<OutboxRow>>;
    /// The accounts with unsent events of one mode, ordered.
    fn outbox_accounts(&self, live: bool) -> Result<Vec<String>>;
    /// Sets an event's state (`sent`, `conflict`) and note.
    fn outbox_mark(&self, seq: i64, state: &str, note: Option<&str>) -> Result<()>;
    /// Puts one mode's conflicts back as unsent; how many.
    fn outbox_retry(&self, live: bool) -> Result<usize>;
    /// One mode's conflicts, oldest first: `(seq, kind, record id, why)`.
    fn outbox_conflicts(&self, live: bool) -> Result<Vec<OutboxRow>>;
}

/// The statements of answers kept under idempotency keys ([`super::kept`]; a part of
/// [`Statements`]).
pub trait KeptStatements {
    /// The answer kept under `key` that has not expired at `now`.
    fn kept(&self, scope: &Scope, key: &str, now: i64) -> Result<Option<KeptAnswer>>;
    /// Keeps `answer` under its key, in place of an answer that has expired by its
    /// `created_at`; [`StoreError::Duplicate`] (of [`RecordKind::IdempotencyKey`]) when an
    /// unexpired one is kept under it.
    fn keep(&self, scope: &Scope, answer: &KeptAnswer) -> Result<()>;
    /// How many unexpired answers the scope keeps at `now`, and their bytes.
    fn count_kept(&self, scope: &Scope, now: i64) -> Result<KeptCount>;
}

/// A calculation to store without waiting ([`Database::submit`]).
#[derive(Clone, Copy, Debug)]
pub enum Quote<'a> {
    /// A calculation.
    Calculation(&'a CalculationRecord),
    /// A platform calculation.
    Platform(&'a PlatformCalculationRecord),
}

/// How a database runs its [`Statements`]. With them, it is a whole ledger: the recipes
/// make every `Database` a [`super::Store`] and a [`super::PlatformStore`].
pub trait Database: Send + Sync + 'static {
    /// Runs `work` over one read (single statements need no more).
    fn read<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R> + Send + 'static,
    ) -> Result<R>;
    /// Runs `work` over reads that see one state of the ledger.
    fn snapshot<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R> + Send + 'static,
    ) -> Result<R>;
    /// Runs `work` as one write: all of it or nothing, other writes kept from interleaving,
    /// committed and flushed to the disk before this returns `Ok`.
    fn write<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R> + Send + 'static,
    ) -> Result<R>;
    /// Stores a calculation (24-hour quote) without waiting: the [`Commit`] resolves once it
    /// is committed (without a flush; the client may ask again). With `kept`, that answer
    /// is kept under its key ([`KeptStatements::keep`]) in the same commit: both or neither.
    fn submit(&self, scope: &Scope, quote: Quote<'_>, kept: Option<&KeptAnswer>) -> Result<Commit>;
    /// How many unexpired calculations the scope stores, and their bytes: counted by
    /// [`Statements::count_calculations`], kept for as long as the database's policy says.
    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations>;
    /// Whether reads wait on a network (a database server) rather than on a local file.
    fn reads_cross_a_network(&self) -> bool {
        false
    }
    /// What the database's answering looks like now ([`Health`]); a local file is always
    /// answering.
    fn health(&self) -> Health {
        Health::default()
    }
}

/// What a ledger across a network knows of its database answering
/// ([`super::Store::health`]): for a request refused because its account's requests at
/// once are all taken, whether they are held up by the ledger rather than by the
/// account's own load.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// Why the database counts as unreachable, when it does: a connection could not be
    /// had, or a statement got no answer, within its bound; or requests have waited on it
    /// for a while (half a second) without any answer.
    pub unreachable: Option<String>,
    /// Whether requests are waiting on it now.
    pub waiting: bool,
    /// When it last answered.
    pub answered: Option<std::time::Instant>,
}
