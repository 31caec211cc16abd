//! The fast path: an engine over one rate table, plain C structs in and out.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use levy_core::quote::{Ip, Order, QuoteError, QuoteErrorKind, Quoter};
use levy_core::{
    round_minor, Address, AnyTable, AutomaticTax, Calculation, Currency, Date, Decimal, IpMode,
    Location, ResolveError, SaleLine, TableError, TaxCodeId,
};

use crate::{cstring, ffi_guard, non_null, opt_str_arg, str_arg, Error, LevyStatus};

/// Sale flag: line amounts already include tax (`tax_included_in_amount`).
pub const LEVY_SALE_TAX_INCLUDED: u32 = 1;
/// Sale flag: the customer is exempt (`is_tax_exempt`); every jurisdiction owes zero.
pub const LEVY_SALE_CUSTOMER_EXEMPT: u32 = 2;
/// Sale flag: automatic tax is disabled (`automatic_tax: disabled`); tax is zero.
pub const LEVY_SALE_AUTOMATIC_TAX_DISABLED: u32 = 4;
/// Sale flag: each line's `amount` is the price of one unit and the base is amount x
/// quantity (platform calculations), instead of the line total.
pub const LEVY_SALE_PER_UNIT: u32 = 8;
/// Flag of `LevySale.flags`: round the sale's tax once for the whole invoice, where the
/// destination's state allows it (see `LevySummary.rounding`); line by line otherwise.
pub const LEVY_SALE_INVOICE_ROUNDING: u32 = 16;
/// Flag of `LevySale.flags`: the sale is a retail delivery (delivered by motor vehicle to
/// the buyer's address), which owes the per-order fees of the destination's state
/// (Colorado's and Minnesota's retail delivery fees) on its first taxable line; without it
/// (a sale taken away or picked up) none is charged.
pub const LEVY_SALE_RETAIL_DELIVERY: u32 = 32;
/// Flag of `LevySale.flags`: `LevySale.seller_sales_previous_year` holds the seller's
/// retail sales in the destination state in the previous calendar year, which decides a
/// delivery fee's small-seller exemption; without it no exemption is claimed.
pub const LEVY_SALE_SELLER_SALES: u32 = 64;
const KNOWN_FLAGS: u32 = LEVY_SALE_TAX_INCLUDED
    | LEVY_SALE_CUSTOMER_EXEMPT
    | LEVY_SALE_AUTOMATIC_TAX_DISABLED
    | LEVY_SALE_PER_UNIT
    | LEVY_SALE_INVOICE_ROUNDING
    | LEVY_SALE_RETAIL_DELIVERY
    | LEVY_SALE_SELLER_SALES;

/// IP resolution mode `strict`: fail when the IP does not resolve to enough detail.
pub const LEVY_IP_STRICT: u32 = 0;
/// IP resolution mode `zero`: a zero-rate result when resolution is insufficient.
pub const LEVY_IP_ZERO: u32 = 1;
/// IP resolution mode `approximate`: the most populous postal code of the IP's region.
pub const LEVY_IP_APPROXIMATE: u32 = 2;
/// IP resolution mode `best_effort`: approximate, else zero.
pub const LEVY_IP_BEST_EFFORT: u32 = 3;

/// The table an engine reads: the embedded default (static) or one opened from a file.
#[derive(Clone)]
pub(crate) enum EngineTable {
    Static(&'static AnyTable),
    Shared(Arc<AnyTable>),
}

impl Deref for EngineTable {
    type Target = AnyTable;
    fn deref(&self) -> &AnyTable {
        match self {
            EngineTable::Static(t) => t,
            EngineTable::Shared(t) => t,
        }
    }
}

/// A calculation engine over one immutable rate table.
///
/// Thread safety: immutable; one engine may be used by any number of threads at once
/// without locking. Lifetime: results made from it hold their own reference to the
/// table, so an engine may be freed while its results live on. Ownership: created by
/// `levy_engine_open` or `levy_engine_open_default`, freed once by the caller with
/// `levy_engine_free`.
pub struct LevyEngine {
    table: EngineTable,
    /// The manifest's strings as C strings, made on the first `levy_engine_source`.
    sources: OnceLock<Box<[SourceStrings]>>,
}

/// One manifest entry's C strings.
struct SourceStrings {
    kind: CString,
    name: CString,
    period: CString,
    horizon: Option<CString>,
}

/// One input of an engine's table (its manifest entry).
///
/// Plain data in the caller's memory, filled by `levy_engine_source` or
/// `levy_engine_horizon`; its strings point into the engine and stay valid until
/// `levy_engine_free` (never free them yourself).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevySource {
    /// The kind of input: `"zip5"`, `"sst-rates"`, `"cdtfa"`, `"local-rates"`,
    /// `"curated"`, `"ip-country"`, ...
    pub kind: *const c_char,
    /// Its file name.
    pub name: *const c_char,
    /// The period its publisher states (`"2026Q2"`, `"2026-01-01"`), or `""`.
    pub period: *const c_char,
    /// The last day it is known to hold what is in force, `"YYYY-MM-DD"`; NULL for an
    /// input that makes no claim that ages (IP ranges). A sale dated after it that uses
    /// its rates has `LevySummary.stale_table` set.
    pub horizon: *const c_char,
}

impl LevyEngine {
    fn new(table: EngineTable) -> LevyEngine {
        LevyEngine {
            table,
            sources: OnceLock::new(),
        }
    }

    fn sources(&self) -> &[SourceStrings] {
        self.sources.get_or_init(|| {
            self.table
                .data()
                .manifest
                .iter()
                .map(|e| SourceStrings {
                    kind: cstring(e.kind.as_str()),
                    name: cstring(e.name.as_str()),
                    period: cstring(e.period.as_str()),
                    horizon: match e.horizon.to_native() {
                        i32::MAX => None,
                        h => Some(cstring(&levy_core::Date(h).to_string())),
                    },
                })
                .collect()
        })
    }

    fn source(&self, index: usize) -> Option<LevySource> {
        self.sources().get(index).map(|s| LevySource {
            kind: s.kind.as_ptr(),
            name: s.name.as_ptr(),
            period: s.period.as_ptr(),
            horizon: s.horizon.as_ref().map_or(std::ptr::null(), |h| h.as_ptr()),
        })
    }
}

/// A postal address. Every field is a NUL-terminated UTF-8 string or NULL (empty).
///
/// Thread safety and lifetime: plain data owned by the caller; levy copies what it needs
/// during the call. Address structs filled by `levy_result_address_used` point into the
/// result and stay valid until `levy_result_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyAddress {
    /// Street line (`"1600 Pennsylvania Ave NW"`).
    pub line1: *const c_char,
    /// Second line (unit).
    pub line2: *const c_char,
    /// City.
    pub city: *const c_char,
    /// ISO 3166-2 subdivision without the country (`"TN"`, `"ON"`).
    pub region: *const c_char,
    /// Postal code (`"37203"`, `"37203-1234"`).
    pub postal_code: *const c_char,
    /// ISO 3166-1 alpha-2 country (`"US"`).
    pub country: *const c_char,
}

/// One line of a sale.
///
/// Thread safety and lifetime: plain data owned by the caller, read during the call only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevySaleLine {
    /// Line total in minor units (cents for USD), or the unit price with
    /// `LEVY_SALE_PER_UNIT`. From 0 to 10^15.
    pub amount: i64,
    /// Quantity, from 1 to 10^9.
    pub quantity: u32,
    /// Product category as the interface names it (`"CLOTHING"`), or NULL to use
    /// `tax_code`.
    pub category: *const c_char,
    /// Product tax code (`"GENERAL_MERCHANDISE"`), used when `category` is NULL. When both
    /// are NULL the line is general merchandise.
    pub tax_code: *const c_char,
}

/// A sale to calculate.
///
/// Thread safety and lifetime: plain data owned by the caller, read during the call only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevySale {
    /// The customer's address, or NULL. When both an address and an IP are given, the
    /// address is tried first and the IP is the fallback.
    pub address: *const LevyAddress,
    /// The customer's IP address (IPv4 or IPv6 text), or NULL.
    pub ip: *const c_char,
    /// How to resolve `ip`: one of `LEVY_IP_*` (`LEVY_IP_STRICT` is 0).
    pub ip_mode: u32,
    /// ISO 4217 currency code, or NULL for `"USD"`.
    pub currency: *const c_char,
    /// Bitwise OR of `LEVY_SALE_*` flags; 0 for an ordinary sale.
    pub flags: u32,
    /// When the sale happened, Unix seconds (UTC); decides which rates are in force.
    /// 0 means now.
    pub transacted_at: i64,
    /// The lines, `line_count` of them (may be NULL when `line_count` is 0).
    pub lines: *const LevySaleLine,
    /// Number of lines.
    pub line_count: usize,
    /// The address the goods ship from, or NULL (an unknown origin: taxed at the
    /// destination). Within a state that sources sales at the origin (Texas, Ohio,
    /// California's modified origin, ...) it decides the local taxes; its country also
    /// decides reverse charge. An origin that cannot be resolved is
    /// `LEVY_RESOLUTION_FAILED`.
    pub origin: *const LevyAddress,
    /// With `LEVY_SALE_SELLER_SALES`: the seller's retail sales in the destination state
    /// in the previous calendar year, minor units of the sale's currency (read for a
    /// delivery fee's small-seller exemption); ignored without the flag.
    pub seller_sales_previous_year: i64,
    /// The exchange rate from the sale's currency to the place's, as decimal text (one
    /// unit of the sale's currency in the place's: `"0.0067"` for yen in Nashville), or
    /// NULL for none. Needed only when the sale's currency is not the place's and a rule
    /// of the place has an amount (a band, a threshold, a cap, a fee): without it such a
    /// sale is `LEVY_EXCHANGE_RATE_REQUIRED`; with it the tax is calculated on the
    /// converted amounts and answered in the sale's currency.
    pub exchange_rate: *const c_char,
}

/// The outcome of `levy_calculate`: the tax of a sale per line and per jurisdiction.
///
/// Thread safety: immutable; any number of threads may read one result at once.
/// Lifetime: independent of the engine (it keeps the table alive itself); every string
/// and struct read from it stays valid until `levy_result_free`. Ownership: freed once by
/// the caller with `levy_result_free`.
pub struct LevyResult {
    /// The table that produced it; `None` only while the result waits in a thread's pool of
    /// freed results (the table is let go at once).
    table: Option<EngineTable>,
    calc: Calculation,
    location: Location,
    strings: OnceLock<Box<ResultStrings>>,
}

/// Order-level figures of a result.
///
/// Plain data in the caller's memory, filled by an accessor; safe to copy and to read
/// from any thread. Its strings point into the result: they must not outlive it and are
/// freed with it by `levy_result_free` (never free them yourself).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevySummary {
    /// Total tax to charge, minor units: the sum of the lines' `tax_amount`.
    pub total_tax: i64,
    /// Total excluding tax, minor units.
    pub total_excluding_tax: i64,
    /// Total including tax, minor units: what to charge the customer.
    pub total_including_tax: i64,
    /// Number of lines (the sale's, in order).
    pub line_count: usize,
    /// ISO 4217 currency code.
    pub currency: *const c_char,
    /// `"EXACT"`, `"POSTAL_FALLBACK_1"` or `"POSTAL_ONLY"`.
    pub address_resolution_status: *const c_char,
    /// `"STREET"`, `"POSTAL_PLUS"`, `"POSTAL"`, `"PROVINCE"`, `"COUNTRY"` or
    /// `"APPROXIMATED"`.
    pub resolution_precision: *const c_char,
    /// `"address"` or `"ip"`: which input decided the tax.
    pub location_source: *const c_char,
    /// Why the whole sale owes nothing (`"CUSTOMER_EXEMPT"`, `"AUTOMATIC_TAX_DISABLED"`,
    /// `"ZERO_RATE"`), or NULL when tax is owed as usual.
    pub zero_reason: *const c_char,
    /// Effective rate, total tax / total excluding tax, as a decimal string (`"0.0925"`).
    pub effective_rate: *const c_char,
    /// Content hash (BLAKE3) of the rate table that produced the result, 64 lower-case
    /// hex digits.
    pub table_hash: *const c_char,
    /// Whether the result holds the local taxes of its location: `"FULL"`, `"PARTIAL"`
    /// (some local levels known, others may apply) or `"STATE_ONLY"` (local taxes may be
    /// due that the table does not hold; show the operator a warning). A static string.
    pub coverage: *const c_char,
    /// The sourcing rule applied: `"DESTINATION"`, `"ORIGIN"`, `"MODIFIED_ORIGIN"` or
    /// `"ORIGIN_WITH_USE_TAX"` (a sale within a state that sources it at the origin). A
    /// static string.
    pub sourcing: *const c_char,
    /// The rounding applied: `"LINE"`, or `"INVOICE"` when the sale asked for it
    /// (`LEVY_SALE_INVOICE_ROUNDING`), its amounts exclude tax and the destination's state
    /// allows it. A static string.
    pub rounding: *const c_char,
    /// Whether the table's taxability matrix knows how every jurisdiction of the result
    /// treats every line's product: `"KNOWN"`, or `"UNKNOWN"` when some line was taxed at
    /// the rule its code inherits because the matrix does not say (see
    /// `LevyLine.taxability`); `coverage` is then at most `"PARTIAL"`. Show the operator a
    /// warning. A static string.
    pub taxability: *const c_char,
    /// NULL while every input of the table that the result used is within its horizon;
    /// else the `STALE_TABLE` note (`"STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv (period
    /// 2026-01-01) is in force to 2026-03-31; rates may have changed since"`): the sale is
    /// dated after the last day that input is known to hold, `coverage` is at most
    /// `"PARTIAL"`. Show the operator a warning, and install a newer table.
    pub stale_table: *const c_char,
}

/// One line of a result.
///
/// Plain data in the caller's memory, filled by an accessor; safe to copy and to read
/// from any thread. Its strings point into the result: they must not outlive it and are
/// freed with it by `levy_result_free` (never free them yourself).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyLine {
    /// The product tax code used (`"GENERAL_MERCHANDISE"`).
    pub tax_code: *const c_char,
    /// Quantity.
    pub quantity: u32,
    /// Amount excluding tax, minor units.
    pub amount_excluding_tax: i64,
    /// Tax to charge for the line, minor units, rounded once (half away from zero).
    pub tax_amount: i64,
    /// Amount including tax, minor units.
    pub amount_including_tax: i64,
    /// `tax_amount` as a decimal string.
    pub tax_amount_decimal: *const c_char,
    /// Number of jurisdiction entries of the line.
    pub jurisdiction_count: usize,
    /// `"KNOWN"`, or `"UNKNOWN"` when the table's taxability matrix does not say how some
    /// jurisdiction of the line treats its product (`levy taxability --code` tells which).
    /// A static string.
    pub taxability: *const c_char,
}

/// The tax of one line in one jurisdiction.
///
/// Plain data in the caller's memory, filled by an accessor; safe to copy and to read
/// from any thread. Its strings point into the result: they must not outlive it and are
/// freed with it by `levy_result_free` (never free them yourself).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyJurisdiction {
    /// Jurisdiction code (FIPS in the US, ISO 3166 elsewhere).
    pub code: *const c_char,
    /// Jurisdiction name (`"TENNESSEE"`).
    pub name: *const c_char,
    /// `"COUNTRY"`, `"STATE"`, `"PROVINCE"`, `"COUNTY"`, `"CITY"` or `"DISTRICT"`.
    pub level: *const c_char,
    /// Tax authority name.
    pub authority: *const c_char,
    /// `"SALES"`, `"USE"`, `"VAT"` or `"GST"`.
    pub tax_type: *const c_char,
    /// Rate type of the rule that applied (`"GENERAL STATE SALES TAX"`).
    pub rate_type: *const c_char,
    /// `"RATE_FRAC"`, `"PROGRESSIVE_RATE"`, `"THRESHOLD"`, ...: what the numbers mean.
    pub note: *const c_char,
    /// Statutory rate as a decimal fraction string (`"0.07"`). Never add rates up.
    pub rate: *const c_char,
    /// The taxed part of the line amount, minor units, decimal string.
    pub taxable_base: *const c_char,
    /// Tax due before rounding, minor units, decimal string (`"139.93"`): the
    /// interface's `tax_due_decimal`.
    pub tax_due: *const c_char,
    /// Fixed fee, minor units, decimal string.
    pub fee: *const c_char,
    /// `tax_due` rounded half away from zero to whole minor units, for display. These do
    /// not always add up to the line's `tax_amount` (the line is rounded once, from the
    /// unrounded sum); always charge `tax_amount`.
    pub tax_due_minor: i64,
    /// Which address decided that this jurisdiction taxes the sale: `"DESTINATION"` (the
    /// customer's) or `"ORIGIN"` (`sale.origin`). A static string.
    pub sourced: *const c_char,
}

/// Strings of a result, made on the first string accessor call (so `levy_calculate`
/// itself stays allocation-light) and kept until the result is freed.
/// The coverage name as a static C string.
fn coverage_cstr(c: levy_core::Coverage) -> &'static std::ffi::CStr {
    match c {
        levy_core::Coverage::Full => c"FULL",
        levy_core::Coverage::Partial => c"PARTIAL",
        levy_core::Coverage::StateOnly => c"STATE_ONLY",
    }
}

/// A taxability name as a static C string.
fn taxability_cstr(t: levy_core::Taxability) -> &'static std::ffi::CStr {
    match t {
        levy_core::Taxability::Known => c"KNOWN",
        levy_core::Taxability::Unknown => c"UNKNOWN",
    }
}

/// A sourcing name as a static C string.
fn static_cstr(name: &str) -> &'static std::ffi::CStr {
    match name {
        "ORIGIN" => c"ORIGIN",
        "MODIFIED_ORIGIN" => c"MODIFIED_ORIGIN",
        "ORIGIN_WITH_USE_TAX" => c"ORIGIN_WITH_USE_TAX",
        _ => c"DESTINATION",
    }
}

struct ResultStrings {
    currency: CString,
    status: CString,
    precision: CString,
    source: CString,
    zero_reason: Option<CString>,
    stale: Option<CString>,
    effective_rate: CString,
    table_hash: CString,
    address: [CString; 6],
    lines: Vec<LineStrings>,
}

struct LineStrings {
    tax_code: CString,
    tax_amount: CString,
    jurisdictions: Vec<JurisdictionStrings>,
}

struct JurisdictionStrings {
    code: CString,
    name: CString,
    level: CString,
    authority: CString,
    tax_type: CString,
    rate_type: CString,
    note: CString,
    rate: CString,
    taxable_base: CString,
    tax_due: CString,
    fee: CString,
}

fn dec(d: Decimal) -> CString {
    cstring(&d.normalize().to_string())
}

impl LevyResult {
    fn strings(&self) -> &ResultStrings {
        self.strings.get_or_init(|| {
            let t = self.table.as_deref();
            let c = &self.calc;
            // The address used, completed from the table that resolved it (a ZIP's state
            // and city); empty once the table was let go (a pooled result, never read).
            let a = t
                .map(|t| t.address_used(&self.location))
                .unwrap_or_default();
            Box::new(ResultStrings {
                currency: cstring(c.currency.code()),
                status: cstring(self.location.status.as_str()),
                precision: cstring(self.location.precision.as_str()),
                source: cstring(self.location.source.as_str()),
                zero_reason: c.zero_reason.map(|z| cstring(z.note().as_str())),
                stale: c.stale.zip(t).map(|(s, t)| cstring(&s.describe(t))),
                effective_rate: dec(c.effective_rate()),
                table_hash: cstring(&c.table_hash_hex()),
                address: [
                    &a.line1,
                    &a.line2,
                    &a.city,
                    &a.region,
                    &a.postal_code,
                    &a.country,
                ]
                .map(|s| cstring(s)),
                lines: c
                    .lines
                    .iter()
                    .map(|l| LineStrings {
                        tax_code: cstring(
                            t.and_then(|t| t.tax_code_name(l.tax_code)).unwrap_or(""),
                        ),
                        tax_amount: dec(l.tax),
                        jurisdictions: l
                            .jurisdictions
                            .iter()
                            .map(|j| {
                                let jur = t.and_then(|t| t.jurisdiction(j.jurisdiction));
                                JurisdictionStrings {
                                    code: cstring(jur.map_or("", |x| x.code())),
                                    name: cstring(jur.map_or("", |x| x.name())),
                                    level: cstring(jur.map_or("", |x| x.level().as_str())),
                                    authority: cstring(jur.map_or("", |x| x.authority())),
                                    tax_type: cstring(jur.map_or("", |x| x.tax_type().as_str())),
                                    rate_type: cstring(
                                        t.and_then(|t| t.rule(j.rule))
                                            .map_or("", |r| r.rate_type()),
                                    ),
                                    note: cstring(j.note.as_str()),
                                    rate: dec(j.rate),
                                    taxable_base: dec(j.taxable_base),
                                    tax_due: dec(j.tax_due),
                                    fee: dec(j.fee),
                                }
                            })
                            .collect(),
                    })
                    .collect(),
            })
        })
    }
}

pub(crate) fn table_error(e: TableError) -> Error {
    match e {
        TableError::Io { .. } => Error::new(LevyStatus::LEVY_IO_ERROR, e.to_string()),
        other => Error::new(LevyStatus::LEVY_INVALID_TABLE, other.to_string()),
    }
}

fn resolve_error(e: &ResolveError) -> String {
    format!("{} ({})", e, e.error_type())
}

/// The front door's refusal as the C caller reads it: a status, the message, and the kind
/// (`levy_last_error_kind`).
fn quote_error(e: &QuoteError) -> Error {
    let status = match e.kind() {
        QuoteErrorKind::NoPlace => LevyStatus::LEVY_INVALID_ARGUMENT,
        QuoteErrorKind::UnknownProduct => LevyStatus::LEVY_UNKNOWN_TAX_CODE,
        QuoteErrorKind::UnknownCurrency => LevyStatus::LEVY_UNKNOWN_CURRENCY,
        QuoteErrorKind::InvalidQuantity | QuoteErrorKind::InvalidAmount => {
            LevyStatus::LEVY_INVALID_SALE
        }
        QuoteErrorKind::ExchangeRateRequired | QuoteErrorKind::InvalidExchangeRate => {
            LevyStatus::LEVY_EXCHANGE_RATE_REQUIRED
        }
        _ if e.resolve_error().is_some() => LevyStatus::LEVY_RESOLUTION_FAILED,
        _ => LevyStatus::LEVY_INVALID_SALE,
    };
    let message = match e {
        QuoteError::Place { address, ip } => {
            let part = |what: &str, e: &Option<Box<ResolveError>>| {
                e.as_ref().map(|e| format!("{what}: {}", resolve_error(e)))
            };
            let parts: Vec<String> = [part("address", address), part("ip", ip)]
                .into_iter()
                .flatten()
                .collect();
            parts.join("; ")
        }
        QuoteError::Origin(o) => format!("origin: {}", resolve_error(o)),
        other => other.to_string(),
    };
    Error::of_kind(status, e.kind(), message)
}

/// A whole number of minor units held without a fraction (as totals are), when it fits in
/// `int64_t`: its mantissa, without `Decimal`'s general conversion; `None` otherwise.
fn whole_i64(d: Decimal) -> Option<i64> {
    if d.scale() == 0 {
        i64::try_from(d.mantissa()).ok()
    } else {
        None
    }
}

/// Whole minor units as `int64_t`; callers checked that totals fit, and lines never exceed
/// their totals.
fn minor_i64(d: Decimal) -> i64 {
    i64::try_from(d).unwrap_or(if d.is_sign_negative() {
        i64::MIN
    } else {
        i64::MAX
    })
}

/// Opens the rate table file at `path` (a `*.levy` file built by `levy build`) into memory
/// the engine owns, checks its structure and content hash, and writes a new engine to
/// `*out_engine`. Use it wherever another program may rewrite the file: nothing done to
/// the file afterwards changes what the engine answers from. It costs the table's size in
/// memory per process (`levy_engine_open_mapped` shares the page cache instead).
///
/// Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INVALID_UTF8` (path), `LEVY_IO_ERROR` (cannot read
/// the file), `LEVY_INVALID_TABLE` (not a table, truncated, corrupt, other format version).
/// `*out_engine` is written only on `LEVY_OK`; free it with `levy_engine_free`.
///
/// # Safety
///
/// `path` must be NULL or a NUL-terminated string; `out_engine` must be NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_open(
    path: *const c_char,
    out_engine: *mut *mut LevyEngine,
) -> LevyStatus {
    ffi_guard!({
        non_null!(out_engine, "out_engine");
        // SAFETY: the caller passes NULL or a NUL-terminated string.
        let path = unsafe { str_arg(path, "path") }?;
        let table = AnyTable::open_file(path).map_err(table_error)?;
        let engine = Box::new(LevyEngine::new(EngineTable::Shared(Arc::new(table))));
        // SAFETY: out_engine is non-null and valid for writing, per the contract.
        unsafe { out_engine.write(Box::into_raw(engine)) };
        Ok(())
    })
}

/// Opens the rate table file at `path` by mapping it into memory, checks its structure and
/// content hash (reading every page once), and writes a new engine to `*out_engine`. Use it
/// where memory is short (a till with little of it) or many processes share one table: the
/// pages are the page cache's, shared with every process that maps the file.
///
/// Errors: as `levy_engine_open`. `*out_engine` is written only on `LEVY_OK`; free it with
/// `levy_engine_free`.
///
/// # Safety
///
/// `path` must be NULL or a NUL-terminated string; `out_engine` must be NULL or valid for
/// writing one pointer. And the file must be replaced, never rewritten, while the engine or
/// any result made from it lives: a new table is written to a new file and renamed over
/// the old one (as `levy build` does). A file modified in place changes the bytes under the
/// engine (undefined behaviour); one truncated ends the process with SIGBUS.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_open_mapped(
    path: *const c_char,
    out_engine: *mut *mut LevyEngine,
) -> LevyStatus {
    ffi_guard!({
        non_null!(out_engine, "out_engine");
        // SAFETY: the caller passes NULL or a NUL-terminated string.
        let path = unsafe { str_arg(path, "path") }?;
        // SAFETY: the caller promises the file is replaced, never rewritten (the contract
        // above, which is `open_file_mapped`'s).
        let table = unsafe { AnyTable::open_file_mapped(path) }.map_err(table_error)?;
        let engine = Box::new(LevyEngine::new(EngineTable::Shared(Arc::new(table))));
        // SAFETY: out_engine is non-null and valid for writing, per the contract.
        unsafe { out_engine.write(Box::into_raw(engine)) };
        Ok(())
    })
}

/// Writes a new engine over the rate table compiled into the library to `*out_engine`.
/// It reads no file; the first open in a process validates the embedded table once (some
/// milliseconds), later opens cost nothing. Free it with `levy_engine_free`.
///
/// Errors: `LEVY_NULL_ARGUMENT`.
///
/// # Safety
///
/// `out_engine` must be NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_open_default(out_engine: *mut *mut LevyEngine) -> LevyStatus {
    ffi_guard!({
        non_null!(out_engine, "out_engine");
        let engine = Box::new(LevyEngine::new(default_table()?));
        // SAFETY: out_engine is non-null and valid for writing, per the contract.
        unsafe { out_engine.write(Box::into_raw(engine)) };
        Ok(())
    })
}

/// The embedded default table.
pub(crate) fn default_table() -> Result<EngineTable, Error> {
    Ok(EngineTable::Static(levy_data::default_table()))
}

/// The number of inputs of the engine's table (its manifest), for `levy_engine_source`;
/// 0 for NULL.
///
/// # Safety
///
/// `engine` must be NULL or a live engine.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_source_count(engine: *const LevyEngine) -> usize {
    ffi_guard!(0 => {
        if engine.is_null() {
            return 0;
        }
        // SAFETY: non-null and live per the contract.
        unsafe { &*engine }.table.data().manifest.len()
    })
}

/// Fills `*out` with input `index` (0-based) of the engine's table: its kind, name,
/// period and horizon. Thread-safe.
///
/// Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INDEX_OUT_OF_RANGE`.
///
/// # Safety
///
/// `engine` must be NULL or a live engine; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_source(
    engine: *const LevyEngine,
    index: usize,
    out: *mut LevySource,
) -> LevyStatus {
    ffi_guard!({
        non_null!(engine, "engine");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let e = unsafe { &*engine };
        let len = e.table.data().manifest.len();
        let source = e
            .source(index)
            .ok_or_else(|| index_error("source", index, len))?;
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe { out.write(source) };
        Ok(())
    })
}

/// The table's horizon: the input whose horizon comes first among those its
/// jurisdictions' rates are from (after that day some answers have
/// `LevySummary.stale_table`). Writes its index to `*out_index` and the input to `*out`;
/// a table without horizons writes `SIZE_MAX` and an input of NULL strings. Compare its
/// `horizon` with today to warn the operator that the table wants replacing.
///
/// Errors: `LEVY_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
///
/// `engine` must be NULL or a live engine; `out_index` and `out` NULL or valid for
/// writing.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_horizon(
    engine: *const LevyEngine,
    out_index: *mut usize,
    out: *mut LevySource,
) -> LevyStatus {
    ffi_guard!({
        non_null!(engine, "engine");
        non_null!(out_index, "out_index");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let e = unsafe { &*engine };
        let none = LevySource {
            kind: std::ptr::null(),
            name: std::ptr::null(),
            period: std::ptr::null(),
            horizon: std::ptr::null(),
        };
        let (index, source) = match e.table.earliest_horizon() {
            Some((_, i)) => (i as usize, e.source(i as usize).unwrap_or(none)),
            None => (usize::MAX, none),
        };
        // SAFETY: both are non-null and valid for writing, per the contract.
        unsafe {
            out_index.write(index);
            out.write(source);
        }
        Ok(())
    })
}

/// Frees an engine. NULL is accepted and does nothing. Results made from the engine stay
/// valid. The engine must not be used after this call, by any thread.
///
/// # Safety
///
/// `engine` must be NULL or a pointer from `levy_engine_open*` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn levy_engine_free(engine: *mut LevyEngine) {
    ffi_guard!(() => {
        if !engine.is_null() {
            // SAFETY: the pointer came from Box::into_raw in levy_engine_open* and is freed once.
            drop(unsafe { Box::from_raw(engine) });
        }
    })
}

/// Fills `out` with a C address, reusing its buffers.
///
/// # Safety
///
/// Every non-null field must be a NUL-terminated string.
unsafe fn fill_address(a: &LevyAddress, out: &mut Address) -> Result<(), Error> {
    let fields: [(*const c_char, &str, &mut String); 6] = [
        (a.line1, "address.line1", &mut out.line1),
        (a.line2, "address.line2", &mut out.line2),
        (a.city, "address.city", &mut out.city),
        (a.region, "address.region", &mut out.region),
        (a.postal_code, "address.postal_code", &mut out.postal_code),
        (a.country, "address.country", &mut out.country),
    ];
    for (ptr, name, dst) in fields {
        dst.clear();
        // SAFETY: the caller promises NULL or a NUL-terminated string.
        if let Some(v) = unsafe { opt_str_arg(ptr, name) }? {
            dst.push_str(v);
        }
    }
    Ok(())
}

/// `from` copied into `out`, field by field into the strings `out` holds (no allocation
/// once they are long enough).
fn copy_address(from: &Address, out: &mut Address) {
    for (src, dst) in [
        (&from.line1, &mut out.line1),
        (&from.line2, &mut out.line2),
        (&from.city, &mut out.city),
        (&from.region, &mut out.region),
        (&from.postal_code, &mut out.postal_code),
        (&from.country, &mut out.country),
    ] {
        dst.clone_from(src);
    }
}

/// Per-thread buffers that `levy_calculate` refills on every call, so that a steady
/// stream of sales allocates nothing for the address, the lines and the place: the order
/// the sale is read into and the front door's quoter.
struct Scratch {
    order: Order,
    quoter: Quoter,
}

/// Lines kept between calls at most; a larger sale's buffer is shrunk back afterwards.
const SCRATCH_LINES: usize = 1024;

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            order: Order::new(),
            quoter: Quoter::new(),
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
    /// Results freed on this thread, kept for its next `levy_calculate` with their vectors,
    /// so that a till calculating and freeing sale after sale allocates no result. Boxed:
    /// each box is the allocation a `LevyResult *` points to, handed out again as it is.
    #[allow(clippy::vec_box)]
    static SPARE_RESULTS: RefCell<Vec<Box<LevyResult>>> = const { RefCell::new(Vec::new()) };
}

/// Freed results a thread keeps at most.
const SPARE_RESULTS_KEPT: usize = 4;

/// The sale's currency and lines, once its flags are known ones.
///
/// # Safety
///
/// As for `levy_calculate`: `sale`'s pointers are NULL or valid.
unsafe fn sale_header(sale: &LevySale) -> Result<(Currency, &[LevySaleLine]), Error> {
    if sale.flags & !KNOWN_FLAGS != 0 {
        return Err(Error::new(
            LevyStatus::LEVY_INVALID_ARGUMENT,
            format!(
                "sale.flags has unknown bits {:#x}",
                sale.flags & !KNOWN_FLAGS
            ),
        ));
    }
    // SAFETY: NULL or NUL-terminated per the contract.
    let currency = match unsafe { opt_str_arg(sale.currency, "sale.currency") }? {
        // The common case without a hash lookup.
        None | Some("USD") => Currency::USD,
        Some(code) => Currency::from_code(code).ok_or_else(|| {
            Error::new(
                LevyStatus::LEVY_UNKNOWN_CURRENCY,
                format!("unknown currency {code:?} (ISO 4217, upper case)"),
            )
        })?,
    };
    let lines: &[LevySaleLine] = if sale.line_count == 0 {
        &[]
    } else {
        non_null!(sale.lines, "sale.lines");
        // SAFETY: lines points to line_count initialized lines per the contract.
        unsafe { std::slice::from_raw_parts(sale.lines, sale.line_count) }
    };
    Ok((currency, lines))
}

/// What a sale's flags say of its delivery, for per-order fees; `None` for a sale that is
/// not a retail delivery.
fn delivery_of(sale: &LevySale, currency: Currency) -> Option<levy_core::Delivery> {
    (sale.flags & LEVY_SALE_RETAIL_DELIVERY != 0).then(|| levy_core::Delivery {
        retail: true,
        seller_sales_previous_year: (sale.flags & LEVY_SALE_SELLER_SALES != 0)
            .then(|| currency.to_major(Decimal::from(sale.seller_sales_previous_year))),
    })
}

/// The totals of `calc` in `int64_t` minor units (tax, excluding tax, including tax);
/// `LEVY_INVALID_SALE` when one does not fit.
fn minor_totals(calc: &Calculation) -> Result<[i64; 3], Error> {
    // Totals are whole minor units: a scale-0 total is its mantissa; any other goes through
    // `Decimal`'s conversion, which fails out of range.
    let minor = |d: Decimal| whole_i64(d).or_else(|| i64::try_from(d).ok());
    match (
        minor(calc.total_tax),
        minor(calc.total_excluding_tax),
        minor(calc.total_including_tax),
    ) {
        (Some(tax), Some(excluding), Some(including)) => Ok([tax, excluding, including]),
        _ => Err(Error::new(
            LevyStatus::LEVY_INVALID_SALE,
            "the sale's totals do not fit in int64_t minor units; split it",
        )),
    }
}

/// Calculates the tax of `sale` and writes a new result to `*out_result`.
///
/// The address is resolved first; when it cannot be and an IP is given, the IP is resolved
/// in `sale->ip_mode`. Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INVALID_UTF8` (any string),
/// `LEVY_INVALID_ARGUMENT` (unknown flag bit or IP mode, neither address nor IP),
/// `LEVY_UNKNOWN_CURRENCY`, `LEVY_UNKNOWN_TAX_CODE` (a line's category or tax code),
/// `LEVY_RESOLUTION_FAILED` (address and IP), `LEVY_INVALID_SALE` (amount or quantity out
/// of range). `levy_last_error_message` names the field or line. `*out_result` is written
/// only on `LEVY_OK`; free it with `levy_result_free`.
///
/// Thread-safe: any number of threads may calculate on one engine at once.
///
/// # Safety
///
/// `engine` must be NULL or a live engine; `sale` NULL or a valid `LevySale` whose pointers
/// are NULL or valid (`lines` pointing to `line_count` lines); `out_result` NULL or valid
/// for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn levy_calculate(
    engine: *const LevyEngine,
    sale: *const LevySale,
    out_result: *mut *mut LevyResult,
) -> LevyStatus {
    ffi_guard!({
        non_null!(engine, "engine");
        non_null!(sale, "sale");
        non_null!(out_result, "out_result");
        // SAFETY: non-null and live per the contract; engines are never mutated.
        let engine = unsafe { &*engine };
        // SAFETY: non-null and valid per the contract.
        let sale = unsafe { &*sale };
        let table = &*engine.table;
        let run = |scratch: &mut Scratch| {
            // A result freed earlier on this thread, if any, is filled again in place.
            let spare = SPARE_RESULTS
                .try_with(|pool| pool.borrow_mut().pop())
                .ok()
                .flatten();
            // SAFETY: the sale and its lines come straight from the caller, under its contract.
            let result = unsafe { fill_result(table, sale, scratch, spare) };
            if scratch.order.sale.lines.capacity() > SCRATCH_LINES {
                scratch.order.sale.lines = Vec::new();
            }
            result
        };
        // A thread being torn down has lost its scratch; it gets fresh buffers.
        let mut result = SCRATCH
            .try_with(|s| run(&mut s.borrow_mut()))
            .unwrap_or_else(|_| run(&mut Scratch::new()))?;
        minor_totals(&result.calc)?;
        result.table = Some(engine.table.clone());
        // SAFETY: out_result is non-null and valid for writing, per the contract.
        unsafe { out_result.write(Box::into_raw(result)) };
        Ok(())
    })
}

/// The outcome of one sale of `levy_calculate_batch`: its status and, when it is
/// `LEVY_OK`, its totals.
///
/// Plain data in the caller's memory; safe to copy and to read from any thread.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevyBatchResult {
    /// `LEVY_OK`, or why this sale was not calculated (the statuses `levy_calculate`
    /// returns for it).
    pub status: LevyStatus,
    /// Total tax to charge, minor units; 0 when `status` is not `LEVY_OK`.
    pub total_tax: i64,
    /// Total excluding tax, minor units; 0 when `status` is not `LEVY_OK`.
    pub total_excluding_tax: i64,
    /// Total including tax, minor units: what to charge; 0 when `status` is not `LEVY_OK`.
    pub total_including_tax: i64,
    /// `"FULL"`, `"PARTIAL"` or `"STATE_ONLY"`, as `LevySummary.coverage`; NULL when
    /// `status` is not `LEVY_OK`. A static string.
    pub coverage: *const c_char,
    /// Whether the sale is dated after the horizon of an input of the table that it used
    /// (`coverage` is then at most `"PARTIAL"`): `LevySummary.stale_table` of the same sale
    /// by `levy_calculate` names the input. `false` when `status` is not `LEVY_OK`.
    pub stale_table: bool,
}

impl LevyBatchResult {
    fn failed(status: LevyStatus) -> LevyBatchResult {
        LevyBatchResult {
            status,
            total_tax: 0,
            total_excluding_tax: 0,
            total_including_tax: 0,
            coverage: std::ptr::null(),
            stale_table: false,
        }
    }

    /// The totals of `calc`; `LEVY_INVALID_SALE` when one does not fit in `int64_t`.
    fn of(calc: &Calculation) -> Result<LevyBatchResult, Error> {
        let [total_tax, total_excluding_tax, total_including_tax] = minor_totals(calc)?;
        Ok(LevyBatchResult {
            status: LevyStatus::LEVY_OK,
            total_tax,
            total_excluding_tax,
            total_including_tax,
            coverage: coverage_cstr(calc.coverage).as_ptr(),
            stale_table: calc.stale.is_some(),
        })
    }
}

/// Per-thread buffers of `levy_calculate_batch`, refilled on every call: once they have
/// grown to a caller's batches, a batch allocates nothing for its sales, places and
/// calculations.
struct BatchScratch {
    /// The sales read, as the front door's orders.
    orders: Vec<Order>,
    /// For each order, its index in the caller's array.
    from: Vec<usize>,
    calcs: Vec<Calculation>,
    quoter: Quoter,
}

/// Sales a thread's batch buffers keep between calls at most.
const BATCH_KEPT: usize = 65_536;

impl BatchScratch {
    fn new() -> BatchScratch {
        BatchScratch {
            orders: Vec::new(),
            from: Vec::new(),
            calcs: Vec::new(),
            quoter: Quoter::new(),
        }
    }

    /// Lets go of what a batch larger than [`BATCH_KEPT`] grew.
    fn trim(&mut self) {
        if self.orders.len() > BATCH_KEPT {
            *self = BatchScratch::new();
        }
    }
}

thread_local! {
    static BATCH: RefCell<BatchScratch> = RefCell::new(BatchScratch::new());
}

/// Calculates `count` sales and writes the outcome of `sales[i]` to `out[i]`: its status
/// and, when it is `LEVY_OK`, its totals. For a till or a job that needs each sale's totals
/// only (the lines and jurisdictions of one sale come from `levy_calculate`), at a fraction
/// of the cost per sale: the sales are calculated together, the table's records of the
/// next sales fetched while one is calculated, into buffers the thread keeps, with no
/// result to free. Within a call, a sale that points to the same `LevyAddress` as the sale
/// before it, with the same `transacted_at` (not 0), shares its place instead of resolving
/// the address again (a till's sales at its own address), and a category or tax code
/// string at the same address is looked up once; so the strings must not change during
/// the call (they may between calls).
///
/// Each sale is read and checked as `levy_calculate` reads it, and fails alone: a sale that
/// cannot be calculated gets its status in `out[i]` and zero totals, and the others are
/// calculated. Returns `LEVY_OK` when every sale was; otherwise the status of the first
/// that was not, and `levy_last_error_message` names it (`"sales[3]: ..."`). Either way
/// every entry of `out` is written. Errors before any sale is read, when nothing is
/// written: `LEVY_NULL_ARGUMENT` (`engine`, `out`, or `sales` with `count` above 0).
///
/// Thread-safe: any number of threads may calculate batches on one engine at once.
///
/// # Safety
///
/// `engine` must be NULL or a live engine; `sales` NULL or valid for reading `count`
/// sales, each as `levy_calculate` requires; `out` NULL or valid for writing `count`
/// results.
#[no_mangle]
pub unsafe extern "C" fn levy_calculate_batch(
    engine: *const LevyEngine,
    sales: *const LevySale,
    count: usize,
    out: *mut LevyBatchResult,
) -> LevyStatus {
    ffi_guard!({
        non_null!(engine, "engine");
        non_null!(out, "out");
        if count == 0 {
            return Ok(());
        }
        non_null!(sales, "sales");
        // SAFETY: non-null and live per the contract; engines are never mutated.
        let table = &*unsafe { &*engine }.table;
        // SAFETY: non-null and valid for `count` sales, per the contract.
        let sales = unsafe { std::slice::from_raw_parts(sales, count) };
        // SAFETY: non-null and valid for writing `count` results, per the contract. The
        // caller's entries may be uninitialized: they are only written, never read.
        let out = unsafe {
            std::slice::from_raw_parts_mut(out.cast::<MaybeUninit<LevyBatchResult>>(), count)
        };
        // SAFETY (both calls): the sales come straight from the caller, under its contract.
        let kept = BATCH.try_with(|s| {
            let scratch = &mut *s.borrow_mut();
            let first = unsafe { calculate_batch(table, sales, &mut *out, scratch) };
            scratch.trim();
            first
        });
        // A thread being torn down has lost its buffers; it gets fresh ones.
        let first = match kept {
            Ok(first) => first,
            Err(_) => unsafe { calculate_batch(table, sales, out, &mut BatchScratch::new()) },
        };
        match first {
            None => Ok(()),
            Some((i, e)) => Err(Error::new(e.status, format!("sales[{i}]: {}", e.message))),
        }
    })
}

/// The work of `levy_calculate_batch` on its checked arguments: each sale read into an
/// order (a sale refused when read is failed at once), the orders quoted together, each
/// outcome written; returns the first sale that failed, with its error.
///
/// # Safety
///
/// Every sale's pointers are NULL or valid, as `levy_calculate` requires.
unsafe fn calculate_batch(
    table: &AnyTable,
    sales: &[LevySale],
    out: &mut [MaybeUninit<LevyBatchResult>],
    scratch: &mut BatchScratch,
) -> Option<(usize, Error)> {
    let mut failed = FirstFailure(None);
    let BatchScratch {
        orders,
        from,
        calcs,
        quoter,
    } = scratch;
    from.clear();
    let mut codes = TaxCodes::default();
    for (i, sale) in sales.iter().enumerate() {
        let k = from.len();
        if orders.len() == k {
            orders.push(Order::new());
        }
        // A sale at the address struct of the sale read before it, at the same time (not
        // "now"), shares its place (below): its address is not read at all, and the quoter
        // takes it as the sale before it's. At the same struct at another time, it takes
        // that sale's address as read (its strings cannot change during the call), not its
        // C strings walked and checked again.
        let (read, rest) = orders.split_at_mut(k);
        let before =
            (k > 0 && !sale.address.is_null() && sale.address == sales[from[k - 1]].address)
                .then(|| &sales[from[k - 1]]);
        let address = match before {
            None => AddressRead::Read,
            Some(b) if b.transacted_at == sale.transacted_at && sale.transacted_at != 0 => {
                AddressRead::Before
            }
            Some(_) => match read[..k].iter().rev().find_map(|o| o.address.as_ref()) {
                Some(a) => AddressRead::Copy(a),
                None => AddressRead::Read,
            },
        };
        // SAFETY: as this function's contract.
        match unsafe { fill_order(table, sale, &mut rest[0], &mut codes, address) } {
            Ok(()) => from.push(i),
            Err(e) => failed.fail(i, e, out),
        }
    }
    let n = from.len();
    // A sale at the address struct of the sale before it, at the same time (not "now"),
    // shares its place: the struct's strings cannot change during the call. (Exactly the
    // sales read as `Address::Before`.)
    let same_place = |k: usize| {
        let (a, b) = (&sales[from[k - 1]], &sales[from[k]]);
        a.address == b.address && a.transacted_at == b.transacted_at && b.transacted_at != 0
    };
    let refused = quoter.quote_batch(table, &mut orders[..n], same_place, calcs);
    let mut refused = refused.into_iter().peekable();
    for (k, calc) in calcs.iter().enumerate() {
        let i = from[k];
        if refused.peek().is_some_and(|(at, _)| *at == k) {
            if let Some((_, e)) = refused.next() {
                failed.fail(i, quote_error(&e), out);
            }
            continue;
        }
        match LevyBatchResult::of(calc) {
            Ok(r) => {
                out[i].write(r);
            }
            Err(e) => failed.fail(i, e, out),
        }
    }
    failed.0
}

/// The failed sale of a batch with the lowest index, and its error.
struct FirstFailure(Option<(usize, Error)>);

impl FirstFailure {
    /// Sale `i` failed with `e`: its result says the status, and it is the batch's error
    /// when no sale before it failed.
    fn fail(&mut self, i: usize, e: Error, out: &mut [MaybeUninit<LevyBatchResult>]) {
        out[i].write(LevyBatchResult::failed(e.status));
        if self.0.as_ref().is_none_or(|(j, _)| i < *j) {
            self.0 = Some((i, e));
        }
    }
}

/// Calculates the sale into `spare` (a freed result, its location and vectors reused) or
/// into a new result, through the thread's order and quoter.
///
/// # Safety
///
/// As for `levy_calculate`: `sale`'s pointers are NULL or valid.
unsafe fn fill_result(
    table: &AnyTable,
    sale: &LevySale,
    scratch: &mut Scratch,
    spare: Option<Box<LevyResult>>,
) -> Result<Box<LevyResult>, Error> {
    let Scratch { order, quoter } = scratch;
    // SAFETY: as this function's contract.
    unsafe {
        fill_order(
            table,
            sale,
            order,
            &mut TaxCodes::default(),
            AddressRead::Read,
        )
    }?;
    quoter.quote(table, order).map_err(|e| quote_error(&e))?;
    let mut result = spare.unwrap_or_else(|| {
        Box::new(LevyResult {
            table: None,
            calc: Calculation::default(),
            location: Location::default(),
            strings: OnceLock::new(),
        })
    });
    let LevyResult { calc, location, .. } = &mut *result;
    quoter.swap_answer(calc, location);
    Ok(result)
}

/// The tax codes of the lines read during one call, by the addresses of their category and
/// tax code strings: a string given again at the same address in the same call (a batch's
/// sales naming one category, as a till's do) is read and looked up once. Only within a
/// call: the caller may reuse the memory for other text between calls.
#[derive(Default)]
struct TaxCodes {
    /// (category pointer, tax code pointer, the code), in a ring; `next` is the slot the
    /// next new pair takes.
    seen: [Option<(usize, usize, TaxCodeId)>; TAX_CODES_KEPT],
    next: usize,
}

/// Distinct (category, tax code) pointer pairs a call remembers.
const TAX_CODES_KEPT: usize = 8;

impl TaxCodes {
    /// The tax code of `line` (the `i`-th of its sale).
    ///
    /// # Safety
    ///
    /// The line's strings are NULL or NUL-terminated, and unchanged during the call.
    unsafe fn get(
        &mut self,
        table: &AnyTable,
        line: &LevySaleLine,
        i: usize,
    ) -> Result<TaxCodeId, Error> {
        let key = (line.category as usize, line.tax_code as usize);
        if let Some((_, _, code)) = self.seen.iter().flatten().find(|(c, t, _)| (*c, *t) == key) {
            return Ok(*code);
        }
        // SAFETY: NULL or NUL-terminated per the contract.
        let category = unsafe { opt_str_arg(line.category, "line.category") }?;
        // SAFETY: as above.
        let code = unsafe { opt_str_arg(line.tax_code, "line.tax_code") }?;
        let found = match (category, code) {
            (Some(c), _) => table.category(c).ok_or_else(|| {
                Error::new(
                    LevyStatus::LEVY_UNKNOWN_TAX_CODE,
                    format!("line {i}: unknown product category {c:?}"),
                )
            })?,
            (None, Some(c)) => table.tax_code(c).ok_or_else(|| {
                Error::new(
                    LevyStatus::LEVY_UNKNOWN_TAX_CODE,
                    format!("line {i}: unknown product tax code {c:?}"),
                )
            })?,
            (None, None) => table.tax_code("GENERAL_MERCHANDISE").ok_or_else(|| {
                Error::new(
                    LevyStatus::LEVY_UNKNOWN_TAX_CODE,
                    format!("line {i}: no category or tax code given and the table has no GENERAL_MERCHANDISE"),
                )
            })?,
        };
        self.seen[self.next] = Some((key.0, key.1, found));
        self.next = (self.next + 1) % TAX_CODES_KEPT;
        Ok(found)
    }
}

/// How a sale of a batch has its address read.
enum AddressRead<'a> {
    /// From its C strings.
    Read,
    /// Copied from the address of a sale before it at the same struct, read already.
    Copy(&'a Address),
    /// Not at all: it is at the address of the sale before it, whose place it shares
    /// ([`Quoter::quote_batch`] takes an order without an address as that one's).
    Before,
}

/// Reads `sale` into `order` (its buffers reused), as the front door takes it: the lines
/// (their tax codes through `codes`), the terms its flags say, the address and the IP, the
/// ship-from address, the day (none for 0, now), the currency and its exchange rate, the
/// delivery. `address` says how its address is read: from the C strings, copied from a sale
/// before it in the same batch that read the same struct, or not at all.
///
/// # Safety
///
/// As for `levy_calculate`: `sale`'s pointers are NULL or valid.
unsafe fn fill_order(
    table: &AnyTable,
    sale: &LevySale,
    order: &mut Order,
    codes: &mut TaxCodes,
    address: AddressRead<'_>,
) -> Result<(), Error> {
    // SAFETY: as this function's contract.
    let (currency, lines) = unsafe { sale_header(sale) }?;
    // SAFETY: as this function's contract.
    unsafe { read_lines(table, sale, lines, order, codes) }?;
    let ip_mode = ip_mode_of(sale)?;
    // SAFETY: NULL or NUL-terminated per the contract.
    match unsafe { opt_str_arg(sale.ip, "sale.ip") }? {
        Some(value) => {
            let ip = order.ip.get_or_insert_with(Ip::default);
            ip.value.clear();
            ip.value.push_str(value);
            ip.mode = ip_mode;
        }
        None => order.ip = None,
    }
    match address {
        _ if sale.address.is_null() => order.address = None,
        AddressRead::Before => order.address = None,
        AddressRead::Copy(read) => copy_address(read, order.address_mut()),
        // SAFETY: non-null and valid per the contract; fields NULL or NUL-terminated.
        AddressRead::Read => unsafe { fill_address(&*sale.address, order.address_mut()) }?,
    }
    if sale.origin.is_null() {
        order.origin = None;
    } else {
        // SAFETY: non-null and valid per the contract; fields NULL or NUL-terminated.
        unsafe { fill_address(&*sale.origin, order.origin_mut()) }?;
    }
    order.date = (sale.transacted_at != 0).then(|| Date::from_unix_seconds(sale.transacted_at));
    // SAFETY: NULL or NUL-terminated per the contract.
    order.exchange_rate = match unsafe { opt_str_arg(sale.exchange_rate, "sale.exchange_rate") }? {
        None => None,
        Some(text) => Some(levy_core::quote::read::exchange_rate(text).map_err(|e| {
            Error::of_kind(LevyStatus::LEVY_EXCHANGE_RATE_REQUIRED, e.kind, e.message)
        })?),
    };
    order.delivery = delivery_of(sale, currency);
    set_terms(order, sale, currency);
    Ok(())
}

/// The sale's `lines` into the order's sale, each with its tax code (through `codes`), per
/// unit when the sale's flags say so.
///
/// # Safety
///
/// As for `levy_calculate`: the lines' strings are NULL or NUL-terminated.
#[inline]
unsafe fn read_lines(
    table: &AnyTable,
    sale: &LevySale,
    lines: &[LevySaleLine],
    order: &mut Order,
    codes: &mut TaxCodes,
) -> Result<(), Error> {
    let per_unit = sale.flags & LEVY_SALE_PER_UNIT != 0;
    let core_lines = &mut order.sale.lines;
    core_lines.clear();
    for (i, line) in lines.iter().enumerate() {
        // SAFETY: as this function's contract.
        let tax_code = unsafe { codes.get(table, line, i) }?;
        core_lines.push(SaleLine {
            amount: Decimal::from(line.amount),
            quantity: line.quantity,
            per_unit,
            tax_code,
        });
    }
    Ok(())
}

/// The sale's IP resolution mode, from its `LEVY_IP_*` value.
#[inline]
fn ip_mode_of(sale: &LevySale) -> Result<IpMode, Error> {
    match sale.ip_mode {
        LEVY_IP_STRICT => Ok(IpMode::Strict),
        LEVY_IP_ZERO => Ok(IpMode::Zero),
        LEVY_IP_APPROXIMATE => Ok(IpMode::Approximate),
        LEVY_IP_BEST_EFFORT => Ok(IpMode::BestEffort),
        m => Err(Error::new(
            LevyStatus::LEVY_INVALID_ARGUMENT,
            format!("sale.ip_mode {m} is not a LEVY_IP_* value"),
        )),
    }
}

/// The sale's terms into the order's sale: its currency, and what its flags say of tax
/// included, an exempt buyer, automatic tax and rounding.
#[inline]
fn set_terms(order: &mut Order, sale: &LevySale, currency: Currency) {
    let core_sale = &mut order.sale;
    core_sale.currency = currency;
    core_sale.tax_included = sale.flags & LEVY_SALE_TAX_INCLUDED != 0;
    core_sale.customer.exempt = sale.flags & LEVY_SALE_CUSTOMER_EXEMPT != 0;
    core_sale.automatic_tax = if sale.flags & LEVY_SALE_AUTOMATIC_TAX_DISABLED != 0 {
        AutomaticTax::Disabled
    } else {
        AutomaticTax::Auto
    };
    core_sale.rounding = if sale.flags & LEVY_SALE_INVOICE_ROUNDING != 0 {
        levy_core::Rounding::Invoice
    } else {
        levy_core::Rounding::Line
    };
}

/// Fills `*out` with the order-level figures of `result`.
///
/// Errors: `LEVY_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
///
/// `result` must be NULL or a live result; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_result_summary(
    result: *const LevyResult,
    out: *mut LevySummary,
) -> LevyStatus {
    ffi_guard!({
        non_null!(result, "result");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract; results are never mutated after creation.
        let r = unsafe { &*result };
        let s = r.strings();
        let c = &r.calc;
        let summary = LevySummary {
            total_tax: minor_i64(c.total_tax),
            total_excluding_tax: minor_i64(c.total_excluding_tax),
            total_including_tax: minor_i64(c.total_including_tax),
            line_count: c.lines.len(),
            currency: s.currency.as_ptr(),
            address_resolution_status: s.status.as_ptr(),
            resolution_precision: s.precision.as_ptr(),
            location_source: s.source.as_ptr(),
            zero_reason: s
                .zero_reason
                .as_ref()
                .map_or(std::ptr::null(), |z| z.as_ptr()),
            effective_rate: s.effective_rate.as_ptr(),
            table_hash: s.table_hash.as_ptr(),
            coverage: coverage_cstr(c.coverage).as_ptr(),
            sourcing: static_cstr(c.sourcing.as_str()).as_ptr(),
            rounding: match c.rounding {
                levy_core::Rounding::Invoice => c"INVOICE".as_ptr(),
                levy_core::Rounding::Line => c"LINE".as_ptr(),
            },
            taxability: taxability_cstr(c.taxability).as_ptr(),
            stale_table: s.stale.as_ref().map_or(std::ptr::null(), |z| z.as_ptr()),
        };
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe { out.write(summary) };
        Ok(())
    })
}

/// Fills `*out` with the address the result was resolved from (normalized: upper case,
/// ZIP+4 when it decided). Every field is a non-NULL string, possibly empty.
///
/// Errors: `LEVY_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
///
/// `result` must be NULL or a live result; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_result_address_used(
    result: *const LevyResult,
    out: *mut LevyAddress,
) -> LevyStatus {
    ffi_guard!({
        non_null!(result, "result");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let a = &unsafe { &*result }.strings().address;
        let address = LevyAddress {
            line1: a[0].as_ptr(),
            line2: a[1].as_ptr(),
            city: a[2].as_ptr(),
            region: a[3].as_ptr(),
            postal_code: a[4].as_ptr(),
            country: a[5].as_ptr(),
        };
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe { out.write(address) };
        Ok(())
    })
}

fn index_error(what: &str, index: usize, len: usize) -> Error {
    Error::new(
        LevyStatus::LEVY_INDEX_OUT_OF_RANGE,
        format!("{what} index {index} is out of range (there are {len})"),
    )
}

/// Fills `*out` with line `line_index` (0-based, in the sale's order).
///
/// Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INDEX_OUT_OF_RANGE`. Thread-safe.
///
/// # Safety
///
/// `result` must be NULL or a live result; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_result_line(
    result: *const LevyResult,
    line_index: usize,
    out: *mut LevyLine,
) -> LevyStatus {
    ffi_guard!({
        non_null!(result, "result");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let r = unsafe { &*result };
        let n = r.calc.lines.len();
        let l = r
            .calc
            .lines
            .get(line_index)
            .ok_or_else(|| index_error("line", line_index, n))?;
        let s = &r.strings().lines[line_index];
        let line = LevyLine {
            tax_code: s.tax_code.as_ptr(),
            quantity: l.quantity,
            amount_excluding_tax: minor_i64(l.amount_excluding_tax),
            tax_amount: minor_i64(l.tax),
            amount_including_tax: minor_i64(l.amount_including_tax),
            tax_amount_decimal: s.tax_amount.as_ptr(),
            jurisdiction_count: l.jurisdictions.len(),
            taxability: taxability_cstr(l.taxability).as_ptr(),
        };
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe { out.write(line) };
        Ok(())
    })
}

/// Fills `*out` with jurisdiction entry `jurisdiction_index` of line `line_index`, in the
/// location's level order (state, county, city, district).
///
/// Errors: `LEVY_NULL_ARGUMENT`, `LEVY_INDEX_OUT_OF_RANGE`. Thread-safe.
///
/// # Safety
///
/// `result` must be NULL or a live result; `out` NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn levy_result_jurisdiction(
    result: *const LevyResult,
    line_index: usize,
    jurisdiction_index: usize,
    out: *mut LevyJurisdiction,
) -> LevyStatus {
    ffi_guard!({
        non_null!(result, "result");
        non_null!(out, "out");
        // SAFETY: non-null and live per the contract.
        let r = unsafe { &*result };
        let n = r.calc.lines.len();
        let l = r
            .calc
            .lines
            .get(line_index)
            .ok_or_else(|| index_error("line", line_index, n))?;
        let j = l.jurisdictions.get(jurisdiction_index).ok_or_else(|| {
            index_error("jurisdiction", jurisdiction_index, l.jurisdictions.len())
        })?;
        let s = &r.strings().lines[line_index].jurisdictions[jurisdiction_index];
        let entry = LevyJurisdiction {
            code: s.code.as_ptr(),
            name: s.name.as_ptr(),
            level: s.level.as_ptr(),
            authority: s.authority.as_ptr(),
            tax_type: s.tax_type.as_ptr(),
            rate_type: s.rate_type.as_ptr(),
            note: s.note.as_ptr(),
            rate: s.rate.as_ptr(),
            taxable_base: s.taxable_base.as_ptr(),
            tax_due: s.tax_due.as_ptr(),
            fee: s.fee.as_ptr(),
            tax_due_minor: minor_i64(round_minor(j.tax_due)),
            sourced: static_cstr(j.sourced.as_str()).as_ptr(),
        };
        // SAFETY: out is non-null and valid for writing, per the contract.
        unsafe { out.write(entry) };
        Ok(())
    })
}

/// Frees a result and every string read from it. NULL is accepted and does nothing.
///
/// The calling thread keeps up to four freed results, their strings and their hold on the
/// table let go, and its next `levy_calculate` fills one of them again instead of
/// allocating a new result: a freed pointer may come back from a later call.
///
/// # Safety
///
/// `result` must be NULL or a pointer from `levy_calculate` not yet freed, and no thread
/// may use it or its strings afterwards.
#[no_mangle]
pub unsafe extern "C" fn levy_result_free(result: *mut LevyResult) {
    ffi_guard!(() => {
        if !result.is_null() {
            // SAFETY: the pointer came from Box::into_raw in levy_calculate and is freed once.
            let mut result = unsafe { Box::from_raw(result) };
            // Let go of the table (an engine freed meanwhile releases it now) and of the
            // strings read from the result.
            result.table = None;
            result.strings = OnceLock::new();
            // A result of very many lines is not kept: its buffers would stay with the thread.
            if result.calc.lines.capacity() <= SCRATCH_LINES {
                // Should the thread be shutting down, the result is dropped with the closure.
                let _ = SPARE_RESULTS.try_with(move |pool| {
                    let mut pool = pool.borrow_mut();
                    if pool.len() < SPARE_RESULTS_KEPT {
                        pool.push(result);
                    }
                });
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    /// A Tennessee address holding only `postal`.
    fn tennessee_address(postal: &'static std::ffi::CStr) -> LevyAddress {
        LevyAddress {
            line1: std::ptr::null(),
            line2: std::ptr::null(),
            city: std::ptr::null(),
            region: c"TN".as_ptr(),
            postal_code: postal.as_ptr(),
            country: c"US".as_ptr(),
        }
    }

    /// One $100.00 line of general merchandise.
    fn hundred_dollars() -> LevySaleLine {
        LevySaleLine {
            amount: 10_000,
            quantity: 1,
            category: c"GENERAL_MERCHANDISE".as_ptr(),
            tax_code: std::ptr::null(),
        }
    }

    /// A sale of `line` at `address`, in USD, at `transacted_at` (Unix seconds).
    fn sale_at(address: &LevyAddress, line: &LevySaleLine, transacted_at: i64) -> LevySale {
        LevySale {
            address,
            ip: std::ptr::null(),
            ip_mode: 0,
            currency: std::ptr::null(),
            flags: 0,
            transacted_at,
            lines: line,
            line_count: 1,
            origin: std::ptr::null(),
            seller_sales_previous_year: 0,
            exchange_rate: std::ptr::null(),
        }
    }

    #[test]
    fn a_freed_result_lets_go_of_the_table_and_is_refilled() {
        let table = levy_testkit::tennessee::Tennessee::c_abi().table();
        let engine = LevyEngine::new(EngineTable::Shared(Arc::clone(&table)));
        let address = tennessee_address(c"37203");
        let line = hundred_dollars();
        let sale = sale_at(&address, &line, 1_772_323_200);
        let mut r: *mut LevyResult = std::ptr::null_mut();
        // SAFETY: every pointer is live for the calls.
        assert_eq!(
            unsafe { levy_calculate(&engine, &sale, &mut r) },
            LevyStatus::LEVY_OK
        );
        // The engine, the test and the result hold the table.
        assert_eq!(Arc::strong_count(&table), 3);
        // SAFETY: r is a live result, freed once.
        unsafe { levy_result_free(r) };
        // Kept for reuse, but no longer holding the table.
        assert_eq!(Arc::strong_count(&table), 2);
        let first = r;
        // SAFETY: as above.
        assert_eq!(
            unsafe { levy_calculate(&engine, &sale, &mut r) },
            LevyStatus::LEVY_OK
        );
        assert_eq!(r, first, "the freed result is filled again");
        // SAFETY: r is live.
        let calc = unsafe { &(*r).calc };
        // 7% + 2.25% of 10000 (the fixture's state and Davidson County): 925.
        assert_eq!(calc.total_tax, Decimal::from(925));
        assert_eq!(Arc::strong_count(&table), 3);
        // SAFETY: r is a live result, freed once.
        unsafe { levy_result_free(r) };
    }

    #[test]
    fn a_batch_resolves_one_address_on_each_of_its_days() {
        // ZIP 37209 is in Tennessee alone until 2026-02-28 and in Davidson County too from
        // 2026-03-01. Sales at one address struct on alternating days: each is resolved on
        // its own day (a sale shares the place of the sale before it only on the same day).
        let (mut b, j) = levy_testkit::tennessee::Tennessee::c_abi().builder();
        let (feb_28, mar_1) = (
            Date::from_ymd(2026, 2, 28).unwrap(),
            Date::from_ymd(2026, 3, 1).unwrap(),
        );
        for (js, from, to, coverage) in [
            (
                &[j.state][..],
                Date::MIN,
                feb_28,
                levy_core::Coverage::StateOnly,
            ),
            (
                &[j.state, j.davidson][..],
                mar_1,
                Date::MAX,
                levy_core::Coverage::Full,
            ),
        ] {
            b.zip_period(37209, "TN", "NASHVILLE", js, from, to, coverage, u32::MAX)
                .unwrap();
        }
        let table = levy_testkit::tennessee::open(&b.build(0).unwrap());
        let engine = LevyEngine::new(EngineTable::Shared(table));
        let address = tennessee_address(c"37209");
        let line = hundred_dollars();
        // 2026-02-28T12:00Z and 2026-03-01T12:00Z.
        let (before, after) = (1_772_280_000, 1_772_366_400);
        let sales: Vec<LevySale> = [before, after, after, before, before, after]
            .iter()
            .map(|&transacted_at| sale_at(&address, &line, transacted_at))
            .collect();
        let mut out = vec![LevyBatchResult::failed(LevyStatus::LEVY_PANIC); sales.len()];
        // SAFETY: every pointer is live for the call; out holds one result a sale.
        let status =
            unsafe { levy_calculate_batch(&engine, sales.as_ptr(), sales.len(), out.as_mut_ptr()) };
        assert_eq!(status, LevyStatus::LEVY_OK);
        // 7% of $100.00 before (the state alone); 7% + 2.25% after.
        let taxes: Vec<i64> = out.iter().map(|r| r.total_tax).collect();
        assert_eq!(taxes, [700, 925, 925, 700, 700, 925]);
    }

    #[test]
    fn a_batch_of_300_sales_answers_each_and_names_its_first_failure() {
        // 300 sales at one address struct, one time, resolved once. Sales 200 and 250 name
        // a category the table lacks and fail alone; the batch's error is sale 200's, the
        // lowest failed index.
        let (b, _) = levy_testkit::tennessee::Tennessee::c_abi().builder();
        let table = levy_testkit::tennessee::open(&b.build(0).unwrap());
        let engine = LevyEngine::new(EngineTable::Shared(table));
        let address = tennessee_address(c"37203");
        let line = hundred_dollars();
        let unknown = LevySaleLine {
            category: c"NO_SUCH_CATEGORY".as_ptr(),
            ..hundred_dollars()
        };
        let sales: Vec<LevySale> = (0..300)
            .map(|i| {
                let l = if i == 200 || i == 250 {
                    &unknown
                } else {
                    &line
                };
                sale_at(&address, l, 1_772_280_000)
            })
            .collect();
        let mut out = vec![LevyBatchResult::failed(LevyStatus::LEVY_PANIC); sales.len()];
        // SAFETY: every pointer is live for the call; out holds one result a sale.
        let status =
            unsafe { levy_calculate_batch(&engine, sales.as_ptr(), sales.len(), out.as_mut_ptr()) };
        assert_eq!(status, LevyStatus::LEVY_UNKNOWN_TAX_CODE);
        let message = unsafe { std::ffi::CStr::from_ptr(crate::levy_last_error_message()) };
        assert!(
            message.to_str().unwrap().starts_with("sales[200]: "),
            "{message:?}"
        );
        for (i, r) in out.iter().enumerate() {
            if i == 200 || i == 250 {
                assert_eq!(
                    (r.status, r.total_tax),
                    (LevyStatus::LEVY_UNKNOWN_TAX_CODE, 0)
                );
            } else {
                // $100.00 at 37203 in the Tennessee table: 7% + 2.25%.
                assert_eq!(
                    (r.status, r.total_tax),
                    (LevyStatus::LEVY_OK, 925),
                    "sale {i}"
                );
            }
        }
    }

    #[test]
    fn engines_and_results_are_shareable_between_threads() {
        // The header promises both may be used from many threads at once.
        assert_send_sync::<LevyEngine>();
        assert_send_sync::<LevyResult>();
    }
}
