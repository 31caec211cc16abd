//! The interface's error: an HTTP status, a SCREAMING_SNAKE_CASE type, a message, and for
//! validation errors the field with what was expected and received. [`crate::render`]
//! writes it in the requested version's format.

/// An error of the interface, or of opening a service.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} ({status}): {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub status: u16,
    /// Error type, SCREAMING_SNAKE_CASE (`MISSING_FIELD`); the older format sends it in
    /// lower snake case as `error_code`.
    pub kind: &'static str,
    /// Human-readable message.
    pub message: String,
    /// The field at fault, as a path (`order_details.line_items[0].quantity`).
    pub field: Option<String>,
    /// What the field should hold.
    pub expected: Option<String>,
    /// What it held.
    pub received: Option<String>,
    /// For a 429: seconds after which the request may succeed (the `Retry-After` header).
    pub retry_after: Option<u16>,
}

impl ApiError {
    /// An error without field details.
    pub fn new(status: u16, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            field: None,
            expected: None,
            received: None,
            retry_after: None,
        }
    }

    /// A 400 about one field.
    pub fn field(
        kind: &'static str,
        field: &str,
        message: impl Into<String>,
        expected: impl Into<String>,
        received: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status: 400,
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
            "MISSING_FIELD",
            field,
            format!("{field} is required"),
            expected,
            "nothing",
        )
    }

    /// A field holds the wrong JSON type.
    pub fn incorrect_type(field: &str, expected: &str, received: &serde_json::Value) -> ApiError {
        ApiError::field(
            "INCORRECT_TYPE",
            field,
            format!("{field} must be {expected}"),
            expected,
            crate::json::describe(received),
        )
    }

    /// The ledger failed (disk full, I/O error); nothing was changed.
    pub(crate) fn ledger(message: impl std::fmt::Display) -> ApiError {
        ApiError::new(
            500,
            "LEDGER_ERROR",
            format!("the ledger could not complete the request: {message}"),
        )
    }

    /// Replaces the status.
    pub(crate) fn with_status(mut self, status: u16) -> ApiError {
        self.status = status;
        self
    }
}
