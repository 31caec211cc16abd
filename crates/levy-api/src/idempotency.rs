//! `Idempotency-Key`: a POST that carries a key is answered once. Its first successful
//! answer is kept in the ledger for 24 hours ([`crate::store::KEEP_SECONDS`]) per account
//! and mode, in the same write as what it answers; the same request sent again with the
//! key is answered with it (the same status, ids and body, with `Idempotent-Replayed:
//! true`), and nothing is done again.
//!
//! - The key: 1 to [`MAX_KEY_CHARS`] visible ASCII characters (a UUID is usual), sent once;
//!   anything else is `400 INVALID_HEADER`. Keys on other methods are not read.
//! - The same key with another request (method, path, query, `X-API-Version`,
//!   `Levy-Rounding` or body, byte for byte) is `409 IDEMPOTENCY_KEY_REUSED`.
//! - A request whose key is in use by a request being answered (its commit included) is
//!   `409 IDEMPOTENCY_KEY_IN_USE` (`Retry-After: 1`) at once, as Stripe answers; between
//!   processes on one ledger the ledger decides (the key is kept in the write's own
//!   transaction: the second commit finds it taken, and nothing of it is made).
//! - Only successes are kept. An error (4xx, 5xx, 429) keeps nothing, so a refused
//!   request changes nothing stored, and the request may be sent again, with the same key,
//!   once corrected or once the ledger is back.
//! - Each account and mode keeps at most [`KeyLimits`] answers; past that a request with
//!   a new key is `429 IDEMPOTENCY_QUOTA_EXCEEDED` (requests without a key still pass).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Body, Ctx, Headers, Reply};
use crate::keys::Scope;
use crate::service::Service;
use crate::store::{Answered, Keep, KeptAnswer, KeptCount, Made, Quote, StoreError, Write};
use crate::{ApiVersion, Request, Response};

/// The request header that carries a request's idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";

/// The response header of an answer given again under its idempotency key: `true`.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// The longest idempotency key, in characters (Stripe's bound).
pub const MAX_KEY_CHARS: usize = 255;

/// How long a count of kept answers is used before it is counted again from the ledger
/// (other processes' answers are seen within this time).
const COUNT_TTL: Duration = Duration::from_secs(10);

/// The bounds of the answers each account and mode keeps under idempotency keys
/// ([`crate::Service::with_key_limits`]). `0` turns a bound off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyLimits {
    /// Unexpired answers kept. At this many, a request with a new key is refused (429
    /// `IDEMPOTENCY_QUOTA_EXCEEDED`) until older answers expire.
    pub kept_answers: u64,
    /// Their bytes as stored (a refund's answer is about 1 KB, a calculation's 1 to 2 KB).
    pub kept_answer_bytes: u64,
}

impl Default for KeyLimits {
    /// 1,000,000 answers and 1 GiB of them per account and mode: a client with a key on
    /// every request of 11 a second, all day long.
    fn default() -> Self {
        KeyLimits {
            kept_answers: 1_000_000,
            kept_answer_bytes: 1 << 30,
        }
    }
}

impl KeyLimits {
    /// No bounds (answers still expire after 24 hours).
    pub const NONE: KeyLimits = KeyLimits {
        kept_answers: 0,
        kept_answer_bytes: 0,
    };
}

/// A key of a scope being answered.
type Entry = (Scope, String);

/// The service's idempotency keys: the limits, the keys being answered, and each scope's
/// kept answers as last counted.
#[derive(Debug, Default)]
pub(crate) struct Keys {
    pub(crate) limits: KeyLimits,
    in_flight: Arc<Mutex<HashSet<Entry>>>,
    counts: Mutex<HashMap<Scope, (KeptCount, Instant)>>,
}

/// A key in use by the request that holds it, until that request is answered.
#[derive(Debug)]
pub(crate) struct InFlight {
    set: Arc<Mutex<HashSet<Entry>>>,
    entry: Entry,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.entry);
    }
}

/// A request's key, checked and free: what its write keeps the answer under.
#[derive(Clone, Debug)]
pub(crate) struct Claim {
    key: String,
    request: String,
}

/// What a POST's key decides before the request is routed.
pub(crate) enum Before {
    /// Answer the request, keeping the answer under the claim when there is one, held by
    /// the [`InFlight`] until it is answered.
    Route(Option<(Claim, InFlight)>),
    /// The answer kept under the key: the request was answered before.
    Replay(Response),
}

/// `409 IDEMPOTENCY_KEY_IN_USE` for `key`.
pub(crate) fn in_use(key: &str) -> ApiError {
    let mut e = ApiError::field(
        ErrorKind::IdempotencyKeyInUse,
        IDEMPOTENCY_KEY_HEADER,
        format!(
            "a request with Idempotency-Key {key:?} is being answered at this moment; nothing was done for this one. Send it again in a moment to get that request's answer"
        ),
        "a key not in use by a request being answered",
        key,
    );
    e.retry_after = Some(1);
    e
}

/// The key of a POST, checked: 1 to [`MAX_KEY_CHARS`] visible ASCII characters, sent once
/// (surrounding spaces dropped, as HTTP drops them). `None` for another method, or none
/// sent.
fn key_of(req: &Request) -> Result<Option<String>, ApiError> {
    if req.method != "POST" {
        return Ok(None);
    }
    let n = req.header_count(IDEMPOTENCY_KEY_HEADER);
    let Some(raw) = req.header(IDEMPOTENCY_KEY_HEADER) else {
        return Ok(None);
    };
    let bad = |why: String, received: String| {
        ApiError::field(
            ErrorKind::InvalidHeader,
            IDEMPOTENCY_KEY_HEADER,
            format!("Idempotency-Key {why}; send one key of 1 to {MAX_KEY_CHARS} visible ASCII characters (letters, digits and punctuation, no spaces), such as a UUID"),
            format!("1 to {MAX_KEY_CHARS} visible ASCII characters"),
            received,
        )
    };
    if n > 1 {
        return Err(bad(format!("was sent {n} times"), format!("{n} headers")));
    }
    let key = raw.trim_matches(|c| c == ' ' || c == '\t');
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_KEY_CHARS {
        return Err(bad(
            format!("has {chars} characters"),
            format!("{chars} characters"),
        ));
    }
    if let Some(c) = key.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(bad(format!("holds {c:?}"), format!("{c:?}")));
    }
    Ok(Some(key.to_string()))
}

/// The digest of what a request asks: its method, path, query, the headers that change
/// its answer (`X-API-Version`, `Levy-Rounding`) and its body, each behind its length, in
/// hexadecimal (BLAKE3).
fn digest(req: &Request, version: ApiVersion) -> String {
    let mut h = blake3::Hasher::new();
    let rounding = req.header(crate::ROUNDING_HEADER).unwrap_or("");
    for part in [
        req.method.as_bytes(),
        req.path.as_bytes(),
        req.query.as_bytes(),
        version.as_str().as_bytes(),
        rounding.as_bytes(),
        &req.body,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().to_hex().to_string()
}

/// What a POST's key decides: nothing (no key); the kept answer (the same request, answered
/// before); `409` (the key of another request, or of one being answered); `429` (the
/// scope keeps as many answers as it may); else the request is answered, holding the key.
pub(crate) fn before(
    service: &Service,
    req: &Request,
    version: ApiVersion,
    scope: &Scope,
) -> Result<Before, ApiError> {
    let Some(key) = key_of(req)? else {
        return Ok(Before::Route(None));
    };
    let held = service.kept.enter(scope, &key)?;
    let request = digest(req, version);
    let now = crate::clock::now();
    if let Some(kept) = service.store.kept(scope, &key, now)? {
        if kept.request != request {
            return Err(reused(&key, &kept));
        }
        return Ok(Before::Replay(replay(kept)));
    }
    service.kept.check_quota(service, scope, now)?;
    Ok(Before::Route(Some((Claim { key, request }, held))))
}

/// `409 IDEMPOTENCY_KEY_REUSED`: `key` answered another request.
fn reused(key: &str, kept: &KeptAnswer) -> ApiError {
    ApiError::field(
        ErrorKind::IdempotencyKeyReused,
        IDEMPOTENCY_KEY_HEADER,
        format!(
            "Idempotency-Key {key:?} was used at {} by another request (another method, path, API version or body); nothing was done. Use a new key for a new request",
            crate::clock::iso8601(kept.created_at)
        ),
        "a key not used by another request in the last 24 hours",
        key,
    )
}

/// The kept answer, as it was first sent, saying it is given again.
fn replay(kept: KeptAnswer) -> Response {
    let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
    headers.extend(kept.headers);
    headers.push((REPLAYED_HEADER.to_string(), "true".to_string()));
    Response {
        status: kept.status,
        headers,
        body: kept.body.into_bytes(),
    }
}

impl Keys {
    /// Holds `key` of `scope` for a request, or `409 IDEMPOTENCY_KEY_IN_USE` when another
    /// holds it.
    fn enter(&self, scope: &Scope, key: &str) -> Result<InFlight, ApiError> {
        let entry = (scope.clone(), key.to_string());
        let mut set = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if !set.insert(entry.clone()) {
            return Err(in_use(key));
        }
        Ok(InFlight {
            set: Arc::clone(&self.in_flight),
            entry,
        })
    }

    /// `429 IDEMPOTENCY_QUOTA_EXCEEDED` when `scope` keeps as many answers (or bytes of
    /// them) as it may: counted from the ledger at most every [`COUNT_TTL`], and counted
    /// up as answers are kept meanwhile.
    fn check_quota(&self, service: &Service, scope: &Scope, now: i64) -> Result<(), ApiError> {
        let limits = self.limits;
        if limits.kept_answers == 0 && limits.kept_answer_bytes == 0 {
            return Ok(());
        }
        let cached = self
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(scope)
            .filter(|(_, at)| at.elapsed() < COUNT_TTL)
            .map(|(n, _)| *n);
        let n = match cached {
            Some(n) => n,
            None => {
                let n = service.store.kept_count(scope, now)?;
                let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
                counts.insert(scope.clone(), (n, Instant::now()));
                n
            }
        };
        let over = |n: u64, most: u64| most > 0 && n >= most;
        if over(n.count, limits.kept_answers) || over(n.bytes, limits.kept_answer_bytes) {
            let mut e = ApiError::of(
                ErrorKind::IdempotencyQuotaExceeded,
                format!(
                    "this account and mode keep {} answers under idempotency keys ({} bytes), the most they may (at most {} answers and {} bytes); a request with a new Idempotency-Key is refused until older answers expire (24 hours after they were made). Requests without the header are answered as usual",
                    n.count, n.bytes, limits.kept_answers, limits.kept_answer_bytes
                ),
            );
            e.retry_after = Some(60);
            return Err(e);
        }
        Ok(())
    }

    /// Counts an answer just kept for `scope` (when its count is known).
    fn counted(&self, scope: &Scope, kept: &KeptAnswer) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, _)) = counts.get_mut(scope) {
            n.count += 1;
            n.bytes += kept.body.len() as u64;
        }
    }
}

/// The answer a handler made, for keeping: its body as text, the headers beside it.
fn answered(reply: Reply) -> Result<Answered, String> {
    let body = match reply.body {
        Body::Tree(tree) => serde_json::to_string(&tree).map_err(|e| e.to_string())?,
        Body::Json(bytes) => String::from_utf8(bytes).map_err(|e| e.to_string())?,
        Body::Csv(_) => return Err("a CSV answer is not kept under a key".to_string()),
    };
    Ok(Answered {
        status: 200,
        headers: reply.headers,
        body,
    })
}

/// The reply of an answer kept under a key: its body, with the headers kept beside it.
fn kept_reply(kept: KeptAnswer) -> Reply {
    Reply {
        kept: true,
        ..Reply::from(Body::Json(kept.body.into_bytes())).with_headers(kept.headers)
    }
}

/// Makes a handler's `write` and answers with what `render` makes of it. Under an
/// idempotency key, the answer is rendered inside the write and kept with it, in one
/// commit, and the kept text is the answer. `render` answers `None` for something the
/// write could not have made.
pub(crate) fn make(
    ctx: &Ctx<'_>,
    write: Write,
    render: impl FnOnce(&Made) -> Option<Value> + Send + 'static,
) -> Result<Reply, StoreError> {
    make_with(ctx, write, Vec::new(), render)
}

/// As [`make`], the answer with `headers` beside its body (kept with it under a key).
pub(crate) fn make_with(
    ctx: &Ctx<'_>,
    write: Write,
    headers: Headers,
    render: impl FnOnce(&Made) -> Option<Value> + Send + 'static,
) -> Result<Reply, StoreError> {
    let unexpected = || "the ledger's write made another record than its answer names";
    let store = &ctx.service.store;
    let Some(claim) = ctx.key else {
        let (made, _) = store.make(ctx.scope, write, None)?;
        return render(&made)
            .map(|tree| Reply::tree(tree).with_headers(headers))
            .ok_or_else(|| StoreError::Internal(unexpected().into()));
    };
    let keep = Keep {
        key: claim.key.clone(),
        request: claim.request.clone(),
        at: crate::clock::now(),
        render: Box::new(move |made| {
            let tree = render(made).ok_or_else(|| unexpected().to_string())?;
            answered(Reply::tree(tree).with_headers(headers))
        }),
    };
    // Should the write fail, nothing was kept: the handler's answer, should it answer
    // otherwise (a sale recorded before), is kept by the router.
    let (_, kept) = store.make(ctx.scope, write, Some(keep))?;
    let kept = kept.ok_or_else(|| StoreError::Internal("no answer was kept".into()))?;
    ctx.service.kept.counted(ctx.scope, &kept);
    Ok(kept_reply(kept))
}

/// Makes a handler's `write` of a record it made itself, answered with `view`, the
/// record in the request's version ([`make`]).
pub(crate) fn store(ctx: &Ctx<'_>, write: Write, view: Value) -> Result<Reply, StoreError> {
    make(ctx, write, move |_| Some(view))
}

/// As [`store`], the answer with `headers` beside its body.
pub(crate) fn store_with(
    ctx: &Ctx<'_>,
    write: Write,
    view: Value,
    headers: Headers,
) -> Result<Reply, StoreError> {
    make_with(ctx, write, headers, move |_| Some(view))
}

/// Stores a calculation (or platform calculation) without waiting, answered with `reply`
/// (its body and headers): under an idempotency key, the answer is kept in the same
/// commit. The commit is the handler's to wait for ([`Reply::after`]).
pub(crate) fn submit(
    ctx: &Ctx<'_>,
    quote: Quote<'_>,
    reply: Reply,
) -> Result<(crate::store::Commit, Reply), ApiError> {
    let store = &ctx.service.store;
    let Some(claim) = ctx.key else {
        let commit = match quote {
            Quote::Calculation(c) => store.submit_calculation(ctx.scope, c)?,
            Quote::Platform(p) => store.submit_platform_calculation(ctx.scope, p)?,
        };
        return Ok((commit, reply));
    };
    let kept = Keep {
        key: claim.key.clone(),
        request: claim.request.clone(),
        at: crate::clock::now(),
        render: Box::new(move |_| answered(reply)),
    }
    .answer(&Made::Stored)?;
    let commit = store.submit_kept(ctx.scope, quote, &kept)?;
    ctx.service.kept.counted(ctx.scope, &kept);
    Ok((commit, kept_reply(kept)))
}

/// Keeps `response`, a success the handler made with writes of their own (a sync batch),
/// under the claim its handler left, in a write of its own. Should that fail, the answer
/// stands: what it reports was done.
pub(crate) fn keep_after(service: &Service, scope: &Scope, claim: Claim, response: &Response) {
    if response.status != 200 {
        return;
    }
    let Ok(body) = String::from_utf8(response.body.clone()) else {
        return;
    };
    let headers: Vec<(String, String)> = response
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("Content-Type"))
        .cloned()
        .collect();
    let answer = Answered {
        status: 200,
        headers,
        body,
    };
    let keep = Keep {
        key: claim.key,
        request: claim.request,
        at: crate::clock::now(),
        render: Box::new(move |_| Ok(answer)),
    };
    match service.store.make(scope, Write::Answer, Some(keep)) {
        Ok((_, Some(kept))) => service.kept.counted(scope, &kept),
        Ok((_, None)) => {}
        Err(e) => tracing::warn!("the answer of a request could not be kept under its key: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(headers: &[(&str, &str)], body: &str) -> Request {
        Request {
            method: "POST".into(),
            path: "/tax/refunds".into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
            ..Request::default()
        }
    }

    #[test]
    fn keys_are_visible_ascii_of_1_to_255_characters_sent_once() {
        let key = |v: &str| key_of(&post(&[("Idempotency-Key", v)], "{}"));
        assert_eq!(key("a").unwrap().as_deref(), Some("a"));
        let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(key(uuid).unwrap().as_deref(), Some(uuid));
        assert_eq!(key(&"k".repeat(255)).unwrap().map(|k| k.len()), Some(255));
        assert_eq!(key(" spaced ").unwrap().as_deref(), Some("spaced"));
        for bad in ["", "   ", "a b", "é", "tab\tin", "nul\u{0}"] {
            let e = key(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidHeader, "{bad:?}");
            assert_eq!(e.field.as_deref(), Some("Idempotency-Key"));
        }
        let long = key(&"k".repeat(256)).unwrap_err();
        assert!(
            long.message.contains("has 256 characters"),
            "{}",
            long.message
        );
        let twice = key_of(&post(
            &[("Idempotency-Key", "a"), ("idempotency-key", "a")],
            "",
        ));
        assert!(twice.unwrap_err().message.contains("was sent 2 times"));
        // Not a POST, or no key: nothing to read.
        let mut get = post(&[("Idempotency-Key", "a b")], "");
        get.method = "GET".into();
        assert_eq!(key_of(&get).unwrap(), None);
        assert_eq!(key_of(&post(&[], "{}")).unwrap(), None);
    }

    #[test]
    fn the_digest_tells_requests_apart_by_every_part() {
        let base = post(&[], r#"{"a":1}"#);
        let v = ApiVersion::V2026_03_01;
        let d = digest(&base, v);
        assert_eq!(d, digest(&base.clone(), v));
        assert_eq!(d.len(), 64);
        let mut other = vec![digest(&base, ApiVersion::V2024_09_01)];
        let mut b = base.clone();
        b.body = br#"{"a":2}"#.to_vec();
        other.push(digest(&b, v));
        let mut p = base.clone();
        p.path = "/tax/refund_reversals".into();
        other.push(digest(&p, v));
        let mut q = base.clone();
        q.query = "x=1".into();
        other.push(digest(&q, v));
        other.push(digest(
            &post(&[("Levy-Rounding", "invoice")], r#"{"a":1}"#),
            v,
        ));
        // A part's length is hashed with it: moving a byte from one part to the next is
        // another request.
        let mut shifted = base.clone();
        shifted.path = "/tax/refunds{".into();
        shifted.body = br#""a":1}"#.to_vec();
        other.push(digest(&shifted, v));
        for o in &other {
            assert_ne!(o, &d);
        }
    }

    #[test]
    fn a_key_is_held_by_one_request_at_a_time() {
        let keys = Keys::default();
        let scope = Scope {
            account: "shop".into(),
            live: true,
        };
        let held = keys.enter(&scope, "k1").unwrap();
        let e = keys.enter(&scope, "k1").unwrap_err();
        assert_eq!(
            (e.kind, e.retry_after),
            (ErrorKind::IdempotencyKeyInUse, Some(1))
        );
        // Another key, or the same key of another mode, is free.
        drop(keys.enter(&scope, "k2").unwrap());
        let test = Scope {
            live: false,
            ..scope.clone()
        };
        drop(keys.enter(&test, "k1").unwrap());
        drop(held);
        assert!(keys.enter(&scope, "k1").is_ok());
    }
}
