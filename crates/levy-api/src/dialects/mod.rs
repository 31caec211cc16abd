//! The request shapes `levy serve` accepts besides its own, for interoperability with
//! integrations built for other tax services: the TaxJar v2 shape under `/v2/`
//! ([`taxjar`]) and the AvaTax REST v2 shape under `/api/v2/` ([`avatax`]), each built
//! from the vendor's public API reference and SDKs.
//!
//! A dialect is a translation, in and out, and nothing else. Its requests go through the
//! interface's own pipeline ([`crate::router`]): the same keys (test and live modes), rate
//! and concurrency limits, idempotency keys, ledger and calculation road
//! ([`crate::resources::calculations::answer`], onto `levy_core::quote`). What a dialect
//! changes: how the key is presented (its `Authorization` schemes, [`presented_key`]),
//! the body read (into the interface's [`crate::read::Input`]), the answer written (from
//! the interface's [`crate::calculate::Calculated`]) and the error format
//! ([`error_response`]).

pub(crate) mod avatax;
pub(crate) mod avatax_records;
pub(crate) mod codes;
pub(crate) mod taxjar;
pub(crate) mod taxjar_records;

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;

use crate::error::{ApiError, ErrorKind};
use crate::handler::{route, Route};
use crate::store::{JurisdictionRecord, LineRecord};
use crate::{Request, Response};

/// A request shape other than the interface's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// TaxJar v2, under `/v2/`.
    TaxJar,
    /// AvaTax REST v2, under `/api/v2/`.
    AvaTax,
}

/// The dialect a path belongs to, by its prefix; `None` for the interface's own paths.
pub(crate) fn of_path(path: &str) -> Option<Dialect> {
    if path.starts_with("/v2/") {
        Some(Dialect::TaxJar)
    } else if path.starts_with("/api/v2/") {
        Some(Dialect::AvaTax)
    } else {
        None
    }
}

/// The routes of the dialects (see [`Route`]): the calculations hand their commit over
/// rather than block on it; AvaTax's `transactions/create` is one when its body is a
/// `SalesOrder` only ([`crate::router::blocks_on_commit`] reads its `type`).
pub(crate) const ROUTES: &[Route] = &[
    route("POST", "/v2/taxes", taxjar::taxes).deferred(),
    route("GET", "/v2/rates/{}", taxjar::rates),
    route("GET", "/v2/categories", taxjar::categories),
    route("GET", "/v2/nexus/regions", taxjar::nexus_regions),
    route(
        "POST",
        "/v2/transactions/orders",
        taxjar_records::create_order,
    ),
    route(
        "GET",
        "/v2/transactions/orders/{}",
        taxjar_records::show_order,
    ),
    route(
        "PUT",
        "/v2/transactions/orders/{}",
        taxjar_records::update_order,
    ),
    route(
        "DELETE",
        "/v2/transactions/orders/{}",
        taxjar_records::delete_order,
    ),
    route(
        "POST",
        "/v2/transactions/refunds",
        taxjar_records::create_refund,
    ),
    route(
        "GET",
        "/v2/transactions/refunds/{}",
        taxjar_records::show_refund,
    ),
    route(
        "DELETE",
        "/v2/transactions/refunds/{}",
        taxjar_records::delete_refund,
    ),
    route("GET", "/api/v2/utilities/ping", avatax::ping),
    route("POST", avatax::CREATE_PATH, avatax::create).deferred(),
    route(
        "POST",
        "/api/v2/transactions/createoradjust",
        avatax_records::create_or_adjust,
    ),
    route("GET", "/api/v2/definitions/taxcodes", avatax::tax_codes),
    route(
        "GET",
        "/api/v2/companies/{}/transactions/{}",
        avatax_records::get,
    ),
    route(
        "POST",
        "/api/v2/companies/{}/transactions/{}/void",
        avatax_records::void,
    ),
    route(
        "POST",
        "/api/v2/companies/{}/transactions/{}/refund",
        avatax_records::refund,
    ),
    route(
        "POST",
        "/api/v2/companies/{}/transactions/{}/adjust",
        avatax_records::adjust,
    ),
    route(
        "POST",
        "/api/v2/companies/{}/transactions/{}/commit",
        avatax_records::commit,
    ),
    route(
        "POST",
        "/api/v2/companies/{}/transactions/{}/uncommit",
        avatax_records::uncommit,
    ),
    route(
        "GET",
        "/api/v2/taxrates/bypostalcode",
        avatax::rates_by_postal_code,
    ),
    route(
        "GET",
        "/api/v2/taxrates/byaddress",
        avatax::rates_by_address,
    ),
];

/// The API key a dialect's request presents, from its `Authorization` header:
///
/// * TaxJar: `Bearer <key>` or `Token token="<key>"` (quotes optional);
/// * AvaTax: HTTP Basic with the key as the password (the user name, AvaTax's account id,
///   is not checked: the key alone chooses the account and the mode), or `Bearer <key>`.
pub(crate) fn presented_key(req: &Request, dialect: Dialect) -> Result<String, ApiError> {
    let unauthorized = |m: &str| ApiError::of(ErrorKind::Unauthorized, m);
    let expected = match dialect {
        Dialect::TaxJar => "Authorization: Bearer <levy API key> or Token token=\"<levy API key>\"",
        Dialect::AvaTax => {
            "Authorization: Basic <account id:levy API key> (HTTP Basic) or Bearer <levy API key>"
        }
    };
    let header = req
        .header("authorization")
        .ok_or_else(|| unauthorized(&format!("missing API key: send the header {expected}")))?;
    let (scheme, rest) = header
        .trim()
        .split_once(' ')
        .ok_or_else(|| unauthorized(&format!("the Authorization header must be {expected}")))?;
    let rest = rest.trim();
    let key = match (dialect, scheme.to_ascii_lowercase().as_str()) {
        (_, "bearer") => Some(rest.to_string()),
        (Dialect::TaxJar, "token") => rest
            .strip_prefix("token=")
            .map(|k| k.trim().trim_matches('"').to_string()),
        (Dialect::AvaTax, "basic") => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(rest)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|pair| pair.split_once(':').map(|(_, key)| key.to_string()))
        }
        _ => None,
    };
    key.filter(|k| !k.is_empty())
        .ok_or_else(|| unauthorized(&format!("the Authorization header must be {expected}")))
}

/// The response for an error in the dialect's format: TaxJar's
/// `{"error", "detail", "status"}` or AvaTax's `{"error": {"code", "message", "target",
/// "details": [...]}}`, with the interface's headers for the status (`Retry-After`,
/// `Allow`, `WWW-Authenticate`).
pub(crate) fn error_response(e: &ApiError, dialect: Dialect) -> Response {
    let status = e.status();
    let body = match dialect {
        Dialect::TaxJar => taxjar::error_body(e),
        Dialect::AvaTax => avatax::error_body(e),
    };
    let mut r = crate::router::json_response(status, &body);
    if status == 401 {
        let scheme = match dialect {
            Dialect::TaxJar => "Bearer",
            Dialect::AvaTax => "Basic realm=\"levy\"",
        };
        r.headers.push(("WWW-Authenticate".into(), scheme.into()));
    }
    if let Some(seconds) = e.retry_after {
        r.headers.push(("Retry-After".into(), seconds.to_string()));
    }
    if status == 405 {
        if let Some(allow) = &e.expected {
            r.headers.push(("Allow".into(), allow.clone()));
        }
    }
    r
}

/// The field of the dialect's request that an error of the interface's calculation names
/// (`customer.address.address_postal_code` is TaxJar's `to_zip`, AvaTax's
/// `addresses.shipTo.postalCode`), so that the caller is told of a field it sent; a field
/// the dialect named itself is kept.
pub(crate) fn field_name(dialect: Dialect, native: &str) -> String {
    const ADDRESS: [(&str, &str, &str); 6] = [
        ("address_postal_code", "zip", "postalCode"),
        ("address_province", "state", "region"),
        ("address_country", "country", "country"),
        ("address_city", "city", "city"),
        ("address_line_1", "street", "line1"),
        ("address_line_2", "street", "line2"),
    ];
    let (side, rest) = if let Some(rest) = native.strip_prefix("customer.address") {
        ("to", rest)
    } else if let Some(rest) = native.strip_prefix("origin_address") {
        ("from", rest)
    } else if let Some(rest) = native.strip_prefix("order_details.line_items") {
        let lines = match dialect {
            Dialect::TaxJar => "line_items",
            Dialect::AvaTax => "lines",
        };
        return format!("{lines}{rest}");
    } else {
        return native.to_string();
    };
    let part = rest.strip_prefix('.').unwrap_or(rest);
    let found = ADDRESS.iter().find(|(n, _, _)| *n == part);
    match dialect {
        Dialect::TaxJar => match found {
            Some((_, tj, _)) => format!("{side}_{tj}"),
            None => format!("{side}_zip"),
        },
        Dialect::AvaTax => {
            let address = if side == "to" {
                "addresses.shipTo"
            } else {
                "addresses.shipFrom"
            };
            match found {
                Some((_, _, av)) => format!("{address}.{av}"),
                None => address.to_string(),
            }
        }
    }
}

/// The headers a dialect's SDK reads on every answer: AvaTax's Python SDK logs
/// `x-correlation-id` of each response (and fails without one), given the request's id.
pub(crate) fn finish(
    dialect: Dialect,
    mut response: Response,
    request_id: Option<&str>,
) -> Response {
    if dialect == Dialect::AvaTax
        && !response
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-correlation-id"))
    {
        let id = request_id
            .map(str::to_string)
            .unwrap_or_else(|| crate::ids::new_id("req_"));
        response.headers.push(("x-correlation-id".into(), id));
    }
    response
}

/// A 400 of a dialect's body: `field` at fault, what it should hold, what it held.
pub(crate) fn bad_field(
    field: &str,
    message: impl Into<String>,
    expected: &str,
    got: &Value,
) -> ApiError {
    ApiError::field(
        ErrorKind::IncorrectType,
        field,
        message,
        expected,
        crate::dialects::describe(got),
    )
}

/// A short description of a JSON value for an error's `received`.
pub(crate) fn describe(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 64 {
        format!(
            "{}…",
            &text[..text.char_indices().nth(60).map_or(text.len(), |(i, _)| i)]
        )
    } else {
        text
    }
}

/// A money amount or rate of a dialect's body, exactly: a JSON number or a string of one
/// (`16.5`, `"16.50"`); `None` when absent or `null`.
pub(crate) fn decimal(body: &Value, name: &str, field: &str) -> Result<Option<Decimal>, ApiError> {
    match body.get(name) {
        None => Ok(None),
        Some(v) => decimal_value(v, field),
    }
}

/// A money amount or rate, exactly: a JSON number or a string of one; `None` for `null`.
pub(crate) fn decimal_value(v: &Value, field: &str) -> Result<Option<Decimal>, ApiError> {
    let not_a_number = || bad_field(field, format!("{field} must be a number"), "number", v);
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => crate::json::decimal_of(n)
            .map(Some)
            .ok_or_else(not_a_number),
        Value::String(s) => s
            .trim()
            .parse::<Decimal>()
            .map(Some)
            .map_err(|_| not_a_number()),
        _ => Err(not_a_number()),
    }
}

/// A string of a dialect's body (a number is taken as its text: TaxJar line ids are
/// either); `None` when absent or `null`.
pub(crate) fn string(body: &Value, name: &str, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            crate::json::storable(field, s)?;
            Ok(Some(s.clone()))
        }
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(bad_field(
            field,
            format!("{field} must be a string"),
            "string",
            other,
        )),
    }
}

/// The body of a dialect's POST as a JSON object.
pub(crate) fn body_object(req: &Request) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(&req.body).map_err(|e| {
        ApiError::of(
            ErrorKind::InvalidJson,
            format!("the request body is not valid JSON: {e}"),
        )
    })?;
    if !v.is_object() {
        return Err(ApiError::of(
            ErrorKind::InvalidJson,
            "the request body must be a JSON object",
        ));
    }
    Ok(v)
}

/// A line's amount (minor units) and quantity within the bounds the interface's own lines
/// are held to (`levy_core::MAX_AMOUNT_MINOR`, `MAX_QUANTITY`): `amount` and `quantity`
/// name the fields at fault.
pub(crate) fn bounded(
    minor: Decimal,
    quantity: Decimal,
    (amount, quantity_field): (&str, &str),
) -> Result<(Decimal, u32), ApiError> {
    if minor.is_sign_negative() && !minor.is_zero() {
        return Err(crate::read::positive(
            amount,
            "zero or more",
            minor / Decimal::ONE_HUNDRED,
        ));
    }
    if minor > Decimal::from(levy_core::MAX_AMOUNT_MINOR) {
        return Err(crate::read::too_large(
            amount,
            Decimal::from(levy_core::MAX_AMOUNT_MINOR) / Decimal::ONE_HUNDRED,
            minor / Decimal::ONE_HUNDRED,
        ));
    }
    if !quantity.fract().is_zero() || quantity < Decimal::ONE {
        return Err(crate::read::positive(
            quantity_field,
            "a positive whole number",
            quantity,
        ));
    }
    if quantity > Decimal::from(levy_core::MAX_QUANTITY) {
        return Err(crate::read::too_large(
            quantity_field,
            levy_core::MAX_QUANTITY,
            quantity,
        ));
    }
    let units = u32::try_from(quantity.trunc().mantissa() / 10i128.pow(quantity.trunc().scale()))
        .unwrap_or(levy_core::MAX_QUANTITY);
    Ok((minor, units))
}

/// Minor units (cents) of a major-unit amount (dollars): `16.5` is `1650`.
pub(crate) fn to_minor(major: Decimal) -> Decimal {
    // A decimal of 28 digits times 100 may not fit: saturated, then refused as too large.
    major
        .checked_mul(Decimal::ONE_HUNDRED)
        .unwrap_or(Decimal::MAX)
}

/// Minor units written as major units (cents as dollars), exactly, straight to a
/// serializer.
pub(crate) struct Dollars(pub Decimal);

impl serde::Serialize for Dollars {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::render::Num(self.0 / Decimal::ONE_HUNDRED).serialize(s)
    }
}

/// A decimal as a JSON number.
pub(crate) fn num(d: Decimal) -> Value {
    crate::json::num(d)
}

/// The level of a jurisdiction entry as the dialects group them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// A country's own tax (VAT, GST).
    Country,
    /// A US state or a Canadian province.
    State,
    /// A county.
    County,
    /// A city.
    City,
    /// A special district.
    Special,
}

impl Level {
    /// The level of an entry, from its `tax_authority_type`.
    pub(crate) fn of(j: &JurisdictionRecord) -> Level {
        match j.authority_type.as_str() {
            "COUNTRY" => Level::Country,
            "STATE" | "PROVINCE" => Level::State,
            "COUNTY" => Level::County,
            "CITY" => Level::City,
            _ => Level::Special,
        }
    }
}

/// Whether an entry taxed the line: it has tax due (a rate of a band the line's amount
/// does not reach, such as Tennessee's single article tax on $100, does not count).
pub(crate) fn applies(j: &JurisdictionRecord) -> bool {
    !j.tax_due.is_zero()
}

/// The part of a line's tax that `sales` of its amount is, rounded half away from zero to
/// the cent (minor units): what a refund of part of a line takes back.
pub(crate) fn tax_share(line: &LineRecord, sales: Decimal) -> Decimal {
    if line.amount_excluding_tax.is_zero() {
        Decimal::ZERO
    } else {
        (line.tax_amount * sales / line.amount_excluding_tax)
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
    }
}

/// Amounts `exact` (minor units) in whole cents adding up to `target`: each rounded half
/// away from zero, then the cents between their sum and `target` given one at a time to the
/// amounts the rounding moved furthest the other way (the first of equals first); an amount
/// of zero gets none.
pub(crate) fn whole_cents(exact: &[Decimal], target: Decimal) -> Vec<Decimal> {
    let mut cents: Vec<Decimal> = exact
        .iter()
        .map(|e| e.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero))
        .collect();
    let mut left = target - cents.iter().copied().sum::<Decimal>();
    let up = left > Decimal::ZERO;
    let mut order: Vec<usize> = (0..cents.len()).filter(|&i| !exact[i].is_zero()).collect();
    // Short of the target: a cent more to those rounded down the most; over it, a cent
    // less to those rounded up the most.
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - cents[a], exact[b] - cents[b]);
        if up {
            rb.cmp(&ra)
        } else {
            ra.cmp(&rb)
        }
    });
    let steps = order.len() * 2;
    for i in order.into_iter().cycle().take(steps) {
        if left.is_zero() {
            break;
        }
        let step = if up { Decimal::ONE } else { -Decimal::ONE };
        cents[i] += step;
        left -= step;
    }
    cents
}

/// The tax of each entry of a line in whole cents, adding up to the line's tax
/// ([`whole_cents`] of the entries' tax due). levy's ledger keeps each entry's tax
/// unrounded (`tax_due`); the shapes write amounts per jurisdiction (AvaTax's details and
/// summary, TaxJar's breakdown), and a client that books them one by one (an invoice item a
/// jurisdiction) is given cents that sum to what the line charged.
pub(crate) fn entry_cents(line: &LineRecord) -> Vec<Decimal> {
    let exact: Vec<Decimal> = line.jurisdictions.iter().map(|j| j.tax_due).collect();
    whole_cents(&exact, line.tax_amount)
}

/// What a line owes at one level: its taxable amount (the line's amount when an entry of
/// the level taxed it), the sum of the rates of those entries, and their tax due in whole
/// cents (minor units), from `cents`, the line's [`entry_cents`].
pub(crate) fn level_of(
    line: &LineRecord,
    cents: &[Decimal],
    level: Level,
) -> (Decimal, Decimal, Decimal) {
    let mut rate = Decimal::ZERO;
    let mut due = Decimal::ZERO;
    for (j, cents) in line
        .jurisdictions
        .iter()
        .zip(cents)
        .filter(|(j, _)| Level::of(j) == level && applies(j))
    {
        rate += j.tax_rate;
        due += cents;
    }
    let taxable = if rate.is_zero() {
        Decimal::ZERO
    } else {
        line.amount_excluding_tax
    };
    (taxable, rate, due)
}

/// The combined rate of a line: the rates of every entry that taxed it.
pub(crate) fn line_rate(line: &LineRecord) -> Decimal {
    line.jurisdictions
        .iter()
        .filter(|j| applies(j))
        .map(|j| j.tax_rate)
        .sum()
}

/// Whether the place taxes a line of its code at all, whatever its amount: an entry of
/// it has a rate the seller collects (a delivery charge of $0 owes nothing, yet its
/// place may tax freight).
pub(crate) fn taxable_here(line: &LineRecord) -> bool {
    line.jurisdictions
        .iter()
        .any(|j| j.tax_rate > Decimal::ZERO && j.rate_type != crate::NO_COLLECTION_RATE_TYPE)
}

/// Whether a line was taxed at all.
pub(crate) fn taxed(line: &LineRecord) -> bool {
    line.jurisdictions.iter().any(applies)
}

/// The levy notes on a calculation worth a dialect's message: the coverage when it is not
/// `FULL`, the place note when it is not `NONE`, the taxability when it is not `KNOWN`,
/// and every entry the seller does not collect.
pub(crate) fn notes(c: &crate::calculate::Calculated) -> Vec<String> {
    let mut out = Vec::new();
    if c.coverage != levy_core::Coverage::Full {
        out.push(format!(
            "Levy-Coverage {}: the answer may not hold every local tax of the place",
            c.coverage.as_str()
        ));
    }
    if c.place != "NONE" {
        out.push(format!("Levy-Place {}", c.place));
    }
    if let Some(stale) = &c.stale {
        out.push(stale.clone());
    }
    if c.taxability != "KNOWN" {
        out.push(format!("Levy-Taxability {}", c.taxability));
    }
    for line in &c.record.lines {
        for j in &line.jurisdictions {
            if j.note.starts_with(crate::NOT_REGISTERED_NOTE) {
                out.push(j.note.clone());
            }
        }
    }
    out.dedup();
    out
}
