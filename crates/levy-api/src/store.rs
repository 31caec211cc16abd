//! The ledger: what the service stores, behind the [`Store`] trait, whose methods answer
//! in the ledger's own terms ([`StoreError`]).
//!
//! [`SqliteStore`] is the embedded implementation. A store for another database implements
//! the same trait; the pure functions of [`crate::ledger`] (nexus effects of transactions,
//! deletions, refunds and reversals; what remains to refund) keep the money rules in one
//! place for every implementation. Every method is scoped by account and
//! mode, and every write is committed durably before the method returns.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::commit::Commit;
use crate::error::ApiError;
pub use crate::keys::Scope;
pub use crate::ledger::{nexus_sales, remaining};

#[cfg(feature = "postgres")]
mod copy;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordKind {
    /// A customer; its client id is `reference_customer_id`.
    Customer,
    /// A product; its client id is `reference_product_id`.
    Product,
    /// A merchant; its client id is `reference_merchant_id`.
    Merchant,
    /// A transaction; its client id is `reference_order_id`.
    Transaction,
    /// A refund.
    Refund,
    /// A certificate request.
    CertificateRequest,
}

impl RecordKind {
    /// The record's name in messages (`certificate request`).
    pub fn noun(self) -> &'static str {
        match self {
            RecordKind::Customer => "customer",
            RecordKind::Product => "product",
            RecordKind::Merchant => "merchant",
            RecordKind::Transaction => "transaction",
            RecordKind::Refund => "refund",
            RecordKind::CertificateRequest => "certificate request",
        }
    }

    /// The field of the client's own id, unique per account and mode
    /// (`reference_order_id`); the service's id (`id`) for records without one.
    pub fn client_id_field(self) -> &'static str {
        match self {
            RecordKind::Customer => "reference_customer_id",
            RecordKind::Product => "reference_product_id",
            RecordKind::Merchant => "reference_merchant_id",
            RecordKind::Transaction => "reference_order_id",
            RecordKind::Refund | RecordKind::CertificateRequest => "id",
        }
    }
}

/// What a [`Store`] refuses or fails with: the ledger's own terms, without HTTP statuses.
/// [`ApiError`]'s `From<StoreError>` (in the error module) is the one place that turns
/// them into the interface's errors. The `Display` text of a ledger failure is the
/// message the interface answers with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The client's id of a new or changed record is already taken.
    #[error("a {} with {} {value:?} already exists", .what.noun(), .what.client_id_field())]
    Duplicate {
        /// The record.
        what: RecordKind,
        /// The id that is taken.
        value: String,
    },
    /// The record the operation needs does not exist (a deleted transaction counts as
    /// missing when refunding).
    #[error("no {} {id}", .what.noun())]
    NotFound {
        /// The record.
        what: RecordKind,
        /// The id asked for.
        id: String,
    },
    /// The transaction was already deleted.
    #[error("transaction {id} was already deleted")]
    AlreadyDeleted {
        /// The transaction's id.
        id: String,
    },
    /// The refund was already reversed.
    #[error("refund {id} was already reversed")]
    AlreadyReversed {
        /// The refund's id.
        id: String,
    },
    /// A fulfilled certificate request cannot be canceled.
    #[error("certificate request {id} is fulfilled and cannot be canceled")]
    RequestFulfilled {
        /// The request's id.
        id: String,
    },
    /// A certificate request in the terminal invalid state cannot be canceled.
    #[error("certificate request {id} is invalid (a terminal state) and cannot be canceled")]
    RequestInvalid {
        /// The request's id.
        id: String,
    },
    /// The ledger failed (I/O error, disk full, a closed ledger); nothing was changed.
    #[error("the ledger could not complete the request: {0}")]
    Ledger(String),
    /// A stored record or nexus total does not match its seal (damage on disk); it was
    /// not used.
    #[error("the ledger could not complete the request: a stored record is damaged ({what}); it was not used. Restore the ledger from a backup")]
    Damaged {
        /// What is wrong (`digest mismatch`).
        what: String,
    },
    /// The file to open is not a levy ledger; it was left untouched.
    #[error("{path} is not a levy ledger: {why}; it was left untouched. Point --ledger at a levy ledger, or at a path that does not exist yet to start a new one")]
    NotALedger {
        /// The file.
        path: String,
        /// Why not.
        why: String,
    },
    /// The ledger was written by a newer release.
    #[error("the ledger's schema version {found} is newer than this release's {supported}; upgrade levy")]
    SchemaTooNew {
        /// The ledger's schema version.
        found: i64,
        /// The newest this release knows.
        supported: i64,
    },
    /// The ledger file's structure is damaged (`PRAGMA quick_check`); it was left untouched.
    #[error("{path} is damaged (SQLite quick_check: {}); it was left untouched. Restore it from a backup", .problems.join("; "))]
    FileDamaged {
        /// The file.
        path: String,
        /// What the check found.
        problems: Vec<String>,
    },
    /// The store failed unexpectedly (a write that panicked, no randomness).
    #[error("{0}")]
    Internal(String),
    /// The caller's closure run inside a write ([`RefundBuilder`], [`MerchantChange`])
    /// refused the change: its error, passed through unchanged, and nothing was written.
    /// Those closures apply the interface's rules to what the store read, so they speak
    /// the interface's error.
    #[error("{}", .0.message)]
    Rejected(ApiError),
}

impl StoreError {
    /// A ledger failure from any error.
    pub fn ledger(e: impl std::fmt::Display) -> StoreError {
        StoreError::Ledger(e.to_string())
    }
}

impl From<ApiError> for StoreError {
    /// A closure's error: [`StoreError::Rejected`].
    fn from(e: ApiError) -> StoreError {
        StoreError::Rejected(e)
    }
}

/// A buyer's tax id as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxIdRecord {
    /// `VAT`, `GST` or `EIN`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id.
    pub value: String,
}

/// A customer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomerRecord {
    /// `cus_…`.
    pub id: String,
    /// The client's id for the customer.
    pub reference_customer_id: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Exempt from tax everywhere.
    pub is_tax_exempt: bool,
    /// `CONSUMER` or `BUSINESS`, when given.
    pub kind: Option<String>,
    /// Tax ids.
    pub tax_ids: Vec<TaxIdRecord>,
    /// Epoch seconds.
    pub created_at: i64,
}

/// A product.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductRecord {
    /// The client's product id (the key).
    pub reference_product_id: String,
    /// Name.
    pub reference_product_name: String,
    /// Category (a category of the rate table).
    pub product_category: String,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
}

/// One jurisdiction entry of a line, with everything needed to render it later even after
/// the rate table has been replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JurisdictionRecord {
    /// Statutory rate, a fraction.
    pub tax_rate: Decimal,
    /// Unrounded tax due, minor units.
    pub tax_due: Decimal,
    /// Fee, minor units.
    pub fee: Decimal,
    /// Rate type label.
    pub rate_type: String,
    /// Jurisdiction name.
    pub jurisdiction_name: String,
    /// Jurisdiction code (FIPS, ISO).
    pub jurisdiction_code: String,
    /// Authority name.
    pub authority_name: String,
    /// `STATE`, `COUNTY`, …
    pub authority_type: String,
    /// `SALES`, `USE`, `VAT`, `GST`.
    pub tax_type: String,
    /// `RATE_FRAC`, `PROGRESSIVE_RATE`, …
    pub note: String,
    /// The rule id in the table that produced it.
    pub rule_id: u32,
    /// The exemption certificate that zeroed this entry, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption_certificate_id: Option<String>,
}

/// One line of a calculation, transaction or refund.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRecord {
    /// `li_…`.
    pub line_item_id: String,
    /// The registered product, when the line named one.
    pub reference_product_id: Option<String>,
    /// Its name.
    pub reference_product_name: Option<String>,
    /// The client's line id.
    pub reference_line_item_id: Option<String>,
    /// The tax code used.
    pub product_tax_code: String,
    /// Quantity.
    pub quantity: u32,
    /// Minor units.
    pub amount_excluding_tax: Decimal,
    /// Minor units.
    pub tax_amount: Decimal,
    /// Minor units.
    pub amount_including_tax: Decimal,
    /// Jurisdiction entries.
    pub jurisdictions: Vec<JurisdictionRecord>,
}

/// Where a calculation was placed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceRecord {
    /// `EXACT`, `POSTAL_FALLBACK_1`, `POSTAL_ONLY`.
    pub status: String,
    /// `STREET` … `APPROXIMATED`.
    pub precision: String,
    /// `address` or `ip`.
    pub source: String,
    /// Address used, `address_*` fields.
    pub line1: String,
    /// Second line.
    pub line2: String,
    /// City.
    pub city: String,
    /// Region (state, province).
    pub region: String,
    /// Postal code.
    pub postal_code: String,
    /// Country.
    pub country: String,
}

/// A calculation, stored until it expires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalculationRecord {
    /// `calc_…`.
    pub id: String,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds; a transaction cannot be made from it afterwards.
    pub expires_at: i64,
    /// When the sale happened (decided the rates).
    pub transacted_at: i64,
    /// ISO 4217.
    pub currency: String,
    /// Whether amounts included tax.
    pub tax_included: bool,
    /// `auto` or `disabled`.
    pub automatic_tax: String,
    /// The customer id given, if any.
    pub customer_id: Option<String>,
    /// `CONSUMER` or `BUSINESS`.
    pub customer_type: String,
    /// Where.
    pub place: PlaceRecord,
    /// Lines.
    pub lines: Vec<LineRecord>,
    /// Sum of line tax.
    pub total_tax: Decimal,
    /// Sum of lines excluding tax.
    pub total_excluding_tax: Decimal,
    /// Sum of lines including tax.
    pub total_including_tax: Decimal,
    /// Hash of the table that produced it.
    pub table_hash: String,
    /// Client metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// A transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionRecord {
    /// `tr_…`.
    pub id: String,
    /// The calculation it was made from.
    pub calculation_id: String,
    /// The client's order id (unique per account and mode).
    pub reference_order_id: String,
    /// Epoch seconds of the sale.
    pub processed_at: i64,
    /// Epoch seconds.
    pub created_at: i64,
    /// ISO 4217.
    pub currency: String,
    /// Whether amounts included tax.
    pub tax_included: bool,
    /// ISO country of the sale's place.
    pub country: String,
    /// Region of the sale's place.
    pub region: String,
    /// Lines, copied from the calculation.
    pub lines: Vec<LineRecord>,
    /// Client metadata.
    pub metadata: Option<Map<String, Value>>,
    /// When deleted, if it was.
    pub deleted_at: Option<i64>,
    /// Set on platform transactions: `order` or `fee`, payment and merchant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<PlatformTransactionInfo>,
    /// The hash of the rate table that calculated it (absent on records stored before
    /// it was kept); a central ledger that receives the record by sync flags a hash it
    /// does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_hash: Option<String>,
}

/// One refunded line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundLineRecord {
    /// Index of the transaction's line.
    pub index: usize,
    /// The line with negative amounts.
    pub line: LineRecord,
}

/// A refund.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundRecord {
    /// `ref_tr_…`.
    pub id: String,
    /// The transaction refunded.
    pub transaction_id: String,
    /// `full` or `partial`.
    pub refund_type: String,
    /// Epoch seconds.
    pub processed_at: i64,
    /// Epoch seconds.
    pub created_at: i64,
    /// Lines, negative amounts.
    pub lines: Vec<RefundLineRecord>,
    /// When reversed, if it was.
    pub reversed_at: Option<i64>,
}

/// What a calculation reads from the ledger ([`Store::calculation_reads`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CalculationReads {
    /// The stored customer the request named, if it exists.
    pub customer: Option<CustomerRecord>,
    /// Per line: the registered product it names, `None` when it names none or the
    /// product does not exist.
    pub products: Vec<Option<ProductRecord>>,
    /// The customer's certificates (live mode, a customer not exempt everywhere).
    pub certificates: Vec<CertificateRecord>,
}

/// An event of a till's outbox ([`SqliteStore::outbox`]): a record to send to a central
/// ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxEvent {
    /// Its place in the outbox (increasing).
    pub seq: i64,
    /// The account (internal id) that wrote it.
    pub account: String,
    /// `transaction`, `refund`, `reversal` or `deletion`.
    pub kind: String,
    /// The record's id (`tr_…`, `ref_tr_…`).
    pub id: String,
    /// The record, sealed with its digest (`{"blake3":"…","record":{…}}`).
    pub record: String,
}

/// What the central ledger answered for one outbox event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxMark {
    /// The event.
    pub seq: i64,
    /// `None`: recorded (now or before); `Some(why)`: a conflict, not to be sent again.
    pub conflict: Option<String>,
}

/// Live sales in one state or country, for nexus tracking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NexusTotal {
    /// ISO country.
    pub country: String,
    /// Region (state, province), empty for a whole country.
    pub region: String,
    /// ISO 4217.
    pub currency: String,
    /// Sales excluding tax, minor units, net of refunds.
    pub sales: Decimal,
    /// Number of transactions (deleted ones do not count).
    pub count: i64,
}

/// Builds a refund from a transaction and what remains to refund of each of its lines
/// (`(sales, tax)`, from the transaction's running refund total, [`crate::ledger::Refunded`]),
/// inside the store's write.
pub type RefundBuilder = Box<
    dyn FnOnce(&TransactionRecord, &[(Decimal, Decimal)]) -> Result<RefundRecord, ApiError> + Send,
>;

/// What an account and mode store of calculations (and platform calculations) not yet
/// purged ([`Store::stored_calculations`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoredCalculations {
    /// How many.
    pub count: u64,
    /// Their bytes as the ledger stores them (SQLite: packed; PostgreSQL: the sealed
    /// record's text).
    pub bytes: u64,
}

/// The ledger's operations. Each is atomic; each write is durable when it returns `Ok`.
pub trait Store: PlatformStore + Send + Sync {
    /// Whether reads wait on a network (a database server) rather than on a local file:
    /// a server then answers every request on threads that may block, never on its
    /// async workers.
    fn reads_cross_a_network(&self) -> bool {
        false
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
    fn calculation_reads(
        &self,
        scope: &Scope,
        customer_id: Option<&str>,
        product_ids: &[Option<&str>],
    ) -> Result<CalculationReads, StoreError> {
        let customer = match customer_id {
            Some(id) => self.customer(scope, id, false)?,
            None => None,
        };
        let mut products = Vec::with_capacity(product_ids.len());
        for id in product_ids {
            products.push(match id {
                Some(id) => self.product(scope, id)?,
                None => None,
            });
        }
        let certificates = match &customer {
            Some(c) if scope.live && !c.is_tax_exempt => {
                self.certificates(&scope.account, Some(&c.id))?
            }
            _ => Vec::new(),
        };
        Ok(CalculationReads {
            customer,
            products,
            certificates,
        })
    }
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
    ) -> Result<Commit, StoreError> {
        Ok(Commit::resolved(self.insert_calculation(scope, calc)))
    }
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
    /// Marks a transaction deleted and takes what remains of it off the nexus totals.
    /// Errors: [`StoreError::NotFound`], [`StoreError::AlreadyDeleted`].
    fn delete_transaction(&self, scope: &Scope, id: &str, at: i64) -> Result<(), StoreError>;
    /// Adds the refund that `build` makes from the transaction and what remains of it
    /// (its running refund total, not its refunds one by one), atomically with the check.
    /// [`StoreError::NotFound`] for an unknown or deleted transaction;
    /// [`StoreError::Rejected`] with `build`'s error when it refuses;
    /// [`StoreError::Duplicate`] (of [`RecordKind::Refund`]) when the refund's id is
    /// already a refund's in this account and mode.
    fn insert_refund(
        &self,
        scope: &Scope,
        transaction_id: &str,
        build: RefundBuilder,
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
    /// Live nexus totals of an account.
    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>, StoreError>;
}

/// A merchant (a seller on a platform).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerchantRecord {
    /// `merch_…`.
    pub id: String,
    /// The client's id for the merchant (unique per account and mode).
    pub reference_merchant_id: String,
    /// Name.
    pub name: String,
    /// E-mail.
    pub email: Option<String>,
    /// The merchant's address: the origin of its platform calculations.
    pub default_address: AddressRecord,
    /// Tax ids.
    pub tax_ids: Vec<TaxIdRecord>,
    /// `active` or `deleted`.
    pub status: String,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds of the last change.
    pub updated_at: i64,
    /// When deleted, if it was.
    pub deleted_at: Option<i64>,
    /// Client metadata: string values only.
    pub metadata: Map<String, Value>,
}

/// A postal address with the interface's `address_*` fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressRecord {
    /// `address_line_1`.
    pub line1: String,
    /// `address_line_2`.
    pub line2: String,
    /// `address_city`.
    pub city: String,
    /// `address_province`.
    pub region: String,
    /// `address_postal_code`.
    pub postal_code: String,
    /// `address_country`.
    pub country: String,
}

/// Which merchants a list shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MerchantFilter {
    /// Only `active` merchants.
    Active,
    /// Only `deleted` merchants.
    Deleted,
    /// Both.
    All,
}

/// Changes a merchant inside the store's write (partial update, delete).
pub type MerchantChange = Box<dyn FnOnce(&mut MerchantRecord) -> Result<(), ApiError> + Send>;

/// A platform calculation, stored until it expires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformCalculationRecord {
    /// `plat_calc_…`; `order.id` holds the same id.
    pub id: String,
    /// The merchant's `merch_…` id.
    pub merchant_id: String,
    /// The merchant's `reference_merchant_id`.
    pub reference_merchant_id: String,
    /// `marketplace_provider`, `payment_processor`, `merchant_of_record`.
    pub roles: Vec<String>,
    /// The order: lines, totals, place, customer.
    pub order: CalculationRecord,
    /// Fee lines, taxed separately from the order.
    pub fee_lines: Vec<LineRecord>,
}

/// What a platform transaction adds to a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformTransactionInfo {
    /// `order` or `fee`.
    pub kind: String,
    /// The client's payment id.
    pub reference_payment_id: Option<String>,
    /// The merchant's `merch_…` id.
    pub merchant_id: String,
}

/// The buyer entity that owns a certificate or request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedBuyerRecord {
    /// The buyer's id.
    pub id: String,
    /// Legal name.
    pub legal_name: Option<String>,
}

/// A place a certificate covers: every jurisdiction of a region (a state), local ones
/// included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageRecord {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// ISO 3166-2 subdivision without the country (`TN`).
    pub region: String,
}

/// A stored document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentInfo {
    /// MIME type (`application/pdf`).
    pub content_type: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
}

/// An exemption certificate (live mode only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateRecord {
    /// `cert_…`.
    pub id: String,
    /// The importer's own id for it, if given.
    pub reference: Option<String>,
    /// The `cus_…` id of the live customer it belongs to.
    pub customer_id: Option<String>,
    /// The master buyer that owns it.
    pub linked_buyer: Option<LinkedBuyerRecord>,
    /// Certificate type (`RESALE`, `GOVERNMENT`, …).
    pub kind: String,
    /// Review outcome: `processing`, `needs_info`, `active` (approved) or `invalid`;
    /// `expiring` and `expired` are derived from the dates when read.
    pub review_status: String,
    /// Places covered.
    pub jurisdictions: Vec<CoverageRecord>,
    /// Epoch seconds from which it is valid.
    pub valid_from: i64,
    /// Epoch seconds at which it lapses; `None` never lapses.
    pub expires_at: Option<i64>,
    /// The attached document, if any.
    pub document: Option<DocumentInfo>,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
}

/// A certificate request (live mode only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateRequestRecord {
    /// `certreq_…`.
    pub id: String,
    /// The importer's own id for it, if given.
    pub reference: Option<String>,
    /// `pending`, `fulfilled`, `canceled`, `invalid`.
    pub status: String,
    /// The `cus_…` id of the live customer asked.
    pub customer_id: Option<String>,
    /// The master buyer asked.
    pub linked_buyer: Option<LinkedBuyerRecord>,
    /// Certificate type requested.
    pub kind: Option<String>,
    /// Places requested.
    pub jurisdictions: Vec<CoverageRecord>,
    /// The certificate that fulfilled it.
    pub certificate_id: Option<String>,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
    /// When canceled, if it was.
    pub canceled_at: Option<i64>,
}

/// Certificates, requests and documents to add in one atomic import.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertificateBatch {
    /// Certificates, each with its document bytes.
    pub certificates: Vec<(CertificateRecord, Option<Vec<u8>>)>,
    /// Requests.
    pub requests: Vec<CertificateRequestRecord>,
}

/// The ledger's operations for merchants, platform sales and certificates.
pub trait PlatformStore: Send + Sync {
    /// Adds a merchant. [`StoreError::Duplicate`] when its `reference_merchant_id` is taken.
    fn insert_merchant(&self, scope: &Scope, merchant: MerchantRecord) -> Result<(), StoreError>;
    /// A merchant by `merch_…` id, else by `reference_merchant_id`.
    fn merchant(&self, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>, StoreError>;
    /// Changes a merchant atomically; `None` when there is no such merchant;
    /// [`StoreError::Rejected`] with `change`'s error when it refuses.
    fn change_merchant(
        &self,
        scope: &Scope,
        id: &str,
        change: MerchantChange,
    ) -> Result<Option<MerchantRecord>, StoreError>;
    /// Up to `limit` merchants after `cursor` (a `merch_…` id), ordered by id.
    fn list_merchants(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: MerchantFilter,
        limit: usize,
    ) -> Result<Vec<MerchantRecord>, StoreError>;
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
    ) -> Result<Commit, StoreError> {
        Ok(Commit::resolved(
            self.insert_platform_calculation(scope, calc),
        ))
    }
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
    /// A 32-byte secret of the ledger by name, generated on first use.
    fn secret(&self, name: &str) -> Result<[u8; 32], StoreError>;
}
