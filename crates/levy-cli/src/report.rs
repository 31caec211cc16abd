//! `levy report --from D --to D [--state XX] [--format csv|json]`: the liability report of
//! a period of the ledger the service uses, per jurisdiction (as
//! `GET /tax/reports/liability` answers it).

use levy_api::{ApiError, KeySource, Layout, Service, ServiceConfig, TableSource};

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

/// The report `args` ask for, as it is printed.
pub fn render(args: &ReportArgs) -> Result<String, ApiError> {
    let period = levy_api::liability_period(&args.from, &args.to, args.state.as_deref())?;
    let service = Service::open(ServiceConfig {
        table: TableSource::Default,
        ledger: args.ledger.clone(),
        keys: KeySource::File(args.keys.clone()),
    })?;
    let report = service.liability(&args.account, !args.test, &period)?;
    Ok(match args.format {
        Format::Json => format!("{:#}\n", levy_api::liability_json(&report, &period)),
        Format::Csv => levy_api::liability_csv(&report, Layout::of(period.region.as_deref())),
    })
}

/// Runs `levy report` and prints the report.
pub fn run(args: &ReportArgs) -> Result<(), String> {
    let text = render(args).map_err(|e| e.to_string())?;
    print!("{text}");
    Ok(())
}
