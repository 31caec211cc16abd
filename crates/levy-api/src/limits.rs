//! Per-account limits: a request rate, requests at once, and stored calculations (how many
//! and how many bytes).
//!
//! The rate and the stored calculations are counted per account and mode (a test key and a
//! live key of one account have separate allowances), the requests at once per account
//! (both modes together: they share the ledger's connections); all are answered with 429
//! and a `Retry-After` header. The rate counts work, not only requests: a sync batch of N
//! events takes N of the account's requests. The limit of requests at once keeps one
//! account from holding every connection of a PostgreSQL ledger's pool, or every place in
//! the SQLite writer's queue, while others wait.

use std::collections::HashMap;
use std::sync::Mutex;
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
}

impl Default for Limits {
    /// The limits of `levy serve`: 1,000 requests per second with bursts of 2,000;
    /// 1,000,000 stored calculations and 2 GiB of them (some 2 KB each); 8 requests at
    /// once (half of a PostgreSQL ledger's 16 connections).
    fn default() -> Self {
        Limits {
            requests_per_second: 1_000,
            burst: 2_000,
            stored_calculations: 1_000_000,
            stored_calculation_bytes: 2 << 30,
            concurrent_requests: 8,
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
            "too many requests: at most {} per second (bursts of {}) for one account and mode, a sync batch counting one per event; retry after {wait} s",
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
