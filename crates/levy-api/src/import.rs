//! Bringing exemption certificates and certificate requests into the ledger.
//!
//! The interface only reads certificates; they enter through an import of a JSON file:
//!
//! ```json
//! {
//!   "certificates": [{
//!     "reference": "acme-tn-2026",
//!     "customer": {"reference_customer_id": "crm-42"},
//!     "linked_buyer": {"id": "mb_acme", "legal_name": "Acme Holdings LLC"},
//!     "type": "RESALE",
//!     "status": "active",
//!     "jurisdictions": [{"country": "US", "region": "TN"}],
//!     "valid_from": 1767225600,
//!     "expires_at": 1830297600,
//!     "document": {"content_type": "application/pdf", "path": "docs/acme-tn.pdf"}
//!   }],
//!   "certificate_requests": [{
//!     "reference": "req-7",
//!     "customer": {"id": "cus_…"},
//!     "status": "pending",
//!     "type": "RESALE",
//!     "jurisdictions": [{"country": "US", "region": "KY"}],
//!     "certificate": "acme-tn-2026"
//!   }]
//! }
//! ```
//!
//! - `customer` names a **live** customer of the account by `id` or by
//!   `reference_customer_id`; it is optional when `linked_buyer` is given.
//! - `status` of a certificate is its review outcome: `processing`, `needs_info`,
//!   `active` (approved) or `invalid`. `expiring` and `expired` are not imported; they
//!   follow from `expires_at` when the certificate is read.
//! - `valid_from` (default: the import time) and `expires_at` (absent or null: never
//!   lapses) are Unix seconds.
//! - `document` is optional: `content_type` plus either `base64` (the bytes, standard
//!   alphabet) or `path` (relative to the import file's folder). The bytes are stored in
//!   the ledger; at most 10 MiB each.
//! - A request's `status` is `pending`, `fulfilled`, `canceled` or `invalid`; its optional
//!   `certificate` is the `reference` of a certificate of the same file or the `cert_…` id
//!   of a certificate already imported for the account.
//! - `reference` is the importer's own id, kept and shown as `reference`.
//!
//! The import is all or nothing: any error names the field (`certificates[2].expires_at`)
//! and stores nothing.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{ApiError, ErrorKind};
use crate::json::{Node, Obj, MAX_STRING};
use crate::keys::Scope;
use crate::store::{
    CertificateBatch, CertificateRecord, CertificateRequestRecord, CoverageRecord, DocumentInfo,
    LinkedBuyerRecord, RequestStatus, ReviewStatus, Store,
};

/// The largest document accepted, in bytes (10 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 10 << 20;

/// One imported item: the importer's `reference` and the id it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedItem {
    /// The importer's id, when the item had one.
    pub reference: Option<String>,
    /// The new `cert_…` or `certreq_…` id.
    pub id: String,
}

/// What an import added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Certificates, in file order.
    pub certificates: Vec<ImportedItem>,
    /// Certificate requests, in file order.
    pub requests: Vec<ImportedItem>,
}

/// Decodes standard base64 (padding optional, whitespace ignored).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::engine::{general_purpose::GeneralPurpose, DecodePaddingMode};
    use base64::Engine;
    const STANDARD_ANY_PADDING: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let compact: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '\n' | '\r' | '\t'))
        .collect();
    STANDARD_ANY_PADDING.decode(compact).ok()
}

fn invalid(field: &str, message: String, expected: &str, received: impl Into<String>) -> ApiError {
    ApiError::field(ErrorKind::InvalidImport, field, message, expected, received)
}

/// A stored state (`T`, one of `allowed`) by its name.
fn one_of<T: Copy + std::fmt::Display>(
    o: &mut Obj<'_>,
    name: &str,
    allowed: &[T],
) -> Result<T, ApiError> {
    let v = o.req_str(name, 32)?;
    match allowed.iter().find(|a| a.to_string() == v) {
        Some(a) => Ok(*a),
        None => {
            let field = o.path(name);
            let names: Vec<String> = allowed.iter().map(T::to_string).collect();
            Err(invalid(
                &field,
                format!("{field} must be one of {}", names.join(", ")),
                &names.join(" | "),
                v,
            ))
        }
    }
}

fn coverage(o: &mut Obj<'_>) -> Result<Vec<CoverageRecord>, ApiError> {
    let items = o
        .opt_array("jurisdictions")?
        .ok_or_else(|| ApiError::missing(&o.path("jurisdictions"), "array"))?;
    if items.is_empty() {
        return Err(ApiError::missing(
            &format!("{}[0]", o.path("jurisdictions")),
            "at least one jurisdiction",
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut j = o.element("jurisdictions", i, item)?;
        let country = j.req_str("country", 2)?.trim().to_ascii_uppercase();
        let region = j.req_str("region", 8)?.trim().to_ascii_uppercase();
        if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_uppercase()) {
            let field = j.path("country");
            return Err(invalid(
                &field,
                format!("{field} must be an ISO 3166-1 alpha-2 code"),
                "US",
                country,
            ));
        }
        if region.is_empty() || !region.bytes().all(|b| b.is_ascii_alphanumeric()) {
            let field = j.path("region");
            return Err(invalid(
                &field,
                format!("{field} must be a subdivision code (TN)"),
                "TN",
                region,
            ));
        }
        j.finish()?;
        out.push(CoverageRecord { country, region });
    }
    Ok(out)
}

fn linked_buyer(o: &mut Obj<'_>) -> Result<Option<LinkedBuyerRecord>, ApiError> {
    let Some(mut b) = o.opt_obj("linked_buyer")? else {
        return Ok(None);
    };
    let id = b.req_str("id", MAX_STRING)?.to_string();
    let legal_name = b.opt_str("legal_name", MAX_STRING)?.map(str::to_string);
    b.finish()?;
    Ok(Some(LinkedBuyerRecord { id, legal_name }))
}

fn customer(o: &mut Obj<'_>, store: &dyn Store, scope: &Scope) -> Result<Option<String>, ApiError> {
    let Some(mut c) = o.opt_obj("customer")? else {
        return Ok(None);
    };
    let id = c.opt_str("id", MAX_STRING)?;
    let reference = c.opt_str("reference_customer_id", MAX_STRING)?;
    c.finish()?;
    let (key, by_ref, field) = match (id, reference) {
        (Some(id), None) => (id, false, o.path("customer.id")),
        (None, Some(r)) => (r, true, o.path("customer.reference_customer_id")),
        _ => {
            let field = o.path("customer");
            return Err(invalid(
                &field,
                format!("{field} must give exactly one of id and reference_customer_id"),
                "id | reference_customer_id",
                "object",
            ));
        }
    };
    match store.customer(scope, key, by_ref)? {
        Some(found) => Ok(Some(found.id)),
        None => Err(invalid(
            &field,
            format!("no live customer {key:?} in account {}", scope.account),
            "a live customer of the account",
            key,
        )),
    }
}

fn document(o: &mut Obj<'_>, base_dir: &Path) -> Result<Option<(DocumentInfo, Vec<u8>)>, ApiError> {
    let Some(mut d) = o.opt_obj("document")? else {
        return Ok(None);
    };
    let content_type = d.req_str("content_type", 127)?.to_string();
    let plausible = content_type
        .split_once('/')
        .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
        && content_type
            .bytes()
            .all(|b| (0x21..0x7f).contains(&b) || b == b' ');
    if !plausible {
        let field = d.path("content_type");
        return Err(invalid(
            &field,
            format!("{field} must be a MIME type (application/pdf)"),
            "type/subtype",
            content_type,
        ));
    }
    let b64 = d.opt_str("base64", usize::MAX)?;
    let path = d.opt_str("path", 4096)?;
    let bytes = match (b64, path) {
        (Some(text), None) => base64_decode(text).ok_or_else(|| {
            let field = d.path("base64");
            invalid(
                &field,
                format!("{field} is not valid base64"),
                "base64",
                "text",
            )
        })?,
        (None, Some(p)) => {
            let full = base_dir.join(p);
            std::fs::read(&full).map_err(|e| {
                let field = d.path("path");
                invalid(
                    &field,
                    format!("{field}: cannot read {}: {e}", full.display()),
                    "a readable file",
                    p,
                )
            })?
        }
        _ => {
            let field = d.path("base64");
            return Err(invalid(
                &field,
                format!(
                    "{} must give exactly one of base64 and path",
                    o.path("document")
                ),
                "base64 | path",
                "both or neither",
            ));
        }
    };
    if bytes.len() > MAX_DOCUMENT_BYTES {
        let field = o.path("document");
        return Err(invalid(
            &field,
            format!("{field} is larger than {MAX_DOCUMENT_BYTES} bytes"),
            "at most 10 MiB",
            format!("{} bytes", bytes.len()),
        ));
    }
    d.finish()?;
    let info = DocumentInfo {
        content_type,
        size: bytes.len() as u64,
        sha256: hex::encode(Sha256::digest(&bytes)),
    };
    Ok(Some((info, bytes)))
}

/// A time of the file: Unix seconds, checked as every field of time is.
fn seconds(o: &mut Obj<'_>, name: &str) -> Result<Option<i64>, ApiError> {
    let t = o.opt_int(name)?;
    crate::read::opt_unix_seconds(&o.path(name), t)
}

/// What the items of a file are read against: the account's ledger, the folder of the
/// documents, and the time of the import.
struct Reading<'a> {
    store: &'a dyn Store,
    scope: Scope,
    base_dir: &'a Path,
    now: i64,
}

/// An item's buyer: a customer of the account, a linked buyer, or both; one is required.
fn buyer(
    o: &mut Obj<'_>,
    r: &Reading<'_>,
) -> Result<(Option<String>, Option<LinkedBuyerRecord>), ApiError> {
    let customer_id = customer(o, r.store, &r.scope)?;
    let linked = linked_buyer(o)?;
    if customer_id.is_none() && linked.is_none() {
        return Err(ApiError::missing(
            &o.path("customer"),
            "customer or linked_buyer",
        ));
    }
    Ok((customer_id, linked))
}

/// A certificate's `valid_from` (default now) and `expires_at`, which must come after it.
fn validity(o: &mut Obj<'_>, now: i64) -> Result<(i64, Option<i64>), ApiError> {
    let valid_from = seconds(o, "valid_from")?.unwrap_or(now);
    let expires_at = seconds(o, "expires_at")?;
    if let Some(e) = expires_at.filter(|e| *e <= valid_from) {
        let field = o.path("expires_at");
        return Err(invalid(
            &field,
            format!("{field} must be after valid_from"),
            "a time after valid_from",
            e.to_string(),
        ));
    }
    Ok((valid_from, expires_at))
}

/// One certificate of the file, with its document's bytes.
fn certificate_item(
    mut o: Obj<'_>,
    r: &Reading<'_>,
) -> Result<(CertificateRecord, Option<Vec<u8>>), ApiError> {
    let reference = o.opt_str("reference", MAX_STRING)?.map(str::to_string);
    let (customer_id, linked_buyer) = buyer(&mut o, r)?;
    let kind = o.req_str("type", 64)?.to_string();
    let review_status = one_of(&mut o, "status", ReviewStatus::ALL)?;
    let jurisdictions = coverage(&mut o)?;
    let (valid_from, expires_at) = validity(&mut o, r.now)?;
    let doc = document(&mut o, r.base_dir)?;
    o.finish()?;
    let (document, bytes) = doc.map_or((None, None), |(i, b)| (Some(i), Some(b)));
    let record = CertificateRecord {
        id: crate::ids::new_id("cert_"),
        reference,
        customer_id,
        linked_buyer,
        kind,
        review_status,
        jurisdictions,
        valid_from,
        expires_at,
        document,
        created_at: r.now,
        updated_at: r.now,
    };
    Ok((record, bytes))
}

/// The id of the certificate a request names (`certificate`: a reference in the file, or
/// a certificate of the account), if it names one.
fn named_certificate(
    o: &mut Obj<'_>,
    r: &Reading<'_>,
    batch: &CertificateBatch,
) -> Result<Option<String>, ApiError> {
    let Some(name) = o.opt_str("certificate", MAX_STRING)? else {
        return Ok(None);
    };
    let in_file = batch
        .certificates
        .iter()
        .find(|(c, _)| c.reference.as_deref() == Some(name))
        .map(|(c, _)| c.id.clone());
    if in_file.is_some() {
        return Ok(in_file);
    }
    match r.store.certificate(&r.scope.account, name)? {
        Some(c) => Ok(Some(c.id)),
        None => {
            let field = o.path("certificate");
            Err(invalid(
                &field,
                format!("{field}: no certificate {name:?} in the file or the account"),
                "a certificate reference or id",
                name,
            ))
        }
    }
}

/// One certificate request of the file.
fn request_item(
    mut o: Obj<'_>,
    r: &Reading<'_>,
    batch: &CertificateBatch,
) -> Result<CertificateRequestRecord, ApiError> {
    let reference = o.opt_str("reference", MAX_STRING)?.map(str::to_string);
    let (customer_id, linked_buyer) = buyer(&mut o, r)?;
    let status = one_of(&mut o, "status", RequestStatus::ALL)?;
    let kind = o.opt_str("type", 64)?.map(str::to_string);
    let jurisdictions = coverage(&mut o)?;
    let certificate_id = named_certificate(&mut o, r, batch)?;
    o.finish()?;
    Ok(CertificateRequestRecord {
        id: crate::ids::new_id("certreq_"),
        reference,
        status,
        customer_id,
        linked_buyer,
        kind,
        jurisdictions,
        certificate_id,
        created_at: r.now,
        updated_at: r.now,
        canceled_at: (status == RequestStatus::Canceled).then_some(r.now),
    })
}

/// Imports certificates and certificate requests (the JSON format above) into `store` for
/// `account`. Document paths are relative to `base_dir`. All or nothing.
pub fn import_certificates(
    store: &dyn Store,
    account: &str,
    json: &[u8],
    base_dir: &Path,
) -> Result<ImportReport, ApiError> {
    if account.trim().is_empty() {
        return Err(ApiError::of(
            ErrorKind::InvalidAccount,
            "the account name must not be empty",
        ));
    }
    let reading = Reading {
        store,
        scope: Scope {
            account: account.into(),
            live: true,
        },
        base_dir,
        now: crate::clock::now(),
    };
    let map = crate::json::parse_body(json)?;
    let mut root = Obj::root(&map);
    let mut batch = CertificateBatch::default();
    let mut report = ImportReport::default();
    let certs: &[Node<'_>] = root.opt_array("certificates")?.unwrap_or(&[]);
    for (i, item) in certs.iter().enumerate() {
        let (record, bytes) = certificate_item(root.element("certificates", i, item)?, &reading)?;
        report.certificates.push(ImportedItem {
            reference: record.reference.clone(),
            id: record.id.clone(),
        });
        batch.certificates.push((record, bytes));
    }
    let requests: &[Node<'_>] = root.opt_array("certificate_requests")?.unwrap_or(&[]);
    for (i, item) in requests.iter().enumerate() {
        let o = root.element("certificate_requests", i, item)?;
        let record = request_item(o, &reading, &batch)?;
        report.requests.push(ImportedItem {
            reference: record.reference.clone(),
            id: record.id.clone(),
        });
        batch.requests.push(record);
    }
    root.finish()?;
    store.import_certificates(account, batch)?;
    Ok(report)
}

impl crate::Service {
    /// Imports certificates and certificate requests into this service's ledger (see
    /// [`import_certificates`]).
    pub fn import_certificates(
        &self,
        account: &str,
        json: &[u8],
        base_dir: &Path,
    ) -> Result<ImportReport, ApiError> {
        import_certificates(&*self.store, account, json, base_dir)
    }

    /// A pre-signed, path-absolute download URL for a certificate's document, valid until
    /// `expires` (Unix seconds). `GET /tax/certificates/{id}` mints one valid for an hour;
    /// this lets an embedder mint its own (to send by e-mail, say).
    pub fn certificate_download_url(
        &self,
        certificate_id: &str,
        expires: i64,
    ) -> Result<String, ApiError> {
        crate::resources::certificates::sign_url(self, certificate_id, expires)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes_rfc_4648_vectors() {
        // RFC 4648 section 10.
        for (text, plain) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(
                super::base64_decode(text).unwrap(),
                plain.as_bytes(),
                "{text}"
            );
        }
        assert_eq!(super::base64_decode("Zm9v\nYmFy").unwrap(), b"foobar");
        assert!(super::base64_decode("Zm9v!").is_none());
        assert!(super::base64_decode("Zg=a").is_none());
    }
}
