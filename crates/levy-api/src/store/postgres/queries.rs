//! The ledger's statements in PostgreSQL: customers, products, calculations, transactions,
//! refunds and nexus totals. Each statement is prepared once per connection and awaited on
//! the store's runtime from the blocking thread its read or write runs on, within the
//! bound of its operation ([`Op::answer`]). Nexus totals are `numeric`, added to in SQL.
//!
//! Inside a write, the bookkeeping that follows a record (the running refund total, the
//! nexus totals, the month's sales, the day's liability, the outbox) is sent without
//! waiting for each answer ([`Pg::later`]): PostgreSQL runs the statements in order, and
//! their answers are awaited together before the next statement that answers and before
//! the commit ([`Pg::finish`]). A refund is then 6 round trips, not 11, and its sale's row
//! is locked for 3 of them, not 9, so that refunds of one sale, which take turns on that
//! lock, cost about what they cost in the SQLite ledger's writer.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::Poll;

use rust_decimal::Decimal;
use serde::Deserialize;
use tokio::runtime::Handle;
use tokio_postgres::Row;

use super::super::days::{DayChange, DayRow, DayTotal};
use super::super::months::MonthChange;
use super::super::rules::{NexusChange, Refunded};
use super::super::seal::{from_json, to_json};
use super::super::*;
use super::link::Op;
use super::{conflict, pg_err, record, text, Conn, Params};

/// A statement sent whose answer is still to be awaited ([`Pg::later`]).
type Pending<'a> = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send + 'a>>;

/// An owned parameter of a statement sent before its answer is awaited.
pub(super) type Owned = Box<dyn tokio_postgres::types::ToSql + Sync + Send>;

/// The statements, over a connection or a transaction (`C`), awaited on `rt` within the
/// bounds of `op`. `lock` is set inside a write: reads of the rows a write changes then
/// lock them (`FOR UPDATE`), and the bookkeeping statements are sent without waiting
/// ([`Pg::later`]).
pub(super) struct Pg<'a, C> {
    c: &'a C,
    rt: &'a Handle,
    op: &'a Op,
    pub(super) lock: bool,
    /// Statements sent, in order, whose answers are not yet awaited.
    pending: Mutex<Vec<Pending<'a>>>,
    /// The running refund total read with its transaction's locked row: (scope, id,
    /// sealed total), so that [`Statements::refunded`] answers without another round trip.
    kept: Mutex<Option<(Scope, String, Option<String>)>>,
    /// Round trips awaited (for tests and measurements).
    waits: AtomicU64,
}

/// A query's text, with `FOR UPDATE` when the statements lock what they read.
macro_rules! locking {
    ($pg:expr, $sql:literal) => {
        if $pg.lock {
            concat!($sql, " FOR UPDATE")
        } else {
            $sql
        }
    };
}
pub(super) use locking;

impl<'a, C: Conn> Pg<'a, C> {
    /// The statements over `c`.
    pub(super) fn new(c: &'a C, rt: &'a Handle, op: &'a Op, lock: bool) -> Pg<'a, C> {
        Pg {
            c,
            rt,
            op,
            lock,
            pending: Mutex::new(Vec::new()),
            kept: Mutex::new(None),
            waits: AtomicU64::new(0),
        }
    }

    /// Awaits `fut`, one round trip within the statement bound, after the answers of the
    /// statements sent before it (the first failure of those is the answer then); its
    /// error mapped by `map`.
    fn wait<R>(
        &self,
        fut: impl Future<Output = Result<R, tokio_postgres::Error>>,
        map: impl FnOnce(tokio_postgres::Error) -> StoreError,
    ) -> Result<R> {
        self.finish()?;
        self.waits.fetch_add(1, Ordering::Relaxed);
        self.rt.block_on(self.op.answer(fut, map))
    }

    /// Awaits the answers of the statements sent and not yet awaited, in order, within
    /// the statement bound: the first failure among them, if any. A write calls it before
    /// its commit.
    pub(super) fn finish(&self) -> Result<()> {
        let sent = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if sent.is_empty() {
            return Ok(());
        }
        self.waits.fetch_add(1, Ordering::Relaxed);
        let all = async {
            let mut first = Ok(());
            for answer in sent {
                let r = answer.await;
                if first.is_ok() {
                    first = r;
                }
            }
            first
        };
        self.rt.block_on(self.op.answer(all, pg_err))
    }

    /// How many round trips these statements awaited.
    pub(super) fn round_trips(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Runs a statement that changes rows, whose answer nothing reads but its success:
    /// inside a write, sent now and awaited later ([`Pg::finish`]); elsewhere at once.
    pub(super) fn later(&self, sql: &'static str, params: Vec<Owned>) -> Result<()> {
        let c = self.c;
        let mut answer: Pending<'a> =
            Box::pin(async move { c.exec_owned(sql, params).await.map(drop) });
        if !self.lock {
            return self.wait(answer, pg_err);
        }
        // The first poll sends it (a statement prepared on this connection before; else
        // it is prepared first, and sent when the preparation is answered).
        let first = self.rt.block_on(std::future::poll_fn(|cx| {
            Poll::Ready(answer.as_mut().poll(cx))
        }));
        match first {
            Poll::Ready(r) => r.map_err(pg_err),
            Poll::Pending => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(answer);
                Ok(())
            }
        }
    }

    /// The sealed record of the first row, if any.
    pub(super) fn one<T: for<'de> Deserialize<'de>>(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Option<T>> {
        self.row(sql, params)?.map(|row| record(&row)).transpose()
    }

    /// The sealed record of every row.
    pub(super) fn many<T: for<'de> Deserialize<'de>>(
        &self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<T>> {
        self.rows(sql, params)?.iter().map(record).collect()
    }

    /// The first row, if any.
    pub(super) fn row(&self, sql: &'static str, params: Params<'_>) -> Result<Option<Row>> {
        self.wait(self.c.opt(sql, params), pg_err)
    }

    /// Every row.
    pub(super) fn rows(&self, sql: &'static str, params: Params<'_>) -> Result<Vec<Row>> {
        self.wait(self.c.all(sql, params), pg_err)
    }

    /// Runs a statement that changes rows; how many it changed.
    pub(super) fn exec(&self, sql: &'static str, params: Params<'_>) -> Result<u64> {
        self.wait(self.c.exec(sql, params), pg_err)
    }

    /// Runs an insert or update whose unique index keeps `what`'s client id (`value`) once.
    pub(super) fn exec_unique(
        &self,
        sql: &'static str,
        params: Params<'_>,
        what: RecordKind,
        value: &str,
    ) -> Result<()> {
        self.wait(self.c.exec(sql, params), conflict(what, value))
            .map(drop)
    }
}

impl<C: Conn> Statements for Pg<'_, C> {
    fn customer(&self, scope: &Scope, key: Key) -> Result<Option<CustomerRecord>> {
        let (sql, id) = key.pick(
            "SELECT data FROM customers WHERE account = $1 AND live = $2 AND id = $3 AND deleted_at IS NULL",
            "SELECT data FROM customers WHERE account = $1 AND live = $2 AND reference_customer_id = $3 AND deleted_at IS NULL",
        );
        self.one(sql, &[&&*scope.account, &scope.live, &id])
    }

    fn insert_customer(&self, scope: &Scope, c: &CustomerRecord) -> Result<()> {
        let data = to_json(c)?;
        self.exec_unique(
            "INSERT INTO customers (account, live, id, reference_customer_id, data) VALUES ($1, $2, $3, $4, $5)",
            &[&&*scope.account, &scope.live, &c.id, &c.reference_customer_id, &data],
            RecordKind::Customer,
            c.reference_customer_id.as_deref().unwrap_or(""),
        )
    }

    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool> {
        Ok(self.exec(
            "UPDATE customers SET deleted_at = $4 WHERE account = $1 AND live = $2 AND id = $3 AND deleted_at IS NULL",
            &[&&*scope.account, &scope.live, &id, &at],
        )? == 1)
    }

    fn insert_product(&self, scope: &Scope, p: &ProductRecord) -> Result<()> {
        let data = to_json(p)?;
        self.exec_unique(
            "INSERT INTO products (account, live, id, data) VALUES ($1, $2, $3, $4)",
            &[
                &&*scope.account,
                &scope.live,
                &p.reference_product_id,
                &data,
            ],
            RecordKind::Product,
            &p.reference_product_id,
        )
    }

    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>> {
        self.one(
            "SELECT data FROM products WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &id],
        )
    }

    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool> {
        Ok(self.exec(
            "DELETE FROM products WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &id],
        )? == 1)
    }

    fn products(&self, scope: &Scope, page: Page) -> Result<Vec<ProductRecord>> {
        // `COLLATE "C"`: ordered by bytes, as SQLite orders them, whatever the database's
        // collation.
        self.many(
            r#"SELECT data FROM products WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3 ORDER BY id COLLATE "C" LIMIT $4"#,
            &[&&*scope.account, &scope.live, &page.after, &page.limit],
        )
    }

    fn calculation(&self, scope: &Scope, id: &str, now: i64) -> Result<Option<CalculationRecord>> {
        self.one(
            "SELECT data FROM calculations WHERE account = $1 AND live = $2 AND id = $3 AND expires_at > $4",
            &[&&*scope.account, &scope.live, &id, &now],
        )
    }

    fn count_calculations(&self, scope: &Scope) -> Result<StoredCalculations> {
        let row = self.row(
            "SELECT (SELECT count(*) FROM calculations WHERE account = $1 AND live = $2)
                  + (SELECT count(*) FROM platform_calculations WHERE account = $1 AND live = $2),
                    (SELECT coalesce(sum(octet_length(data)), 0) FROM calculations WHERE account = $1 AND live = $2)
                  + (SELECT coalesce(sum(octet_length(data)), 0) FROM platform_calculations WHERE account = $1 AND live = $2)",
            &[&&*scope.account, &scope.live],
        )?;
        let (count, bytes): (i64, i64) = match row {
            Some(row) => (
                row.try_get(0).map_err(pg_err)?,
                row.try_get(1).map_err(pg_err)?,
            ),
            None => (0, 0),
        };
        Ok(StoredCalculations {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        })
    }

    fn insert_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()> {
        let kind = tx.platform.as_ref().map_or("order", |p| p.kind.as_str());
        let data = to_json(tx)?;
        self.exec_unique(
            "INSERT INTO transactions (account, live, id, reference_order_id, kind, data) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&&*scope.account, &scope.live, &tx.id, &tx.reference_order_id, &kind, &data],
            RecordKind::Transaction,
            &tx.reference_order_id,
        )
    }

    fn transaction(&self, scope: &Scope, id: &str) -> Result<Option<TransactionRecord>> {
        if !self.lock {
            return self.one(
                "SELECT data FROM transactions WHERE account = $1 AND live = $2 AND id = $3",
                &[&&*scope.account, &scope.live, &id],
            );
        }
        // In a write, its running refund total comes with the locked row, for the
        // refund, reversal or deletion that reads it next.
        let row = self.row(
            "SELECT data, refunded FROM transactions WHERE account = $1 AND live = $2 AND id = $3 FOR UPDATE",
            &[&&*scope.account, &scope.live, &id],
        )?;
        let Some(row) = row else {
            return Ok(None);
        };
        let refunded: Option<String> = row.try_get(1).map_err(pg_err)?;
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((scope.clone(), id.to_string(), refunded));
        from_json(&text(&row, 0)?).map(Some)
    }

    fn transaction_of_order(
        &self,
        scope: &Scope,
        order_id: &str,
        kind: &str,
    ) -> Result<Option<TransactionRecord>> {
        self.one(
            "SELECT data FROM transactions WHERE account = $1 AND live = $2 AND reference_order_id = $3 AND kind = $4",
            &[&&*scope.account, &scope.live, &order_id, &kind],
        )
    }

    fn update_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()> {
        let data = to_json(tx)?;
        self.exec(
            "UPDATE transactions SET data = $4, deleted_at = $5 WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &tx.id, &data, &tx.deleted_at],
        )
        .map(drop)
    }

    fn retire_order_id(&self, scope: &Scope, id: &str) -> Result<()> {
        self.exec(
            "UPDATE transactions SET kind = 'replaced:' || id WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &id],
        )
        .map(drop)
    }

    fn refunded(&self, scope: &Scope, tx_id: &str) -> Result<Option<Refunded>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some((s, id, text)) = kept.filter(|(s, id, _)| s == scope && id == tx_id) {
            debug_assert!(s == *scope && id == tx_id);
            return text.map(|t| from_json(&t)).transpose();
        }
        let row = self.row(
            "SELECT refunded FROM transactions WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &tx_id],
        )?;
        let kept: Option<String> = match row {
            Some(r) => r.try_get(0).map_err(pg_err)?,
            None => None,
        };
        kept.map(|text| from_json(&text)).transpose()
    }

    fn set_refunded(&self, scope: &Scope, tx_id: &str, refunded: &Refunded) -> Result<()> {
        let data = to_json(refunded)?;
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, id, text)) = kept.as_mut() {
            if s == scope && id == tx_id {
                *text = Some(data.clone());
            }
        }
        drop(kept);
        self.later(
            "UPDATE transactions SET refunded = $4 WHERE account = $1 AND live = $2 AND id = $3",
            vec![
                Box::new(scope.account.to_string()),
                Box::new(scope.live),
                Box::new(tx_id.to_string()),
                Box::new(data),
            ],
        )
    }

    fn insert_refund(&self, scope: &Scope, r: &RefundRecord, seq: i64) -> Result<()> {
        let data = to_json(r)?;
        self.exec_unique(
            "INSERT INTO refunds (account, live, id, transaction_id, seq, data) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&&*scope.account, &scope.live, &r.id, &r.transaction_id, &seq, &data],
            RecordKind::Refund,
            &r.id,
        )
    }

    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>> {
        let sql = locking!(
            self,
            "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND id = $3"
        );
        self.one(sql, &[&&*scope.account, &scope.live, &id])
    }

    fn update_refund(&self, scope: &Scope, r: &RefundRecord) -> Result<()> {
        let data = to_json(r)?;
        self.exec(
            "UPDATE refunds SET data = $4 WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &r.id, &data],
        )
        .map(drop)
    }

    fn refunds(&self, scope: &Scope, tx_id: &str, seqs: (i64, i64)) -> Result<Vec<RefundRecord>> {
        self.many(
            "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND transaction_id = $3 AND seq > $4 ORDER BY seq LIMIT $5",
            &[&&*scope.account, &scope.live, &tx_id, &seqs.0, &seqs.1],
        )
    }

    fn transactions_sealed(&self, scope: &Scope, page: Page) -> Result<Vec<(String, String)>> {
        self.rows(
            // The primary key's own order (the database's collation), so that each page is
            // a range of the index rather than a sort of every row of the scope.
            "SELECT id, data FROM transactions WHERE account = $1 AND live = $2 AND id > $3
             ORDER BY id LIMIT $4",
            &[&&*scope.account, &scope.live, &page.after, &page.limit],
        )?
        .iter()
        .map(|r| Ok((r.try_get(0).map_err(pg_err)?, r.try_get(1).map_err(pg_err)?)))
        .collect()
    }

    fn refunds_by_id(&self, scope: &Scope, page: Page) -> Result<Vec<RefundRecord>> {
        self.many(
            "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND id > $3
             ORDER BY id LIMIT $4",
            &[&&*scope.account, &scope.live, &page.after, &page.limit],
        )
    }

    fn refund_seq(&self, scope: &Scope, tx_id: &str, id: &str) -> Result<Option<i64>> {
        self.row(
            "SELECT seq FROM refunds WHERE account = $1 AND live = $2 AND id = $3 AND transaction_id = $4",
            &[&&*scope.account, &scope.live, &id, &tx_id],
        )?
        .map(|r| r.try_get(0).map_err(pg_err))
        .transpose()
    }

    fn add_nexus(&self, account: &str, tx: &TransactionRecord, change: NexusChange) -> Result<()> {
        let sales = change.sales.to_string();
        self.later(
            "INSERT INTO nexus (account, country, region, currency, sales, count)
             VALUES ($1, $2, $3, $4, $5::text::numeric, $6)
             ON CONFLICT (account, country, region, currency)
             DO UPDATE SET sales = nexus.sales + excluded.sales, count = nexus.count + excluded.count",
            vec![
                Box::new(account.to_string()),
                Box::new(tx.country.clone()),
                Box::new(tx.region.clone()),
                Box::new(tx.currency.clone()),
                Box::new(sales),
                Box::new(change.count),
            ],
        )
    }

    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>> {
        let rows = self.rows(
            r#"SELECT country, region, currency, sales::text, count FROM nexus WHERE account = $1
               ORDER BY country COLLATE "C", region COLLATE "C", currency COLLATE "C""#,
            &[&account],
        )?;
        rows.iter()
            .map(|r| {
                let sales = text(r, 3)?;
                Ok(NexusTotal {
                    country: text(r, 0)?,
                    region: text(r, 1)?,
                    currency: text(r, 2)?,
                    sales: sales
                        .parse::<Decimal>()
                        .map_err(|e| StoreError::ledger(format!("nexus total {sales:?}: {e}")))?,
                    count: r.try_get(4).map_err(pg_err)?,
                })
            })
            .collect()
    }

    fn add_nexus_month(
        &self,
        scope: &Scope,
        tx: &TransactionRecord,
        change: &MonthChange,
    ) -> Result<()> {
        let (gross, taxable) = (change.gross.to_string(), change.taxable.to_string());
        self.later(
            "INSERT INTO nexus_months (account, live, country, region, currency, month, gross, taxable, count)
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::numeric, $8::text::numeric, $9)
             ON CONFLICT (account, live, country, region, currency, month)
             DO UPDATE SET gross = nexus_months.gross + excluded.gross,
                 taxable = nexus_months.taxable + excluded.taxable,
                 count = nexus_months.count + excluded.count",
            vec![
                Box::new(scope.account.to_string()),
                Box::new(scope.live),
                Box::new(tx.country.clone()),
                Box::new(tx.region.clone()),
                Box::new(tx.currency.clone()),
                Box::new(change.month.clone()),
                Box::new(gross),
                Box::new(taxable),
                Box::new(change.count),
            ],
        )
    }

    fn nexus_months(&self, scope: &Scope, country: &str) -> Result<Vec<NexusMonth>> {
        let rows = self.rows(
            r#"SELECT region, currency, month, gross::text, taxable::text, count FROM nexus_months
               WHERE account = $1 AND live = $2 AND country = $3
               ORDER BY region COLLATE "C", currency COLLATE "C", month COLLATE "C""#,
            &[&&*scope.account, &scope.live, &country],
        )?;
        let number = |r: &Row, i: usize| -> Result<Decimal> {
            let t = text(r, i)?;
            t.parse::<Decimal>()
                .map_err(|e| StoreError::ledger(format!("monthly sales {t:?}: {e}")))
        };
        rows.iter()
            .map(|r| {
                Ok(NexusMonth {
                    country: country.to_string(),
                    region: text(r, 0)?,
                    currency: text(r, 1)?,
                    month: text(r, 2)?,
                    gross: number(r, 3)?,
                    taxable: number(r, 4)?,
                    count: r.try_get(5).map_err(pg_err)?,
                })
            })
            .collect()
    }

    fn add_liability_day(&self, scope: &Scope, change: &DayChange) -> Result<()> {
        super::days::add_day(self, scope, change)
    }

    fn liability_days(
        &self,
        scope: &Scope,
        days: (i64, i64),
        region: Option<&str>,
    ) -> Result<(Vec<DayRow>, Vec<DayTotal>)> {
        super::days::read_days(self, scope, days, region)
    }
}
