//! The calculation pipeline that calculations and platform calculations share: address or
//! IP -> location -> sale -> tax, into a record (not stored), and its rendering in the
//! request's version.

use levy_core::quote::{Ip, Order, QuoteError, Quoted, Quoter, UnresolvedOrigin};
use levy_core::{
    AnyTable, AutomaticTax, CalcError, Covers, Customer, CustomerType, Date, Exemption, Level,
    Location, ResolveError, Sale, SaleLine, TaxCodeId, TaxId, MAX_AMOUNT_MINOR, MAX_QUANTITY,
};
use rust_decimal::Decimal;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::read::{positive, Input, VALIDITY_SECONDS};
use crate::render::{self, LineKind, Num};
use crate::store::{
    CalculationReads, CalculationRecord, CertificateRecord, CustomerKind, JurisdictionRecord,
    LineRecord, PlaceRecord, RegistrationKind, RegistrationRecord, ReviewStatus,
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

/// The interface's error for a sale the front door refused.
fn quote_error(e: &QuoteError) -> ApiError {
    match e {
        QuoteError::NoPlace => ApiError::missing("customer.address", "object"),
        QuoteError::Sale(e) => calc_error(e),
        QuoteError::ExchangeRateRequired { .. }
        | QuoteError::PlaceCurrencyUnknown { .. }
        | QuoteError::InvalidExchangeRate(_) => ApiError::field(
            ErrorKind::ExchangeRateRequired,
            crate::EXCHANGE_RATE_HEADER,
            e.to_string(),
            "one unit of the sale's currency in the place's (0.0067)",
            "nothing",
        ),
        QuoteError::BeforeTable { first, date, .. } => ApiError::field(
            ErrorKind::DateBeforeTable,
            "transacted_at",
            e.to_string(),
            format!("a moment on or after {first}"),
            date.to_string(),
        ),
        // The address comes first, the IP is the fallback: the address's error answers.
        other => match other.resolve_error() {
            Some(r) => resolve_error(r),
            None => ApiError::of(ErrorKind::Error, other.to_string()),
        },
    }
}

/// The entries of a line. The first `gaps` of `exemptions` are where the seller does not
/// collect ([`registration_gaps`]): an entry they zeroed that would have been taxed says so,
/// at rate zero, on `date`; one whose rule taxes nothing there reads as it would for a
/// registered seller.
fn jurisdictions(
    table: &AnyTable,
    line: &levy_core::LineTax,
    exemptions: &[Exemption],
    gaps: usize,
    date: Date,
) -> Vec<JurisdictionRecord> {
    line.jurisdictions
        .iter()
        .map(|j| {
            let jur = table.jurisdiction(j.jurisdiction);
            let mut entry = JurisdictionRecord {
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
                    .filter(|i| *i >= gaps)
                    .and_then(|i| exemptions.get(i))
                    .map(|e| e.reference.clone()),
                taxable_base: Some(j.taxable_base),
            };
            if j.exemption.is_some_and(|i| i < gaps) {
                if j.rate.is_zero() && j.fee.is_zero() {
                    // Nothing would be collected here registered or not (a product the
                    // place exempts): the entry says so as it would for a registered
                    // seller, so that it reads as exempt, not as a taxable sale the seller
                    // did not collect on (which counts toward a taxable-sales threshold).
                    entry.note = levy_core::Note::RateFrac.as_str().to_string();
                } else {
                    entry.tax_rate = Decimal::ZERO;
                    entry.tax_due = Decimal::ZERO;
                    entry.fee = Decimal::ZERO;
                    entry.rate_type = NO_COLLECTION_RATE_TYPE.to_string();
                    entry.note = not_registered_note(jur.as_ref(), date);
                }
            }
            entry
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
                covers: Covers::Region,
            })
        })
        .collect()
}

/// A calculation's record and what the response says about it beside the body.
pub(crate) struct Calculated {
    /// The record (not stored).
    pub(crate) record: CalculationRecord,
    /// `Levy-Coverage`: whether the answer holds the location's local taxes.
    pub(crate) coverage: levy_core::Coverage,
    /// `Levy-Rounding`: the rounding applied.
    pub(crate) rounding: &'static str,
    /// `Levy-Sourcing`: the sourcing rule applied.
    pub(crate) sourcing: &'static str,
    /// `Levy-Taxability`: `KNOWN`, or `UNKNOWN; ...` with what the matrix does not know.
    pub(crate) taxability: std::borrow::Cow<'static, str>,
    /// `Levy-Place`: what decided among the places that share the location's ZIP code.
    pub(crate) place: &'static str,
    /// `Levy-Stale-Table`: the input of the table the answer used past its horizon, when
    /// the sale is dated after one.
    pub(crate) stale: Option<String>,
}

impl Calculated {
    /// The levy headers of the answer (beside the interface's body, which stays as
    /// specified).
    pub(crate) fn headers(&self) -> crate::handler::Headers {
        self.headers_of(self.coverage, &self.taxability, self.stale.as_deref())
    }

    /// This calculation's headers with the coverage, taxability and stale input given.
    fn headers_of(
        &self,
        coverage: levy_core::Coverage,
        taxability: &str,
        stale: Option<&str>,
    ) -> crate::handler::Headers {
        let mut h: crate::handler::Headers = vec![
            (crate::COVERAGE_HEADER.into(), coverage.as_str().into()),
            (crate::ROUNDING_HEADER.into(), self.rounding.into()),
            (crate::SOURCING_HEADER.into(), self.sourcing.into()),
            (crate::TAXABILITY_HEADER.into(), taxability.into()),
            (crate::PLACE_HEADER.into(), self.place.into()),
        ];
        if let Some(stale) = stale {
            h.push((crate::STALE_HEADER.into(), stale.into()));
        }
        h
    }

    /// The levy headers of an answer made of this calculation and `other`, of the same
    /// sale (a platform calculation's order and its fee lines): the lesser coverage, what
    /// either's matrix does not know, the first stale input of either; the rounding,
    /// sourcing and place are this one's (the sale's, the same for both).
    pub(crate) fn headers_with(&self, other: &Calculated) -> crate::handler::Headers {
        let taxability = match (&*self.taxability, &*other.taxability) {
            (a, "KNOWN") => std::borrow::Cow::Borrowed(a),
            ("KNOWN", b) => std::borrow::Cow::Borrowed(b),
            (a, b) => std::borrow::Cow::Owned(format!(
                "{a}, {}",
                b.strip_prefix("UNKNOWN; ").unwrap_or(b)
            )),
        };
        let stale = self.stale.as_deref().or(other.stale.as_deref());
        self.headers_of(self.coverage.min(other.coverage), &taxability, stale)
    }
}

/// The `rate_type` of a jurisdiction entry where the seller does not collect: it has
/// `sales_tax` registrations, none of them active there on the sale's date.
pub const NO_COLLECTION_RATE_TYPE: &str = "NO COLLECTION; NO STATE NEXUS";

/// The start of the `note` of such an entry; the rest says where and on which day.
pub const NOT_REGISTERED_NOTE: &str = "NOT_REGISTERED";

/// The places a sale may be taxed in: the destination's country and region, the origin's
/// when it was resolved, and those of every jurisdiction of either (regions may be empty:
/// a country's own).
fn sale_places(
    table: &AnyTable,
    location: &Location,
    origin: Option<&Location>,
) -> Vec<(String, String)> {
    let mut places: Vec<(String, String)> = Vec::new();
    let mut add = |country: &str, region: &str| {
        let place = (country.to_ascii_uppercase(), region.to_ascii_uppercase());
        if !places.contains(&place) {
            places.push(place);
        }
    };
    for loc in std::iter::once(location).chain(origin) {
        let a = table.address_used(loc);
        add(&a.country, &a.region);
        for j in loc.jset.into_iter().flat_map(|s| table.jset(s)) {
            if let Some(jur) = table.jurisdiction(j) {
                if !jur.region().is_empty() {
                    add(jur.country(), jur.region());
                }
            }
        }
    }
    places
}

/// Where the seller does not collect, as exemptions for the engine: the seller's
/// (`seller`: a merchant, or `None` for the account) `sales_tax` registrations active at
/// `at` decide, for each of `places` (`reads` holds those active then, and the kinds the
/// seller has any of). None when the seller has no `sales_tax` registration at all (then
/// it collects everywhere). A place without an active registration of its country and
/// region (or of the whole country) is not collected at all, the country's own taxes
/// included; one whose active registrations all list local jurisdictions collects the
/// region's state-level taxes and those locals only.
pub(crate) fn registration_gaps(
    reads: &CalculationReads,
    seller: Option<&str>,
    at: i64,
    places: &[(String, String)],
) -> Vec<Exemption> {
    if !reads.registered.contains(&RegistrationKind::SalesTax) {
        return Vec::new();
    }
    let mine: Vec<&RegistrationRecord> = reads
        .registrations
        .iter()
        .filter(|r| r.kind == RegistrationKind::SalesTax && r.merchant_id.as_deref() == seller)
        .collect();
    let mut gaps = Vec::new();
    for (country, region) in places {
        let active: Vec<&&RegistrationRecord> = mine
            .iter()
            .filter(|r| {
                r.active_at(at)
                    && r.country == *country
                    && (r.region == *region || r.region.is_empty())
            })
            .collect();
        let covers = if active.is_empty() {
            Covers::RegionAndCountry
        } else if active.iter().all(|r| !r.locals.is_empty()) {
            Covers::LocalsExcept(active.iter().flat_map(|r| r.locals.clone()).collect())
        } else {
            continue;
        };
        gaps.push(Exemption {
            country: country.clone(),
            region: region.clone(),
            reference: NOT_REGISTERED_NOTE.to_string(),
            covers,
        });
    }
    gaps
}

/// Whether the seller (`seller`: a merchant, or `None` for the account) collects the
/// per-order delivery fees of `region` (a US state) at `at`: always when it has no
/// registration at all (it collects everywhere); otherwise only with a
/// `retail_delivery_fee` registration of the state active then (a small seller, which
/// owes no fee, has none).
fn collects_delivery_fees(
    reads: &CalculationReads,
    seller: Option<&str>,
    at: i64,
    region: &str,
) -> bool {
    if reads.registered.is_empty() {
        return true;
    }
    reads.registrations.iter().any(|r| {
        r.merchant_id.as_deref() == seller
            && r.kind == RegistrationKind::RetailDeliveryFee
            && r.active_at(at)
            && r.country == "US"
            && r.region == region
    })
}

/// The note of an entry the seller does not collect: `NOT_REGISTERED: not registered in
/// US-TX on 2026-02-28`, naming the local jurisdiction for a local one.
fn not_registered_note(jur: Option<&levy_core::Jurisdiction<'_>>, date: Date) -> String {
    let Some(j) = jur else {
        return format!("{NOT_REGISTERED_NOTE}: not registered here on {date}");
    };
    let place = if j.region().is_empty() {
        j.country().to_string()
    } else {
        format!("{}-{}", j.country(), j.region())
    };
    match j.level() {
        Level::County | Level::City | Level::District => format!(
            "{NOT_REGISTERED_NOTE}: not registered with {} ({}) in {place} on {date}",
            j.name(),
            j.code()
        ),
        _ => format!("{NOT_REGISTERED_NOTE}: not registered in {place} on {date}"),
    }
}

/// What the caller gives a calculation besides its request and reads: its id, its lines'
/// ids (one a line, in order) and the time, so that [`compute`] reads neither the clock
/// nor the random pool.
#[derive(Clone, Debug)]
pub(crate) struct Stamp {
    /// The calculation's id.
    pub(crate) id: String,
    /// The lines' ids (`li_…`), one a line of the request.
    pub(crate) line_ids: Vec<String>,
    /// Unix seconds: when it was made (and when it is transacted, unless the request says).
    pub(crate) now: i64,
}

impl Stamp {
    /// Fresh ids (`id`, and `li_…` for each of `lines` lines) and the time `now`.
    pub(crate) fn new(id: String, lines: usize, now: i64) -> Stamp {
        Stamp {
            id,
            line_ids: (0..lines).map(|_| crate::ids::new_id("li_")).collect(),
            now,
        }
    }
}

/// The registered product of each line that names one, read with the request.
fn line_products<'r>(
    input: &Input,
    reads: &'r CalculationReads,
) -> Result<Vec<Option<&'r crate::store::ProductRecord>>, ApiError> {
    let mut products = Vec::with_capacity(input.lines.len());
    for (i, l) in input.lines.iter().enumerate() {
        let Some(id) = &l.product else {
            products.push(None);
            continue;
        };
        let found = reads.products.get(i).and_then(Option::as_ref);
        products.push(Some(found.ok_or_else(|| {
            ApiError::field(
                ErrorKind::LineProductNotFound,
                &format!("order_details.line_items[{i}].reference_product_id"),
                format!("no product with reference_product_id {id:?}"),
                "the reference_product_id of a registered product",
                id,
            )
        })?));
    }
    Ok(products)
}

/// Each line's tax code: its product's category, else the line's own.
fn tax_codes(
    table: &AnyTable,
    input: &Input,
    products: &[Option<&crate::store::ProductRecord>],
) -> Result<Vec<TaxCodeId>, ApiError> {
    let mut codes = Vec::with_capacity(input.lines.len());
    for (i, (l, p)) in input.lines.iter().zip(products).enumerate() {
        let category = p
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
    Ok(codes)
}

/// The buyer's type: the stored customer's wins; then the request's; then the fallback
/// type (for a customer not stored); else a consumer.
fn customer_kind(input: &Input, reads: &CalculationReads) -> CustomerKind {
    let stored = reads.customer.as_ref();
    stored
        .and_then(|c| c.kind)
        .or(input.customer_type)
        .or(if stored.is_none() {
            input.fallback_type
        } else {
            None
        })
        .unwrap_or(CustomerKind::Consumer)
}

/// What exempts the sale where: first the places where the seller does not collect (no
/// registration active on the day; they win over a certificate of the same place), then
/// the buyer's certificates in force. Also how many of them are the former.
fn exemptions(
    table: &AnyTable,
    input: &Input,
    reads: &CalculationReads,
    places: (&Location, Option<&Location>),
    at: i64,
) -> (Vec<Exemption>, usize) {
    let seller = input.seller.as_deref();
    let registered = !reads.registered.is_empty();
    let mut exemptions = if input.automatic_tax == AutomaticTax::Auto && registered {
        let places = sale_places(table, places.0, places.1);
        registration_gaps(reads, seller, at, &places)
    } else {
        Vec::new()
    };
    let gaps = exemptions.len();
    exemptions.extend(certificate_exemptions(&reads.certificates, at));
    (exemptions, gaps)
}

/// The request's `Levy-Rounding`: per line (the default) or per invoice.
fn rounding(input: &Input) -> Result<levy_core::Rounding, ApiError> {
    let Some(v) = input.rounding.as_deref() else {
        return Ok(levy_core::Rounding::Line);
    };
    levy_core::Rounding::parse(v).ok_or_else(|| {
        ApiError::field(
            ErrorKind::InvalidHeader,
            crate::ROUNDING_HEADER,
            format!("{} must be `line` or `invoice`", crate::ROUNDING_HEADER),
            "line or invoice",
            v,
        )
    })
}

/// The sale in the front door's words: its buyer (type, tax ids), its place (address and
/// IP), its origin (a failed one taxes at the destination, the interface's rule), its day,
/// its currency and exchange rate, its lines with their tax codes. The exemptions and the
/// delivery wait for the place ([`compute`]).
fn order(
    input: &Input,
    reads: &CalculationReads,
    codes: &[TaxCodeId],
    date: Date,
) -> Result<Order, ApiError> {
    let stored = reads.customer.as_ref();
    let tax_ids = match (input.tax_ids.is_empty(), stored) {
        (true, Some(c)) => &c.tax_ids,
        _ => &input.tax_ids,
    };
    let mut order = Order::new();
    order.address = input.address.clone();
    order.ip = input.ip.as_ref().map(|ip| Ip {
        value: ip.value.clone(),
        mode: ip.mode,
    });
    order.origin = input.origin.clone();
    order.unresolved_origin = UnresolvedOrigin::Destination;
    order.origin_country = input.origin_country.clone();
    order.date = Some(date);
    order.exchange_rate = exchange_rate(input)?;
    order.sale = Sale {
        currency: input.currency,
        tax_included: input.tax_included,
        customer: Customer {
            exempt: stored.is_some_and(|c| c.is_tax_exempt),
            kind: match customer_kind(input, reads) {
                CustomerKind::Business => CustomerType::Business,
                CustomerKind::Consumer => CustomerType::Consumer,
            },
            tax_ids: tax_ids
                .iter()
                .map(|t| TaxId {
                    kind: t.kind.clone(),
                    value: t.value.clone(),
                })
                .collect(),
            exemptions: Vec::new(),
        },
        automatic_tax: input.automatic_tax,
        date,
        origin_country: None,
        rounding: rounding(input)?,
        lines: input
            .lines
            .iter()
            .zip(codes)
            .map(|(l, &tax_code)| SaleLine {
                amount: l.amount,
                quantity: l.quantity,
                per_unit: input.per_unit,
                tax_code,
            })
            .collect(),
    };
    Ok(order)
}

/// The request's `Levy-Exchange-Rate`: one unit of the sale's currency in the place's.
fn exchange_rate(input: &Input) -> Result<Option<Decimal>, ApiError> {
    let Some(v) = input.exchange_rate.as_deref() else {
        return Ok(None);
    };
    levy_core::quote::read::exchange_rate(v)
        .map(Some)
        .map_err(|e| {
            ApiError::field(
                ErrorKind::InvalidHeader,
                crate::EXCHANGE_RATE_HEADER,
                e.message,
                "a positive decimal (0.0067)",
                v,
            )
        })
}

/// The delivery whose per-order fees the seller collects: a retail delivery, under
/// automatic tax, where the seller collects the fees of the place's state.
fn delivery(
    table: &AnyTable,
    input: &Input,
    reads: &CalculationReads,
    location: &Location,
    at: i64,
) -> Option<levy_core::Delivery> {
    let collects = collects_delivery_fees(
        reads,
        input.seller.as_deref(),
        at,
        table.location_region(location),
    );
    (input.delivery && input.automatic_tax == AutomaticTax::Auto && collects).then_some(
        levy_core::Delivery {
            retail: true,
            seller_sales_previous_year: None,
        },
    )
}

/// The record's lines: each line's tax with its ids, product and jurisdiction entries.
fn line_records(
    table: &AnyTable,
    calc: &levy_core::Calculation,
    input: &Input,
    products: &[Option<&crate::store::ProductRecord>],
    (exemptions, gaps): (&[Exemption], usize),
    line_ids: Vec<String>,
    date: Date,
) -> Vec<LineRecord> {
    calc.lines
        .iter()
        .zip(input.lines.iter().zip(products))
        .zip(line_ids)
        .map(|((lt, (li, p)), line_item_id)| LineRecord {
            line_item_id,
            reference_product_id: li.product.clone(),
            reference_product_name: p.map(|p| p.reference_product_name.clone()),
            reference_line_item_id: li.reference_line_item_id.clone(),
            product_tax_code: table
                .tax_code_name(lt.tax_code)
                .unwrap_or_default()
                .to_string(),
            quantity: lt.quantity,
            amount_excluding_tax: lt.amount_excluding_tax,
            tax_amount: lt.tax,
            amount_including_tax: lt.amount_including_tax,
            jurisdictions: jurisdictions(table, lt, exemptions, gaps, date),
        })
        .collect()
}

/// The record of the place the sale was taxed at: the address used, completed from the
/// table (a ZIP's state and city), moved out of the location.
fn place_record(table: &AnyTable, location: &mut Location) -> PlaceRecord {
    let a = table.take_address_used(location);
    PlaceRecord {
        status: location.status.as_str().to_string(),
        precision: location.precision.as_str().to_string(),
        source: location.source.as_str().to_string(),
        line1: a.line1,
        line2: a.line2,
        city: a.city,
        region: a.region,
        postal_code: a.postal_code,
        country: a.country,
    }
}

/// Calculates `input` on `table` into a record stamped `stamp` (not stored), from what
/// was read from the ledger: no I/O, no clock, no random numbers. Its headers come back
/// as data ([`Calculated`]).
pub(crate) fn compute(
    table: &AnyTable,
    input: &Input,
    reads: &CalculationReads,
    stamp: Stamp,
) -> Result<Calculated, ApiError> {
    let products = line_products(input, reads)?;
    let codes = tax_codes(table, input, &products)?;
    let transacted_at = input.transacted_at.unwrap_or(stamp.now);
    let date = Date::from_unix_seconds(transacted_at);
    let mut order = order(input, reads, &codes, date)?;
    let mut quoter = Quoter::new();
    let places = quoter
        .place(table, &mut order)
        .map_err(|e| quote_error(&e))?;
    let (exemptions, gaps) = exemptions(table, input, reads, places, transacted_at);
    order.delivery = delivery(table, input, reads, places.0, transacted_at);
    order.sale.customer.exemptions = exemptions;
    // The places where the seller does not collect decide no fee: its registration does.
    order.fee_exemptions_from = gaps;
    let quoted = quoter.price(table, &order).map_err(|e| quote_error(&e))?;
    let notes = Notes::of(table, &quoted, date);
    let (mut calc, mut location) = (levy_core::Calculation::default(), Location::default());
    quoter.swap_answer(&mut calc, &mut location);
    let exemptions = &order.sale.customer.exemptions;
    let lines = line_records(
        table,
        &calc,
        input,
        &products,
        (exemptions, gaps),
        stamp.line_ids,
        date,
    );
    let made = (stamp.id, stamp.now, transacted_at);
    let record = record(table, input, reads, &calc, &mut location, made, lines);
    Ok(notes.with(record))
}

/// The calculation's record (not stored): `made` is its id, when it was made and when
/// it is transacted.
fn record(
    table: &AnyTable,
    input: &Input,
    reads: &CalculationReads,
    calc: &levy_core::Calculation,
    location: &mut Location,
    (id, now, transacted_at): (String, i64, i64),
    lines: Vec<LineRecord>,
) -> CalculationRecord {
    CalculationRecord {
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
        customer_type: customer_kind(input, reads),
        place: place_record(table, location),
        lines,
        total_tax: calc.total_tax,
        total_excluding_tax: calc.total_excluding_tax,
        total_including_tax: calc.total_including_tax,
        table_hash: calc.table_hash_hex(),
        metadata: input.metadata.clone(),
    }
}

/// What the answer says beside its body, in levy's headers: the coverage, rounding and
/// sourcing of the calculation, what the matrix did not know, and which place of a ZIP
/// code decided.
struct Notes {
    coverage: levy_core::Coverage,
    rounding: &'static str,
    sourcing: &'static str,
    taxability: std::borrow::Cow<'static, str>,
    place: &'static str,
    stale: Option<String>,
}

impl Notes {
    fn of(table: &AnyTable, quoted: &Quoted<'_>, date: Date) -> Notes {
        let calc = quoted.calculation;
        Notes {
            coverage: calc.coverage,
            rounding: calc.rounding.as_str(),
            sourcing: match quoted.origin_error {
                Some(_) => "DESTINATION; origin-unresolved",
                None => calc.sourcing.as_str(),
            },
            taxability: taxability_header(table, calc, date),
            place: table.place_note(quoted.location, date).as_str(),
            stale: calc.stale.map(|s| s.describe(table)),
        }
    }

    fn with(self, record: CalculationRecord) -> Calculated {
        Calculated {
            record,
            coverage: self.coverage,
            rounding: self.rounding,
            sourcing: self.sourcing,
            taxability: self.taxability,
            place: self.place,
            stale: self.stale,
        }
    }
}

/// The `Levy-Taxability` header of a calculation: `KNOWN` (the usual, without allocating),
/// or `UNKNOWN;` and each unknown line's code with the places and levels that lack it.
fn taxability_header(
    table: &levy_core::AnyTable,
    calc: &levy_core::Calculation,
    date: levy_core::Date,
) -> std::borrow::Cow<'static, str> {
    if calc.taxability == levy_core::Taxability::Known {
        return std::borrow::Cow::Borrowed("KNOWN");
    }
    let mut parts: Vec<String> = Vec::new();
    for line in &calc.lines {
        if line.taxability == levy_core::Taxability::Known {
            continue;
        }
        let code = table.tax_code_name(line.tax_code).unwrap_or("?");
        for (place, level) in table.taxability_gaps(line.tax_code, &line.jurisdictions, date) {
            let country = place.split('-').next().unwrap_or("");
            let part = format!("{code} in {place} {}", level.name(country));
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
    }
    std::borrow::Cow::Owned(format!("UNKNOWN; {}", parts.join(", ")))
}

/// A calculation in the version's shape, as a [`Value`] (a platform calculation adds its
/// own fields to it).
pub(crate) fn render(c: &CalculationRecord, v: ApiVersion, testmode: bool) -> Value {
    render::tree(&CalculationView {
        c,
        version: v,
        testmode,
    })
}

/// A calculation in the version's shape, written straight to its serializer, keys in
/// sorted order (see [`render::JurisdictionView`]): what `POST /tax/calculations` answers.
pub(crate) struct CalculationView<'a> {
    /// The calculation.
    pub c: &'a CalculationRecord,
    /// The request's version.
    pub version: ApiVersion,
    /// Whether the request is in test mode.
    pub testmode: bool,
}

struct AddressUsed<'a>(&'a PlaceRecord);

impl Serialize for AddressUsed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("address_city", &p.city)?;
        m.serialize_entry("address_country", &p.country)?;
        m.serialize_entry("address_line_1", &p.line1)?;
        m.serialize_entry("address_line_2", &p.line2)?;
        m.serialize_entry("address_postal_code", &p.postal_code)?;
        m.serialize_entry("address_province", &p.region)?;
        m.end()
    }
}

struct CustomerView<'a>(&'a CalculationRecord, ApiVersion);

impl Serialize for CustomerView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let CustomerView(c, v) = *self;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &c.customer_id)?;
        if v >= ApiVersion::V2025_05_12 {
            m.serialize_entry("type", &c.customer_type)?;
        }
        m.end()
    }
}

struct Lines<'a>(&'a CalculationRecord, ApiVersion);

impl Serialize for Lines<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Lines(c, version) = *self;
        s.collect_seq(c.lines.iter().map(|line| render::LineView {
            line,
            version,
            kind: LineKind::Calculation,
        }))
    }
}

impl Serialize for CalculationView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (c, v) = (self.c, self.version);
        let mut m = s.serialize_map(None)?;
        if v >= ApiVersion::V2025_05_12 {
            m.serialize_entry("address_resolution_status", &c.place.status)?;
            m.serialize_entry("address_used", &AddressUsed(&c.place))?;
            m.serialize_entry("automatic_tax", &c.automatic_tax)?;
        }
        m.serialize_entry("customer", &CustomerView(c, v))?;
        m.serialize_entry("customer_currency_code", &c.currency)?;
        m.serialize_entry("expires_at", &c.expires_at)?;
        m.serialize_entry("id", &c.id)?;
        m.serialize_entry("line_items", &Lines(c, v))?;
        if v >= ApiVersion::V2026_03_01 {
            m.serialize_entry("location_source", &c.place.source)?;
        }
        match &c.metadata {
            Some(meta) => m.serialize_entry("metadata", meta)?,
            None => m.serialize_entry("metadata", &Map::new())?,
        }
        m.serialize_entry("object", "tax.calculation")?;
        if v >= ApiVersion::V2026_03_01 {
            m.serialize_entry("resolution_precision", &c.place.precision)?;
        }
        // levy extension: the table that produced the numbers.
        m.serialize_entry("table_hash", &c.table_hash)?;
        m.serialize_entry("tax_included_in_amount", &c.tax_included)?;
        m.serialize_entry("testmode", &self.testmode)?;
        m.serialize_entry("total_amount_excluding_tax", &Num(c.total_excluding_tax))?;
        m.serialize_entry("total_amount_including_tax", &Num(c.total_including_tax))?;
        m.serialize_entry("total_tax_amount", &Num(c.total_tax))?;
        if v >= ApiVersion::V2026_03_01 {
            m.serialize_entry("transacted_at", &c.transacted_at)?;
        }
        m.end()
    }
}

/// Whether a certificate exempts a sale made at `at`: approved, and `valid_from <= at <
/// expires_at` (that is, `active` or `expiring` at that time).
pub(crate) fn in_force(c: &CertificateRecord, at: i64) -> bool {
    c.review_status == ReviewStatus::Active
        && c.valid_from <= at
        && c.expires_at.is_none_or(|e| at < e)
}

#[cfg(test)]
mod render_tests {
    use super::*;

    /// A calculation record with every optional part a response can show: a stored
    /// customer, a registered product and the client's line id, an exemption certificate
    /// on one entry, metadata.
    fn record() -> CalculationRecord {
        serde_json::from_str(
            r#"{"id":"calc_01a20d0a839b5ad5ce99769d6b965bbd","created_at":1795515122,
            "expires_at":1795601522,"transacted_at":1795515122,"currency":"USD",
            "tax_included":false,"automatic_tax":"auto","customer_id":"cus_1",
            "customer_type":"BUSINESS","place":{"status":"POSTAL_ONLY","precision":"POSTAL",
            "source":"address","line1":"1 Main \"St\"","line2":"","city":"NASHVILLE",
            "region":"TN","postal_code":"37201","country":"US"},"lines":[{"line_item_id":
            "li_1","reference_product_id":"p1","reference_product_name":"Chair",
            "reference_line_item_id":"line-1","product_tax_code":"GENERAL_MERCHANDISE",
            "quantity":2,"amount_excluding_tax":"10000","tax_amount":"700",
            "amount_including_tax":"10700","jurisdictions":[{"tax_rate":"0.07",
            "tax_due":"700","fee":"0","rate_type":"GENERAL STATE SALES TAX",
            "jurisdiction_name":"TENNESSEE","jurisdiction_code":"47","authority_name":
            "TENNESSEE DEPARTMENT OF REVENUE","authority_type":"STATE","tax_type":"SALES",
            "note":"RATE_FRAC","rule_id":254},{"tax_rate":"0.0275","tax_due":"0","fee":"0",
            "rate_type":"TENNESSEE STATE SINGLE ARTICLE TAX","jurisdiction_name":
            "TENNESSEE STATE SINGLE ARTICLE TAX","jurisdiction_code":"47:SAT",
            "authority_name":"TENNESSEE DEPARTMENT OF REVENUE","authority_type":"STATE",
            "tax_type":"SALES","note":"EXEMPT","rule_id":259,
            "exemption_certificate_id":"cert_1"}]}],"total_tax":"700",
            "total_excluding_tax":"10000","total_including_tax":"10700",
            "table_hash":"e070a7316e2078bfd44966e5f3aa009edf234d5aa6064022db238a995466f204",
            "metadata":{"order":"A-1","b":"x"}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_calculation_written_from_its_view_is_the_tree_written() {
        // The answer is written straight from the view; platform calculations and every
        // earlier answer were written from a `Value` tree, whose keys are sorted. Both
        // must be the same bytes, in every version and mode, with every optional part.
        let mut bare = record();
        bare.customer_id = None;
        bare.metadata = None;
        bare.lines[0].jurisdictions[1].exemption_certificate_id = None;
        for c in [record(), bare] {
            for version in ApiVersion::ALL {
                for testmode in [false, true] {
                    let view = CalculationView {
                        c: &c,
                        version,
                        testmode,
                    };
                    let direct = serde_json::to_vec(&view).unwrap();
                    let tree = serde_json::to_vec(&render(&c, version, testmode)).unwrap();
                    assert_eq!(
                        String::from_utf8(direct).unwrap(),
                        String::from_utf8(tree).unwrap(),
                        "{version:?}, testmode {testmode}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_oldest_and_newest_versions_answer_as_specified() {
        // 2024-09-01: the fields of the interface's base version (jurisdiction_name, no
        // address_used, no line_item_id), amounts in minor units as JSON numbers; the
        // rate as the record's exact decimal. Written out by hand from the record above.
        let c = record();
        let old = serde_json::to_string(&CalculationView {
            c: &c,
            version: ApiVersion::V2024_09_01,
            testmode: true,
        })
        .unwrap();
        assert_eq!(
            old,
            concat!(
                r#"{"customer":{"id":"cus_1"},"customer_currency_code":"USD","#,
                r#""expires_at":1795601522,"id":"calc_01a20d0a839b5ad5ce99769d6b965bbd","#,
                r#""line_items":[{"amount_excluding_tax":10000,"amount_including_tax":10700,"#,
                r#""product":{"product_tax_code":"GENERAL_MERCHANDISE","#,
                r#""reference_line_item_id":"line-1","reference_product_id":"p1","#,
                r#""reference_product_name":"Chair"},"quantity":2,"tax_amount":700,"#,
                r#""tax_jurisdictions":[{"fee_amount":0,"jurisdiction_name":"TENNESSEE","#,
                r#""note":"RATE_FRAC","rate_type":"GENERAL STATE SALES TAX","rule_id":254,"#,
                r#""tax_rate":0.07},{"exemption_certificate_id":"cert_1","fee_amount":0,"#,
                r#""jurisdiction_name":"TENNESSEE STATE SINGLE ARTICLE TAX","note":"EXEMPT","#,
                r#""rate_type":"TENNESSEE STATE SINGLE ARTICLE TAX","rule_id":259,"#,
                r#""tax_rate":0.0275}]}],"metadata":{"b":"x","order":"A-1"},"#,
                r#""object":"tax.calculation","#,
                r#""table_hash":"e070a7316e2078bfd44966e5f3aa009edf234d5aa6064022db238a995466f204","#,
                r#""tax_included_in_amount":false,"testmode":true,"#,
                r#""total_amount_excluding_tax":10000,"total_amount_including_tax":10700,"#,
                r#""total_tax_amount":700}"#
            )
        );
        // 2026-03-01 adds the resolution, the customer's type, the authorities, the
        // unrounded tax due, the line ids and the sale's time.
        let new: Value = serde_json::to_value(CalculationView {
            c: &c,
            version: ApiVersion::V2026_03_01,
            testmode: false,
        })
        .unwrap();
        assert_eq!(new["address_resolution_status"], "POSTAL_ONLY");
        assert_eq!(new["address_used"]["address_line_1"], "1 Main \"St\"");
        assert_eq!(new["customer"]["type"], "BUSINESS");
        assert_eq!(new["location_source"], "address");
        assert_eq!(new["resolution_precision"], "POSTAL");
        assert_eq!(new["transacted_at"], 1795515122);
        let line = &new["line_items"][0];
        assert_eq!(line["line_item_id"], "li_1");
        let entry = &line["tax_jurisdictions"][0];
        assert!(entry.get("jurisdiction_name").is_none());
        assert_eq!(
            entry["tax_authority_name"],
            "TENNESSEE DEPARTMENT OF REVENUE"
        );
        assert_eq!(entry["tax_authority_type"], "STATE");
        assert_eq!(entry["tax_type"], "SALES");
        assert_eq!(entry["tax_due_decimal"].to_string(), "700");
    }
}
