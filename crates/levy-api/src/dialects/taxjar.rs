//! The TaxJar v2 request shape, under `/v2/`: `POST /v2/taxes`, `GET /v2/rates/{zip}`,
//! `GET /v2/categories`, `GET /v2/nexus/regions`. Built from TaxJar's public API reference
//! (developers.taxjar.com/api/reference) and its SDKs (PyPI `taxjar`), for
//! interoperability: amounts in dollars (major units), rates as fractions, each answer an
//! object of one key (`tax`, `rate`, `categories`, `regions`), errors
//! `{"error", "detail", "status"}`.
//!
//! A taxes call is a levy calculation ([`crate::resources::calculations::answer`]),
//! recorded in the ledger as one: its lines are the order's `line_items` (amount
//! `quantity × unit_price − discount`) or, without them, one line of `amount`; the
//! `shipping` is one more line of levy's `SHIPPING` code, so that the place's own rule for
//! delivery charges decides `freight_taxable`. Collection follows the account's
//! registrations (`has_nexus` is false where it has none active in the destination's
//! state), not `nexus_addresses`. The answer's `levy_calculation_id`, `levy_coverage` and
//! `levy_messages` say what levy knows beside TaxJar's fields.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::{codes, decimal, string, Dollars, Level};
use crate::calculate::Calculated;
use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::read::{Input, LineInput};
use crate::render::Num;
use crate::store::LineRecord;
use levy_core::{Address, AutomaticTax, Currency};
use serde::Serialize;

/// The reason phrase TaxJar's errors carry as `error`, by status.
fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// An error in TaxJar's shape: `{"error": <reason>, "detail": <message>, "status": <code>}`,
/// the field at fault and levy's own code beside them.
pub(crate) fn error_body(e: &ApiError) -> Value {
    let status = e.status();
    let mut body = json!({
        "error": reason(status),
        "detail": e.message,
        "status": status,
        "levy_code": e.kind.name(),
    });
    if let Some(field) = &e.field {
        body["levy_field"] = Value::String(super::field_name(super::Dialect::TaxJar, field));
    }
    body
}

/// The currency of a TaxJar destination country: levy answers the shape for the United
/// States and Canada, whose sales TaxJar's `tax` describes by state (province), county,
/// city and district.
fn currency(country: &str) -> Result<Currency, ApiError> {
    let code = match country {
        "US" => "USD",
        "CA" => "CAD",
        other => {
            return Err(ApiError::field(
                ErrorKind::Error,
                "to_country",
                format!(
                    "levy answers the TaxJar request shape for US and CA destinations; \
                     {other:?} is neither (use POST /tax/calculations)"
                ),
                "US | CA",
                other,
            ))
        }
    };
    Currency::from_code(code)
        .ok_or_else(|| ApiError::of(ErrorKind::InternalError, "currency missing"))
}

/// The `from_`/`to_` address of a TaxJar body (`to` or `from`); `None` when it names no
/// country, state or zip.
fn address(body: &Value, side: &str) -> Result<Option<Address>, ApiError> {
    let get = |part: &str| -> Result<String, ApiError> {
        let name = format!("{side}_{part}");
        Ok(string(body, &name, &name)?
            .unwrap_or_default()
            .trim()
            .to_string())
    };
    let (country, state, zip) = (get("country")?, get("state")?, get("zip")?);
    if country.is_empty() && state.is_empty() && zip.is_empty() {
        return Ok(None);
    }
    Ok(Some(Address {
        line1: get("street")?,
        line2: String::new(),
        city: get("city")?,
        region: state.to_ascii_uppercase(),
        postal_code: zip,
        country: country.to_ascii_uppercase(),
    }))
}

/// What a TaxJar taxes body becomes: levy's input, each line's TaxJar id, the shipping,
/// and the messages of the translation (unknown codes, fields levy decides otherwise).
pub(super) struct Order {
    pub(super) input: Input,
    /// Whether the last of the input's lines is the shipping.
    pub(super) shipping_line: bool,
    ids: Vec<Option<String>>,
    shipping: Decimal,
    pub(super) messages: Vec<String>,
}

/// The id TaxJar's breakdown names the shipping line by, inside levy's lines.
pub(super) const SHIPPING_LINE: &str = "shipping";

pub(super) fn order(ctx: &Ctx<'_>, body: &Value) -> Result<Order, ApiError> {
    let mut messages = Vec::new();
    let to = address(body, "to")?.ok_or_else(|| {
        ApiError::missing(
            "to_country",
            "the destination: to_country, to_zip, to_state",
        )
    })?;
    if to.country.is_empty() {
        return Err(ApiError::missing("to_country", "a two-letter country code"));
    }
    let currency = currency(&to.country)?;
    let origin = address(body, "from")?;
    let shipping = decimal(body, "shipping", "shipping")?
        .ok_or_else(|| ApiError::missing("shipping", "number (0 for none)"))?;
    super::bounded(
        super::to_minor(shipping),
        Decimal::ONE,
        ("shipping", "shipping"),
    )?;
    if let Some(t) = string(body, "exemption_type", "exemption_type")? {
        if t != "non_exempt" {
            return Err(ApiError::field(
                ErrorKind::Error,
                "exemption_type",
                format!(
                    "exemption_type {t:?} is not taken through this shape yet: record the \
                     customer's exemption certificate with levy, or send non_exempt"
                ),
                "non_exempt",
                t.as_str(),
            ));
        }
    }
    if body.get("nexus_addresses").is_some_and(|v| !v.is_null()) {
        messages.push(
            "nexus_addresses was not used: levy collects where the account's registrations \
             (POST /tax/registrations) say, or everywhere when it has none"
                .to_string(),
        );
    }
    let customer_id = string(body, "customer_id", "customer_id")?;
    let table = ctx.service.table.load();
    let known = |name: &str| table.category(name).is_some();
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    match body.get("line_items") {
        Some(Value::Array(items)) if !items.is_empty() => {
            if items.len() > crate::read::MAX_LINES - 1 {
                return Err(ApiError::field(
                    ErrorKind::TooManyItems,
                    "line_items",
                    format!(
                        "line_items holds more than {} items",
                        crate::read::MAX_LINES - 1
                    ),
                    "fewer items",
                    items.len().to_string(),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                let at = |name: &str| format!("line_items[{i}].{name}");
                if !item.is_object() {
                    return Err(super::bad_field(
                        &format!("line_items[{i}]"),
                        format!("line_items[{i}] must be an object"),
                        "object",
                        item,
                    ));
                }
                let quantity = decimal(item, "quantity", &at("quantity"))?.unwrap_or(Decimal::ONE);
                let unit = decimal(item, "unit_price", &at("unit_price"))?.unwrap_or_default();
                let discount = decimal(item, "discount", &at("discount"))?.unwrap_or_default();
                // quantity × unit_price − discount, refused rather than overflowing.
                let amount = unit
                    .checked_mul(quantity)
                    .and_then(|gross| gross.checked_sub(discount))
                    .unwrap_or(Decimal::MAX);
                if amount.is_sign_negative() && !amount.is_zero() {
                    return Err(crate::read::positive(
                        &at("unit_price"),
                        "at least the line's discount (quantity × unit_price − discount ≥ 0)",
                        amount,
                    ));
                }
                let (minor, quantity) = super::bounded(
                    super::to_minor(amount),
                    quantity,
                    (&at("unit_price"), &at("quantity")),
                )?;
                let id = string(item, "id", &at("id"))?;
                let label = id.clone().unwrap_or_else(|| (i + 1).to_string());
                let ptc = string(item, "product_tax_code", &at("product_tax_code"))?;
                let (category, note) = codes::levy_code(
                    &codes::codes().taxjar,
                    "TaxJar",
                    ptc.as_deref(),
                    &label,
                    &known,
                );
                messages.extend(note);
                lines.push(LineInput {
                    amount: minor,
                    quantity,
                    product: None,
                    category: Some(category.to_string()),
                    reference_line_item_id: id.clone(),
                });
                ids.push(id);
            }
        }
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            let amount = decimal(body, "amount", "amount")?.ok_or_else(|| {
                ApiError::missing("amount", "number, or line_items with the order's items")
            })?;
            let (minor, _) =
                super::bounded(super::to_minor(amount), Decimal::ONE, ("amount", "amount"))?;
            lines.push(LineInput {
                amount: minor,
                quantity: 1,
                product: None,
                category: Some("GENERAL_MERCHANDISE".to_string()),
                reference_line_item_id: None,
            });
            ids.push(None);
        }
        Some(other) => {
            return Err(super::bad_field(
                "line_items",
                "line_items must be an array",
                "array",
                other,
            ))
        }
    }
    // The shipping, always a line (0 when there is none), so that the place's rule says
    // whether freight is taxable; refused when the table cannot tax it.
    let shipping_line = known("SHIPPING");
    if shipping_line {
        lines.push(LineInput {
            amount: super::to_minor(shipping),
            quantity: 1,
            product: None,
            category: Some("SHIPPING".to_string()),
            reference_line_item_id: Some(SHIPPING_LINE.to_string()),
        });
    } else if shipping.is_zero() {
        messages.push(
            "the rate table in use has no SHIPPING code: freight_taxable is not known, and \
             answered false"
                .to_string(),
        );
    } else {
        return Err(ApiError::field(
            ErrorKind::Error,
            "shipping",
            "the rate table in use has no SHIPPING code, so levy cannot tax shipping: send \
             shipping 0, or use a table with one",
            "0",
            shipping.to_string(),
        ));
    }
    Ok(Order {
        shipping_line,
        input: Input {
            customer_id,
            customer_type: None,
            fallback_type: None,
            tax_ids: Vec::new(),
            address: Some(to),
            ip: None,
            currency,
            tax_included: false,
            automatic_tax: AutomaticTax::Auto,
            lines,
            origin_country: origin.as_ref().map(|o| o.country.clone()),
            origin,
            transacted_at: None,
            metadata: None,
            per_unit: false,
            rounding: ctx.asked(crate::ROUNDING_HEADER),
            exchange_rate: ctx.asked(crate::EXCHANGE_RATE_HEADER),
            seller: None,
            delivery: true,
        },
        ids,
        shipping,
        messages,
    })
}

/// One line of the breakdown (an item, or the shipping): the line's amounts at each level.
#[derive(Serialize)]
struct LineBreakdown<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<std::borrow::Cow<'a, str>>,
    taxable_amount: Dollars,
    tax_collectable: Dollars,
    combined_tax_rate: Num,
    state_taxable_amount: Dollars,
    state_sales_tax_rate: Num,
    state_amount: Dollars,
    county_taxable_amount: Dollars,
    county_tax_rate: Num,
    county_amount: Dollars,
    city_taxable_amount: Dollars,
    city_tax_rate: Num,
    city_amount: Dollars,
    special_district_taxable_amount: Dollars,
    special_tax_rate: Num,
    special_district_amount: Dollars,
    /// A country's own tax (VAT, GST), where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    country_taxable_amount: Option<Dollars>,
    #[serde(skip_serializing_if = "Option::is_none")]
    country_tax_rate: Option<Num>,
    #[serde(skip_serializing_if = "Option::is_none")]
    country_tax_collectable: Option<Dollars>,
}

impl<'a> LineBreakdown<'a> {
    /// The breakdown of `line`, whose entries' tax in whole cents is `cents`
    /// ([`super::entry_cents`]).
    fn of(line: &LineRecord, cents: &[Decimal], id: Option<std::borrow::Cow<'a, str>>) -> Self {
        let taxable = if super::taxed(line) {
            line.amount_excluding_tax
        } else {
            Decimal::ZERO
        };
        let [state, county, city, special, country] = [
            Level::State,
            Level::County,
            Level::City,
            Level::Special,
            Level::Country,
        ]
        .map(|level| super::level_of(line, cents, level));
        let has_country = !country.1.is_zero();
        LineBreakdown {
            id,
            taxable_amount: Dollars(taxable),
            tax_collectable: Dollars(line.tax_amount),
            combined_tax_rate: Num(super::line_rate(line)),
            state_taxable_amount: Dollars(state.0),
            state_sales_tax_rate: Num(state.1),
            state_amount: Dollars(state.2),
            county_taxable_amount: Dollars(county.0),
            county_tax_rate: Num(county.1),
            county_amount: Dollars(county.2),
            city_taxable_amount: Dollars(city.0),
            city_tax_rate: Num(city.1),
            city_amount: Dollars(city.2),
            special_district_taxable_amount: Dollars(special.0),
            special_tax_rate: Num(special.1),
            special_district_amount: Dollars(special.2),
            country_taxable_amount: has_country.then_some(Dollars(country.0)),
            country_tax_rate: has_country.then_some(Num(country.1)),
            country_tax_collectable: has_country.then_some(Dollars(country.2)),
        }
    }
}

/// The order's breakdown: its totals at each level, the shipping's and each item's.
#[derive(Serialize)]
struct Breakdown<'a> {
    taxable_amount: Dollars,
    tax_collectable: Dollars,
    combined_tax_rate: Num,
    state_taxable_amount: Dollars,
    state_tax_rate: Num,
    state_tax_collectable: Dollars,
    county_taxable_amount: Dollars,
    county_tax_rate: Num,
    county_tax_collectable: Dollars,
    city_taxable_amount: Dollars,
    city_tax_rate: Num,
    city_tax_collectable: Dollars,
    special_district_taxable_amount: Dollars,
    special_tax_rate: Num,
    special_district_tax_collectable: Dollars,
    #[serde(skip_serializing_if = "Option::is_none")]
    shipping: Option<LineBreakdown<'a>>,
    line_items: Vec<LineBreakdown<'a>>,
}

/// `jurisdictions`: the place's country, state and, where known, county and city.
#[derive(Serialize)]
struct Jurisdictions<'a> {
    country: &'a str,
    state: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    county: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    city: Option<&'a str>,
}

/// The `tax` object.
#[derive(Serialize)]
struct Tax<'a> {
    order_total_amount: Dollars,
    shipping: Num,
    taxable_amount: Dollars,
    amount_to_collect: Dollars,
    rate: Num,
    has_nexus: bool,
    freight_taxable: bool,
    tax_source: &'static str,
    jurisdictions: Jurisdictions<'a>,
    breakdown: Breakdown<'a>,
    levy_calculation_id: &'a str,
    levy_coverage: &'static str,
    levy_messages: Vec<String>,
}

/// The answer: `{"tax": …}`.
#[derive(Serialize)]
struct TaxAnswer<'a> {
    tax: Tax<'a>,
}

/// The name of the first entry of `level` on any line, for `jurisdictions`.
fn name_at(c: &Calculated, level: Level) -> Option<&str> {
    c.record
        .lines
        .iter()
        .flat_map(|l| l.jurisdictions.iter())
        .find(|j| Level::of(j) == level)
        .map(|j| j.jurisdiction_name.as_str())
}

/// Whether the seller collects in the destination: no entry of the sale is one it does
/// not collect for want of a registration ([`crate::NO_COLLECTION_RATE_TYPE`]) at the
/// state level.
fn has_nexus(c: &Calculated) -> bool {
    !c.record
        .lines
        .iter()
        .flat_map(|l| l.jurisdictions.iter())
        .any(|j| {
            j.rate_type == crate::NO_COLLECTION_RATE_TYPE
                && matches!(Level::of(j), Level::State | Level::Country)
        })
}

/// The `tax` object of a calculation, written straight to its serializer.
fn render(c: &Calculated, order: &Order) -> Result<Reply, ApiError> {
    use std::borrow::Cow;
    let lines = &c.record.lines;
    let (items, shipping_line) = if order.shipping_line {
        lines.split_at(lines.len().saturating_sub(1))
    } else {
        (&lines[..], &lines[lines.len()..])
    };
    let order_taxable: Decimal = lines
        .iter()
        .filter(|l| super::taxed(l))
        .map(|l| l.amount_excluding_tax)
        .sum();
    let rate = lines.iter().map(super::line_rate).max().unwrap_or_default();
    // Each line's entries in whole cents, once: the order's levels and each line's.
    let cents: Vec<Vec<Decimal>> = lines.iter().map(super::entry_cents).collect();
    let (item_cents, shipping_cents) = cents.split_at(items.len());
    // Per level over the order: taxable amounts and tax due summed, the highest rate.
    let [state, county, city, special] = [Level::State, Level::County, Level::City, Level::Special]
        .map(|level| {
            lines.iter().zip(&cents).fold(
                (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO),
                |(t, r, d), (l, lc)| {
                    let (lt, lr, ld) = super::level_of(l, lc, level);
                    (t + lt, r.max(lr), d + ld)
                },
            )
        });
    let breakdown = Breakdown {
        taxable_amount: Dollars(order_taxable),
        tax_collectable: Dollars(c.record.total_tax),
        combined_tax_rate: Num(rate),
        state_taxable_amount: Dollars(state.0),
        state_tax_rate: Num(state.1),
        state_tax_collectable: Dollars(state.2),
        county_taxable_amount: Dollars(county.0),
        county_tax_rate: Num(county.1),
        county_tax_collectable: Dollars(county.2),
        city_taxable_amount: Dollars(city.0),
        city_tax_rate: Num(city.1),
        city_tax_collectable: Dollars(city.2),
        special_district_taxable_amount: Dollars(special.0),
        special_tax_rate: Num(special.1),
        special_district_tax_collectable: Dollars(special.2),
        shipping: shipping_line
            .first()
            .zip(shipping_cents.first())
            .map(|(s, sc)| LineBreakdown::of(s, sc, None)),
        line_items: items
            .iter()
            .zip(item_cents)
            .zip(&order.ids)
            .enumerate()
            .map(|(i, ((l, lc), id))| {
                let id = match id {
                    Some(id) => Cow::Borrowed(id.as_str()),
                    None => Cow::Owned((i + 1).to_string()),
                };
                LineBreakdown::of(l, lc, Some(id))
            })
            .collect(),
    };
    let mut messages = order.messages.clone();
    messages.extend(super::notes(c));
    Reply::json(&TaxAnswer {
        tax: Tax {
            order_total_amount: Dollars(c.record.total_excluding_tax),
            shipping: Num(order.shipping),
            taxable_amount: Dollars(order_taxable),
            amount_to_collect: Dollars(c.record.total_tax),
            rate: Num(rate),
            has_nexus: has_nexus(c),
            freight_taxable: shipping_line.first().is_some_and(super::taxable_here),
            tax_source: match c.sourcing {
                "ORIGIN" | "MODIFIED_ORIGIN" => "origin",
                _ => "destination",
            },
            jurisdictions: Jurisdictions {
                country: &c.record.place.country,
                state: &c.record.place.region,
                county: name_at(c, Level::County),
                city: name_at(c, Level::City),
            },
            breakdown,
            levy_calculation_id: &c.record.id,
            levy_coverage: c.coverage.as_str(),
            levy_messages: messages,
        },
    })
}

/// `POST /v2/taxes`: the tax to collect for an order, calculated and recorded as levy's
/// `POST /tax/calculations` would.
pub(crate) fn taxes(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = super::body_object(ctx.req)?;
    let order = order(ctx, &body)?;
    crate::resources::calculations::answer(ctx, &order.input, |c| render(c, &order))
}

/// `GET /v2/rates/{zip}` (`country`, `state`, `city`, `street` in the query): the rates of
/// the place, as levy calculates $100.00 of general merchandise delivered there (a lookup:
/// nothing is stored, [`crate::resources::calculations::look_up`]): a rate of a band that
/// $100 does not reach is not in it, and a rate that applies to some products only is not
/// either. As every calculation,
/// it collects where the account's registrations say: where it has some, none active in
/// the place, the rates are zero and `levy_messages` says why.
pub(crate) fn rates(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let zip = postal_code(&ctx.params[0], "zip")?;
    let mut q = Map::new();
    for (k, v) in ctx.query_params(&["country", "state", "city", "street"])? {
        q.insert(format!("to_{k}"), Value::String(v.to_string()));
    }
    let country = q
        .get("to_country")
        .and_then(Value::as_str)
        .unwrap_or("US")
        .to_ascii_uppercase();
    let to = Address {
        line1: q
            .get("to_street")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        line2: String::new(),
        city: q
            .get("to_city")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        region: q
            .get("to_state")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_uppercase(),
        postal_code: zip.clone(),
        country: country.clone(),
    };
    let (input, shipping_known) = rate_sale(ctx, to, &country)?;
    crate::resources::calculations::look_up(ctx, &input, |c| {
        let line = &c.record.lines[0];
        let cents = super::entry_cents(line);
        let rate_of = |level| super::num(super::level_of(line, &cents, level).1);
        let mut rate = Map::new();
        rate.insert("zip".into(), Value::String(zip.clone()));
        rate.insert(
            "country".into(),
            Value::String(c.record.place.country.clone()),
        );
        rate.insert("country_rate".into(), rate_of(Level::Country));
        rate.insert("state".into(), Value::String(c.record.place.region.clone()));
        rate.insert("state_rate".into(), rate_of(Level::State));
        rate.insert(
            "county".into(),
            name_at(c, Level::County).map_or(Value::Null, Value::from),
        );
        rate.insert("county_rate".into(), rate_of(Level::County));
        rate.insert(
            "city".into(),
            name_at(c, Level::City).map_or(Value::Null, Value::from),
        );
        rate.insert("city_rate".into(), rate_of(Level::City));
        rate.insert("combined_district_rate".into(), rate_of(Level::Special));
        rate.insert("combined_rate".into(), super::num(super::line_rate(line)));
        rate.insert(
            "freight_taxable".into(),
            Value::Bool(c.record.lines.get(1).is_some_and(super::taxable_here)),
        );
        rate.insert(
            "levy_coverage".into(),
            Value::String(c.coverage.as_str().to_string()),
        );
        let mut messages = super::notes(c);
        if !shipping_known {
            messages.push(
                "the rate table in use has no SHIPPING code: freight_taxable is not known, \
                 and answered false"
                    .to_string(),
            );
        }
        rate.insert("levy_messages".into(), json!(messages));
        Reply::json(&json!({ "rate": rate }))
    })
}

/// A postal code of a rates lookup (`field` names it): 3 to 10 letters, digits, spaces or
/// hyphens.
pub(crate) fn postal_code(given: &str, field: &str) -> Result<String, ApiError> {
    let zip = given.trim();
    let well_formed = (3..=10).contains(&zip.len())
        && zip
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-');
    if !well_formed {
        return Err(ApiError::field(
            ErrorKind::MalformedAddress,
            field,
            format!("{field} must be a postal code: 3 to 10 letters, digits, spaces or hyphens"),
            "a postal code",
            zip,
        ));
    }
    Ok(zip.to_string())
}

/// The sale a rates lookup calculates: $100.00 of general merchandise delivered to `to`,
/// and $0 of shipping (for `freight_taxable`) when the table has a `SHIPPING` code, which
/// the second value says.
pub(crate) fn rate_sale(
    ctx: &Ctx<'_>,
    to: Address,
    country: &str,
) -> Result<(Input, bool), ApiError> {
    let mut lines = vec![LineInput {
        amount: Decimal::from(10_000),
        quantity: 1,
        product: None,
        category: Some("GENERAL_MERCHANDISE".to_string()),
        reference_line_item_id: None,
    }];
    // $0 of shipping, for freight_taxable (unknown, and said so, on a table without it).
    let shipping_known = ctx.service.table.load().category("SHIPPING").is_some();
    if shipping_known {
        lines.push(LineInput {
            amount: Decimal::ZERO,
            quantity: 1,
            product: None,
            category: Some("SHIPPING".to_string()),
            reference_line_item_id: Some(SHIPPING_LINE.to_string()),
        });
    }
    let input = Input {
        customer_id: None,
        customer_type: None,
        fallback_type: None,
        tax_ids: Vec::new(),
        address: Some(to),
        ip: None,
        currency: currency(country)?,
        tax_included: false,
        automatic_tax: AutomaticTax::Auto,
        lines,
        origin_country: None,
        origin: None,
        transacted_at: None,
        metadata: None,
        per_unit: false,
        rounding: None,
        exchange_rate: None,
        seller: None,
        delivery: false,
    };
    Ok((input, shipping_known))
}

/// `GET /v2/categories`: the TaxJar product tax codes levy maps
/// (`data/dialect-tax-codes.toml`), each with the levy code it is taxed as.
pub(crate) fn categories(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let list: Vec<Value> = codes::codes()
        .taxjar
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "product_tax_code": c.code,
                "description": c.description,
                "levy_tax_code": c.levy,
            })
        })
        .collect();
    Ok(Reply::tree(json!({ "categories": list })))
}

/// US states and Canadian provinces by code, for `nexus/regions`.
const REGION_NAMES: &[(&str, &str, &str)] = &[
    ("US", "AL", "Alabama"),
    ("US", "AK", "Alaska"),
    ("US", "AZ", "Arizona"),
    ("US", "AR", "Arkansas"),
    ("US", "CA", "California"),
    ("US", "CO", "Colorado"),
    ("US", "CT", "Connecticut"),
    ("US", "DE", "Delaware"),
    ("US", "DC", "District of Columbia"),
    ("US", "FL", "Florida"),
    ("US", "GA", "Georgia"),
    ("US", "HI", "Hawaii"),
    ("US", "ID", "Idaho"),
    ("US", "IL", "Illinois"),
    ("US", "IN", "Indiana"),
    ("US", "IA", "Iowa"),
    ("US", "KS", "Kansas"),
    ("US", "KY", "Kentucky"),
    ("US", "LA", "Louisiana"),
    ("US", "ME", "Maine"),
    ("US", "MD", "Maryland"),
    ("US", "MA", "Massachusetts"),
    ("US", "MI", "Michigan"),
    ("US", "MN", "Minnesota"),
    ("US", "MS", "Mississippi"),
    ("US", "MO", "Missouri"),
    ("US", "MT", "Montana"),
    ("US", "NE", "Nebraska"),
    ("US", "NV", "Nevada"),
    ("US", "NH", "New Hampshire"),
    ("US", "NJ", "New Jersey"),
    ("US", "NM", "New Mexico"),
    ("US", "NY", "New York"),
    ("US", "NC", "North Carolina"),
    ("US", "ND", "North Dakota"),
    ("US", "OH", "Ohio"),
    ("US", "OK", "Oklahoma"),
    ("US", "OR", "Oregon"),
    ("US", "PA", "Pennsylvania"),
    ("US", "RI", "Rhode Island"),
    ("US", "SC", "South Carolina"),
    ("US", "SD", "South Dakota"),
    ("US", "TN", "Tennessee"),
    ("US", "TX", "Texas"),
    ("US", "UT", "Utah"),
    ("US", "VT", "Vermont"),
    ("US", "VA", "Virginia"),
    ("US", "WA", "Washington"),
    ("US", "WV", "West Virginia"),
    ("US", "WI", "Wisconsin"),
    ("US", "WY", "Wyoming"),
    ("US", "PR", "Puerto Rico"),
    ("US", "GU", "Guam"),
    ("US", "VI", "U.S. Virgin Islands"),
    ("US", "AS", "American Samoa"),
    ("US", "MP", "Northern Mariana Islands"),
    ("CA", "AB", "Alberta"),
    ("CA", "BC", "British Columbia"),
    ("CA", "MB", "Manitoba"),
    ("CA", "NB", "New Brunswick"),
    ("CA", "NL", "Newfoundland and Labrador"),
    ("CA", "NS", "Nova Scotia"),
    ("CA", "NT", "Northwest Territories"),
    ("CA", "NU", "Nunavut"),
    ("CA", "ON", "Ontario"),
    ("CA", "PE", "Prince Edward Island"),
    ("CA", "QC", "Quebec"),
    ("CA", "SK", "Saskatchewan"),
    ("CA", "YT", "Yukon"),
];

/// `GET /v2/nexus/regions`: where the account collects, from its `sales_tax` registrations
/// active now (the account's own, not a merchant's), one region each, ordered by country
/// and region.
pub(crate) fn nexus_regions(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.query_params(&[])?;
    let now = crate::clock::now();
    let mut found: Vec<(String, String)> = Vec::new();
    let filter = crate::store::RegistrationFilter::default();
    let page = crate::resources::registrations::PAGE;
    let mut cursor: Option<String> = None;
    loop {
        let records =
            ctx.service
                .store
                .list_registrations(ctx.scope, cursor.as_deref(), &filter, page)?;
        for r in &records {
            if r.kind == crate::store::RegistrationKind::SalesTax
                && r.merchant_id.is_none()
                && r.active_at(now)
            {
                found.push((r.country.clone(), r.region.clone()));
            }
        }
        if records.len() < page {
            break;
        }
        cursor = records.last().map(|r| r.id.clone());
    }
    found.sort();
    found.dedup();
    let regions: Vec<Value> = found
        .iter()
        .map(|(country, region)| {
            let name = REGION_NAMES
                .iter()
                .find(|(c, r, _)| c == country && r == region)
                .map_or(region.as_str(), |(_, _, n)| n);
            json!({
                "country_code": country,
                "country": match country.as_str() { "US" => "United States", "CA" => "Canada", other => other },
                "region_code": region,
                "region": if region.is_empty() { "" } else { name },
            })
        })
        .collect();
    Ok(Reply::tree(json!({ "regions": regions })))
}
