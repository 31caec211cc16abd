//! The ledger's statements in PostgreSQL: customers, products, calculations, transactions,
//! refunds and nexus totals. Each statement is prepared once per connection and awaited on
//! the store's runtime from the blocking thread its read or write runs on, within the
//! bound of its operation ([`Op::answer`]). Nexus totals are `numeric`, added to in SQL.

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

/// The statements, over a connection or a transaction (`C`), awaited on `rt` within the
/// bounds of `op`. `lock` is set inside a write: reads of the rows a write changes then
/// lock them (`FOR UPDATE`).
pub(super) struct Pg<'a, C> {
    c: &'a C,
    rt: &'a Handle,
    op: &'a Op,
    pub(super) lock: bool,
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
        Pg { c, rt, op, lock }
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
        self.rt
            .block_on(self.op.answer(self.c.opt(sql, params), pg_err))
    }

    /// Every row.
    pub(super) fn rows(&self, sql: &'static str, params: Params<'_>) -> Result<Vec<Row>> {
        self.rt
            .block_on(self.op.answer(self.c.all(sql, params), pg_err))
    }

    /// Runs a statement that changes rows; how many it changed.
    pub(super) fn exec(&self, sql: &'static str, params: Params<'_>) -> Result<u64> {
        self.rt
            .block_on(self.op.answer(self.c.exec(sql, params), pg_err))
    }

    /// Runs an insert or update whose unique index keeps `what`'s client id (`value`) once.
    pub(super) fn exec_unique(
        &self,
        sql: &'static str,
        params: Params<'_>,
        what: RecordKind,
        value: &str,
    ) -> Result<()> {
        self.rt
            .block_on(
                self.op
                    .answer(self.c.exec(sql, params), conflict(what, value)),
            )
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
        let sql = locking!(
            self,
            "SELECT data FROM transactions WHERE account = $1 AND live = $2 AND id = $3"
        );
        self.one(sql, &[&&*scope.account, &scope.live, &id])
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

    fn refunded(&self, scope: &Scope, tx_id: &str) -> Result<Option<Refunded>> {
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
        self.exec(
            "UPDATE transactions SET refunded = $4 WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &tx_id, &data],
        )
        .map(drop)
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
        self.exec(
            "INSERT INTO nexus (account, country, region, currency, sales, count)
             VALUES ($1, $2, $3, $4, $5::text::numeric, $6)
             ON CONFLICT (account, country, region, currency)
             DO UPDATE SET sales = nexus.sales + excluded.sales, count = nexus.count + excluded.count",
            &[&account, &tx.country, &tx.region, &tx.currency, &sales, &change.count],
        )
        .map(drop)
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
        self.exec(
            "INSERT INTO nexus_months (account, live, country, region, currency, month, gross, taxable, count)
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::numeric, $8::text::numeric, $9)
             ON CONFLICT (account, live, country, region, currency, month)
             DO UPDATE SET gross = nexus_months.gross + excluded.gross,
                 taxable = nexus_months.taxable + excluded.taxable,
                 count = nexus_months.count + excluded.count",
            &[
                &&*scope.account,
                &scope.live,
                &tx.country,
                &tx.region,
                &tx.currency,
                &change.month,
                &gross,
                &taxable,
                &change.count,
            ],
        )
        .map(drop)
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
