//! An import from a file into a ledger file, checked against a keys file: what
//! `levy certificates import FILE --account NAME [--ledger FILE] [--keys FILE]` does.

use std::path::PathBuf;

use crate::error::{ApiError, ErrorKind};
use crate::import::{import_certificates, ImportReport};
use crate::keys::{KeySource, Keyring};
use crate::store::SqliteStore;

/// Where [`import_file`] reads the import from and stores it.
#[derive(Clone, Debug)]
pub struct ImportFile {
    /// The import file (JSON; see [`crate::import`]).
    pub file: PathBuf,
    /// The account the certificates belong to.
    pub account: String,
    /// The ledger file (SQLite), created when absent.
    pub ledger: PathBuf,
    /// The keys file of the service: the account must have a key in it (which catches
    /// typos), and its internal id there is the one the import is stored under.
    pub keys: PathBuf,
}

/// Runs the import and returns the report. Document paths in the file are relative to
/// the file's folder.
pub fn import_file(args: &ImportFile) -> Result<ImportReport, ApiError> {
    let ring = Keyring::load(&KeySource::File(args.keys.clone()))?;
    if !ring.has_account(&args.account) {
        return Err(ApiError::of(
            ErrorKind::InvalidAccount,
            format!(
                "account {:?} has no key in {}",
                args.account,
                args.keys.display()
            ),
        ));
    }
    let account = ring.account_id(&args.account);
    let json = std::fs::read(&args.file).map_err(|e| {
        ApiError::of(
            ErrorKind::InvalidImport,
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
