//! The statements of answers kept under idempotency keys, in PostgreSQL, as in the SQLite
//! ledger.

use super::super::kept::{KeptAnswer, KeptCount};
use super::super::seal::to_json;
use super::super::*;
use super::queries::Pg;
use super::{pg_err, Conn};

/// Keeps an answer: an expired one not purged yet gives its key up, an unexpired one keeps
/// it (no row changed). A concurrent write keeping the same key waits here for the other
/// to end, then changes no row.
const KEEP: &str =
    "INSERT INTO idempotency_keys (account, live, idempotency_key, expires_at, bytes, data)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (account, live, idempotency_key) DO UPDATE
    SET expires_at = excluded.expires_at, bytes = excluded.bytes, data = excluded.data
    WHERE idempotency_keys.expires_at <= $7";

/// The rows changed by [`KEEP`], or its error; `1` when the answer was kept.
fn kept_or_taken(changed: u64, answer: &KeptAnswer) -> Result<()> {
    if changed == 1 {
        Ok(())
    } else {
        Err(StoreError::Duplicate {
            what: RecordKind::IdempotencyKey,
            value: answer.key.clone(),
        })
    }
}

/// Keeps `answer` over `c` (a transaction), awaited: for a calculation's commit.
pub(super) async fn keep_on(c: &impl Conn, scope: &Scope, answer: &KeptAnswer) -> Result<()> {
    let data = to_json(answer)?;
    let bytes = data.len() as i64;
    let changed = c
        .exec(
            KEEP,
            &[
                &&*scope.account,
                &scope.live,
                &answer.key,
                &answer.expires_at,
                &bytes,
                &data,
                &answer.created_at,
            ],
        )
        .await
        .map_err(pg_err)?;
    kept_or_taken(changed, answer)
}

impl<C: Conn> KeptStatements for Pg<'_, C> {
    fn kept(&self, scope: &Scope, key: &str, now: i64) -> Result<Option<KeptAnswer>> {
        self.one(
            "SELECT data FROM idempotency_keys
             WHERE account = $1 AND live = $2 AND idempotency_key = $3 AND expires_at > $4",
            &[&&*scope.account, &scope.live, &key, &now],
        )
    }

    fn keep(&self, scope: &Scope, answer: &KeptAnswer) -> Result<()> {
        let data = to_json(answer)?;
        let bytes = data.len() as i64;
        let changed = self.exec(
            KEEP,
            &[
                &&*scope.account,
                &scope.live,
                &answer.key,
                &answer.expires_at,
                &bytes,
                &data,
                &answer.created_at,
            ],
        )?;
        kept_or_taken(changed, answer)
    }

    fn count_kept(&self, scope: &Scope, now: i64) -> Result<KeptCount> {
        let row = self.row(
            "SELECT count(*), coalesce(sum(bytes), 0)::bigint FROM idempotency_keys
             WHERE account = $1 AND live = $2 AND expires_at > $3",
            &[&&*scope.account, &scope.live, &now],
        )?;
        let (count, bytes): (i64, i64) = match row {
            Some(r) => (r.try_get(0).map_err(pg_err)?, r.try_get(1).map_err(pg_err)?),
            None => (0, 0),
        };
        Ok(KeptCount {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        })
    }
}
