//! Merchants (sellers on a platform): create, list, get (by `merch_…` id or by
//! `reference_merchant_id`), partial update, delete. From API version 2026-01-01.

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::{Node, Obj, MAX_STRING};
use crate::store::{
    AddressRecord, Made, MerchantChange, MerchantFilter, MerchantRecord, MerchantStatus,
    MerchantUpdate, StoreError, TaxIdRecord, Write,
};

/// Merchants per list page.
pub(crate) const PAGE: usize = 50;
/// Most metadata keys on a merchant.
pub(crate) const MAX_METADATA_KEYS: usize = 50;
/// Longest metadata key and value, in characters.
pub(crate) const MAX_METADATA_CHARS: usize = 255;

/// A merchant in the interface's shape.
pub(crate) fn render(m: &MerchantRecord, testmode: bool) -> Value {
    let a = &m.default_address;
    json!({
        "id": m.id,
        "object": "tax.merchant",
        "reference_merchant_id": m.reference_merchant_id,
        "name": m.name,
        "email": m.email,
        "default_address": {
            "address_line_1": a.line1,
            "address_line_2": a.line2,
            "address_city": a.city,
            "address_province": a.region,
            "address_postal_code": a.postal_code,
            "address_country": a.country,
        },
        "tax_ids": m.tax_ids,
        "status": m.status,
        "testmode": testmode,
        "created_at": m.created_at,
        "updated_at": m.updated_at,
        "deleted_at": m.deleted_at,
        "metadata": m.metadata,
    })
}

/// Reads merchant metadata: at most 50 keys, each key at most 255 characters, each value a
/// string of at most 255 characters. The error names the key at fault.
fn metadata(o: &mut Obj<'_>) -> Result<Option<Map<String, Value>>, ApiError> {
    let path = o.path("metadata");
    match o.take("metadata") {
        None => Ok(None),
        Some(Node::Object(map)) => {
            if map.len() > MAX_METADATA_KEYS {
                return Err(ApiError::field(
                    ErrorKind::TooManyItems,
                    &path,
                    format!("{path} may hold at most {MAX_METADATA_KEYS} keys"),
                    format!("at most {MAX_METADATA_KEYS} keys"),
                    format!("{} keys", map.len()),
                ));
            }
            for (k, v) in map {
                crate::json::storable(&path, k)?;
                let field = format!("{path}.{k}");
                if let Node::String(s) = v {
                    crate::json::storable(&field, s)?;
                }
                let key_len = k.chars().count();
                if key_len > MAX_METADATA_CHARS {
                    return Err(ApiError::field(
                        ErrorKind::StringTooLong,
                        &field,
                        format!(
                            "metadata key {k:?} is longer than {MAX_METADATA_CHARS} characters"
                        ),
                        format!("a key of at most {MAX_METADATA_CHARS} characters"),
                        format!("a key of {key_len} characters"),
                    ));
                }
                match v {
                    Node::String(s) if s.chars().count() > MAX_METADATA_CHARS => {
                        return Err(ApiError::field(
                            ErrorKind::StringTooLong,
                            &field,
                            format!(
                                "metadata value {field} must be at most {MAX_METADATA_CHARS} characters"
                            ),
                            format!("a string of at most {MAX_METADATA_CHARS} characters"),
                            format!("a string of {} characters", s.chars().count()),
                        ));
                    }
                    Node::String(_) => {}
                    other => {
                        return Err(ApiError::incorrect_type(&field, "string", other));
                    }
                }
            }
            Ok(Some(crate::json::object_value(map)))
        }
        Some(v) => Err(ApiError::incorrect_type(&path, "object", v)),
    }
}

fn email(o: &mut Obj<'_>) -> Result<Option<String>, ApiError> {
    match o.opt_str("email", 254)? {
        None => Ok(None),
        Some(e) if crate::read::valid_email(e) => Ok(Some(e.to_string())),
        Some(e) => Err(ApiError::field(
            ErrorKind::InvalidEmail,
            &o.path("email"),
            format!("{}: {e:?} is not a valid e-mail address", o.path("email")),
            "an e-mail address",
            e,
        )),
    }
}

fn address(o: &mut Obj<'_>) -> Result<Option<AddressRecord>, ApiError> {
    let Some(a) = o.opt_obj("default_address")? else {
        return Ok(None);
    };
    let a = crate::read::read_address(a, false)?;
    Ok(Some(AddressRecord {
        line1: a.line1,
        line2: a.line2,
        city: a.city,
        region: a.region.trim().to_ascii_uppercase(),
        postal_code: a.postal_code,
        country: a.country.trim().to_ascii_uppercase(),
    }))
}

fn nonempty<'a>(o: &Obj<'_>, name: &str, s: &'a str) -> Result<&'a str, ApiError> {
    if s.trim().is_empty() {
        let field = o.path(name);
        return Err(ApiError::field(
            ErrorKind::MissingField,
            &field,
            format!("{field} must not be empty"),
            "a non-empty string",
            "\"\"",
        ));
    }
    Ok(s)
}

/// The fields of a create or update body; `None` is "not given".
struct Fields {
    reference: Option<String>,
    name: Option<String>,
    email: Option<String>,
    address: Option<AddressRecord>,
    tax_ids: Option<Vec<TaxIdRecord>>,
    metadata: Option<Map<String, Value>>,
}

fn fields(o: &mut Obj<'_>) -> Result<Fields, ApiError> {
    let reference = match o.opt_str("reference_merchant_id", MAX_STRING)? {
        Some(r) => Some(nonempty(o, "reference_merchant_id", r)?.to_string()),
        None => None,
    };
    let name = match o.opt_str("name", MAX_STRING)? {
        Some(n) => Some(nonempty(o, "name", n)?.to_string()),
        None => None,
    };
    let email = email(o)?;
    let address = address(o)?;
    let tax_ids = match o.take("tax_ids") {
        None => None,
        Some(_) => {
            // Read again through the shared reader (it takes the field itself).
            Some(crate::read::tax_ids(o, "tax_ids")?)
        }
    };
    let metadata = metadata(o)?;
    Ok(Fields {
        reference,
        name,
        email,
        address,
        tax_ids,
        metadata,
    })
}

/// `POST /tax/merchants`: `reference_merchant_id`, `name` and `default_address` are
/// required; `email`, `tax_ids`, `metadata` optional.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let record = crate::read::body(ctx, |o| {
        let f = fields(o)?;
        let reference = f
            .reference
            .ok_or_else(|| ApiError::missing("reference_merchant_id", "string"))?;
        let name = f.name.ok_or_else(|| ApiError::missing("name", "string"))?;
        let address = f
            .address
            .ok_or_else(|| ApiError::missing("default_address", "object"))?;
        Ok(MerchantRecord {
            id: crate::ids::new_id("merch_"),
            reference_merchant_id: reference,
            name,
            email: f.email,
            default_address: address,
            tax_ids: f.tax_ids.unwrap_or_default(),
            status: MerchantStatus::Active,
            created_at: now,
            updated_at: now,
            deleted_at: None,
            metadata: f.metadata.unwrap_or_default(),
        })
    })?;
    let view = render(&record, ctx.testmode());
    Ok(crate::idempotency::store(
        ctx,
        Write::Merchant(record),
        view,
    )?)
}

/// `GET /tax/merchants/{id}`: a deleted merchant is still answered, with status `deleted`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let m = crate::lookup::merchant(ctx, &ctx.params[0], "id")?;
    Ok(render(&m, ctx.testmode()))
}

/// `POST /tax/merchants/{id}`: partial update; each field given replaces the stored one
/// (`metadata` as a whole). `updated_at` moves only when something changed.
pub(crate) fn update(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let f = crate::read::body(ctx, fields)?;
    let id = &ctx.params[0];
    let change = MerchantChange::Update(Box::new(MerchantUpdate {
        reference: f.reference,
        name: f.name,
        email: f.email,
        default_address: f.address,
        tax_ids: f.tax_ids,
        metadata: f.metadata,
    }));
    let write = Write::MerchantChange {
        id: id.clone(),
        change,
        at: now,
    };
    let testmode = ctx.testmode();
    let made = crate::idempotency::make(ctx, write, move |made| match made {
        Made::Merchant(m) => Some(render(m, testmode)),
        _ => None,
    });
    made.map_err(|e| match e {
        StoreError::NotFound { .. } => crate::read::merchant_not_found(id, "id"),
        other => other.into(),
    })
}

/// `DELETE /tax/merchants/{id}`: the status becomes `deleted` (`deleted_at`, `updated_at`
/// set). Deleting again answers the same merchant, unchanged.
pub(crate) fn delete(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let now = crate::clock::now();
    let id = &ctx.params[0];
    let change = MerchantChange::Delete;
    match ctx
        .service
        .store
        .change_merchant(ctx.scope, id, change, now)?
    {
        Some(m) => Ok(render(&m, ctx.testmode())),
        None => Err(crate::read::merchant_not_found(id, "id")),
    }
}

/// `GET /tax/merchants?cursor=…&status=…`: up to 50 merchants ordered by id after the
/// cursor (`last_merchant_id` of the previous page). `status` is `active` (the default),
/// `deleted` or `all`.
pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let mut cursor = None;
    let mut filter = MerchantFilter::Active;
    for (k, v) in ctx.query_params(&["cursor", "status"])? {
        match (k, v) {
            ("cursor", c) => cursor = Some(c),
            (_, "active") => filter = MerchantFilter::Active,
            (_, "deleted") => filter = MerchantFilter::Deleted,
            (_, "all") => filter = MerchantFilter::All,
            (k, v) => {
                return Err(ApiError::field(
                    ErrorKind::InvalidQueryParameter,
                    k,
                    format!("{k} must be active, deleted or all"),
                    "active | deleted | all",
                    v,
                ))
            }
        }
    }
    let mut page = ctx
        .service
        .store
        .list_merchants(ctx.scope, cursor, filter, PAGE + 1)?;
    let has_more = page.len() > PAGE;
    page.truncate(PAGE);
    let last = page.last().map(|m| m.id.clone());
    Ok(json!({
        "object": "list",
        "merchants": page.iter().map(|m| render(m, ctx.testmode())).collect::<Vec<_>>(),
        "has_more": has_more,
        "last_merchant_id": last,
    }))
}
