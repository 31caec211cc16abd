//! The route table and the request pipeline: version, key, route, handler, rendering.

use serde_json::Value;

use crate::dialects::Dialect;
use crate::error::{ApiError, ErrorKind};
use crate::handler::{route, Body, Ctx, Reply, Route};
use crate::idempotency::Before;
use crate::keys::Scope;
use crate::resources::{
    calculations, certificates, customers, merchants, nexus, ping, platform, products, refunds,
    registrations, reports, sync, transactions,
};
use crate::service::Service;
use crate::store::Commit;
use crate::{render, ApiVersion, Request, Response};

/// A handler that answers with a [`Value`], as a [`Handler`].
macro_rules! tree {
    ($handler:path) => {
        |ctx: &Ctx<'_>| $handler(ctx).map(Reply::tree)
    };
}

/// Every route of the interface, in every version (see [`Route`]).
const ROUTES: &[Route] = &[
    route("GET", "/tax/ping", tree!(ping::get)),
    route("POST", "/tax/customers", customers::create),
    route("GET", "/tax/customers/{}", tree!(customers::get)),
    route("DELETE", "/tax/customers/{}", tree!(customers::delete)),
    route("POST", "/tax/products", products::create),
    route("GET", "/tax/products", tree!(products::list)),
    route("GET", "/tax/products/{}", tree!(products::get)),
    route("DELETE", "/tax/products/{}", tree!(products::delete)),
    route("POST", "/tax/calculations", calculations::create).deferred(),
    route("POST", "/tax/transactions", transactions::create),
    route("GET", "/tax/transactions/{}", tree!(transactions::get)),
    route(
        "DELETE",
        "/tax/transactions/{}",
        tree!(transactions::delete),
    ),
    route("GET", "/tax/transactions/{}/refunds", tree!(refunds::list)),
    route("POST", "/tax/refunds", refunds::create),
    route("POST", "/tax/refund_reversals", refunds::reverse),
    // levy extension: a till's offline records (`levy sync`).
    route("POST", "/tax/sync", tree!(sync::create)),
    // levy extension: where the account is registered to collect.
    route("POST", "/tax/registrations", registrations::create),
    route("GET", "/tax/registrations", tree!(registrations::list)),
    route("GET", "/tax/registrations/{}", tree!(registrations::get)),
    route(
        "POST",
        "/tax/registrations/{}/expire",
        registrations::expire,
    ),
    // levy extension: what a period owes, per jurisdiction.
    route("GET", "/tax/reports/liability", reports::liability),
    // levy extension: economic nexus, per state.
    route("GET", "/tax/nexus", tree!(nexus::get)),
    route("POST", "/tax/merchants", merchants::create).since(ApiVersion::V2026_01_01),
    route("GET", "/tax/merchants", tree!(merchants::list)).since(ApiVersion::V2026_01_01),
    route("GET", "/tax/merchants/{}", tree!(merchants::get)).since(ApiVersion::V2026_01_01),
    route("POST", "/tax/merchants/{}", merchants::update).since(ApiVersion::V2026_01_01),
    route("DELETE", "/tax/merchants/{}", tree!(merchants::delete)).since(ApiVersion::V2026_01_01),
    route("POST", "/tax/platform/calculations", platform::calculate)
        .since(ApiVersion::V2026_01_01)
        .deferred(),
    route("POST", "/tax/platform/transactions", platform::transact).since(ApiVersion::V2026_01_01),
    route(
        "GET",
        "/tax/certificate-requests",
        tree!(certificates::list_requests),
    )
    .since(ApiVersion::V2026_03_01),
    route(
        "GET",
        "/tax/certificate-requests/{}",
        tree!(certificates::get_request),
    )
    .since(ApiVersion::V2026_03_01),
    route(
        "DELETE",
        "/tax/certificate-requests/{}",
        tree!(certificates::cancel_request),
    )
    .since(ApiVersion::V2026_03_01),
    route("GET", "/tax/certificates", tree!(certificates::list)).since(ApiVersion::V2026_03_01),
    route("GET", "/tax/certificates/{}", tree!(certificates::get)).since(ApiVersion::V2026_03_01),
];

/// The routes a path is answered by: the dialects' for a dialect's path, else the
/// interface's.
fn routes_of(dialect: Option<Dialect>) -> &'static [Route] {
    match dialect {
        Some(_) => crate::dialects::ROUTES,
        None => ROUTES,
    }
}

/// Whether answering `method` `path` may block the calling thread until a ledger write is
/// flushed, even through [`Service::answer`], whatever the body: every write but those of
/// the [`Route::deferred`] routes. Reads (`GET`) write nothing. A path that is none of the
/// interface's writes nothing either, but only the routes above are known not to block.
fn route_blocks(method: &str, path: &str) -> bool {
    method != "GET"
        && !routes_of(crate::dialects::of_path(path))
            .iter()
            .any(|r| r.deferred && r.method == method && match_path(r.pattern, path).is_some())
}

/// Whether answering `req` may block the calling thread until a ledger write is flushed,
/// even through [`Service::answer`]: as [`route_blocks`] says of its route, except where
/// the body chooses between a calculation and a recorded sale on one route (AvaTax's
/// `transactions/create`: a `SalesOrder` is a calculation whose commit is handed over, a
/// committed invoice or return a transaction or refund, whose write blocks). Only that
/// body's `type` is read, without checking the rest ([`crate::dialects::avatax_records::records`]).
pub(crate) fn blocks_on_commit(req: &Request) -> bool {
    if req.method == "POST" && req.path == crate::dialects::avatax::CREATE_PATH {
        return crate::dialects::avatax_records::records(&req.body);
    }
    route_blocks(&req.method, &req.path)
}

/// The certificate document path: answered without an API key, authorized by the
/// signature of its pre-signed URL.
pub(crate) const DOCUMENT_PATH: &str = "/tax/certificates/{}/document";

/// Percent-decodes `s` (with `+` as a space in a query), or `None` when a `%` is not
/// followed by two hex digits or the result is not UTF-8.
fn percent_decode(s: &str, plus_is_space: bool) -> Option<String> {
    // Strict: `%+1`, `%1` or a bare `%` is refused, not passed through or half-read.
    let b = s.as_bytes();
    let well_formed = b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || (b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    let spaced;
    let s = if plus_is_space && s.contains('+') {
        spaced = s.replace('+', " ");
        spaced.as_str()
    } else {
        s
    };
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

fn parse_query(raw: &str) -> Result<Vec<(String, String)>, ApiError> {
    let mut out = Vec::new();
    for part in raw.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match (percent_decode(k, true), percent_decode(v, true)) {
            (Some(k), Some(v)) => {
                crate::json::storable("query", &k)?;
                crate::json::storable(&k, &v)?;
                out.push((k, v))
            }
            _ => {
                return Err(ApiError::of(
                    ErrorKind::InvalidQuery,
                    "the query string is not valid percent-encoded UTF-8",
                ))
            }
        }
    }
    Ok(out)
}

/// Matches a path against a pattern, returning the parameters.
fn match_path(pattern: &str, path: &str) -> Option<Vec<String>> {
    // Most patterns part from the path in their literal head: compare that at once, before
    // splitting both into segments.
    let head = pattern.split_once("{}").map_or(pattern, |(head, _)| head);
    if !path.starts_with(head) {
        return None;
    }
    if head.len() == pattern.len() {
        return (path.len() == pattern.len()).then(Vec::new);
    }
    let mut p = pattern.split('/');
    let mut s = path.split('/');
    let mut params = Vec::new();
    loop {
        match (p.next(), s.next()) {
            (None, None) => return Some(params),
            (Some("{}"), Some(seg)) if !seg.is_empty() => params.push(percent_decode(seg, false)?),
            (Some(a), Some(b)) if a == b => {}
            _ => return None,
        }
    }
}

/// A JSON response.
pub(crate) fn json_response(status: u16, body: &Value) -> Response {
    json_bytes_response(
        status,
        serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec()),
    )
}

/// A JSON response of a document already written.
fn json_bytes_response(status: u16, body: Vec<u8>) -> Response {
    Response {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body,
    }
}

/// The response for an error, as the service answers it: the error's status, its body in
/// `version`'s error format, and the headers that go with it.
///
/// * Body: from 2026-01-01 the flat `{"code", "type", "message"}`; before,
///   `{"error": {"error_code", "error_message"[, "error_meta"]}, "request_id"}`, where
///   `request_id` is `request_id`, or a new `req_…` id when it is `None`.
/// * Headers: `Content-Type: application/json`; `WWW-Authenticate: Bearer` for a 401;
///   `Retry-After` when [`ApiError::retry_after`] is set; `Allow` for a 405 whose
///   [`ApiError::expected`] names the methods the path accepts.
///
/// The HTTP server renders the errors it answers itself (a body over the limit, a body
/// that is not JSON) with it too, so that they are written as the service's are.
pub fn error_response(e: &ApiError, version: ApiVersion, request_id: Option<&str>) -> Response {
    let mut r = json_response(e.status(), &render::error(e, version, request_id));
    if e.status() == 401 {
        r.headers.push(("WWW-Authenticate".into(), "Bearer".into()));
    }
    if let Some(seconds) = e.retry_after {
        r.headers.push(("Retry-After".into(), seconds.to_string()));
    }
    if e.status() == 405 {
        if let Some(allow) = &e.expected {
            r.headers.push(("Allow".into(), allow.clone()));
        }
    }
    r
}

/// The response for an error answered at `path`: in the format of the request shape the
/// path belongs to (TaxJar's under `/v2/`, AvaTax's under `/api/v2/`; the vendors'
/// SDKs read their own), else as [`error_response`] renders it. The HTTP server renders
/// the errors it answers itself (a body over the limit, a body that is not JSON) with it.
pub fn error_response_at(
    e: &ApiError,
    version: ApiVersion,
    path: &str,
    request_id: Option<&str>,
) -> Response {
    match crate::dialects::of_path(path) {
        Some(d) => crate::dialects::finish(d, crate::dialects::error_response(e, d), request_id),
        None => error_response(e, version, request_id),
    }
}

/// A write a response must wait for when the caller defers commits: its commit, the
/// request's version (for the error of a failed commit), and the request's idempotency
/// key, held until the commit is known.
#[derive(Debug)]
pub(crate) struct Pending {
    pub commit: Commit,
    pub version: ApiVersion,
    /// The request shape, when not the interface's: its errors are in its format.
    pub dialect: Option<Dialect>,
    pub key: Option<crate::idempotency::InFlight>,
}

/// The response for an error in the request's format: the dialect's when it has one, else
/// the interface's in `version`'s ([`error_response`]).
pub(crate) fn error_for(
    e: &ApiError,
    version: ApiVersion,
    dialect: Option<Dialect>,
    request_id: Option<&str>,
) -> Response {
    match dialect {
        Some(d) => crate::dialects::error_response(e, d),
        None => error_response(e, version, request_id),
    }
}

/// A response, and the write it must wait for when the caller defers commits.
pub(crate) type Dispatched = (Response, Option<Pending>);

/// The whole pipeline for one request.
pub(crate) fn dispatch(service: &Service, req: &Request, defer: bool) -> Dispatched {
    let mut pending = None;
    let response = dispatch_inner(service, req, defer, &mut pending);
    let response = match crate::dialects::of_path(&req.path) {
        Some(d) => crate::dialects::finish(d, response, req.request_id.as_deref()),
        None => response,
    };
    (response, pending)
}

fn dispatch_inner(
    service: &Service,
    req: &Request,
    defer: bool,
    pending: &mut Option<Pending>,
) -> Response {
    let id = req.request_id.as_deref();
    if let Some(params) = match_path(DOCUMENT_PATH, &req.path) {
        // Pre-signed: no key; errors in the flat format unless the header asks otherwise.
        let version = req
            .header("x-api-version")
            .and_then(|v| ApiVersion::parse(v.trim()))
            .unwrap_or(ApiVersion::V2026_03_01);
        if req.method != "GET" {
            let mut e = ApiError::of(
                ErrorKind::MethodNotAllowed,
                format!("{} accepts GET only", req.path),
            );
            e.expected = Some("GET".into());
            return error_response(&e, version, id);
        }
        return match crate::json::storable("path", &params[0])
            .and_then(|()| parse_query(&req.query))
            .and_then(|q| certificates::document(service, &params[0], &q))
        {
            Ok(r) => r,
            Err(e) => error_response(&e, version, id),
        };
    }
    let dialect = crate::dialects::of_path(&req.path);
    // A header that decides who is asking, or how to answer, must be unambiguous: two of
    // them are refused rather than one picked (a proxy may have added one).
    let version = if dialect.is_some() {
        // A dialect has no versions of the interface's: it reads and answers its own shape,
        // through the handlers of the latest version.
        *ApiVersion::ALL.last().unwrap_or(&ApiVersion::V2026_03_01)
    } else {
        if let Some(e) = duplicate_header(req, "X-API-Version") {
            return error_response(&e, ApiVersion::V2024_09_01, id);
        }
        match req.header("x-api-version").map(str::trim) {
            None => ApiVersion::V2024_09_01,
            Some(v) => match ApiVersion::parse(v) {
                Some(v) => v,
                None => {
                    let supported: Vec<&str> = ApiVersion::ALL.iter().map(|v| v.as_str()).collect();
                    let e = ApiError::field(
                        ErrorKind::InvalidApiVersion,
                        "X-API-Version",
                        format!(
                            "X-API-Version {v:?} is not a version of this interface; use one of {}",
                            supported.join(", ")
                        ),
                        supported.join(" | "),
                        v,
                    );
                    return error_response(&e, ApiVersion::V2024_09_01, id);
                }
            },
        }
    };
    let fail = |e: &ApiError| error_for(e, version, dialect, id);
    if let Some(e) = duplicate_header(req, "Authorization") {
        return fail(&e);
    }
    let scope = match authenticate(service, req, dialect) {
        Ok(s) => s,
        Err(e) => {
            if dialect == Some(Dialect::AvaTax) && crate::dialects::avatax::is_ping(req) {
                // AvaTax's ping answers an unauthenticated caller, saying so.
                return json_response(200, &crate::dialects::avatax::ping_body(None));
            }
            return fail(&e);
        }
    };
    if let Err(e) = service.rate.take(&scope, &service.limits) {
        return fail(&e);
    }
    let _entered = match crate::limits::enter(service, &scope) {
        Ok(entered) => entered,
        Err(e) => return fail(&e),
    };
    // A large request waits for its account's turn, held until it is answered.
    let _turn = service
        .is_large(req)
        .then(|| service.large.enter(&scope.account, &service.limits));
    answer(service, req, (version, dialect, &scope), defer, pending)
}

/// The answer of an authenticated request: its route found (a path or method no route
/// has is answered 404 or 405 before anything else of the request is read), then the answer
/// kept under its idempotency key before, or its handler's (and kept under its key when a
/// write of its own did not keep it).
fn answer(
    service: &Service,
    req: &Request,
    (version, dialect, scope): (ApiVersion, Option<Dialect>, &Scope),
    defer: bool,
    pending: &mut Option<Pending>,
) -> Response {
    let id = req.request_id.as_deref();
    let (route, params) = match route_of(req, version, dialect) {
        Ok(found) => found,
        Err(e) => return error_for(&e, version, dialect, id),
    };
    let (claim, held) = match crate::idempotency::before(service, req, version, scope) {
        Ok(Before::Replay(answer)) => return answer,
        Ok(Before::Route(keyed)) => keyed.unzip(),
        Err(e) => return error_for(&e, version, dialect, id),
    };
    let run = || {
        if req.body.len() > service.body_limit {
            let message = crate::body_too_large(service.body_limit);
            return Err(ApiError::of(ErrorKind::RequestTooLarge, message));
        }
        let ctx = Ctx {
            service,
            req,
            version,
            scope,
            params,
            query: parse_query(&req.query)?,
            defer,
            key: claim.as_ref(),
        };
        (route.handler)(&ctx)
    };
    match run() {
        Ok(reply) => {
            let Reply {
                body,
                headers,
                commit,
                kept,
            } = reply;
            let mut r = match body {
                Body::Tree(tree) => json_response(200, &tree),
                Body::Json(bytes) => json_bytes_response(200, bytes),
                Body::Csv(bytes) => Response {
                    status: 200,
                    headers: vec![("Content-Type".into(), "text/csv; charset=utf-8".into())],
                    body: bytes,
                },
            };
            r.headers.extend(headers);
            match claim {
                // A handler whose writes were its own (a sync batch), or that answered
                // without the write that would have kept it: its answer is kept now.
                Some(claim) if !kept => crate::idempotency::keep_after(service, scope, claim, &r),
                _ => {}
            }
            *pending = commit.map(|commit| Pending {
                commit,
                version,
                dialect,
                key: held,
            });
            r
        }
        Err(e) => error_for(&e, version, dialect, id),
    }
}

/// `INVALID_HEADER` when the request carries `name` more than once.
fn duplicate_header(req: &Request, name: &str) -> Option<ApiError> {
    let n = req.header_count(name);
    (n > 1).then(|| {
        ApiError::field(
            ErrorKind::InvalidHeader,
            name,
            format!("the {name} header was sent {n} times; send it once"),
            "one header",
            format!("{n} headers"),
        )
    })
}

fn authenticate(
    service: &Service,
    req: &Request,
    dialect: Option<Dialect>,
) -> Result<Scope, ApiError> {
    if let Some(d) = dialect {
        let key = crate::dialects::presented_key(req, d)?;
        return service
            .keys
            .load()
            .check(&key)
            .ok_or_else(|| ApiError::of(ErrorKind::Unauthorized, "the API key is not valid"));
    }
    let header = req.header("authorization").ok_or_else(|| {
        ApiError::of(
            ErrorKind::Unauthorized,
            "missing API key: send the header Authorization: Bearer <API key>",
        )
    })?;
    let key = header
        .trim()
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| key.trim())
        .ok_or_else(|| {
            ApiError::of(
                ErrorKind::Unauthorized,
                "the Authorization header must be: Bearer <API key>",
            )
        })?;
    service
        .keys
        .load()
        .check(key)
        .ok_or_else(|| ApiError::of(ErrorKind::Unauthorized, "the API key is not valid"))
}

/// The route that answers `req` in `version` (and the dialect its path is of), with the
/// path's parameters: 404 for a path no route has (or has only from a later version), 405
/// for a method the path does not take.
fn route_of(
    req: &Request,
    version: ApiVersion,
    dialect: Option<Dialect>,
) -> Result<(&'static Route, Vec<String>), ApiError> {
    let mut allowed = Vec::new();
    let mut later: Option<ApiVersion> = None;
    // Methods of this path that exist only in later versions.
    let mut later_methods = Vec::new();
    // A dialect's path is answered by the dialects' routes only, the interface's by its own.
    for r in routes_of(dialect) {
        let Route {
            method,
            pattern,
            since,
            ..
        } = *r;
        if let Some(params) = match_path(pattern, &req.path) {
            if since > version {
                later = Some(later.map_or(since, |l| l.min(since)));
                later_methods.push(method);
                continue;
            }
            if method == req.method {
                for p in &params {
                    crate::json::storable("path", p)?;
                }
                return Ok((r, params));
            }
            allowed.push(method);
        }
    }
    // A method the path has in no version is 405 whatever the version asked: the path
    // exists, the method never will.
    if allowed.is_empty()
        && !later_methods.is_empty()
        && !later_methods.contains(&req.method.as_str())
    {
        allowed = later_methods;
    }
    if allowed.is_empty() {
        Err(ApiError::of(
            ErrorKind::NotFound,
            match later {
                Some(since) => format!(
                    "no endpoint {} in API version {}; it exists from X-API-Version {}",
                    req.path,
                    version.as_str(),
                    since.as_str()
                ),
                None => format!("no endpoint {}", req.path),
            },
        ))
    } else {
        let mut e = ApiError::of(
            ErrorKind::MethodNotAllowed,
            format!(
                "{} does not accept {}; it accepts {}",
                req.path,
                req.method,
                allowed.join(", ")
            ),
        );
        e.expected = Some(allowed.join(", "));
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writes_other_than_calculations_block_on_a_commit() {
        // Every read and deferred write is answered without blocking, every other write
        // (and any unknown write) may block; the deferred writes are the calculations.
        let mut deferred = Vec::new();
        for r in ROUTES.iter().chain(crate::dialects::ROUTES) {
            let path = r.pattern.replace("{}", "x_1");
            assert_eq!(
                route_blocks(r.method, &path),
                r.method != "GET" && !r.deferred,
                "{} {}",
                r.method,
                r.pattern
            );
            if r.deferred {
                deferred.push(r.pattern);
            }
        }
        assert_eq!(
            deferred,
            [
                "/tax/calculations",
                "/tax/platform/calculations",
                "/v2/taxes",
                crate::dialects::avatax::CREATE_PATH
            ]
        );
        assert!(!route_blocks("GET", "/no/such/path"));
        assert!(route_blocks("POST", "/tax/calculations/extra"));
        assert!(route_blocks("DELETE", "/tax/calculations"));
    }

    #[test]
    fn avataxs_create_blocks_when_its_body_may_record() {
        let create = |body: &str| Request {
            method: "POST".into(),
            path: crate::dialects::avatax::CREATE_PATH.into(),
            query: String::new(),
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
            request_id: None,
        };
        // A SalesOrder (named, or by default) is a calculation: its commit is handed over.
        for order in [
            r#"{"type":"SalesOrder","lines":[{"amount":1}]}"#,
            r#"{"TYPE":"salesorder"}"#,
            r#"{"lines":[{"type":"SalesInvoice"}]}"#,
            "not json",
        ] {
            assert!(!blocks_on_commit(&create(order)), "{order}");
        }
        // Any other type may record (a committed invoice, a return): it blocks.
        for record in [
            r#"{"lines":[],"type":"SalesInvoice","commit":true}"#,
            r#"{"Type":"ReturnInvoice"}"#,
            r#"{"type":"Inventory"}"#,
        ] {
            assert!(blocks_on_commit(&create(record)), "{record}");
        }
        // The TaxJar shape's recording routes block; its calculation does not.
        let mut taxjar = create("{}");
        taxjar.path = "/v2/transactions/orders".into();
        assert!(blocks_on_commit(&taxjar));
        taxjar.path = "/v2/taxes".into();
        assert!(!blocks_on_commit(&taxjar));
    }

    #[test]
    fn paths_and_queries_decode() {
        assert_eq!(
            match_path("/tax/products/{}", "/tax/products/a%20b"),
            Some(vec!["a b".to_string()])
        );
        assert_eq!(match_path("/tax/products/{}", "/tax/products/"), None);
        assert_eq!(match_path("/tax/products", "/tax/products/x"), None);
        // A pattern without parameters matches its own path only.
        assert_eq!(match_path("/tax/products", "/tax/products"), Some(vec![]));
        assert_eq!(match_path("/tax/products", "/tax/product"), None);
        assert_eq!(match_path("/tax/products", "/tax/products/"), None);
        // Literal segments after a parameter are compared too.
        assert_eq!(
            match_path(
                "/tax/transactions/{}/reversal",
                "/tax/transactions/tx_1/reversal"
            ),
            Some(vec!["tx_1".to_string()])
        );
        assert_eq!(
            match_path(
                "/tax/transactions/{}/reversal",
                "/tax/transactions/tx_1/reversals"
            ),
            None
        );
        assert_eq!(
            match_path(
                "/tax/transactions/{}/reversal",
                "/tax/transaction/tx_1/reversal"
            ),
            None
        );
        assert_eq!(
            parse_query("cursor=a%2Bb&x=1+2").unwrap(),
            vec![("cursor".into(), "a+b".into()), ("x".into(), "1 2".into())]
        );
        assert!(parse_query("cursor=%zz").is_err());
    }

    #[test]
    fn malformed_percent_escapes_are_refused_not_half_read() {
        // `%+1` once decoded to byte 0x01 (the sign was taken as part of a hex number).
        for bad in ["%+1", "%1", "%", "a%2", "%-1", "%%41", "%C3%28"] {
            assert_eq!(percent_decode(bad, true), None, "{bad}");
        }
        // RFC 3986 escapes, upper and lower case; `%C3%A9` is é in UTF-8.
        assert_eq!(percent_decode("%41%62%2b%2F", false).unwrap(), "Ab+/");
        assert_eq!(percent_decode("caf%C3%A9", false).unwrap(), "café");
        // `+` is a space in a query only.
        assert_eq!(percent_decode("a+b", true).unwrap(), "a b");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
    }
}
