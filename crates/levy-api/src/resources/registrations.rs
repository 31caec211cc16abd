//! Registrations (a levy extension, in every API version): where an account, or one of its
//! merchants, is registered to collect, from when and until when. Create, list, get and
//! expire; never deleted, so that a calculation dated in the past finds the registrations
//! of its day.
//!
//! Once a seller (the account, or a merchant for platform calculations) has a `sales_tax`
//! registration, `automatic_tax: auto` collects only where one is active on the sale's
//! date ([`crate::calculate`]); a seller with none collects everywhere.

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::{Node, Obj};
use crate::service::Service;
use crate::store::{Made, RegistrationFilter, RegistrationKind, RegistrationRecord, Scope, Write};

/// Registrations per list page.
pub(crate) const PAGE: usize = 50;

/// Every registration of `scope` that `filter` shows, read a page at a time.
pub(crate) fn all(
    store: &dyn crate::store::Store,
    scope: &Scope,
    filter: &RegistrationFilter,
) -> Result<Vec<RegistrationRecord>, crate::store::StoreError> {
    let mut all: Vec<RegistrationRecord> = Vec::new();
    loop {
        let cursor = all.last().map(|r| r.id.clone());
        let page = store.list_registrations(scope, cursor.as_deref(), filter, PAGE)?;
        let done = page.len() < PAGE;
        all.extend(page);
        if done {
            return Ok(all);
        }
    }
}
/// Most local jurisdictions on one registration.
pub const MAX_LOCALS: usize = 100;
/// Longest local jurisdiction code, in characters.
const MAX_LOCAL_CHARS: usize = 64;
/// Longest `country`, `region` or `type` read (longer is `STRING_TOO_LONG`; shorter ones
/// are checked against their lists).
const MAX_CODE_CHARS: usize = 32;

/// The states, the District of Columbia and the territories USPS addresses: the regions a
/// US registration may name.
pub const US_REGIONS: [&str; 56] = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY", "PR", "GU", "VI", "AS", "MP",
];

/// Canada's provinces and territories: the regions a Canadian registration may name.
pub const CA_REGIONS: [&str; 13] = [
    "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT",
];

/// The officially assigned ISO 3166-1 alpha-2 codes, in order.
const ISO_COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ \
    BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ \
    CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ \
    DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR \
    GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY \
    HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP \
    KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY \
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ \
    NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY \
    QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ \
    TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ \
    VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// Whether `code` (upper case) is an ISO 3166-1 alpha-2 country code.
fn is_country(code: &str) -> bool {
    code.len() == 2 && ISO_COUNTRIES.split_ascii_whitespace().any(|c| c == code)
}

/// A registration to add ([`Service::add_registration`]; the body of
/// `POST /tax/registrations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRegistration {
    /// The merchant (`merch_…` id or `reference_merchant_id`) whose registration it is;
    /// `None` for the account's own.
    pub merchant_id: Option<String>,
    /// ISO 3166-1 alpha-2 country (any case).
    pub country: String,
    /// The state or province without the country (`TX`, `ON`): required for the US and
    /// Canada; for another country a subdivision code, or empty for the whole country.
    pub region: String,
    /// The local (home-rule) jurisdictions, by the rate table's jurisdiction code, the
    /// registration also covers; empty: every local jurisdiction of the region.
    pub local_jurisdictions: Vec<String>,
    /// What it lets the account collect.
    pub kind: RegistrationKind,
    /// Epoch seconds from which it is active; `None`: now.
    pub active_from: Option<i64>,
    /// Epoch seconds from which it is no longer active, after `active_from`; `None`:
    /// open-ended.
    pub expires_at: Option<i64>,
}

/// The status of a registration at `now`: `scheduled` before `active_from`, `active`, or
/// `expired` from `expires_at` on.
pub fn status(r: &RegistrationRecord, now: i64) -> &'static str {
    if now < r.active_from {
        "scheduled"
    } else if r.active_at(now) {
        "active"
    } else {
        "expired"
    }
}

/// A registration in the interface's shape (`tax.registration`).
pub fn render(r: &RegistrationRecord, testmode: bool, now: i64) -> Value {
    json!({
        "id": r.id,
        "object": "tax.registration",
        "merchant_id": r.merchant_id,
        "country": r.country,
        "region": r.region,
        "local_jurisdictions": r.locals,
        "type": r.kind.as_str(),
        "active_from": r.active_from,
        "expires_at": r.expires_at,
        "status": status(r, now),
        "testmode": testmode,
        "created_at": r.created_at,
        "updated_at": r.updated_at,
    })
}

/// The country, upper case, when it is an ISO 3166-1 alpha-2 code (in either case).
pub(crate) fn country(field: &str, given: &str) -> Result<String, ApiError> {
    let c = given.to_ascii_uppercase();
    if is_country(&c) {
        return Ok(c);
    }
    Err(ApiError::field(
        ErrorKind::InvalidCountryCode,
        field,
        format!("{field} {given:?} is not an ISO 3166-1 alpha-2 country code"),
        "an ISO 3166-1 alpha-2 country code, such as US or CA",
        given,
    ))
}

/// The region of `country`, upper case: a state (US) or province (Canada), which those
/// two require; for another country empty or a subdivision code of 1 to 3 letters and
/// digits.
pub(crate) fn region(field: &str, country: &str, given: &str) -> Result<String, ApiError> {
    let r = given.to_ascii_uppercase();
    let (ok, expected) = match country {
        "US" => (
            US_REGIONS.contains(&r.as_str()),
            "a US state, DC or territory code, such as TX",
        ),
        "CA" => (
            CA_REGIONS.contains(&r.as_str()),
            "a Canadian province or territory code, such as ON",
        ),
        _ => (
            r.len() <= 3 && r.bytes().all(|b| b.is_ascii_alphanumeric()),
            "empty (the whole country) or an ISO 3166-2 subdivision code without the country",
        ),
    };
    if ok {
        return Ok(r);
    }
    Err(ApiError::field(
        ErrorKind::InvalidRegion,
        field,
        format!("{field} {given:?} is not a region of {country}: expected {expected}"),
        expected,
        given,
    ))
}

/// The type of a registration: `sales_tax` or `retail_delivery_fee`.
pub(crate) fn kind(field: &str, given: &str) -> Result<RegistrationKind, ApiError> {
    RegistrationKind::parse(given).ok_or_else(|| {
        let names: Vec<&str> = RegistrationKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::field(
            ErrorKind::IncorrectType,
            field,
            format!("{field} must be one of {}", names.join(", ")),
            names.join(" | "),
            given,
        )
    })
}

/// The local jurisdiction codes, each once: at most [`MAX_LOCALS`], each 1 to 64
/// characters that neither start nor end with white space.
fn locals(field: &str, given: &[String]) -> Result<Vec<String>, ApiError> {
    if given.len() > MAX_LOCALS {
        return Err(ApiError::field(
            ErrorKind::TooManyItems,
            field,
            format!("{field} may hold at most {MAX_LOCALS} jurisdictions"),
            format!("at most {MAX_LOCALS} jurisdiction codes"),
            format!("{} codes", given.len()),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(given.len());
    for (i, code) in given.iter().enumerate() {
        let at = format!("{field}[{i}]");
        crate::json::storable(&at, code)?;
        let n = code.chars().count();
        if n == 0 || n > MAX_LOCAL_CHARS || code.trim() != code {
            return Err(ApiError::field(
                ErrorKind::IncorrectType,
                &at,
                format!("{at} must be a jurisdiction code of 1 to {MAX_LOCAL_CHARS} characters, without white space around it"),
                format!("a jurisdiction code of 1 to {MAX_LOCAL_CHARS} characters"),
                code,
            ));
        }
        if out.iter().any(|c| c.eq_ignore_ascii_case(code)) {
            return Err(ApiError::field(
                ErrorKind::IncorrectType,
                &at,
                format!("{at}: jurisdiction {code} is given twice"),
                "each jurisdiction once",
                code,
            ));
        }
        out.push(code.to_string());
    }
    Ok(out)
}

/// The record of a new registration, checked, made at `now`, of the account itself (the
/// caller sets the merchant it names).
fn record(new: &NewRegistration, now: i64) -> Result<RegistrationRecord, ApiError> {
    let country = country("country", &new.country)?;
    let region = region("region", &country, &new.region)?;
    let locals = locals("local_jurisdictions", &new.local_jurisdictions)?;
    let active_from = match new.active_from {
        Some(t) => crate::read::unix_seconds("active_from", t)?,
        None => now,
    };
    let expires_at = match new.expires_at {
        Some(t) => Some(crate::read::unix_seconds("expires_at", t)?),
        None => None,
    };
    if let Some(e) = expires_at.filter(|e| *e <= active_from) {
        return Err(ApiError::field(
            ErrorKind::InvalidExpiry,
            "expires_at",
            format!("expires_at {e} must be after active_from {active_from}"),
            format!("after {active_from}"),
            e.to_string(),
        ));
    }
    Ok(RegistrationRecord {
        id: crate::ids::new_id("reg_"),
        merchant_id: None,
        country,
        region,
        locals,
        kind: new.kind,
        active_from,
        expires_at,
        created_at: now,
        updated_at: now,
    })
}

/// The `merch_…` id of the merchant a registration names, which must exist and not be
/// deleted.
fn merchant_of(
    service: &Service,
    scope: &Scope,
    id: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let Some(id) = id else {
        return Ok(None);
    };
    let m = service
        .store
        .merchant(scope, id)?
        .ok_or_else(|| crate::read::merchant_not_found(id, "merchant_id"))?;
    if m.status == crate::store::MerchantStatus::Deleted {
        return Err(crate::read::merchant_deleted(id, "merchant_id"));
    }
    Ok(Some(m.id))
}

/// Adds a registration for `scope`, at `now`.
pub(crate) fn add(
    service: &Service,
    scope: &Scope,
    new: &NewRegistration,
    now: i64,
) -> Result<RegistrationRecord, ApiError> {
    let r = checked(service, scope, new, now)?;
    service.store.insert_registration(scope, r.clone())?;
    Ok(r)
}

/// The registration `new` asks for, checked: the body's own checks first, then the
/// merchant it names.
fn checked(
    service: &Service,
    scope: &Scope,
    new: &NewRegistration,
    now: i64,
) -> Result<RegistrationRecord, ApiError> {
    let mut r = record(new, now)?;
    r.merchant_id = merchant_of(service, scope, new.merchant_id.as_deref())?;
    Ok(r)
}

/// Expires registration `id` of `scope` at `at` (default `now`).
pub(crate) fn expire_at(
    service: &Service,
    scope: &Scope,
    id: &str,
    at: Option<i64>,
    now: i64,
) -> Result<RegistrationRecord, ApiError> {
    let at = expiry(at, now)?;
    Ok(service.store.expire_registration(scope, id, at, now)?)
}

/// The expiry asked (`None`: now), checked.
fn expiry(at: Option<i64>, now: i64) -> Result<i64, ApiError> {
    match at {
        Some(t) => crate::read::unix_seconds("expires_at", t),
        None => Ok(now),
    }
}

/// One registration of `scope`; `REGISTRATION_NOT_FOUND` (404) when there is none.
pub(crate) fn find(
    service: &Service,
    scope: &Scope,
    id: &str,
) -> Result<RegistrationRecord, ApiError> {
    service.store.registration(scope, id)?.ok_or_else(|| {
        crate::read::not_found(ErrorKind::RegistrationNotFound, "registration", "id", id)
    })
}

/// An optional array of strings.
fn strings(o: &mut Obj<'_>, name: &str) -> Result<Vec<String>, ApiError> {
    let Some(items) = o.opt_array(name)? else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Node::String(s) => Ok(s.to_string()),
            other => Err(ApiError::incorrect_type(
                &format!("{name}[{i}]"),
                "string",
                other,
            )),
        })
        .collect()
}

/// `POST /tax/registrations`: `country` and `region` required (region may be empty
/// outside the US and Canada); `type` (default `sales_tax`), `local_jurisdictions`,
/// `active_from` (default now), `expires_at` and `merchant_id` optional.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let new = crate::read::body(ctx, |o| {
        let country = o.req_str("country", MAX_CODE_CHARS)?.to_string();
        let region = o.req_str("region", MAX_CODE_CHARS)?.to_string();
        let kind = match o.opt_str("type", MAX_CODE_CHARS)? {
            Some(k) => kind("type", k)?,
            None => RegistrationKind::SalesTax,
        };
        Ok(NewRegistration {
            merchant_id: o
                .opt_str("merchant_id", crate::json::MAX_STRING)?
                .map(str::to_string),
            country,
            region,
            local_jurisdictions: strings(o, "local_jurisdictions")?,
            kind,
            active_from: o.opt_int("active_from")?,
            expires_at: o.opt_int("expires_at")?,
        })
    })?;
    let r = checked(ctx.service, ctx.scope, &new, now)?;
    let view = render(&r, ctx.testmode(), now);
    Ok(crate::idempotency::store(
        ctx,
        Write::Registration(r),
        view,
    )?)
}

/// `GET /tax/registrations/{id}`.
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.query_params(&[])?;
    let r = find(ctx.service, ctx.scope, &ctx.params[0])?;
    Ok(render(&r, ctx.testmode(), crate::clock::now()))
}

/// `POST /tax/registrations/{id}/expire`: body `{"expires_at": …}` (optional, default
/// now; an empty body is accepted too).
pub(crate) fn expire(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let now = crate::clock::now();
    let at = if ctx.req.body.iter().all(u8::is_ascii_whitespace) {
        ctx.query_params(&[])?;
        None
    } else {
        crate::read::body(ctx, |o| o.opt_int("expires_at"))?
    };
    let write = Write::Expiry {
        id: ctx.params[0].clone(),
        at: expiry(at, now)?,
        now,
    };
    let testmode = ctx.testmode();
    Ok(crate::idempotency::make(
        ctx,
        write,
        move |made| match made {
            Made::Registration(r) => Some(render(r, testmode, now)),
            _ => None,
        },
    )?)
}

/// `GET /tax/registrations?cursor=…&country=…&region=…`: up to 50 registrations ordered by
/// id after the cursor (`last_registration_id` of the previous page), of one country (and
/// region) when asked.
pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let mut cursor = None;
    let mut filter = RegistrationFilter::default();
    let mut region_asked = None;
    for (k, v) in ctx.query_params(&["cursor", "country", "region"])? {
        match k {
            "cursor" => cursor = Some(v),
            "country" => filter.country = Some(country("country", v)?),
            _ => region_asked = Some(v),
        }
    }
    if let Some(r) = region_asked {
        filter.region = Some(match &filter.country {
            Some(c) => region("region", c, r)?,
            None => {
                return Err(ApiError::field(
                    ErrorKind::InvalidQueryParameter,
                    "region",
                    "region filters registrations of one country: give country too",
                    "country with region",
                    r,
                ))
            }
        });
    }
    let mut page = ctx
        .service
        .store
        .list_registrations(ctx.scope, cursor, &filter, PAGE + 1)?;
    let has_more = page.len() > PAGE;
    page.truncate(PAGE);
    Ok(render_list(
        &page,
        has_more,
        ctx.testmode(),
        crate::clock::now(),
    ))
}

/// A page of registrations in the interface's shape: `{"object": "list",
/// "registrations": [...], "has_more", "last_registration_id"}`.
pub fn render_list(page: &[RegistrationRecord], has_more: bool, testmode: bool, now: i64) -> Value {
    json!({
        "object": "list",
        "registrations": page.iter().map(|r| render(r, testmode, now)).collect::<Vec<_>>(),
        "has_more": has_more,
        "last_registration_id": page.last().map(|r| r.id.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_country_list_holds_every_assigned_code_once() {
        let codes: Vec<&str> = ISO_COUNTRIES.split_ascii_whitespace().collect();
        // ISO 3166-1 assigns 249 alpha-2 codes.
        assert_eq!(codes.len(), 249);
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "sorted, no repeat");
        assert!(is_country("US") && is_country("CA") && is_country("DE"));
        assert!(!is_country("XX") && !is_country("UK") && !is_country("USA"));
    }

    #[test]
    fn regions_are_checked_against_the_country() {
        assert_eq!(region("region", "US", "tx").unwrap(), "TX");
        assert!(region("region", "US", " TX").is_err());
        assert_eq!(region("region", "CA", "on").unwrap(), "ON");
        assert_eq!(region("region", "DE", "").unwrap(), "");
        assert_eq!(region("region", "DE", "by").unwrap(), "BY");
        let e = region("region", "US", "ON").unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidRegion);
        assert!(region("region", "US", "").is_err());
        assert!(region("region", "CA", "TX").is_err());
        assert!(region("region", "DE", "BAYERN").is_err());
    }
}
