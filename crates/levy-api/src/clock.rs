//! The clock: now, in the units the ledger and the interface keep.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Now, in milliseconds since 1970 (an id's time prefix).
pub(crate) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Now, in nanoseconds since 1970 (what keeps ids unique when the generator fails).
pub(crate) fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
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

#[cfg(test)]
mod tests {
    #[test]
    fn iso8601_formats_utc() {
        // 1772323200 is 2026-03-01T00:00:00Z (date -u -d @1772323200); 3661 s later is 01:01:01.
        assert_eq!(super::iso8601(1_772_323_200 + 3661), "2026-03-01T01:01:01Z");
    }
}
