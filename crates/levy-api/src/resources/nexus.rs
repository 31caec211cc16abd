//! Economic nexus (a levy extension, in every API version): `GET /tax/nexus`, per US state
//! whose threshold row of `data/us-nexus.toml` is in force on the day asked, the period the
//! state measures, the seller's sales and transactions in it (from the ledger's monthly
//! sales), the threshold, how far it is reached, and where the seller stands: `below`,
//! `approaching` (75% or more), `exposed` since a month, `registered` (an active
//! `sales_tax` registration of the account for the state on the day), or `unmeasured` (a
//! state whose period levy does not measure; its note gives the rule).
//!
//! What is counted: sales in US dollars to places in the state, as the ledger records them
//! in the key's mode, net of refunds; the account's own sales (a merchant's sales on a
//! platform count to the account). levy records only the seller's own sales: sales made
//! through a marketplace facilitator are not in the ledger.

use levy_core::Date;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::nexus::measure::shown;
use crate::nexus::thresholds::day;
use crate::nexus::{
    evaluate, Counts, Evaluation, Month, MonthTotal, Standing, Threshold, Thresholds,
};
use crate::service::Service;
use crate::store::{NexusMonth, RegistrationKind, RegistrationRecord, Scope};

/// Where a seller stands in a state on a day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NexusStatus {
    /// No test passed, under 75%.
    Below,
    /// Not crossed, at 75% or more.
    Approaching,
    /// Crossed, since the first day of the month in which the running total first passed.
    Exposed {
        /// That day.
        since: Date,
    },
    /// An active `sales_tax` registration of the account for the state on the day.
    Registered {
        /// Its `reg_…` id.
        registration_id: String,
    },
    /// The state's period is not one levy measures (the row's `period` is `other`).
    Unmeasured,
}

impl NexusStatus {
    /// The interface's name: `below`, `approaching`, `exposed`, `registered`,
    /// `unmeasured`.
    pub fn as_str(&self) -> &'static str {
        match self {
            NexusStatus::Below => "below",
            NexusStatus::Approaching => "approaching",
            NexusStatus::Exposed { .. } => "exposed",
            NexusStatus::Registered { .. } => "registered",
            NexusStatus::Unmeasured => "unmeasured",
        }
    }
}

/// One state's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateNexus {
    /// The threshold row in force on the day.
    pub threshold: Threshold,
    /// The periods measured, the totals and the crossing.
    pub evaluation: Evaluation,
    /// Where the seller stands.
    pub status: NexusStatus,
    /// What the sales counted are, against what the state counts.
    pub basis: String,
}

impl StateNexus {
    /// The first day of the month in which the threshold was first passed, when it was
    /// (also for a registered seller).
    pub fn exposed_since(&self) -> Option<Date> {
        match self.evaluation.standing {
            Standing::Exposed(m) => Some(m.first_day()),
            _ => None,
        }
    }
}

/// The answer of `GET /tax/nexus` ([`Service::nexus`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NexusReport {
    /// The day asked.
    pub date: Date,
    /// Every state with a row in force on the day (or the one asked), by state.
    pub states: Vec<StateNexus>,
}

/// `YYYY-MM-DD`, a day from 1970-01-01 to 9999-12-31.
pub fn parse_date(field: &str, given: &str) -> Result<Date, ApiError> {
    let b = given.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .filter(|s| s.iter().all(u8::is_ascii_digit))
            .and_then(|_| given[r].parse::<u32>().ok())
    };
    let date = (b.len() == 10 && b[4] == b'-' && b[7] == b'-')
        .then(|| Some((digits(0..4)?, digits(5..7)?, digits(8..10)?)))
        .flatten()
        .filter(|(y, _, _)| *y >= 1970)
        .and_then(|(y, m, d)| Date::from_ymd(y as i32, m, d));
    date.ok_or_else(|| {
        ApiError::field(
            ErrorKind::InvalidQueryParameter,
            field,
            format!("{field} {given:?} is not a day written YYYY-MM-DD from 1970-01-01 on"),
            "a day written YYYY-MM-DD, such as 2026-07-01",
            given,
        )
    })
}

/// What the ledger's sales stand for against what the state counts (`counts` and
/// `exclude_marketplace`).
pub fn basis(row: &Threshold) -> String {
    let counted = match row.counts {
        Counts::Gross => "gross sales: every sale's amount excluding tax, taxable and exempt",
        Counts::Retail => {
            "retail sales, measured as gross sales (every sale's amount excluding tax): levy cannot tell sales for resale from retail sales, so sales for resale count too"
        }
        Counts::Taxable => {
            "taxable sales: the amount excluding tax of the lines that bore tax; the count counts every transaction, taxable or not"
        }
    };
    let marketplace = match row.exclude_marketplace {
        Some(true) => "the state leaves out sales through a marketplace facilitator, which levy does not record either",
        Some(false) => "the state counts sales through a marketplace facilitator too, which levy does not record: add them",
        None => "whether the state counts sales through a marketplace facilitator is not established; levy does not record them",
    };
    format!("{counted}; in US dollars, net of refunds; {marketplace}")
}

/// The ledger's months of `state`, as the row counts them: dollars (minor units / 100) of
/// sales in US dollars.
fn months_of(row: &Threshold, months: &[NexusMonth]) -> Vec<MonthTotal> {
    let hundred = Decimal::ONE_HUNDRED;
    months
        .iter()
        .filter(|m| m.region == row.state && m.currency.eq_ignore_ascii_case("usd"))
        .filter_map(|m| {
            let minor = match row.counts {
                Counts::Taxable => m.taxable,
                Counts::Gross | Counts::Retail => m.gross,
            };
            Some(MonthTotal {
                month: Month::parse(&m.month)?,
                sales: minor / hundred,
                count: m.count,
            })
        })
        .collect()
}

/// The account's own active `sales_tax` registration for `state` at `at`.
fn registered<'a>(
    registrations: &'a [RegistrationRecord],
    state: &str,
    at: i64,
) -> Option<&'a RegistrationRecord> {
    registrations.iter().find(|r| {
        r.merchant_id.is_none()
            && r.kind == RegistrationKind::SalesTax
            && r.country == "US"
            && r.region == state
            && r.active_at(at)
    })
}

/// One state's answer, from its row, the ledger's months and the registrations.
pub fn state_nexus(
    row: &Threshold,
    date: Date,
    months: &[NexusMonth],
    registrations: &[RegistrationRecord],
) -> StateNexus {
    let evaluation = evaluate(row, date, &months_of(row, months));
    // A registration active at any moment of the day: at its last second.
    let end_of_day = i64::from(date.0) * 86_400 + 86_399;
    let status = match (
        registered(registrations, &row.state, end_of_day),
        evaluation.standing,
    ) {
        (Some(r), _) => NexusStatus::Registered {
            registration_id: r.id.clone(),
        },
        (None, Standing::Below) => NexusStatus::Below,
        (None, Standing::Approaching) => NexusStatus::Approaching,
        (None, Standing::Exposed(m)) => NexusStatus::Exposed {
            since: m.first_day(),
        },
        (None, Standing::Unmeasured) => NexusStatus::Unmeasured,
    };
    StateNexus {
        basis: basis(row),
        threshold: row.clone(),
        evaluation,
        status,
    }
}

/// The report of `scope` on `date`, of every state or of `region` only.
pub(crate) fn report(
    service: &Service,
    scope: &Scope,
    date: Date,
    region: Option<&str>,
) -> Result<NexusReport, ApiError> {
    let reads = service.store.nexus_reads(scope, "US")?;
    let states = Thresholds::shipped()
        .in_force(date)
        .filter(|row| region.is_none_or(|r| r == row.state))
        .map(|row| state_nexus(row, date, &reads.months, &reads.registrations))
        .collect();
    Ok(NexusReport { date, states })
}

fn money(d: Decimal) -> String {
    format!("{:.2}", d)
}

fn percent(p: Decimal) -> String {
    format!("{:.2}", shown(p))
}

/// A threshold row in the interface's shape.
pub fn render_threshold(row: &Threshold) -> Value {
    json!({
        "from": day(row.from),
        "to": row.to.map(day),
        "amount": row.amount.map(|t| t.figure.to_string()),
        "amount_rule": row.amount.map(|t| t.rule.as_str()),
        "transactions": row.transactions.map(|t| t.figure),
        "transactions_rule": row.transactions.map(|t| t.rule.as_str()),
        "combine": (row.amount.is_some() && row.transactions.is_some()).then(|| row.combine.as_str()),
        "counts": row.counts.as_str(),
        "exclude_marketplace": row.exclude_marketplace,
        "period": row.period.as_str(),
        "registration": row.registration,
        "source": row.source,
        "as_of": day(row.as_of),
    })
}

/// One state on `date` in the interface's shape. A period that holds `date` ends on it
/// (its month's sales count in full: the ledger keeps months).
pub fn render_state(s: &StateNexus, date: Date) -> Value {
    json!({
        "country": "US",
        "region": s.threshold.state,
        "status": s.status.as_str(),
        "exposed_since": s.exposed_since().map(day),
        "registration_id": match &s.status {
            NexusStatus::Registered { registration_id } => Some(registration_id.as_str()),
            _ => None,
        },
        "percent": s.evaluation.percent.map(percent),
        "periods": s.evaluation.measured.iter().map(|m| json!({
            "start": day(m.span.first.first_day()),
            "end": day(m.span.last.last_day().min(date)),
            "sales": money(m.sales),
            "count": m.count,
            "percent": percent(m.percent),
            "crossed_in": m.crossed.map(|c| c.key()),
        })).collect::<Vec<_>>(),
        "threshold": render_threshold(&s.threshold),
        "basis": s.basis,
        "unknown": s.threshold.unknown,
        "note": s.threshold.note,
    })
}

/// The report in the interface's shape (`tax.nexus`).
pub fn render(report: &NexusReport, testmode: bool) -> Value {
    json!({
        "object": "tax.nexus",
        "date": day(report.date),
        "testmode": testmode,
        "states": report.states.iter().map(|s| render_state(s, report.date)).collect::<Vec<_>>(),
    })
}

/// `GET /tax/nexus?date=YYYY-MM-DD&region=XX`: every state with a threshold in force on
/// `date` (default today, UTC), or the state `region` names (none listed when it has no
/// threshold on the day).
pub(crate) fn get(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let mut date = Date::from_unix_seconds(crate::clock::now());
    let mut region = None;
    for (k, v) in ctx.query_params(&["date", "region"])? {
        match k {
            "date" => date = parse_date("date", v)?,
            _ => region = Some(crate::resources::registrations::region("region", "US", v)?),
        }
    }
    let report = report(ctx.service, ctx.scope, date, region.as_deref())?;
    Ok(render(&report, ctx.testmode()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_strictly() {
        assert_eq!(
            parse_date("date", "2026-02-28").unwrap(),
            Date::from_ymd(2026, 2, 28).unwrap()
        );
        for bad in [
            "2026-02-30",
            "2026-2-28",
            "20260228",
            "1969-12-31",
            "2026-02-28T00",
            "+026-02-28",
            "２０２６-02-28",
        ] {
            let e = parse_date("date", bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidQueryParameter, "{bad}");
        }
    }
}
