//! `POST /tax/calculations`: request -> address/IP -> location -> sale -> tax, stored
//! with one INSERT and rendered in the request's version.

use levy_core::{
    Address, AnyTable, AutomaticTax, CalcError, Currency, Customer, CustomerType, Date, Exemption,
    IpMode, Location, ResolveError, Sale, SaleLine, TaxCodeId, TaxId, MAX_AMOUNT_MINOR,
    MAX_QUANTITY,
};
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::json::{num, Obj, MAX_STRING};
use crate::render::{self, LineKind};
use crate::router::Ctx;
use crate::store::{CalculationRecord, JurisdictionRecord, LineRecord, PlaceRecord, TaxIdRecord};
use crate::ApiVersion;

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
    pub(crate) customer_type: Option<String>,
    pub(crate) fallback_type: Option<String>,
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
}

/// Reads an `address_*` object. `with_type` allows `address_type` (customer addresses).
/// Postal code, province and country must be present; street and city may be left out.
pub(crate) fn read_address(mut o: Obj<'_>, with_type: bool) -> Result<Address, ApiError> {
    let line1 = o.opt_str("address_line_1", MAX_STRING)?.unwrap_or("");
    let line2 = o.opt_str("address_line_2", MAX_STRING)?.unwrap_or("");
    let city = o.opt_str("address_city", MAX_STRING)?.unwrap_or("");
    let region = o.req_str("address_province", 16)?;
    let postal = o.req_str("address_postal_code", 16)?;
    let country = o.req_str("address_country", 8)?;
    if with_type {
        if let Some(t) = o.opt_str("address_type", 16)? {
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
    Ok(Address {
        line1: line1.into(),
        line2: line2.into(),
        city: city.into(),
        region: region.into(),
        postal_code: postal.into(),
        country: country.into(),
    })
}

/// The latest `transacted_at` accepted: 9999-12-31T23:59:59Z, the last second a
/// four-digit year can name.
const MAX_TRANSACTED_AT: i64 = 253_402_300_799;

fn positive(field: &str, what: &str, received: impl ToString) -> ApiError {
    ApiError::field(
        ErrorKind::PositiveNumberRequired,
        field,
        format!("{field} must be {what}"),
        what,
        received.to_string(),
    )
}

fn too_large(field: &str, max: impl ToString, received: impl ToString) -> ApiError {
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
    pub customer_type: Option<String>,
    pub fallback_type: Option<String>,
    pub tax_ids: Vec<TaxIdRecord>,
    pub address: Option<Address>,
    pub ip: Option<IpInput>,
}

/// Reads `customer` of a calculation body in version `v`.
pub(crate) fn read_customer(root: &mut Obj<'_>, v: ApiVersion) -> Result<CustomerInput, ApiError> {
    let mut c = root.req_obj("customer")?;
    let customer_id = c.opt_str("id", MAX_STRING)?.map(str::to_string);
    let (customer_type, tax_ids) = if v >= ApiVersion::V2025_05_12 {
        (
            super::customers::customer_type(&mut c, "type")?,
            super::customers::tax_ids(&mut c, "tax_ids")?,
        )
    } else {
        (None, Vec::new())
    };
    let address = c
        .opt_obj("address")?
        .map(|o| read_address(o, true))
        .transpose()?;
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
        (
            ip,
            super::customers::customer_type(&mut c, "fallback_type")?,
        )
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

fn parse(ctx: &Ctx<'_>) -> Result<Input, ApiError> {
    let v = ctx.version;
    super::body(ctx, |root| {
        let CustomerInput {
            customer_id,
            customer_type,
            fallback_type,
            tax_ids,
            address,
            ip,
        } = read_customer(root, v)?;
        let OrderInput {
            currency,
            tax_included,
            automatic_tax,
            lines,
        } = read_order(root, v)?;

        let origin = root
            .opt_obj("origin_address")?
            .map(|o| read_address(o, false))
            .transpose()?;
        if origin.is_none() && v >= ApiVersion::V2025_05_12 {
            return Err(ApiError::field(
                ErrorKind::MissingOriginAddress,
                "origin_address",
                "origin_address (where the goods ship from) is required from API version 2025-05-12",
                "object",
                "nothing",
            ));
        }
        let transacted_at = if v >= ApiVersion::V2026_03_01 {
            match root.opt_int("transacted_at")? {
                Some(t) if t < 0 => {
                    return Err(positive(
                        "transacted_at",
                        "Unix seconds at or after 1970-01-01",
                        t,
                    ))
                }
                Some(t) if t > MAX_TRANSACTED_AT => {
                    return Err(too_large("transacted_at", MAX_TRANSACTED_AT, t))
                }
                t => t,
            }
        } else {
            None
        };
        let metadata = root.opt_metadata("metadata")?;
        Ok(Input {
            customer_id,
            customer_type,
            fallback_type,
            tax_ids,
            address,
            ip,
            currency,
            tax_included,
            automatic_tax,
            lines,
            origin_country: origin
                .as_ref()
                .map(|o| o.country.trim().to_ascii_uppercase()),
            origin,
            transacted_at,
            metadata,
            per_unit: false,
        })
    })
}

/// The interface's error for a resolution failure, naming the field.
fn resolve_error(e: &ResolveError) -> ApiError {
    let field = match e {
        ResolveError::InvalidCountry(_) => "customer.address.address_country",
        ResolveError::MalformedPostal(..) | ResolveError::ZipStateMismatch { .. } => {
            "customer.address.address_postal_code"
        }
        ResolveError::Unsupported(_) => "customer.address",
        _ => "customer.ip.value",
    };
    let mut err = ApiError::of(ErrorKind::of_resolve(e), e.to_string());
    err.field = Some(field.to_string());
    err.expected = Some("a place the rate table covers".to_string());
    err.received = Some(match e {
        ResolveError::InvalidCountry(s)
        | ResolveError::Unsupported(s)
        | ResolveError::InvalidIp(s) => s.clone(),
        ResolveError::MalformedPostal(p, _) => p.clone(),
        ResolveError::ZipStateMismatch { postal, given, .. } => format!("{postal} in {given}"),
        ResolveError::IpResolutionFailed(s)
        | ResolveError::IpInsufficientUs(s)
        | ResolveError::IpInsufficientCa(s) => s.clone(),
        _ => String::new(),
    });
    err
}

fn calc_error(e: &CalcError) -> ApiError {
    match e {
        CalcError::Quantity { line } => {
            let f = format!("order_details.line_items[{line}].quantity");
            positive(&f, &format!("between 1 and {MAX_QUANTITY}"), "out of range")
        }
        CalcError::Amount { line } => {
            let f = format!("order_details.line_items[{line}].amount");
            positive(
                &f,
                &format!("between 0 and {MAX_AMOUNT_MINOR}"),
                "out of range",
            )
        }
        CalcError::TaxCode { line, code } => ApiError::field(
            ErrorKind::InvalidTaxCode,
            &format!("order_details.line_items[{line}]"),
            e.to_string(),
            "a tax code of the rate table",
            code.to_string(),
        ),
        other => ApiError::of(ErrorKind::Error, other.to_string()),
    }
}

fn locate(table: &AnyTable, input: &Input, date: Date) -> Result<Location, ApiError> {
    let by_ip = |ip: &IpInput| {
        table
            .resolve_ip(&ip.value, ip.mode, date)
            .map_err(|e| resolve_error(&e))
    };
    match (&input.address, &input.ip) {
        (Some(a), ip) => match table.resolve(a, date) {
            Ok(loc) => Ok(loc),
            Err(e) => match ip {
                // The address comes first; the IP is the fallback.
                Some(ip) => by_ip(ip).map_err(|_| resolve_error(&e)),
                None => Err(resolve_error(&e)),
            },
        },
        (None, Some(ip)) => by_ip(ip),
        (None, None) => Err(ApiError::missing("customer.address", "object")),
    }
}

fn jurisdictions(
    table: &AnyTable,
    line: &levy_core::LineTax,
    exemptions: &[Exemption],
) -> Vec<JurisdictionRecord> {
    line.jurisdictions
        .iter()
        .map(|j| {
            let jur = table.jurisdiction(j.jurisdiction);
            JurisdictionRecord {
                tax_rate: j.rate,
                tax_due: j.tax_due,
                fee: j.fee,
                rate_type: table
                    .rule(j.rule)
                    .map(|r| r.rate_type().to_string())
                    .unwrap_or_default(),
                jurisdiction_name: jur.map(|x| x.name().to_string()).unwrap_or_default(),
                jurisdiction_code: jur.map(|x| x.code().to_string()).unwrap_or_default(),
                authority_name: jur.map(|x| x.authority().to_string()).unwrap_or_default(),
                authority_type: jur
                    .map(|x| x.level().as_str().to_string())
                    .unwrap_or_default(),
                tax_type: jur
                    .map(|x| x.tax_type().as_str().to_string())
                    .unwrap_or_default(),
                note: j.note.as_str().to_string(),
                rule_id: j.rule.0,
                exemption_certificate_id: j
                    .exemption
                    .and_then(|i| exemptions.get(i))
                    .map(|e| e.reference.clone()),
            }
        })
        .collect()
}

/// `POST /tax/calculations`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let input = parse(ctx)?;
    let record = compute(ctx, &input, crate::ids::new_id("calc_"))?;
    crate::limits::check_quota(ctx.service, ctx.scope)?;
    ctx.service.store.insert_calculation(ctx.scope, &record)?;
    Ok(render(&record, ctx.version, ctx.testmode()))
}

/// The certificates that exempt a stored customer on the day of a sale: live mode only,
/// approved (`active` or `expiring`), in force at `at`. One exemption per covered region.
fn certificate_exemptions(
    ctx: &Ctx<'_>,
    customer: Option<&crate::store::CustomerRecord>,
    at: i64,
) -> Result<Vec<Exemption>, ApiError> {
    let Some(c) = customer.filter(|c| ctx.scope.live && !c.is_tax_exempt) else {
        return Ok(Vec::new());
    };
    let certs = ctx
        .service
        .store
        .certificates(&ctx.scope.account, Some(&c.id))?;
    Ok(certs
        .iter()
        .filter(|cert| super::certificates::in_force(cert, at))
        .flat_map(|cert| {
            cert.jurisdictions.iter().map(|j| Exemption {
                country: j.country.clone(),
                region: j.region.clone(),
                reference: cert.id.clone(),
            })
        })
        .collect())
}

/// Calculates `input` into a record with id `id` (not stored).
pub(crate) fn compute(
    ctx: &Ctx<'_>,
    input: &Input,
    id: String,
) -> Result<CalculationRecord, ApiError> {
    let store = &ctx.service.store;
    let now = crate::ids::now();

    // Reads first (each a short read of the ledger), then the calculation with no lock held.
    let stored_customer = match &input.customer_id {
        Some(id) => store.customer(ctx.scope, id, false)?,
        None => None,
    };
    let mut products = Vec::with_capacity(input.lines.len());
    for (i, l) in input.lines.iter().enumerate() {
        products.push(match &l.product {
            Some(id) => Some(store.product(ctx.scope, id)?.ok_or_else(|| {
                ApiError::field(
                    ErrorKind::LineProductNotFound,
                    &format!("order_details.line_items[{i}].reference_product_id"),
                    format!("no product with reference_product_id {id:?}"),
                    "the reference_product_id of a registered product",
                    id,
                )
            })?),
            None => None,
        });
    }

    let table = ctx.service.table.load();
    let mut codes: Vec<TaxCodeId> = Vec::with_capacity(input.lines.len());
    for (i, (l, p)) in input.lines.iter().zip(&products).enumerate() {
        let category = p
            .as_ref()
            .map(|p| p.product_category.as_str())
            .or(l.category.as_deref())
            .unwrap_or("");
        codes.push(table.category(category).ok_or_else(|| {
            let field = if p.is_some() {
                format!("order_details.line_items[{i}].reference_product_id")
            } else {
                format!("order_details.line_items[{i}].product_category")
            };
            ApiError::field(
                ErrorKind::InvalidProductCategory,
                &field,
                format!("{category:?} is not a product category of the rate table"),
                "a product category of the rate table",
                category,
            )
        })?);
    }

    let transacted_at = input.transacted_at.unwrap_or(now);
    let date = Date::from_unix_seconds(transacted_at);
    let location = locate(&table, input, date)?;

    // The stored customer's type wins; then the request's; then the fallback type.
    let customer_type = stored_customer
        .as_ref()
        .and_then(|c| c.kind.clone())
        .or_else(|| input.customer_type.clone())
        .or_else(|| {
            if stored_customer.is_none() {
                input.fallback_type.clone()
            } else {
                None
            }
        })
        .unwrap_or_else(|| "CONSUMER".to_string());
    let tax_ids = if input.tax_ids.is_empty() {
        stored_customer
            .as_ref()
            .map(|c| c.tax_ids.clone())
            .unwrap_or_default()
    } else {
        input.tax_ids.clone()
    };
    let exemptions = certificate_exemptions(ctx, stored_customer.as_ref(), transacted_at)?;
    let rounding = match ctx.req.header(crate::ROUNDING_HEADER) {
        None => levy_core::Rounding::Line,
        Some(v) => levy_core::Rounding::parse(v).ok_or_else(|| {
            ApiError::field(
                ErrorKind::InvalidHeader,
                crate::ROUNDING_HEADER,
                format!("{} must be `line` or `invoice`", crate::ROUNDING_HEADER),
                "line or invoice",
                v,
            )
        })?,
    };
    let sale = Sale {
        currency: input.currency,
        tax_included: input.tax_included,
        customer: Customer {
            exempt: stored_customer.as_ref().is_some_and(|c| c.is_tax_exempt),
            kind: if customer_type == "BUSINESS" {
                CustomerType::Business
            } else {
                CustomerType::Consumer
            },
            tax_ids: tax_ids
                .iter()
                .map(|t| TaxId {
                    kind: t.kind.clone(),
                    value: t.value.clone(),
                })
                .collect(),
            exemptions: exemptions.clone(),
        },
        automatic_tax: input.automatic_tax,
        date,
        origin_country: input.origin_country.clone(),
        rounding,
        lines: input
            .lines
            .iter()
            .zip(&codes)
            .map(|(l, &tax_code)| SaleLine {
                amount: l.amount,
                quantity: l.quantity,
                per_unit: input.per_unit,
                tax_code,
            })
            .collect(),
    };
    // The seller's place, for states that source a sale within the state at the origin.
    let origin = input.origin.as_ref().map(|a| table.resolve(a, date));
    let calc = table
        .calculate_from(
            origin.as_ref().and_then(|o| o.as_ref().ok()),
            &location,
            &sale,
        )
        .map_err(|e| calc_error(&e))?;
    // Whether the answer holds the location's local taxes, and which address decided
    // them: levy headers beside the interface's body, which stays as specified.
    ctx.set_header(crate::COVERAGE_HEADER, calc.coverage.as_str());
    ctx.set_header(crate::ROUNDING_HEADER, calc.rounding.as_str());
    ctx.set_header(
        crate::SOURCING_HEADER,
        match origin {
            Some(Err(_)) => "DESTINATION; origin-unresolved",
            _ => calc.sourcing.as_str(),
        },
    );

    let lines = calc
        .lines
        .iter()
        .zip(input.lines.iter().zip(&products))
        .map(|(lt, (li, p))| LineRecord {
            line_item_id: crate::ids::new_id("li_"),
            reference_product_id: li.product.clone(),
            reference_product_name: p.as_ref().map(|p| p.reference_product_name.clone()),
            reference_line_item_id: li.reference_line_item_id.clone(),
            product_tax_code: table
                .tax_code_name(lt.tax_code)
                .unwrap_or_default()
                .to_string(),
            quantity: lt.quantity,
            amount_excluding_tax: lt.amount_excluding_tax,
            tax_amount: lt.tax,
            amount_including_tax: lt.amount_including_tax,
            jurisdictions: jurisdictions(&table, lt, &exemptions),
        })
        .collect();
    let a = &location.address_used;
    let record = CalculationRecord {
        id,
        created_at: now,
        expires_at: now + VALIDITY_SECONDS,
        transacted_at,
        currency: input.currency.code().to_string(),
        tax_included: input.tax_included,
        automatic_tax: match input.automatic_tax {
            AutomaticTax::Auto => "auto",
            AutomaticTax::Disabled => "disabled",
        }
        .to_string(),
        customer_id: input.customer_id.clone(),
        customer_type,
        place: PlaceRecord {
            status: location.status.as_str().to_string(),
            precision: location.precision.as_str().to_string(),
            source: location.source.as_str().to_string(),
            line1: a.line1.clone(),
            line2: a.line2.clone(),
            city: a.city.clone(),
            region: a.region.clone(),
            postal_code: a.postal_code.clone(),
            country: a.country.clone(),
        },
        lines,
        total_tax: calc.total_tax,
        total_excluding_tax: calc.total_excluding_tax,
        total_including_tax: calc.total_including_tax,
        table_hash: calc.table_hash_hex(),
        metadata: input.metadata.clone(),
    };
    Ok(record)
}

/// A calculation in the version's shape.
pub(crate) fn render(c: &CalculationRecord, v: ApiVersion, testmode: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("object".into(), json!("tax.calculation"));
    m.insert("customer_currency_code".into(), json!(c.currency));
    m.insert("tax_included_in_amount".into(), json!(c.tax_included));
    m.insert(
        "line_items".into(),
        Value::Array(
            c.lines
                .iter()
                .map(|l| render::line(l, v, LineKind::Calculation))
                .collect(),
        ),
    );
    m.insert("total_tax_amount".into(), num(c.total_tax));
    m.insert(
        "total_amount_excluding_tax".into(),
        num(c.total_excluding_tax),
    );
    m.insert(
        "total_amount_including_tax".into(),
        num(c.total_including_tax),
    );
    m.insert("expires_at".into(), json!(c.expires_at));
    m.insert("testmode".into(), json!(testmode));
    m.insert(
        "metadata".into(),
        c.metadata.clone().map_or(json!({}), Value::Object),
    );
    let mut customer = Map::new();
    customer.insert(
        "id".into(),
        c.customer_id.clone().map_or(Value::Null, Value::String),
    );
    if v >= ApiVersion::V2025_05_12 {
        customer.insert("type".into(), json!(c.customer_type));
        m.insert("automatic_tax".into(), json!(c.automatic_tax));
        m.insert("address_resolution_status".into(), json!(c.place.status));
        m.insert(
            "address_used".into(),
            json!({
                "address_line_1": c.place.line1,
                "address_line_2": c.place.line2,
                "address_city": c.place.city,
                "address_province": c.place.region,
                "address_postal_code": c.place.postal_code,
                "address_country": c.place.country,
            }),
        );
    }
    m.insert("customer".into(), Value::Object(customer));
    if v >= ApiVersion::V2026_03_01 {
        m.insert("location_source".into(), json!(c.place.source));
        m.insert("resolution_precision".into(), json!(c.place.precision));
        m.insert("transacted_at".into(), json!(c.transacted_at));
    }
    // levy extension: the table that produced the numbers.
    m.insert("table_hash".into(), json!(c.table_hash));
    Value::Object(m)
}
