//! The horizon of each input: the last day it is known to hold what is in force, written
//! into its manifest entry ([`levy_core::model::SourceEntry::horizon`]). A sale dated after
//! the horizon of an input whose rules it used is answered at most `PARTIAL`, with the
//! `STALE_TABLE` note naming the input.
//!
//! | input | horizon | why |
//! |---|---|---|
//! | ZIP5 table (`..._YYYYMM.csv`) | the last day of its month | the tables are published month by month, each for its month |
//! | SST rate or boundary file (`..YYYYQn..`) | the last day of its quarter | member states publish the files each quarter, for the quarter (rate and boundary changes take effect only on the first day of a quarter: W. Va. Code 11-15B-35(a), (c), the Agreement's section 305 as a member enacts it) |
//! | CDTFA list (`...M-D-YY.csv`) | the last day of the quarter it takes effect in | CDTFA publishes the list for each quarter's changes; California district taxes take effect on the first day of a calendar quarter (Cal. Rev. & Tax. Code 7265) |
//! | a local rates file (`data/local/us/`) | from its `as_of` by the checked-fact rule below | |
//! | a curated file (`data/*.toml`, the taxability matrix) | from the earliest `as_of` in it, by the checked-fact rule | |
//! | IP ranges, ZIP-to-county, USPS ZIP codes | none | they place sales; the rates that tax them come from the inputs above |
//!
//! **The checked-fact rule.** A fact checked against its source on day D holds every change
//! announced by then. A change announced after D takes effect, where local changes need 60
//! days' notice and begin on a quarter's first day (W. Va. Code 11-15B-35(a); Ark. Code
//! 26-74-311(b)), no earlier than the first quarter day at least 61 days after D; the
//! horizon is the day before it. levy uses the same rule in every state as its documented
//! default: checked on 2026-11-27, a fact holds to 2027-03-31.
//!
//! An input whose name gives no period (a ZIP5, SST or CDTFA file named otherwise) is dated
//! by the build's day (its header's build time) under the checked-fact rule, and a build
//! of day zero (no period anywhere, no `SOURCE_DATE_EPOCH`) gives such an input a horizon
//! in 1970: every answer from it says so rather than looking current.

use levy_core::Date;

use crate::compile::InputKind;

/// The first day of the quarter holding `d`.
fn quarter_start(d: Date) -> Date {
    let (y, m, _) = d.ymd();
    Date::from_ymd(y, 3 * ((m - 1) / 3) + 1, 1).unwrap_or(d)
}

/// The first day of the quarter after the one holding `d`.
fn next_quarter(d: Date) -> Date {
    let (y, m, _) = d.ymd();
    let q = (m - 1) / 3;
    match q {
        3 => Date::from_ymd(y + 1, 1, 1),
        _ => Date::from_ymd(y, 3 * (q + 1) + 1, 1),
    }
    .unwrap_or(Date::MAX)
}

/// The last day of the quarter holding `d`.
pub fn end_of_quarter(d: Date) -> Date {
    Date(next_quarter(d).0 - 1)
}

/// The last day of the month holding `d`.
pub fn end_of_month(d: Date) -> Date {
    let (y, m, _) = d.ymd();
    let next = match m {
        12 => Date::from_ymd(y + 1, 1, 1),
        _ => Date::from_ymd(y, m + 1, 1),
    };
    next.map_or(Date::MAX, |n| Date(n.0 - 1))
}

/// The horizon of a fact checked on `as_of` (the checked-fact rule of the module).
pub fn checked(as_of: Date) -> Date {
    let earliest = Date(as_of.0.saturating_add(61));
    let start = quarter_start(earliest);
    let first = if start == earliest {
        start
    } else {
        next_quarter(earliest)
    };
    Date(first.0 - 1)
}

/// Whether a file of `kind` is a rate file dated by the period in its name (ZIP5, SST,
/// CDTFA), whose horizon follows from it.
pub fn dated_by_name(kind: InputKind) -> bool {
    matches!(
        kind,
        InputKind::Zip5 | InputKind::SstRates | InputKind::SstBoundaries | InputKind::Cdtfa
    )
}

/// The horizon of an input file of `kind` whose period starts on `start` (from its name),
/// or, when its name gives none, of one dated by the build's day `built`.
pub fn of_file(kind: InputKind, start: Option<Date>, built: Date) -> i32 {
    let Some(start) = start else {
        return match dated_by_name(kind) {
            true => checked(built).0,
            false => i32::MAX,
        };
    };
    match kind {
        InputKind::Zip5 => end_of_month(start).0,
        InputKind::SstRates | InputKind::SstBoundaries | InputKind::Cdtfa => {
            end_of_quarter(start).0
        }
        // Dated by their own `as_of` (local rates), or making no claim that ages.
        _ => i32::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, dd: u32) -> Date {
        Date::from_ymd(y, m, dd).unwrap()
    }

    #[test]
    fn horizons_by_kind() {
        // A ZIP5 table for December 2025 holds December 2025.
        let h = of_file(InputKind::Zip5, Some(d(2025, 12, 1)), d(2026, 1, 1));
        assert_eq!(Date(h), d(2025, 12, 31));
        // An SST rate file for 2026Q2 holds April to June.
        let h = of_file(InputKind::SstRates, Some(d(2026, 4, 1)), d(2026, 1, 1));
        assert_eq!(Date(h), d(2026, 6, 30));
        // The CDTFA list effective 2026-01-01 holds the first quarter.
        let h = of_file(InputKind::Cdtfa, Some(d(2026, 1, 1)), d(2026, 1, 1));
        assert_eq!(Date(h), d(2026, 3, 31));
        // IP data makes no claim that ages.
        assert_eq!(of_file(InputKind::IpCsv, None, d(2026, 1, 1)), i32::MAX);
        // A ZIP5 file named without its month is dated by the build day.
        let h = of_file(InputKind::Zip5, None, d(2026, 11, 27));
        assert_eq!(Date(h), d(2027, 3, 31));
    }

    #[test]
    fn the_checked_fact_rule() {
        // Checked 2026-11-27: a change announced the next day needs 60 days' notice (to
        // 2027-01-27 at the earliest) and starts a quarter: 2027-04-01.
        assert_eq!(checked(d(2026, 11, 27)), d(2027, 3, 31));
        // Checked 2026-10-01: 61 days on is 2026-12-01, so the next quarter, 2027-01-01.
        assert_eq!(checked(d(2026, 10, 1)), d(2026, 12, 31));
        // Checked 2026-11-01: announced 2026-11-02, 60 days' notice ends 2027-01-01, a
        // quarter's first day, so a change may begin then.
        assert_eq!(checked(d(2026, 11, 1)), d(2026, 12, 31));
        // Checked a day later, the first quarter day far enough on is 2027-04-01.
        assert_eq!(checked(d(2026, 11, 2)), d(2027, 3, 31));
        assert_eq!(end_of_month(d(2024, 2, 10)), d(2024, 2, 29));
        assert_eq!(end_of_quarter(d(2026, 12, 31)), d(2026, 12, 31));
    }
}
