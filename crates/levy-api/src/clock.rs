//! The clock: now, in the units the ledger and the interface keep, and the HTTP `Date` of
//! a moment.
//!
//! Every reading of the time in levy-api (and levy-server's `Date` header) comes from
//! here, so that a clock of any value, a year past 9999 or a day before 1970, gives
//! answers and never a panic. With the `test-clock` feature, [`set_offset`] moves this
//! clock for the tests that need another time than the machine's.

use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(feature = "test-clock")]
static OFFSET: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// Moves levy's clock `seconds` from the machine's (for tests: a clock past year 9999).
/// Process-wide: a test that calls it should be the only one in its test binary.
#[cfg(feature = "test-clock")]
pub fn set_offset(seconds: i64) {
    OFFSET.store(seconds, std::sync::atomic::Ordering::SeqCst);
}

/// The seconds [`set_offset`] moved the clock by (0 without the `test-clock` feature).
fn offset() -> i128 {
    #[cfg(feature = "test-clock")]
    {
        i128::from(OFFSET.load(std::sync::atomic::Ordering::SeqCst))
    }
    #[cfg(not(feature = "test-clock"))]
    {
        0
    }
}

/// Now, in nanoseconds since 1970 (negative before), whatever the machine's clock says.
fn nanos() -> i128 {
    let system = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    system.saturating_add(offset().saturating_mul(1_000_000_000))
}

/// Now, in Unix seconds (0 for a clock before 1970).
pub fn now() -> i64 {
    i64::try_from(nanos().div_euclid(1_000_000_000).max(0)).unwrap_or(i64::MAX)
}

/// Now, in milliseconds since 1970 (an id's time prefix).
pub(crate) fn now_millis() -> u64 {
    u64::try_from(nanos().div_euclid(1_000_000).max(0)).unwrap_or(u64::MAX)
}

/// Now, in nanoseconds since 1970 (what keeps ids unique when the generator fails).
pub(crate) fn now_nanos() -> u64 {
    u64::try_from(nanos().max(0)).unwrap_or(u64::MAX)
}

/// Unix seconds as ISO 8601 UTC (`2026-03-01T12:00:00Z`).
pub(crate) fn iso8601(secs: i64) -> String {
    let date = levy_core::Date::from_unix_seconds(secs);
    let (y, m, d) = date.ymd();
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The first second of year 10000 (`date -u -d 10000-01-01` cannot say it; 9999-12-31
/// 23:59:59 is 253402300799): the first moment an HTTP date cannot name.
const YEAR_10000: i64 = 253_402_300_800;

/// Unix seconds as an HTTP date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37
/// GMT`), the `Date` header's form; `None` for a moment it cannot write (before 1970 or
/// from year 10000 on): a server whose clock says so sends no `Date` (RFC 9110, 6.6.1,
/// for a server without a clock it can trust) rather than a false one.
pub fn http_date(secs: i64) -> Option<String> {
    if !(0..YEAR_10000).contains(&secs) {
        return None;
    }
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let day = secs / 86_400;
    let (y, m, d) = levy_core::Date::from_unix_seconds(secs).ymd();
    let rem = secs % 86_400;
    Some(format!(
        "{}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        DAYS[(day % 7) as usize],
        MONTHS[(m as usize).clamp(1, 12) - 1],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso8601_formats_utc() {
        // 1772323200 is 2026-03-01T00:00:00Z (date -u -d @1772323200); 3661 s later is 01:01:01.
        assert_eq!(super::iso8601(1_772_323_200 + 3661), "2026-03-01T01:01:01Z");
    }

    #[test]
    fn http_date_is_rfc_9110s_and_none_where_it_cannot_be_written() {
        // RFC 9110, 5.6.7's example: 784111777 is Sun, 06 Nov 1994 08:49:37 GMT
        // (date -u -d @784111777).
        assert_eq!(
            super::http_date(784_111_777).as_deref(),
            Some("Sun, 06 Nov 1994 08:49:37 GMT")
        );
        // 1970-01-01 was a Thursday; 9999-12-31 a Friday (date -u -d @253402300799).
        assert_eq!(
            super::http_date(0).as_deref(),
            Some("Thu, 01 Jan 1970 00:00:00 GMT")
        );
        assert_eq!(
            super::http_date(253_402_300_799).as_deref(),
            Some("Fri, 31 Dec 9999 23:59:59 GMT")
        );
        assert_eq!(super::http_date(253_402_300_800), None);
        assert_eq!(super::http_date(-1), None);
        assert_eq!(super::http_date(i64::MAX), None);
    }
}
