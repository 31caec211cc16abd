//! The front of the service: a request answered ([`Service::handle`], [`Service::answer`]),
//! whatever happens on the way, through the router ([`crate::router`]); apart from the
//! service's state ([`crate::service`]), which every handler reads.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{ApiError, ErrorKind};
use crate::service::Service;
use crate::{router, ApiVersion, Request, Response};

/// The answer to a request, which may still wait for its write to be committed
/// ([`Service::answer`]).
#[derive(Debug)]
#[must_use = "an answer is sent with `finish` or `wait`"]
pub struct Answer {
    response: Response,
    pending: Option<router::Pending>,
    /// The request's [`Request::request_id`], for the error body of a failed commit.
    request_id: Option<String>,
}

impl Answer {
    /// Whether the response can be sent without waiting for a commit.
    pub fn is_ready(&self) -> bool {
        self.pending.is_none()
    }

    /// The response, once the write it reports is committed; the ledger's error (500
    /// `LEDGER_ERROR`, in the request's error format) if the write failed.
    pub async fn finish(self) -> Response {
        match self.pending {
            None => self.response,
            Some(pending) => {
                let commit = pending.commit.await;
                // The request's idempotency key is held until here.
                drop(pending.key);
                settle(
                    self.response,
                    commit,
                    (pending.version, pending.dialect),
                    self.request_id.as_deref(),
                )
            }
        }
    }

    /// As [`Answer::finish`], blocking the calling thread.
    pub fn wait(self) -> Response {
        match self.pending {
            None => self.response,
            Some(pending) => {
                let commit = pending.commit.wait();
                drop(pending.key);
                settle(
                    self.response,
                    commit,
                    (pending.version, pending.dialect),
                    self.request_id.as_deref(),
                )
            }
        }
    }
}

fn settle(
    response: Response,
    commit: Result<(), crate::store::StoreError>,
    (version, dialect): (ApiVersion, Option<crate::dialects::Dialect>),
    request_id: Option<&str>,
) -> Response {
    match commit {
        Ok(()) => response,
        Err(e) => {
            let r = router::error_for(&ApiError::from(e), version, dialect, request_id);
            match dialect {
                Some(d) => crate::dialects::finish(d, r, request_id),
                None => r,
            }
        }
    }
}

/// The request id an answer's failed commit is reported under.
fn pending_id(pending: &Option<router::Pending>, req: &Request) -> Option<String> {
    pending.as_ref().and(req.request_id.clone())
}

/// The message of a body over the service's limit of `limit` bytes
/// ([`Service::body_limit`]), wherever it is refused: by the router, for a caller in
/// process, or by the HTTP server before or while reading it.
pub fn body_too_large(limit: usize) -> String {
    format!("the request body is larger than the limit of {limit} bytes")
}

impl Service {
    /// Answers one request. Never panics: an unexpected failure is a 500 in the request's
    /// error format. A calculation returns once its record is committed to the ledger.
    pub fn handle(&self, req: &Request) -> Response {
        let (response, pending) = self.dispatch(req, false);
        debug_assert!(pending.is_none(), "handle waits for its commits in place");
        response
    }

    /// Answers one request up to the ledger's commit, without waiting for it: the
    /// [`Answer`] holds the response and, for a calculation, the commit it must wait for.
    /// An async server awaits [`Answer::finish`], so that no thread blocks on the
    /// ledger; [`Answer::wait`] blocks instead. Either gives what [`Service::handle`]
    /// gives for the same request.
    pub fn answer(&self, req: &Request) -> Answer {
        let (response, pending) = self.dispatch(req, true);
        Answer {
            request_id: pending_id(&pending, req),
            response,
            pending,
        }
    }

    fn dispatch(&self, req: &Request, defer: bool) -> router::Dispatched {
        let mut dispatched = self.dispatch_guarded(req, defer);
        if let Some((horizon, true)) = crate::table_horizon(&self.table(), crate::clock::now()) {
            let headers = &mut dispatched.0.headers;
            headers.push((crate::TABLE_HORIZON_HEADER.to_string(), horizon));
        }
        dispatched
    }

    fn dispatch_guarded(&self, req: &Request, defer: bool) -> router::Dispatched {
        match catch_unwind(AssertUnwindSafe(|| router::dispatch(self, req, defer))) {
            Ok(r) => r,
            Err(_) => {
                let version = req
                    .header("x-api-version")
                    .and_then(ApiVersion::parse)
                    .unwrap_or(ApiVersion::V2024_09_01);
                let e = ApiError::of(
                    ErrorKind::InternalError,
                    "the request failed unexpectedly; nothing was changed",
                );
                (
                    router::error_response_at(&e, version, &req.path, req.request_id.as_deref()),
                    None,
                )
            }
        }
    }

    /// Whether answering `req` may block the calling thread on the ledger, even through
    /// [`Service::answer`]: every write but a calculation's (whose commit
    /// [`Answer::finish`] awaits), and every request when the ledger is across a network
    /// ([`Service::ledger_is_remote`]). Reads (`GET`) on a local ledger never block. Where
    /// one route is a calculation or a recorded sale by its body (AvaTax's
    /// `transactions/create`: a `SalesOrder`, or a committed invoice), the body's `type`
    /// decides.
    ///
    /// An async server answers a request for which this is `false` on its worker threads
    /// and any other on threads that may block (tokio's blocking pool), so that no worker
    /// waits on the disk or the network; it needs to know none of the routes.
    pub fn blocks_on_commit(&self, req: &Request) -> bool {
        self.ledger_is_remote() || router::blocks_on_commit(req)
    }
}
