//! The whole interface in-process: JSON requests answered exactly as `levy serve` would,
//! with a ledger file of the caller's own.

use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::sync::Arc;

use levy_api::{KeyEntry, KeySource, Request, Service, ServiceConfig, TableSource};
use levy_core::AnyTable;

use crate::engine::table_error;
use crate::{cstring, ffi_guard, non_null, opt_str_arg, str_arg, Error, LevyStatus};

/// The tax service interface, in-process, over one rate table and one ledger file.
///
/// Thread safety: any number of threads may send requests to one service at once; the
/// ledger serializes writes. Lifetime: must outlive every `levy_service_request` call on
/// it; responses do not refer to it and may outlive it. Ownership: created by
/// `levy_service_open`, freed once by the caller with `levy_service_free`.
pub struct LevyService {
    inner: Service,
}

/// An API key of an account, for a service configured with inline keys.
///
/// Plain data owned by the caller, read during `levy_service_open` only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyKey {
    /// The account the key belongs to (`"shop"`). NUL-terminated UTF-8.
    pub account: *const c_char,
    /// The plain key: `sk_test_...` works in test mode, any other key in live mode.
    pub key: *const c_char,
}

/// How to open a service.
///
/// Plain data owned by the caller, read during `levy_service_open` only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyServiceConfig {
    /// Path of a rate table file, or NULL for the table compiled into the library.
    pub table_path: *const c_char,
    /// Path of the ledger file (SQLite), created when missing; or, in a build with the
    /// `postgres` feature (the default), a PostgreSQL database URL (`postgres://…`).
    /// Required.
    pub ledger_path: *const c_char,
    /// Path of a keys file (TOML, as `levy keys` writes it), or NULL to use `keys`.
    pub keys_path: *const c_char,
    /// Inline keys, `key_count` of them, used when `keys_path` is NULL.
    pub keys: *const LevyKey,
    /// Number of inline keys.
    pub key_count: usize,
}

/// A header name and value, NUL-terminated UTF-8.
///
/// Passed in: the caller's, read during the call. Filled by `levy_response_header`:
/// points into the response, valid until `levy_response_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyHeader {
    /// Header name (`"Authorization"`), matched case-insensitively.
    pub name: *const c_char,
    /// Header value (`"Bearer sk_test_..."`).
    pub value: *const c_char,
}

/// The answer to one request: HTTP status, headers and JSON body.
///
/// Thread safety: immutable; may be read from any thread. Lifetime: independent of the
/// service. Ownership: freed once by the caller with `levy_response_free`; the body and
/// header strings read from it live until then.
pub struct LevyResponse {
    status: u16,
    headers: Vec<(CString, CString)>,
    /// The body followed by one NUL byte, so that it can be read as a C string too.
    body: Vec<u8>,
}

/// Opens a service: the rate table (`config->table_path`, or the embedded default), the
/// ledger file and the API keys. Writes the new service to `*out_service`.
///
/// Errors: `LEVY_NULL_ARGUMENT` (config, ledger_path, out_service, keys with a count),
/// `LEVY_INVALID_UTF8`, `LEVY_INVALID_ARGUMENT` (both or neither of keys_path and keys),
/// `LEVY_IO_ERROR` and `LEVY_INVALID_TABLE` (table file), `LEVY_SERVICE_ERROR` (ledger or
/// keys file). `*out_service` is written only on `LEVY_OK`; free it with
/// `levy_service_free`.
///
/// # Safety
///
/// `config` must be NULL or a valid `LevyServiceConfig` whose strings are NULL or
/// NUL-terminated and whose `keys` points to `key_count` keys; `out_service` must be NULL
/// or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_service_open(
    config: *const LevyServiceConfig,
    out_service: *mut *mut LevyService,
) -> LevyStatus {
    ffi_guard!({
        non_null!(config, "config");
        non_null!(out_service, "out_service");
        // SAFETY: non-null and valid per the contract.
        let config = unsafe { &*config };
        // SAFETY: each string is NULL or NUL-terminated per the contract.
        let ledger = unsafe { str_arg(config.ledger_path, "config.ledger_path") }?;
        // SAFETY: as above.
        let table_path = unsafe { opt_str_arg(config.table_path, "config.table_path") }?;
        // SAFETY: as above.
        let keys_path = unsafe { opt_str_arg(config.keys_path, "config.keys_path") }?;
        let keys = match (keys_path, config.key_count) {
            (Some(_), n) if n > 0 || !config.keys.is_null() => {
                return Err(Error::new(
                    LevyStatus::LEVY_INVALID_ARGUMENT,
                    "give either config.keys_path or config.keys, not both",
                ))
            }
            (Some(p), _) => KeySource::File(PathBuf::from(p)),
            (None, 0) => {
                return Err(Error::new(
                    LevyStatus::LEVY_INVALID_ARGUMENT,
                    "the service needs API keys: set config.keys_path or config.keys and config.key_count",
                ))
            }
            (None, n) => {
                non_null!(config.keys, "config.keys");
                // SAFETY: keys points to key_count initialized keys per the contract.
                let raw = unsafe { std::slice::from_raw_parts(config.keys, n) };
                let mut entries = Vec::with_capacity(n);
                for k in raw {
                    // SAFETY: NULL or NUL-terminated per the contract.
                    let account = unsafe { str_arg(k.account, "config.keys[].account") }?;
                    // SAFETY: as above.
                    let key = unsafe { str_arg(k.key, "config.keys[].key") }?;
                    entries.push(KeyEntry { account: account.to_string(), key: key.to_string() });
                }
                KeySource::Inline(entries)
            }
        };
        let table = match table_path {
            // The embedded table, opened over its static bytes (validated once per service).
            None => TableSource::Table(Arc::new(levy_data::open_default())),
            Some(p) => {
                let t = AnyTable::open_file(p).map_err(table_error)?;
                TableSource::Table(Arc::new(t))
            }
        };
        let inner = Service::open(ServiceConfig {
            table,
            ledger: ledger.to_string(),
            keys,
        })
        .map_err(|e| Error::new(LevyStatus::LEVY_SERVICE_ERROR, e.to_string()))?;
        let service = Box::new(LevyService { inner });
        // SAFETY: out_service is non-null and valid for writing, per the contract.
        unsafe { out_service.write(Box::into_raw(service)) };
        Ok(())
    })
}

/// Frees a service, closing its ledger. NULL is accepted and does nothing. No request may
/// be in progress on it, and it must not be used afterwards. Responses stay valid.
///
/// # Safety
///
/// `service` must be NULL or a pointer from `levy_service_open` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn levy_service_free(service: *mut LevyService) {
    ffi_guard!(() => {
        if !service.is_null() {
            // SAFETY: the pointer came from Box::into_raw in levy_service_open and is freed once.
            drop(unsafe { Box::from_raw(service) });
        }
    })
}

/// Sends one request to the service and writes its answer to `*out_response`: the
/// status and JSON body exactly as `levy serve` would answer over HTTP.
///
/// `method` is `"GET"`, `"POST"` or `"DELETE"`; `path` is the request target, with an
/// optional query (`"/tax/products?cursor=p_1"`); `headers` holds `header_count` headers
/// (`Authorization: Bearer <key>` is required by the interface; `X-API-Version` picks
/// the version); `body` holds `body_len` bytes of JSON (NULL when `body_len` is 0).
///
/// An answer with an HTTP error status (401 for an unknown key, 400 for malformed JSON,
/// 404, ...) is still `LEVY_OK`: read its status and error body. Errors of the call
/// itself: `LEVY_NULL_ARGUMENT`, `LEVY_INVALID_UTF8` (method, path, headers).
/// `*out_response` is written only on `LEVY_OK`; free it with `levy_response_free`.
///
/// Thread-safe: any number of threads may call this on one service at once.
///
/// # Safety
///
/// `service` must be NULL or a live service; `method` and `path` NULL or NUL-terminated;
/// `headers` NULL or pointing to `header_count` headers; `body` NULL or pointing to
/// `body_len` bytes; `out_response` NULL or valid for writing one pointer.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn levy_service_request(
    service: *const LevyService,
    method: *const c_char,
    path: *const c_char,
    headers: *const LevyHeader,
    header_count: usize,
    body: *const u8,
    body_len: usize,
    out_response: *mut *mut LevyResponse,
) -> LevyStatus {
    ffi_guard!({
        non_null!(service, "service");
        non_null!(out_response, "out_response");
        // SAFETY: non-null and live per the contract.
        let service = unsafe { &*service };
        // SAFETY: NULL or NUL-terminated per the contract.
        let method = unsafe { str_arg(method, "method") }?;
        // SAFETY: as above.
        let target = unsafe { str_arg(path, "path") }?;
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let raw_headers: &[LevyHeader] = if header_count == 0 {
            &[]
        } else {
            non_null!(headers, "headers");
            // SAFETY: headers points to header_count initialized headers per the contract.
            unsafe { std::slice::from_raw_parts(headers, header_count) }
        };
        let mut header_list = Vec::with_capacity(raw_headers.len());
        for h in raw_headers {
            // SAFETY: NULL or NUL-terminated per the contract.
            let name = unsafe { str_arg(h.name, "headers[].name") }?;
            // SAFETY: as above.
            let value = unsafe { str_arg(h.value, "headers[].value") }?;
            header_list.push((name.to_string(), value.to_string()));
        }
        let body = if body_len == 0 {
            Vec::new()
        } else {
            non_null!(body, "body");
            // SAFETY: body points to body_len readable bytes per the contract.
            unsafe { std::slice::from_raw_parts(body, body_len) }.to_vec()
        };
        let request = Request {
            method: method.to_ascii_uppercase(),
            path: path.to_string(),
            query: query.to_string(),
            headers: header_list,
            body,
            request_id: None,
        };
        let answer = service.inner.handle(&request);
        let mut body = answer.body;
        body.push(0);
        let response = Box::new(LevyResponse {
            status: answer.status,
            headers: answer
                .headers
                .iter()
                .map(|(k, v)| (cstring(k), cstring(v)))
                .collect(),
            body,
        });
        // SAFETY: out_response is non-null and valid for writing, per the contract.
        unsafe { out_response.write(Box::into_raw(response)) };
        Ok(())
    })
}

/// The HTTP status of a response (200, 400, 401, ...); 0 for NULL.
///
/// # Safety
///
/// `response` must be NULL or a live response.
#[no_mangle]
pub unsafe extern "C" fn levy_response_status(response: *const LevyResponse) -> u16 {
    ffi_guard!(0 => {
        // SAFETY: NULL or live per the contract.
        unsafe { response.as_ref() }.map_or(0, |r| r.status)
    })
}

/// Writes the response's JSON body to `*out_body` and its length in bytes (without the
/// terminating NUL that follows it) to `*out_len`. The body lives until
/// `levy_response_free`.
///
/// Errors: `LEVY_NULL_ARGUMENT`.
///
/// # Safety
///
/// `response` must be NULL or a live response; `out_body` and `out_len` NULL or valid
/// for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_response_body(
    response: *const LevyResponse,
    out_body: *mut *const c_char,
    out_len: *mut usize,
) -> LevyStatus {
    ffi_guard!({
        non_null!(response, "response");
        non_null!(out_body, "out_body");
        non_null!(out_len, "out_len");
        // SAFETY: non-null and live per the contract.
        let r = unsafe { &*response };
        // SAFETY: both out-pointers are non-null and valid for writing, per the contract.
        unsafe {
            out_body.write(r.body.as_ptr().cast());
            out_len.write(r.body.len() - 1);
        }
        Ok(())
    })
}

/// The number of headers of a response; 0 for NULL.
///
/// # Safety
///
/// `response` must be NULL or a live response.
#[no_mangle]
pub unsafe extern "C" fn levy_response_header_count(response: *const LevyResponse) -> usize {
    ffi_guard!(0 => {
        // SAFETY: NULL or live per the contract.
        unsafe { response.as_ref() }.map_or(0, |r| r.headers.len())
    })
}

/// Fills `*out` with header `index` of the response (`Content-Type`, ...). The strings
/// live until `levy_response_free`.
///
/// Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INDEX_OUT_OF_RANGE`.
///
/// # Safety
///
/// `response` must be NULL or a live response; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_response_header(
    response: *const LevyResponse,
    index: usize,
    out: *mut LevyHeader,
) -> LevyStatus {
    ffi_guard!({
        non_null!(response, "response");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let r = unsafe { &*response };
        let (name, value) = r.headers.get(index).ok_or_else(|| {
            Error::new(
                LevyStatus::LEVY_INDEX_OUT_OF_RANGE,
                format!(
                    "header index {index} is out of range (there are {})",
                    r.headers.len()
                ),
            )
        })?;
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe {
            out.write(LevyHeader {
                name: name.as_ptr(),
                value: value.as_ptr(),
            })
        };
        Ok(())
    })
}

/// Frees a response with its body and headers. NULL is accepted and does nothing.
///
/// # Safety
///
/// `response` must be NULL or a pointer from `levy_service_request` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn levy_response_free(response: *mut LevyResponse) {
    ffi_guard!(() => {
        if !response.is_null() {
            // SAFETY: the pointer came from Box::into_raw in levy_service_request and is freed once.
            drop(unsafe { Box::from_raw(response) });
        }
    })
}

/// A registration to add with `levy_registration_add`: where an account (or one of its
/// merchants) is registered to collect, from when and until when.
///
/// Plain data owned by the caller, read during the call only.
#[repr(C)]
pub struct LevyRegistrationSpec {
    /// ISO 3166-1 alpha-2 country (`"US"`), required.
    pub country: *const c_char,
    /// The state or province without the country (`"TX"`), required for the US and
    /// Canada; `""` elsewhere for the whole country.
    pub region: *const c_char,
    /// `"sales_tax"` or `"retail_delivery_fee"`; NULL for `"sales_tax"`.
    pub kind: *const c_char,
    /// The local (home-rule) jurisdictions it also covers, by the rate table's jurisdiction
    /// code: `local_count` strings (NULL when `local_count` is 0). None: every local
    /// jurisdiction of the region.
    pub local_jurisdictions: *const *const c_char,
    /// How many `local_jurisdictions`.
    pub local_count: usize,
    /// Unix seconds from which it is active; negative for now.
    pub active_from: i64,
    /// Unix seconds from which it is no longer active; negative for never.
    pub expires_at: i64,
    /// The merchant (`merch_…` or its `reference_merchant_id`) whose registration it is;
    /// NULL for the account's own.
    pub merchant_id: *const c_char,
}

/// A response holding `body` (JSON) with `status`.
fn json_response(status: u16, body: String) -> Box<LevyResponse> {
    let mut body = body.into_bytes();
    body.push(0);
    Box::new(LevyResponse {
        status,
        headers: vec![(cstring("Content-Type"), cstring("application/json"))],
        body,
    })
}

/// A registration call's answer as a response: 200 and `ok`'s JSON, or the error's status
/// and body in the flat error format (`{"code", "type", "message"}`).
fn answer_of(result: Result<String, levy_api::ApiError>) -> Box<LevyResponse> {
    match result {
        Ok(body) => json_response(200, body),
        Err(e) => {
            let r = levy_api::error_response(&e, levy_api::ApiVersion::V2026_03_01, None);
            json_response(r.status, String::from_utf8_lossy(&r.body).into_owned())
        }
    }
}

/// Adds a registration of `account` (a name of the service's keys) in live (`live` true)
/// or test mode, and writes the answer to `*out_response`: 200 and the registration
/// (`tax.registration`, as `POST /tax/registrations` answers), or a refusal with its
/// status and error body (400 `INVALID_REGION`, `INVALID_EXPIRY`, ...; 400
/// `INVALID_ACCOUNT` for an account without a key). From then on, `automatic_tax: auto`
/// collects for that seller only where one of its `sales_tax` registrations is active on
/// the sale's date.
///
/// Errors of the call itself: `LEVY_NULL_ARGUMENT` (service, account, spec, its country
/// or region, out_response; local_jurisdictions with a count), `LEVY_INVALID_UTF8`.
/// `*out_response` is written only on `LEVY_OK`; free it with `levy_response_free`.
///
/// Thread-safe.
///
/// # Safety
///
/// `service` must be NULL or a live service; `account` NULL or NUL-terminated; `spec`
/// NULL or a valid `LevyRegistrationSpec` whose strings are NULL or NUL-terminated and
/// whose `local_jurisdictions` points to `local_count` strings; `out_response` NULL or
/// valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_registration_add(
    service: *const LevyService,
    account: *const c_char,
    live: bool,
    spec: *const LevyRegistrationSpec,
    out_response: *mut *mut LevyResponse,
) -> LevyStatus {
    ffi_guard!({
        non_null!(service, "service");
        non_null!(spec, "spec");
        non_null!(out_response, "out_response");
        // SAFETY: non-null and live per the contract.
        let service = unsafe { &*service };
        // SAFETY: non-null and valid per the contract.
        let spec = unsafe { &*spec };
        // SAFETY: NULL or NUL-terminated per the contract.
        let account = unsafe { str_arg(account, "account") }?;
        // SAFETY: as above.
        let country = unsafe { str_arg(spec.country, "spec->country") }?;
        // SAFETY: as above.
        let region = unsafe { str_arg(spec.region, "spec->region") }?;
        // SAFETY: as above.
        let kind = unsafe { opt_str_arg(spec.kind, "spec->kind") }?;
        // SAFETY: as above.
        let merchant = unsafe { opt_str_arg(spec.merchant_id, "spec->merchant_id") }?;
        let raw: &[*const c_char] = if spec.local_count == 0 {
            &[]
        } else {
            non_null!(spec.local_jurisdictions, "spec->local_jurisdictions");
            // SAFETY: points to local_count pointers per the contract.
            unsafe { std::slice::from_raw_parts(spec.local_jurisdictions, spec.local_count) }
        };
        let mut locals = Vec::with_capacity(raw.len());
        for &code in raw {
            // SAFETY: NULL or NUL-terminated per the contract.
            locals.push(unsafe { str_arg(code, "spec->local_jurisdictions[]") }?.to_string());
        }
        let result = match kind.map(levy_api::RegistrationKind::parse) {
            Some(None) => Err(levy_api::ApiError::field(
                levy_api::ErrorKind::IncorrectType,
                "type",
                "spec->kind must be sales_tax or retail_delivery_fee",
                "sales_tax | retail_delivery_fee",
                kind.unwrap_or_default(),
            )),
            Some(Some(k)) => Ok(k),
            None => Ok(levy_api::RegistrationKind::SalesTax),
        }
        .and_then(|kind| {
            let new = levy_api::NewRegistration {
                merchant_id: merchant.map(str::to_string),
                country: country.to_string(),
                region: region.to_string(),
                local_jurisdictions: locals,
                kind,
                active_from: (spec.active_from >= 0).then_some(spec.active_from),
                expires_at: (spec.expires_at >= 0).then_some(spec.expires_at),
            };
            service.inner.add_registration(account, live, &new)
        })
        .map(|r| levy_api::registration_json(&r, !live, now()).to_string());
        // SAFETY: out_response is non-null and valid for writing, per the contract.
        unsafe { out_response.write(Box::into_raw(answer_of(result))) };
        Ok(())
    })
}

/// Lists every registration of `account` in a mode, expired ones included, oldest id
/// first, and writes the answer to `*out_response`: 200 and `{"object": "list",
/// "registrations": [...], "has_more": false, "last_registration_id"}`, or a refusal
/// (400 `INVALID_ACCOUNT`).
///
/// Errors of the call itself: `LEVY_NULL_ARGUMENT`, `LEVY_INVALID_UTF8`. `*out_response`
/// is written only on `LEVY_OK`; free it with `levy_response_free`. Thread-safe.
///
/// # Safety
///
/// `service` must be NULL or a live service; `account` NULL or NUL-terminated;
/// `out_response` NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_registrations_list(
    service: *const LevyService,
    account: *const c_char,
    live: bool,
    out_response: *mut *mut LevyResponse,
) -> LevyStatus {
    ffi_guard!({
        non_null!(service, "service");
        non_null!(out_response, "out_response");
        // SAFETY: non-null and live per the contract.
        let service = unsafe { &*service };
        // SAFETY: NULL or NUL-terminated per the contract.
        let account = unsafe { str_arg(account, "account") }?;
        let filter = levy_api::RegistrationFilter::default();
        let result = service
            .inner
            .registrations(account, live, &filter)
            .map(|all| levy_api::registration_list_json(&all, false, !live, now()).to_string());
        // SAFETY: out_response is non-null and valid for writing, per the contract.
        unsafe { out_response.write(Box::into_raw(answer_of(result))) };
        Ok(())
    })
}

/// Expires registration `id` of `account` in a mode at `at` (Unix seconds; negative for
/// now) and writes the answer to `*out_response`: 200 and the registration, or a refusal
/// (404 `REGISTRATION_NOT_FOUND`, 400 `INVALID_EXPIRY` for a time not after its
/// `active_from`, 409 `REGISTRATION_ALREADY_EXPIRED`). The registration still answers for
/// sales dated before `at`.
///
/// Errors of the call itself: `LEVY_NULL_ARGUMENT`, `LEVY_INVALID_UTF8`. `*out_response`
/// is written only on `LEVY_OK`; free it with `levy_response_free`. Thread-safe.
///
/// # Safety
///
/// `service` must be NULL or a live service; `account` and `id` NULL or NUL-terminated;
/// `out_response` NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_registration_expire(
    service: *const LevyService,
    account: *const c_char,
    live: bool,
    id: *const c_char,
    at: i64,
    out_response: *mut *mut LevyResponse,
) -> LevyStatus {
    ffi_guard!({
        non_null!(service, "service");
        non_null!(out_response, "out_response");
        // SAFETY: non-null and live per the contract.
        let service = unsafe { &*service };
        // SAFETY: NULL or NUL-terminated per the contract.
        let account = unsafe { str_arg(account, "account") }?;
        // SAFETY: as above.
        let id = unsafe { str_arg(id, "id") }?;
        let at = (at >= 0).then_some(at);
        let result = service
            .inner
            .expire_registration(account, live, id, at)
            .map(|r| levy_api::registration_json(&r, !live, now()).to_string());
        // SAFETY: out_response is non-null and valid for writing, per the contract.
        unsafe { out_response.write(Box::into_raw(answer_of(result))) };
        Ok(())
    })
}

/// The time now, Unix seconds, for a registration's `status`.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
