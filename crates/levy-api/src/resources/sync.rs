//! `POST /tax/sync` (a levy extension): a till hands the central ledger what it recorded
//! offline, from its outbox (`levy sync`). The till's receipt is the truth: records are
//! stored with the till's ids and amounts, not recalculated. But the central ledger keeps
//! its own rules: every record is checked as strictly as the interface checks a request
//! (`sync_check`), and a refund, reversal or deletion goes through the same ledger rules
//! as the interface's (a refund takes no more than remains, in the store's write).
//!
//! Every event is idempotent by its record's id, so a sync may be sent again, whole or in
//! part, in any order, at any time: what is already recorded (the same content) is
//! `already_recorded`; the same id or order id with other content, a refund that does not
//! fit, or a record the central side cannot take is a `conflict`, reported and never
//! merged, and the events after it go on.
//!
//! What fails the whole request instead (nothing of it is applied): a body that is not a
//! batch of events, a record whose seal does not match or that is not a record of its
//! kind, two events with one `seq`, and a record of the other mode than the key's (each
//! record says its mode, `livemode`, inside its seal).

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
    a.deleted_at = None;
    b.deleted_at = None;
    a == b
}

fn same_refund(a: &RefundRecord, b: &RefundRecord) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    a.reversed_at = None;
    b.reversed_at = None;
    a == b
}

/// A transaction event: the same transaction already there, or a new one.
fn record_transaction(ctx: &Ctx<'_>, t: &TransactionRecord) -> Result<Outcome, ApiError> {
    let store = &ctx.service.store;
    let existing = |t: &TransactionRecord| -> Result<Option<Outcome>, ApiError> {
        Ok(store.transaction(ctx.scope, &t.id)?.map(|e| {
            if same_transaction(&e, t) {
                Outcome::Already
            } else {
                Outcome::Conflict(format!(
                    "transaction {} is already recorded with other content",
                    t.id
                ))
            }
        }))
    };
    if let Some(o) = existing(t)? {
        return Ok(o);
    }
    Ok(match store.insert_transaction(ctx.scope, t.clone()) {
        Ok(()) => Outcome::Recorded,
        Err(StoreError::Duplicate { .. }) => match existing(t)? {
            // Sent twice at once: the other request recorded it.
            Some(o) => o,
            None => Outcome::Conflict(format!(
                "order id {:?} is already recorded by another transaction",
                t.reference_order_id
            )),
        },
        Err(e) => return Err(e.into()),
    })
}

/// A deletion event: the central copy of the same transaction, deleted now or before.
fn record_deletion(ctx: &Ctx<'_>, t: &TransactionRecord) -> Result<Outcome, ApiError> {
    let store = &ctx.service.store;
    let not_there =
        || Outcome::Conflict(format!("transaction {} is not in the central ledger", t.id));
    Ok(match store.transaction(ctx.scope, &t.id)? {
        None => not_there(),
        Some(e) if !same_transaction(&e, t) => Outcome::Conflict(format!(
            "transaction {} is recorded centrally with other content; its deletion is not applied",
            t.id
        )),
        Some(e) if e.deleted_at.is_some() => Outcome::Already,
        Some(_) => {
            match store.delete_transaction(ctx.scope, &t.id, t.deleted_at.unwrap_or_default()) {
                Ok(()) => Outcome::Recorded,
                Err(StoreError::AlreadyDeleted { .. }) => Outcome::Already,
                Err(StoreError::NotFound { .. }) => not_there(),
                Err(e) => return Err(e.into()),
            }
        }
    })
}

/// The refund already recorded under `r`'s id, compared with it.
fn refund_there(ctx: &Ctx<'_>, r: &RefundRecord) -> Result<Option<Outcome>, ApiError> {
    Ok(ctx.service.store.refund(ctx.scope, &r.id)?.map(|e| {
        if same_refund(&e, r) {
            Outcome::Already
        } else {
            Outcome::Conflict(format!(
                "refund {} is already recorded centrally with other content (another sale's refund, or other amounts)",
                r.id
            ))
        }
    }))
}

/// A refund event: the same refund already there (whatever became of its sale since), or
/// a new one that fits what remains of its sale in the central ledger.
fn record_refund(ctx: &Ctx<'_>, r: &RefundRecord) -> Result<Outcome, ApiError> {
    if let Some(o) = refund_there(ctx, r)? {
        return Ok(o);
    }
    // Decided inside the store's write, against the sale's running refund total.
    let result =
        ctx.service
            .store
            .insert_refund(ctx.scope, &r.transaction_id, RefundAsk::Synced(r.clone()));
    Ok(match result {
        Ok(_) => Outcome::Recorded,
        Err(StoreError::Rejected(refusal)) => Outcome::Conflict(refusal.to_string()),
        Err(StoreError::NotFound {
            what: RecordKind::Transaction,
            ..
        }) => Outcome::Conflict(format!(
            "transaction {} of refund {} is not in the central ledger (or deleted there)",
            r.transaction_id, r.id
        )),
        // Another request recorded a refund of this id meanwhile.
        Err(StoreError::Duplicate { .. }) => refund_there(ctx, r)?
            .unwrap_or_else(|| Outcome::Conflict(format!("refund id {} is already taken", r.id))),
        Err(e) => return Err(e.into()),
    })
}

/// A reversal event: the central copy of the same refund, reversed now or before.
fn record_reversal(ctx: &Ctx<'_>, r: &RefundRecord) -> Result<Outcome, ApiError> {
    let store = &ctx.service.store;
    let not_there = || Outcome::Conflict(format!("refund {} is not in the central ledger", r.id));
    Ok(match store.refund(ctx.scope, &r.id)? {
        None => not_there(),
        Some(e) if !same_refund(&e, r) => Outcome::Conflict(format!(
            "refund {} is recorded centrally with other content; its reversal is not applied",
            r.id
        )),
        Some(e) if e.reversed_at.is_some() => Outcome::Already,
        Some(_) => {
            match store.reverse_refund(ctx.scope, &r.id, r.reversed_at.unwrap_or_default()) {
                Ok(_) => Outcome::Recorded,
                Err(StoreError::AlreadyReversed { .. }) => Outcome::Already,
                Err(StoreError::NotFound { .. }) => not_there(),
                Err(e) => return Err(e.into()),
            }
        }
    })
}

fn apply(ctx: &Ctx<'_>, event: &Event) -> Result<Outcome, ApiError> {
    if let Some(why) = &event.refused {
        return Ok(Outcome::Conflict(format!(
            "the central ledger cannot take this {}: {why}",
            event.kind.as_str()
        )));
    }
    match (&event.record, event.kind) {
        (Record::Transaction(t), Kind::Transaction) => record_transaction(ctx, t),
        (Record::Transaction(t), _) => record_deletion(ctx, t),
        (Record::Refund(r), Kind::Refund) => record_refund(ctx, r),
        (Record::Refund(r), _) => record_reversal(ctx, r),
    }
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

/// `POST /tax/sync`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let live = ctx.scope.live;
    let (livemode, events) = crate::read::body(ctx, |o| {
        let livemode = o
            .opt_bool("livemode")?
            .ok_or_else(|| ApiError::missing(&o.path("livemode"), "boolean"))?;
        if livemode != live {
            return Err(mode_mismatch(live));
        }
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
        Ok((livemode, events))
    })?;
    // The client marks each event by its `seq`: two events of one `seq` cannot both be
    // answered.
    let mut seen = HashSet::new();
    for (i, e) in events.iter().enumerate() {
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
    // Each event is a write: the batch counts as that many requests against the
    // account's rate.
    ctx.service.rate.charge(
        ctx.scope,
        &ctx.service.limits,
        events.len().saturating_sub(1),
    )?;
    let table_hash = ctx.service.table().hash_hex();
    let mut decided = bulk_insert(ctx, &events)?;
    let mut results = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let outcome = match decided.remove(&i) {
            Some(o) => o,
            None => apply(ctx, event)?,
        };
        let mut result =
            json!({"seq": event.seq, "kind": event.kind.as_str(), "id": short(event.id())});
        match outcome {
            Outcome::Recorded => result["outcome"] = json!("recorded"),
            Outcome::Already => result["outcome"] = json!("already_recorded"),
            Outcome::Conflict(why) => {
                result["outcome"] = json!("conflict");
                result["message"] = json!(why);
            }
        }
        if let (Kind::Transaction, Record::Transaction(t)) = (event.kind, &event.record) {
            // A table this server does not hold (or a record from before hashes were
            // kept): the till calculated with rates the central side cannot vouch for.
            result["table_hash_known"] =
                json!(t.table_hash.as_deref() == Some(table_hash.as_str()));
        }
        results.push(result);
    }
    Ok(json!({"object": "levy.sync", "livemode": livemode, "results": results}))
}
