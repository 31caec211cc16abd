//! Answers kept under idempotency keys: a request that carries a key (`Idempotency-Key`
//! over HTTP) has its first answer kept for [`KEEP_SECONDS`], per account and mode, so that
//! the same request sent again is answered the same, never done twice.
//!
//! The answer is kept in the same write as the record it answers ([`KeptStore::make`]: a
//! refund, a transaction, a reversal...), so a write whose answer never reached the client
//! is found when the client sends it again; an answer kept afterwards, in a write of its
//! own, could be lost between the two and the write made twice. The ledger knows nothing of
//! HTTP: an answer is a status, headers and a body the caller renders ([`Keep::render`])
//! from what the write made ([`Made`]), inside the write.

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::records::*;
use super::Commit;

/// How long an answer is kept under its key: 24 hours, as the interface promises. A key
/// is free again once its answer has expired (and is purged within a minute of it).
pub const KEEP_SECONDS: i64 = 86_400;

/// An answer kept under an idempotency key, as the ledger stores it (sealed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptAnswer {
    /// The key.
    pub key: String,
    /// The digest of the request that was answered (BLAKE3 of its method, path, query,
    /// version and body, in hexadecimal): the same key with another request is refused.
    pub request: String,
    /// The answer's HTTP status.
    pub status: u16,
    /// The answer's headers beside `Content-Type: application/json`.
    pub headers: Vec<(String, String)>,
    /// The answer's body, JSON text exactly as it was sent.
    pub body: String,
    /// When it was kept (Unix seconds).
    pub created_at: i64,
    /// When it expires: [`KEEP_SECONDS`] after `created_at`.
    pub expires_at: i64,
}

/// A request's answer before it is kept: what [`Keep::render`] makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answered {
    /// HTTP status.
    pub status: u16,
    /// Headers beside `Content-Type`.
    pub headers: Vec<(String, String)>,
    /// JSON text.
    pub body: String,
}

/// Renders a request's answer from what its write made, inside the write; `Err` (a
/// message) fails the write, which then keeps nothing.
pub type Render = Box<dyn FnOnce(&Made) -> std::result::Result<Answered, String> + Send>;

/// What to keep under a key with a write: the key, the request's digest, the time, and how
/// the answer is rendered.
pub struct Keep {
    /// The key.
    pub key: String,
    /// The request's digest ([`KeptAnswer::request`]).
    pub request: String,
    /// Now (Unix seconds).
    pub at: i64,
    /// The answer, from what the write made.
    pub render: Render,
}

impl std::fmt::Debug for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keep")
            .field("key", &self.key)
            .field("request", &self.request)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl Keep {
    /// The answer to keep, rendered from `made`.
    pub fn answer(self, made: &Made) -> Result<KeptAnswer> {
        let answered = (self.render)(made).map_err(super::StoreError::Internal)?;
        Ok(KeptAnswer {
            key: self.key,
            request: self.request,
            status: answered.status,
            headers: answered.headers,
            body: answered.body,
            created_at: self.at,
            expires_at: self.at.saturating_add(KEEP_SECONDS),
        })
    }
}

/// A write a request makes, which may keep its answer ([`KeptStore::make`]): each is the
/// write of the [`super::Store`] method of the same name, by the same recipe.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Write {
    /// [`super::Store::insert_customer`].
    Customer(CustomerRecord),
    /// [`super::Store::insert_product`].
    Product(ProductRecord),
    /// [`super::Store::insert_transaction`].
    Transaction(TransactionRecord),
    /// [`super::PlatformStore::insert_transactions`].
    Transactions(Vec<TransactionRecord>),
    /// A new version of a recorded sale, under its order id (an adjusted document, an
    /// updated order): the transaction `replaced` is deleted, as
    /// [`super::Store::delete_transaction`] deletes, and marked replaced by `tx`, which is
    /// recorded as [`super::Store::insert_transaction`] records and holds the order id from
    /// then on; the two in one write. A transaction deleted, or of another order id, is
    /// [`super::StoreError::NotFound`]; one with a refund not reversed is refused
    /// ([`super::Refusal::Refunded`]: the refund is of the sale as it was).
    Replacement {
        /// The transaction replaced.
        replaced: String,
        /// The new version.
        tx: TransactionRecord,
        /// When the old one was replaced.
        at: i64,
    },
    /// [`super::Store::insert_refund`].
    Refund {
        /// The transaction refunded.
        transaction_id: String,
        /// What is refunded.
        ask: RefundAsk,
    },
    /// [`super::Store::reverse_refund`].
    Reversal {
        /// The refund reversed.
        refund_id: String,
        /// When.
        at: i64,
    },
    /// [`super::PlatformStore::insert_merchant`].
    Merchant(MerchantRecord),
    /// [`super::PlatformStore::change_merchant`]; a merchant that does not exist is
    /// [`super::StoreError::NotFound`].
    MerchantChange {
        /// The merchant (`merch_…` id or reference).
        id: String,
        /// The change.
        change: MerchantChange,
        /// When.
        at: i64,
    },
    /// [`super::PlatformStore::insert_registration`].
    Registration(RegistrationRecord),
    /// [`super::PlatformStore::expire_registration`].
    Expiry {
        /// The registration.
        id: String,
        /// The expiry asked.
        at: i64,
        /// Now.
        now: i64,
    },
    /// Nothing but the answer: for a request whose writes were made before, each on its
    /// own (a sync batch, whose every event is idempotent by its record's id).
    Answer,
}

/// What a [`Write`] made that its caller did not know before: the refund of a refund or a
/// reversal, the merchant changed, the registration expired; `Stored` for a record the
/// caller made itself.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Made {
    /// The caller's record was stored as it was given.
    Stored,
    /// The refund made, or reversed.
    Refund(RefundRecord),
    /// The merchant as changed.
    Merchant(MerchantRecord),
    /// The registration as expired.
    Registration(RegistrationRecord),
}

/// How many answers an account and mode keep that have not expired, and their bytes as
/// stored ([`KeptStore::kept_count`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptCount {
    /// How many.
    pub count: u64,
    /// Their bytes (the sealed answers).
    pub bytes: u64,
}

/// The ledger's operations for answers kept under idempotency keys.
pub trait KeptStore: Send + Sync {
    /// The answer kept under `key` in `scope` that has not expired at `now`.
    fn kept(&self, scope: &Scope, key: &str, now: i64) -> Result<Option<KeptAnswer>>;
    /// Makes `write`, and with `keep` keeps the answer it renders under its key, in the
    /// same atomic, flushed write. Returns what the write made and the answer kept.
    /// [`super::StoreError::Duplicate`] (of [`super::RecordKind::IdempotencyKey`]) when
    /// another answer is kept under the key meanwhile (a request with the key answered at
    /// the same time, by another process): then nothing of the write was made.
    fn make(
        &self,
        scope: &Scope,
        write: Write,
        keep: Option<Keep>,
    ) -> Result<(Made, Option<KeptAnswer>)>;
    /// Stores a calculation (or platform calculation) without waiting, as
    /// [`super::Store::submit_calculation`] does, keeping `kept` under its key in the same
    /// commit: the [`Commit`] resolves once both are stored, or neither
    /// ([`super::StoreError::Duplicate`] of the key, as [`KeptStore::make`]).
    fn submit_kept(
        &self,
        scope: &Scope,
        quote: super::Quote<'_>,
        kept: &KeptAnswer,
    ) -> Result<Commit>;
    /// How many unexpired answers `scope` keeps at `now`, and their bytes.
    fn kept_count(&self, scope: &Scope, now: i64) -> Result<KeptCount>;
}
