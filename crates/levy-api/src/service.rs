//! The service's state: configuration, the table, the keys, the ledger, and its own
//! reads and writes; answering a request ([`Service::handle`]) is [`crate::front`]'s.

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use levy_core::AnyTable;

use crate::error::{ApiError, ErrorKind};
use crate::keys::{KeySource, Keyring};
use crate::resources::nexus::NexusReport;
use crate::resources::registrations::{self, NewRegistration};
use crate::store::liability::{Liability, Period};
use crate::store::{NexusTotal, RegistrationFilter, RegistrationRecord, Scope, Store};
use crate::Request;

/// Where the rate table comes from. levy-api holds no table of its own: the default table
/// embedded in a program is levy-data's,
/// `TableSource::Table(Arc::new(levy_data::open_default()))`.
#[derive(Clone, Debug)]
pub enum TableSource {
    /// A table file, opened with `AnyTable::open_file` (mapped and verified).
    Path(PathBuf),
    /// A table already open.
    Table(Arc<AnyTable>),
}

/// How to open a [`Service`].
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The rate table.
    pub table: TableSource,
    /// The ledger: an SQLite file path (created when absent, in a directory that exists),
    /// `:memory:`, or a PostgreSQL connection string (`postgres://…` or `key=value` pairs,
    /// in a build with the `postgres` feature); anything else is refused
    /// ([`crate::store::locate`]).
    pub ledger: String,
    /// The API keys.
    pub keys: KeySource,
}

/// The tax service interface, in-process. `Send + Sync`: share it behind an `Arc`.
pub struct Service {
    pub(crate) table: ArcSwap<AnyTable>,
    pub(crate) store: Box<dyn Store>,
    pub(crate) keys: ArcSwap<Keyring>,
    key_source: KeySource,
    pub(crate) limits: crate::limits::Limits,
    /// The largest request body answered; a larger one is `413 REQUEST_TOO_LARGE`.
    pub(crate) body_limit: usize,
    /// How many days before now a sale or refund recorded through the interface may be
    /// dated ([`Service::with_backdating_limit`]); `None`: any day.
    pub(crate) backdating_days: Option<u32>,
    pub(crate) rate: crate::limits::RateLimiter,
    /// Requests of each account and mode being answered ([`crate::Limits::concurrent_requests`]).
    pub(crate) in_flight: crate::limits::InFlight,
    /// Turns of large requests ([`crate::Limits::large_requests`]).
    pub(crate) large: crate::limits::FairQueue,
    /// The key that signs certificate download URLs, read from the ledger once.
    pub(crate) url_key: std::sync::OnceLock<[u8; 32]>,
    /// Idempotency keys: their limits, those in use, the answers kept per scope.
    pub(crate) kept: crate::idempotency::Keys,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("table", &self.table.load().hash_hex())
            .finish_non_exhaustive()
    }
}

/// The largest request body a [`Service`] answers unless told otherwise
/// ([`Service::with_body_limit`]): 1 MiB. A larger body is `413 REQUEST_TOO_LARGE`.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

fn load_table(source: &TableSource) -> Result<Arc<AnyTable>, ApiError> {
    match source {
        TableSource::Table(t) => Ok(t.clone()),
        TableSource::Path(p) => AnyTable::open_file(p).map(Arc::new).map_err(|e| {
            ApiError::of(
                ErrorKind::TableError,
                format!("rate table {}: {e}", p.display()),
            )
        }),
    }
}

/// The request id an [`Answer`] keeps: only when a commit is pending, the one case where
/// it may yet render an error.
impl Service {
    /// Opens a service: loads the table and the keys, opens (and migrates) the ledger.
    pub fn open(config: ServiceConfig) -> Result<Service, ApiError> {
        let table = load_table(&config.table)?;
        let keys = Keyring::load(&config.keys)?;
        let store = crate::store::open(&config.ledger)?;
        let service = Service {
            table: ArcSwap::new(table),
            store,
            keys: ArcSwap::from_pointee(keys),
            key_source: config.keys.clone(),
            limits: crate::limits::Limits::NONE,
            body_limit: DEFAULT_BODY_LIMIT,
            backdating_days: None,
            rate: crate::limits::RateLimiter::default(),
            in_flight: crate::limits::InFlight::default(),
            large: crate::limits::FairQueue::default(),
            url_key: std::sync::OnceLock::new(),
            kept: crate::idempotency::Keys::default(),
        };
        // The URL-signing secret is made (or read) now, so that a service that cannot
        // make one does not start.
        crate::resources::certificates::url_key(&service)?;
        Ok(service)
    }

    /// The service with per-account limits. A service opened in-process has none
    /// ([`crate::Limits::NONE`]): its host meters its own callers. `levy serve` applies
    /// [`crate::Limits::default`] or what its flags say.
    pub fn with_limits(mut self, limits: crate::Limits) -> Service {
        self.limits = limits;
        self
    }

    /// The per-account limits in force.
    pub fn limits(&self) -> crate::Limits {
        self.limits
    }

    /// The service with other bounds of the answers each account and mode keeps under
    /// idempotency keys (`Idempotency-Key`); [`crate::KeyLimits::default`] unless told
    /// otherwise (every service, in-process too: kept answers are the ledger's to hold).
    pub fn with_key_limits(mut self, limits: crate::KeyLimits) -> Service {
        self.kept.limits = limits;
        self
    }

    /// The bounds of the answers kept under idempotency keys.
    pub fn key_limits(&self) -> crate::KeyLimits {
        self.kept.limits
    }

    /// The service with another request body limit, in bytes: a request whose body is
    /// larger is answered `413 REQUEST_TOO_LARGE`. The default is [`DEFAULT_BODY_LIMIT`]
    /// (1 MiB). The HTTP server (levy-server) reads this limit ([`Service::body_limit`])
    /// rather than keep its own, so that both refuse the same bodies; `levy serve
    /// --body-limit` sets it.
    pub fn with_body_limit(mut self, bytes: usize) -> Service {
        self.body_limit = bytes;
        self
    }

    /// The service refusing a sale or refund dated more than `days` days before the moment
    /// it is recorded (`transaction_processed_at`, `refund_processed_at`, and the dates of
    /// the AvaTax and TaxJar shapes), `400 BACKDATED_PAST_LIMIT`: a period filed is not
    /// reopened by a late record by mistake. A till's records sent by `levy sync` are not
    /// held to it (made offline, they are late by nature). By default there is no limit;
    /// `levy serve --max-backdate-days` sets one.
    pub fn with_backdating_limit(mut self, days: u32) -> Service {
        self.backdating_days = Some(days);
        self
    }

    /// The backdating limit in days ([`Service::with_backdating_limit`]), if any.
    pub fn backdating_limit(&self) -> Option<u32> {
        self.backdating_days
    }

    /// The largest request body answered, in bytes ([`Service::with_body_limit`]).
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// Reads the keys again from the source the service was opened with and puts them in
    /// place of the old ones, atomically: a key no longer in the file stops working for
    /// the next request. A keys file that no longer exists revokes every key (removing the
    /// file never keeps a removed key alive); on any other error (an unreadable or invalid
    /// file) the old keys stay and the error says why, and the caller tries again.
    /// Returns how many keys are now accepted.
    pub fn reload_keys(&self) -> Result<usize, ApiError> {
        let ring = match &self.key_source {
            KeySource::File(path) if matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) => {
                Keyring::default()
            }
            source => Keyring::load(source)?,
        };
        let n = ring.len();
        self.keys.store(Arc::new(ring));
        Ok(n)
    }

    /// Replaces the rate table, atomically: a request in flight finishes on the table it
    /// started with, every later one uses the new table.
    pub fn reload_table(&self, table: Arc<AnyTable>) {
        self.table.store(table);
    }

    /// The rate table in use.
    pub fn table(&self) -> Arc<AnyTable> {
        self.table.load_full()
    }

    /// Whether the ledger's reads wait on a network (a PostgreSQL ledger): a server then
    /// answers every request on threads that may block ([`Store::reads_cross_a_network`]).
    pub fn ledger_is_remote(&self) -> bool {
        self.store.reads_cross_a_network()
    }

    /// Whether `req` is large (a body over [`crate::LARGE_BODY`]) while large requests take
    /// turns ([`crate::Limits::large_requests`]): answering it may then wait, blocking the
    /// calling thread, until it is its account's turn. An async server answers such a
    /// request on threads that may block, as those for which
    /// [`Service::blocks_on_commit`] is `true`, so that no worker waits and small requests
    /// are never queued behind large ones.
    pub fn is_large(&self, req: &Request) -> bool {
        self.limits.large_requests > 0 && req.body.len() > crate::limits::LARGE_BODY
    }

    /// The scope of `account` (a name in the keys file, or an inline key's account) in one
    /// mode; `INVALID_ACCOUNT` when it has no key.
    fn account_scope(&self, account: &str, live: bool) -> Result<Scope, ApiError> {
        let keys = self.keys.load();
        if !keys.has_account(account) {
            return Err(ApiError::of(
                ErrorKind::InvalidAccount,
                format!("account {account:?} has no key in the service's keys"),
            ));
        }
        Ok(Scope {
            account: keys.account_id(account),
            live,
        })
    }

    /// Adds a registration of `account` in live (`live`) or test mode, checked as
    /// `POST /tax/registrations` checks its body: from then on, `automatic_tax: auto`
    /// collects for that seller only where one of its `sales_tax` registrations is active
    /// on the sale's date.
    pub fn add_registration(
        &self,
        account: &str,
        live: bool,
        new: &NewRegistration,
    ) -> Result<RegistrationRecord, ApiError> {
        let scope = self.account_scope(account, live)?;
        registrations::add(self, &scope, new, crate::clock::now())
    }

    /// One registration of `account` in a mode; `REGISTRATION_NOT_FOUND` when there is
    /// none.
    pub fn registration(
        &self,
        account: &str,
        live: bool,
        id: &str,
    ) -> Result<RegistrationRecord, ApiError> {
        let scope = self.account_scope(account, live)?;
        registrations::find(self, &scope, id)
    }

    /// Every registration of `account` in a mode that `filter` shows, expired ones
    /// included, ordered by id.
    pub fn registrations(
        &self,
        account: &str,
        live: bool,
        filter: &RegistrationFilter,
    ) -> Result<Vec<RegistrationRecord>, ApiError> {
        let scope = self.account_scope(account, live)?;
        Ok(registrations::all(&*self.store, &scope, filter)?)
    }

    /// The liability report of `account` in a mode for `period` (made by
    /// [`crate::liability_period`]), as `GET /tax/reports/liability` answers it: per
    /// jurisdiction, the transactions made and the refunds and reversals booked in it.
    pub fn liability(
        &self,
        account: &str,
        live: bool,
        period: &Period,
    ) -> Result<Liability, ApiError> {
        self.report(account, live, |store, scope| {
            let mut report = store.liability(scope, period)?;
            crate::resources::reports::mark_registered(store, scope, period, &mut report)?;
            Ok(report)
        })
    }

    /// The liability report of `period` recounted from every record of the ledger instead
    /// of its daily totals: the same report as [`Service::liability`], which
    /// `levy report --recount` checks it against.
    pub fn liability_recount(
        &self,
        account: &str,
        live: bool,
        period: &Period,
    ) -> Result<Liability, ApiError> {
        self.report(account, live, |store, scope| {
            let mut report = store.liability_recount(scope, period)?;
            crate::resources::reports::mark_registered(store, scope, period, &mut report)?;
            Ok(report)
        })
    }

    /// A report of `account`'s ledger in a mode, made by `make` (of the store and the
    /// account's scope).
    fn report(
        &self,
        account: &str,
        live: bool,
        make: impl FnOnce(&dyn Store, &Scope) -> Result<Liability, crate::store::StoreError>,
    ) -> Result<Liability, ApiError> {
        let scope = self.account_scope(account, live)?;
        Ok(make(&*self.store, &scope)?)
    }

    /// Expires registration `id` of `account` in a mode at `at` (Unix seconds; `None`:
    /// now), as `POST /tax/registrations/{id}/expire` does: `INVALID_EXPIRY` for a time not
    /// after its `active_from` (or after the expiry it has), `REGISTRATION_ALREADY_EXPIRED`
    /// when it has expired.
    pub fn expire_registration(
        &self,
        account: &str,
        live: bool,
        id: &str,
        at: Option<i64>,
    ) -> Result<RegistrationRecord, ApiError> {
        let scope = self.account_scope(account, live)?;
        registrations::expire_at(self, &scope, id, at, crate::clock::now())
    }

    /// Economic nexus of `account` in a mode on `date` (default today, UTC), as
    /// `GET /tax/nexus` answers it: every US state with a threshold in force on the day, or
    /// `region` only (upper case; none when it has no threshold on the day).
    pub fn nexus(
        &self,
        account: &str,
        live: bool,
        date: Option<levy_core::Date>,
        region: Option<&str>,
    ) -> Result<NexusReport, ApiError> {
        let scope = self.account_scope(account, live)?;
        let region = region
            .map(|r| registrations::region("region", "US", r))
            .transpose()?;
        let date = date.unwrap_or_else(|| levy_core::Date::from_unix_seconds(crate::clock::now()));
        crate::resources::nexus::report(self, &scope, date, region.as_deref())
    }

    /// An account's live sales per place, net of refunds, for nexus tracking. `account`
    /// is the account's name (in the keys file) or an inline key's account.
    pub fn nexus_totals(&self, account: &str) -> Result<Vec<NexusTotal>, ApiError> {
        let id = self.keys.load().account_id(account);
        Ok(self.store.nexus(&id)?)
    }
}
