//! `levy_sync`: a till's offline records to a central levy (`levy_api::sync_client`).

use std::ffi::c_char;

use crate::{ffi_guard, non_null, opt_str_arg, str_arg, Error, LevyStatus};

/// Where a till's records go, for `levy_sync`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LevySyncConfig {
    /// Path of the till's ledger file (SQLite), as given to `levy_service_open`. Required.
    pub ledger_path: *const c_char,
    /// The central levy's base URL (`"http://10.0.0.5:8787"`). Required.
    pub base_url: *const c_char,
    /// A key of the central levy. Its mode decides what is sent: a live key sends the
    /// till's live records, a test key its test records. Required.
    pub key: *const c_char,
    /// The till's account whose records to send, or NULL when its outbox holds one.
    pub account: *const c_char,
    /// Records per request, 1 to 1000; 0 means 100.
    pub batch: usize,
}

/// What a sync did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LevySyncReport {
    /// Records the central ledger recorded in this call.
    pub recorded: u64,
    /// Records it already held (sent by an earlier call that stopped before marking them).
    pub already_recorded: u64,
    /// Transactions calculated with a rate table the central server does not hold.
    pub unknown_table: u64,
    /// Records in the outbox that conflict with the central ledger (this call's and
    /// earlier ones): kept, not sent again; `levy sync` lists them.
    pub conflicts: u64,
}

/// Sends the till's unsent transactions, refunds, reversals and deletions to the central
/// levy (`POST /tax/sync`), batch after batch, until none remains, and writes what
/// happened to `*out_report`. Exactly once: a record is marked sent only after the central
/// ledger committed it, and the central side recognises what it already holds, so the call
/// may be repeated, or interrupted (even by killing the process) and called again.
/// Conflicts are not an error: they are counted in the report (after the central side
/// checked the earlier ones again: those it holds are cleared). One sync of a ledger runs
/// at a time, in this process or another. Blocks while it works; call it from a thread
/// that may wait on the network.
///
/// Errors: `LEVY_NULL_ARGUMENT` (config, its ledger_path, base_url or key, out_report),
/// `LEVY_INVALID_UTF8`, `LEVY_INVALID_ARGUMENT` (batch over 1000), `LEVY_SYNC_ERROR` (the
/// ledger, the network or the central server, and what was marked before stays marked; or
/// another sync of the same ledger is running, which sends every record, and this call
/// sent nothing: the message says so).
/// `*out_report` is written only on `LEVY_OK`.
///
/// # Safety
///
/// `config` must be NULL or a valid `LevySyncConfig` whose strings are NULL or
/// NUL-terminated; `out_report` must be NULL or valid for writing one `LevySyncReport`.
#[no_mangle]
pub unsafe extern "C" fn levy_sync(
    config: *const LevySyncConfig,
    out_report: *mut LevySyncReport,
) -> LevyStatus {
    ffi_guard!({
        non_null!(config, "config");
        non_null!(out_report, "out_report");
        // SAFETY: non-null and valid per the contract.
        let config = unsafe { &*config };
        // SAFETY: each string is NULL or NUL-terminated per the contract.
        let ledger = unsafe { str_arg(config.ledger_path, "config.ledger_path") }?;
        // SAFETY: as above.
        let base_url = unsafe { str_arg(config.base_url, "config.base_url") }?;
        // SAFETY: as above.
        let key = unsafe { str_arg(config.key, "config.key") }?;
        // SAFETY: as above.
        let account = unsafe { opt_str_arg(config.account, "config.account") }?;
        let batch = match config.batch {
            0 => 100,
            n @ 1..=1000 => n,
            n => {
                return Err(Error::new(
                    LevyStatus::LEVY_INVALID_ARGUMENT,
                    format!("config.batch must be 1 to 1000 (or 0 for 100), not {n}"),
                ))
            }
        };
        let report = levy_api::sync_client::sync(&levy_api::sync_client::SyncOptions {
            ledger: ledger.to_string(),
            to: base_url.to_string(),
            key: key.to_string(),
            account: account.map(str::to_string),
            batch,
        })
        .map_err(|e| Error::new(LevyStatus::LEVY_SYNC_ERROR, e.to_string()))?;
        let out = LevySyncReport {
            recorded: report.recorded,
            already_recorded: report.already,
            unknown_table: report.unknown_table,
            conflicts: report.conflicts.len() as u64,
        };
        // SAFETY: out_report is non-null and valid for writing, per the contract.
        unsafe { out_report.write(out) };
        Ok(())
    })
}
