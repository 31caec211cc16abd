//! The outbox's statements in PostgreSQL, as in the SQLite ledger: every transaction,
//! refund, reversal and deletion is in it, for a ledger that hands its records on.

use tokio_postgres::Row;

use super::super::*;
use super::queries::Pg;
use super::{pg_err, text, Conn};

/// An outbox row of `(seq, text, text, text)`.
fn event(r: &Row) -> Result<OutboxRow> {
    Ok((
        r.try_get(0).map_err(pg_err)?,
        text(r, 1)?,
        text(r, 2)?,
        text(r, 3)?,
    ))
}

impl<C: Conn> OutboxStatements for Pg<'_, C> {
    fn outbox_add(&self, scope: &Scope, kind: &str, id: &str) -> Result<()> {
        self.later(
            "INSERT INTO outbox (account, live, kind, record_id) VALUES ($1, $2, $3, $4)",
            vec![
                Box::new(scope.account.to_string()),
                Box::new(scope.live),
                Box::new(kind.to_string()),
                Box::new(id.to_string()),
            ],
        )
    }

    fn unsent(&self, live: bool, account: Option<&str>, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = self.rows(
            "SELECT seq, account, kind, record_id FROM outbox
             WHERE live = $1 AND state = 'unsent' AND ($2::text IS NULL OR account = $2)
             ORDER BY seq LIMIT $3",
            &[&live, &account, &limit],
        )?;
        rows.iter().map(event).collect()
    }

    fn conflicted(
        &self,
        live: bool,
        account: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<OutboxRow>> {
        let rows = self.rows(
            "SELECT seq, account, kind, record_id FROM outbox
             WHERE live = $1 AND state = 'conflict' AND ($2::text IS NULL OR account = $2) AND seq > $3
             ORDER BY seq LIMIT $4",
            &[&live, &account, &after, &limit],
        )?;
        rows.iter().map(event).collect()
    }

    fn outbox_accounts(&self, live: bool) -> Result<Vec<String>> {
        let rows = self.rows(
            r#"SELECT DISTINCT account COLLATE "C" FROM outbox WHERE live = $1 AND state = 'unsent' ORDER BY 1"#,
            &[&live],
        )?;
        rows.iter().map(|r| text(r, 0)).collect()
    }

    fn outbox_mark(&self, seq: i64, state: &str, note: Option<&str>) -> Result<()> {
        self.exec(
            "UPDATE outbox SET state = $2, note = $3 WHERE seq = $1",
            &[&seq, &state, &note],
        )
        .map(drop)
    }

    fn outbox_retry(&self, live: bool) -> Result<usize> {
        let n = self.exec(
            "UPDATE outbox SET state = 'unsent', note = NULL WHERE live = $1 AND state = 'conflict'",
            &[&live],
        )?;
        Ok(n as usize)
    }

    fn outbox_conflicts(&self, live: bool) -> Result<Vec<OutboxRow>> {
        let rows = self.rows(
            "SELECT seq, kind, record_id, coalesce(note, '') FROM outbox
             WHERE live = $1 AND state = 'conflict' ORDER BY seq",
            &[&live],
        )?;
        rows.iter().map(event).collect()
    }
}
