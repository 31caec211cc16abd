//! `levy sync --ledger TILL --to URL --key KEY` (`levy_api::sync_client`).

use std::path::PathBuf;
use std::process::ExitCode;

use levy_api::sync_client::{SyncError, SyncOptions, SyncReport};

/// Arguments of `levy sync`.
#[derive(clap::Args, Clone, Debug)]
pub struct SyncArgs {
    /// The till's ledger (SQLite).
    #[arg(long, value_name = "FILE", default_value = "./levy-ledger.sqlite")]
    pub ledger: PathBuf,
    /// The central levy's base URL (`http://10.0.0.5:8787`).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// A key of the central levy. Its mode decides what is sent: a live key sends the
    /// till's live records, a test key its test records.
    #[arg(long, value_name = "KEY")]
    pub key: String,
    /// The till's account (its internal id, `acct_…`, or the name of an inline key's
    /// account) whose records to send; needed only when the outbox holds several.
    #[arg(long, value_name = "ID")]
    pub account: Option<String>,
    /// Records per request, 1 to 1,000; a request also stays within 1 MiB (the central
    /// server's default body limit), so large records go in smaller requests.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub batch: usize,
    /// Send again the records the central server refused as conflicts before, once their
    /// cause is settled (the central order id freed, its --body-limit raised).
    #[arg(long)]
    pub retry_conflicts: bool,
}

/// The exit status of a sync that found another sync of the same till sending its outbox
/// (sysexits' `EX_TEMPFAIL`: nothing was done, try again later).
pub const BUSY: u8 = 75;

/// `levy sync`: runs it, prints its report, and exits 0 when nothing is left in conflict,
/// 1 when something is (or the sync failed), and [`BUSY`] when another sync of the till
/// is running.
pub fn main(args: &SyncArgs) -> ExitCode {
    match run(args) {
        Ok(report) => {
            print!("{}", report.to_text());
            if report.conflicts.is_empty() {
                return ExitCode::SUCCESS;
            }
            eprintln!(
                "levy: {} records conflict with the central ledger (see above); they are kept in the outbox and not sent again",
                report.conflicts.len()
            );
            ExitCode::FAILURE
        }
        Err(e @ SyncError::Busy { .. }) => {
            eprintln!("levy: {e}");
            ExitCode::from(BUSY)
        }
        Err(e) => {
            let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
            eprintln!("levy: {}", crate::echo::bound(&e.to_string(), &args));
            ExitCode::FAILURE
        }
    }
}

/// Runs the sync (after putting the conflicts back in the outbox, with
/// `--retry-conflicts`).
pub fn run(args: &SyncArgs) -> Result<SyncReport, SyncError> {
    let ledger = args.ledger.to_string_lossy().into_owned();
    if args.retry_conflicts {
        levy_api::sync_client::retry_conflicts(&ledger, &args.key)?;
    }
    levy_api::sync_client::sync(&SyncOptions {
        ledger,
        to: args.to.clone(),
        key: args.key.clone(),
        account: args.account.clone(),
        batch: args.batch,
    })
}
