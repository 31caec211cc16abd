//! The till's side of sync (feature `sync`): sends a till's unsent transactions,
//! refunds, reversals and deletions (the outbox of its SQLite ledger) to a central levy
//! (`POST /tax/sync`), in batches, and marks each event as the central side answered.
//! Safe to re-run and to kill at any moment: an event is marked only after the central
//! ledger has committed it, and the central side recognises what it already holds. Used by
//! `levy sync` and liblevy's `levy_sync`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::store::{OutboxMark, SqliteStore};

/// What to sync, and where to.
#[derive(Clone, Debug)]
pub struct SyncOptions {
    /// The till's ledger (an SQLite file).
    pub ledger: String,
    /// The central levy's base URL (`http://10.0.0.5:8787`).
    pub to: String,
    /// A key of the central levy. Its mode decides what is sent: a live key sends the
    /// till's live records, a test key its test records.
    pub key: String,
    /// The till's account (its internal id, or the name of an inline key's account) whose
    /// records to send; needed only when the outbox holds several.
    pub account: Option<String>,
    /// Records per request, 1 to 1,000.
    pub batch: usize,
}

/// Why a sync stopped: the ledger, the network or the central server; what was marked
/// before it stopped stays marked, and a new sync goes on from there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyncError(pub String);

impl From<String> for SyncError {
    fn from(s: String) -> SyncError {
        SyncError(s)
    }
}

impl From<&str> for SyncError {
    fn from(s: &str) -> SyncError {
        SyncError(s.to_string())
    }
}

/// What a sync did.
#[derive(Debug, Default)]
pub struct SyncReport {
    /// Recorded by the central ledger in this run.
    pub recorded: u64,
    /// Already there (sent before, by a run that stopped before marking them).
    pub already: u64,
    /// Transactions calculated with a table the central server does not hold.
    pub unknown_table: u64,
    /// Conflicts in the outbox (this run's and earlier ones): `(kind, id, why)`.
    pub conflicts: Vec<(String, String, String)>,
}

impl SyncReport {
    /// The report as text.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "sent {} records: {} recorded, {} already recorded\n",
            self.recorded + self.already,
            self.recorded,
            self.already
        );
        if self.unknown_table > 0 {
            out.push_str(&format!(
                "{} transactions were calculated with a rate table the central server does not hold\n",
                self.unknown_table
            ));
        }
        for (kind, id, why) in &self.conflicts {
            out.push_str(&format!("conflict: {kind} {id}: {why}\n"));
        }
        out
    }
}

/// Sends the outbox, batch after batch, until nothing unsent remains.
pub fn sync(args: &SyncOptions) -> Result<SyncReport, SyncError> {
    let live = if args.key.starts_with("sk_live_") {
        true
    } else if args.key.starts_with("sk_test_") {
        false
    } else {
        return Err("the key must be a levy key (sk_test_… or sk_live_…)".into());
    };
    if args.batch == 0 || args.batch > 1000 {
        return Err("the batch must be between 1 and 1000 records".into());
    }
    let ledger = args.ledger.as_str();
    if !std::path::Path::new(ledger).is_file() {
        return Err(format!("{ledger}: no such ledger file").into());
    }
    let store = SqliteStore::open(ledger).map_err(|e| e.to_string())?;
    let account = match &args.account {
        Some(a) => Some(a.clone()),
        None => {
            let accounts = store.outbox_accounts(live).map_err(|e| e.to_string())?;
            if accounts.len() > 1 {
                return Err(format!(
                    "the outbox holds records of {} accounts ({}); choose one (--account)",
                    accounts.len(),
                    accounts.join(", ")
                )
                .into());
            }
            accounts.into_iter().next()
        }
    };
    let url = format!("{}/tax/sync", args.to.trim_end_matches('/'));
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let mut report = SyncReport::default();
    if let Some(account) = account {
        loop {
            let events = store
                .outbox(live, Some(&account), args.batch)
                .map_err(|e| e.to_string())?;
            if events.is_empty() {
                break;
            }
            let body = json!({
                "livemode": live,
                "events": events.iter().map(|e| json!({"seq": e.seq, "kind": e.kind, "record": e.record})).collect::<Vec<_>>(),
            });
            let answer = agent
                .post(&url)
                .set("Authorization", &format!("Bearer {}", args.key))
                .set("Content-Type", "application/json")
                .send_string(&body.to_string());
            let text = match answer {
                Ok(r) => r.into_string().map_err(|e| e.to_string())?,
                Err(ureq::Error::Status(status, r)) => {
                    let text = r.into_string().unwrap_or_default();
                    return Err(format!("{url} answered {status}: {text}").into());
                }
                Err(e) => return Err(format!("{url}: {e}").into()),
            };
            let answer: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{url} answered something that is not JSON ({e})"))?;
            let results = answer["results"]
                .as_array()
                .ok_or_else(|| format!("{url} answered without results: {text}"))?;
            if results.len() != events.len() {
                return Err(format!(
                    "{url} answered {} results for {} records",
                    results.len(),
                    events.len()
                )
                .into());
            }
            let mut marks = Vec::with_capacity(events.len());
            for (event, result) in events.iter().zip(results) {
                if result["seq"].as_i64() != Some(event.seq) {
                    return Err(format!("{url} answered out of order: {result}").into());
                }
                let conflict = match result["outcome"].as_str() {
                    Some("recorded") => {
                        report.recorded += 1;
                        None
                    }
                    Some("already_recorded") => {
                        report.already += 1;
                        None
                    }
                    Some("conflict") => {
                        Some(result["message"].as_str().unwrap_or("conflict").to_string())
                    }
                    _ => return Err(format!("{url} answered an unknown outcome: {result}").into()),
                };
                if result["table_hash_known"] == json!(false) {
                    report.unknown_table += 1;
                }
                marks.push(OutboxMark {
                    seq: event.seq,
                    conflict,
                });
            }
            store.mark_outbox(marks).map_err(|e| e.to_string())?;
        }
    }
    report.conflicts = store
        .outbox_conflicts(live)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(_, kind, id, why)| (kind, id, why))
        .collect();
    Ok(report)
}
