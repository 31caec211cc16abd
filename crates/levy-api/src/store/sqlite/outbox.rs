//! The outbox's statements in SQLite: a till's record of what `levy sync` has yet to send.

use rusqlite::params;

use super::super::*;
use super::queries::{run, Sql};
use super::sqlite_err;

/// Every row of a query of four columns.
fn rows4(sql: &str, s: &Sql<'_>, params: impl rusqlite::Params) -> Result<Vec<OutboxRow>> {
    let mut stmt = s.0.prepare_cached(sql).map_err(sqlite_err)?;
    let rows = stmt
        .query_map(params, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(sqlite_err)?;
    rows.collect::<Result<_, _>>().map_err(sqlite_err)
}

impl OutboxStatements for Sql<'_> {
    fn outbox_add(&self, scope: &Scope, kind: &str, id: &str) -> Result<()> {
        run(
            self.0,
            "INSERT INTO outbox (account, live, kind, record_id) VALUES (?1, ?2, ?3, ?4)",
            params![&*scope.account, scope.live, kind, id],
        )
        .map(drop)
    }

    fn unsent(&self, live: bool, account: Option<&str>, limit: i64) -> Result<Vec<OutboxRow>> {
        rows4(
            "SELECT seq, account, kind, record_id FROM outbox
             WHERE live = ?1 AND state = 'unsent' AND (?2 IS NULL OR account = ?2)
             ORDER BY seq LIMIT ?3",
            self,
            params![live, account, limit],
        )
    }

    fn conflicted(
        &self,
        live: bool,
        account: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<OutboxRow>> {
        rows4(
            "SELECT seq, account, kind, record_id FROM outbox
             WHERE live = ?1 AND state = 'conflict' AND (?2 IS NULL OR account = ?2) AND seq > ?3
             ORDER BY seq LIMIT ?4",
            self,
            params![live, account, after, limit],
        )
    }

    fn outbox_accounts(&self, live: bool) -> Result<Vec<String>> {
        let mut stmt = self
            .0
            .prepare_cached(
                "SELECT DISTINCT account FROM outbox WHERE live = ?1 AND state = 'unsent' ORDER BY account",
            )
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map(params![live], |r| r.get::<_, String>(0))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)
    }

    fn outbox_mark(&self, seq: i64, state: &str, note: Option<&str>) -> Result<()> {
        run(
            self.0,
            "UPDATE outbox SET state = ?2, note = ?3 WHERE seq = ?1",
            params![seq, state, note],
        )
        .map(drop)
    }

    fn outbox_retry(&self, live: bool) -> Result<usize> {
        run(
            self.0,
            "UPDATE outbox SET state = 'unsent', note = NULL WHERE live = ?1 AND state = 'conflict'",
            params![live],
        )
    }

    fn outbox_conflicts(&self, live: bool) -> Result<Vec<OutboxRow>> {
        rows4(
            "SELECT seq, kind, record_id, coalesce(note, '') FROM outbox
             WHERE live = ?1 AND state = 'conflict' ORDER BY seq",
            self,
            params![live],
        )
    }
}
