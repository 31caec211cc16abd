//! What a route's handler sees ([`Ctx`]: the service, the request, its version, key scope,
//! parameters, and the headers and commit it leaves for the answer) and answers with
//! ([`Reply`]); the router ([`crate::router`]) finds the handler and renders its answer.

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
    /// Response headers a handler adds beside its body (levy's own, such as
    /// `Levy-Coverage`); sent on success only.
    pub headers: std::cell::RefCell<Vec<(String, String)>>,
    /// Whether the caller awaits a write's commit itself ([`Service::answer`]) rather
    /// than have the handler wait for it in place.
    pub defer: bool,
    /// The write the response must not be sent before, when `defer` is set.
    pub commit: std::cell::RefCell<Option<Commit>>,
    /// The request's idempotency key, until a write keeps its answer under it
    /// ([`crate::idempotency::make`]); one left after a success is kept by the router.
    pub key: std::cell::RefCell<Option<crate::idempotency::Claim>>,
}

impl Ctx<'_> {
    /// Sets a response header, replacing an earlier value of the same name.
    pub fn set_header(&self, name: &str, value: &str) {
        let mut h = self.headers.borrow_mut();
        h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        h.push((name.to_string(), value.to_string()));
    }

    /// Lets the response go once `commit` resolves: waits for it here, or, when the caller
    /// awaits commits itself, hands it over.
    pub fn after_commit(&self, commit: Commit) -> Result<(), ApiError> {
        if self.defer {
            *self.commit.borrow_mut() = Some(commit);
            Ok(())
        } else {
            commit.wait().map_err(ApiError::from)
        }
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

/// What a handler answers with on success.
pub(crate) enum Reply {
    /// A JSON tree, written as it is.
    Tree(Value),
    /// A JSON document already written (a calculation, written straight from its view
    /// without building a tree first).
    Json(Vec<u8>),
    /// A CSV document (`text/csv; charset=utf-8`): a report asked for as CSV.
    Csv(Vec<u8>),
}

impl Reply {
    /// A reply written from `view` now.
    pub(crate) fn json(view: &impl serde::Serialize) -> Result<Reply, ApiError> {
        // Room for a one-line calculation (about 1 KB) from the start, where an empty
        // vector would grow three times on the way.
        let mut out = Vec::with_capacity(2048);
        serde_json::to_writer(&mut out, view)
            .map(|()| Reply::Json(out))
            .map_err(|e| ApiError::of(ErrorKind::InternalError, format!("rendering failed: {e}")))
    }
}

/// A route's handler: what it sees, what it answers.
pub(crate) type Handler = fn(&Ctx<'_>) -> Result<Reply, ApiError>;
