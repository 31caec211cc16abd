//! Per-account limits: a request rate and a number of stored calculations.
//!
//! Both are counted per account and mode (a test key and a live key of one account have
//! separate allowances) and both are answered with 429 and a `Retry-After` header.

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
}

impl Default for Limits {
    /// The limits of `levy serve`: 1,000 requests per second with bursts of 2,000;
    /// 1,000,000 stored calculations (about 2 GB of ledger at some 2 KB each).
    fn default() -> Self {
        Limits {
            requests_per_second: 1_000,
            burst: 2_000,
            stored_calculations: 1_000_000,
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
        let wait = ((1.0 - *tokens) / rate).ceil().clamp(1.0, 3600.0) as u16;
        let mut e = ApiError::of(
            ErrorKind::RateLimited,
            format!(
                "too many requests: at most {} per second (bursts of {}) for one account and mode; retry after {wait} s",
                limits.requests_per_second,
                limits.burst.max(1)
            ),
        );
        e.retry_after = Some(wait);
        Err(e)
    }
}

/// The error for a new calculation when `scope` already stores `limit` unexpired ones.
pub(crate) fn quota_exceeded(limit: u64) -> ApiError {
    let mut e = ApiError::of(
        ErrorKind::CalculationQuotaExceeded,
        format!(
            "this account and mode already store {limit} unexpired calculations, the most allowed; older ones expire 24 hours after they were made. Make transactions from the calculations you use, or retry later"
        ),
    );
    // Expired calculations are purged every minute.
    e.retry_after = Some(60);
    e
}

/// Refuses a new calculation when `scope` already stores as many as the limit allows.
pub(crate) fn check_quota(service: &crate::Service, scope: &Scope) -> Result<(), ApiError> {
    let limit = service.limits.stored_calculations;
    if limit > 0 && service.store.stored_calculations(scope)? >= limit {
        return Err(quota_exceeded(limit));
    }
    Ok(())
}
