//! Civil dates as days since 1970-01-01 (UTC), the unit every effective-date interval in a
//! table uses.
//!
//! levy decides which rate is in force from the sale's `transacted_at` taken in UTC. A rate
//! change at local midnight is therefore applied from 00:00 UTC of its first day; the
//! interface carries no time zone, so this is the one documented convention.

/// A calendar day, counted in days since 1970-01-01.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i32);

impl Date {
    /// The earliest representable day, used as "no start" on open intervals.
    pub const MIN: Date = Date(i32::MIN);
    /// The latest representable day, used as "no end" on open intervals.
    pub const MAX: Date = Date(i32::MAX);

    /// Whether the day lies from day `from` to day `to`, both included: whether a table
    /// record of those days (a rule, a period, a range, a holiday) is in force on it.
    #[inline]
    pub(crate) fn within(self, from: i32, to: i32) -> bool {
        from <= self.0 && self.0 <= to
    }

    /// The day from a proleptic Gregorian year, month (1-12) and day (1-31).
    ///
    /// Returns `None` for a month or day that does not exist (February 30th, month 13).
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Option<Date> {
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        // Days from civil, after H. Hinnant's public-domain algorithm.
        let y = if month <= 2 { year - 1 } else { year } as i64;
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = month as i64;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        i32::try_from(days).ok().map(Date)
    }

    /// The day from a `YYYYMMDD` number, the way SST rate files write dates.
    pub fn from_yyyymmdd(n: u32) -> Option<Date> {
        Date::from_ymd((n / 10_000) as i32, (n / 100) % 100, n % 100)
    }

    /// The UTC day that contains the instant `secs` seconds after the Unix epoch.
    pub fn from_unix_seconds(secs: i64) -> Date {
        let days = secs.div_euclid(86_400);
        Date(days.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
    }

    /// Today in UTC, by the system clock: the day of a sale that names none.
    pub fn today() -> Date {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        Date::from_unix_seconds(secs)
    }

    /// Year, month and day of this date.
    pub fn ymd(self) -> (i32, u32, u32) {
        let z = self.0 as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = (yoe + era * 400 + i64::from(m <= 2)) as i32;
        (y, m, d)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Date::MIN => f.write_str("-inf"),
            Date::MAX => f.write_str("+inf"),
            _ => {
                let (y, m, d) = self.ymd();
                write!(f, "{y:04}-{m:02}-{d:02}")
            }
        }
    }
}

/// Why a text is not a day ([`Date`]'s `FromStr`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a day: expected YYYY-MM-DD (2026-03-01), a day that exists")]
pub struct DateError {
    /// The text given.
    pub text: String,
}

impl std::str::FromStr for Date {
    type Err = DateError;

    /// A day written `YYYY-MM-DD` (ISO 8601's calendar date, four-digit year), surrounding
    /// white space ignored: `2026-03-01`. A day that does not exist (`2026-02-30`), another
    /// layout (`20260301`, `2026-3-1`) or a signed year is refused.
    fn from_str(s: &str) -> Result<Date, DateError> {
        let bad = || DateError {
            text: s.to_string(),
        };
        let t = s.trim().as_bytes();
        let digits = |r: std::ops::Range<usize>| -> Option<u32> {
            t[r].iter().try_fold(0u32, |n, &b| {
                b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
            })
        };
        if t.len() != 10 || t[4] != b'-' || t[7] != b'-' {
            return Err(bad());
        }
        let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
            return Err(bad());
        };
        Date::from_ymd(y as i32, m, d).ok_or_else(bad)
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        // 1970-01-01 is day 0 by definition; 2000-03-01 is day 11017 (30 years of 365 days
        // plus 7 leap days = 10957 to 2000-01-01, plus 31 + 29 days of January and February).
        assert_eq!(Date::from_ymd(1970, 1, 1), Some(Date(0)));
        assert_eq!(Date::from_ymd(2000, 3, 1), Some(Date(11_017)));
        assert_eq!(Date::from_yyyymmdd(20000301), Some(Date(11_017)));
        assert_eq!(Date::from_ymd(2025, 2, 29), None);
        assert_eq!(Date::from_ymd(2024, 2, 29).unwrap().ymd(), (2024, 2, 29));
        // 2026-03-01T00:00:00Z is 1772323200 seconds after the epoch (date -d @1772323200).
        assert_eq!(
            Date::from_unix_seconds(1_772_323_200),
            Date::from_ymd(2026, 3, 1).unwrap()
        );
        assert_eq!(
            Date::from_unix_seconds(1_772_323_199),
            Date::from_ymd(2026, 2, 28).unwrap()
        );
        assert_eq!(Date(-1).ymd(), (1969, 12, 31));
    }

    #[test]
    fn days_parse_from_their_iso_text() {
        assert_eq!(
            "2026-03-01".parse(),
            Ok(Date::from_ymd(2026, 3, 1).unwrap())
        );
        assert_eq!(
            " 2024-02-29\n".parse(),
            Ok(Date::from_ymd(2024, 2, 29).unwrap())
        );
        for bad in [
            "2026-02-30",
            "20260301",
            "2026-3-1",
            "+026-03-01",
            "2026-13-01",
            "",
            "2026-03-01x",
        ] {
            assert!(bad.parse::<Date>().is_err(), "{bad:?}");
        }
        // Display writes what FromStr reads.
        let day = Date::from_ymd(1999, 12, 31).unwrap();
        assert_eq!(day.to_string().parse(), Ok(day));
    }
}
