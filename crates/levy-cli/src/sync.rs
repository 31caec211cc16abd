//! `levy sync --ledger TILL --to URL --key KEY` (`levy_api::sync_client`).

use std::path::PathBuf;

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
    /// Records per request.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub batch: usize,
}

/// Runs the sync.
pub fn run(args: &SyncArgs) -> Result<SyncReport, SyncError> {
    levy_api::sync_client::sync(&SyncOptions {
        ledger: args.ledger.to_string_lossy().into_owned(),
        to: args.to.clone(),
        key: args.key.clone(),
        account: args.account.clone(),
        batch: args.batch,
    })
}
