//! `POST /tax/sync` (a levy extension): a till hands the central ledger what it recorded
//! offline, from its outbox (`levy sync`). The till's receipt is the truth: records are
//! stored with the till's ids and amounts, not recalculated. Every event is idempotent by
//! its record's id, so a sync may be sent again, whole or in part, at any time: what is
//! already recorded (the same content) is `already_recorded`; the same id or order id with
//! other content is a `conflict`, reported and never merged.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::json::{Node, Obj};
use crate::router::Ctx;
use crate::store::{open_sealed, RecordKind, RefundRecord, StoreError, TransactionRecord};

/// Events per request, at most.
pub(crate) const MAX_EVENTS: usize = 1000;

/// A record of an event, checked against its seal and read.
enum Record {
    Transaction(Box<TransactionRecord>),
    Refund(RefundRecord),
}

struct Event {
    seq: i64,
    kind: &'static str,
    record: Record,
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

fn read_event(root: &Obj<'_>, i: usize, v: &Node<'_>) -> Result<Event, ApiError> {
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
    let kind = o.req_str("kind", 16)?;
    let kind: &'static str = match kind {
        "transaction" => "transaction",
        "refund" => "refund",
        "reversal" => "reversal",
        "deletion" => "deletion",
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
    let record = match kind {
        "transaction" | "deletion" => {
            let t: TransactionRecord = open_sealed(text).map_err(|e| invalid(&field, e))?;
            if (kind == "deletion") != t.deleted_at.is_some() {
                return Err(invalid(&field, "deleted_at does not fit the event"));
            }
            Record::Transaction(Box::new(t))
        }
        _ => {
            let r: RefundRecord = open_sealed(text).map_err(|e| invalid(&field, e))?;
            if (kind == "reversal") != r.reversed_at.is_some() {
                return Err(invalid(&field, "reversed_at does not fit the event"));
            }
            Record::Refund(r)
        }
    };
    o.finish()?;
    Ok(Event { seq, kind, record })
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

fn apply(ctx: &Ctx<'_>, event: Event) -> Result<Outcome, ApiError> {
    let store = &ctx.service.store;
    let scope = ctx.scope;
    Ok(match (event.kind, event.record) {
        ("transaction", Record::Transaction(t)) => {
            let existing = |t: &TransactionRecord| -> Result<Option<Outcome>, ApiError> {
                Ok(store.transaction(scope, &t.id)?.map(|e| {
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
            if let Some(o) = existing(&t)? {
                return Ok(o);
            }
            match store.insert_transaction(scope, (*t).clone()) {
                Ok(()) => Outcome::Recorded,
                Err(StoreError::Duplicate { .. }) => match existing(&t)? {
                    // Sent twice at once: the other request recorded it.
                    Some(o) => o,
                    None => Outcome::Conflict(format!(
                        "order id {:?} is already recorded by another transaction",
                        t.reference_order_id
                    )),
                },
                Err(e) => return Err(e.into()),
            }
        }
        ("deletion", Record::Transaction(t)) => {
            match store.delete_transaction(scope, &t.id, t.deleted_at.unwrap_or_default()) {
                Ok(()) => Outcome::Recorded,
                Err(StoreError::AlreadyDeleted { .. }) => Outcome::Already,
                Err(StoreError::NotFound { .. }) => {
                    Outcome::Conflict(format!("transaction {} is not in the central ledger", t.id))
                }
                Err(e) => return Err(e.into()),
            }
        }
        ("refund", Record::Refund(r)) => {
            // Decided inside the store's write, beside the refunds already there.
            let seen: Arc<Mutex<Option<Outcome>>> = Arc::default();
            let (mine, verdict) = (r.clone(), Arc::clone(&seen));
            let result = store.insert_refund(
                scope,
                &r.transaction_id,
                Box::new(move |_tx, refunds| {
                    if let Some(e) = refunds.iter().find(|e| e.id == mine.id) {
                        let o = if same_refund(e, &mine) {
                            Outcome::Already
                        } else {
                            Outcome::Conflict(format!(
                                "refund {} is already recorded with other content",
                                mine.id
                            ))
                        };
                        *verdict.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
                        return Err(ApiError::of(ErrorKind::InternalError, "decided"));
                    }
                    Ok(mine)
                }),
            );
            match result {
                Ok(_) => Outcome::Recorded,
                Err(StoreError::Rejected(_)) => seen
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or(Outcome::Conflict("refused".into())),
                Err(StoreError::NotFound {
                    what: RecordKind::Transaction,
                    ..
                }) => Outcome::Conflict(format!(
                    "transaction {} is not in the central ledger (or deleted there)",
                    r.transaction_id
                )),
                Err(e) => return Err(e.into()),
            }
        }
        ("reversal", Record::Refund(r)) => {
            match store.reverse_refund(scope, &r.id, r.reversed_at.unwrap_or_default()) {
                Ok(_) => Outcome::Recorded,
                Err(StoreError::AlreadyReversed { .. }) => Outcome::Already,
                Err(StoreError::NotFound { .. }) => {
                    Outcome::Conflict(format!("refund {} is not in the central ledger", r.id))
                }
                Err(e) => return Err(e.into()),
            }
        }
        _ => unreachable!("read_event pairs each kind with its record"),
    })
}

/// The batch's new transactions (ids the ledger does not hold), stored in one write: one
/// commit for a whole batch of sales instead of one each. When any of them collides (an
/// order id the ledger holds for another sale, or the same batch sent twice at once),
/// nothing is stored and every event goes its own way ([`apply`]). Storing them before the
/// batch's other events keeps every refund, reversal and deletion after its sale.
fn bulk_insert(
    ctx: &Ctx<'_>,
    events: &[Event],
) -> Result<std::collections::HashMap<i64, Outcome>, ApiError> {
    let store = &ctx.service.store;
    let mut fresh = Vec::new();
    for e in events {
        if let ("transaction", Record::Transaction(t)) = (e.kind, &e.record) {
            if store.transaction(ctx.scope, &t.id)?.is_none() {
                fresh.push((e.seq, t.clone()));
            }
        }
    }
    let mut decided = std::collections::HashMap::new();
    if fresh.len() < 2 {
        return Ok(decided);
    }
    let records = fresh.iter().map(|(_, t)| (**t).clone()).collect();
    match store.insert_transactions(ctx.scope, records) {
        Ok(()) => {
            decided.extend(fresh.into_iter().map(|(seq, _)| (seq, Outcome::Recorded)));
        }
        Err(StoreError::Duplicate { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(decided)
}

/// `POST /tax/sync`.
pub(crate) fn create(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let (livemode, events) = crate::read::body(ctx, |o| {
        let livemode = o
            .opt_bool("livemode")?
            .ok_or_else(|| ApiError::missing(&o.path("livemode"), "boolean"))?;
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
            .map(|(i, v)| read_event(o, i, v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((livemode, events))
    })?;
    if livemode != ctx.scope.live {
        let (key, records) = if ctx.scope.live {
            ("a live key", "test records")
        } else {
            ("a test key", "live records")
        };
        return Err(ApiError::of(
            ErrorKind::SyncModeMismatch,
            format!("{key} cannot sync {records}; send them with a key of their mode"),
        ));
    }
    let table_hash = ctx.service.table().hash_hex();
    let mut decided = bulk_insert(ctx, &events)?;
    let mut results = Vec::with_capacity(events.len());
    for event in events {
        let (seq, kind) = (event.seq, event.kind);
        let (id, hash) = match &event.record {
            Record::Transaction(t) => (
                t.id.clone(),
                (kind == "transaction").then(|| t.table_hash.clone()),
            ),
            Record::Refund(r) => (r.id.clone(), None),
        };
        let outcome = match decided.remove(&seq) {
            Some(o) => o,
            None => apply(ctx, event)?,
        };
        let mut result = json!({"seq": seq, "kind": kind, "id": id});
        match outcome {
            Outcome::Recorded => result["outcome"] = json!("recorded"),
            Outcome::Already => result["outcome"] = json!("already_recorded"),
            Outcome::Conflict(why) => {
                result["outcome"] = json!("conflict");
                result["message"] = json!(why);
            }
        }
        if let Some(hash) = hash {
            // A table this server does not hold (or a record from before hashes were
            // kept): the till calculated with rates the central side cannot vouch for.
            result["table_hash_known"] = json!(hash.as_deref() == Some(table_hash.as_str()));
        }
        results.push(result);
    }
    Ok(json!({"object": "levy.sync", "livemode": livemode, "results": results}))
}
