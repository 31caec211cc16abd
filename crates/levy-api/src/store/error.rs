//! What the ledger refuses or fails with, in its own terms: [`StoreError`], the records it
//! names ([`RecordKind`]), and the typed refusals of its rules ([`Refusal`]). Nothing here
//! knows HTTP: the interface maps these to its errors in one place (`crate::error`).

use rust_decimal::Decimal;

pub use super::rules::Excess;

/// What the ledger's operations and statements answer: a value, or a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

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
    /// A registration.
    Registration,
    /// An answer kept under an idempotency key; its client id is the key.
    IdempotencyKey,
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
            RecordKind::Registration => "registration",
            RecordKind::IdempotencyKey => "request",
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
            RecordKind::IdempotencyKey => "Idempotency-Key",
            RecordKind::Refund | RecordKind::CertificateRequest | RecordKind::Registration => "id",
        }
    }
}

/// What a [`Store`](super::Store) refuses or fails with: the ledger's own terms, without HTTP statuses.
/// The interface's error has a `From<StoreError>` (in `crate::error`), the one place that turns
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
    /// The ledger's database could not be reached within its bound (no connection, or no
    /// answer to a statement: a network cut, a server down or restarting, a statement
    /// past its timeout); nothing was changed, and the request may be sent again.
    #[error("the ledger is unavailable: {0}; nothing was changed, retry later")]
    Unavailable(String),
    /// The connection to the ledger's database was lost after a write's commit was sent
    /// and before its answer: the write may or may not have been stored. A retry must not
    /// make it twice: look it up first, or retry with the same ids (a transaction's
    /// `reference_order_id` is taken once).
    #[error("the ledger became unavailable while committing: {0}; the outcome is unknown (the write may have been stored): look it up, or retry with the same ids, before writing it again")]
    OutcomeUnknown(String),
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
    /// The ledger's rules refused the write (a refund of more than remains, a change to a
    /// deleted merchant): what was refused and why, and nothing was written.
    #[error("{0}")]
    Rejected(Refusal),
}

impl StoreError {
    /// A ledger failure from any error.
    pub fn ledger(e: impl std::fmt::Display) -> StoreError {
        StoreError::Ledger(e.to_string())
    }
}

impl From<Refusal> for StoreError {
    fn from(r: Refusal) -> StoreError {
        StoreError::Rejected(r)
    }
}

/// What the ledger's rules refuse ([`StoreError::Rejected`]), with what the interface needs
/// to say which field was at fault. The messages are the answer's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// A full refund of a transaction that has nothing left to refund.
    #[error("transaction {transaction} has already been refunded in full")]
    RefundedInFull {
        /// The transaction.
        transaction: String,
    },
    /// Line `line` of a partial refund matches no line of the transaction.
    #[error("transaction {transaction} has no line matching line_items[{line}]")]
    NoSuchLine {
        /// The refund line's index.
        line: usize,
        /// The transaction.
        transaction: String,
        /// The line id (else the product id) the refund line named.
        named: String,
    },
    /// Line `line` of a partial refund matches several lines of the transaction.
    #[error("several lines of transaction {transaction} match line_items[{line}]; give reference_line_item_id")]
    AmbiguousLine {
        /// The refund line's index.
        line: usize,
        /// The transaction.
        transaction: String,
        /// The product id the refund line named.
        product: String,
    },
    /// Line `line` would refund more of an amount than remains of its transaction line.
    #[error("line_items[{line}].{} would refund {} but only {left} remains to be refunded", .excess.field(), -.asked)]
    Exceeds {
        /// The refund line's index.
        line: usize,
        /// Which amount.
        excess: Excess,
        /// The amount asked (zero or negative).
        asked: Decimal,
        /// What remains.
        left: Decimal,
    },
    /// Line `line` refunds a larger quantity than its transaction line's.
    #[error("line_items[{line}].quantity is more than the line's quantity {most}")]
    QuantityExceeds {
        /// The refund line's index.
        line: usize,
        /// The quantity asked.
        asked: u32,
        /// The line's quantity.
        most: u32,
    },
    /// A refund made by another ledger (a till's, by sync) that does not fit what remains
    /// of its sale here.
    #[error("{why}")]
    DoesNotFit {
        /// Why.
        why: String,
    },
    /// An expiry of a registration that has already expired.
    #[error("registration {id} already expired at {expired_at}; a registration expires once")]
    RegistrationExpired {
        /// The registration.
        id: String,
        /// When it expired (epoch seconds).
        expired_at: i64,
    },
    /// An expiry at or before the registration's `active_from`, or after the expiry it
    /// already has.
    #[error("registration {id} cannot expire at {asked}: {why}")]
    RegistrationExpiry {
        /// The registration.
        id: String,
        /// The expiry asked for (epoch seconds).
        asked: i64,
        /// Why not.
        why: String,
    },
    /// A refund dated before its sale: it would be booked in a period before the sale's.
    #[error("refund_processed_at {refund_at} is before the transaction_processed_at {sale_at} of transaction {transaction}; a refund is dated on or after its sale")]
    RefundBeforeSale {
        /// The transaction.
        transaction: String,
        /// The refund's date (Unix seconds).
        refund_at: i64,
        /// The sale's date (Unix seconds).
        sale_at: i64,
    },
    /// A new version of a sale that has refunds not reversed: the refunds are of the sale
    /// as it was, and would be lost with it.
    #[error("transaction {transaction} has {refunds} refund(s) not reversed; a refunded sale is not replaced: reverse its refunds first, or refund the sale as it stands")]
    Refunded {
        /// The transaction.
        transaction: String,
        /// How many refunds of it stand.
        refunds: usize,
    },
    /// A change to a merchant that has been deleted.
    #[error("merchant {id:?} has been deleted")]
    MerchantDeleted {
        /// The id the change named.
        id: String,
    },
}
