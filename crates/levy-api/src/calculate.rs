//! The calculation pipeline that calculations and platform calculations share: address or
//! IP -> location -> sale -> tax, into a record (not stored), and its rendering in the
//! request's version.

use levy_core::{
    AnyTable, AutomaticTax, CalcError, Customer, CustomerType, Date, Exemption, Location,
    ResolveError, Sale, SaleLine, TaxCodeId, TaxId, MAX_AMOUNT_MINOR, MAX_QUANTITY,
};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::json::num;
use crate::read::{positive, Input, IpInput, VALIDITY_SECONDS};
use crate::render::{self, LineKind};
use crate::router::Ctx;
use crate::store::{
    CalculationReads, CalculationRecord, CertificateRecord, JurisdictionRecord, LineRecord,
    PlaceRecord,
};
use crate::ApiVersion;

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

/// The exemptions a stored customer's certificates give on the day of a sale: approved
/// (`active` or `expiring`) and in force at `at`; one exemption per covered region. The
/// certificates were read for live mode and a customer not exempt everywhere only
/// ([`crate::store::Store::calculation_reads`]).
fn certificate_exemptions(certificates: &[CertificateRecord], at: i64) -> Vec<Exemption> {
    certificates
        .iter()
        .filter(|cert| in_force(cert, at))
        .flat_map(|cert| {
            cert.jurisdictions.iter().map(|j| Exemption {
                country: j.country.clone(),
                region: j.region.clone(),
                reference: cert.id.clone(),
            })
        })
        .collect()
}

/// A calculation's record and what the response says about it beside the body.
pub(crate) struct Calculated {
    /// The record (not stored).
    pub(crate) record: CalculationRecord,
    /// `Levy-Coverage`: whether the answer holds the location's local taxes.
    pub(crate) coverage: &'static str,
    /// `Levy-Rounding`: the rounding applied.
    pub(crate) rounding: &'static str,
    /// `Levy-Sourcing`: the sourcing rule applied.
    pub(crate) sourcing: &'static str,
}

impl Calculated {
    /// Sets the levy headers of the answer (beside the interface's body, which stays as
    /// specified).
    pub(crate) fn set_headers(&self, ctx: &Ctx<'_>) {
        ctx.set_header(crate::COVERAGE_HEADER, self.coverage);
        ctx.set_header(crate::ROUNDING_HEADER, self.rounding);
        ctx.set_header(crate::SOURCING_HEADER, self.sourcing);
    }
}

/// What a calculation reads from the ledger for `input`, in one read.
pub(crate) fn reads(ctx: &Ctx<'_>, input: &Input) -> Result<CalculationReads, ApiError> {
    let products: Vec<Option<&str>> = input.lines.iter().map(|l| l.product.as_deref()).collect();
    ledger_reads(ctx, input.customer_id.as_deref(), &products)
}

/// [`crate::store::Store::calculation_reads`] for a customer id and each line's product
/// (a platform calculation's order and fee lines together). Most sales name no stored
/// customer and no product: then nothing is read, and no store is asked.
pub(crate) fn ledger_reads(
    ctx: &Ctx<'_>,
    customer_id: Option<&str>,
    products: &[Option<&str>],
) -> Result<CalculationReads, ApiError> {
    if customer_id.is_none() && products.iter().all(Option::is_none) {
        return Ok(CalculationReads {
            products: vec![None; products.len()],
            ..CalculationReads::default()
        });
    }
    Ok(ctx
        .service
        .store
        .calculation_reads(ctx.scope, customer_id, products)?)
}

/// Calculates `input` on `table` into a record with id `id` (not stored), from what was
/// read from the ledger: no I/O, no clock (`now` is given).
pub(crate) fn compute(
    table: &AnyTable,
    input: &Input,
    reads: &CalculationReads,
    id: String,
    now: i64,
) -> Result<Calculated, ApiError> {
    let stored_customer = &reads.customer;
    let mut products = Vec::with_capacity(input.lines.len());
    for (i, l) in input.lines.iter().enumerate() {
        products.push(match &l.product {
            Some(id) => Some(
                reads
                    .products
                    .get(i)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| {
                        ApiError::field(
                            ErrorKind::LineProductNotFound,
                            &format!("order_details.line_items[{i}].reference_product_id"),
                            format!("no product with reference_product_id {id:?}"),
                            "the reference_product_id of a registered product",
                            id,
                        )
                    })?,
            ),
            None => None,
        });
    }

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
    let location = locate(table, input, date)?;

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
    let exemptions = certificate_exemptions(&reads.certificates, transacted_at);
    let rounding = match input.rounding.as_deref() {
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
    // them: said in levy's headers.
    let (coverage, rounding) = (calc.coverage.as_str(), calc.rounding.as_str());
    let sourcing = match origin {
        Some(Err(_)) => "DESTINATION; origin-unresolved",
        _ => calc.sourcing.as_str(),
    };

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
            jurisdictions: jurisdictions(table, lt, &exemptions),
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
    Ok(Calculated {
        record,
        coverage,
        rounding,
        sourcing,
    })
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

/// Whether a certificate exempts a sale made at `at`: approved, and `valid_from <= at <
/// expires_at` (that is, `active` or `expiring` at that time).
pub(crate) fn in_force(c: &CertificateRecord, at: i64) -> bool {
    c.review_status == "active" && c.valid_from <= at && c.expires_at.is_none_or(|e| at < e)
}
