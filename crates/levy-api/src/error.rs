//! The interface's error: a kind ([`ErrorKind`]: its SCREAMING_SNAKE_CASE type and its
//! HTTP status), a message, and for validation errors the field with what was expected and
//! received. [`crate::render`] writes it in the requested version's format.

use levy_core::ResolveError;

use crate::store::{RecordKind, Refusal, StoreError};

/// Declares [`ErrorKind`], [`ErrorKind::ALL`], [`ErrorKind::name`] and
/// [`ErrorKind::status`] from one list, so that a kind cannot be left out of `ALL` or lack a
/// name or a status.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $variant:ident = ($name:literal, $status:literal),)*) => {
        /// Every type of error the service answers, with its HTTP status.
        ///
        /// The name ([`ErrorKind::name`]) is what the flat error format (2026-01-01 on) sends as
        /// `type`; the older format sends it in lower snake case as `error_code`. A name has one
        /// status, except two that the interface answers with two, each its own variant:
        ///
        /// * `PRODUCT_NOT_FOUND`: 404 for the product of the path (`GET`/`DELETE
        ///   /tax/products/{id}`, [`ErrorKind::ProductNotFound`]); 400 for a calculation line that
        ///   names an unregistered product ([`ErrorKind::LineProductNotFound`]), the status the
        ///   spec's error table gives.
        /// * `TRANSACTION_NOT_FOUND`: 404 when reading or refunding a transaction
        ///   ([`ErrorKind::TransactionNotFound`]); 400 when deleting one
        ///   ([`ErrorKind::TransactionToDeleteNotFound`]), since the spec answers every failed
        ///   deletion with 400.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorKind {
            /// Every kind, once each, in declaration order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// The HTTP status the kind is answered with.
            pub const fn status(self) -> u16 {
                match self {
                    $(ErrorKind::$variant => $status,)*
                }
            }

            /// The type as sent in the flat format, SCREAMING_SNAKE_CASE (`MISSING_FIELD`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $name,)*
                }
            }
        }
    };
}

error_kinds! {
    /// A request the service cannot answer that fits no narrower type (a line with both
    /// `reference_product_id` and `product_category`; a calculation the engine refuses).
    Error = ("ERROR", 400),
    /// A required field is absent.
    MissingField = ("MISSING_FIELD", 400),
    /// A field holds the wrong JSON type or a value outside its enumeration.
    IncorrectType = ("INCORRECT_TYPE", 400),
    /// A body field or query parameter the endpoint does not take.
    UnrecognizedField = ("UNRECOGNIZED_FIELD", 400),
    /// A refund amount above zero.
    NegativeNumberRequired = ("NEGATIVE_NUMBER_REQUIRED", 400),
    /// A number below its minimum (quantities, amounts, timestamps).
    PositiveNumberRequired = ("POSITIVE_NUMBER_REQUIRED", 400),
    /// A number beyond the largest amount the engine takes.
    NumberTooLarge = ("NUMBER_TOO_LARGE", 400),
    /// A string longer than its field allows.
    StringTooLong = ("STRING_TOO_LONG", 400),
    /// A string (a body field, a metadata key or value, a path or query parameter) holding
    /// a character a ledger cannot store: NUL (U+0000), which PostgreSQL's text cannot
    /// hold. Refused alike whatever the ledger, so that a till's SQLite ledger takes
    /// nothing its central PostgreSQL one would refuse.
    InvalidCharacter = ("INVALID_CHARACTER", 400),
    /// An array with more elements than allowed.
    TooManyItems = ("TOO_MANY_ITEMS", 400),
    /// The body is not a JSON object.
    InvalidJson = ("INVALID_JSON", 400),
    /// An e-mail address that is not one.
    InvalidEmail = ("INVALID_EMAIL", 400),
    /// A customer type other than `CONSUMER` or `BUSINESS`.
    InvalidCustomerType = ("INVALID_CUSTOMER_TYPE", 400),
    /// A buyer tax id of an unknown type or shape.
    InvalidTaxId = ("INVALID_TAX_ID", 400),
    /// A tax code the rate table does not know.
    InvalidTaxCode = ("INVALID_TAX_CODE", 400),
    /// A product category the rate table does not know.
    InvalidProductCategory = ("INVALID_PRODUCT_CATEGORY", 400),
    /// A currency the request's API version does not take.
    UnsupportedCurrency = ("UNSUPPORTED_CURRENCY", 400),
    /// A calculation without `origin_address` in a version that requires it.
    MissingOriginAddress = ("MISSING_ORIGIN_ADDRESS", 400),
    /// A request header with a value the service does not take.
    InvalidHeader = ("INVALID_HEADER", 400),
    /// An `X-API-Version` that is not a known version.
    InvalidApiVersion = ("INVALID_API_VERSION", 400),
    /// A query string that cannot be read.
    InvalidQuery = ("INVALID_QUERY", 400),
    /// A query parameter with an empty or unusable value.
    InvalidQueryParameter = ("INVALID_QUERY_PARAMETER", 400),
    /// An address country that is not ISO 3166-1 alpha-2 (levy-core
    /// `ResolveError::InvalidCountry`).
    InvalidCountryCode = ("INVALID_COUNTRY_CODE", 400),
    /// A postal code that is malformed for its country (levy-core
    /// `ResolveError::MalformedPostal`).
    MalformedAddress = ("MALFORMED_ADDRESS", 400),
    /// A postal code outside the region given (levy-core `ResolveError::ZipStateMismatch`).
    ZipStateMismatch = ("ZIP_STATE_MISMATCH", 400),
    /// A place the rate table covers no jurisdiction of (levy-core
    /// `ResolveError::Unsupported`).
    UnsupportedLocation = ("UNSUPPORTED_LOCATION", 400),
    /// `transacted_at` is before the first day the rate table holds the place's state or
    /// country tax (levy-core `QuoteError::BeforeTable`): what was due then is not known.
    DateBeforeTable = ("DATE_BEFORE_TABLE", 400),
    /// The sale's currency is not its place's and a rule there has an amount in the place's
    /// currency (a band, a threshold, a cap, a fee): send `Levy-Exchange-Rate` (levy-core
    /// `QuoteError::ExchangeRateRequired`).
    ExchangeRateRequired = ("EXCHANGE_RATE_REQUIRED", 400),
    /// `ip.value` is not an IPv4 or IPv6 address (levy-core `ResolveError::InvalidIp`).
    InvalidIpFormat = ("INVALID_IP_FORMAT", 400),
    /// The IP resolved to no country (levy-core `ResolveError::IpResolutionFailed`).
    IpResolutionFailed = ("IP_RESOLUTION_FAILED", 422),
    /// A US IP without a postal code (levy-core `ResolveError::IpInsufficientUs`).
    IpResolutionInsufficientUs = ("IP_RESOLUTION_INSUFFICIENT_US", 422),
    /// A Canadian IP without a province (levy-core `ResolveError::IpInsufficientCa`).
    IpResolutionInsufficientCa = ("IP_RESOLUTION_INSUFFICIENT_CA", 422),
    /// No API key, or one the service does not know.
    Unauthorized = ("UNAUTHORIZED", 401),
    /// A test key on a live-only endpoint (certificates).
    TestmodeNotSupported = ("TESTMODE_NOT_SUPPORTED", 403),
    /// A certificate download URL whose signature does not match.
    InvalidSignature = ("INVALID_SIGNATURE", 403),
    /// A certificate download URL past its expiry.
    DownloadUrlExpired = ("DOWNLOAD_URL_EXPIRED", 403),
    /// No endpoint at the path (in the request's API version).
    NotFound = ("NOT_FOUND", 404),
    /// The path exists but not with the method.
    MethodNotAllowed = ("METHOD_NOT_ALLOWED", 405),
    /// A body larger than the service takes ([`crate::Service::body_limit`]).
    RequestTooLarge = ("REQUEST_TOO_LARGE", 413),
    /// A request body sent without `Content-Type: application/json` (answered by the HTTP
    /// server, levy-server, before the request reaches the service).
    UnsupportedMediaType = ("UNSUPPORTED_MEDIA_TYPE", 415),
    /// A request body that could not be read, as when the connection broke while it was
    /// sent (answered by the HTTP server).
    MalformedBody = ("MALFORMED_BODY", 400),
    /// A request body that did not arrive within the HTTP server's body timeout (answered
    /// by the HTTP server, which then closes the connection).
    RequestTimeout = ("REQUEST_TIMEOUT", 408),
    /// Too many requests for one account and mode; `Retry-After` says when to retry.
    RateLimited = ("RATE_LIMITED", 429),
    /// The account and mode already store the most unexpired calculations allowed.
    CalculationQuotaExceeded = ("CALCULATION_QUOTA_EXCEEDED", 429),
    /// The account and mode already keep the most unexpired answers under idempotency keys
    /// allowed ([`crate::KeyLimits`]): a request with a new key is refused until older
    /// ones expire; requests without a key are answered as before.
    IdempotencyQuotaExceeded = ("IDEMPOTENCY_QUOTA_EXCEEDED", 429),
    /// No such calculation (unknown, expired, or of the other mode).
    CalculationNotFound = ("CALCULATION_NOT_FOUND", 404),
    /// No such platform calculation.
    PlatformCalculationNotFound = ("PLATFORM_CALCULATION_NOT_FOUND", 404),
    /// No such customer.
    CustomerNotFound = ("CUSTOMER_NOT_FOUND", 404),
    /// The product of the path (`/tax/products/{id}`) does not exist. Same name as
    /// [`ErrorKind::LineProductNotFound`], which is a 400.
    ProductNotFound = ("PRODUCT_NOT_FOUND", 404),
    /// A calculation line names a `reference_product_id` that is not registered: a fault of
    /// the request body, so a 400 as the spec's error table gives `PRODUCT_NOT_FOUND`. Same
    /// name as [`ErrorKind::ProductNotFound`] (404, the path's product).
    LineProductNotFound = ("PRODUCT_NOT_FOUND", 400),
    /// No such merchant (or one of the other mode).
    MerchantNotFound = ("MERCHANT_NOT_FOUND", 404),
    /// The merchant is deleted and can no longer sell.
    MerchantDeleted = ("MERCHANT_DELETED", 409),
    /// No such transaction (or a deleted one) when reading it or refunding it. Same name as
    /// [`ErrorKind::TransactionToDeleteNotFound`], which is a 400.
    TransactionNotFound = ("TRANSACTION_NOT_FOUND", 404),
    /// `DELETE /tax/transactions/{id}` of a transaction that does not exist: the spec
    /// answers every failed deletion with 400. Same name as
    /// [`ErrorKind::TransactionNotFound`] (404).
    TransactionToDeleteNotFound = ("TRANSACTION_NOT_FOUND", 400),
    /// A second deletion of a transaction (a failed deletion: 400, as the spec says).
    TransactionAlreadyDeleted = ("TRANSACTION_ALREADY_DELETED", 400),
    /// A new version of a sale that has refunds not reversed (an adjusted document, an
    /// updated order; the dialects' shapes): the refunds are of the sale as it was.
    TransactionRefunded = ("TRANSACTION_REFUNDED", 409),
    /// No such refund.
    RefundNotFound = ("REFUND_NOT_FOUND", 404),
    /// A second reversal of a refund.
    RefundAlreadyReversed = ("REFUND_ALREADY_REVERSED", 409),
    /// A refund of more than what remains of the transaction.
    RefundExceedsTransaction = ("REFUND_EXCEEDS_TRANSACTION", 400),
    /// A refund whose `refund_processed_at` is before its transaction's
    /// `transaction_processed_at`: it would be booked in a period before the sale's.
    RefundBeforeSale = ("REFUND_BEFORE_SALE", 400),
    /// A sale or refund dated further back than the service's backdating limit
    /// ([`crate::Service::with_backdating_limit`]).
    BackdatedPastLimit = ("BACKDATED_PAST_LIMIT", 400),
    /// A refund line that matches no line of the transaction.
    LineItemNotFound = ("LINE_ITEM_NOT_FOUND", 400),
    /// A refund line that matches several lines of the transaction.
    AmbiguousLineItem = ("AMBIGUOUS_LINE_ITEM", 400),
    /// The `reference_customer_id` is already taken.
    DuplicateCustomer = ("DUPLICATE_CUSTOMER", 409),
    /// The `reference_product_id` is already taken.
    DuplicateProduct = ("DUPLICATE_PRODUCT", 409),
    /// The `reference_merchant_id` is already taken.
    DuplicateMerchant = ("DUPLICATE_MERCHANT", 409),
    /// The `reference_order_id` is already taken (per kind: orders and fees apart).
    DuplicateReferenceOrderId = ("DUPLICATE_REFERENCE_ORDER_ID", 409),
    /// A request with this `Idempotency-Key` is being answered at the same moment: nothing
    /// was done for this one. Sent again once that one is answered, it gets its answer.
    IdempotencyKeyInUse = ("IDEMPOTENCY_KEY_IN_USE", 409),
    /// The `Idempotency-Key` was used, in the last 24 hours, by another request (another
    /// method, path, version or body): nothing was done. Each request needs a key of its own.
    IdempotencyKeyReused = ("IDEMPOTENCY_KEY_REUSED", 409),
    /// No such certificate (or certificate document).
    CertificateNotFound = ("CERTIFICATE_NOT_FOUND", 404),
    /// No such certificate request.
    CertificateRequestNotFound = ("CERTIFICATE_REQUEST_NOT_FOUND", 404),
    /// Cancel of a fulfilled certificate request.
    RequestAlreadyFulfilled = ("REQUEST_ALREADY_FULFILLED", 409),
    /// Cancel of a certificate request in the terminal invalid state.
    RequestInvalid = ("REQUEST_INVALID", 409),
    /// A sync (`POST /tax/sync`, a levy extension) of records of the other mode than the
    /// key's: a test key cannot send live records, nor a live key test ones.
    SyncModeMismatch = ("SYNC_MODE_MISMATCH", 403),
    /// A synced record whose seal (its BLAKE3 digest) does not match, or that is not a
    /// record of its kind.
    InvalidSyncRecord = ("INVALID_SYNC_RECORD", 400),
    /// A registration's region that is not a state (US) or province (Canada), or not a
    /// subdivision code of another country (levy extension: registrations).
    InvalidRegion = ("INVALID_REGION", 400),
    /// A registration whose `expires_at` is not after its `active_from`, or an expiry later
    /// than the one it already has (levy extension: registrations).
    InvalidExpiry = ("INVALID_EXPIRY", 400),
    /// No such registration (levy extension: registrations).
    RegistrationNotFound = ("REGISTRATION_NOT_FOUND", 404),
    /// An expiry of a registration that has already expired (levy extension:
    /// registrations).
    RegistrationAlreadyExpired = ("REGISTRATION_ALREADY_EXPIRED", 409),
    /// The ledger failed (I/O, disk full, a damaged record); nothing was changed.
    LedgerError = ("LEDGER_ERROR", 500),
    /// The ledger's database could not be reached within its bound (a network cut, a
    /// server down or restarting), or the request waited on it too long; `Retry-After`
    /// says when to retry. Nothing was changed, unless the message says the outcome of a
    /// write is unknown (the connection was lost while it committed).
    LedgerUnavailable = ("LEDGER_UNAVAILABLE", 503),
    /// The service failed unexpectedly.
    InternalError = ("INTERNAL_ERROR", 500),
    /// The keys file cannot be read (opening a service; never an HTTP answer).
    KeysFileError = ("KEYS_FILE_ERROR", 500),
    /// The rate table cannot be loaded (opening a service; never an HTTP answer).
    TableError = ("TABLE_ERROR", 500),
    /// An account name that is not valid or has no key (account and import commands; never
    /// an HTTP answer).
    InvalidAccount = ("INVALID_ACCOUNT", 400),
    /// A certificate import file that cannot be used (import command; never an HTTP
    /// answer).
    InvalidImport = ("INVALID_IMPORT", 400),
}

impl ErrorKind {
    /// The `error_code` of the older format: the name in lower snake case.
    pub fn error_code(self) -> String {
        self.name().to_ascii_lowercase()
    }

    /// The kind of a levy-core address or IP resolution error.
    pub fn of_resolve(e: &ResolveError) -> ErrorKind {
        match e {
            ResolveError::InvalidCountry(_) => ErrorKind::InvalidCountryCode,
            ResolveError::MalformedPostal(..) => ErrorKind::MalformedAddress,
            ResolveError::ZipStateMismatch { .. } => ErrorKind::ZipStateMismatch,
            ResolveError::Unsupported(_) => ErrorKind::UnsupportedLocation,
            ResolveError::InvalidIp(_) => ErrorKind::InvalidIpFormat,
            ResolveError::IpResolutionFailed(_) => ErrorKind::IpResolutionFailed,
            ResolveError::IpInsufficientUs(_) => ErrorKind::IpResolutionInsufficientUs,
            ResolveError::IpInsufficientCa(_) => ErrorKind::IpResolutionInsufficientCa,
            // A variant added to levy-core later: the kind of its type's name.
            other => ErrorKind::ALL
                .iter()
                .copied()
                .find(|k| *k == other.error_type())
                .unwrap_or(ErrorKind::Error),
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Compares the name, so `e.kind == "MISSING_FIELD"` reads as it did when kinds were
/// strings.
impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// An error of the interface, or of opening a service.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} ({}): {message}", .kind.status())]
pub struct ApiError {
    /// The error's type; its HTTP status is [`ErrorKind::status`].
    pub kind: ErrorKind,
    /// Human-readable message.
    pub message: String,
    /// The field at fault, as a path (`order_details.line_items[0].quantity`).
    pub field: Option<String>,
    /// What the field should hold.
    pub expected: Option<String>,
    /// What it held.
    pub received: Option<String>,
    /// For a 429 or a 503: seconds after which the request may succeed (the `Retry-After`
    /// header).
    pub retry_after: Option<u16>,
}

impl ApiError {
    /// An error without field details.
    pub fn of(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            field: None,
            expected: None,
            received: None,
            retry_after: None,
        }
    }

    /// The HTTP status: the kind's.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }

    /// An error about one field.
    pub fn field(
        kind: ErrorKind,
        field: &str,
        message: impl Into<String>,
        expected: impl Into<String>,
        received: impl Into<String>,
    ) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            field: Some(field.to_string()),
            expected: Some(expected.into()),
            received: Some(received.into()),
            retry_after: None,
        }
    }

    /// A required field is absent.
    pub fn missing(field: &str, expected: &str) -> ApiError {
        ApiError::field(
            ErrorKind::MissingField,
            field,
            format!("{field} is required"),
            expected,
            "nothing",
        )
    }

    /// A field holds the wrong JSON type.
    pub(crate) fn incorrect_type(
        field: &str,
        expected: &str,
        received: &crate::json::Node<'_>,
    ) -> ApiError {
        ApiError::field(
            ErrorKind::IncorrectType,
            field,
            format!("{field} must be {expected}"),
            expected,
            crate::json::describe(received),
        )
    }
}

/// The `Retry-After` of a 503 `LEDGER_UNAVAILABLE`, in seconds: the ledger tries its
/// database again with the next request, so a retry soon after may succeed.
pub(crate) const LEDGER_RETRY_AFTER: u16 = 2;

/// The interface's error for a store's: the one place where the ledger's terms become
/// types and statuses. Deleting a transaction that does not exist is the one exception (a
/// 400, as the spec answers a failed deletion, not the 404 of reading it): see
/// `deletion_error` (crate-private).
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let message = e.to_string();
        match e {
            StoreError::Duplicate {
                what: RecordKind::IdempotencyKey,
                value,
            } => crate::idempotency::in_use(&value),
            StoreError::Duplicate { what, value } => {
                let kind = match what {
                    RecordKind::Customer => ErrorKind::DuplicateCustomer,
                    RecordKind::Product => ErrorKind::DuplicateProduct,
                    RecordKind::Merchant => ErrorKind::DuplicateMerchant,
                    _ => ErrorKind::DuplicateReferenceOrderId,
                };
                let field = what.client_id_field();
                ApiError::field(
                    kind,
                    field,
                    message,
                    format!("a {field} not yet used"),
                    format!("{value:?}"),
                )
            }
            StoreError::NotFound { what, id } => {
                let (kind, field, expected) = match what {
                    RecordKind::Transaction => (
                        ErrorKind::TransactionNotFound,
                        "transaction_id",
                        "the id of a transaction that exists",
                    ),
                    RecordKind::Refund => (
                        ErrorKind::RefundNotFound,
                        "refund_id",
                        "the id of a refund that exists",
                    ),
                    RecordKind::CertificateRequest => (
                        ErrorKind::CertificateRequestNotFound,
                        "request_id",
                        "the id of a certificate request of this account",
                    ),
                    RecordKind::Customer => (
                        ErrorKind::CustomerNotFound,
                        "customer_id",
                        "the id of a customer that exists",
                    ),
                    RecordKind::Product => (
                        ErrorKind::ProductNotFound,
                        "reference_product_id",
                        "the id of a product that exists",
                    ),
                    RecordKind::Merchant => (
                        ErrorKind::MerchantNotFound,
                        "merchant_id",
                        "the id of a merchant that exists",
                    ),
                    RecordKind::Registration => (
                        ErrorKind::RegistrationNotFound,
                        "id",
                        "the id of a registration of this account and mode",
                    ),
                    RecordKind::IdempotencyKey => (
                        ErrorKind::InternalError,
                        "Idempotency-Key",
                        "an answer kept under the key",
                    ),
                };
                ApiError::field(kind, field, message, expected, id)
            }
            StoreError::AlreadyDeleted { id } => ApiError::field(
                ErrorKind::TransactionAlreadyDeleted,
                "transaction_id",
                message,
                "a transaction not yet deleted",
                id,
            ),
            StoreError::AlreadyReversed { id } => ApiError::field(
                ErrorKind::RefundAlreadyReversed,
                "refund_id",
                message,
                "a refund not yet reversed",
                id,
            ),
            StoreError::RequestFulfilled { .. } => {
                ApiError::of(ErrorKind::RequestAlreadyFulfilled, message)
            }
            StoreError::RequestInvalid { .. } => ApiError::of(ErrorKind::RequestInvalid, message),
            StoreError::Internal(_) => ApiError::of(ErrorKind::InternalError, message),
            StoreError::Unavailable(_) | StoreError::OutcomeUnknown(_) => {
                let mut e = ApiError::of(ErrorKind::LedgerUnavailable, message);
                e.retry_after = Some(LEDGER_RETRY_AFTER);
                e
            }
            StoreError::Rejected(r) => ApiError::from(r),
            StoreError::Ledger(_)
            | StoreError::Damaged { .. }
            | StoreError::NotALedger { .. }
            | StoreError::SchemaTooNew { .. }
            | StoreError::FileDamaged { .. } => ApiError::of(ErrorKind::LedgerError, message),
        }
    }
}

/// The interface's error for a refusal of the ledger's rules, naming the field at fault.
impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        let message = r.to_string();
        let refund_exceeds = ErrorKind::RefundExceedsTransaction;
        match r {
            Refusal::RefundedInFull { transaction } => ApiError::field(
                refund_exceeds,
                "transaction_id",
                message,
                "a transaction with an amount left to refund",
                transaction,
            ),
            Refusal::NoSuchLine { line, named, .. } => ApiError::field(
                ErrorKind::LineItemNotFound,
                &format!("line_items[{line}]"),
                message,
                "the reference_product_id or reference_line_item_id of a line of the transaction",
                named,
            ),
            Refusal::AmbiguousLine { line, product, .. } => ApiError::field(
                ErrorKind::AmbiguousLineItem,
                &format!("line_items[{line}]"),
                message,
                "reference_line_item_id",
                product,
            ),
            Refusal::Exceeds {
                line,
                excess,
                asked,
                left,
            } => ApiError::field(
                refund_exceeds,
                &format!("line_items[{line}].{}", excess.field()),
                message,
                format!("at least {}", -left),
                asked.to_string(),
            ),
            Refusal::QuantityExceeds { line, asked, most } => ApiError::field(
                refund_exceeds,
                &format!("line_items[{line}].quantity"),
                message,
                format!("at most {most}"),
                asked.to_string(),
            ),
            Refusal::DoesNotFit { .. } => ApiError::of(refund_exceeds, message),
            Refusal::RefundBeforeSale {
                sale_at, refund_at, ..
            } => ApiError::field(
                ErrorKind::RefundBeforeSale,
                "refund_processed_at",
                message,
                format!("at least {sale_at}, the transaction's transaction_processed_at"),
                refund_at.to_string(),
            ),
            Refusal::RegistrationExpired { id, .. } => ApiError::field(
                ErrorKind::RegistrationAlreadyExpired,
                "id",
                message,
                "a registration that has not expired",
                id,
            ),
            Refusal::RegistrationExpiry { asked, .. } => ApiError::field(
                ErrorKind::InvalidExpiry,
                "expires_at",
                message,
                "after active_from, and not after the expiry the registration has",
                asked.to_string(),
            ),
            Refusal::Refunded { transaction, .. } => ApiError::field(
                ErrorKind::TransactionRefunded,
                "transaction_id",
                message,
                "a transaction without refunds, or whose refunds are reversed",
                transaction,
            ),
            Refusal::MerchantDeleted { id } => ApiError::field(
                ErrorKind::MerchantDeleted,
                "id",
                message,
                "an active merchant",
                id,
            ),
            // A refusal added to the ledger later: its message, as a request it refuses.
            #[allow(unreachable_patterns)]
            _ => ApiError::of(ErrorKind::Error, message),
        }
    }
}

/// The error of `DELETE /tax/transactions/{id}`: a missing transaction is
/// [`ErrorKind::TransactionToDeleteNotFound`] (400, with the field's expected value "a
/// transaction id"); anything else as [`From<StoreError>`] says.
pub(crate) fn deletion_error(e: StoreError) -> ApiError {
    match e {
        StoreError::NotFound {
            what: RecordKind::Transaction,
            id,
        } => ApiError::field(
            ErrorKind::TransactionToDeleteNotFound,
            "transaction_id",
            format!("no transaction {id}"),
            "a transaction id",
            id,
        ),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The status of every kind, written out a second time as an exhaustive match: a new
    /// kind does not compile until it is given its status here too, and the test below
    /// checks that both lists agree for every kind of `ALL`.
    fn status_again(k: ErrorKind) -> u16 {
        match k {
            ErrorKind::Error => 400,
            ErrorKind::MissingField => 400,
            ErrorKind::IncorrectType => 400,
            ErrorKind::UnrecognizedField => 400,
            ErrorKind::NegativeNumberRequired => 400,
            ErrorKind::PositiveNumberRequired => 400,
            ErrorKind::NumberTooLarge => 400,
            ErrorKind::StringTooLong => 400,
            ErrorKind::InvalidCharacter => 400,
            ErrorKind::TooManyItems => 400,
            ErrorKind::InvalidJson => 400,
            ErrorKind::InvalidEmail => 400,
            ErrorKind::InvalidCustomerType => 400,
            ErrorKind::InvalidTaxId => 400,
            ErrorKind::InvalidTaxCode => 400,
            ErrorKind::InvalidProductCategory => 400,
            ErrorKind::UnsupportedCurrency => 400,
            ErrorKind::MissingOriginAddress => 400,
            ErrorKind::InvalidHeader => 400,
            ErrorKind::InvalidApiVersion => 400,
            ErrorKind::InvalidQuery => 400,
            ErrorKind::InvalidQueryParameter => 400,
            ErrorKind::InvalidCountryCode => 400,
            ErrorKind::MalformedAddress => 400,
            ErrorKind::ZipStateMismatch => 400,
            ErrorKind::UnsupportedLocation => 400,
            ErrorKind::DateBeforeTable => 400,
            ErrorKind::ExchangeRateRequired => 400,
            ErrorKind::InvalidIpFormat => 400,
            ErrorKind::IpResolutionFailed => 422,
            ErrorKind::IpResolutionInsufficientUs => 422,
            ErrorKind::IpResolutionInsufficientCa => 422,
            ErrorKind::Unauthorized => 401,
            ErrorKind::TestmodeNotSupported => 403,
            ErrorKind::InvalidSignature => 403,
            ErrorKind::DownloadUrlExpired => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::MethodNotAllowed => 405,
            ErrorKind::RequestTooLarge => 413,
            ErrorKind::UnsupportedMediaType => 415,
            ErrorKind::MalformedBody => 400,
            ErrorKind::RequestTimeout => 408,
            ErrorKind::RateLimited => 429,
            ErrorKind::CalculationQuotaExceeded => 429,
            ErrorKind::IdempotencyQuotaExceeded => 429,
            ErrorKind::CalculationNotFound => 404,
            ErrorKind::PlatformCalculationNotFound => 404,
            ErrorKind::CustomerNotFound => 404,
            ErrorKind::ProductNotFound => 404,
            ErrorKind::LineProductNotFound => 400,
            ErrorKind::MerchantNotFound => 404,
            ErrorKind::MerchantDeleted => 409,
            ErrorKind::TransactionNotFound => 404,
            ErrorKind::TransactionToDeleteNotFound => 400,
            ErrorKind::TransactionAlreadyDeleted => 400,
            ErrorKind::TransactionRefunded => 409,
            ErrorKind::RefundNotFound => 404,
            ErrorKind::RefundAlreadyReversed => 409,
            ErrorKind::RefundExceedsTransaction => 400,
            ErrorKind::RefundBeforeSale => 400,
            ErrorKind::BackdatedPastLimit => 400,
            ErrorKind::LineItemNotFound => 400,
            ErrorKind::AmbiguousLineItem => 400,
            ErrorKind::DuplicateCustomer => 409,
            ErrorKind::DuplicateProduct => 409,
            ErrorKind::DuplicateMerchant => 409,
            ErrorKind::DuplicateReferenceOrderId => 409,
            ErrorKind::IdempotencyKeyInUse => 409,
            ErrorKind::IdempotencyKeyReused => 409,
            ErrorKind::CertificateNotFound => 404,
            ErrorKind::CertificateRequestNotFound => 404,
            ErrorKind::RequestAlreadyFulfilled => 409,
            ErrorKind::RequestInvalid => 409,
            ErrorKind::SyncModeMismatch => 403,
            ErrorKind::InvalidSyncRecord => 400,
            ErrorKind::InvalidRegion => 400,
            ErrorKind::InvalidExpiry => 400,
            ErrorKind::RegistrationNotFound => 404,
            ErrorKind::RegistrationAlreadyExpired => 409,
            ErrorKind::LedgerError => 500,
            ErrorKind::LedgerUnavailable => 503,
            ErrorKind::InternalError => 500,
            ErrorKind::KeysFileError => 500,
            ErrorKind::TableError => 500,
            ErrorKind::InvalidAccount => 400,
            ErrorKind::InvalidImport => 400,
        }
    }

    #[test]
    fn all_holds_every_kind_once_with_its_status() {
        // `ALL` comes from the same list as the enum (see `error_kinds!`), so it cannot miss
        // one; this checks it has no duplicate and agrees with the match above.
        let mut seen = std::collections::BTreeSet::new();
        for k in ErrorKind::ALL {
            assert!(seen.insert(*k), "{k:?} twice in ALL");
            assert_eq!(k.status(), status_again(*k), "{k:?}");
        }
        assert_eq!(seen.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn names_are_unique_except_the_two_with_two_statuses() {
        let mut by_name: BTreeMap<&str, Vec<ErrorKind>> = BTreeMap::new();
        for k in ErrorKind::ALL {
            assert!(
                !k.name().is_empty()
                    && k.name().chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{k:?}: {} is not SCREAMING_SNAKE_CASE",
                k.name()
            );
            by_name.entry(k.name()).or_default().push(*k);
        }
        let shared: Vec<(&str, Vec<u16>)> = by_name
            .iter()
            .filter(|(_, ks)| ks.len() > 1)
            .map(|(n, ks)| (*n, ks.iter().map(|k| k.status()).collect()))
            .collect();
        assert_eq!(
            shared,
            [
                ("PRODUCT_NOT_FOUND", vec![404, 400]),
                ("TRANSACTION_NOT_FOUND", vec![404, 400]),
            ],
            "a shared name must have a different status for each of its kinds"
        );
    }

    #[test]
    fn statuses_are_those_of_the_spec() {
        // Spec, Errors: the flat format's table.
        for (k, status) in [
            (ErrorKind::LineProductNotFound, 400),
            (ErrorKind::CertificateNotFound, 404),
            (ErrorKind::CertificateRequestNotFound, 404),
            (ErrorKind::RequestAlreadyFulfilled, 409),
            (ErrorKind::RequestInvalid, 409),
            (ErrorKind::InvalidIpFormat, 400),
            (ErrorKind::IpResolutionFailed, 422),
            (ErrorKind::IpResolutionInsufficientUs, 422),
            (ErrorKind::IpResolutionInsufficientCa, 422),
            // Spec, delete transaction: "Error response 400".
            (ErrorKind::TransactionToDeleteNotFound, 400),
            (ErrorKind::TransactionAlreadyDeleted, 400),
            // Notes: CALCULATION_NOT_FOUND (404); clients should expect 429 for rate limits.
            (ErrorKind::CalculationNotFound, 404),
            (ErrorKind::RateLimited, 429),
        ] {
            assert_eq!(k.status(), status, "{k:?}");
        }
        // The notes' validation types are 400s.
        for name in [
            "ERROR",
            "MISSING_FIELD",
            "INCORRECT_TYPE",
            "UNRECOGNIZED_FIELD",
            "NEGATIVE_NUMBER_REQUIRED",
            "POSITIVE_NUMBER_REQUIRED",
            "INVALID_EMAIL",
            "MALFORMED_ADDRESS",
            "ZIP_STATE_MISMATCH",
            "MISSING_ORIGIN_ADDRESS",
            "INVALID_COUNTRY_CODE",
            "INVALID_TAX_CODE",
            "INVALID_PRODUCT_CATEGORY",
        ] {
            let k = ErrorKind::ALL.iter().find(|k| k.name() == name).unwrap();
            assert_eq!(k.status(), 400, "{name}");
        }
        // Every status is an error status.
        for k in ErrorKind::ALL {
            assert!((400..600).contains(&k.status()), "{k:?}");
        }
    }

    #[test]
    fn resolve_errors_map_to_kinds_of_their_name() {
        let samples = [
            ResolveError::InvalidCountry("XX".into()),
            ResolveError::MalformedPostal("1".into(), "US".into()),
            ResolveError::ZipStateMismatch {
                postal: "37201".into(),
                given: "KY".into(),
                actual: "TN".into(),
            },
            ResolveError::Unsupported("XX".into()),
            ResolveError::InvalidIp("x".into()),
            ResolveError::IpResolutionFailed("x".into()),
            ResolveError::IpInsufficientUs("x".into()),
            ResolveError::IpInsufficientCa("x".into()),
        ];
        for e in &samples {
            assert_eq!(ErrorKind::of_resolve(e).name(), e.error_type());
        }
        for t in ResolveError::ERROR_TYPES {
            assert!(ErrorKind::ALL.iter().any(|k| k.name() == t), "{t}");
        }
    }

    #[test]
    fn error_codes_are_the_names_in_lower_snake_case() {
        // The older error format sends `error_code` in lower snake case (the spec's
        // example: `"error_code": "missing_field"`).
        assert_eq!(ErrorKind::MissingField.error_code(), "missing_field");
        assert_eq!(ErrorKind::InvalidAccount.status(), 400);
    }

    #[test]
    fn store_errors_become_the_interface_errors_they_were() {
        let dup: ApiError = StoreError::Duplicate {
            what: RecordKind::Product,
            value: "p1".into(),
        }
        .into();
        assert_eq!(
            (dup.status(), dup.kind.name(), dup.message.as_str()),
            (
                409,
                "DUPLICATE_PRODUCT",
                r#"a product with reference_product_id "p1" already exists"#
            )
        );
        assert_eq!(dup.field.as_deref(), Some("reference_product_id"));
        assert_eq!(
            dup.expected.as_deref(),
            Some("a reference_product_id not yet used")
        );
        assert_eq!(dup.received.as_deref(), Some(r#""p1""#));

        let missing = || StoreError::NotFound {
            what: RecordKind::Transaction,
            id: "tr_1".into(),
        };
        let refund: ApiError = missing().into();
        assert_eq!(
            (refund.status(), refund.message.as_str()),
            (404, "no transaction tr_1")
        );
        let delete = deletion_error(missing());
        assert_eq!(
            (delete.status(), delete.kind.name()),
            (400, "TRANSACTION_NOT_FOUND")
        );
        assert_eq!(delete.expected.as_deref(), Some("a transaction id"));

        let ledger: ApiError = StoreError::ledger("disk full").into();
        assert_eq!(
            (ledger.status(), ledger.message.as_str()),
            (500, "the ledger could not complete the request: disk full")
        );
        let unavailable: ApiError =
            StoreError::Unavailable("PostgreSQL: no connection within 5 s".into()).into();
        assert_eq!(
            (
                unavailable.status(),
                unavailable.kind.name(),
                unavailable.retry_after
            ),
            (503, "LEDGER_UNAVAILABLE", Some(LEDGER_RETRY_AFTER))
        );
        assert_eq!(
            unavailable.message,
            "the ledger is unavailable: PostgreSQL: no connection within 5 s; nothing was changed, retry later"
        );
        let unknown: ApiError = StoreError::OutcomeUnknown("connection closed".into()).into();
        assert_eq!((unknown.status(), unknown.retry_after), (503, Some(2)));
        assert!(
            unknown.message.contains("the outcome is unknown"),
            "{}",
            unknown.message
        );
        let exceeds = ApiError::from(StoreError::Rejected(Refusal::Exceeds {
            line: 1,
            excess: crate::store::Excess::Tax,
            asked: rust_decimal::Decimal::from(-80),
            left: rust_decimal::Decimal::from(70),
        }));
        assert_eq!(
            (exceeds.status(), exceeds.field.as_deref(), exceeds.message.as_str()),
            (
                400,
                Some("line_items[1].tax_amount_refunded"),
                "line_items[1].tax_amount_refunded would refund 80 but only 70 remains to be refunded"
            )
        );
        assert_eq!(exceeds.expected.as_deref(), Some("at least -70"));
    }
}
