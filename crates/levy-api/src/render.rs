//! Version-aware rendering, in one place: errors, and the line items and jurisdiction
//! entries that calculations, transactions and refunds share.

use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::json::num;
use crate::store::{JurisdictionRecord, LineRecord, TransactionRecord};
use crate::version::ApiVersion;

/// Where a line is rendered; decides which optional fields appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// A calculation response.
    Calculation,
    /// A transaction or refund response.
    Ledger,
}

/// An error body in the version's format. The older format carries `request_id`, or a
/// new `req_…` id when it is `None`; the flat format carries no request id.
pub(crate) fn error(e: &ApiError, version: ApiVersion, request_id: Option<&str>) -> Value {
    if version.flat_errors() {
        json!({ "code": e.status(), "type": e.kind.name(), "message": e.message })
    } else {
        let mut err = Map::new();
        err.insert("error_code".into(), Value::String(e.kind.error_code()));
        err.insert("error_message".into(), Value::String(e.message.clone()));
        if let Some(field) = &e.field {
            err.insert(
                "error_meta".into(),
                json!({
                    "field": field,
                    "expected": e.expected.clone().unwrap_or_default(),
                    "received": e.received.clone().unwrap_or_default(),
                }),
            );
        }
        let request_id = match request_id {
            Some(id) => id.to_string(),
            None => crate::ids::new_id("req_"),
        };
        json!({ "error": err, "request_id": request_id })
    }
}

/// One jurisdiction entry.
pub(crate) fn jurisdiction(j: &JurisdictionRecord, version: ApiVersion, kind: LineKind) -> Value {
    let mut m = Map::new();
    m.insert("tax_rate".into(), num(j.tax_rate));
    m.insert("rate_type".into(), Value::String(j.rate_type.clone()));
    m.insert("fee_amount".into(), num(j.fee));
    m.insert("note".into(), Value::String(j.note.clone()));
    if version == ApiVersion::V2024_09_01 {
        m.insert(
            "jurisdiction_name".into(),
            Value::String(j.jurisdiction_name.clone()),
        );
    }
    if version >= ApiVersion::V2026_01_01 {
        m.insert(
            "tax_authority_name".into(),
            Value::String(j.authority_name.clone()),
        );
        m.insert(
            "tax_authority_type".into(),
            Value::String(j.authority_type.clone()),
        );
        m.insert("tax_type".into(), Value::String(j.tax_type.clone()));
    }
    if kind == LineKind::Ledger || version >= ApiVersion::V2026_03_01 {
        m.insert("tax_due_decimal".into(), num(j.tax_due));
    }
    // levy extension: the exemption certificate that zeroed the entry.
    if let Some(id) = &j.exemption_certificate_id {
        m.insert("exemption_certificate_id".into(), Value::String(id.clone()));
    }
    // levy extension: the rule of the table that produced the entry.
    m.insert("rule_id".into(), Value::from(j.rule_id));
    Value::Object(m)
}

fn opt(s: &Option<String>) -> Value {
    s.as_ref().map_or(Value::Null, |s| Value::String(s.clone()))
}

/// One line item.
pub(crate) fn line(l: &LineRecord, version: ApiVersion, kind: LineKind) -> Value {
    let mut m = Map::new();
    if kind == LineKind::Ledger || version >= ApiVersion::V2026_03_01 {
        m.insert("line_item_id".into(), Value::String(l.line_item_id.clone()));
    }
    m.insert(
        "product".into(),
        json!({
            "reference_product_id": opt(&l.reference_product_id),
            "reference_product_name": opt(&l.reference_product_name),
            "reference_line_item_id": opt(&l.reference_line_item_id),
            "product_tax_code": l.product_tax_code,
        }),
    );
    m.insert(
        "tax_jurisdictions".into(),
        Value::Array(
            l.jurisdictions
                .iter()
                .map(|j| jurisdiction(j, version, kind))
                .collect(),
        ),
    );
    m.insert("quantity".into(), Value::from(l.quantity));
    m.insert("tax_amount".into(), num(l.tax_amount));
    m.insert("amount_excluding_tax".into(), num(l.amount_excluding_tax));
    m.insert("amount_including_tax".into(), num(l.amount_including_tax));
    Value::Object(m)
}

/// A transaction in the version's shape (`testmode` is a string here, as the spec shows).
pub(crate) fn transaction(t: &TransactionRecord, v: ApiVersion, testmode: bool) -> Value {
    let mut out = json!({
        "id": t.id,
        "object": "tax.transaction",
        "calculation_id": t.calculation_id,
        "reference_order_id": t.reference_order_id,
        "transaction_processed_at": t.processed_at,
        "customer_currency_code": t.currency,
        "filing_currency_code": t.currency,
        "tax_included_in_amount": t.tax_included,
        "line_items": t.lines.iter().map(|l| line(l, v, LineKind::Ledger)).collect::<Vec<_>>(),
        "testmode": if testmode { "true" } else { "false" },
        "metadata": t.metadata.clone().map_or(json!({}), Value::Object),
        "created_at": t.created_at,
    });
    if let Some(p) = &t.platform {
        out["type"] = json!(p.kind);
        out["reference_payment_id"] = json!(p.reference_payment_id);
        out["merchant_id"] = json!(p.merchant_id);
    }
    out
}
