//! Errors the HTTP layer answers itself, before a request reaches the service. Each is a
//! [`levy_api::ApiError`] of a [`levy_api::ErrorKind`], rendered by
//! [`levy_api::error_response`] as the service renders its own: in the error format of the
//! request's API version, with the request's id.

use axum::http::HeaderMap;
use levy_api::{ApiError, ApiVersion, ErrorKind};

/// An error answered by the HTTP layer rather than by [`levy_api::Service`]: a name for
/// the [`ErrorKind`] it is answered with ([`HttpErrorKind::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// 413: the body is larger than the service's limit
    /// ([`levy_api::Service::body_limit`]). Send a smaller body, or start the server
    /// with a larger limit.
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
    /// The levy-api error kind it is answered with, which gives its status and type.
    pub fn kind(self) -> ErrorKind {
        match self {
            HttpErrorKind::RequestTooLarge => ErrorKind::RequestTooLarge,
            HttpErrorKind::UnsupportedMediaType => ErrorKind::UnsupportedMediaType,
            HttpErrorKind::MalformedBody => ErrorKind::MalformedBody,
            HttpErrorKind::RequestTimeout => ErrorKind::RequestTimeout,
            HttpErrorKind::MethodNotAllowed => ErrorKind::MethodNotAllowed,
            HttpErrorKind::Internal => ErrorKind::InternalError,
        }
    }

    /// The HTTP status: the kind's.
    pub fn status(self) -> u16 {
        self.kind().status()
    }

    /// The `type` of the flat error format (versions 2026-01-01 and later): the kind's
    /// name.
    pub fn flat_type(self) -> &'static str {
        self.kind().name()
    }

    /// The `error_code` of the older error format (versions before 2026-01-01): the flat
    /// type in lower snake case.
    pub fn error_code(self) -> String {
        self.kind().error_code()
    }
}

/// The API version whose error format an answer of the HTTP layer uses: the
/// `X-API-Version` header's (empty when absent), or 2024-09-01 when it is absent or not a
/// known version, as the service itself answers.
pub(crate) fn error_version(header: &str) -> ApiVersion {
    ApiVersion::parse(header.trim()).unwrap_or(ApiVersion::V2024_09_01)
}

/// The whole HTTP response for `kind`, rendered by [`levy_api::error_response`].
pub(crate) fn render(
    kind: HttpErrorKind,
    message: &str,
    (version, path): (ApiVersion, &str),
    request_id: &str,
) -> axum::response::Response {
    let mut e = ApiError::of(kind.kind(), message);
    if kind == HttpErrorKind::MethodNotAllowed {
        // The document paths answer GET only; error_response sends it as `Allow`.
        e.expected = Some("GET".into());
    }
    crate::answer::into_http(levy_api::error_response_at(
        &e,
        version,
        path,
        Some(request_id),
    ))
}

/// [`render`] for a request with `headers`: in the error format of its `X-API-Version`
/// ([`error_version`]), naming the id the request-id layer set ([`request_id`]).
pub(crate) fn render_for(
    kind: HttpErrorKind,
    message: &str,
    (headers, path): (&HeaderMap, &str),
) -> axum::response::Response {
    let version = error_version(
        headers
            .get("x-api-version")
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
    );
    render(kind, message, (version, path), request_id(headers))
}

/// The request's id: its `x-request-id` header, which the request-id layer set (replacing
/// any the client sent); empty should it be missing.
pub(crate) fn request_id(headers: &HeaderMap) -> &str {
    headers
        .get(crate::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_format_the_spec_gives() {
        // Spec, Errors: the flat format is for versions 2026-01-01 and later; the notes
        // say an absent header means 2024-09-01.
        let flat = |v: &str| error_version(v).flat_errors();
        assert!(!flat(""));
        assert!(!flat("2024-09-01"));
        assert!(!flat("2025-05-12"));
        assert!(flat("2026-01-01"));
        assert!(flat(" 2026-03-01 "));
        assert!(!flat("latest"));
    }

    #[test]
    fn kinds_keep_the_statuses_and_types_they_had() {
        let expected = [
            (HttpErrorKind::RequestTooLarge, 413, "REQUEST_TOO_LARGE"),
            (
                HttpErrorKind::UnsupportedMediaType,
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            ),
            (HttpErrorKind::MalformedBody, 400, "MALFORMED_BODY"),
            (HttpErrorKind::RequestTimeout, 408, "REQUEST_TIMEOUT"),
            (HttpErrorKind::MethodNotAllowed, 405, "METHOD_NOT_ALLOWED"),
            (HttpErrorKind::Internal, 500, "INTERNAL_ERROR"),
        ];
        assert_eq!(expected.len(), HTTP_ERROR_KINDS.len());
        for (k, status, name) in expected {
            assert!(HTTP_ERROR_KINDS.contains(&k));
            assert_eq!((k.status(), k.flat_type()), (status, name));
            assert_eq!(k.error_code(), name.to_ascii_lowercase());
        }
    }

    /// The bodies the HTTP layer wrote with its own renderer, byte for byte: levy-api's
    /// renderer writes the same.
    #[test]
    fn bodies_are_those_of_the_former_renderer() {
        let old_flat = |k: HttpErrorKind, message: &str| {
            serde_json::json!({ "code": k.status(), "type": k.flat_type(), "message": message })
                .to_string()
        };
        let old_nested = |k: HttpErrorKind, message: &str, id: &str| {
            serde_json::json!({
                "error": { "error_code": k.error_code(), "error_message": message },
                "request_id": id,
            })
            .to_string()
        };
        for k in HTTP_ERROR_KINDS {
            let e = ApiError::of(k.kind(), "it went wrong");
            let flat = levy_api::error_response(&e, ApiVersion::V2026_03_01, Some("req_1"));
            assert_eq!(flat.status, k.status());
            assert_eq!(
                String::from_utf8(flat.body).unwrap(),
                old_flat(k, "it went wrong")
            );
            let nested = levy_api::error_response(&e, ApiVersion::V2024_09_01, Some("req_1"));
            assert_eq!(
                String::from_utf8(nested.body).unwrap(),
                old_nested(k, "it went wrong", "req_1")
            );
        }
    }
}
