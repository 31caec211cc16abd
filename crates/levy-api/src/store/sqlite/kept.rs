//! The statements of answers kept under idempotency keys, in SQLite.

use rusqlite::{params, OptionalExtension};

use super::super::kept::{KeptAnswer, KeptCount};
use super::super::seal::{from_json, to_json};
use super::super::*;
use super::queries::Sql;
use super::sqlite_err;

impl KeptStatements for Sql<'_> {
    fn kept(&self, scope: &Scope, key: &str, now: i64) -> Result<Option<KeptAnswer>> {
        let data: Option<String> = self
            .0
            .prepare_cached(
                "SELECT data FROM idempotency_keys
                 WHERE account = ?1 AND live = ?2 AND idempotency_key = ?3 AND expires_at > ?4",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![&*scope.account, scope.live, key, now], |r| r.get(0))
                    .optional()
            })
            .map_err(sqlite_err)?;
        data.map(|d| from_json(&d)).transpose()
    }

    fn keep(&self, scope: &Scope, answer: &KeptAnswer) -> Result<()> {
        let data = to_json(answer)?;
        // An expired answer not purged yet gives its key up; an unexpired one keeps it.
        let changed = self
            .0
            .prepare_cached(
                "INSERT INTO idempotency_keys (account, live, idempotency_key, expires_at, bytes, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (account, live, idempotency_key) DO UPDATE
                 SET expires_at = excluded.expires_at, bytes = excluded.bytes, data = excluded.data
                 WHERE idempotency_keys.expires_at <= ?7",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    &*scope.account,
                    scope.live,
                    answer.key,
                    answer.expires_at,
                    data.len() as i64,
                    data,
                    answer.created_at
                ])
            })
            .map_err(sqlite_err)?;
        if changed == 1 {
            Ok(())
        } else {
            Err(StoreError::Duplicate {
                what: RecordKind::IdempotencyKey,
                value: answer.key.clone(),
            })
        }
    }

    fn count_kept(&self, scope: &Scope, now: i64) -> Result<KeptCount> {
        let (count, bytes): (i64, i64) = self
            .0
            .prepare_cached(
                "SELECT count(*), coalesce(sum(bytes), 0) FROM idempotency_keys
                 WHERE account = ?1 AND live = ?2 AND expires_at > ?3",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![&*scope.account, scope.live, now], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
            })
            .map_err(sqlite_err)?;
        Ok(KeptCount {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        })
    }
}
