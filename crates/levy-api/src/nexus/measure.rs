//! A state's threshold measured against a seller's monthly sales: the period the state
//! measures on a day, the sales and count in it, how far each test is reached, and whether
//! the threshold is crossed and since which month. Pure functions, over months: the ledger
//! keeps sales per calendar month (UTC), so a crossing is known to the month.

use levy_core::Date;
use rust_decimal::{Decimal, RoundingStrategy};

use super::thresholds::{Combine, Period, Threshold};

/// A calendar month, counted as `year * 12 + month - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month(pub i32);

impl Month {
    /// The month of a year and a month number (1-12).
    pub fn new(year: i32, month: u32) -> Month {
        Month(year * 12 + month as i32 - 1)
    }

    /// The month that holds `day`.
    pub fn of(day: Date) -> Month {
        let (y, m, _) = day.ymd();
        Month::new(y, m)
    }

    /// The month that holds the instant `secs` seconds after the Unix epoch, in UTC.
    pub fn of_unix_seconds(secs: i64) -> Month {
        Month::of(Date::from_unix_seconds(secs))
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.0.div_euclid(12)
    }

    /// The month number, 1-12.
    pub fn number(self) -> u32 {
        self.0.rem_euclid(12) as u32 + 1
    }

    /// `n` months later (earlier when negative).
    pub fn plus(self, n: i32) -> Month {
        Month(self.0 + n)
    }

    /// Its first day.
    pub fn first_day(self) -> Date {
        Date::from_ymd(self.year(), self.number(), 1).unwrap_or(Date::MIN)
    }

    /// Its last day.
    pub fn last_day(self) -> Date {
        Date(self.plus(1).first_day().0 - 1)
    }

    /// `YYYY-MM`, the form the ledger stores.
    pub fn key(self) -> String {
        format!("{:04}-{:02}", self.year(), self.number())
    }

    /// A month from `YYYY-MM`.
    pub fn parse(text: &str) -> Option<Month> {
        let (y, m) = text.split_once('-')?;
        if y.len() != 4 || m.len() != 2 {
            return None;
        }
        let (y, m) = (y.parse::<i32>().ok()?, m.parse::<u32>().ok()?);
        (1..=12).contains(&m).then(|| Month::new(y, m))
    }
}

/// A seller's sales into one state in one month, counted as the state counts them: dollars
/// and separate transactions, net of refunds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonthTotal {
    /// The month.
    pub month: Month,
    /// Dollars.
    pub sales: Decimal,
    /// Transactions.
    pub count: i64,
}

/// The months a state measures on a day: from `first` to `last`, both included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The first month.
    pub first: Month,
    /// The last month.
    pub last: Month,
}

/// The spans a period measures on `day`: two for the current or previous calendar year (the
/// previous one first), none for [`Period::Other`], one otherwise. The current year's span
/// ends with `day`'s month, counted in full.
pub fn spans(period: Period, day: Date) -> Vec<Span> {
    let now = Month::of(day);
    let jan = Month::new(now.year(), 1);
    let year_before = Span {
        first: jan.plus(-12),
        last: jan.plus(-1),
    };
    let twelve_to = |last: Month| Span {
        first: last.plus(-11),
        last,
    };
    match period {
        Period::CurrentOrPreviousCalendarYear => vec![
            year_before,
            Span {
                first: jan,
                last: now,
            },
        ],
        Period::PreviousCalendarYear => vec![year_before],
        Period::PreviousTwelveMonths => vec![twelve_to(now.plus(-1))],
        Period::TwelveMonthsEndingSeptember30 => {
            let year = if now.number() >= 10 {
                now.year()
            } else {
                now.year() - 1
            };
            vec![twelve_to(Month::new(year, 9))]
        }
        Period::PrecedingFourQuarters => {
            // New York's quarters start in March, June, September and December.
            let into_quarter = (now.number() as i32 - 3).rem_euclid(3);
            let quarter = now.plus(-into_quarter);
            vec![twelve_to(quarter.plus(-1))]
        }
        Period::TwelveMonthsEndingLastQuarter => {
            // The last March, June, September or December before `day`'s month.
            let past_quarter_end = (now.number() as i32).rem_euclid(3);
            let back = if past_quarter_end == 0 {
                3
            } else {
                past_quarter_end
            };
            vec![twelve_to(now.plus(-back))]
        }
        Period::Other => Vec::new(),
    }
}

/// One span measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measured {
    /// The months.
    pub span: Span,
    /// Dollars in them.
    pub sales: Decimal,
    /// Transactions in them.
    pub count: i64,
    /// How far the threshold is reached, in percent, exact: for one test its total over its
    /// figure; with `or`, the larger of the two; with `and`, the smaller. Not capped.
    pub percent: Decimal,
    /// The month in which the running total from the span's first month first passed the
    /// threshold. A crossing, once made, stays made for the span: refunds in later months
    /// that bring its total back under the threshold do not undo it (the seller was
    /// obliged from then on; New Jersey, for one, keeps a seller collecting for the rest of
    /// the year and the next).
    pub crossed: Option<Month>,
}

/// Where a seller stands against a state's threshold on a day (before registrations are
/// looked at).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Not crossed, and under 75%.
    Below,
    /// Not crossed, at 75% or more in some span measured.
    Approaching,
    /// Crossed, since the first day of this month (the earlier crossing where two spans
    /// are measured).
    Exposed(Month),
    /// The row's period is [`Period::Other`]: levy does not measure it.
    Unmeasured,
}

/// What [`evaluate`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Each span measured (none for [`Period::Other`]).
    pub measured: Vec<Measured>,
    /// The standing.
    pub standing: Standing,
    /// The largest percentage over the spans, `None` when nothing is measured.
    pub percent: Option<Decimal>,
}

/// Whether `(sales, count)` passes the row's threshold.
pub fn passes(row: &Threshold, sales: Decimal, count: i64) -> bool {
    let amount = row.amount.map(|t| t.rule.passes(sales, t.figure));
    let transactions = row
        .transactions
        .map(|t| t.rule.passes(Decimal::from(count), Decimal::from(t.figure)));
    match (amount, transactions, row.combine) {
        (Some(a), Some(t), Combine::And) => a && t,
        (Some(a), Some(t), Combine::Or) => a || t,
        (Some(a), None, _) => a,
        (None, Some(t), _) => t,
        (None, None, _) => false,
    }
}

/// How far `(sales, count)` reaches the row's threshold, in percent.
pub fn percent(row: &Threshold, sales: Decimal, count: i64) -> Decimal {
    let hundred = Decimal::ONE_HUNDRED;
    let amount = row.amount.map(|t| sales * hundred / t.figure);
    let transactions = row
        .transactions
        .map(|t| Decimal::from(count) * hundred / Decimal::from(t.figure));
    match (amount, transactions, row.combine) {
        (Some(a), Some(t), Combine::And) => a.min(t),
        (Some(a), Some(t), Combine::Or) => a.max(t),
        (Some(a), None, _) | (None, Some(a), _) => a,
        (None, None, _) => Decimal::ZERO,
    }
}

/// A percentage as the interface shows it: two places, cut toward zero, so that 99.999%
/// never reads as 100%.
pub fn shown(percent: Decimal) -> Decimal {
    percent.round_dp_with_strategy(2, RoundingStrategy::ToZero)
}

/// The threshold `row` (in force on `day`) measured against `months` (one state's, as the
/// state counts them, in any order; a month may appear once).
pub fn evaluate(row: &Threshold, day: Date, months: &[MonthTotal]) -> Evaluation {
    let measured: Vec<Measured> = spans(row.period, day)
        .into_iter()
        .map(|span| measure(row, span, months))
        .collect();
    let crossed = measured.iter().filter_map(|m| m.crossed).min();
    let percent = measured.iter().map(|m| m.percent).max();
    let seventy_five = Decimal::from(75);
    let standing = match (crossed, percent) {
        (_, None) => Standing::Unmeasured,
        (Some(month), _) => Standing::Exposed(month),
        (None, Some(p)) if p >= seventy_five => Standing::Approaching,
        (None, Some(_)) => Standing::Below,
    };
    Evaluation {
        measured,
        standing,
        percent,
    }
}

fn measure(row: &Threshold, span: Span, months: &[MonthTotal]) -> Measured {
    let mut inside: Vec<&MonthTotal> = months
        .iter()
        .filter(|m| span.first <= m.month && m.month <= span.last)
        .collect();
    inside.sort_by_key(|m| m.month);
    let (mut sales, mut count, mut first_pass) = (Decimal::ZERO, 0i64, None);
    for m in inside {
        sales += m.sales;
        count += m.count;
        if first_pass.is_none() && passes(row, sales, count) {
            first_pass = Some(m.month);
        }
    }
    Measured {
        span,
        sales,
        count,
        percent: percent(row, sales, count),
        crossed: first_pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, dd: u32) -> Date {
        Date::from_ymd(y, m, dd).unwrap()
    }

    fn span(a: &str, b: &str) -> Span {
        Span {
            first: Month::parse(a).unwrap(),
            last: Month::parse(b).unwrap(),
        }
    }

    #[test]
    fn a_crossing_stays_made_after_later_refunds() {
        // New Jersey (data/us-nexus.toml, N.J.S.A. 54:32B-3.5): more than $100,000 or 200
        // or more transactions in the current or prior calendar year. $60,000 in August and
        // $50,000 in September 2026 cross in September ($110,000); $20,000 of refunds in
        // October bring the year to $90,000. On November 15 the seller stands crossed since
        // September, at 90%.
        let nj = crate::nexus::Thresholds::shipped()
            .in_force(d(2026, 11, 15))
            .find(|t| t.state == "NJ")
            .unwrap()
            .clone();
        let month = |m: &str, dollars: i64, count: i64| MonthTotal {
            month: Month::parse(m).unwrap(),
            sales: Decimal::from(dollars),
            count,
        };
        let months = [
            month("2026-08", 60_000, 30),
            month("2026-09", 50_000, 25),
            month("2026-10", -20_000, -10),
        ];
        let e = evaluate(&nj, d(2026, 11, 15), &months);
        assert_eq!(
            e.standing,
            Standing::Exposed(Month::parse("2026-09").unwrap())
        );
        assert_eq!(e.percent, Some(Decimal::from(90)));
        // Never past the threshold: $99,000 with a refund after is below, not crossed.
        let months = [month("2026-08", 60_000, 30), month("2026-09", 39_000, 20)];
        let e = evaluate(&nj, d(2026, 11, 15), &months);
        assert_eq!(e.standing, Standing::Approaching);
    }

    #[test]
    fn months_read_and_print() {
        let m = Month::parse("2026-02").unwrap();
        assert_eq!(
            (m.year(), m.number(), m.key()),
            (2026, 2, "2026-02".to_string())
        );
        assert_eq!(m.last_day(), d(2026, 2, 28));
        assert_eq!(m.plus(-2).key(), "2025-12");
        assert_eq!(Month::parse("2026-13"), None);
        // 1772323200 is 2026-03-01T00:00:00Z; one second before is February.
        assert_eq!(Month::of_unix_seconds(1_772_323_200).key(), "2026-03");
        assert_eq!(Month::of_unix_seconds(1_772_323_199).key(), "2026-02");
    }

    #[test]
    fn each_period_measures_the_months_its_rule_names() {
        use Period::*;
        let day = d(2026, 7, 10);
        assert_eq!(
            spans(CurrentOrPreviousCalendarYear, day),
            [span("2025-01", "2025-12"), span("2026-01", "2026-07")]
        );
        assert_eq!(
            spans(PreviousCalendarYear, day),
            [span("2025-01", "2025-12")]
        );
        assert_eq!(
            spans(PreviousTwelveMonths, day),
            [span("2025-07", "2026-06")]
        );
        // Connecticut: the September 30 before the month asked.
        assert_eq!(
            spans(TwelveMonthsEndingSeptember30, d(2026, 10, 15)),
            [span("2025-10", "2026-09")]
        );
        assert_eq!(
            spans(TwelveMonthsEndingSeptember30, d(2026, 9, 15)),
            [span("2024-10", "2025-09")]
        );
        // New York: July is in June-August; March is in March-May; February in Dec-Feb.
        assert_eq!(
            spans(PrecedingFourQuarters, day),
            [span("2025-06", "2026-05")]
        );
        assert_eq!(
            spans(PrecedingFourQuarters, d(2026, 3, 5)),
            [span("2025-03", "2026-02")]
        );
        assert_eq!(
            spans(PrecedingFourQuarters, d(2026, 2, 5)),
            [span("2024-12", "2025-11")]
        );
        // Illinois: the last quarter-end before the month asked.
        assert_eq!(
            spans(TwelveMonthsEndingLastQuarter, d(2026, 4, 15)),
            [span("2025-04", "2026-03")]
        );
        assert_eq!(
            spans(TwelveMonthsEndingLastQuarter, d(2026, 3, 31)),
            [span("2025-01", "2025-12")]
        );
        assert_eq!(
            spans(TwelveMonthsEndingLastQuarter, d(2026, 1, 20)),
            [span("2025-01", "2025-12")]
        );
        assert!(spans(Other, day).is_empty());
    }
}
