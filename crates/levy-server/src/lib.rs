//! levy-server: the tax service interface over HTTP.
//!
//! This crate is transport only. Every request is turned into a [`levy_api::Request`],
//! answered by [`levy_api::Service::handle`], and the [`levy_api::Response`] is written
//! back unchanged. What the HTTP layer adds on its own:
//!
//! * the service's request body limit ([`levy_api::Service::body_limit`],
//!   [`DEFAULT_BODY_LIMIT`] unless raised), enforced while the body is read: a larger body
//!   is answered with 413 in the error format of the request's API version without being
//!   kept in memory;
//! * a JSON content-type check on request bodies, answered with 415;
//! * a request id (`req_…`) for every request: given to the service as
//!   [`levy_api::Request::request_id`] (so that an error body in the older format names
//!   it), sent in the `x-request-id` response header, and carried by every log line
//!   written while the request is handled. A client's own `x-request-id` header is
//!   neither passed to the service nor echoed: the server's id replaces it;
//! * `GET /openapi.json`, the OpenAPI 3.1 document of the interface ([`OPENAPI_JSON`]),
//!   and `GET /openapi/{version}.json`, the closed document of one API version
//!   ([`openapi::for_version`]), both served without authentication;
//! * graceful shutdown (requests in flight are finished); `levy serve` (in the `levy`
//!   binary, `crates/levy-cli`) adds SIGTERM/ctrl-c handling and an atomic table reload on
//!   SIGHUP;
//! * [`runtime_builder`], the runtime to serve on, whose idle workers end the ledger's
//!   gathering of calculations.
//!
//! ```no_run
//! use std::sync::Arc;
//! use levy_server::{serve, ServeOptions};
//!
//! # async fn example(service: Arc<levy_api::Service>) -> std::io::Result<()> {
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let running = serve(service, ServeOptions::loopback_ephemeral(), async {
//!     let _ = stopped.await;
//! })
//! .await?;
//! println!("listening on http://{}", running.local_addr());
//! let _ = stop.send(());
//! running.wait().await?;
//! # Ok(())
//! # }
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod errors;
pub mod openapi;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tracing::Instrument;

pub use errors::{HttpErrorKind, HTTP_ERROR_KINDS};

pub use openapi::{OPENAPI_JSON, OPENAPI_PATH};

/// The largest request body accepted by default: 1 MiB. Larger bodies get 413. The limit
/// in force is the service's ([`levy_api::Service::body_limit`], set with
/// [`levy_api::Service::with_body_limit`]); the server reads it, so that the server and
/// the service refuse the same bodies.
pub use levy_api::DEFAULT_BODY_LIMIT;

/// The header that carries the request id, in both directions.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A multi-threaded tokio runtime builder (I/O and timers enabled, a worker per core) for
/// [`serve`], its workers telling the SQLite ledger when they run out of work
/// ([`levy_api::store::workers_idle`] and [`levy_api::store::worker_busy`] as its park
/// hooks).
///
/// Under load the ledger's writer gathers calculations for up to 400 µs so that one
/// commit serves many. Once the workers have nothing left to do (the first of them, or
/// every one under heavy load), every request that could still join the group is waiting
/// on it, so the hooks end the gathering there: the processor is not left idle, and a few
/// clients are answered in a fraction of the time.
/// A runtime built without them serves the same answers, gathering the full time.
pub fn runtime_builder() -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .enable_all()
        .on_thread_park(levy_api::store::workers_idle)
        .on_thread_unpark(levy_api::store::worker_busy);
    builder
}

/// How [`serve`] listens and treats requests.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to bind. Port 0 picks a free port; [`Running::local_addr`] tells which.
    pub listen: SocketAddr,
    /// Where requests are answered. `false` (the default): reads and calculations on the
    /// async worker threads, a calculation's commit awaited there without holding a
    /// thread ([`levy_api::Service::answer`]); every other write on tokio's blocking pool,
    /// where many requests can wait on one flushed commit (the ledger commits concurrent
    /// writes as one group). `true`: everything on the worker threads, each write waiting
    /// for its commit in place, so at most one request per worker thread can wait on a
    /// commit, and when the disk's flush is slow (milliseconds on a busy disk) throughput
    /// collapses. Kept for measurements.
    pub inline: bool,
    /// How long a client has to send a request's headers, and how long a kept-alive
    /// connection may sit idle between requests, before it is closed. Default
    /// [`DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// How long a client has to send a request's whole body once its headers are in;
    /// later, the request is answered with 408 and the connection closed. Default
    /// [`DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// The most connections served at once. A connection accepted beyond it is closed at
    /// once, so that stalled clients cannot take every file descriptor and starve the
    /// others. Default [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
}

/// Default [`ServeOptions::header_timeout`]: 10 seconds.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Default [`ServeOptions::body_timeout`]: 30 seconds, enough for 1 MiB at 35 KB/s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Default [`ServeOptions::max_connections`]: 512, half of the common 1,024-descriptor
/// limit, leaving room for the ledger, the table and the logs.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

impl ServeOptions {
    /// Options for tests and local tools: `127.0.0.1:0`, the default timeouts and
    /// connection limit.
    pub fn loopback_ephemeral() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..Default::default()
        }
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            inline: false,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// A server started by [`serve`].
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// The address the server is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until the server has shut down (after the shutdown future given to
    /// [`serve`] completes and every request in flight has been answered).
    pub async fn wait(self) -> std::io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(std::io::Error::other(format!("server task failed: {e}"))),
        }
    }
}

/// Binds `options.listen`, starts answering requests with `service` on the current tokio
/// runtime, and returns once the socket is bound. The server stops accepting connections
/// when `shutdown` completes, finishes the requests in flight, and then ends;
/// [`Running::wait`] waits for that.
pub async fn serve<F>(
    service: Arc<levy_api::Service>,
    options: ServeOptions,
    shutdown: F,
) -> std::io::Result<Running>
where
    F: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind(options.listen).await?;
    let addr = listener.local_addr()?;
    let app = router(service, &options);
    let task = tokio::spawn(accept_loop(listener, app, options, shutdown));
    Ok(Running { addr, task })
}

/// Accepts connections until `shutdown` completes, then waits for the connections still
/// open to finish their requests in flight.
///
/// Each connection is served by hyper's HTTP/1 server with a header timeout (which also
/// bounds how long a kept-alive connection may sit idle); a permit of a semaphore of
/// `max_connections` is held for its lifetime, and a connection accepted when none is left
/// is closed at once.
async fn accept_loop<F>(
    listener: TcpListener,
    app: Router,
    options: ServeOptions,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let permits = Arc::new(tokio::sync::Semaphore::new(options.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!(%peer, limit = options.max_connections, "connection limit reached; closing a new connection");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let conn = http.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The axum router for `service`: one catch-all handler over [`levy_api::Service::handle`].
/// Use it to mount levy inside a larger axum application. Request bodies are limited to
/// the service's [`levy_api::Service::body_limit`].
pub fn router(service: Arc<levy_api::Service>, options: &ServeOptions) -> Router {
    let state = Arc::new(AppState {
        body_limit: service.body_limit(),
        service,
        body_timeout: options.body_timeout,
        inline: options.inline,
    });
    Router::new().fallback(move |req: axum::extract::Request| {
        let state = Arc::clone(&state);
        async move { state.answer(req).await }
    })
}

struct AppState {
    service: Arc<levy_api::Service>,
    /// The service's body limit, read once: it is fixed when the service is built.
    body_limit: usize,
    body_timeout: Duration,
    inline: bool,
}

/// Request ids: `req_` + 96 random bits from the operating system's generator (drawn
/// through [`levy_api::fill_random`]'s pool), so that an id says nothing about the requests
/// before or after it. Should the generator fail, a counter keeps ids unique (an id is not
/// a secret), and the failure is logged.
fn next_request_id() -> String {
    let mut bytes = [0u8; 12];
    if let Err(e) = levy_api::fill_random(&mut bytes) {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        tracing::error!(error = %e, "random number generator failed; request ids fall back to a counter");
        bytes[4..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    }
    // Written into a buffer on the stack, not a digit at a time through the formatter:
    // every request, `ping` included, makes one.
    let mut text = *b"req_000000000000000000000000";
    let _ = hex::encode_to_slice(bytes, &mut text[4..]);
    std::str::from_utf8(&text)
        .map(str::to_owned)
        .unwrap_or_default()
}

impl AppState {
    async fn answer(self: Arc<Self>, req: axum::extract::Request) -> axum::response::Response {
        let request_id = next_request_id();
        let span = tracing::info_span!("request", id = %request_id);
        async move {
            let started = Instant::now();
            let method = req.method().clone();
            let path = req.uri().path().to_string();
            let mut response = self.answer_inner(req, &request_id).await;
            if let Ok(v) = HeaderValue::from_str(&request_id) {
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(REQUEST_ID_HEADER), v);
            }
            tracing::info!(
                method = %method,
                path = %path,
                status = response.status().as_u16(),
                micros = started.elapsed().as_micros() as u64,
                "answered"
            );
            response
        }
        .instrument(span)
        .await
    }

    async fn answer_inner(
        &self,
        req: axum::extract::Request,
        request_id: &str,
    ) -> axum::response::Response {
        let (parts, body) = req.into_parts();
        // The error format of the HTTP layer's own answers: the version's, as the service
        // would pick it.
        let version = errors::error_version(
            parts
                .headers
                .get("x-api-version")
                .and_then(|v| v.to_str().ok())
                .unwrap_or(""),
        );

        let document = parts.uri.path() == OPENAPI_PATH;
        let versioned = openapi::version_of_path(parts.uri.path());
        if document || versioned.is_some() {
            if parts.method != Method::GET {
                // With `Allow: GET`.
                return errors::render(
                    HttpErrorKind::MethodNotAllowed,
                    &format!("{} answers GET only", parts.uri.path()),
                    version,
                    request_id,
                );
            }
            let text = match versioned {
                None => OPENAPI_JSON.to_string(),
                Some(v) => {
                    let table = self.service.table();
                    let categories: Vec<&str> = table.category_names().collect();
                    openapi::for_version(v, &categories).to_string()
                }
            };
            return plain_response(StatusCode::OK, "application/json", Body::from(text));
        }

        // Body: at most `body_limit` bytes. A larger body (declared or found while
        // reading) is answered with 413 after the rest of it has been read and dropped,
        // up to DRAIN_LIMIT, so that a client that sends its whole body before reading
        // sees the 413 instead of a reset connection.
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let mut body = body;
        let read = if declared.is_some_and(|n| n > self.body_limit as u64) {
            Err(ReadError::TooLarge)
        } else {
            match tokio::time::timeout(self.body_timeout, read_body(&mut body, self.body_limit))
                .await
            {
                Ok(read) => read,
                Err(_) => Err(ReadError::TimedOut),
            }
        };
        let body = match read {
            Ok(b) => b,
            Err(ReadError::TooLarge) => {
                tracing::warn!(
                    declared,
                    limit = self.body_limit,
                    "request body over the limit"
                );
                // A client waiting for `100 Continue` has sent nothing yet: answer at
                // once, without reading (reading is what would send `100 Continue`).
                if !expects_continue(&parts.headers) {
                    drain(body).await;
                }
                let mut r = errors::render(
                    HttpErrorKind::RequestTooLarge,
                    &self.too_large_message(),
                    version,
                    request_id,
                );
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return r;
            }
            Err(ReadError::TimedOut) => {
                tracing::warn!(
                    seconds = self.body_timeout.as_secs_f64(),
                    "request body not received in time"
                );
                let mut r = errors::render(
                    HttpErrorKind::RequestTimeout,
                    &format!(
                        "the request body was not received within {} seconds",
                        self.body_timeout.as_secs_f64()
                    ),
                    version,
                    request_id,
                );
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return r;
            }
            Err(ReadError::Broken(e)) => {
                tracing::warn!(error = %e, "could not read the request body");
                return errors::render(
                    HttpErrorKind::MalformedBody,
                    "the request body could not be read",
                    version,
                    request_id,
                );
            }
        };

        if !body.is_empty() && !is_json_content_type(&parts.headers) {
            let got = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none");
            return errors::render(
                HttpErrorKind::UnsupportedMediaType,
                &format!("request bodies must be JSON (Content-Type: application/json); got {got}"),
                version,
                request_id,
            );
        }

        // The request id goes to the service as `request_id`; a client's own
        // `x-request-id` header is not passed on (the server's id is the request's).
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
        let api_request = levy_api::Request {
            method: parts.method.as_str().to_string(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or("").to_string(),
            headers,
            body,
            request_id: Some(request_id.to_string()),
        };

        let api_response = if self.inline {
            self.service.handle(&api_request)
        } else if answers_on_worker(&api_request) && !self.service.ledger_is_remote() {
            // Reads and calculations: their work is a few tens of microseconds of CPU, and
            // a calculation's commit is awaited, not waited for on a thread.
            self.service.answer(&api_request).finish().await
        } else {
            let service = Arc::clone(&self.service);
            let span = tracing::Span::current();
            match tokio::task::spawn_blocking(move || {
                span.in_scope(|| service.handle(&api_request))
            })
            .await
            {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, "the service failed while answering");
                    return errors::render(
                        HttpErrorKind::Internal,
                        "internal error while answering the request",
                        version,
                        request_id,
                    );
                }
            }
        };
        into_http(api_response)
    }

    fn too_large_message(&self) -> String {
        format!(
            "the request body is larger than the limit of {} bytes",
            self.body_limit
        )
    }
}

/// Whether a request is answered on the async worker rather than on the blocking pool:
/// reads (`GET`), which never wait for a commit, and calculations, whose commit is
/// awaited ([`levy_api::Service::answer`]). Other writes wait for a flushed commit
/// (milliseconds on a busy disk), which must not hold a worker thread. With a ledger
/// across a network (PostgreSQL) every request is answered on the blocking pool.
fn answers_on_worker(req: &levy_api::Request) -> bool {
    match req.method.as_str() {
        "GET" => true,
        "POST" => matches!(
            req.path.as_str(),
            "/tax/calculations" | "/tax/platform/calculations"
        ),
        _ => false,
    }
}

enum ReadError {
    TooLarge,
    TimedOut,
    Broken(axum::Error),
}

/// True when the request carries `Expect: 100-continue`.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::EXPECT)
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// Reads the whole body, or stops with `TooLarge` as soon as it exceeds `limit`.
async fn read_body(body: &mut Body, limit: usize) -> Result<Vec<u8>, ReadError> {
    use axum::body::HttpBody;
    let mut out = Vec::new();
    while let Some(frame) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx)).await
    {
        let frame = frame.map_err(ReadError::Broken)?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > limit {
                return Err(ReadError::TooLarge);
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The most bytes of an oversized body read and dropped before answering 413; beyond
/// it (or after DRAIN_TIME) the connection is closed with the answer.
const DRAIN_LIMIT: usize = 16 << 20;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

async fn drain(mut body: Body) {
    use axum::body::HttpBody;
    let work = async {
        let mut seen = 0usize;
        while let Some(Ok(frame)) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            if let Ok(data) = frame.into_data() {
                seen += data.len();
                if seen > DRAIN_LIMIT {
                    break;
                }
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, work).await;
}

/// `application/json`, with or without parameters (`; charset=utf-8`), or a `+json` type.
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

fn plain_response(
    status: StatusCode,
    content_type: &'static str,
    body: Body,
) -> axum::response::Response {
    let mut r = axum::response::Response::new(body);
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
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
fn into_http(api: levy_api::Response) -> axum::response::Response {
    let mut r = axum::response::Response::new(Body::from(api.body));
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
            _ => tracing::warn!(header = %name, "dropped a response header that is not valid HTTP"),
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

/// Installs the `tracing` subscriber used by `levy serve`: human-readable lines on
/// stderr, filtered by `filter` (an `EnvFilter` directive such as `info` or
/// `levy_server=debug`), or by `RUST_LOG` when it is set. Does nothing when a subscriber
/// is already installed.
pub fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
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
