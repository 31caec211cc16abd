//! Per-account limits: a request rate, requests at once, stored calculations (how many
//! and how many bytes), and fair turns for large requests.
//!
//! The rate and the stored calculations are counted per account and mode (a test key and a
//! live key of one account have separate allowances), the requests at once per account
//! (both modes together: they share the ledger's connections); all are answered with 429
//! and a `Retry-After` header. The rate counts work, not only requests: a calculation of N
//! lines takes N of the account's requests (a platform calculation its order and fee
//! lines), a sync batch of N events N. The limit of requests at once keeps one account
//! from holding every connection of a PostgreSQL ledger's pool, or every place in the
//! SQLite writer's queue, while others wait.
//!
//! Large requests (a body over [`LARGE_BODY`]: a calculation of some 40 lines or more)
//! take turns ([`Limits::large_requests`]): at most that many are answered at once, across
//! accounts, and a freed turn goes to the waiting request of the account with the fewest
//! being answered ([`FairQueue`]). A lone account takes every turn; when another's large
//! request waits, it is next. Small requests never wait for a turn, and an async server
//! answers large ones on threads that may block ([`crate::Service::is_large`]), so that a
//! one-line sale is never queued behind them.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::error::{ApiError, ErrorKind};
use crate::keys::Scope;

/// The limits a [`crate::Service`] applies to each account and mode. `0` turns a limit off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Requests per second, sustained (a token bucket refilled at this rate).
    pub requests_per_second: u32,
    /// Requests that may arrive at once above the sustained rate (the bucket's size).
    pub burst: u32,
    /// Calculations (and platform calculations) stored and not yet expired. Each is kept
    /// 24 hours so that it can become a transaction; at this many, a new calculation is
    /// refused until older ones expire.
    pub stored_calculations: u64,
    /// The bytes those calculations may take in the ledger (as stored: packed in SQLite,
    /// sealed text in PostgreSQL): a bound on the ledger's growth whatever their size (a
    /// calculation of 1,000 long lines stores some 50 KB, a usual one under 1 KB).
    pub stored_calculation_bytes: u64,
    /// Requests of one account (test and live keys together) answered at once; one more
    /// is refused at once (429, `Retry-After: 1`) rather than queued behind them.
    pub concurrent_requests: u32,
    /// Large requests (a body over [`LARGE_BODY`]) answered at once, of all accounts
    /// together; another waits its turn, and turns go first to the accounts with the
    /// fewest being answered. A lone account may take them all.
    pub large_requests: u32,
}

/// Refuses a record dated `at` (Unix seconds, the request's `field`) more than the
/// service's backdating limit before `now` ([`crate::Service::with_backdating_limit`]).
pub(crate) fn check_backdating(
    service: &crate::Service,
    field: &str,
    at: i64,
    now: i64,
) -> Result<(), crate::ApiError> {
    let Some(days) = service.backdating_days else {
        return Ok(());
    };
    let earliest = now - i64::from(days) * 86_400;
    if at >= earliest {
        return Ok(());
    }
    let day = |s: i64| levy_core::Date::from_unix_seconds(s).to_string();
    Err(crate::ApiError::field(
        crate::ErrorKind::BackdatedPastLimit,
        field,
        format!(
            "{field} {} is more than {days} days before now: this service records sales and refunds dated from {} on (its backdating limit); record a correction dated today instead, such as a refund",
            day(at),
            day(earliest)
        ),
        format!("a time from {} on", day(earliest)),
        at.to_string(),
    ))
}

/// The body size over which a request is large, 16 KiB: a calculation of some 40 lines
/// (one line is some 100 to 400 bytes of JSON).
pub const LARGE_BODY: usize = 16 << 10;

impl Default for Limits {
    /// The limits of `levy serve`: 1,000 requests (calculation lines) per second with
    /// bursts of 2,000; 1,000,000 stored calculations and 2 GiB of them (some 2 KB each); 8
    /// requests at once (half of a PostgreSQL ledger's 16 connections); as many large
    /// requests at once as the machine has processors.
    fn default() -> Self {
        Limits {
            requests_per_second: 1_000,
            burst: 2_000,
            stored_calculations: 1_000_000,
            stored_calculation_bytes: 2 << 30,
            concurrent_requests: 8,
            large_requests: std::thread::available_parallelism()
                .map_or(2, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
        }
    }
}

impl Limits {
    /// No limits: what a service opened in-process starts with (its host meters its own
    /// callers), and what load tests use.
    pub const NONE: Limits = Limits {
        requests_per_second: 0,
        burst: 0,
        stored_calculations: 0,
        stored_calculation_bytes: 0,
        concurrent_requests: 0,
        large_requests: 0,
    };
}

/// One token bucket per account and mode.
#[derive(Debug, Default)]
pub(crate) struct RateLimiter {
    buckets: Mutex<HashMap<Scope, (f64, Instant)>>,
}

impl RateLimiter {
    /// Takes one token of `scope`'s bucket, or says when the next one will be there.
    pub(crate) fn take(&self, scope: &Scope, limits: &Limits) -> Result<(), ApiError> {
        if limits.requests_per_second == 0 {
            return Ok(());
        }
        let rate = f64::from(limits.requests_per_second);
        let size = f64::from(limits.burst.max(1));
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = buckets.entry(scope.clone()).or_insert((size, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(size);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            return Ok(());
        }
        Err(rate_limited(*tokens, rate, limits))
    }

    /// Takes `n` more tokens of `scope`'s bucket, for a request that does the work of
    /// `n + 1` (a sync batch): refused, as [`RateLimiter::take`] refuses, when the bucket
    /// does not hold them; nothing is taken then.
    pub(crate) fn charge(&self, scope: &Scope, limits: &Limits, n: usize) -> Result<(), ApiError> {
        if limits.requests_per_second == 0 || n == 0 {
            return Ok(());
        }
        let rate = f64::from(limits.requests_per_second);
        let size = f64::from(limits.burst.max(1));
        // A batch larger than the bucket could never pass: it may empty a full bucket.
        let n = (n as f64).min(size);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = buckets.entry(scope.clone()).or_insert((size, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(size);
        *last = now;
        if *tokens >= n {
            *tokens -= n;
            return Ok(());
        }
        Err(rate_limited(*tokens - n + 1.0, rate, limits))
    }
}

/// 429 `RATE_LIMITED`, with the seconds until the bucket holds the token it lacks.
fn rate_limited(tokens: f64, rate: f64, limits: &Limits) -> ApiError {
    let wait = ((1.0 - tokens) / rate).ceil().clamp(1.0, 3600.0) as u16;
    let mut e = ApiError::of(
        ErrorKind::RateLimited,
        format!(
            "too many requests: at most {} per second (bursts of {}) for one account and mode, a calculation counting one per line and a sync batch one per event; retry after {wait} s",
            limits.requests_per_second,
            limits.burst.max(1)
        ),
    );
    e.retry_after = Some(wait);
    e
}

/// Requests of each account being answered (both modes together).
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    counts: Mutex<HashMap<std::sync::Arc<str>, u32>>,
}

/// One request counted in [`InFlight`] until dropped.
pub(crate) struct Entered<'a> {
    in_flight: &'a InFlight,
    account: Option<std::sync::Arc<str>>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if let Some(scope) = self.account.take() {
            let mut counts = self
                .in_flight
                .counts
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(n) = counts.get_mut(&scope) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    counts.remove(&scope);
                }
            }
        }
    }
}

impl InFlight {
    /// Counts one more request of `scope`'s account, or refuses it when as many as the
    /// limit allows are being answered.
    pub(crate) fn enter(&self, scope: &Scope, limits: &Limits) -> Result<Entered<'_>, ApiError> {
        if limits.concurrent_requests == 0 {
            return Ok(Entered {
                in_flight: self,
                account: None,
            });
        }
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts
            .entry(std::sync::Arc::clone(&scope.account))
            .or_insert(0);
        if *n >= limits.concurrent_requests {
            let mut e = ApiError::of(
                ErrorKind::RateLimited,
                format!(
                    "too many requests at once: at most {} of one account are answered at a time; retry after 1 s",
                    limits.concurrent_requests
                ),
            );
            e.retry_after = Some(1);
            return Err(e);
        }
        *n += 1;
        Ok(Entered {
            in_flight: self,
            account: Some(std::sync::Arc::clone(&scope.account)),
        })
    }
}

/// How long a request refused for its account's requests at once waits, at most, to
/// learn whether the ledger is answering the requests that hold them.
const LEDGER_VERDICT: std::time::Duration = std::time::Duration::from_secs(1);

/// Counts one more request of `scope`'s account, as [`InFlight::enter`] does, and when it
/// is refused, says whether the account or the ledger holds it up: the account's requests
/// at once waiting on a ledger that does not answer are the ledger's doing, answered 503
/// `LEDGER_UNAVAILABLE` (with `Retry-After`), never 429. While they wait and the ledger
/// has not answered anything since this request came (a silence too short to call), the
/// request waits for a place or the verdict, at most [`LEDGER_VERDICT`].
pub(crate) fn enter<'a>(
    service: &'a crate::Service,
    scope: &Scope,
) -> Result<Entered<'a>, ApiError> {
    let came = Instant::now();
    loop {
        let refused = match service.in_flight.enter(scope, &service.limits) {
            Ok(entered) => return Ok(entered),
            Err(e) => e,
        };
        let health = service.store.health();
        if let Some(why) = health.unreachable {
            return Err(crate::store::StoreError::Unavailable(why).into());
        }
        let answered_since = health.answered.is_some_and(|at| at >= came);
        if !health.waiting || answered_since || came.elapsed() >= LEDGER_VERDICT {
            return Err(refused);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Turns of large requests ([`Limits::large_requests`]): how many each account has being
/// answered, and those waiting, in the order they came.
#[derive(Debug, Default)]
pub(crate) struct FairQueue {
    state: Mutex<Turns>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct Turns {
    /// Large requests being answered, per account.
    held: HashMap<Arc<str>, u32>,
    /// Their sum.
    total: u32,
    /// Waiting requests: arrival number and account.
    waiting: Vec<(u64, Arc<str>)>,
    /// The next arrival number.
    arrivals: u64,
}

impl Turns {
    fn held(&self, account: &str) -> u32 {
        self.held.get(account).copied().unwrap_or(0)
    }

    /// The waiting request whose turn is next: of the accounts with the fewest being
    /// answered, the one that came first.
    fn next(&self) -> Option<u64> {
        self.waiting
            .iter()
            .min_by_key(|(n, account)| (self.held(account), *n))
            .map(|(n, _)| *n)
    }
}

/// A large request's turn, held until dropped.
pub(crate) struct Turn<'a> {
    queue: &'a FairQueue,
    account: Option<Arc<str>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let Some(account) = self.account.take() else {
            return;
        };
        let mut turns = self.queue.lock();
        turns.total = turns.total.saturating_sub(1);
        if let Some(n) = turns.held.get_mut(&account) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                turns.held.remove(&account);
            }
        }
        drop(turns);
        self.queue.freed.notify_all();
    }
}

impl FairQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Turns> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a turn of `account`'s large request: at once while fewer than
    /// `limits.large_requests` are answered and no other account's waits before it; else
    /// when a turn is freed and it is next ([`Turns::next`]). Blocks the calling thread.
    pub(crate) fn enter(&self, account: &Arc<str>, limits: &Limits) -> Turn<'_> {
        let most = limits.large_requests;
        if most == 0 {
            return Turn {
                queue: self,
                account: None,
            };
        }
        let mut turns = self.lock();
        let me = turns.arrivals;
        turns.arrivals += 1;
        turns.waiting.push((me, Arc::clone(account)));
        while !(turns.total < most && turns.next() == Some(me)) {
            turns = self.freed.wait(turns).unwrap_or_else(|e| e.into_inner());
        }
        turns.waiting.retain(|(n, _)| *n != me);
        turns.total += 1;
        *turns.held.entry(Arc::clone(account)).or_insert(0) += 1;
        let more = turns.total < most && !turns.waiting.is_empty();
        drop(turns);
        if more {
            // A turn is still free: the next waiting request may take it.
            self.freed.notify_all();
        }
        Turn {
            queue: self,
            account: Some(Arc::clone(account)),
        }
    }

    /// How many large requests each account has being answered, and how many wait.
    #[cfg(test)]
    fn counts(&self, account: &str) -> (u32, usize) {
        let turns = self.lock();
        (turns.held(account), turns.waiting.len())
    }
}

/// The error for a new calculation when `scope` already stores `what` (`1000 unexpired
/// calculations`), the most allowed.
pub(crate) fn quota_exceeded(what: &str) -> ApiError {
    let mut e = ApiError::of(
        ErrorKind::CalculationQuotaExceeded,
        format!(
            "this account and mode already store {what}, the most allowed; older ones expire 24 hours after they were made. Make transactions from the calculations you use, or retry later"
        ),
    );
    // Expired calculations are purged every minute.
    e.retry_after = Some(60);
    e
}

/// Charges a calculation of `lines` lines to its account's rate: the request took one
/// token; the other lines take one each, refused (429, nothing taken) when the bucket
/// does not hold them.
pub(crate) fn charge_lines(ctx: &crate::handler::Ctx<'_>, lines: usize) -> Result<(), ApiError> {
    ctx.service
        .rate
        .charge(ctx.scope, &ctx.service.limits, lines.saturating_sub(1))
}

/// Refuses a new calculation when `scope` already stores as many, or as many bytes, as the
/// limits allow.
pub(crate) fn check_quota(service: &crate::Service, scope: &Scope) -> Result<(), ApiError> {
    let (count, bytes) = (
        service.limits.stored_calculations,
        service.limits.stored_calculation_bytes,
    );
    if count == 0 && bytes == 0 {
        return Ok(());
    }
    let stored = service.store.stored_calculations(scope)?;
    if count > 0 && stored.count >= count {
        return Err(quota_exceeded(&format!("{count} unexpired calculations")));
    }
    if bytes > 0 && stored.bytes >= bytes {
        return Err(quota_exceeded(&format!(
            "{} bytes of unexpired calculations ({} of them)",
            stored.bytes, stored.count
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(account: &str, live: bool) -> Scope {
        Scope {
            account: account.into(),
            live,
        }
    }

    #[test]
    fn requests_at_once_are_counted_per_account() {
        // Two at once for one account: a third is refused (429, Retry-After 1), in either
        // mode, until one of the two ends; another account has its own.
        let limits = Limits {
            concurrent_requests: 2,
            ..Limits::NONE
        };
        let in_flight = InFlight::default();
        let shop = scope("shop", true);
        let a = in_flight.enter(&shop, &limits).unwrap();
        let b = in_flight.enter(&shop, &limits).unwrap();
        let e = in_flight.enter(&shop, &limits).err().unwrap();
        assert_eq!(e.kind, ErrorKind::RateLimited);
        assert_eq!(e.retry_after, Some(1));
        assert!(in_flight.enter(&scope("shop", false), &limits).is_err());
        let _other = in_flight.enter(&scope("other", true), &limits).unwrap();
        drop(a);
        let c = in_flight.enter(&shop, &limits).unwrap();
        drop((b, c));
        // Nothing is kept of an account with nothing in flight.
        assert!(!in_flight.counts.lock().unwrap().contains_key(&shop.account));
        // 0 is no limit.
        let none: Vec<_> = (0..100)
            .map(|_| in_flight.enter(&shop, &Limits::NONE).unwrap())
            .collect();
        assert_eq!(none.len(), 100);
    }

    /// Waits (up to a minute, polling) until `done` holds: a wait for another thread, not
    /// a timed assertion.
    fn until(done: impl Fn() -> bool) {
        let deadline = Instant::now() + std::time::Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "gave up waiting");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn large_requests_take_fair_turns_and_a_lone_account_takes_them_all() {
        let limits = Limits {
            large_requests: 2,
            ..Limits::NONE
        };
        let queue = FairQueue::default();
        let (shop, other): (Arc<str>, Arc<str>) = ("shop".into(), "other".into());
        // Alone, one account takes every turn at once.
        let first = queue.enter(&shop, &limits);
        let second = queue.enter(&shop, &limits);
        assert_eq!(queue.counts("shop"), (2, 0));
        std::thread::scope(|s| {
            // Its third waits; then another account's first comes and waits too.
            let third = s.spawn(|| {
                let turn = queue.enter(&shop, &limits);
                until(|| queue.counts("shop").0 == 1);
                drop(turn);
            });
            until(|| queue.counts("shop").1 == 1);
            let others = s.spawn(|| {
                let turn = queue.enter(&other, &limits);
                // Held until the shop's third has had its turn too.
                until(|| queue.counts("shop").1 == 0);
                drop(turn);
            });
            until(|| queue.counts("shop").1 == 2);
            // A turn is freed: it goes to the other account, which has none, not to the
            // shop's third, which came first.
            drop(first);
            until(|| queue.counts("other").0 == 1);
            assert_eq!(queue.counts("shop"), (1, 1));
            // The next freed turn is the shop's third.
            drop(second);
            third.join().unwrap();
            others.join().unwrap();
        });
        assert_eq!(queue.counts("shop"), (0, 0));
        assert!(queue.lock().held.is_empty() && queue.lock().total == 0);
        // 0 is no limit: nothing is counted.
        let free: Vec<_> = (0..10).map(|_| queue.enter(&shop, &Limits::NONE)).collect();
        assert_eq!(queue.counts("shop"), (0, 0));
        drop(free);
    }

    /// A service with the Tennessee table, an in-memory ledger, the keys of `shop` and
    /// `other`, and one turn of large requests.
    fn service() -> crate::Service {
        use crate::keys::{KeyEntry, KeySource};
        let entry = |account: &str, key: &str| KeyEntry {
            account: account.into(),
            key: key.into(),
        };
        crate::Service::open(crate::ServiceConfig {
            table: crate::TableSource::Table(levy_testkit::tennessee::table()),
            ledger: ":memory:".into(),
            keys: KeySource::Inline(vec![
                entry("shop", levy_testkit::keys::SHOP_TEST),
                entry("other", levy_testkit::keys::OTHER_TEST),
            ]),
        })
        .unwrap()
        .with_limits(Limits {
            large_requests: 1,
            ..Limits::NONE
        })
    }

    /// A calculation of `lines` lines in Nashville, with `key`.
    fn calculation(key: &str, lines: usize) -> crate::Request {
        let items: Vec<String> = (0..lines)
            .map(|i| {
                format!(r#"{{"amount": 1000, "quantity": 1, "product_category": "GENERAL_MERCHANDISE", "reference_line_item_id": "line-{i:04}"}}"#)
            })
            .collect();
        let body = format!(
            r#"{{"customer": {{"address": {{"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}},
               "order_details": {{"customer_currency_code": "USD", "line_items": [{}]}}}}"#,
            items.join(",")
        );
        crate::Request {
            method: "POST".into(),
            path: "/tax/calculations".into(),
            query: String::new(),
            headers: vec![("Authorization".into(), format!("Bearer {key}"))],
            body: body.into_bytes(),
            request_id: None,
        }
    }

    #[test]
    fn a_large_request_waits_its_turn_and_a_small_one_never_does() {
        let svc = service();
        let (small, large) = (
            calculation(levy_testkit::keys::OTHER_TEST, 1),
            calculation(levy_testkit::keys::SHOP_TEST, 200),
        );
        assert!(large.body.len() > LARGE_BODY && small.body.len() < LARGE_BODY);
        assert!(svc.is_large(&large) && !svc.is_large(&small));
        // The one turn is taken (by a large request of a third account, as it were).
        let held = svc.large.enter(&Arc::from("third"), &svc.limits);
        std::thread::scope(|s| {
            let waiting = s.spawn(|| svc.handle(&large));
            until(|| svc.large.lock().waiting.len() == 1);
            // Meanwhile another account's one-line calculation is answered: it takes no
            // turn.
            assert_eq!(svc.handle(&small).status, 200);
            assert_eq!(svc.large.lock().waiting.len(), 1);
            drop(held);
            let r = waiting.join().unwrap();
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        });
        assert_eq!(svc.large.lock().total, 0);
        // Without the limit, nothing is large.
        assert!(!svc.with_limits(Limits::NONE).is_large(&large));
    }

    #[test]
    fn a_batch_takes_one_token_per_event_and_nothing_when_refused() {
        let limits = Limits {
            requests_per_second: 1,
            burst: 10,
            ..Limits::NONE
        };
        let rate = RateLimiter::default();
        let shop = scope("shop", true);
        rate.take(&shop, &limits).unwrap();
        rate.charge(&shop, &limits, 4).unwrap();
        // 5 left: 7 more are refused, and take nothing.
        let e = rate.charge(&shop, &limits, 7).unwrap_err();
        assert_eq!(e.kind, ErrorKind::RateLimited);
        assert!(e.retry_after.unwrap() >= 2, "{e:?}");
        rate.charge(&shop, &limits, 5).unwrap();
        assert!(rate.take(&shop, &limits).is_err());
        // A batch larger than the bucket empties a full one rather than never passing.
        let other = scope("other", true);
        rate.charge(&other, &limits, 1000).unwrap();
        assert!(rate.take(&other, &limits).is_err());
    }
}
