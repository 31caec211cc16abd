//! Version-aware rendering, in one place: errors, and the line items and jurisdiction
//! entries that calculations, transactions and refunds share.

use rust_decimal::Decimal;
use serde::ser::{Serialize, SerializeMap, Serializer};
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

/// One line item, as a [`Value`].
pub(crate) fn line(l: &LineRecord, version: ApiVersion, kind: LineKind) -> Value {
    tree(&LineView {
        line: l,
        version,
        kind,
    })
}

/// A view as a [`Value`]. The views write strings, numbers, booleans, nulls, arrays and
/// maps with string keys only, which always convert; should one ever fail, the answer is
/// `null` rather than a panic.
pub(crate) fn tree(view: &impl Serialize) -> Value {
    serde_json::to_value(view).unwrap_or(Value::Null)
}

/// A decimal as a JSON number of its exact digits (see [`num`]).
pub(crate) struct Num(pub Decimal);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A whole number (every amount in minor units) is written as an integer, without
        // its text being built first; the same digits as [`num`] writes.
        if self.0.scale() == 0 {
            if let Ok(i) = i64::try_from(self.0) {
                return s.serialize_i64(i);
            }
        }
        num(self.0).serialize(s)
    }
}

/// One jurisdiction entry in the version's shape, written straight to its serializer.
///
/// The views in this module write their keys in sorted order, the order a [`Value`]
/// object keeps, so that an answer written from a view and one written from its
/// [`Value`] ([`tree`]) are the same bytes.
pub(crate) struct JurisdictionView<'a> {
    /// The entry.
    pub j: &'a JurisdictionRecord,
    /// The request's version.
    pub version: ApiVersion,
    /// Where it is rendered.
    pub kind: LineKind,
}

impl Serialize for JurisdictionView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (j, version) = (self.j, self.version);
        let mut m = s.serialize_map(None)?;
        // levy extension: the exemption certificate that zeroed the entry.
        if let Some(id) = &j.exemption_certificate_id {
            m.serialize_entry("exemption_certificate_id", id)?;
        }
        m.serialize_entry("fee_amount", &Num(j.fee))?;
        if version == ApiVersion::V2024_09_01 {
            m.serialize_entry("jurisdiction_name", &j.jurisdiction_name)?;
        }
        m.serialize_entry("note", &j.note)?;
        m.serialize_entry("rate_type", &j.rate_type)?;
        // levy extension: the rule of the table that produced the entry.
        m.serialize_entry("rule_id", &j.rule_id)?;
        if version >= ApiVersion::V2026_01_01 {
            m.serialize_entry("tax_authority_name", &j.authority_name)?;
            m.serialize_entry("tax_authority_type", &j.authority_type)?;
        }
        if self.kind == LineKind::Ledger || version >= ApiVersion::V2026_03_01 {
            m.serialize_entry("tax_due_decimal", &Num(j.tax_due))?;
        }
        m.serialize_entry("tax_rate", &Num(j.tax_rate))?;
        if version >= ApiVersion::V2026_01_01 {
            m.serialize_entry("tax_type", &j.tax_type)?;
        }
        m.end()
    }
}

/// One line item in the version's shape, written straight to its serializer (keys in
/// sorted order; see [`JurisdictionView`]).
pub(crate) struct LineView<'a> {
    /// The line.
    pub line: &'a LineRecord,
    /// The request's version.
    pub version: ApiVersion,
    /// Where it is rendered.
    pub kind: LineKind,
}

struct ProductView<'a>(&'a LineRecord);

impl Serialize for ProductView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("product_tax_code", &l.product_tax_code)?;
        m.serialize_entry("reference_line_item_id", &l.reference_line_item_id)?;
        m.serialize_entry("reference_product_id", &l.reference_product_id)?;
        m.serialize_entry("reference_product_name", &l.reference_product_name)?;
        m.end()
    }
}

impl Serialize for LineView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (l, version, kind) = (self.line, self.version, self.kind);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("amount_excluding_tax", &Num(l.amount_excluding_tax))?;
        m.serialize_entry("amount_including_tax", &Num(l.amount_including_tax))?;
        if kind == LineKind::Ledger || version >= ApiVersion::V2026_03_01 {
            m.serialize_entry("line_item_id", &l.line_item_id)?;
        }
        m.serialize_entry("product", &ProductView(l))?;
        m.serialize_entry("quantity", &l.quantity)?;
        m.serialize_entry("tax_amount", &Num(l.tax_amount))?;
        m.serialize_entry("tax_jurisdictions", &Jurisdictions(l, version, kind))?;
        m.end()
    }
}

struct Jurisdictions<'a>(&'a LineRecord, ApiVersion, LineKind);

impl Serialize for Jurisdictions<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Jurisdictions(l, version, kind) = *self;
        s.collect_seq(
            l.jurisdictions
                .iter()
                .map(|j| JurisdictionView { j, version, kind }),
        )
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_written_as_num_writes_it_whole_or_not() {
        // Whole amounts take the integer path, others (and wholes past i64) the text of
        // `num`: the bytes must be the same either way. 2^63 = 9223372036854775808 is one
        // past i64::MAX.
        for text in [
            "0",
            "-0",
            "700",
            "-12345",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "7.00",
            "0.0700",
            "0.07",
            "12345678901234567.5",
            // The longest texts a decimal has: 28 places, and 29 digits with a sign.
            "0.0000000000000000000000000001",
            "-0.0000000000000000000000000001",
            "-79228162514264337593543950335",
            "-7.9228162514264337593543950335",
        ] {
            let d: Decimal = text.parse().unwrap();
            assert_eq!(
                serde_json::to_string(&Num(d)).unwrap(),
                num(d).to_string(),
                "{text}"
            );
            // Into a tree (transactions and refunds render through one), the same number.
            assert_eq!(serde_json::to_value(Num(d)).unwrap(), num(d), "{text}");
        }
        // Written out by hand: trailing zeros dropped, whole numbers without a point.
        let written = |t: &str| serde_json::to_string(&Num(t.parse().unwrap())).unwrap();
        assert_eq!(written("700"), "700");
        assert_eq!(written("7.00"), "7");
        assert_eq!(written("0.0700"), "0.07");
        assert_eq!(written("9223372036854775808"), "9223372036854775808");
    }
}
