//! The AvaTax REST v2 request shape, under `/api/v2/`: `GET utilities/ping`,
//! `POST transactions/create` (a `SalesOrder`, or an uncommitted `SalesInvoice`: a
//! calculation; a committed invoice or return: [`super::avatax_records`]), the rates
//! lookups and `GET definitions/taxcodes`. Built from Avalara's public API reference
//! (developer.avalara.com) and its SDKs (PyPI `avalara`), for interoperability: amounts
//! in dollars (major units), rates as fractions, the CreateTransactionModel in and the
//! TransactionModel out, errors `{"error": {"code", "message", "target", "details"}}`.
//!
//! Field names are matched without regard to case, as AvaTax matches them
//! (`addresses.SingleLocation` and `addresses.singleLocation` are one field). A
//! `SalesOrder` is a levy calculation ([`crate::resources::calculations::answer`]),
//! recorded in the ledger as one; its `id` is 0, as AvaTax answers an unsaved document,
//! and levy's calculation id is in `levyCalculationId`. What levy cannot honour through
//! this shape yet (an uncommitted return, an exemption, a tax override) is refused with a
//! 400 that says so, never calculated without it.

use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{json, Value};

use super::{codes, Dollars, Level};
use crate::calculate::Calculated;
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::read::{Input, LineInput};
use crate::render::Num;
use crate::store::{JurisdictionRecord, LineRecord};
use levy_core::{Address, AutomaticTax, Currency, Date};

/// The path of AvaTax's `CreateTransaction`.
pub(crate) const CREATE_PATH: &str = "/api/v2/transactions/create";

/// AvaTax's error code for a levy error.
fn code(e: &ApiError) -> &'static str {
    match e.kind {
        ErrorKind::Unauthorized => "AuthenticationException",
        ErrorKind::MissingField => "ValueRequiredError",
        ErrorKind::RateLimited
        | ErrorKind::CalculationQuotaExceeded
        | ErrorKind::IdempotencyQuotaExceeded => "TooManyRequests",
        ErrorKind::NotFound => "EntityNotFoundError",
        ErrorKind::MethodNotAllowed => "MethodNotAllowed",
        ErrorKind::InvalidJson | ErrorKind::MalformedBody => "JsonFormatError",
        ErrorKind::InvalidCountryCode
        | ErrorKind::MalformedAddress
        | ErrorKind::ZipStateMismatch
        | ErrorKind::UnsupportedLocation => "InvalidAddress",
        _ if e.status() >= 500 => "ServerConfiguration",
        _ => "InvalidParameterValue",
    }
}

/// An error in AvaTax's shape, levy's own code beside AvaTax's in the detail.
pub(crate) fn error_body(e: &ApiError) -> Value {
    let code = code(e);
    let mut detail = json!({
        "code": code,
        "number": e.status(),
        "message": e.message,
        "description": e.message,
        "faultCode": if e.status() >= 500 { "Server" } else { "Client" },
        "severity": "Error",
        "levyCode": e.kind.name(),
    });
    if let Some(field) = &e.field {
        detail["refersTo"] = Value::String(super::field_name(super::Dialect::AvaTax, field));
    }
    json!({ "error": {
        "code": code,
        "message": e.message,
        "target": if e.status() == 401 { "HttpRequest" } else { "IncorrectData" },
        "details": [detail],
    }})
}

/// A field of an object, its name matched without regard to case.
pub(super) fn field<'v>(o: &'v Value, name: &str) -> Option<&'v Value> {
    o.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

/// A string field (a number is taken as its text).
pub(super) fn text(o: &Value, name: &str, path: &str) -> Result<Option<String>, ApiError> {
    match field(o, name) {
        None => Ok(None),
        Some(Value::String(s)) => {
            crate::json::storable(path, s)?;
            Ok(Some(s.clone()))
        }
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(super::bad_field(
            path,
            format!("{path} must be a string"),
            "string",
            other,
        )),
    }
}

/// A number field, exactly.
pub(super) fn number(o: &Value, name: &str, path: &str) -> Result<Option<Decimal>, ApiError> {
    match field(o, name) {
        None => Ok(None),
        Some(v) => super::decimal_value(v, path),
    }
}

/// A boolean field.
fn flag(o: &Value, name: &str, path: &str) -> Result<Option<bool>, ApiError> {
    match field(o, name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(super::bad_field(
            path,
            format!("{path} must be true or false"),
            "boolean",
            other,
        )),
    }
}

/// An AddressInfo (`line1`, `city`, `region`, `country`, `postalCode`).
fn address(o: &Value, path: &str) -> Result<Address, ApiError> {
    let get = |n: &str| -> Result<String, ApiError> {
        Ok(text(o, n, &format!("{path}.{n}"))?
            .unwrap_or_default()
            .trim()
            .to_string())
    };
    if field(o, "latitude").is_some() && get("postalCode")?.is_empty() {
        return Err(ApiError::field(
            ErrorKind::Error,
            path,
            format!("{path}: levy places an address by its postal code, region and country; coordinates alone are not taken"),
            "postalCode, region, country",
            "latitude and longitude",
        ));
    }
    Ok(Address {
        line1: get("line1")?,
        line2: get("line2")?,
        city: get("city")?,
        region: get("region")?.to_ascii_uppercase(),
        postal_code: get("postalCode")?,
        country: get("country")?.to_ascii_uppercase(),
    })
}

/// The transaction's date: `date` (`2026-12-02`, a time after it ignored), its noon UTC
/// as levy's `transacted_at`.
pub(super) fn date(body: &Value) -> Result<(Date, String), ApiError> {
    let given = text(body, "date", "date")?
        .ok_or_else(|| ApiError::missing("date", "a date, yyyy-mm-dd"))?;
    let day = given.get(..10).unwrap_or("");
    let parts: Vec<&str> = day.split('-').collect();
    let parsed = match parts.as_slice() {
        [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
            match (y.parse(), m.parse(), d.parse()) {
                (Ok(y), Ok(m), Ok(d)) => Date::from_ymd(y, m, d),
                _ => None,
            }
        }
        _ => None,
    };
    let date = parsed.ok_or_else(|| {
        ApiError::field(
            ErrorKind::IncorrectType,
            "date",
            "date must be a date, yyyy-mm-dd",
            "yyyy-mm-dd",
            given.as_str(),
        )
    })?;
    Ok((date, day.to_string()))
}

/// A refusal of a field levy does not take through this shape yet.
pub(super) fn not_taken(path: &str, why: &str) -> ApiError {
    ApiError::field(
        ErrorKind::Error,
        path,
        format!("{path}: {why}"),
        "absent",
        "a value",
    )
}

/// What a CreateTransactionModel becomes.
pub(super) struct Document {
    pub(super) input: Input,
    pub(super) code: Option<String>,
    pub(super) date: String,
    pub(super) customer_code: String,
    pub(super) currency: String,
    /// Per line: its `number`, `itemCode`, `taxCode` as given, and its quantity.
    pub(super) lines: Vec<(String, Option<String>, Option<String>, Decimal)>,
    pub(super) messages: Vec<String>,
}

/// The kinds of document levy takes through `transactions/create`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A calculation, never saved.
    SalesOrder,
    /// A committed sale: a levy transaction.
    SalesInvoice,
    /// An uncommitted sale (`SalesInvoice` with `commit` false: AvaTax's saved document,
    /// which its returns leave out until committed): calculated as a `SalesOrder` is and
    /// kept in no ledger, answered `Temporary` with a message saying so.
    SavedInvoice,
    /// A committed return of a recorded sale: a levy refund.
    ReturnInvoice,
}

/// The kind of a CreateTransactionModel (`type`, `SalesOrder` when absent) with its
/// `commit`: levy records an invoice committed, or not at all (AvaTax's saved, uncommitted
/// invoice is calculated only, [`Kind::SavedInvoice`]; an uncommitted return is refused),
/// and never commits an order.
pub(super) fn kind(body: &Value) -> Result<Kind, ApiError> {
    let given = text(body, "type", "type")?.unwrap_or_else(|| "SalesOrder".to_string());
    let commit = flag(body, "commit", "commit")?.unwrap_or(false);
    let kind = [
        ("SalesOrder", Kind::SalesOrder),
        ("SalesInvoice", Kind::SalesInvoice),
        ("ReturnInvoice", Kind::ReturnInvoice),
    ]
    .into_iter()
    .find(|(name, _)| given.eq_ignore_ascii_case(name))
    .map(|(_, k)| k)
    .ok_or_else(|| {
        ApiError::field(
            ErrorKind::Error,
            "type",
            format!(
                "type {given}: levy takes SalesOrder (a calculation), SalesInvoice (a sale, \
                 committed) and ReturnInvoice (a refund of a recorded sale, committed) through \
                 this shape"
            ),
            "SalesOrder | SalesInvoice | ReturnInvoice",
            given.as_str(),
        )
    })?;
    match (kind, commit) {
        (Kind::SalesOrder, true) => Err(not_taken(
            "commit",
            "a SalesOrder is never committed; send commit false",
        )),
        (Kind::SalesInvoice, false) => Ok(Kind::SavedInvoice),
        (Kind::ReturnInvoice, false) => Err(ApiError::field(
            ErrorKind::Error,
            "commit",
            format!(
                "commit: levy records a {given} committed, once (a saved, uncommitted \
                 return is not kept, and has no recorded sale to be of): send commit true to \
                 record it"
            ),
            "true",
            "false",
        )),
        (kind, _) => Ok(kind),
    }
}

pub(super) fn document(ctx: &Ctx<'_>, body: &Value) -> Result<Document, ApiError> {
    for (name, why) in [
        (
            "exemptionNo",
            "exemptions are taken as levy exemption certificates, not through this shape yet",
        ),
        (
            "entityUseCode",
            "entity use codes are not mapped to levy's exempt customers yet",
        ),
        (
            "taxOverride",
            "a tax override is not taken: levy calculates the tax of the place",
        ),
        (
            "discount",
            "a document discount is not spread over lines yet; give each line its net amount",
        ),
    ] {
        if field(body, name).is_some_and(|v| v.as_str() != Some("")) {
            return Err(not_taken(name, why));
        }
    }
    let (day, date_text) = date(body)?;
    let customer_code = text(body, "customerCode", "customerCode")?
        .ok_or_else(|| ApiError::missing("customerCode", "string"))?;
    let currency_code = text(body, "currencyCode", "currencyCode")?
        .unwrap_or_else(|| "USD".to_string())
        .to_ascii_uppercase();
    let currency = Currency::from_code(&currency_code).ok_or_else(|| {
        ApiError::field(
            ErrorKind::UnsupportedCurrency,
            "currencyCode",
            format!("currencyCode {currency_code:?} is not a currency levy takes"),
            "an ISO 4217 code levy takes",
            currency_code.as_str(),
        )
    })?;
    let addresses = field(body, "addresses")
        .ok_or_else(|| ApiError::missing("addresses", "singleLocation, or shipFrom and shipTo"))?;
    let (to, from) = match field(addresses, "singleLocation") {
        Some(single) => {
            let a = address(single, "addresses.singleLocation")?;
            (a.clone(), Some(a))
        }
        None => {
            let to = field(addresses, "shipTo")
                .ok_or_else(|| ApiError::missing("addresses.shipTo", "AddressInfo"))?;
            let from = field(addresses, "shipFrom")
                .map(|f| address(f, "addresses.shipFrom"))
                .transpose()?;
            (address(to, "addresses.shipTo")?, from)
        }
    };
    let items = match field(body, "lines") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(ApiError::missing("lines[0]", "at least one line")),
    };
    if items.len() > crate::read::MAX_LINES {
        return Err(ApiError::field(
            ErrorKind::TooManyItems,
            "lines",
            format!("lines holds more than {} lines", crate::read::MAX_LINES),
            "fewer lines",
            items.len().to_string(),
        ));
    }
    let table = ctx.service.table.load();
    let known = |name: &str| table.category(name).is_some();
    let mut messages = Vec::new();
    let mut lines = Vec::new();
    let mut info = Vec::new();
    let mut included = None;
    for (i, item) in items.iter().enumerate() {
        let at = |n: &str| format!("lines[{i}].{n}");
        for (name, why) in [
            (
                "exemptionCode",
                "exemptions are not taken through this shape yet",
            ),
            (
                "entityUseCode",
                "entity use codes are not mapped to levy's exempt customers yet",
            ),
            (
                "taxOverride",
                "a tax override is not taken: levy calculates the tax of the place",
            ),
            (
                "addresses",
                "a line's own addresses are not taken yet; give the document's",
            ),
        ] {
            if field(item, name).is_some_and(|v| v.as_str() != Some("")) {
                return Err(not_taken(&at(name), why));
            }
        }
        let number_text =
            text(item, "number", &at("number"))?.unwrap_or_else(|| (i + 1).to_string());
        let amount = number(item, "amount", &at("amount"))?
            .ok_or_else(|| ApiError::missing(&at("amount"), "number"))?;
        let quantity = number(item, "quantity", &at("quantity"))?.unwrap_or(Decimal::ONE);
        // levy counts whole units; the amount is the line's total either way. A negative
        // amount (a return) is not taken yet.
        let (minor, units) = super::bounded(
            super::to_minor(amount),
            quantity,
            (&at("amount"), &at("quantity")),
        )?;
        let tax_included = flag(item, "taxIncluded", &at("taxIncluded"))?.unwrap_or(false);
        match included {
            None => included = Some(tax_included),
            Some(b) if b != tax_included => {
                return Err(not_taken(
                    &at("taxIncluded"),
                    "lines with and without tax included in one document are not taken; send each kind apart",
                ))
            }
            _ => {}
        }
        let tax_code = text(item, "taxCode", &at("taxCode"))?;
        let item_code = text(item, "itemCode", &at("itemCode"))?;
        let (category, note) = codes::levy_code(
            &codes::codes().avatax,
            "AvaTax",
            tax_code.as_deref(),
            &number_text,
            &known,
        );
        messages.extend(note);
        lines.push(LineInput {
            amount: minor,
            quantity: units,
            product: None,
            category: Some(category.to_string()),
            reference_line_item_id: Some(number_text.clone()),
        });
        info.push((number_text, item_code, tax_code, quantity));
    }
    Ok(Document {
        input: Input {
            customer_id: None,
            customer_type: None,
            fallback_type: None,
            tax_ids: Vec::new(),
            address: Some(to),
            ip: None,
            currency,
            tax_included: included.unwrap_or(false),
            automatic_tax: AutomaticTax::Auto,
            lines,
            origin_country: from.as_ref().map(|o| o.country.clone()),
            origin: from,
            transacted_at: crate::read::opt_unix_seconds(
                "date",
                Some(i64::from(day.0) * 86_400 + 43_200),
            )?,
            metadata: None,
            per_unit: false,
            rounding: ctx.asked(crate::ROUNDING_HEADER),
            exchange_rate: ctx.asked(crate::EXCHANGE_RATE_HEADER),
            seller: None,
            delivery: true,
        },
        code: text(body, "code", "code")?,
        date: date_text,
        customer_code,
        currency: currency_code,
        lines: info,
        messages,
    })
}

/// AvaTax's `jurisType` and `jurisdictionType` of a level.
fn juris_type(level: Level) -> (&'static str, &'static str) {
    match level {
        Level::Country => ("CNT", "Country"),
        Level::State => ("STA", "State"),
        Level::County => ("CTY", "County"),
        Level::City => ("CIT", "City"),
        Level::Special => ("STJ", "Special"),
    }
}

/// One detail of a line: an entry of levy's answer. Its `tax` is the entry's tax due in
/// whole cents, the details of a line adding up to the line's `tax` ([`super::entry_cents`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DetailView<'a> {
    id: u8,
    country: &'a str,
    region: &'a str,
    juris_code: &'a str,
    juris_name: &'a str,
    juris_type: &'static str,
    jurisdiction_type: &'static str,
    tax_authority_name: &'a str,
    rate: Num,
    tax: Dollars,
    tax_calculated: Dollars,
    taxable_amount: Dollars,
    exempt_amount: Dollars,
    non_taxable_amount: u8,
    tax_name: &'a str,
    tax_type: &'static str,
    rate_type: &'static str,
    levy_note: &'a str,
    levy_rule_id: u32,
}

impl<'a> DetailView<'a> {
    fn of(
        j: &'a JurisdictionRecord,
        line: &LineRecord,
        (region, country): (&'a str, &'a str),
        cents: Decimal,
    ) -> Self {
        let (short, long) = juris_type(Level::of(j));
        let taxable = if super::applies(j) {
            line.amount_excluding_tax
        } else {
            Decimal::ZERO
        };
        DetailView {
            id: 0,
            country,
            region,
            juris_code: &j.jurisdiction_code,
            juris_name: &j.jurisdiction_name,
            juris_type: short,
            jurisdiction_type: long,
            tax_authority_name: &j.authority_name,
            rate: Num(j.tax_rate),
            tax: Dollars(cents),
            tax_calculated: Dollars(cents),
            taxable_amount: Dollars(taxable),
            exempt_amount: Dollars(line.amount_excluding_tax - taxable),
            non_taxable_amount: 0,
            tax_name: &j.rate_type,
            tax_type: if j.tax_type == "USE" { "Use" } else { "Sales" },
            rate_type: "General",
            levy_note: &j.note,
            levy_rule_id: j.rule_id,
        }
    }
}

/// One line of the TransactionModel.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LineView<'a> {
    id: u8,
    line_number: &'a str,
    item_code: &'a str,
    tax_code: &'a str,
    levy_tax_code: &'a str,
    quantity: Num,
    line_amount: Dollars,
    taxable_amount: Dollars,
    exempt_amount: Dollars,
    tax: Dollars,
    tax_calculated: Dollars,
    tax_included: bool,
    is_item_taxable: bool,
    details: Vec<DetailView<'a>>,
}

/// One row of a TransactionModel's `summary`: a jurisdiction's tax of one name over the
/// document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryView<'a> {
    country: &'a str,
    region: &'a str,
    juris_type: &'static str,
    jurisdiction_type: &'static str,
    juris_code: &'a str,
    juris_name: &'a str,
    tax_type: &'static str,
    tax_name: &'a str,
    rate_type: &'static str,
    rate: Num,
    taxable: Dollars,
    tax: Dollars,
    tax_calculated: Dollars,
    exemption: u8,
    non_taxable: u8,
    #[serde(skip)]
    entry: &'a JurisdictionRecord,
}

/// One of `messages[]`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MessageView<'a> {
    summary: std::borrow::Cow<'a, str>,
    details: std::borrow::Cow<'a, str>,
    severity: &'static str,
    source: &'static str,
    refers_to: &'static str,
}

/// The TransactionModel of a SalesOrder.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TransactionView<'a> {
    id: u8,
    code: &'a str,
    company_id: u8,
    date: &'a str,
    tax_date: &'a str,
    status: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    customer_code: &'a str,
    customer_vendor_code: &'a str,
    currency_code: &'a str,
    exchange_rate: u8,
    reconciled: bool,
    locked: bool,
    version: u8,
    adjustment_reason: &'static str,
    total_amount: Dollars,
    total_discount: u8,
    total_exempt: Dollars,
    total_taxable: Dollars,
    total_tax: Dollars,
    total_tax_calculated: Dollars,
    lines: Vec<LineView<'a>>,
    summary: Vec<SummaryView<'a>>,
    messages: Vec<MessageView<'a>>,
    levy_calculation_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    levy_transaction_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    levy_refund_id: Option<&'a str>,
}

/// What a TransactionModel is written from: the lines (a calculation's, a transaction's or
/// a refund's), how the document named them, its fields, and levy's ids.
pub(super) struct Model<'a> {
    pub(super) lines: &'a [LineRecord],
    /// Per line: its `number`, `itemCode` and `taxCode` as given, and its quantity.
    pub(super) info: Vec<LineInfo<'a>>,
    pub(super) region: &'a str,
    pub(super) country: &'a str,
    pub(super) tax_included: bool,
    pub(super) total_amount: Decimal,
    pub(super) total_tax: Decimal,
    pub(super) code: &'a str,
    pub(super) date: &'a str,
    pub(super) customer_code: &'a str,
    pub(super) currency: &'a str,
    pub(super) status: &'static str,
    pub(super) kind: &'static str,
    pub(super) messages: Vec<MessageView<'a>>,
    pub(super) calculation_id: &'a str,
    pub(super) transaction_id: Option<&'a str>,
    pub(super) refund_id: Option<&'a str>,
}

/// A line's `number`, `itemCode`, `taxCode` (as given; `None` when the document is read
/// back from the ledger, which keeps levy's code) and quantity.
pub(super) type LineInfo<'a> = (
    std::borrow::Cow<'a, str>,
    Option<&'a str>,
    Option<&'a str>,
    Decimal,
);

/// A warning of `messages[]`.
pub(super) fn warning(m: std::borrow::Cow<'_, str>) -> MessageView<'_> {
    MessageView {
        summary: m.clone(),
        details: m,
        severity: "Warning",
        source: "levy",
        refers_to: "lines",
    }
}

/// The TransactionModel of `m`, written straight to its serializer.
pub(super) fn model<R>(m: Model<'_>, out: impl FnOnce(&TransactionView<'_>) -> R) -> R {
    let place = (m.region, m.country);
    let mut taxable_total = Decimal::ZERO;
    let mut exempt_total = Decimal::ZERO;
    // Summary rows by jurisdiction and tax name, in the order first seen.
    let mut summary: Vec<SummaryView<'_>> = Vec::new();
    let mut lines = Vec::with_capacity(m.lines.len());
    for (line, (number, item_code, tax_code, quantity)) in m.lines.iter().zip(&m.info) {
        let taxed = super::taxed(line);
        let taxable = if taxed {
            line.amount_excluding_tax
        } else {
            Decimal::ZERO
        };
        taxable_total += taxable;
        exempt_total += line.amount_excluding_tax - taxable;
        let cents = super::entry_cents(line);
        for (j, due) in line.jurisdictions.iter().zip(&cents) {
            let due = *due;
            let t = if super::applies(j) {
                line.amount_excluding_tax
            } else {
                Decimal::ZERO
            };
            match summary.iter_mut().find(|s| {
                s.entry.jurisdiction_code == j.jurisdiction_code && s.entry.rate_type == j.rate_type
            }) {
                Some(s) => {
                    s.taxable.0 += t;
                    s.tax.0 += due;
                    s.tax_calculated.0 += due;
                }
                None => {
                    let (short, long) = juris_type(Level::of(j));
                    summary.push(SummaryView {
                        country: place.1,
                        region: place.0,
                        juris_type: short,
                        jurisdiction_type: long,
                        juris_code: &j.jurisdiction_code,
                        juris_name: &j.jurisdiction_name,
                        tax_type: "Sales",
                        tax_name: &j.rate_type,
                        rate_type: "General",
                        rate: Num(j.tax_rate),
                        taxable: Dollars(t),
                        tax: Dollars(due),
                        tax_calculated: Dollars(due),
                        exemption: 0,
                        non_taxable: 0,
                        entry: j,
                    })
                }
            }
        }
        lines.push(LineView {
            id: 0,
            line_number: number,
            item_code: item_code.unwrap_or(""),
            tax_code: tax_code.unwrap_or(&line.product_tax_code),
            levy_tax_code: &line.product_tax_code,
            quantity: Num(*quantity),
            line_amount: Dollars(line.amount_excluding_tax),
            taxable_amount: Dollars(taxable),
            exempt_amount: Dollars(line.amount_excluding_tax - taxable),
            tax: Dollars(line.tax_amount),
            tax_calculated: Dollars(line.tax_amount),
            tax_included: m.tax_included,
            is_item_taxable: taxed,
            details: line
                .jurisdictions
                .iter()
                .zip(cents)
                .map(|(j, c)| DetailView::of(j, line, place, c))
                .collect(),
        });
    }
    out(&TransactionView {
        id: 0,
        code: m.code,
        company_id: 0,
        date: m.date,
        tax_date: m.date,
        status: m.status,
        kind: m.kind,
        customer_code: m.customer_code,
        customer_vendor_code: m.customer_code,
        currency_code: m.currency,
        exchange_rate: 1,
        reconciled: false,
        locked: false,
        version: 1,
        adjustment_reason: "NotAdjusted",
        total_amount: Dollars(m.total_amount),
        total_discount: 0,
        total_exempt: Dollars(exempt_total),
        total_taxable: Dollars(taxable_total),
        total_tax: Dollars(m.total_tax),
        total_tax_calculated: Dollars(m.total_tax),
        lines,
        summary,
        messages: m.messages,
        levy_calculation_id: m.calculation_id,
        levy_transaction_id: m.transaction_id,
        levy_refund_id: m.refund_id,
    })
}

/// The messages of a calculation: the translation's, levy's coverage, its other notes.
fn calculation_messages<'a>(c: &Calculated, doc: &'a Document) -> Vec<MessageView<'a>> {
    use std::borrow::Cow;
    let mut messages: Vec<MessageView<'_>> = doc
        .messages
        .iter()
        .map(|m| warning(Cow::Borrowed(m.as_str())))
        .collect();
    messages.push(MessageView {
        summary: Cow::Owned(format!("Levy-Coverage {}", c.coverage.as_str())),
        details: Cow::Borrowed(match c.coverage.as_str() {
            "FULL" => "levy's answer holds every tax of the place it knows",
            "PARTIAL" => "levy's answer may not hold every local tax of the place",
            _ => "levy's answer holds the state's taxes only",
        }),
        severity: if c.coverage.as_str() == "FULL" {
            "Success"
        } else {
            "Warning"
        },
        source: "levy",
        refers_to: "addresses",
    });
    messages.extend(
        super::notes(c)
            .into_iter()
            .filter(|n| !n.starts_with("Levy-Coverage"))
            .map(|n| warning(Cow::Owned(n))),
    );
    messages
}

/// The document's lines as it named them.
pub(super) fn doc_info(doc: &Document) -> Vec<LineInfo<'_>> {
    doc.lines
        .iter()
        .map(|(n, item, tax, q)| {
            (
                std::borrow::Cow::Borrowed(n.as_str()),
                item.as_deref(),
                Some(tax.as_deref().unwrap_or("P0000000")),
                *q,
            )
        })
        .collect()
}

/// The TransactionModel of a calculation (a SalesOrder: `Temporary`).
fn render(c: &Calculated, doc: &Document, kind: Kind) -> Result<Reply, ApiError> {
    use std::borrow::Cow;
    let record = &c.record;
    let mut messages = calculation_messages(c, doc);
    if kind == Kind::SavedInvoice {
        messages.insert(
            0,
            warning(Cow::Borrowed(
                "levy keeps no uncommitted document: this SalesInvoice was calculated, not \
                 saved or recorded (its code holds nothing to commit later); send it with \
                 commit true to record the sale",
            )),
        );
    }
    model(
        Model {
            lines: &record.lines,
            info: doc_info(doc),
            region: &record.place.region,
            country: &record.place.country,
            tax_included: record.tax_included,
            total_amount: record.total_excluding_tax,
            total_tax: record.total_tax,
            code: doc.code.as_deref().unwrap_or(&record.id),
            date: &doc.date,
            customer_code: &doc.customer_code,
            currency: &doc.currency,
            status: "Temporary",
            kind: if kind == Kind::SavedInvoice {
                "SalesInvoice"
            } else {
                "SalesOrder"
            },
            messages,
            calculation_id: &record.id,
            transaction_id: None,
            refund_id: None,
        },
        |v| Reply::json(v),
    )
}

/// `POST /api/v2/transactions/create`: a `SalesOrder`, calculated and recorded as levy's
/// `POST /tax/calculations` would; a committed `SalesInvoice`, calculated and recorded as
/// a levy transaction ([`super::avatax_records::invoice`]); a committed `ReturnInvoice` of
/// a recorded invoice, a levy refund of it ([`super::avatax_records::return_invoice`]).
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&["$include"])?;
    let body = super::body_object(ctx.req)?;
    create_model(ctx, kind(&body)?, &body)
}

/// A CreateTransactionModel of the kind `kind` ([`kind`]) answered as
/// `transactions/create` answers it.
pub(super) fn create_model(ctx: &Ctx<'_>, kind: Kind, body: &Value) -> Result<Reply, ApiError> {
    match kind {
        Kind::SalesOrder | Kind::SavedInvoice => {
            let doc = document(ctx, body)?;
            crate::resources::calculations::answer(ctx, &doc.input, |c| render(c, &doc, kind))
        }
        Kind::SalesInvoice => super::avatax_records::invoice(ctx, body),
        Kind::ReturnInvoice => super::avatax_records::return_invoice(ctx, body),
    }
}

/// The ping's body: whether the request was authenticated, and how.
pub(crate) fn ping_body(authenticated: Option<&crate::Request>) -> Value {
    let scheme = authenticated
        .and_then(|r| r.header("authorization"))
        .and_then(|h| h.trim().split_once(' '))
        .map(|(s, rest)| (s.to_ascii_lowercase(), rest.trim().to_string()));
    let (kind, account) = match &scheme {
        None => ("None", None),
        Some((s, _)) if s == "bearer" => ("OpenIdBearerToken", None),
        Some((_, creds)) => {
            use base64::Engine;
            let user = base64::engine::general_purpose::STANDARD
                .decode(creds)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|p| p.split_once(':').map(|(u, _)| u.to_string()));
            (
                "AccountIdLicenseKey",
                user.and_then(|u| u.parse::<i64>().ok()),
            )
        }
    };
    let mut v = json!({
        "version": concat!("levy ", env!("CARGO_PKG_VERSION")),
        "authenticated": authenticated.is_some(),
        "authenticationType": kind,
    });
    if let Some(id) = account {
        v["authenticatedAccountId"] = Value::from(id);
    }
    v
}

/// `GET /api/v2/utilities/ping`, authenticated (an unauthenticated ping is answered by the
/// router, `authenticated: false`, as AvaTax answers it).
pub(crate) fn ping(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    Ok(Reply::tree(ping_body(Some(ctx.req))))
}

/// `GET /api/v2/definitions/taxcodes`: the AvaTax system tax codes levy maps
/// (`data/dialect-tax-codes.toml`), as a FetchResult; `$filter`, `$top`, `$skip` are not
/// applied (the list is short), and refused rather than ignored.
pub(crate) fn tax_codes(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let list: Vec<Value> = codes::codes()
        .avatax
        .iter()
        .map(|c| {
            json!({
                "id": 0,
                "companyId": 0,
                "taxCode": c.code,
                "taxCodeTypeId": c.code.get(..1).unwrap_or(""),
                "description": c.name,
                "levyDefinition": c.description,
                "levyTaxCode": c.levy,
                "isActive": true,
                "isPhysical": c.code.starts_with('P'),
            })
        })
        .collect();
    Ok(Reply::tree(
        json!({ "@recordsetCount": list.len(), "value": list }),
    ))
}

/// Whether `req` is AvaTax's ping (`GET /api/v2/utilities/ping`).
pub(crate) fn is_ping(req: &crate::Request) -> bool {
    req.method == "GET" && req.path == "/api/v2/utilities/ping"
}

/// `GET /api/v2/taxrates/bypostalcode?country=US&postalCode=37203`: AvaTax's free rates
/// lookup (a TaxRateModel: `totalRate` and `rates[]` of `rate`, `name`, `type`), as levy
/// taxes $100.00 of general merchandise delivered to the postal code (a lookup: nothing is
/// stored; the TaxJar shape's `GET /v2/rates/{zip}` is the same lookup).
pub(crate) fn rates_by_postal_code(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let mut country = None;
    let mut postal = None;
    for (k, v) in ctx.query_params(&["country", "postalCode"])? {
        match k {
            "country" => country = Some(v.trim().to_ascii_uppercase()),
            _ => postal = Some(super::taxjar::postal_code(v, "postalCode")?),
        }
    }
    let country = country.ok_or_else(|| ApiError::missing("country", "US or CA"))?;
    let postal = postal.ok_or_else(|| ApiError::missing("postalCode", "a postal code"))?;
    let to = Address {
        postal_code: postal,
        country: country.clone(),
        ..Address::default()
    };
    rates_at(ctx, to, &country)
}

/// `GET /api/v2/taxrates/byaddress?line1=...&city=...&region=TN&postalCode=37203&country=US`:
/// the same lookup at a street address (`line1`, `line2`, `line3`, `city`, `region`,
/// `postalCode`, `country`; the country is required, and a postal code or a region): a
/// street range, a ZIP+4 or a named place the table holds decides before the postal code
/// alone, as in a calculation. `line3` is read as part of the second line.
pub(crate) fn rates_by_address(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let mut to = Address::default();
    let fields = [
        "line1",
        "line2",
        "line3",
        "city",
        "region",
        "postalCode",
        "country",
    ];
    for (k, v) in ctx.query_params(&fields)? {
        let v = v.trim();
        match k {
            "line1" => to.line1 = v.to_string(),
            "line2" | "line3" if to.line2.is_empty() => to.line2 = v.to_string(),
            "line2" | "line3" => to.line2 = format!("{} {v}", to.line2),
            "city" => to.city = v.to_string(),
            "region" => to.region = v.to_ascii_uppercase(),
            "postalCode" => to.postal_code = super::taxjar::postal_code(v, "postalCode")?,
            _ => to.country = v.to_ascii_uppercase(),
        }
    }
    if to.country.is_empty() {
        return Err(ApiError::missing("country", "US or CA"));
    }
    if to.postal_code.is_empty() && to.region.is_empty() {
        return Err(ApiError::missing(
            "postalCode",
            "a postal code, or a region",
        ));
    }
    let country = to.country.clone();
    rates_at(ctx, to, &country)
}

/// The TaxRateModel of $100.00 of general merchandise delivered to `to`, in `country`.
fn rates_at(ctx: &Ctx<'_>, to: Address, country: &str) -> Result<Reply, ApiError> {
    let (input, _) = super::taxjar::rate_sale(ctx, to, country)?;
    crate::resources::calculations::look_up(ctx, &input, |c| {
        let line = &c.record.lines[0];
        let rates: Vec<Value> = line
            .jurisdictions
            .iter()
            .filter(|j| super::applies(j))
            .map(|j| {
                json!({
                    "rate": super::num(j.tax_rate),
                    "name": j.jurisdiction_name,
                    "type": juris_type(Level::of(j)).1,
                })
            })
            .collect();
        let mut messages: Vec<Value> = super::notes(c)
            .into_iter()
            .map(|n| json!({ "summary": n, "severity": "Warning", "source": "levy" }))
            .collect();
        messages.push(json!({
            "summary": format!("Levy-Coverage {}", c.coverage.as_str()),
            "severity": if c.coverage.as_str() == "FULL" { "Success" } else { "Warning" },
            "source": "levy",
        }));
        Reply::json(&json!({
            "totalRate": super::num(super::line_rate(line)),
            "rates": rates,
            "levyMessages": messages,
        }))
    })
}
