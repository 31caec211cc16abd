//! Exemption certificates and certificate requests (from API version 2026-03-01): read,
//! list, cancel requests, pre-signed document URLs, and the import that brings them into
//! the ledger. Live keys only; scoped to the key's account.

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::json::num;
use crate::keys::Scope;
use crate::service::Service;
use crate::store::{CertificateRecord, CertificateRequestRecord, LinkedBuyerRecord, ReviewStatus};
use crate::Response;

/// A certificate lapsing within this many seconds (30 days) reads as `expiring`.
pub const EXPIRING_WINDOW_SECONDS: i64 = 30 * 86_400;
/// How long a minted download URL works: one hour.
pub const DOWNLOAD_URL_SECONDS: i64 = 3600;
/// Certificates or requests per list page, by default and at most.
pub(crate) const PAGE: usize = 50;
const MAX_PAGE: usize = 100;
/// The ledger secret that signs download URLs.
const URL_SECRET: &str = "certificate_download_url";

/// The status a certificate shows at `now`: the review outcome, with an approved one
/// reading `expired` from its `expires_at` on and `expiring` in the 30 days before.
pub(crate) fn status(c: &CertificateRecord, now: i64) -> &str {
    match (c.review_status, c.expires_at) {
        (ReviewStatus::Active, Some(e)) if now >= e => "expired",
        (ReviewStatus::Active, Some(e)) if now >= e - EXPIRING_WINDOW_SECONDS => "expiring",
        (s, _) => s.as_str(),
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, ready to be finalized or verified.
fn mac(key: &[u8], message: &[u8]) -> HmacSha256 {
    use hmac::Mac;
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC accepts any key length");
    m.update(message);
    m
}

/// HMAC-SHA256 (RFC 2104).
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use hmac::Mac;
    mac(key, message).finalize().into_bytes().into()
}

fn document_path(id: &str) -> String {
    format!("/tax/certificates/{id}/document")
}

fn signed_text(id: &str, expires: i64, nonce: &str) -> String {
    format!("GET\n{}\n{expires}\n{nonce}", document_path(id))
}

fn signature(key: &[u8; 32], id: &str, expires: i64, nonce: &str) -> [u8; 32] {
    hmac_sha256(key, signed_text(id, expires, nonce).as_bytes())
}

/// A pre-signed, path-absolute URL for a certificate's document, working until `expires`.
pub(crate) fn sign_url(service: &Service, id: &str, expires: i64) -> Result<String, ApiError> {
    let key = url_key(service)?;
    // A fresh nonce makes every minted URL distinct, even two in the same second.
    let nonce = crate::random::hex128();
    Ok(format!(
        "{}?expires={expires}&nonce={nonce}&signature={}",
        document_path(id),
        hex::encode(signature(&key, id, expires, &nonce))
    ))
}

pub(crate) fn url_key(service: &Service) -> Result<[u8; 32], ApiError> {
    if let Some(k) = service.url_key.get() {
        return Ok(*k);
    }
    let k = service.store.secret(URL_SECRET)?;
    Ok(*service.url_key.get_or_init(|| k))
}

fn forbidden(kind: ErrorKind, message: &str) -> ApiError {
    ApiError::of(kind, message)
}

/// `GET /tax/certificates/{id}/document?expires=…&signature=…`: the document bytes with
/// their stored content type, when the signature is right and the URL has not expired.
pub(crate) fn document(
    service: &Service,
    id: &str,
    query: &[(String, String)],
) -> Result<Response, ApiError> {
    let (mut expires, mut sig, mut nonce) = (None, None, None);
    for (k, v) in query {
        match k.as_str() {
            "expires" if expires.is_none() => expires = v.parse::<i64>().ok(),
            "nonce" if nonce.is_none() => nonce = Some(v.as_str()),
            "signature" if sig.is_none() => sig = hex::decode(v).ok(),
            _ => {
                return Err(forbidden(
                    ErrorKind::InvalidSignature,
                    "the download URL has been altered; fetch the certificate again for a new one",
                ))
            }
        }
    }
    let (Some(expires), Some(sig), Some(nonce)) = (expires, sig, nonce) else {
        return Err(forbidden(
            ErrorKind::InvalidSignature,
            "the download URL is not a valid pre-signed URL; fetch the certificate again for a new one",
        ));
    };
    // `verify_slice` compares in constant time.
    let valid = {
        use hmac::Mac;
        mac(
            &url_key(service)?,
            signed_text(id, expires, nonce).as_bytes(),
        )
        .verify_slice(&sig)
        .is_ok()
    };
    if !valid {
        return Err(forbidden(
            ErrorKind::InvalidSignature,
            "the download URL has been altered; fetch the certificate again for a new one",
        ));
    }
    if crate::clock::now() >= expires {
        return Err(forbidden(
            ErrorKind::DownloadUrlExpired,
            "the download URL has expired; fetch the certificate again for a new one",
        ));
    }
    let (content_type, bytes) = service.store.certificate_document(id)?.ok_or_else(|| {
        crate::read::not_found(
            ErrorKind::CertificateNotFound,
            "certificate document",
            "certificate_id",
            id,
        )
    })?;
    Ok(Response {
        status: 200,
        headers: vec![
            ("Content-Type".into(), content_type),
            ("Cache-Control".into(), "private, no-store".into()),
        ],
        body: bytes,
    })
}

fn live_only(ctx: &Ctx<'_>) -> Result<(), ApiError> {
    if ctx.testmode() {
        return Err(ApiError::of(
            ErrorKind::TestmodeNotSupported,
            "certificates and certificate requests exist in live mode only; use a live key",
        ));
    }
    Ok(())
}

fn buyer(b: &Option<LinkedBuyerRecord>) -> Value {
    b.as_ref().map_or(
        Value::Null,
        |b| json!({ "id": b.id, "legal_name": b.legal_name }),
    )
}

/// `customer`: the stored customer's reference id and name, the name falling back to the
/// linked buyer's legal name.
fn customer(
    ctx: &Ctx<'_>,
    id: &Option<String>,
    linked: &Option<LinkedBuyerRecord>,
) -> Result<Value, ApiError> {
    let Some(id) = id else {
        return Ok(Value::Null);
    };
    let live = Scope {
        account: ctx.scope.account.clone(),
        live: true,
    };
    let stored = ctx.service.store.customer(&live, id, false)?;
    let fallback = linked.as_ref().and_then(|b| b.legal_name.clone());
    Ok(json!({
        "id": id,
        "reference_customer_id": stored.as_ref().and_then(|c| c.reference_customer_id.clone()),
        "name": stored.and_then(|c| c.name).or(fallback),
    }))
}

fn render(ctx: &Ctx<'_>, c: &CertificateRecord, now: i64) -> Result<Value, ApiError> {
    let url = match &c.document {
        Some(_) => Value::String(sign_url(ctx.service, &c.id, now + DOWNLOAD_URL_SECONDS)?),
        None => Value::Null,
    };
    Ok(json!({
        "id": c.id,
        "object": "tax.exemption_certificate",
        "status": status(c, now),
        "type": c.kind,
        "customer": customer(ctx, &c.customer_id, &c.linked_buyer)?,
        "linked_buyer": buyer(&c.linked_buyer),
        "jurisdictions": c.jurisdictions,
        "valid_from": c.valid_from,
        "expires_at": c.expires_at,
        "download_url": url,
        "document": c.document.as_ref().map(|d| json!({"content_type": d.content_type, "size": num(d.size.into()), "sha256": d.sha256})),
        "reference": c.reference,
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "testmode": false,
    }))
}

fn render_request(ctx: &Ctx<'_>, r: &CertificateRequestRecord) -> Result<Value, ApiError> {
    Ok(json!({
        "id": r.id,
        "object": "tax.certificate_request",
        "status": r.status,
        "type": r.kind,
        "customer": customer(ctx, &r.customer_id, &r.linked_buyer)?,
        "linked_buyer": buyer(&r.linked_buyer),
        "jurisdictions": r.jurisdictions,
        "certificate_id": r.certificate_id,
        "reference": r.reference,
        "created_at": r.created_at,
        "updated_at": r.updated_at,
        "canceled_at": r.canceled_at,
        "testmode": false,
    }))
}

fn bad_param(k: &str, expected: &str, v: &str) -> ApiError {
    ApiError::field(
        ErrorKind::InvalidQueryParameter,
        k,
        format!("{k} must be {expected}"),
        expected,
        v,
    )
}

fn int_param(k: &str, v: &str) -> Result<i64, ApiError> {
    v.parse::<i64>()
        .map_err(|_| bad_param(k, "Unix seconds (an integer)", v))
}

fn limit_param(v: &str) -> Result<usize, ApiError> {
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        _ => Err(bad_param("limit", "an integer from 1 to 100", v)),
    }
}

/// The customer a `customer_id` or `reference_customer_id` filter names (live mode), or
/// `Some("")` (matches nothing) when none.
fn customer_filter(ctx: &Ctx<'_>, key: &str, v: &str) -> Result<String, ApiError> {
    if key == "customer_id" {
        return Ok(v.to_string());
    }
    let live = Scope {
        account: ctx.scope.account.clone(),
        live: true,
    };
    Ok(ctx
        .service
        .store
        .customer(&live, v, true)?
        .map(|c| c.id)
        .unwrap_or_default())
}

/// A page of items ordered by id after `cursor`.
fn page<T>(
    items: Vec<T>,
    id: impl Fn(&T) -> &str,
    cursor: Option<&str>,
    limit: usize,
) -> (Vec<T>, bool) {
    let mut out: Vec<T> = items
        .into_iter()
        .filter(|x| cursor.is_none_or(|c| id(x) > c))
        .take(limit + 1)
        .collect();
    let more = out.len() > limit;
    out.truncate(limit);
    (out, more)
}

/// `GET /tax/certificates`. Filters (all optional, combined with AND): `customer_id`,
/// `reference_customer_id`, `jurisdiction` (`US-TN`, or `TN` in any country), `status`,
/// `type`, `expires_after` / `expires_before` (Unix seconds, `expires_after <= expires_at
/// < expires_before`; a certificate that never lapses matches neither), `created_after`
/// / `created_before` (the same on `created_at`); `cursor` (the `last_certificate_id` of
/// the previous page) and `limit` (1 to 100, default 50).
pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    live_only(ctx)?;
    let params = ctx.query_params(&[
        "customer_id",
        "reference_customer_id",
        "jurisdiction",
        "status",
        "type",
        "expires_after",
        "expires_before",
        "created_after",
        "created_before",
        "cursor",
        "limit",
    ])?;
    let now = crate::clock::now();
    let mut customer_id: Option<String> = None;
    let mut jurisdiction: Option<(Option<String>, String)> = None;
    let (mut status_f, mut kind) = (None, None);
    let (mut exp_after, mut exp_before, mut cr_after, mut cr_before) = (None, None, None, None);
    let (mut cursor, mut limit) = (None, PAGE);
    for (k, v) in params {
        match k {
            "customer_id" | "reference_customer_id" => {
                customer_id = Some(customer_filter(ctx, k, v)?)
            }
            "jurisdiction" => {
                let v = v.trim().to_ascii_uppercase();
                jurisdiction = Some(match v.split_once('-') {
                    Some((c, r)) => (Some(c.to_string()), r.to_string()),
                    None => (None, v),
                });
            }
            "status" => {
                if ![
                    "processing",
                    "needs_info",
                    "active",
                    "expiring",
                    "expired",
                    "invalid",
                ]
                .contains(&v)
                {
                    return Err(bad_param(
                        k,
                        "processing | needs_info | active | expiring | expired | invalid",
                        v,
                    ));
                }
                status_f = Some(v);
            }
            "type" => kind = Some(v),
            "expires_after" => exp_after = Some(int_param(k, v)?),
            "expires_before" => exp_before = Some(int_param(k, v)?),
            "created_after" => cr_after = Some(int_param(k, v)?),
            "created_before" => cr_before = Some(int_param(k, v)?),
            "cursor" => cursor = Some(v),
            _ => limit = limit_param(v)?,
        }
    }
    let all = ctx
        .service
        .store
        .certificates(&ctx.scope.account, customer_id.as_deref())?;
    let matching: Vec<CertificateRecord> = all
        .into_iter()
        .filter(|c| {
            jurisdiction.as_ref().is_none_or(|(country, region)| {
                c.jurisdictions.iter().any(|j| {
                    j.region.eq_ignore_ascii_case(region)
                        && country
                            .as_ref()
                            .is_none_or(|cc| j.country.eq_ignore_ascii_case(cc))
                })
            }) && status_f.is_none_or(|s| status(c, now) == s)
                && kind.is_none_or(|t| c.kind == t)
                && exp_after.is_none_or(|a| c.expires_at.is_some_and(|e| e >= a))
                && exp_before.is_none_or(|b| c.expires_at.is_some_and(|e| e < b))
                && cr_after.is_none_or(|a| c.created_at >= a)
                && cr_before.is_none_or(|b| c.created_at < b)
        })
        .collect();
    let (items, has_more) = page(matching, |c| &c.id, cursor, limit);
    let mut out = Vec::with_capacity(items.len());
    for c in &items {
        out.push(render(ctx, c, now)?);
    }
    Ok(json!({
        "object": "list",
        "certificates": out,
        "has_more": has_more,
        "last_certificate_id": items.last().map(|c| c.id.clone()),
    }))
}

/// `GET /tax/certificates/{certificate_id}`: mints a new `download_url` on every read.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    live_only(ctx)?;
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let c = ctx
        .service
        .store
        .certificate(&ctx.scope.account, id)?
        .ok_or_else(|| {
            crate::read::not_found(
                ErrorKind::CertificateNotFound,
                "certificate",
                "certificate_id",
                id,
            )
        })?;
    render(ctx, &c, crate::clock::now())
}

/// `GET /tax/certificate-requests`: filters `customer_id`, `reference_customer_id`,
/// `status`; `cursor` (`last_request_id`) and `limit` (1 to 100, default 50).
pub(crate) fn list_requests(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    live_only(ctx)?;
    let params = ctx.query_params(&[
        "customer_id",
        "reference_customer_id",
        "status",
        "cursor",
        "limit",
    ])?;
    let (mut customer_id, mut status_f, mut cursor, mut limit) = (None, None, None, PAGE);
    for (k, v) in params {
        match k {
            "customer_id" | "reference_customer_id" => {
                customer_id = Some(customer_filter(ctx, k, v)?)
            }
            "status" => {
                if !["pending", "fulfilled", "canceled", "invalid"].contains(&v) {
                    return Err(bad_param(k, "pending | fulfilled | canceled | invalid", v));
                }
                status_f = Some(v);
            }
            "cursor" => cursor = Some(v),
            _ => limit = limit_param(v)?,
        }
    }
    let all = ctx.service.store.certificate_requests(&ctx.scope.account)?;
    let matching: Vec<_> = all
        .into_iter()
        .filter(|r| {
            customer_id
                .as_ref()
                .is_none_or(|c| r.customer_id.as_ref() == Some(c))
                && status_f.is_none_or(|s| r.status.as_str() == s)
        })
        .collect();
    let (items, has_more) = page(matching, |r| &r.id, cursor, limit);
    let mut out = Vec::with_capacity(items.len());
    for r in &items {
        out.push(render_request(ctx, r)?);
    }
    Ok(json!({
        "object": "list",
        "certificate_requests": out,
        "has_more": has_more,
        "last_request_id": items.last().map(|r| r.id.clone()),
    }))
}

fn request_not_found(id: &str) -> ApiError {
    crate::read::not_found(
        ErrorKind::CertificateRequestNotFound,
        "certificate request",
        "request_id",
        id,
    )
}

/// `GET /tax/certificate-requests/{request_id}`.
pub(crate) fn get_request(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    live_only(ctx)?;
    ctx.query_params(&[])?;
    let id = &ctx.params[0];
    let r = ctx
        .service
        .store
        .certificate_request(&ctx.scope.account, id)?
        .ok_or_else(|| request_not_found(id))?;
    render_request(ctx, &r)
}

/// `DELETE /tax/certificate-requests/{request_id}`: `pending` becomes `canceled`;
/// `canceled` answers the same body again; `fulfilled` and `invalid` are 409.
pub(crate) fn cancel_request(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    live_only(ctx)?;
    ctx.query_params(&[])?;
    let r = ctx.service.store.cancel_certificate_request(
        &ctx.scope.account,
        &ctx.params[0],
        crate::clock::now(),
    )?;
    render_request(ctx, &r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        // RFC 4231 section 4.3: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_case_6_long_key() {
        // RFC 4231 section 4.7: a 131-byte key of 0xaa is hashed first.
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
