//! The pieces of the transport that [`crate::router`] composes as layers around levy's
//! answer ([`crate::answer`]): request ids, the request's span and its log line, the OpenAPI
//! documents, the refusal of a body declared over the limit, and the body timeout.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tower_http::BoxError;

use crate::errors::{self, HttpErrorKind};
use crate::openapi::{self, OPENAPI_JSON, OPENAPI_PATH};
use crate::LOG_TARGET;

/// A request id for the request-id layer: `req_` and 96 random bits from the operating
/// system's generator (drawn through [`levy_api::fill_random`]'s pool), so that an id says
/// nothing about the requests before or after it. Should the generator fail, a counter
/// keeps ids unique (an id is not a secret), and the failure is logged.
pub(crate) fn new_request_id<B>(_: &axum::http::Request<B>) -> Option<HeaderValue> {
    let mut bytes = [0u8; 12];
    if let Err(e) = levy_api::fill_random(&mut bytes) {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        tracing::error!(target: LOG_TARGET, error = %e, "random number generator failed; request ids fall back to a counter");
        bytes[4..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    }
    // Written into a buffer on the stack, not a digit at a time through the formatter:
    // every request, `ping` included, makes one.
    let mut text = *b"req_000000000000000000000000";
    let _ = hex::encode_to_slice(bytes, &mut text[4..]);
    HeaderValue::from_bytes(&text).ok()
}

/// The span of a request, named by the id the request-id layer set: every line logged
/// while the request is handled carries it.
pub(crate) fn request_span<B>(req: &axum::http::Request<B>) -> tracing::Span {
    tracing::info_span!(target: LOG_TARGET, "request", id = %errors::request_id(req.headers()))
}

/// The answer's `Date` (RFC 9110, 6.6.1), written from levy's clock
/// ([`levy_api::clock::http_date`]) in place of hyper's, whose formatter panics for a
/// clock from year 10000 on (and before 1970): such a clock gives an answer without a
/// `Date`, never a panic.
pub(crate) async fn date(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    if let Some(value) = levy_api::clock::http_date(levy_api::clock::now())
        .and_then(|d| HeaderValue::from_str(&d).ok())
    {
        resp.headers_mut().insert(header::DATE, value);
    }
    resp
}

/// Logs every answer in one line, inside the request's span: method, path, status and the
/// time it took, in microseconds.
pub(crate) async fn log_answer(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let response = next.run(req).await;
    tracing::info!(
        target: LOG_TARGET,
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "answered"
    );
    response
}

/// Answers `GET /openapi.json` ([`OPENAPI_JSON`]), `GET /openapi/{version}.json`
/// ([`openapi::for_version`], with the categories of the table in use) and
/// `GET /openapi/dialects.json` ([`openapi::DIALECTS_JSON`]), without a key and
/// before the body is looked at; any other method on their paths is 405 with `Allow: GET`.
/// Every other request is passed on.
pub(crate) async fn documents(
    State(service): State<Arc<levy_api::Service>>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let versioned = openapi::version_of_path(path);
    let dialects = path == openapi::DIALECTS_PATH;
    if path != OPENAPI_PATH && versioned.is_none() && !dialects {
        return next.run(req).await;
    }
    if req.method() != axum::http::Method::GET {
        // With `Allow: GET`.
        return errors::render_for(
            HttpErrorKind::MethodNotAllowed,
            &format!("{path} answers GET only"),
            (req.headers(), path),
        );
    }
    let text = match versioned {
        None if dialects => openapi::DIALECTS_JSON.to_string(),
        None => OPENAPI_JSON.to_string(),
        Some(v) => {
            let table = service.table();
            let categories: Vec<&str> = table.category_names().collect();
            openapi::for_version(v, &categories).to_string()
        }
    };
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Refuses a body whose `Content-Length` is over the limit (the service's,
/// [`levy_api::Service::body_limit`]) before any of it is read: 413 in the request
/// version's error format, with `Connection: close`. What the client is still sending is
/// read and dropped first (see [`drain`]), so that a client that sends its whole body
/// before reading sees the 413 instead of a reset connection; but a client waiting for
/// `100 Continue` has sent nothing yet and is answered at once, without reading (reading
/// is what would send `100 Continue`).
///
/// Here rather than left to the body-limit layer, which answers such a body with a 413 of
/// its own (plain text) and drops it unread.
pub(crate) async fn refuse_declared_oversize(
    State(limit): State<usize>,
    req: Request,
    next: Next,
) -> Response {
    let declared = declared_length(req.headers());
    if declared.is_none_or(|n| n <= limit as u64) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    tracing::warn!(target: LOG_TARGET, declared, limit, "request body over the limit");
    if !expects_continue(&parts.headers) {
        drain(body).await;
    }
    closing(errors::render_for(
        HttpErrorKind::RequestTooLarge,
        &levy_api::body_too_large(limit),
        (&parts.headers, parts.uri.path()),
    ))
}

/// The `Content-Length` a request declares, if any.
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// True when the request carries `Expect: 100-continue`.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::EXPECT)
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// `response` with `Connection: close`: the connection is not reused after a body the
/// server did not read in whole.
pub(crate) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The most bytes of an oversized body read and dropped before answering 413; beyond
/// it (or after [`DRAIN_TIME`]) the connection is closed with the answer.
const DRAIN_LIMIT: usize = 16 << 20;
/// The longest an oversized body is read and dropped before answering 413.
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// Reads and drops what is left of a refused body, up to [`DRAIN_LIMIT`] bytes seen and
/// for at most [`DRAIN_TIME`]. Past the body limit the body-limit layer drops each further
/// frame itself, answering an error in its place, so that past the limit the bytes go
/// unseen here and time alone bounds the reading; any other error ends it.
pub(crate) async fn drain(mut body: Body) {
    let work = async {
        let mut seen = 0usize;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            match frame {
                Ok(frame) => {
                    seen += frame.data_ref().map_or(0, Bytes::len);
                    if seen > DRAIN_LIMIT {
                        break;
                    }
                }
                // A frame past the limit, read and dropped: go on.
                Err(e) => {
                    if !is_over_limit(e) {
                        break;
                    }
                }
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, work).await;
}

/// Whether a body error is the body-limit layer's: a frame past the limit.
pub(crate) fn is_over_limit(e: axum::Error) -> bool {
    e.into_inner().is::<http_body_util::LengthLimitError>()
}

/// A request body that must arrive whole by a deadline, the body timeout
/// ([`crate::ServeOptions::body_timeout`]) from when the request came in; later, reading it
/// fails with [`BodyTimedOut`].
///
/// Not tower-http's `DeadlineBody`, which polls its timer before the body and so arms a
/// timer (the runtime's timer lock, taken to register and again to cancel) for every
/// request, even one whose body came whole with its headers, as a calculation's does. This
/// one polls the body first and arms its timer only when the body is not there yet.
pub(crate) struct Deadline<B> {
    body: B,
    /// `None` when the timeout is too long to be a point in time: no deadline.
    deadline: Option<tokio::time::Instant>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<B> Deadline<B> {
    /// `body`, to be read whole within `timeout` from now.
    pub(crate) fn new(body: B, timeout: Duration) -> Self {
        Deadline {
            body,
            deadline: tokio::time::Instant::now().checked_add(timeout),
            timer: None,
        }
    }
}

impl<B> HttpBody for Deadline<B>
where
    B: HttpBody + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let Some(deadline) = this.deadline else {
            return Poll::Pending;
        };
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The error of a body that did not arrive whole by its [`Deadline`].
#[derive(Debug)]
pub(crate) struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body was not received in time")
    }
}

impl std::error::Error for BodyTimedOut {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_req_and_96_random_bits() {
        let req = axum::http::Request::new(());
        let a = new_request_id(&req).unwrap();
        let b = new_request_id(&req).unwrap();
        for id in [&a, &b] {
            let text = id.to_str().unwrap();
            assert_eq!(text.len(), 4 + 24, "{text}");
            assert!(text.starts_with("req_"), "{text}");
            assert!(text[4..].bytes().all(|c| c.is_ascii_hexdigit()), "{text}");
        }
        assert_ne!(a, b);
    }

    /// A body that never sends anything.
    struct Stalled;

    impl HttpBody for Stalled {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_body_there_is_read_past_its_deadline_and_one_that_stalls_times_out() {
        use http_body_util::BodyExt;
        // A whole body is read (without a timer), even once the deadline has passed.
        let whole = Deadline::new(Body::from("{}"), Duration::ZERO);
        let read = whole.collect().await.map(|c| c.to_bytes());
        assert_eq!(read.unwrap(), Bytes::from_static(b"{}"));
        // A body that never comes fails once the deadline passes, not before.
        let started = Instant::now();
        let stalled = Deadline::new(Stalled, Duration::from_millis(100));
        let e = stalled.collect().await.err().unwrap();
        assert!(e.is::<BodyTimedOut>(), "{e}");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }
}
