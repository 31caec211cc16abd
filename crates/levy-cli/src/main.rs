//! The `levy` command.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod build_cmd;
mod calc;
mod certificates;
mod echo;
mod nexus;
mod registrations;
mod report;
mod serve;
mod sync;
mod taxability;
mod update;

/// The allocator of the `levy` command.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// levy: an offline sales-tax engine.
#[derive(Debug, Parser)]
#[command(
    name = "levy",
    version,
    about = "levy: an offline, embeddable sales-tax engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Calculate the tax of a sale.
    Calc(Box<calc::CalcArgs>),
    /// Compile published rate and boundary files and the curated rules into a table.
    Build(build_cmd::BuildArgs),
    /// Print a table's header, manifest and counts; or, with --ledger, a ledger's size,
    /// counts and integrity.
    Info(InfoArgs),
    /// Measure levy's lookups on a table beside SQLite (and maxminddb) in the same run.
    Bench(bench::BenchArgs),
    /// Compare two tables: rates and boundaries added, removed and changed.
    Diff(build_cmd::DiffArgs),
    /// Take a new table safely: fetch it and its signature from a folder or an http:// URL,
    /// check the signature against the publisher's public key, open and verify the table,
    /// print what it changes, then rename it over the old one (on any failure the old
    /// table stays as it was).
    Update(update::UpdateArgs),
    /// Make a new Ed25519 key for signing tables (`levy build --sign`): writes the secret
    /// key, prints the public key for `levy update --public-key`.
    SigningKey(update::SigningKeyArgs),
    /// Print a table's taxability matrix: how each place treats each product, with the
    /// source of every cell.
    Taxability(taxability::TaxabilityArgs),
    /// Serve the tax service interface over HTTP, and manage its API keys.
    #[command(flatten)]
    Server(serve::Command),
    /// Send a till's offline transactions, refunds, reversals and deletions to a central
    /// levy (exactly once; safe to re-run or interrupt). Exits 0 when nothing is left in
    /// conflict, 1 when something is or the sync failed, 75 when another sync of the same
    /// till is running (this one sent nothing).
    Sync(sync::SyncArgs),
    /// Ledgers: copy an SQLite ledger into PostgreSQL.
    Ledger {
        /// What to do.
        #[command(subcommand)]
        command: LedgerCommand,
    },
    /// Exemption certificates and certificate requests in the ledger.
    Certificates {
        /// What to do.
        #[command(subcommand)]
        command: CertificatesCommand,
    },
    /// Where an account is registered to collect (a levy extension): once it has a
    /// sales_tax registration, `automatic_tax: auto` collects only where one is active on
    /// the sale's date; with none, everywhere.
    Registrations {
        /// What to do.
        #[command(subcommand)]
        command: registrations::Command,
    },
    /// What a period owes per jurisdiction (a levy extension): the sales made and the
    /// refunds and reversals booked from --from to --to, as JSON or CSV (Texas, California
    /// and Streamlined states in their return's layout with --state).
    Report(report::ReportArgs),
    /// Economic nexus per US state (a levy extension): for each state's threshold in force
    /// on the day, the period it measures, the account's sales and transactions in it (net
    /// of refunds), the percentage reached, and below, approaching (75% or more), exposed
    /// since a month, or registered.
    Nexus(nexus::NexusArgs),
}

/// `levy info [FILE]` or `levy info --ledger FILE [--json]`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").args(["file", "ledger"])))]
struct InfoArgs {
    /// The table file; the embedded default when absent.
    file: Option<std::path::PathBuf>,
    /// A ledger (SQLite) to report on instead: size, row counts, expired calculations,
    /// `quick_check`, and every stored record checked against its seal. Read-only; exits
    /// with failure when the ledger is damaged.
    #[arg(long, value_name = "FILE")]
    ledger: Option<std::path::PathBuf>,
    /// With --ledger: print the report as JSON.
    #[arg(long, requires = "ledger")]
    json: bool,
}

/// `levy update`: what changed, on stdout; the old table stays on any failure.
fn run_update(args: &update::UpdateArgs) -> Result<(), String> {
    let u = update::update(args).map_err(|e| e.to_string())?;
    println!(
        "updated {}: {} -> {}",
        args.table.display(),
        u.old_hash.as_deref().unwrap_or("(none)"),
        u.new_hash
    );
    const SHOWN: usize = 40;
    let lines: Vec<&str> = u.diff.lines().collect();
    for l in lines.iter().take(SHOWN) {
        println!("  {l}");
    }
    if lines.len() > SHOWN {
        println!("  ... {} more lines of `levy diff`", lines.len() - SHOWN);
    }
    Ok(())
}

fn run_info(args: &InfoArgs) -> Result<(), String> {
    if let Some(ledger) = &args.ledger {
        // Said as the interface says a ledger error (`LEDGER_ERROR (500): …`), as before.
        let report = levy_api::store::inspect(&ledger.to_string_lossy())
            .map_err(|e| levy_api::ApiError::from(e).to_string())?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
            );
        } else {
            print!("{}", report.to_text());
        }
        return if report.is_sound() {
            Ok(())
        } else {
            Err(format!("{} is damaged (see above)", ledger.display()))
        };
    }
    match &args.file {
        Some(file) => build_cmd::run_info(&build_cmd::InfoArgs { file: file.clone() })
            .map(|out| print!("{out}"))
            .map_err(|e| e.to_string()),
        None => {
            print!("{}", levy_build::info(levy_data::default_table()));
            Ok(())
        }
    }
}

#[derive(Debug, Subcommand)]
enum CertificatesCommand {
    /// Import certificates, certificate requests and their documents from a JSON file
    /// (format: crates/levy-api/README.md).
    Import(certificates::CertificatesImportArgs),
}

#[derive(Debug, Subcommand)]
enum LedgerCommand {
    /// Copy an SQLite ledger into an empty PostgreSQL ledger, in one transaction (all or
    /// nothing). Every stored record is checked against its seal first; expired
    /// calculations are left behind. Stop the servers that write to the SQLite ledger
    /// first.
    Copy(LedgerCopyArgs),
}

/// `levy ledger copy --from FILE --to URL`.
#[derive(Debug, clap::Args)]
struct LedgerCopyArgs {
    /// The SQLite ledger file.
    #[arg(long, value_name = "FILE")]
    from: std::path::PathBuf,
    /// The PostgreSQL database (`postgres://user:password@host:port/database`): a new
    /// database, or a levy ledger with no records.
    #[arg(long, value_name = "URL")]
    to: String,
}

fn run_ledger_copy(args: &LedgerCopyArgs) -> Result<(), String> {
    let report = levy_api::store::copy_ledger(&args.from.to_string_lossy(), &args.to)
        .map_err(|e| e.to_string())?;
    print!("{}", report.to_text());
    Ok(())
}

/// The default table embedded in this program (levy-data's), as a service's table.
pub(crate) fn default_table() -> levy_api::TableSource {
    levy_api::TableSource::Table(std::sync::Arc::new(levy_data::open_default()))
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // Help and the version go to stdout as clap writes them.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprint!("{}", echo::bound(&e.render().to_string(), &args));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let result = match cli.command {
        Command::Calc(args) => calc::run(&args),
        Command::Taxability(args) => taxability::run(&args).map(|out| print!("{out}")),
        Command::Bench(args) => bench::run(&args).map(|out| print!("{out}")),
        Command::Build(args) => build_cmd::run_build(&args)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Command::Info(args) => run_info(&args),
        Command::Diff(args) => build_cmd::run_diff(&args)
            .map(|out| print!("{out}"))
            .map_err(|e| e.to_string()),
        Command::Update(args) => run_update(&args),
        Command::SigningKey(args) => update::new_signing_key(&args)
            .map(|public| {
                println!("{public}");
                eprintln!(
                    "wrote the secret key to {}; give the public key above to `levy update --public-key`",
                    args.out.display()
                );
            })
            .map_err(|e| e.to_string()),
        Command::Server(command) => serve::run(command).map_err(|e| e.to_string()),
        Command::Sync(args) => return sync::main(&args),
        Command::Ledger {
            command: LedgerCommand::Copy(args),
        } => run_ledger_copy(&args),
        Command::Certificates {
            command: CertificatesCommand::Import(args),
        } => certificates::run(&args)
            .map(|report| {
                certificates::report_lines(&report)
                    .iter()
                    .for_each(|l| println!("{l}"))
            })
            .map_err(|e| e.to_string()),
        Command::Registrations { command } => registrations::run(&command),
        Command::Report(args) => report::run(&args),
        Command::Nexus(args) => nexus::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("levy: {}", echo::bound(&message, &args));
            ExitCode::FAILURE
        }
    }
}
