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
//!   `GET /openapi/{version}.json`, the closed document of one API version
//!   ([`openapi::for_version`]), and `GET /openapi/dialects.json`, the document of the
//!   TaxJar v2 and AvaTax REST v2 request shapes ([`openapi::DIALECTS_JSON`]), all served
//!   without authentication;
//! * graceful shutdown (requests in flight are finished); `levy serve` (in the `levy`
//!   binary, `crates/levy-cli`) adds SIGTERM/ctrl-c handling and an atomic table reload on
//!   SIGHUP;
//! * [`runtime_builder`], the runtime to serve on, whose idle workers end the ledger's
//!   gathering of calculations.
//!
//! The request path is a stack of tower layers (request id, tracing, the documents, the
//! body limit and timeout) around the dispatch into the service; [`router`] lists them in
//! order. Which requests are answered on the async workers and which on the blocking pool
//! the service says ([`levy_api::Service::blocks_on_commit`], and
//! [`levy_api::Service::is_large`] for a large request, which may wait its account's turn):
//! the server knows no route.
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

mod answer;
mod errors;
mod layers;
pub mod openapi;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;
use axum::{middleware, Router};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::map_request_body::MapRequestBodyLayer;
use tower_http::propagate_header::PropagateHeaderLayer;
use tower_http::set_header::SetRequestHeaderLayer;
use tower_http::trace::TraceLayer;

use answer::AppState;

pub use errors::{HttpErrorKind, HTTP_ERROR_KINDS};

pub use openapi::{OPENAPI_JSON, OPENAPI_PATH};

/// The largest request body accepted by default: 1 MiB. Larger bodies get 413. The limit
/// in force is the service's ([`levy_api::Service::body_limit`], set with
/// [`levy_api::Service::with_body_limit`]); the server reads it, so that the server and
/// the service refuse the same bodies.
pub use levy_api::DEFAULT_BODY_LIMIT;

/// The header that carries the request id, in both directions.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The target of the server's log lines (`levy_server=debug` selects them).
const LOG_TARGET: &str = "levy_server";

/// A multi-threaded tokio runtime builder (I/O and timers enabled, a worker per core) for
/// [`serve`], its workers telling the ledger when they run out of work
/// ([`levy_api::on_worker_park`] and [`levy_api::on_worker_unpark`] as its park hooks).
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
        .on_thread_park(levy_api::on_worker_park)
        .on_thread_unpark(levy_api::on_worker_unpark);
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
    // The `Date` header is levy's ([`router`]'s first layer): hyper's own panics for a
    // clock from year 10000 on.
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout)
        .auto_date_header(false);
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

/// The axum router for `service`, the whole transport included: use it to mount levy
/// inside a larger axum application. Every request goes through these layers, outermost
/// first, to levy's answer:
///
/// 0. **date**: the answer's `Date` header from levy's clock
///    ([`levy_api::clock::http_date`]; none for a clock past year 9999, where hyper's
///    own would panic);
/// 1. **request id**: a `req_` id of 96 random bits in `x-request-id`, replacing any the
///    client sent (tower-http's `SetRequestHeaderLayer`, overriding);
/// 2. the id on the answer's `x-request-id` (`PropagateHeaderLayer`);
/// 3. **tracing**: a span per request named by its id (`TraceLayer`, its own events off),
///    so that every line logged while the request is handled carries the id;
/// 4. one log line per answer: method, path, status, microseconds;
/// 5. the OpenAPI documents (`GET /openapi.json`, `GET /openapi/{version}.json`), answered
///    before the body is looked at;
/// 6. **body limit**, declared: a `Content-Length` over the service's
///    [`levy_api::Service::body_limit`] is 413 in the request version's error format, the
///    body drained first unless the client awaits `100 Continue`;
/// 7. **body limit**, read: no more of a body read than the limit (tower-http's
///    `RequestBodyLimitLayer`; the answer is then the same 413);
/// 8. **body timeout**: the whole body within [`ServeOptions::body_timeout`] (408 past it,
///    in the version's error format, the connection closed): tower-http's
///    `MapRequestBodyLayer` with a body of levy's that arms its timer only when the body is
///    late, so that a body that came with its headers costs no timer;
///
/// and then levy's answer: the body read whole, the JSON check (415), and the dispatch into
/// [`levy_api::Service`], on the async worker or on the blocking pool as
/// [`levy_api::Service::blocks_on_commit`] says.
pub fn router(service: Arc<levy_api::Service>, options: &ServeOptions) -> Router {
    let limit = service.body_limit();
    let timeout = options.body_timeout;
    let state = Arc::new(AppState {
        body_limit: limit,
        service: Arc::clone(&service),
        body_timeout: timeout,
        inline: options.inline,
    });
    let request_id = HeaderName::from_static(REQUEST_ID_HEADER);
    let transport = ServiceBuilder::new()
        .layer(middleware::from_fn(layers::date))
        .layer(SetRequestHeaderLayer::overriding(
            request_id.clone(),
            layers::new_request_id,
        ))
        .layer(PropagateHeaderLayer::new(request_id))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(layers::request_span)
                .on_request(())
                .on_response(())
                .on_body_chunk(())
                .on_eos(())
                .on_failure(()),
        )
        .layer(middleware::from_fn(layers::log_answer))
        .layer(middleware::from_fn_with_state(service, layers::documents))
        .layer(middleware::from_fn_with_state(
            limit,
            layers::refuse_declared_oversize,
        ))
        .layer(RequestBodyLimitLayer::new(limit))
        .layer(MapRequestBodyLayer::new(move |body| {
            layers::Deadline::new(body, timeout)
        }));
    Router::new()
        .fallback(move |req: axum::extract::Request| {
            let state = Arc::clone(&state);
            async move { state.answer(req).await }
        })
        .layer(transport)
}
