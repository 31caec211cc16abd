//! `levy nexus`: economic nexus per US state, from the sales in the ledger the service uses
//! and the thresholds levy ships (`data/us-nexus.toml`), as `GET /tax/nexus` answers it.

use levy_api::{NexusReport, NexusStatus, StateNexus};

use crate::registrations::{open, Target};

/// `levy nexus`.
#[derive(clap::Args, Clone, Debug)]
pub struct NexusArgs {
    /// The day asked (YYYY-MM-DD, UTC); default today.
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// Only this state (USPS code).
    #[arg(long, value_name = "XX")]
    pub state: Option<String>,
    /// Whose sales, and where they are kept.
    #[command(flatten)]
    pub target: Target,
}

/// Dollars or a count in a test: `more than 500000 USD`, `at least 200 transactions`.
fn test(figure: &str, rule: levy_api::nexus::TestRule, unit: &str) -> String {
    let rule = match rule {
        levy_api::nexus::TestRule::MoreThan => "more than",
        levy_api::nexus::TestRule::AtLeast => "at least",
    };
    format!("{rule} {figure} {unit}")
}

/// One state as a line of text: place, status, percentage, periods and threshold.
pub fn line(s: &StateNexus, date: levy_core::Date) -> String {
    let status = match &s.status {
        NexusStatus::Exposed { since } => format!("exposed since {since}"),
        NexusStatus::Registered { registration_id } => format!("registered ({registration_id})"),
        other => other.as_str().to_string(),
    };
    let percent = s.evaluation.percent.map_or("-".to_string(), |p| {
        format!("{:.2}%", levy_api::nexus::measure::shown(p))
    });
    let periods: Vec<String> = s
        .evaluation
        .measured
        .iter()
        .map(|m| {
            let end = m.span.last.last_day().min(date);
            let noun = if m.count == 1 {
                "transaction"
            } else {
                "transactions"
            };
            format!(
                "{}..{end} {:.2} USD in {} {noun}",
                m.span.first.first_day(),
                m.sales,
                m.count
            )
        })
        .collect();
    let t = &s.threshold;
    let amount = t.amount.map(|a| test(&a.figure.to_string(), a.rule, "USD"));
    let count = t
        .transactions
        .map(|x| test(&x.figure.to_string(), x.rule, "transactions"));
    let tests = match (amount, count) {
        (Some(a), Some(c)) => format!("{a} {} {c}", t.combine.as_str()),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => String::new(),
    };
    let mut out = format!(
        "US-{} {status} {percent} | {} | {tests} ({} sales, {})",
        t.state,
        if periods.is_empty() {
            "not measured".to_string()
        } else {
            periods.join("; ")
        },
        t.counts.as_str(),
        t.period.as_str()
    );
    if t.unknown {
        out.push_str(" | unknown: some facts are not established (--json: note)");
    }
    out
}

fn print(report: &NexusReport, target: &Target) {
    if target.json {
        println!("{:#}", levy_api::nexus_json(report, target.test));
    } else {
        for s in &report.states {
            println!("{}", line(s, report.date));
        }
    }
}

/// Runs `levy nexus` and prints what it answers.
pub fn run(args: &NexusArgs) -> Result<(), String> {
    let fail = |e: levy_api::ApiError| e.to_string();
    let date = args
        .date
        .as_deref()
        .map(|d| levy_api::parse_nexus_date("--date", d))
        .transpose()
        .map_err(fail)?;
    let service = open(&args.target).map_err(fail)?;
    let report = service
        .nexus(
            &args.target.account,
            !args.target.test,
            date,
            args.state.as_deref(),
        )
        .map_err(fail)?;
    print(&report, &args.target);
    Ok(())
}
