//! levy-api: the tax service interface, in-process.
//!
//! A [`Service`] answers the interface's requests ([`Service::handle`]) from a rate table
//! and a durable SQLite ledger. The HTTP server and the C ABI are thin adapters over
//! `handle`; Rust programs may call it directly.
//!
//! ```
//! use levy_api::*;
//! use levy_core::*;
//! use std::sync::Arc;
//!
//! // A one-state table: Tennessee's 7% state rate on general merchandise.
//! let mut b = TableBuilder::new();
//! b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property").unwrap();
//! b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
//! let tn = b.jurisdiction(JurisdictionSpec {
//!     code: "47".into(), name: "TENNESSEE".into(), level: Level::State,
//!     country: "US".into(), region: "TN".into(),
//!     authority: "TENNESSEE DEPARTMENT OF REVENUE".into(), tax_type: TaxType::Sales,
//! }).unwrap();
//! b.rule(RuleSpec::flat(tn, "GENERAL_MERCHANDISE", Decimal::new(7, 2), Date::MIN, Date::MAX,
//!     "GENERAL STATE SALES TAX")).unwrap();
//! b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
//! let bytes = b.build(0).unwrap();
//! let table = Table::open(AnyBytes::Owned(AlignedBytes::copy_from(&bytes))).unwrap();
//!
//! let service = Service::open(ServiceConfig {
//!     table: TableSource::Table(Arc::new(table)),
//!     ledger: ":memory:".into(),
//!     keys: KeySource::Inline(vec![KeyEntry { account: "shop".into(), key: "sk_test_example".into() }]),
//! }).unwrap();
//! let response = service.handle(&Request {
//!     method: "POST".into(),
//!     path: "/tax/calculations".into(),
//!     query: String::new(),
//!     headers: vec![("Authorization".into(), "Bearer sk_test_example".into())],
//!     body: br#"{"customer": {"address": {"address_province": "TN", "address_postal_code": "",
//!                 "address_country": "US"}},
//!               "order_details": {"customer_currency_code": "USD",
//!                 "line_items": [{"amount": 10000, "quantity": 1,
//!                                 "product_category": "GENERAL_MERCHANDISE"}]}}"#.to_vec(),
//!     request_id: None,
//! });
//! assert_eq!(response.status, 200);
//! let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
//! // 7% of $100.00 is $7.00: 700 cents.
//! assert_eq!(body["total_tax_amount"].to_string(), "700");
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod calculate;
pub mod clock;
mod dialects;
mod error;
mod front;
mod handler;
mod idempotency;
mod ids;
pub mod import;
mod import_file;
mod json;
pub mod keys;
mod limits;
mod lookup;
pub mod nexus;
mod random;
mod read;
mod render;
mod resources;
mod router;
mod service;
pub mod store;
#[cfg(feature = "sync")]
pub mod sync_client;
mod version;

pub use calculate::{NOT_REGISTERED_NOTE, NO_COLLECTION_RATE_TYPE};
pub use error::{ApiError, ErrorKind};
pub use front::{body_too_large, Answer};
pub use idempotency::{KeyLimits, IDEMPOTENCY_KEY_HEADER, MAX_KEY_CHARS, REPLAYED_HEADER};
pub use import::{import_certificates, ImportReport, ImportedItem};
pub use import_file::{import_file, ImportFile};
pub use keys::{KeyEntry, KeySource};
pub use limits::{Limits, LARGE_BODY};
pub use random::fill_random;
pub use resources::nexus::{
    basis as nexus_basis, parse_date as parse_nexus_date, render as nexus_json,
    render_state as nexus_state_json, render_threshold as nexus_threshold_json, NexusReport,
    NexusStatus, StateNexus,
};
pub use resources::registrations::{
    render as registration_json, render_list as registration_list_json,
    status as registration_status, NewRegistration, CA_REGIONS, MAX_LOCALS, US_REGIONS,
};
pub use resources::reports::{
    csv as liability_csv, period as liability_period, render as liability_json, Layout, SST_MEMBERS,
};
pub use router::{error_response, error_response_at};
pub use service::{Service, ServiceConfig, TableSource, DEFAULT_BODY_LIMIT};
pub use store::rules as ledger;
pub use store::Commit;
pub use store::NexusTotal;
pub use store::{RegistrationFilter, RegistrationKind, RegistrationRecord};
pub use version::ApiVersion;

/// Tells the ledger that a thread of the host's async runtime ran out of work: install it
/// as the runtime's park hook (tokio's `on_thread_park`), with [`on_worker_unpark`]. A
/// ledger that gathers writes into one commit (SQLite's) stops gathering once the workers
/// have nothing left that could join; a host that installs neither is answered the same,
/// the gathering running its full time.
pub fn on_worker_park() {
    store::workers_idle();
}

/// Tells the ledger that a thread of the host's async runtime has work again (tokio's
/// `on_thread_unpark`); see [`on_worker_park`].
pub fn on_worker_unpark() {
    store::worker_busy();
}

/// One request, as the HTTP server or the C ABI received it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// HTTP method, upper case (`GET`, `POST`, `DELETE`).
    pub method: String,
    /// Path without the query (`/tax/calculations`), percent-encoded as received.
    pub path: String,
    /// Raw query string without the leading `?` (empty when none).
    pub query: String,
    /// Headers; names are matched case-insensitively.
    pub headers: Vec<(String, String)>,
    /// Body bytes (JSON for POST).
    pub body: Vec<u8>,
    /// The caller's id for the request, such as the `x-request-id` the HTTP server made
    /// for it. Error bodies that carry a request id (the format of versions before
    /// 2026-01-01) carry this one; when `None`, the service makes one (`req_…`) for each
    /// error body.
    pub request_id: Option<String>,
}

/// The response header that says whether a calculation's answer holds the location's local
/// taxes: `FULL`, `PARTIAL` or `STATE_ONLY` (see [`levy_core::Coverage`]). Sent with every
/// response that calculates (`POST /tax/calculations`, platform calculations).
pub const COVERAGE_HEADER: &str = "Levy-Coverage";

/// The response header that says whether the table's taxability matrix knows how every
/// jurisdiction of the answer treats every line's product: `KNOWN`, or `UNKNOWN` followed
/// by the codes it does not know and where (`UNKNOWN; CANDY in US-DC state`): such a line
/// was taxed at the rule its code inherits, and `Levy-Coverage` is then at most `PARTIAL`
/// (see [`levy_core::Taxability`]). Sent with every response that calculates.
pub const TAXABILITY_HEADER: &str = "Levy-Taxability";

/// The response header of a calculation that says what decided among the places sharing
/// the location's ZIP code, or why the answer holds less than one place's taxes (see
/// [`levy_core::PlaceNote`]): `NONE` (one place answers for the ZIP, or a ZIP+4, street,
/// region or IP address decided), `CITY_NAMED` (the city the address names chose among the
/// ZIP's places: Bell, not Bell Gardens, in 90201), `SHARED_PLACES` (the address names none of
/// the ZIP's places: its usual one answered), `SPLIT_COUNTIES` (the ZIP lies in counties of
/// different rates: only their common taxes) or `CITY_NOT_NAMED` (a city tax applies only to
/// addresses naming the city, and this one names none). Sent with every response that
/// calculates.
pub const PLACE_HEADER: &str = "Levy-Place";

/// The response header of a calculation dated after the horizon of an input of the table
/// that the answer used (see [`levy_core::Stale`]): `STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv
/// (period 2026-01-01) is in force to 2026-03-31; rates may have changed since`. Sent only
/// then, with `Levy-Coverage` at most `PARTIAL`; a fresh answer has no such header.
pub const STALE_HEADER: &str = "Levy-Stale-Table";

/// The response header sent with every answer once the server's day is past the rate
/// table's horizon (the earliest of its inputs', [`levy_core::Table::earliest_horizon`]):
/// `2026-03-31; cdtfa ca-cdtfa-1-1-26.csv`. Some answers may then be out of date (each says
/// so in `Levy-Stale-Table`): install a newer table. `GET /tax/ping` gives the same in its
/// `levy_table` field, always.
pub const TABLE_HORIZON_HEADER: &str = "Levy-Table-Horizon";

/// The table's horizon as [`TABLE_HORIZON_HEADER`] gives it, and whether `now` (Unix
/// seconds) is past it; `None` for a table without horizons.
pub fn table_horizon(table: &levy_core::AnyTable, now: i64) -> Option<(String, bool)> {
    let (horizon, source) = table.earliest_horizon()?;
    let name = table
        .data()
        .manifest
        .get(source as usize)
        .map_or(String::new(), |e| {
            format!("{} {}", e.kind.as_str(), e.name.as_str())
        });
    Some((
        format!("{horizon}; {name}"),
        levy_core::Date::from_unix_seconds(now) > horizon,
    ))
}

/// The response header of a calculation that names the sourcing rule applied:
/// `DESTINATION`, `ORIGIN`, `MODIFIED_ORIGIN` or `ORIGIN_WITH_USE_TAX` (see
/// [`levy_core::Sourcing`]); `DESTINATION; origin-unresolved` when an `origin_address` was
/// given but could not be resolved, so the sale was taxed at the destination.
pub const SOURCING_HEADER: &str = "Levy-Sourcing";

/// The request header by which a seller asks for its sale's tax to be rounded once per
/// invoice (`invoice`) rather than line by line (`line`, the default); the response header
/// of the same name says which rounding was applied (`INVOICE` only where the destination's
/// state allows it and the amounts exclude tax; see [`levy_core::Rounding`]).
pub const ROUNDING_HEADER: &str = "Levy-Rounding";

/// The request header by which a seller gives the exchange rate from the sale's currency to
/// its place's (one unit of the sale's currency in the place's: `0.0067` for yen in
/// Nashville). Needed only when the currencies differ and a rule of the place has an
/// amount (a band, a threshold, a cap, a fee): without it such a sale is refused with
/// `EXCHANGE_RATE_REQUIRED`; with it the tax is calculated on the converted amounts and
/// answered in the sale's currency.
pub const EXCHANGE_RATE_HEADER: &str = "Levy-Exchange-Rate";

/// One response: status, headers and a JSON body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Headers to send (`Content-Type` among them).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// How many headers of that name (case-insensitive) the request carries.
    pub fn header_count(&self, name: &str) -> usize {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .count()
    }
}
