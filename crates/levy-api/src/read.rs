//! What resources share to read a request: the body and its JSON fields (customers,
//! addresses, orders, lines, tax ids) and the stored records a request names. Resource
//! modules import from here, never from each other.

use levy_core::{Address, AutomaticTax, Currency, IpMode, MAX_AMOUNT_MINOR, MAX_QUANTITY};
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::json::{Obj, MAX_STRING};
use crate::store::{CustomerKind, TaxIdRecord};
use crate::ApiVersion;

/// Reads a POST body as a JSON object, runs `f` on it and checks that every field was taken.
pub(crate) fn body<T>(
    ctx: &Ctx<'_>,
    f: impl FnOnce(&mut Obj<'_>) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    ctx.query_params(&[])?;
    let map = crate::json::parse_body(&ctx.req.body)?;
    let mut obj = Obj::root(&map);
    let out = f(&mut obj)?;
    obj.finish()?;
    Ok(out)
}

/// A `*_NOT_FOUND` error naming the id.
pub(crate) fn not_found(kind: ErrorKind, what: &str, field: &str, id: &str) -> ApiError {
    ApiError::field(
        kind,
        field,
        format!("no {what} with id {id:?}"),
        format!("the id of an existing {what}"),
        id,
    )
}

/// Whether an e-mail address is plausible, as the OpenAPI documents' `format: email`
/// says (RFC 5321's mailbox, ASCII): one `@`; a local part of 1 to 64 characters, no
/// spaces or controls; a domain of two or more labels of letters, digits and hyphens
/// (RFC 1035: none empty, none starting or ending with a hyphen); at most 254 characters.
pub(crate) fn valid_email(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let label = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    !local.is_empty() && local.len() <= 64 && domain.contains('.') && domain.split('.').all(label)
}

/// Reads `CONSUMER` or `BUSINESS`.
pub(crate) fn customer_type(
    obj: &mut Obj<'_>,
    name: &str,
) -> Result<Option<CustomerKind>, ApiError> {
    match obj.opt_str(name, 16)? {
        None => Ok(None),
        Some(t) if CustomerKind::parse(t).is_some() => Ok(CustomerKind::parse(t)),
        Some(other) => {
            let field = obj.path(name);
            Err(ApiError::field(
                ErrorKind::InvalidCustomerType,
                &field,
                format!("{field} must be CONSUMER or BUSINESS"),
                "CONSUMER | BUSINESS",
                other,
            ))
        }
    }
}

/// Reads `tax_ids`: an array of `{type: VAT | GST | EIN, value}`.
pub(crate) fn tax_ids(obj: &mut Obj<'_>, name: &str) -> Result<Vec<TaxIdRecord>, ApiError> {
    let Some(items) = obj.opt_array(name)? else {
        return Ok(Vec::new());
    };
    if items.len() > 20 {
        return Err(ApiError::field(
            ErrorKind::TooManyItems,
            &obj.path(name),
            "at most 20 tax ids",
            "at most 20",
            items.len().to_string(),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut t = obj.element(name, i, item)?;
        let kind = t.req_str("type", 8)?;
        if !matches!(kind, "VAT" | "GST" | "EIN") {
            let field = t.path("type");
            return Err(ApiError::field(
                ErrorKind::InvalidTaxId,
                &field,
                format!("{field} must be VAT, GST or EIN"),
                "VAT | GST | EIN",
                kind,
            ));
        }
        let value = t.req_str("value", 64)?;
        t.finish()?;
        out.push(TaxIdRecord {
            kind: kind.to_string(),
            value: value.to_string(),
        });
    }
    Ok(out)
}

/// How long a calculation's rates stay valid for a transaction: 24 hours.
pub(crate) const VALIDITY_SECONDS: i64 = 24 * 3600;

/// Most line items in one calculation.
pub(crate) const MAX_LINES: usize = 1000;

/// Currencies accepted from 2025-05-12 (2024-09-01 accepts USD and CAD only).
pub(crate) const CURRENCIES: [&str; 32] = [
    "USD", "CAD", "EUR", "GBP", "AUD", "NZD", "JPY", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK",
    "HUF", "RON", "BGN", "ISK", "MXN", "BRL", "SGD", "HKD", "KRW", "INR", "ZAR", "AED", "ILS",
    "TRY", "CNY", "TWD", "THB", "MYR", "PHP",
];

/// One line of a calculation body.
pub(crate) struct LineInput {
    pub(crate) amount: Decimal,
    pub(crate) quantity: u32,
    pub(crate) product: Option<String>,
    pub(crate) category: Option<String>,
    pub(crate) reference_line_item_id: Option<String>,
}

/// `customer.ip`.
pub(crate) struct IpInput {
    pub(crate) value: String,
    pub(crate) mode: IpMode,
}

/// A calculation request, read.
pub(crate) struct Input {
    pub(crate) customer_id: Option<String>,
    pub(crate) customer_type: Option<CustomerKind>,
    pub(crate) fallback_type: Option<CustomerKind>,
    pub(crate) tax_ids: Vec<TaxIdRecord>,
    pub(crate) address: Option<Address>,
    pub(crate) ip: Option<IpInput>,
    pub(crate) currency: Currency,
    pub(crate) tax_included: bool,
    pub(crate) automatic_tax: AutomaticTax,
    pub(crate) lines: Vec<LineInput>,
    pub(crate) origin_country: Option<String>,
    /// The ship-from address, which decides the taxes of a sale within a state that
    /// sources such sales at the origin.
    pub(crate) origin: Option<Address>,
    pub(crate) transacted_at: Option<i64>,
    pub(crate) metadata: Option<Map<String, Value>>,
    /// Whether line amounts are unit prices (platform calculations).
    pub(crate) per_unit: bool,
    /// The `Levy-Rounding` request header, as sent (checked when calculating).
    pub(crate) rounding: Option<String>,
    /// The `Levy-Exchange-Rate` request header, as sent (checked when calculating).
    pub(crate) exchange_rate: Option<String>,
    /// The seller whose registrations decide where `auto` collects: a platform
    /// calculation's merchant (`merch_…`), `None` for the account itself.
    pub(crate) seller: Option<String>,
    /// Whether the sale is a retail delivery (the customer's address is a `shipping`
    /// address), which owes the destination state's per-order delivery fee.
    pub(crate) delivery: bool,
}

/// Reads an `address_*` object. `with_type` allows `address_type` (customer addresses).
/// Postal code, province and country must be present; street and city may be left out.
pub(crate) fn read_address(o: Obj<'_>, with_type: bool) -> Result<Address, ApiError> {
    read_typed_address(o, with_type).map(|(a, _)| a)
}

/// [`read_address`], with whether the address is a `shipping` address (the goods are
/// delivered there).
fn read_typed_address(mut o: Obj<'_>, with_type: bool) -> Result<(Address, bool), ApiError> {
    let mut shipping = false;
    let line1 = o.opt_str("address_line_1", MAX_STRING)?.unwrap_or("");
    let line2 = o.opt_str("address_line_2", MAX_STRING)?.unwrap_or("");
    let city = o.opt_str("address_city", MAX_STRING)?.unwrap_or("");
    let region = o.req_str("address_province", 16)?;
    let postal = o.req_str("address_postal_code", 16)?;
    let country = o.req_str("address_country", 8)?;
    if with_type {
        if let Some(t) = o.opt_str("address_type", 16)? {
            shipping = t == "shipping";
            if !matches!(t, "shipping" | "billing") {
                let field = o.path("address_type");
                return Err(ApiError::field(
                    ErrorKind::IncorrectType,
                    &field,
                    format!("{field} must be shipping or billing"),
                    "shipping | billing",
                    t,
                ));
            }
        }
    }
    o.finish()?;
    let address = Address {
        line1: line1.into(),
        line2: line2.into(),
        city: city.into(),
        region: region.into(),
        postal_code: postal.into(),
        country: country.into(),
    };
    Ok((address, shipping))
}

/// The latest `transacted_at` accepted: 9999-12-31T23:59:59Z, the last second a
/// four-digit year can name.
pub(crate) const MAX_TRANSACTED_AT: i64 = 253_402_300_799;

pub(crate) fn positive(field: &str, what: &str, received: impl ToString) -> ApiError {
    ApiError::field(
        ErrorKind::PositiveNumberRequired,
        field,
        format!("{field} must be {what}"),
        what,
        received.to_string(),
    )
}

/// Unix seconds a request gives in `field`, checked the one way every field of time is:
/// from 1970-01-01 (`POSITIVE_NUMBER_REQUIRED` before) to the end of year 9999
/// ([`MAX_TRANSACTED_AT`]; `NUMBER_TOO_LARGE` after).
pub(crate) fn unix_seconds(field: &str, t: i64) -> Result<i64, ApiError> {
    if t < 0 {
        return Err(positive(field, "Unix seconds at or after 1970-01-01", t));
    }
    if t > MAX_TRANSACTED_AT {
        return Err(too_large(field, MAX_TRANSACTED_AT, t));
    }
    Ok(t)
}

/// [`unix_seconds`] of a field that may be absent.
pub(crate) fn opt_unix_seconds(field: &str, t: Option<i64>) -> Result<Option<i64>, ApiError> {
    t.map(|t| unix_seconds(field, t)).transpose()
}

pub(crate) fn too_large(field: &str, max: impl ToString, received: impl ToString) -> ApiError {
    ApiError::field(
        ErrorKind::NumberTooLarge,
        field,
        format!("{field} must be at most {}", max.to_string()),
        format!("at most {}", max.to_string()),
        received.to_string(),
    )
}

fn line(o: &mut Obj<'_>, default_category: Option<&str>) -> Result<LineInput, ApiError> {
    let amount = o
        .opt_decimal("amount")?
        .ok_or_else(|| ApiError::missing(&o.path("amount"), "number"))?;
    if amount.is_sign_negative() && !amount.is_zero() {
        return Err(positive(&o.path("amount"), "zero or more", amount));
    }
    if amount > Decimal::from(MAX_AMOUNT_MINOR) {
        return Err(too_large(&o.path("amount"), MAX_AMOUNT_MINOR, amount));
    }
    let quantity = match o.opt_int("quantity")? {
        None => 1,
        Some(q) if q < 1 => return Err(positive(&o.path("quantity"), "a positive integer", q)),
        Some(q) if q > i64::from(MAX_QUANTITY) => {
            return Err(too_large(&o.path("quantity"), MAX_QUANTITY, q))
        }
        Some(q) => q as u32,
    };
    let product = o
        .opt_str("reference_product_id", MAX_STRING)?
        .map(str::to_string);
    let category = o
        .opt_str("product_category", MAX_STRING)?
        .map(str::to_string)
        .or_else(|| {
            product
                .is_none()
                .then(|| default_category.map(str::to_string))
                .flatten()
        });
    match (&product, &category) {
        (None, None) => {
            return Err(ApiError::missing(
                &o.path("product_category"),
                "reference_product_id or product_category",
            ))
        }
        (Some(_), Some(_)) => {
            let field = o.path("product_category");
            return Err(ApiError::field(
                ErrorKind::Error,
                &field,
                "give either reference_product_id or product_category on a line, not both",
                "reference_product_id or product_category",
                "both",
            ));
        }
        _ => {}
    }
    let reference_line_item_id = o
        .opt_str("reference_line_item_id", MAX_STRING)?
        .map(str::to_string);
    Ok(LineInput {
        amount,
        quantity,
        product,
        category,
        reference_line_item_id,
    })
}

/// The buyer part of a calculation body (`customer`).
pub(crate) struct CustomerInput {
    pub customer_id: Option<String>,
    pub customer_type: Option<CustomerKind>,
    pub fallback_type: Option<CustomerKind>,
    pub tax_ids: Vec<TaxIdRecord>,
    pub address: Option<Address>,
    pub ip: Option<IpInput>,
    /// Whether the address is a `shipping` address: the goods are delivered there.
    pub shipping: bool,
}

/// Reads `customer` of a calculation body in version `v`.
pub(crate) fn read_customer(root: &mut Obj<'_>, v: ApiVersion) -> Result<CustomerInput, ApiError> {
    let mut c = root.req_obj("customer")?;
    let customer_id = c.opt_str("id", MAX_STRING)?.map(str::to_string);
    let (customer_type, tax_ids) = if v >= ApiVersion::V2025_05_12 {
        (customer_type(&mut c, "type")?, tax_ids(&mut c, "tax_ids")?)
    } else {
        (None, Vec::new())
    };
    let (address, shipping) = match c.opt_obj("address")? {
        Some(o) => {
            let (a, shipping) = read_typed_address(o, true)?;
            (Some(a), shipping)
        }
        None => (None, false),
    };
    let (ip, fallback_type) = if v >= ApiVersion::V2026_03_01 {
        let ip = match c.opt_obj("ip")? {
            None => None,
            Some(mut o) => {
                let value = o.req_str("value", 64)?.to_string();
                let mode = match o.opt_str("resolution", 16)? {
                    None => IpMode::Strict,
                    Some(m) => IpMode::parse(m).ok_or_else(|| {
                        let field = o.path("resolution");
                        ApiError::field(
                            ErrorKind::IncorrectType,
                            &field,
                            format!("{field} must be strict, zero, approximate or best_effort"),
                            "strict | zero | approximate | best_effort",
                            m,
                        )
                    })?,
                };
                o.finish()?;
                Some(IpInput { value, mode })
            }
        };
        (ip, self::customer_type(&mut c, "fallback_type")?)
    } else {
        (None, None)
    };
    if address.is_none() && ip.is_none() {
        let expected = if v >= ApiVersion::V2026_03_01 {
            "customer.address or customer.ip"
        } else {
            "object"
        };
        c.finish()?;
        return Err(ApiError::missing("customer.address", expected));
    }
    c.finish()?;
    Ok(CustomerInput {
        customer_id,
        customer_type,
        fallback_type,
        tax_ids,
        address,
        ip,
        shipping,
    })
}

/// The order part of a calculation body (`order_details`).
pub(crate) struct OrderInput {
    pub currency: Currency,
    pub tax_included: bool,
    pub automatic_tax: AutomaticTax,
    pub lines: Vec<LineInput>,
}

/// Reads the `line_items` array of `od`: at least one, at most [`MAX_LINES`]. A line with
/// neither product nor category takes `default_category` when one is given.
pub(crate) fn read_lines(
    od: &mut Obj<'_>,
    default_category: Option<&str>,
) -> Result<Vec<LineInput>, ApiError> {
    let items = od
        .opt_array("line_items")?
        .ok_or_else(|| ApiError::missing(&od.path("line_items"), "array"))?;
    if items.is_empty() {
        return Err(ApiError::missing(
            &format!("{}[0]", od.path("line_items")),
            "at least one line item",
        ));
    }
    if items.len() > MAX_LINES {
        return Err(too_large(
            &od.path("line_items"),
            format!("{MAX_LINES} line items"),
            items.len(),
        ));
    }
    let mut lines = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut o = od.element("line_items", i, item)?;
        lines.push(line(&mut o, default_category)?);
        o.finish()?;
    }
    Ok(lines)
}

/// Reads `order_details` of a calculation body in version `v`.
pub(crate) fn read_order(root: &mut Obj<'_>, v: ApiVersion) -> Result<OrderInput, ApiError> {
    let mut od = root.req_obj("order_details")?;
    let code = od.req_str("customer_currency_code", 8)?;
    let allowed: &[&str] = if v >= ApiVersion::V2025_05_12 {
        &CURRENCIES
    } else {
        &CURRENCIES[..2]
    };
    let currency = Currency::from_code(code)
        .filter(|c| allowed.contains(&c.code()))
        .ok_or_else(|| {
            ApiError::field(
                ErrorKind::UnsupportedCurrency,
                "order_details.customer_currency_code",
                format!(
                    "currency {code:?} is not supported in API version {}; use one of {}",
                    v.as_str(),
                    allowed.join(", ")
                ),
                allowed.join(" | "),
                code,
            )
        })?;
    let tax_included = od.opt_bool("tax_included_in_amount")?.unwrap_or(false);
    let automatic_tax = if v >= ApiVersion::V2025_05_12 {
        match od.opt_str("automatic_tax", 16)? {
            None | Some("auto") => AutomaticTax::Auto,
            Some("disabled") => AutomaticTax::Disabled,
            Some(other) => {
                return Err(ApiError::field(
                    ErrorKind::IncorrectType,
                    "order_details.automatic_tax",
                    "order_details.automatic_tax must be auto or disabled",
                    "auto | disabled",
                    other,
                ))
            }
        }
    } else {
        AutomaticTax::Auto
    };
    let lines = read_lines(&mut od, None)?;
    od.finish()?;
    Ok(OrderInput {
        currency,
        tax_included,
        automatic_tax,
        lines,
    })
}

/// `MERCHANT_NOT_FOUND` (404) for `id`.
pub(crate) fn merchant_not_found(id: &str, field: &str) -> ApiError {
    ApiError::field(
        ErrorKind::MerchantNotFound,
        field,
        format!("merchant {id:?} was not found, or belongs to a different test mode"),
        "the merchant id or reference_merchant_id of a merchant of this mode",
        id,
    )
}

/// `MERCHANT_DELETED` (409) for `id`.
pub(crate) fn merchant_deleted(id: &str, field: &str) -> ApiError {
    ApiError::field(
        ErrorKind::MerchantDeleted,
        field,
        format!("merchant {id:?} has been deleted"),
        "an active merchant",
        id,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn emails() {
        assert!(super::valid_email("a@b.co"));
        assert!(super::valid_email("first.last+tag@mail-1.example.co.uk"));
        for bad in [
            "", "a", "a@b", "@b.co", "a@@b.co", "a b@c.co", "a@b..co", "a@.b.co",
            // A domain's labels are letters, digits and hyphens (RFC 1035), as the
            // OpenAPI documents' `format: email` checks them.
            "0@0.com*", "a@b_c.co", "a@-b.co", "a@b-.co", "a@b.co.",
        ] {
            assert!(!super::valid_email(bad), "{bad}");
        }
    }
}
