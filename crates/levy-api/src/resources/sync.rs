//! `POST /tax/sync` (a levy extension): a till hands the central ledger what it recorded
//! offline, from its outbox (`levy sync`). The till's receipt is the truth: records are
//! stored with the till's ids and amounts, not recalculated. But the central ledger keeps
//! its own rules: every record is checked as strictly as the interface checks a request
//! (`sync_check`), and a refund, reversal or deletion goes through the same ledger rules
//! as the interface's (a refund takes no more than remains, in the store's write).
//!
//! Every event is idempotent by its record's id, so a sync may be sent again, whole or in
//! part, in any order, at any time, and by several requests at once: a record the central
//! ledger holds with the same content (and for a deletion or reversal, applied) is
//! `already_recorded`, whatever became of it since. That is looked at before an event is
//! applied and again when the store refuses it (a refund that no longer fits, an id
//! taken, a sale deleted meanwhile), since a request at the same time (a resend racing
//! the request it repeats, two syncs of one till) may have recorded the same record in
//! between. The same id or order id with other content, a refund that does not fit, or a
//! record the central side cannot take is a `conflict`, reported and never merged, and
//! the events after it go on. With `"check_only": true` nothing is stored: each event is
//! `already_recorded` or a `conflict` saying why not (a till asks so of the events it
//! holds as conflicts, to clear those already recorded).
//!
//! What fails the whole request instead (nothing of it is applied): a body that is not a
//! batch of events, a record whose seal does not match or that is not a record of its
//! kind (an id that is not an id levy makes included: its prefix and 32 lower-case
//! hexadecimal digits), two events with one `seq`, and a record of the other mode than the
//! key's (each record says its mode, `livemode`, inside its seal).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::sync_check::{self, short};
use crate::error::{ApiError, ErrorKind};
use crate::handler::Ctx;
use crate::json::{Node, Obj};
use crate::store::{
    open_sealed, RecordKind, RefundAsk, RefundRecord, StoreError, TransactionRecord,
};

/// Events per request, at most.
pub(crate) const MAX_EVENTS: usize = 1000;

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Transaction,
    Refund,
    Reversal,
    Deletion,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Transaction => "transaction",
            Kind::Refund => "refund",
            Kind::Reversal => "reversal",
            Kind::Deletion => "deletion",
        }
    }
}

/// A record of an event, checked against its seal and read.
enum Record {
    Transaction(Box<TransactionRecord>),
    Refund(Box<RefundRecord>),
}

struct Event {
    seq: i64,
    kind: Kind,
    record: Record,
    /// Why the central ledger cannot take the record (`sync_check`), if it cannot.
    refused: Option<String>,
}

impl Event {
    fn id(&self) -> &str {
        match &self.record {
            Record::Transaction(t) => &t.id,
            Record::Refund(r) => &r.id,
        }
    }
}

/// What became of one event.
enum Outcome {
    Recorded,
    Already,
    Conflict(String),
}

fn invalid(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::field(
        ErrorKind::InvalidSyncRecord,
        field,
        format!("{field} is not a sealed record of its kind: {why}"),
        "a record from a levy outbox, sealed with its BLAKE3 digest",
        "a record that does not match",
    )
}

/// The record's mode, taken out of it: a till's outbox writes `livemode` into every record
/// it seals.
fn take_mode(field: &str, value: &mut Value) -> Result<bool, ApiError> {
    let Some(object) = value.as_object_mut() else {
        return Err(invalid(field, "not a JSON object"));
    };
    match object.remove("livemode") {
        Some(Value::Bool(live)) => Ok(live),
        Some(_) => Err(invalid(field, "livemode is not a boolean")),
        None => Err(invalid(
            field,
            "it does not say its mode (livemode); send it with levy sync of this release or later",
        )),
    }
}

/// A record whose id no levy made: the whole request is refused, naming the id.
fn bad_id(field: &str, bad: sync_check::BadId) -> ApiError {
    let field = format!("{field}.{}", bad.field);
    ApiError::field(
        ErrorKind::InvalidSyncRecord,
        &field,
        format!("{field}: {}; nothing of the batch was applied", bad.why),
        "an id as levy makes it: its prefix, then 32 lower-case hexadecimal digits",
        short(&bad.id),
    )
}

fn mode_mismatch(live_key: bool) -> ApiError {
    let (key, records) = if live_key {
        ("a live key", "test records")
    } else {
        ("a test key", "live records")
    };
    ApiError::of(
        ErrorKind::SyncModeMismatch,
        format!("{key} cannot sync {records}; send them with a key of their mode"),
    )
}

fn read_event(root: &Obj<'_>, i: usize, v: &Node<'_>, live: bool) -> Result<Event, ApiError> {
    let mut o = root.element("events", i, v)?;
    let seq = o
        .opt_int("seq")?
        .ok_or_else(|| ApiError::missing(&o.path("seq"), "integer"))?;
    if seq < 1 {
        return Err(crate::read::positive(
            &o.path("seq"),
            "a positive integer (its place in the outbox)",
            seq,
        ));
    }
    let kind = match o.req_str("kind", 16)? {
        "transaction" => Kind::Transaction,
        "refund" => Kind::Refund,
        "reversal" => Kind::Reversal,
        "deletion" => Kind::Deletion,
        other => {
            let field = o.path("kind");
            return Err(ApiError::field(
                ErrorKind::InvalidSyncRecord,
                &field,
                format!("{field} must be transaction, refund, reversal or deletion"),
                "transaction, refund, reversal or deletion",
                other,
            ));
        }
    };
    let field = o.path("record");
    let text = o.req_str("record", usize::MAX)?;
    let mut value: Value = open_sealed(text).map_err(|e| invalid(&field, e))?;
    if take_mode(&field, &mut value)? != live {
        return Err(mode_mismatch(live));
    }
    let record = match kind {
        Kind::Transaction | Kind::Deletion => {
            let t: TransactionRecord =
                serde_json::from_value(value).map_err(|e| invalid(&field, e))?;
            if (kind == Kind::Deletion) != t.deleted_at.is_some() {
                return Err(invalid(&field, "deleted_at does not fit the event"));
            }
            if t.replaced_by.is_some() && t.deleted_at.is_none() {
                return Err(invalid(&field, "replaced_by is set on a sale not deleted"));
            }
            Record::Transaction(Box::new(t))
        }
        Kind::Refund | Kind::Reversal => {
            let r: RefundRecord = serde_json::from_value(value).map_err(|e| invalid(&field, e))?;
            if (kind == Kind::Reversal) != r.reversed_at.is_some() {
                return Err(invalid(&field, "reversed_at does not fit the event"));
            }
            Record::Refund(Box::new(r))
        }
    };
    o.finish()?;
    let ids = match &record {
        Record::Transaction(t) => sync_check::transaction_ids(t),
        Record::Refund(r) => sync_check::refund_ids(r),
    };
    ids.map_err(|bad| bad_id(&field, bad))?;
    let refused = match &record {
        Record::Transaction(t) => sync_check::transaction(t).err(),
        Record::Refund(r) => sync_check::refund(r).err(),
    };
    Ok(Event {
        seq,
        kind,
        record,
        refused,
    })
}

/// Whether two records are the same receipt (the central side's copy may since have been
/// deleted or reversed by a later event).
fn same_transaction(a: &TransactionRecord, b: &TransactionRecord) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    (a.deleted_at, a.replaced_by) = (None, None);
    (b.deleted_at, b.replaced_by) = (None, None);
    a == b
}

fn same_refund(a: &RefundRecord, b: &RefundRecord) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    a.reversed_at = None;
    b.reversed_at = None;
    a == b
}

/// Where an event stands against the central ledger, read before it is applied and again
/// after the store refuses to apply it (another request may have applied it meanwhile).
enum Look {
    /// The same record is there, and for a deletion or reversal, applied: the event is
    /// already recorded, whatever became of the record since.
    Already,
    /// What the event records is not there yet: apply it.
    Apply,
    /// Another record holds the event's id: a conflict, whatever else happens.
    Other(String),
    /// What a deletion or reversal applies to is not there.
    Missing(String),
}

/// How the central copy under an event's id compares with the event's record.
enum Found {
    Absent,
    Other,
    /// The same record, not deleted or reversed.
    Same,
    /// The same record, deleted or reversed.
    Applied,
}

fn compare<R>(
    stored: Option<R>,
    record: &R,
    same: fn(&R, &R) -> bool,
    applied: fn(&R) -> bool,
) -> Found {
    match stored {
        None => Found::Absent,
        Some(e) if !same(&e, record) => Found::Other,
        Some(e) if applied(&e) => Found::Applied,
        Some(_) => Found::Same,
    }
}

/// Where `event` stands ([`Look`]).
fn look(ctx: &Ctx<'_>, event: &Event) -> Result<Look, ApiError> {
    let store = &ctx.service.store;
    let (found, what, id) = match &event.record {
        Record::Transaction(t) => {
            let stored = store.transaction(ctx.scope, &t.id)?;
            let found = compare(stored, &**t, same_transaction, |e| e.deleted_at.is_some());
            (found, "transaction", &t.id)
        }
        Record::Refund(r) => {
            let stored = store.refund(ctx.scope, &r.id)?;
            let found = compare(stored, &**r, same_refund, |e| e.reversed_at.is_some());
            (found, "refund", &r.id)
        }
    };
    let applies = matches!(event.kind, Kind::Deletion | Kind::Reversal);
    Ok(match (found, applies) {
        (Found::Absent, false) | (Found::Same, true) => Look::Apply,
        (Found::Same | Found::Applied, false) | (Found::Applied, true) => Look::Already,
        (Found::Absent, true) => Look::Missing(format!("{what} {id} is not in the central ledger")),
        (Found::Other, false) => Look::Other(format!(
            "{what} {id} is already recorded centrally with other content{}",
            if what == "refund" {
                " (another sale's refund, or other amounts)"
            } else {
                ""
            }
        )),
        (Found::Other, true) => Look::Other(format!(
            "{what} {id} is recorded centrally with other content; its {} is not applied",
            event.kind.as_str()
        )),
    })
}

/// The outcome of an event the store refused to apply (`why`): looked at again, since a
/// request at the same time (a resend racing the request it repeats, two syncs of one
/// till) may have recorded the same record meanwhile, and then it is already recorded.
fn refused(ctx: &Ctx<'_>, event: &Event, why: String) -> Result<Outcome, ApiError> {
    Ok(match look(ctx, event)? {
        Look::Already => Outcome::Already,
        Look::Other(other) => Outcome::Conflict(other),
        Look::Apply | Look::Missing(_) => Outcome::Conflict(why),
    })
}

/// Applies an event whose record is not there yet ([`Look::Apply`]), through the store's
/// ordinary methods and so its rules (a refund takes no more than remains, in the store's
/// write).
fn write(ctx: &Ctx<'_>, event: &Event) -> Result<Outcome, ApiError> {
    let store = &ctx.service.store;
    let result = match (&event.record, event.kind) {
        (Record::Transaction(t), Kind::Transaction) => {
            store.insert_transaction(ctx.scope, (**t).clone())
        }
        (Record::Transaction(t), _) => {
            let at = t.deleted_at.unwrap_or_default();
            match &t.replaced_by {
                // A sale replaced by a new version on the till: its order id is let go of,
                // for the new version's event after it.
                Some(by) => store.delete_replaced_transaction(ctx.scope, &t.id, at, by),
                None => store.delete_transaction(ctx.scope, &t.id, at),
            }
        }
        (Record::Refund(r), Kind::Refund) => store
            .insert_refund(
                ctx.scope,
                &r.transaction_id,
                RefundAsk::Synced((**r).clone()),
            )
            .map(drop),
        (Record::Refund(r), _) => store
            .reverse_refund(ctx.scope, &r.id, r.reversed_at.unwrap_or_default())
            .map(drop),
    };
    let why = match (result, &event.record) {
        (Ok(()), _) => return Ok(Outcome::Recorded),
        (Err(StoreError::Rejected(refusal)), _) => refusal.to_string(),
        (Err(StoreError::Duplicate { .. }), Record::Transaction(t)) => format!(
            "order id {:?} is already recorded by another transaction",
            t.reference_order_id
        ),
        (Err(StoreError::Duplicate { .. }), Record::Refund(r)) => {
            format!("refund id {} is already taken", r.id)
        }
        (
            Err(StoreError::NotFound {
                what: RecordKind::Transaction,
                ..
            }),
            Record::Refund(r),
        ) => format!(
            "transaction {} of refund {} is not in the central ledger (or deleted there)",
            r.transaction_id, r.id
        ),
        (
            Err(
                StoreError::NotFound { .. }
                | StoreError::AlreadyDeleted { .. }
                | StoreError::AlreadyReversed { .. },
            ),
            Record::Transaction(t),
        ) => format!("transaction {} is not in the central ledger", t.id),
        (
            Err(
                StoreError::NotFound { .. }
                | StoreError::AlreadyDeleted { .. }
                | StoreError::AlreadyReversed { .. },
            ),
            Record::Refund(r),
        ) => format!("refund {} is not in the central ledger", r.id),
        (Err(e), _) => return Err(e.into()),
    };
    refused(ctx, event, why)
}

/// What becomes of an event: already recorded when the same record is there (whatever
/// happened to it since, and whatever else is wrong with the event); else, with
/// `check_only`, a conflict saying it is not there, and otherwise it is applied.
fn apply(ctx: &Ctx<'_>, event: &Event, check_only: bool) -> Result<Outcome, ApiError> {
    Ok(match (look(ctx, event)?, &event.refused) {
        (Look::Already, _) => Outcome::Already,
        (_, Some(why)) => Outcome::Conflict(format!(
            "the central ledger cannot take this {}: {why}",
            event.kind.as_str()
        )),
        (Look::Other(why) | Look::Missing(why), None) => Outcome::Conflict(why),
        (Look::Apply, None) if check_only => Outcome::Conflict(format!(
            "{} {} is not recorded centrally (only checked: nothing was stored)",
            event.kind.as_str(),
            event.id()
        )),
        (Look::Apply, None) => return write(ctx, event),
    })
}

/// The batch's new transactions (valid, with ids the ledger does not hold), stored in one
/// write: one commit for a whole batch of sales instead of one each. When any of them
/// collides (an order id the ledger holds for another sale, or the same batch sent twice
/// at once), nothing is stored and every event goes its own way ([`apply`]). Storing them
/// before the batch's other events keeps every refund, reversal and deletion after its
/// sale. The outcomes decided, by the event's place in the batch.
fn bulk_insert(ctx: &Ctx<'_>, events: &[Event]) -> Result<HashMap<usize, Outcome>, ApiError> {
    let store = &ctx.service.store;
    let mut fresh = Vec::new();
    let mut ids = HashSet::new();
    for (i, e) in events.iter().enumerate() {
        if let (Kind::Transaction, Record::Transaction(t), None) = (e.kind, &e.record, &e.refused) {
            if ids.insert(t.id.as_str()) && store.transaction(ctx.scope, &t.id)?.is_none() {
                fresh.push((i, t));
            }
        }
    }
    let mut decided = HashMap::new();
    if fresh.len() < 2 {
        return Ok(decided);
    }
    let records = fresh.iter().map(|(_, t)| (***t).clone()).collect();
    match store.insert_transactions(ctx.scope, records) {
        Ok(()) => decided.extend(fresh.into_iter().map(|(i, _)| (i, Outcome::Recorded))),
        Err(StoreError::Duplicate { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(decided)
}

/// A request's batch, read and checked whole before anything of it is applied.
struct Batch {
    livemode: bool,
    /// Only check each event against the central ledger, storing nothing: a till asks so
    /// of the events it holds as conflicts, to clear those already recorded.
    check_only: bool,
    events: Vec<Event>,
}

fn read_batch(ctx: &Ctx<'_>) -> Result<Batch, ApiError> {
    let live = ctx.scope.live;
    let batch = crate::read::body(ctx, |o| {
        let livemode = o
            .opt_bool("livemode")?
            .ok_or_else(|| ApiError::missing(&o.path("livemode"), "boolean"))?;
        if livemode != live {
            return Err(mode_mismatch(live));
        }
        let check_only = o.opt_bool("check_only")?.unwrap_or(false);
        let items = o
            .opt_array("events")?
            .ok_or_else(|| ApiError::missing(&o.path("events"), "array"))?;
        if items.len() > MAX_EVENTS {
            return Err(crate::read::too_large(
                &o.path("events"),
                MAX_EVENTS,
                items.len(),
            ));
        }
        let events = items
            .iter()
            .enumerate()
            .map(|(i, v)| read_event(o, i, v, live))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Batch {
            livemode,
            check_only,
            events,
        })
    })?;
    // The client marks each event by its `seq`: two events of one `seq` cannot both be
    // answered.
    let mut seen = HashSet::new();
    for (i, e) in batch.events.iter().enumerate() {
        if !seen.insert(e.seq) {
            let field = format!("events[{i}].seq");
            return Err(ApiError::field(
                ErrorKind::InvalidSyncRecord,
                &field,
                format!("{field}: seq {} is given to two events of the batch", e.seq),
                "each event's own place in the outbox",
                e.seq.to_string(),
            ));
        }
    }
    Ok(batch)
}

/// The answer of one event.
fn result_of(event: &Event, outcome: Outcome, table_hash: &str) -> Value {
    let mut result = json!({"seq": event.seq, "kind": event.kind.as_str(), "id": event.id()});
    match outcome {
        Outcome::Recorded => result["outcome"] = json!("recorded"),
        Outcome::Already => result["outcome"] = json!("already_recorded"),
        Outcome::Conflict(why) => {
            result["outcome"] = json!("conflict");
            result["message"] = json!(why);
        }
    }
    if let (Kind::Transaction, Record::Transaction(t)) = (event.kind, &event.record) {
        // A table this server does not hold (or a record from before hashes were kept):
        // the till calculated with rates the central side cannot vouch for.
        result["table_hash_known"] = json!(t.table_hash.as_deref() == Some(table_hash));
    }
    result
}

/// `POST /tax/sync`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let batch = read_batch(ctx)?;
    // Each event is a write: the batch counts as that many requests against the
    // account's rate.
    ctx.service.rate.charge(
        ctx.scope,
        &ctx.service.limits,
        batch.events.len().saturating_sub(1),
    )?;
    let table_hash = ctx.service.table().hash_hex();
    let mut decided = if batch.check_only {
        HashMap::new()
    } else {
        bulk_insert(ctx, &batch.events)?
    };
    let mut results = Vec::with_capacity(batch.events.len());
    for (i, event) in batch.events.iter().enumerate() {
        let outcome = match decided.remove(&i) {
            Some(o) => o,
            None => apply(ctx, event, batch.check_only)?,
        };
        results.push(result_of(event, outcome, &table_hash));
    }
    Ok(json!({"object": "levy.sync", "livemode": batch.livemode, "results": results}))
}
