//! `levy certificates import FILE --account NAME [--ledger FILE] [--keys FILE]`.

use std::path::PathBuf;

use levy_api::{ApiError, ImportFile, ImportReport, ImportedItem};

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
    levy_api::import_file(&ImportFile {
        file: args.file.clone(),
        account: args.account.clone(),
        ledger: args.ledger.clone(),
        keys: args.keys.clone(),
    })
}

/// The report as lines for the terminal: `certificate cert_… (reference)`.
pub fn report_lines(report: &ImportReport) -> Vec<String> {
    let line = |what: &str, i: &ImportedItem| match &i.reference {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lines_name_each_item_and_its_reference() {
        let item = |id: &str, reference: Option<&str>| ImportedItem {
            reference: reference.map(str::to_string),
            id: id.into(),
        };
        let report = ImportReport {
            certificates: vec![item("cert_1", Some("ok")), item("cert_2", None)],
            requests: vec![item("certreq_1", Some("crm-9"))],
        };
        assert_eq!(
            report_lines(&report),
            vec![
                "certificate cert_1 (ok)".to_string(),
                "certificate cert_2".to_string(),
                "certificate request certreq_1 (crm-9)".to_string(),
            ]
        );
    }
}
