//! What a route's handler sees ([`Ctx`]: the service, the request, its version, key scope
//! and parameters) and answers with ([`Reply`]: the body, the headers beside it and the
//! commit it must wait for); the router ([`crate::router`]) finds the handler and renders
//! its answer.

use serde_json::Value;

use crate::error::{ApiError, ErrorKind};
use crate::keys::Scope;
use crate::service::Service;
use crate::store::Commit;
use crate::{ApiVersion, Request};

/// What a handler sees.
pub(crate) struct Ctx<'a> {
    pub service: &'a Service,
    pub req: &'a Request,
    pub version: ApiVersion,
    pub scope: &'a Scope,
    /// Path parameters, percent-decoded, in order.
    pub params: Vec<String>,
    /// Query parameters, percent-decoded.
    pub query: Vec<(String, String)>,
    /// Whether the caller awaits a write's commit itself ([`Service::answer`]) rather
    /// than have the handler wait for it in place ([`Reply::after`]).
    pub defer: bool,
    /// The request's idempotency key, when it has one: a write keeps its answer under it
    /// in the same commit ([`crate::idempotency::make`]) and says so in its [`Reply`];
    /// the router keeps any other success under it afterwards.
    pub key: Option<&'a crate::idempotency::Claim>,
}

impl Ctx<'_> {
    /// A request header a calculation reads beside its body (`Levy-Rounding`,
    /// `Levy-Exchange-Rate`), in whatever request shape it came, when it was sent.
    pub fn asked(&self, header: &str) -> Option<String> {
        self.req.header(header).map(str::to_string)
    }

    /// Whether the request is in test mode.
    pub fn testmode(&self) -> bool {
        !self.scope.live
    }

    /// Query parameters by name; any parameter not in `allowed` is `UNRECOGNIZED_FIELD`,
    /// an empty value `INVALID_QUERY_PARAMETER`, except an empty `cursor`, which is the
    /// first page and left out.
    pub fn query_params(&self, allowed: &[&str]) -> Result<Vec<(&str, &str)>, ApiError> {
        let mut out = Vec::new();
        for (k, v) in &self.query {
            if !allowed.contains(&k.as_str()) {
                return Err(ApiError::field(
                    ErrorKind::UnrecognizedField,
                    k,
                    format!("{k} is not a query parameter of this endpoint"),
                    format!("one of: {}", allowed.join(", ")),
                    k,
                ));
            }
            if v.is_empty() && k == "cursor" {
                // `?cursor=` is the first page, as clients write it for the first call.
                continue;
            }
            if v.is_empty() {
                // `?status=` names no value: refused rather than read as "no filter", so
                // that a client's empty variable is not silently a different query.
                return Err(ApiError::field(
                    ErrorKind::InvalidQueryParameter,
                    k,
                    format!("{k} must not be empty"),
                    "a non-empty value",
                    "\"\"",
                ));
            }
            out.push((k.as_str(), v.as_str()));
        }
        Ok(out)
    }
}

/// Response headers beside a body: name and value, in order.
pub(crate) type Headers = Vec<(String, String)>;

/// What a handler answers with on success: its body, the headers beside it (levy's own,
/// such as `Levy-Coverage`) and, when the caller awaits commits itself, the write the
/// response must not be sent before.
pub(crate) struct Reply {
    /// The body.
    pub body: Body,
    /// Headers beside the body, sent on success only.
    pub headers: Headers,
    /// The write the response waits for, when the request's `defer` is set.
    pub commit: Option<Commit>,
    /// Whether this answer is already kept under the request's idempotency key, by the
    /// write that made it: the router keeps only a reply that is not.
    pub kept: bool,
}

/// A reply's body.
pub(crate) enum Body {
    /// A JSON tree, written as it is.
    Tree(Value),
    /// A JSON document already written (a calculation, written straight from its view
    /// without building a tree first).
    Json(Vec<u8>),
    /// A CSV document (`text/csv; charset=utf-8`): a report asked for as CSV.
    Csv(Vec<u8>),
}

impl From<Body> for Reply {
    fn from(body: Body) -> Reply {
        Reply {
            body,
            headers: Vec::new(),
            commit: None,
            kept: false,
        }
    }
}

impl Reply {
    /// A reply of a JSON tree.
    pub(crate) fn tree(tree: Value) -> Reply {
        Body::Tree(tree).into()
    }

    /// A reply of a CSV document.
    pub(crate) fn csv(bytes: Vec<u8>) -> Reply {
        Body::Csv(bytes).into()
    }

    /// A reply written from `view` now.
    pub(crate) fn json(view: &impl serde::Serialize) -> Result<Reply, ApiError> {
        // Room for a one-line calculation (about 1 KB) from the start, where an empty
        // vector would grow three times on the way.
        let mut out = Vec::with_capacity(2048);
        serde_json::to_writer(&mut out, view)
            .map(|()| Body::Json(out).into())
            .map_err(|e| ApiError::of(ErrorKind::InternalError, format!("rendering failed: {e}")))
    }

    /// The reply with `headers` beside its body, each replacing a header of the same name
    /// it had.
    pub(crate) fn with_headers(mut self, headers: Headers) -> Reply {
        for (name, value) in headers {
            self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&name));
            self.headers.push((name, value));
        }
        self
    }

    /// The reply once `commit` resolves: waited for here, or, when the caller awaits
    /// commits itself (`ctx.defer`), carried with the reply.
    pub(crate) fn after(mut self, ctx: &Ctx<'_>, commit: Commit) -> Result<Reply, ApiError> {
        if ctx.defer {
            self.commit = Some(commit);
        } else {
            commit.wait().map_err(ApiError::from)?;
        }
        Ok(self)
    }
}

/// A route's handler: what it sees, what it answers.
pub(crate) type Handler = fn(&Ctx<'_>) -> Result<Reply, ApiError>;

/// One route: its method, path pattern (`{}` is a parameter) and handler, the first API
/// version it exists in, and whether its write hands its commit over rather than blocks.
#[derive(Clone, Copy)]
pub(crate) struct Route {
    pub method: &'static str,
    pub pattern: &'static str,
    pub handler: Handler,
    /// In an earlier version the route answers `404 NOT_FOUND`, as a path that does not
    /// exist.
    pub since: ApiVersion,
    /// Whether [`crate::Service::answer`] hands the route's write over to be awaited
    /// ([`crate::Answer::finish`]) instead of the handler waiting for its commit in place
    /// ([`Reply::after`]): the calculations.
    pub deferred: bool,
}

/// A route of every version whose writes, if any, block on their commit.
pub(crate) const fn route(method: &'static str, pattern: &'static str, handler: Handler) -> Route {
    Route {
        method,
        pattern,
        handler,
        since: ApiVersion::V2024_09_01,
        deferred: false,
    }
}

impl Route {
    /// The route from API version `version` on.
    pub(crate) const fn since(self, version: ApiVersion) -> Route {
        Route {
            since: version,
            ..self
        }
    }

    /// The route, whose write hands its commit over.
    pub(crate) const fn deferred(self) -> Route {
        Route {
            deferred: true,
            ..self
        }
    }
}
