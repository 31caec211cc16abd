//! The economic-nexus thresholds of `data/us-nexus.toml`, read and checked: every row of
//! every state, oldest first, and the row in force on a day. The file's header is its own
//! grammar; every error names the file, the row and the key.

use levy_core::Date;
use rust_decimal::Decimal;
use toml::{Table, Value};

/// The thresholds levy ships, embedded.
pub const US_NEXUS_TOML: &str = include_str!("../../../../data/us-nexus.toml");

/// The name errors give the shipped file.
pub const US_NEXUS_FILE: &str = "data/us-nexus.toml";

/// Whether a total equal to the figure passes the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestRule {
    /// `more_than`: the law says exceeds; a total equal to the figure does not pass.
    MoreThan,
    /// `at_least`: the law says or more; a total equal to the figure passes.
    AtLeast,
}

impl TestRule {
    /// The file's name of the rule.
    pub fn as_str(self) -> &'static str {
        match self {
            TestRule::MoreThan => "more_than",
            TestRule::AtLeast => "at_least",
        }
    }

    /// Whether `total` passes a test of `figure` under this rule.
    pub fn passes(self, total: Decimal, figure: Decimal) -> bool {
        match self {
            TestRule::MoreThan => total > figure,
            TestRule::AtLeast => total >= figure,
        }
    }
}

/// How a row with both tests combines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Passing either test is enough.
    Or,
    /// Both tests must be passed.
    And,
}

impl Combine {
    /// The file's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::Or => "or",
            Combine::And => "and",
        }
    }
}

/// What the amount and the count count, as the state says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counts {
    /// Every sale into the state: taxable, exempt and for resale alike.
    Gross,
    /// Retail sales, taxable and exempt, but not sales for resale.
    Retail,
    /// Taxable sales only.
    Taxable,
}

impl Counts {
    /// The file's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Counts::Gross => "gross",
            Counts::Retail => "retail",
            Counts::Taxable => "taxable",
        }
    }
}

/// The period a state measures its tests over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    /// The current or the previous calendar year, either one passing.
    CurrentOrPreviousCalendarYear,
    /// The previous calendar year only.
    PreviousCalendarYear,
    /// The 12 calendar months before the current month.
    PreviousTwelveMonths,
    /// The 12 months ending on the September 30 before the current month (Connecticut).
    TwelveMonthsEndingSeptember30,
    /// The four sales tax quarters (March-May, June-August, September-November,
    /// December-February) before the current one (New York).
    PrecedingFourQuarters,
    /// The 12 months ending on the last day of the last calendar quarter completed before
    /// the current month (Illinois, Minnesota, Missouri).
    TwelveMonthsEndingLastQuarter,
    /// None of these: the row's note gives the rule, which levy does not measure.
    Other,
}

impl Period {
    const ALL: [Period; 7] = [
        Period::CurrentOrPreviousCalendarYear,
        Period::PreviousCalendarYear,
        Period::PreviousTwelveMonths,
        Period::TwelveMonthsEndingSeptember30,
        Period::PrecedingFourQuarters,
        Period::TwelveMonthsEndingLastQuarter,
        Period::Other,
    ];

    /// The file's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Period::CurrentOrPreviousCalendarYear => "current_or_previous_calendar_year",
            Period::PreviousCalendarYear => "previous_calendar_year",
            Period::PreviousTwelveMonths => "previous_twelve_months",
            Period::TwelveMonthsEndingSeptember30 => "twelve_months_ending_september_30",
            Period::PrecedingFourQuarters => "preceding_four_quarters",
            Period::TwelveMonthsEndingLastQuarter => "twelve_months_ending_last_quarter",
            Period::Other => "other",
        }
    }
}

/// One test of a row: the figure the law names and whether reaching it is enough.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Test<T> {
    /// Dollars (amount) or transactions (count).
    pub figure: T,
    /// `more_than` or `at_least`.
    pub rule: TestRule,
}

/// One row of `data/us-nexus.toml`: a state's threshold over a span of days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Threshold {
    /// USPS abbreviation.
    pub state: String,
    /// First day the row applies.
    pub from: Date,
    /// Last day the row applies, inclusive; `None` on the row in force now.
    pub to: Option<Date>,
    /// The amount test, in dollars; `None` when the state has none.
    pub amount: Option<Test<Decimal>>,
    /// The transactions test; `None` when the state has none.
    pub transactions: Option<Test<u64>>,
    /// How both tests combine (`Or` for a row with one test, where it does not matter).
    pub combine: Combine,
    /// What the tests count.
    pub counts: Counts,
    /// Whether marketplace sales are left out; `None` when not established.
    pub exclude_marketplace: Option<bool>,
    /// The period measured.
    pub period: Period,
    /// When registration is due once the threshold is crossed, in the state's words.
    pub registration: Option<String>,
    /// The primary source(s).
    pub source: String,
    /// The day the row was last checked against its source.
    pub as_of: Date,
    /// Some fact of the row is not established from a primary source (the note says which).
    pub unknown: bool,
    /// The state's words, history and what the keys cannot say.
    pub note: Option<String>,
}

impl Threshold {
    /// Whether the row is in force on `day`.
    pub fn in_force(&self, day: Date) -> bool {
        self.from <= day && self.to.is_none_or(|to| day <= to)
    }
}

/// Why a thresholds file was refused: the file, where in it, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {at}: {why}")]
pub struct ThresholdError {
    /// The file's name.
    pub file: String,
    /// The row and key (`threshold[3].amount_rule`), or the file as a whole.
    pub at: String,
    /// What is wrong and what is expected.
    pub why: String,
}

/// Every row of a thresholds file, checked: keys known and well formed, each test with its
/// rule, `combine` exactly when both tests are given, and each state's rows oldest first
/// without overlap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thresholds {
    rows: Vec<Threshold>,
}

impl Thresholds {
    /// The shipped thresholds (`data/us-nexus.toml`).
    pub fn shipped() -> &'static Thresholds {
        static SHIPPED: std::sync::OnceLock<Thresholds> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| {
            // The file is checked by this crate's tests; a release cannot ship it broken.
            Thresholds::parse(US_NEXUS_FILE, US_NEXUS_TOML)
                .unwrap_or_else(|e| panic!("the embedded thresholds do not read: {e}"))
        })
    }

    /// Reads a thresholds file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Thresholds, ThresholdError> {
        let err = |at: String, why: String| ThresholdError {
            file: file.to_string(),
            at,
            why,
        };
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| err("the file".into(), e.message().to_string()))?;
        for key in table.keys() {
            if key != "threshold" {
                return Err(err(
                    key.clone(),
                    "unknown key: expected [[threshold]] rows".into(),
                ));
            }
        }
        let items = match table.get("threshold") {
            Some(Value::Array(items)) => items,
            Some(_) => return Err(err("threshold".into(), "must be [[threshold]] rows".into())),
            None => return Err(err("the file".into(), "no [[threshold]] rows".into())),
        };
        let mut rows = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("threshold[{i}]");
            let Value::Table(t) = item else {
                return Err(err(at, "must be a table".into()));
            };
            let row = Row { t, at: &at }
                .threshold()
                .map_err(|(key, why)| err(format!("{at}.{key}"), why))?;
            if let Some(prev) = rows.last().filter(|p: &&Threshold| p.state == row.state) {
                let after = prev.to.is_some_and(|to| to < row.from);
                if !after {
                    return Err(err(
                        format!("{at}.from"),
                        format!(
                            "{}'s rows must be oldest first and not overlap: this row starts {} but the row before {}",
                            row.state,
                            day(row.from),
                            prev.to.map_or("has no end".to_string(), |to| format!("ends {}", day(to)))
                        ),
                    ));
                }
            } else if rows.iter().any(|p: &Threshold| p.state == row.state) {
                return Err(err(
                    format!("{at}.state"),
                    format!("{}'s rows must be together, oldest first", row.state),
                ));
            }
            rows.push(row);
        }
        Ok(Thresholds { rows })
    }

    /// Every row, in the file's order.
    pub fn rows(&self) -> &[Threshold] {
        &self.rows
    }

    /// The rows in force on `day`, one per state, in the file's order (by state).
    pub fn in_force(&self, day: Date) -> impl Iterator<Item = &Threshold> {
        self.rows.iter().filter(move |r| r.in_force(day))
    }

    /// The row of `state` in force on `day`.
    pub fn of(&self, state: &str, day: Date) -> Option<&Threshold> {
        self.in_force(day).find(|r| r.state == state)
    }
}

/// `YYYY-MM-DD`.
pub fn day(d: Date) -> String {
    let (y, m, dd) = d.ymd();
    format!("{y:04}-{m:02}-{dd:02}")
}

/// One row's table, read key by key; an error is `(key, why)`.
struct Row<'a> {
    t: &'a Table,
    at: &'a str,
}

type KeyResult<T> = Result<T, (String, String)>;

const KEYS: [&str; 16] = [
    "state",
    "from",
    "to",
    "amount",
    "amount_rule",
    "transactions",
    "transactions_rule",
    "combine",
    "counts",
    "exclude_marketplace",
    "period",
    "registration",
    "source",
    "as_of",
    "unknown",
    "note",
];

fn bad<T>(key: &str, why: impl Into<String>) -> KeyResult<T> {
    Err((key.to_string(), why.into()))
}

impl Row<'_> {
    fn threshold(&self) -> KeyResult<Threshold> {
        if let Some(k) = self.t.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return bad(
                k,
                format!("unknown key: expected one of {}", KEYS.join(", ")),
            );
        }
        let state = self.req_str("state")?;
        if state.len() != 2 || !state.bytes().all(|b| b.is_ascii_uppercase()) {
            return bad(
                "state",
                format!("{state:?} is not a USPS abbreviation (two capital letters)"),
            );
        }
        let from = self.req_date("from")?;
        let to = self.opt_date("to")?;
        if let Some(to) = to.filter(|to| *to < from) {
            return bad("to", format!("{} is before from {}", day(to), day(from)));
        }
        let amount = self.amount()?;
        let transactions = self.transactions()?;
        let combine = match (
            self.opt_str("combine")?,
            amount.is_some() && transactions.is_some(),
        ) {
            (Some("or"), true) => Combine::Or,
            (Some("and"), true) => Combine::And,
            (Some(c), true) => return bad("combine", format!("{c:?}: expected \"or\" or \"and\"")),
            (None, true) => {
                return bad(
                    "combine",
                    "required on a row with both amount and transactions",
                )
            }
            (Some(_), false) => {
                return bad(
                    "combine",
                    "given only on a row with both amount and transactions",
                )
            }
            (None, false) => Combine::Or,
        };
        if amount.is_none() && transactions.is_none() {
            return bad("amount", "a row needs amount, transactions or both");
        }
        let counts = match self.req_str("counts")? {
            "gross" => Counts::Gross,
            "retail" => Counts::Retail,
            "taxable" => Counts::Taxable,
            c => {
                return bad(
                    "counts",
                    format!("{c:?}: expected gross, retail or taxable"),
                )
            }
        };
        let period = self.req_str("period")?;
        let period = Period::ALL
            .into_iter()
            .find(|p| p.as_str() == period)
            .map_or_else(
                || {
                    let names: Vec<&str> = Period::ALL.iter().map(|p| p.as_str()).collect();
                    bad(
                        "period",
                        format!("{period:?}: expected one of {}", names.join(", ")),
                    )
                },
                Ok,
            )?;
        let source = self.req_str("source")?;
        if source.trim().is_empty() {
            return bad("source", "must name the primary source");
        }
        Ok(Threshold {
            state: state.to_string(),
            from,
            to,
            amount,
            transactions,
            combine,
            counts,
            exclude_marketplace: self.opt_bool("exclude_marketplace")?,
            period,
            registration: self.opt_str("registration")?.map(str::to_string),
            source: source.to_string(),
            as_of: self.req_date("as_of")?,
            unknown: self.opt_bool("unknown")?.unwrap_or(false),
            note: self.opt_str("note")?.map(str::to_string),
        })
    }

    fn amount(&self) -> KeyResult<Option<Test<Decimal>>> {
        let rule = self.rule("amount_rule")?;
        let Some(text) = self.opt_str("amount")? else {
            return match rule {
                Some(_) => bad("amount_rule", "given without amount"),
                None => Ok(None),
            };
        };
        let figure: Decimal = text
            .parse()
            .ok()
            .filter(|d: &Decimal| *d > Decimal::ZERO)
            .map_or_else(
                || {
                    bad(
                        "amount",
                        format!("{text:?} is not a positive number of dollars"),
                    )
                },
                Ok,
            )?;
        let rule = rule.map_or_else(|| bad("amount_rule", "required with amount"), Ok)?;
        Ok(Some(Test { figure, rule }))
    }

    fn transactions(&self) -> KeyResult<Option<Test<u64>>> {
        let rule = self.rule("transactions_rule")?;
        let figure = match self.t.get("transactions") {
            None => {
                return match rule {
                    Some(_) => bad("transactions_rule", "given without transactions"),
                    None => Ok(None),
                }
            }
            Some(Value::Integer(n)) if *n > 0 => *n as u64,
            Some(v) => {
                return bad(
                    "transactions",
                    format!("{v} is not a positive whole number"),
                )
            }
        };
        let rule = rule.map_or_else(
            || bad("transactions_rule", "required with transactions"),
            Ok,
        )?;
        Ok(Some(Test { figure, rule }))
    }

    fn rule(&self, key: &str) -> KeyResult<Option<TestRule>> {
        Ok(match self.opt_str(key)? {
            None => None,
            Some("more_than") => Some(TestRule::MoreThan),
            Some("at_least") => Some(TestRule::AtLeast),
            Some(r) => {
                return bad(
                    key,
                    format!("{r:?}: expected \"more_than\" or \"at_least\""),
                )
            }
        })
    }

    fn opt_str(&self, key: &str) -> KeyResult<Option<&str>> {
        match self.t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => bad(key, format!("must be a string, not {}", v.type_str())),
        }
    }

    fn req_str(&self, key: &str) -> KeyResult<&str> {
        self.opt_str(key)?.map_or_else(
            || bad(key, format!("required on every row ({})", self.at)),
            Ok,
        )
    }

    fn opt_bool(&self, key: &str) -> KeyResult<Option<bool>> {
        match self.t.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => bad(key, format!("must be true or false, not {}", v.type_str())),
        }
    }

    fn opt_date(&self, key: &str) -> KeyResult<Option<Date>> {
        let d = match self.t.get(key) {
            None => return Ok(None),
            Some(Value::Datetime(d)) if d.time.is_none() && d.offset.is_none() => d.date,
            Some(v) => return bad(key, format!("must be a TOML date (2026-01-01), not {v}")),
        };
        let date = d.and_then(|d| Date::from_ymd(d.year as i32, d.month as u32, d.day as u32));
        date.map_or_else(|| bad(key, "not a day of the calendar"), |d| Ok(Some(d)))
    }

    fn req_date(&self, key: &str) -> KeyResult<Date> {
        self.opt_date(key)?.map_or_else(
            || bad(key, format!("required on every row ({})", self.at)),
            Ok,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, dd: u32) -> Date {
        Date::from_ymd(y, m, dd).unwrap()
    }

    #[test]
    fn the_shipped_file_reads() {
        let t = Thresholds::parse(US_NEXUS_FILE, US_NEXUS_TOML).unwrap();
        assert_eq!(t.rows().len(), 72);
        // Every state with a sales tax but the four without, DC and PR, AK's local code:
        // 47 rows in force on 2026-11-26.
        let today: Vec<&str> = t
            .in_force(d(2026, 11, 26))
            .map(|r| r.state.as_str())
            .collect();
        assert_eq!(today.len(), 48);
        for none in ["DE", "MT", "NH", "OR"] {
            assert!(!today.contains(&none), "{none} has no sales tax");
        }
        // Illinois on both sides of 2026-01-01 (P.A. 104-0006 drops the 200 transactions).
        let il_old = t.of("IL", d(2025, 12, 31)).unwrap();
        assert_eq!(il_old.transactions.map(|x| x.figure), Some(200));
        assert_eq!(il_old.combine, Combine::Or);
        let il = t.of("IL", d(2026, 1, 1)).unwrap();
        assert_eq!(il.transactions, None);
        assert_eq!(il.period, Period::TwelveMonthsEndingLastQuarter);
        // New York: more than $500,000 and more than 100 sales (Tax Law 1101(b)(8)(iv)).
        let ny = t.of("NY", d(2026, 7, 10)).unwrap();
        assert_eq!(
            ny.amount,
            Some(Test {
                figure: Decimal::from(500_000),
                rule: TestRule::MoreThan
            })
        );
        assert_eq!(
            ny.transactions,
            Some(Test {
                figure: 100,
                rule: TestRule::MoreThan
            })
        );
        assert_eq!(
            (ny.combine, ny.period),
            (Combine::And, Period::PrecedingFourQuarters)
        );
        assert!(
            t.of("CA", d(2019, 3, 31)).is_none(),
            "CA's rule from 2019-04-01"
        );
    }

    const GOOD: &str = r#"
[[threshold]]
state = "ZZ"
from = 2020-01-01
amount = "100000"
amount_rule = "more_than"
counts = "gross"
period = "previous_calendar_year"
source = "a statute"
as_of = 2026-01-01
"#;

    fn refused(text: &str) -> ThresholdError {
        Thresholds::parse("t.toml", text).unwrap_err()
    }

    #[test]
    fn a_good_row_reads_and_broken_rows_are_refused_naming_file_and_key() {
        let t = Thresholds::parse("t.toml", GOOD).unwrap();
        assert_eq!(t.rows()[0].combine, Combine::Or);
        let cases: [(&str, &str, &str); 9] = [
            (
                "amount_rule = \"more_than\"",
                "amount_rule = \"over\"",
                "threshold[0].amount_rule",
            ),
            (
                "amount_rule = \"more_than\"\n",
                "",
                "threshold[0].amount_rule",
            ),
            (
                "amount = \"100000\"",
                "amount = \"-5\"",
                "threshold[0].amount",
            ),
            (
                "period = \"previous_calendar_year\"",
                "period = \"fiscal\"",
                "threshold[0].period",
            ),
            ("state = \"ZZ\"", "state = \"zz\"", "threshold[0].state"),
            ("source = \"a statute\"\n", "", "threshold[0].source"),
            (
                "from = 2020-01-01",
                "from = \"2020-01-01\"",
                "threshold[0].from",
            ),
            (
                "counts = \"gross\"",
                "counts = \"gross\"\ncolour = 1",
                "threshold[0].colour",
            ),
            (
                "amount_rule = \"more_than\"",
                "amount_rule = \"more_than\"\ntransactions = 200\ntransactions_rule = \"at_least\"",
                "threshold[0].combine",
            ),
        ];
        for (from, to, at) in cases {
            let e = refused(&GOOD.replace(from, to));
            assert_eq!((e.file.as_str(), e.at.as_str()), ("t.toml", at), "{e}");
            assert!(e.to_string().starts_with(&format!("t.toml: {at}: ")), "{e}");
        }
        // Overlapping rows of one state.
        let two = format!("{GOOD}{}", GOOD.replace("2020-01-01", "2021-01-01"));
        assert_eq!(refused(&two).at, "threshold[1].from");
        let closed = GOOD.replace("from = 2020-01-01", "from = 2020-01-01\nto = 2020-12-31");
        let ok = format!("{closed}{}", GOOD.replace("2020-01-01", "2021-01-01"));
        assert_eq!(Thresholds::parse("t.toml", &ok).unwrap().rows().len(), 2);
        assert_eq!(refused("x = 1").at, "x");
        assert_eq!(refused("[[threshold]\n").at, "the file");
    }
}
