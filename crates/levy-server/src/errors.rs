//! Errors the HTTP layer answers itself, before a request reaches the service, rendered
//! in the error format of the request's API version.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};

/// An error answered by the HTTP layer rather than by [`levy_api::Service`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// 413: the body is larger than the server's limit. Send a smaller body, or start the
    /// server with a larger limit.
    RequestTooLarge,
    /// 415: a request body was sent without `Content-Type: application/json`.
    UnsupportedMediaType,
    /// 400: the body could not be read (the connection broke while sending it).
    MalformedBody,
    /// 408: the body did not arrive within the server's body timeout; the connection is
    /// closed.
    RequestTimeout,
    /// 405: a method other than GET on an OpenAPI document's path.
    MethodNotAllowed,
    /// 500: the service failed while answering; the log line with the request id says why.
    Internal,
}

/// Every error kind the HTTP layer can answer with, for documents and tests that must
/// list them all.
pub const HTTP_ERROR_KINDS: [HttpErrorKind; 6] = [
    HttpErrorKind::RequestTooLarge,
    HttpErrorKind::UnsupportedMediaType,
    HttpErrorKind::MalformedBody,
    HttpErrorKind::RequestTimeout,
    HttpErrorKind::MethodNotAllowed,
    HttpErrorKind::Internal,
];

impl HttpErrorKind {
    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            HttpErrorKind::RequestTooLarge => 413,
            HttpErrorKind::UnsupportedMediaType => 415,
            HttpErrorKind::MalformedBody => 400,
            HttpErrorKind::RequestTimeout => 408,
            HttpErrorKind::MethodNotAllowed => 405,
            HttpErrorKind::Internal => 500,
        }
    }

    /// The `type` of the flat error format (versions 2026-01-01 and later).
    pub fn flat_type(self) -> &'static str {
        match self {
            HttpErrorKind::RequestTooLarge => "REQUEST_TOO_LARGE",
            HttpErrorKind::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            HttpErrorKind::MalformedBody => "MALFORMED_BODY",
            HttpErrorKind::RequestTimeout => "REQUEST_TIMEOUT",
            HttpErrorKind::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            HttpErrorKind::Internal => "INTERNAL_ERROR",
        }
    }

    /// The `error_code` of the older error format (versions before 2026-01-01): the flat
    /// type in lower snake case.
    pub fn error_code(self) -> String {
        self.flat_type().to_ascii_lowercase()
    }
}

/// True when `version` (the `X-API-Version` header, empty when absent) selects the flat
/// error format. An absent header means 2024-09-01; a value that is not a known version
/// gets the older format.
pub(crate) fn uses_flat_format(version: &str) -> bool {
    levy_api::ApiVersion::parse(version.trim()).is_some_and(|v| v.flat_errors())
}

/// The error body for `kind` in the format `version` selects.
pub(crate) fn body(
    kind: HttpErrorKind,
    message: &str,
    version: &str,
    request_id: &str,
) -> serde_json::Value {
    if uses_flat_format(version) {
        serde_json::json!({ "code": kind.status(), "type": kind.flat_type(), "message": message })
    } else {
        serde_json::json!({
            "error": { "error_code": kind.error_code(), "error_message": message },
            "request_id": request_id,
        })
    }
}

/// The whole HTTP response for `kind`.
pub(crate) fn render(
    kind: HttpErrorKind,
    message: &str,
    version: &str,
    request_id: &str,
) -> axum::response::Response {
    let text = body(kind, message, version, request_id).to_string();
    let mut r = axum::response::Response::new(Body::from(text));
    *r.status_mut() =
        StatusCode::from_u16(kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_format_the_spec_gives() {
        // Spec, Errors: the flat format is for versions 2026-01-01 and later; the notes
        // say an absent header means 2024-09-01.
        assert!(!uses_flat_format(""));
        assert!(!uses_flat_format("2024-09-01"));
        assert!(!uses_flat_format("2025-05-12"));
        assert!(uses_flat_format("2026-01-01"));
        assert!(uses_flat_format("2026-03-01"));
        assert!(!uses_flat_format("latest"));
    }

    #[test]
    fn bodies_have_the_fields_of_each_format() {
        let flat = body(
            HttpErrorKind::RequestTooLarge,
            "too big",
            "2026-03-01",
            "req_1",
        );
        assert_eq!(
            flat,
            serde_json::json!({"code": 413, "type": "REQUEST_TOO_LARGE", "message": "too big"})
        );
        let old = body(
            HttpErrorKind::UnsupportedMediaType,
            "not json",
            "2024-09-01",
            "req_1",
        );
        assert_eq!(
            old,
            serde_json::json!({
                "error": {"error_code": "unsupported_media_type", "error_message": "not json"},
                "request_id": "req_1"
            })
        );
    }
}
