//! `levy report --from D --to D [--state XX] [--format csv|json]`: the liability report of
//! a period of the ledger the service uses, per jurisdiction (as
//! `GET /tax/reports/liability` answers it).

use levy_api::store::liability::Liability;
use levy_api::{ApiError, KeySource, Layout, Service, ServiceConfig};

/// What `levy report` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The interface's `tax.liability_report`.
    Json,
    /// CSV: for --state TX, CA or a Streamlined member state, in the layout of the state's
    /// return worksheet; else every row.
    Csv,
}

/// `levy report`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReportArgs {
    /// First day, YYYY-MM-DD (UTC).
    #[arg(long, value_name = "DATE")]
    pub from: String,
    /// Last day, YYYY-MM-DD (UTC), included.
    #[arg(long, value_name = "DATE")]
    pub to: String,
    /// Only this US state's sales (TX, CA, OH, …).
    #[arg(long, value_name = "XX")]
    pub state: Option<String>,
    /// What to print.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// The account (a name in the keys file).
    #[arg(long)]
    pub account: String,
    /// The account's test-mode sales instead of its live ones.
    #[arg(long)]
    pub test: bool,
    /// Also recount the period from every record of the ledger, and fail, naming the
    /// rows that differ, unless the daily totals give the same report.
    #[arg(long)]
    pub recount: bool,
    /// The ledger: an SQLite file or a PostgreSQL database.
    #[arg(
        long,
        value_name = "FILE|CONNECTION",
        default_value = "./levy-ledger.sqlite"
    )]
    pub ledger: String,
    /// The keys file of the service: the account must have a key in it.
    #[arg(long, value_name = "FILE", default_value = "./levy-keys.toml")]
    pub keys: std::path::PathBuf,
}

/// Where the report of the daily totals and the recount of the records differ: the keys of
/// the rows and states that are not the same in both (empty when they agree).
pub fn differences(totals: &Liability, recount: &Liability) -> Vec<String> {
    let mut out = Vec::new();
    let rows = totals.rows.keys().chain(recount.rows.keys());
    for key in rows.collect::<std::collections::BTreeSet<_>>() {
        if totals.rows.get(key) != recount.rows.get(key) {
            out.push(format!(
                "row {} {} {} {} {}",
                key.region,
                key.jurisdiction_code,
                key.jurisdiction_name,
                key.authority_type,
                key.outlet
            ));
        }
    }
    let states = totals.states.keys().chain(recount.states.keys());
    for key in states.collect::<std::collections::BTreeSet<_>>() {
        if totals.states.get(key) != recount.states.get(key) {
            out.push(format!("state {} {}", key.0, key.1));
        }
    }
    if totals.table_hashes != recount.table_hashes {
        out.push("table_hashes".into());
    }
    if totals.currencies != recount.currencies {
        out.push("currencies".into());
    }
    out
}

/// The report `args` ask for, as it is printed; with `--recount`, checked against the
/// records.
pub fn render(args: &ReportArgs) -> Result<String, String> {
    let period = levy_api::liability_period(&args.from, &args.to, args.state.as_deref())
        .map_err(|e| e.to_string())?;
    let service = Service::open(ServiceConfig {
        table: crate::default_table(),
        ledger: args.ledger.clone(),
        keys: KeySource::File(args.keys.clone()),
    })
    .map_err(|e| e.to_string())?;
    let live = !args.test;
    let report = service
        .liability(&args.account, live, &period)
        .map_err(|e: ApiError| e.to_string())?;
    if args.recount {
        let recount = service
            .liability_recount(&args.account, live, &period)
            .map_err(|e| e.to_string())?;
        let differ = differences(&report, &recount);
        if !differ.is_empty() {
            return Err(format!(
                "the ledger's daily totals differ from its records in {} place(s): {}",
                differ.len(),
                differ.join("; ")
            ));
        }
    }
    Ok(match args.format {
        Format::Json => format!("{:#}\n", levy_api::liability_json(&report, &period)),
        Format::Csv => levy_api::liability_csv(&report, Layout::of(period.region.as_deref())),
    })
}

/// Runs `levy report` and prints the report.
pub fn run(args: &ReportArgs) -> Result<(), String> {
    let text = render(args)?;
    print!("{text}");
    Ok(())
}
