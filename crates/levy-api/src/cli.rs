//! Command-line pieces for the `levy` binary: `levy certificates import FILE --account NAME
//! [--ledger FILE] [--keys FILE]`.

use std::path::PathBuf;

use crate::error::ApiError;
use crate::import::{import_certificates, ImportReport};
use crate::keys::{KeySource, Keyring};
use crate::store::SqliteStore;

/// Arguments of `levy certificates import`.
#[derive(clap::Args, Clone, Debug)]
pub struct CertificatesImportArgs {
    /// The import file (JSON; see `levy_api::import`).
    pub file: PathBuf,
    /// The account the certificates belong to.
    #[arg(long)]
    pub account: String,
    /// The ledger file (SQLite), created when absent.
    #[arg(long, default_value = "./levy-ledger.sqlite")]
    pub ledger: PathBuf,
    /// The keys file of the service: the account must have a key in it (which catches
    /// typos), and its internal id there is the one the import is stored under.
    #[arg(long, value_name = "FILE", default_value = "./levy-keys.toml")]
    pub keys: PathBuf,
}

/// Runs the import and returns the report. Document paths in the file are relative to
/// the file's folder.
pub fn run(args: &CertificatesImportArgs) -> Result<ImportReport, ApiError> {
    let ring = Keyring::load(&KeySource::File(args.keys.clone()))?;
    if !ring.has_account(&args.account) {
        return Err(ApiError::new(
            400,
            "INVALID_ACCOUNT",
            format!(
                "account {:?} has no key in {}",
                args.account,
                args.keys.display()
            ),
        ));
    }
    let account = ring.account_id(&args.account);
    let json = std::fs::read(&args.file).map_err(|e| {
        ApiError::new(
            400,
            "INVALID_IMPORT",
            format!("cannot read {}: {e}", args.file.display()),
        )
    })?;
    let base = args
        .file
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let store = SqliteStore::open(&args.ledger.to_string_lossy())?;
    import_certificates(&store, &account, &json, &base)
}

/// The report as lines for the terminal: `certificate cert_… (reference)`.
pub fn report_lines(report: &ImportReport) -> Vec<String> {
    let line = |what: &str, i: &crate::import::ImportedItem| match &i.reference {
        Some(r) => format!("{what} {} ({r})", i.id),
        None => format!("{what} {}", i.id),
    };
    let mut out: Vec<String> = report
        .certificates
        .iter()
        .map(|i| line("certificate", i))
        .collect();
    out.extend(
        report
            .requests
            .iter()
            .map(|i| line("certificate request", i)),
    );
    out
}
