//! The till's side of sync (feature `sync`): sends a till's unsent transactions, refunds,
//! reversals and deletions (the outbox of its SQLite ledger) to a central levy
//! (`POST /tax/sync`), in batches, and marks each event as the central side answered.
//! Safe to re-run and to kill at any moment: an event is marked only after the central
//! ledger has committed it, and the central side recognises what it already holds, even
//! when a request it is still committing (of a run killed, or held back by the network)
//! repeats it. One sync of a ledger runs at a time ([`OutboxLock`]): another started
//! meanwhile stops with [`SyncError::Busy`] (within a quarter of a second). After the
//! unsent events, the central side checks the events held as conflicts again, storing
//! nothing, and those it already holds are marked sent (so conflicts an older release
//! reported wrongly clear). Used by `levy sync` and liblevy's `levy_sync`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::store::{OutboxEvent, OutboxMark, SqliteStore, Store};

mod lock;

pub use lock::OutboxLock;

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
    /// Records per request, 1 to 1,000. A request also stays within [`BODY_BUDGET`] bytes
    /// (the central server's default body limit), so a batch of large records is sent in
    /// several requests.
    pub batch: usize,
}

/// The most bytes of one request's body: the central server's default body limit (1 MiB,
/// `levy serve --body-limit`) less room for the headers' and the envelope's variations.
/// A server that answers 413 all the same makes the budget halve for the rest of the run.
pub const BODY_BUDGET: usize = (1 << 20) - 4096;

/// How often a request answered 429 (the account's rate or requests at once) is tried
/// again, after the `Retry-After` it names, before the sync stops.
const RATE_RETRIES: u32 = 60;

/// Why a sync stopped; what was marked before it stopped stays marked, and a new sync goes
/// on from there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// Another sync of the same ledger is sending its outbox (it holds `lock`, the
    /// ledger's [`OutboxLock`]): this one sent nothing, and that one sends every record.
    /// Run it again once that one has ended (`levy sync` exits 75 for this).
    #[error("another levy sync is sending the outbox of {ledger} (it holds {lock}); this one sent nothing. That one sends every record; run levy sync again once it has ended")]
    Busy {
        /// The till's ledger.
        ledger: String,
        /// The lock file the other sync holds.
        lock: String,
    },
    /// The ledger, the network or the central server.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for SyncError {
    fn from(s: String) -> SyncError {
        SyncError::Failed(s)
    }
}

impl From<&str> for SyncError {
    fn from(s: &str) -> SyncError {
        SyncError::Failed(s.to_string())
    }
}

/// What a sync did.
#[derive(Debug, Default)]
pub struct SyncReport {
    /// Recorded by the central ledger in this run.
    pub recorded: u64,
    /// Already there (sent before, by a run that stopped before marking them, or by
    /// another request at the same time).
    pub already: u64,
    /// Transactions calculated with a table the central server does not hold.
    pub unknown_table: u64,
    /// Events held as conflicts that the central ledger, checking them again, already
    /// holds as sent: marked sent in this run.
    pub cleared: u64,
    /// Why the events held as conflicts could not be checked again, if they could not
    /// (a central server of a release before `check_only`).
    pub unchecked: Option<String>,
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
        if self.cleared > 0 {
            out.push_str(&format!(
                "{} earlier conflicts are already recorded centrally: cleared\n",
                self.cleared
            ));
        }
        if let Some(why) = &self.unchecked {
            out.push_str(&format!(
                "the earlier conflicts were not checked again: {why}\n"
            ));
        }
        for (kind, id, why) in &self.conflicts {
            out.push_str(&format!("conflict: {kind} {id}: {why}\n"));
        }
        out
    }
}

/// The key's mode: live for `sk_live_…`, test for `sk_test_…`.
fn mode_of(key: &str) -> Result<bool, SyncError> {
    if key.starts_with("sk_live_") {
        Ok(true)
    } else if key.starts_with("sk_test_") {
        Ok(false)
    } else {
        Err("the key must be a levy key (sk_test_… or sk_live_…)".into())
    }
}

/// The till's ledger, opened under its [`OutboxLock`].
fn open_locked(ledger: &str) -> Result<(OutboxLock, SqliteStore), SyncError> {
    if !std::path::Path::new(ledger).is_file() {
        return Err(format!("{ledger}: no such ledger file").into());
    }
    let lock = OutboxLock::take(ledger)?;
    let store = SqliteStore::open(ledger).map_err(|e| e.to_string())?;
    Ok((lock, store))
}

/// Puts the events the central ledger refused as conflicts back in the till's outbox, of
/// the key's mode, so that the next [`sync`] sends them again (once their cause is
/// settled: the central order id freed, its body limit raised). How many. Under the
/// ledger's [`OutboxLock`], as [`sync`].
pub fn retry_conflicts(ledger: &str, key: &str) -> Result<usize, SyncError> {
    let live = mode_of(key)?;
    let (_lock, store) = open_locked(ledger)?;
    store
        .retry_conflicts(live)
        .map_err(|e| SyncError::Failed(e.to_string()))
}

/// The account whose records to send: the one asked for, or the outbox's only one.
fn account_of(
    store: &SqliteStore,
    asked: &Option<String>,
    live: bool,
) -> Result<Option<String>, SyncError> {
    if let Some(a) = asked {
        return Ok(Some(a.clone()));
    }
    let accounts = store.outbox_accounts(live).map_err(|e| e.to_string())?;
    if accounts.len() > 1 {
        return Err(format!(
            "the outbox holds records of {} accounts ({}); choose one (--account)",
            accounts.len(),
            accounts.join(", ")
        )
        .into());
    }
    Ok(accounts.into_iter().next())
}

/// Sends the outbox, batch after batch, until nothing unsent remains, then has the central
/// ledger check the events held as conflicts again. Holds the ledger's [`OutboxLock`]
/// throughout: [`SyncError::Busy`] when another sync holds it.
pub fn sync(args: &SyncOptions) -> Result<SyncReport, SyncError> {
    let live = mode_of(&args.key)?;
    if args.batch == 0 || args.batch > 1000 {
        return Err("the batch must be between 1 and 1000 records".into());
    }
    let (_lock, store) = open_locked(&args.ledger)?;
    let account = account_of(&store, &args.account, live)?;
    let central = Central {
        url: format!("{}/tax/sync", args.to.trim_end_matches('/')),
        key: args.key.clone(),
        live,
        agent: ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(60))
            .build(),
    };
    let mut report = SyncReport::default();
    let mut budget = BODY_BUDGET;
    if let Some(account) = &account {
        loop {
            let events = store
                .outbox(live, Some(account), args.batch)
                .map_err(|e| e.to_string())?;
            if events.is_empty() {
                break;
            }
            send(&store, &central, &events, (&mut budget, false), &mut report)?;
        }
    }
    // With no account chosen and nothing unsent, every conflict of the mode is checked.
    let account = account.as_deref();
    recheck(
        &store,
        &central,
        account,
        (args.batch, &mut budget),
        &mut report,
    )?;
    report.conflicts = store
        .outbox_conflicts(live)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(_, kind, id, why)| (kind, id, why))
        .collect();
    Ok(report)
}

/// Sends `events` in requests within `budget` bytes and marks each as answered; with
/// `check_only` (the events held as conflicts), marks sent those the central ledger
/// already holds and leaves the others as they are. Whether to go on: false when the
/// central server cannot check (said in the report).
fn send(
    store: &SqliteStore,
    central: &Central,
    events: &[OutboxEvent],
    (budget, check_only): (&mut usize, bool),
    report: &mut SyncReport,
) -> Result<bool, SyncError> {
    let encoded: Vec<String> = events.iter().map(encode).collect();
    let mut start = 0;
    while start < events.len() {
        let end = within(&encoded, start, *budget);
        let marks = match central.send(&encoded[start..end], check_only)? {
            Sent::Answered(text) => {
                central.read_answer(&text, &events[start..end], check_only, report)?
            }
            Sent::TooLarge if end - start > 1 => {
                // The server's limit is below the budget: halve it and try again.
                *budget = (encoded[start..end].iter().map(String::len).sum::<usize>() / 2).max(1);
                continue;
            }
            // Held as a conflict already, for this reason or another.
            Sent::TooLarge if check_only => Vec::new(),
            Sent::TooLarge => vec![OutboxMark {
                seq: events[start].seq,
                conflict: Some(format!(
                    "the record is {} bytes, more than the central server takes in one request (413 REQUEST_TOO_LARGE); raise its --body-limit, then run levy sync --retry-conflicts",
                    encoded[start].len()
                )),
            }],
            Sent::Refused(why) => {
                report.unchecked = Some(why);
                return Ok(false);
            }
        };
        store.mark_outbox(marks).map_err(|e| e.to_string())?;
        start = end;
    }
    Ok(true)
}

/// Has the central ledger check the events held as conflicts again (`check_only`: it
/// stores nothing), `batch` at a time after the unsent ones, and marks sent those it
/// already holds (conflicts an older release reported for records it had recorded); the
/// others keep their conflict and its reason, and are not sent to be recorded.
fn recheck(
    store: &SqliteStore,
    central: &Central,
    account: Option<&str>,
    (batch, budget): (usize, &mut usize),
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let mut after = 0;
    loop {
        let events = store
            .outbox_conflict_events(central.live, account, after, batch)
            .map_err(|e| e.to_string())?;
        let Some(last) = events.last() else {
            return Ok(());
        };
        after = last.seq;
        if !send(store, central, &events, (&mut *budget, true), report)? {
            return Ok(());
        }
    }
}

/// One event as it goes in a request's `events`.
fn encode(e: &OutboxEvent) -> String {
    json!({"seq": e.seq, "kind": e.kind, "record": e.record}).to_string()
}

/// The end of the events from `start` that fit in `budget` bytes together (at least one).
fn within(encoded: &[String], start: usize, budget: usize) -> usize {
    let mut bytes = 0;
    let mut end = start;
    while end < encoded.len() {
        bytes += encoded[end].len() + 1;
        if end > start && bytes > budget {
            break;
        }
        end += 1;
    }
    end
}

/// What a request to the central server came to.
enum Sent {
    /// 200, with the body.
    Answered(String),
    /// 413: the body is over the server's limit.
    TooLarge,
    /// 400 to a `check_only` request: the server cannot check (an older release); why.
    Refused(String),
}

/// The central server's sync endpoint.
struct Central {
    url: String,
    key: String,
    live: bool,
    agent: ureq::Agent,
}

impl Central {
    /// Sends events (encoded), only to be checked with `check_only`, waiting out 429s as
    /// `Retry-After` says.
    fn send(&self, events: &[String], check_only: bool) -> Result<Sent, SyncError> {
        let check = if check_only {
            "\"check_only\":true,"
        } else {
            ""
        };
        let body = format!(
            "{{\"livemode\":{},{check}\"events\":[{}]}}",
            self.live,
            events.join(",")
        );
        let url = &self.url;
        for _ in 0..RATE_RETRIES {
            let answer = self
                .agent
                .post(url)
                .set("Authorization", &format!("Bearer {}", self.key))
                .set("Content-Type", "application/json")
                .send_string(&body);
            match answer {
                Ok(r) => return Ok(Sent::Answered(r.into_string().map_err(|e| e.to_string())?)),
                Err(ureq::Error::Status(413, _)) => return Ok(Sent::TooLarge),
                Err(ureq::Error::Status(400, r)) if check_only => {
                    let text = r.into_string().unwrap_or_default();
                    return Ok(Sent::Refused(format!("{url} answered 400: {text}")));
                }
                Err(ureq::Error::Status(429, r)) => {
                    let wait = r
                        .header("Retry-After")
                        .and_then(|s| s.trim().parse::<u64>().ok())
                        .unwrap_or(1)
                        .clamp(1, 60);
                    std::thread::sleep(Duration::from_secs(wait));
                }
                Err(ureq::Error::Status(status, r)) => {
                    let text = r.into_string().unwrap_or_default();
                    return Err(format!("{url} answered {status}: {text}").into());
                }
                Err(e) => return Err(format!("{url}: {e}").into()),
            }
        }
        Err(format!(
            "{url} answered 429 (too many requests) {RATE_RETRIES} times in a row; try again later"
        )
        .into())
    }

    /// The marks of the events a 200 answered, counted in `report`; to a `check_only`
    /// request, only of those already recorded (the others stay as they are).
    fn read_answer(
        &self,
        text: &str,
        events: &[OutboxEvent],
        check_only: bool,
        report: &mut SyncReport,
    ) -> Result<Vec<OutboxMark>, SyncError> {
        let url = &self.url;
        let answer: Value = serde_json::from_str(text)
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
                Some("already_recorded") if check_only => {
                    report.cleared += 1;
                    None
                }
                Some("already_recorded") => {
                    report.already += 1;
                    None
                }
                Some("conflict") if check_only => continue,
                Some("conflict") => {
                    Some(result["message"].as_str().unwrap_or("conflict").to_string())
                }
                _ => return Err(format!("{url} answered an unknown outcome: {result}").into()),
            };
            if result["table_hash_known"] == json!(false) && !check_only {
                report.unknown_table += 1;
            }
            marks.push(OutboxMark {
                seq: event.seq,
                conflict,
            });
        }
        Ok(marks)
    }
}
