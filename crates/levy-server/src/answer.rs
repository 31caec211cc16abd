//! levy's answer to a request the transport layers ([`crate::router`]) have passed on: the
//! body read whole, the JSON check, and the dispatch into [`levy_api::Service`], whose
//! answer is written back unchanged.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{header, request, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;

use crate::errors::{self, HttpErrorKind};
use crate::layers::{self, BodyTimedOut};
use crate::{LOG_TARGET, REQUEST_ID_HEADER};

/// What answering needs of the server, shared by every request.
pub(crate) struct AppState {
    pub(crate) service: Arc<levy_api::Service>,
    /// The service's body limit, read once: it is fixed when the service is built.
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) inline: bool,
}

impl AppState {
    /// The answer to one request: its body, read whole, handed with the request to the
    /// service; the service's answer as HTTP.
    pub(crate) async fn answer(self: Arc<Self>, req: Request) -> Response {
        let (parts, mut body) = req.into_parts();
        let bytes = match read_body(&mut body).await {
            Ok(bytes) => bytes,
            Err(e) => {
                return self
                    .refuse_body(e, body, (&parts.headers, parts.uri.path()))
                    .await
            }
        };
        if !bytes.is_empty() && !is_json_body(&parts.headers, parts.uri.path()) {
            let got = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none");
            return errors::render_for(
                HttpErrorKind::UnsupportedMediaType,
                &format!("request bodies must be JSON (Content-Type: application/json); got {got}"),
                (&parts.headers, parts.uri.path()),
            );
        }
        match self.dispatch(api_request(&parts, bytes)).await {
            Some(answer) => into_http(answer),
            None => errors::render_for(
                HttpErrorKind::Internal,
                "internal error while answering the request",
                (&parts.headers, parts.uri.path()),
            ),
        }
    }

    /// The service's answer. A request that never blocks a thread on the ledger
    /// ([`levy_api::Service::blocks_on_commit`]: a read, or a calculation, whose commit is
    /// awaited) and is not large ([`levy_api::Service::is_large`]) is answered on the async
    /// worker: its work is a few tens of microseconds of CPU. Any other waits for a flushed
    /// commit (milliseconds on a busy disk), for a ledger across a network, or for its turn
    /// among large requests (and takes milliseconds of CPU), and is answered on tokio's
    /// blocking pool, so that small requests never wait behind it. `None` when the service
    /// failed there.
    async fn dispatch(&self, request: levy_api::Request) -> Option<levy_api::Response> {
        if self.inline {
            return Some(self.service.handle(&request));
        }
        if !self.service.blocks_on_commit(&request) && !self.service.is_large(&request) {
            return Some(self.service.answer(&request).finish().await);
        }
        let service = Arc::clone(&self.service);
        let span = tracing::Span::current();
        let handled =
            tokio::task::spawn_blocking(move || span.in_scope(|| service.handle(&request))).await;
        handled
            .map_err(|e| {
                tracing::error!(target: LOG_TARGET, error = %e, "the service failed while answering");
            })
            .ok()
    }

    /// The answer to a body that was not read whole: 413 over the limit (after what the
    /// client is still sending is read and dropped, [`layers::drain`]) and 408 past the
    /// body timeout, both with `Connection: close`; 400 when it could not be read.
    async fn refuse_body(
        &self,
        e: ReadError,
        body: Body,
        (headers, path): (&HeaderMap, &str),
    ) -> Response {
        let (kind, message) = match e {
            ReadError::TooLarge => {
                tracing::warn!(
                    target: LOG_TARGET,
                    declared = layers::declared_length(headers),
                    limit = self.body_limit,
                    "request body over the limit"
                );
                layers::drain(body).await;
                let message = levy_api::body_too_large(self.body_limit);
                (HttpErrorKind::RequestTooLarge, message)
            }
            ReadError::TimedOut => {
                let seconds = self.body_timeout.as_secs_f64();
                tracing::warn!(target: LOG_TARGET, seconds, "request body not received in time");
                let message = format!("the request body was not received within {seconds} seconds");
                (HttpErrorKind::RequestTimeout, message)
            }
            ReadError::Broken(e) => {
                tracing::warn!(target: LOG_TARGET, error = %e, "could not read the request body");
                let message = "the request body could not be read";
                return errors::render_for(HttpErrorKind::MalformedBody, message, (headers, path));
            }
        };
        layers::closing(errors::render_for(kind, &message, (headers, path)))
    }
}

/// The request as the service takes it. The request id (the `x-request-id` header the
/// request-id layer set) goes to the service as [`levy_api::Request::request_id`], not as a
/// header: a client's own `x-request-id` never reaches the service.
fn api_request(parts: &request::Parts, body: Vec<u8>) -> levy_api::Request {
    let mut headers: Vec<(String, String)> = Vec::with_capacity(parts.headers.len());
    for (name, value) in parts.headers.iter() {
        if name.as_str() == REQUEST_ID_HEADER {
            continue;
        }
        headers.push((
            name.as_str().to_string(),
            String::from_utf8_lossy(value.as_bytes()).into_owned(),
        ));
    }
    levy_api::Request {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers,
        body,
        request_id: Some(errors::request_id(&parts.headers).to_string()),
    }
}

/// Why a body was not read whole.
enum ReadError {
    /// Longer than the limit: the body-limit layer stopped it.
    TooLarge,
    /// Not whole within the body timeout: its [`layers::Deadline`] stopped it.
    TimedOut,
    /// The connection broke while it was sent.
    Broken(axum::Error),
}

/// Reads the whole body, within the limit and the timeout the layers below the request
/// path put on it.
async fn read_body(body: &mut Body) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            let inner = e.into_inner();
            if inner.is::<http_body_util::LengthLimitError>() {
                ReadError::TooLarge
            } else if inner.is::<BodyTimedOut>() {
                ReadError::TimedOut
            } else {
                ReadError::Broken(axum::Error::new(inner))
            }
        })?;
        if let Ok(data) = frame.into_data() {
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// `application/json`, with or without parameters (`; charset=utf-8`), or a `+json` type.
/// Whether a request's body is taken as JSON: its `Content-Type` says so
/// ([`is_json_content_type`]), or it has none on a path of the TaxJar and AvaTax request
/// shapes (`/v2/`, `/api/v2/`), whose clients do not all send one (Kill Bill's AvaTax
/// plugin posts its JSON with no `Content-Type`). A type that is not JSON is refused on
/// every path.
fn is_json_body(headers: &HeaderMap, path: &str) -> bool {
    let dialect = path.starts_with("/v2/") || path.starts_with("/api/v2/");
    is_json_content_type(headers) || (dialect && !headers.contains_key(header::CONTENT_TYPE))
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    // Compared without a lower-case copy: media types are case-insensitive.
    let essence = value.split(';').next().unwrap_or("").trim();
    let head = essence.get(..12);
    let tail = essence.len().checked_sub(5).and_then(|i| essence.get(i..));
    essence.eq_ignore_ascii_case("application/json")
        || (head.is_some_and(|h| h.eq_ignore_ascii_case("application/"))
            && tail.is_some_and(|t| t.eq_ignore_ascii_case("+json")))
}

/// The name of a response header: levy's own headers, which every calculation answers
/// with, from names made once (a name made from text is copied into a buffer of its own);
/// any other from its text.
fn response_header_name(name: &str) -> Result<HeaderName, header::InvalidHeaderName> {
    const LEVY: [(&str, HeaderName); 5] = [
        (
            levy_api::COVERAGE_HEADER,
            HeaderName::from_static("levy-coverage"),
        ),
        (
            levy_api::ROUNDING_HEADER,
            HeaderName::from_static("levy-rounding"),
        ),
        (
            levy_api::SOURCING_HEADER,
            HeaderName::from_static("levy-sourcing"),
        ),
        (
            levy_api::TAXABILITY_HEADER,
            HeaderName::from_static("levy-taxability"),
        ),
        (
            levy_api::PLACE_HEADER,
            HeaderName::from_static("levy-place"),
        ),
    ];
    match LEVY.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        Some((_, h)) => Ok(h.clone()),
        None => HeaderName::try_from(name),
    }
}

/// A [`levy_api::Response`] as HTTP, unchanged: the service's answers, and the HTTP
/// layer's own errors rendered by [`levy_api::error_response`]. An error body in the older
/// format already names the request's id, given to the service as
/// [`levy_api::Request::request_id`], so that the body, the `x-request-id` header and the
/// log lines name the request alike.
pub(crate) fn into_http(api: levy_api::Response) -> Response {
    let mut r = Response::new(Body::from(api.body));
    *r.status_mut() = StatusCode::from_u16(api.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = r.headers_mut();
    for (name, value) in api.headers {
        // The value's bytes are handed over, checked but not copied.
        match (
            response_header_name(&name),
            HeaderValue::from_maybe_shared(axum::body::Bytes::from(value)),
        ) {
            (Ok(n), Ok(v)) => {
                headers.append(n, v);
            }
            _ => {
                tracing::warn!(target: LOG_TARGET, header = %name, "dropped a response header that is not valid HTTP")
            }
        }
    }
    if !headers.contains_key(header::CONTENT_TYPE) {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levy_headers_keep_their_names_on_the_wire() {
        // The names made once are the names the text would make (HTTP names are
        // case-insensitive and sent in lower case), and a name levy does not know is made
        // from its text.
        for name in [
            levy_api::COVERAGE_HEADER,
            levy_api::ROUNDING_HEADER,
            levy_api::SOURCING_HEADER,
            levy_api::TAXABILITY_HEADER,
            "Content-Type",
            "Retry-After",
        ] {
            assert_eq!(
                response_header_name(name).unwrap(),
                HeaderName::try_from(name).unwrap(),
                "{name}"
            );
        }
        assert!(response_header_name("not a name").is_err());
        // Through the conversion of a whole answer: every header arrives with its value.
        let r = into_http(levy_api::Response {
            status: 200,
            headers: vec![
                (levy_api::COVERAGE_HEADER.into(), "STATE_ONLY".into()),
                (levy_api::SOURCING_HEADER.into(), "DESTINATION".into()),
                (levy_api::ROUNDING_HEADER.into(), "LINE".into()),
            ],
            body: b"{}".to_vec(),
        });
        let h = r.headers();
        assert_eq!(h["levy-coverage"], "STATE_ONLY");
        assert_eq!(h["levy-sourcing"], "DESTINATION");
        assert_eq!(h["levy-rounding"], "LINE");
        assert_eq!(h[header::CONTENT_TYPE], "application/json");
    }
}
