//! The ledger's statements in SQLite: customers, products, calculations, transactions,
//! refunds and nexus totals. Every statement is prepared once per connection and cached.
//! Calculations are read in any packing format ([`super::super::pack`]); nexus totals are
//! sealed text (`<sales> <count> <digest>`).

use rusqlite::{params, Connection, OptionalExtension};
use rust_decimal::Decimal;
use serde::Deserialize;

use super::super::days::{DayChange, DayRow, DayTotal};
use super::super::months::MonthChange;
use super::super::pack::unpack;
use super::super::rules::{NexusChange, Refunded};
use super::super::seal::{damaged, digest, from_json, to_json};
use super::super::*;
use super::sqlite_err;

/// The statements, over one connection (a reader's, or the writer's inside its
/// transaction).
pub(super) struct Sql<'a>(pub(super) &'a Connection);

/// Every row's column 0, a sealed record.
pub(super) fn query_all<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(sqlite_err)?;
    let rows = stmt
        .query_map(params, |r| r.get::<_, String>(0))
        .map_err(sqlite_err)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(from_json(&row.map_err(sqlite_err)?)?);
    }
    Ok(out)
}

/// The first row's column 0, a sealed record, if there is a row.
pub(super) fn query_one<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<T>> {
    let data: Option<String> = conn
        .prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row(params, |r| r.get(0)).optional())
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

/// One calculation (or platform calculation), packed or not.
pub(super) fn query_packed<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(sqlite_err)?;
    let mut rows = stmt.query(params).map_err(sqlite_err)?;
    match rows.next().map_err(sqlite_err)? {
        None => Ok(None),
        Some(row) => {
            let text = unpack(row.get_ref(0).map_err(sqlite_err)?)?;
            from_json(&text).map(Some)
        }
    }
}

/// Runs a statement that changes rows; how many it changed.
pub(super) fn run(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(sqlite_err)
}

/// Runs an insert or update whose unique index keeps the client's id of `what` (`value`)
/// once: a violation is [`StoreError::Duplicate`].
pub(super) fn run_unique(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    what: RecordKind,
    value: &str,
) -> Result<()> {
    match conn
        .prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(params))
    {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(StoreError::Duplicate {
            what,
            value: value.to_string(),
        }),
        Err(e) => Err(sqlite_err(e)),
    }
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

/// A nexus total as stored in `sales`: `<sales> <count> <digest of both>`.
pub(super) fn seal_nexus(sales: Decimal, count: i64) -> String {
    let text = format!("{} {count}", sales.normalize());
    let sum = digest(&text);
    format!("{text} {sum}")
}

/// The sales of a stored nexus total, once its digest matches and its count is the row's.
pub(in crate::store) fn unseal_nexus(stored: &str, count: i64) -> Result<Decimal> {
    let (text, sum) = stored
        .rsplit_once(' ')
        .ok_or_else(|| damaged("nexus total without a digest"))?;
    if sum != digest(text) {
        return Err(damaged("nexus total digest mismatch"));
    }
    let (sales, n) = text.split_once(' ').ok_or_else(|| damaged("nexus total"))?;
    if n.parse::<i64>().ok() != Some(count) {
        return Err(damaged("nexus count"));
    }
    sales.parse::<Decimal>().map_err(|_| damaged("nexus total"))
}

impl Statements for Sql<'_> {
    fn insert_customer(&self, scope: &Scope, c: &CustomerRecord) -> Result<()> {
        run_unique(
            self.0,
            "INSERT INTO customers (account, live, id, reference_customer_id, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![&*scope.account, scope.live, c.id, c.reference_customer_id, to_json(c)?],
            RecordKind::Customer,
            c.reference_customer_id.as_deref().unwrap_or(""),
        )
    }

    fn customer(&self, scope: &Scope, key: Key) -> Result<Option<CustomerRecord>> {
        let (sql, id) = key.pick(
            "SELECT data FROM customers WHERE account = ?1 AND live = ?2 AND id = ?3 AND deleted_at IS NULL",
            "SELECT data FROM customers WHERE account = ?1 AND live = ?2 AND reference_customer_id = ?3 AND deleted_at IS NULL",
        );
        query_one(self.0, sql, params![&*scope.account, scope.live, id])
    }

    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool> {
        let n = run(
            self.0,
            "UPDATE customers SET deleted_at = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3 AND deleted_at IS NULL",
            params![&*scope.account, scope.live, id, at],
        )?;
        Ok(n == 1)
    }

    fn insert_product(&self, scope: &Scope, p: &ProductRecord) -> Result<()> {
        run_unique(
            self.0,
            "INSERT INTO products (account, live, id, data) VALUES (?1, ?2, ?3, ?4)",
            params![
                &*scope.account,
                scope.live,
                p.reference_product_id,
                to_json(p)?
            ],
            RecordKind::Product,
            &p.reference_product_id,
        )
    }

    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>> {
        query_one(
            self.0,
            "SELECT data FROM products WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
    }

    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool> {
        let n = run(
            self.0,
            "DELETE FROM products WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )?;
        Ok(n == 1)
    }

    fn products(&self, scope: &Scope, page: Page) -> Result<Vec<ProductRecord>> {
        query_all(
            self.0,
            "SELECT data FROM products WHERE account = ?1 AND live = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
            params![&*scope.account, scope.live, page.after, page.limit],
        )
    }

    fn calculation(&self, scope: &Scope, id: &str, now: i64) -> Result<Option<CalculationRecord>> {
        query_packed(
            self.0,
            "SELECT data FROM calculations WHERE account = ?1 AND live = ?2 AND id = ?3 AND expires_at > ?4",
            params![&*scope.account, scope.live, id, now],
        )
    }

    fn count_calculations(&self, scope: &Scope) -> Result<StoredCalculations> {
        // `length` of a blob reads its size, not its bytes.
        let (count, bytes): (i64, i64) = self
            .0
            .query_row(
                "SELECT (SELECT count(*) FROM calculations WHERE account = ?1 AND live = ?2)
                      + (SELECT count(*) FROM platform_calculations WHERE account = ?1 AND live = ?2),
                        (SELECT coalesce(sum(length(data)), 0) FROM calculations WHERE account = ?1 AND live = ?2)
                      + (SELECT coalesce(sum(length(data)), 0) FROM platform_calculations WHERE account = ?1 AND live = ?2)",
                params![&*scope.account, scope.live],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sqlite_err)?;
        Ok(StoredCalculations {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        })
    }

    fn insert_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()> {
        let kind = tx.platform.as_ref().map_or("order", |p| p.kind.as_str());
        run_unique(
            self.0,
            "INSERT INTO transactions (account, live, id, reference_order_id, data, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![&*scope.account, scope.live, tx.id, tx.reference_order_id, to_json(tx)?, kind],
            RecordKind::Transaction,
            &tx.reference_order_id,
        )
    }

    fn transaction(&self, scope: &Scope, id: &str) -> Result<Option<TransactionRecord>> {
        query_one(
            self.0,
            "SELECT data FROM transactions WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
    }

    fn transaction_of_order(
        &self,
        scope: &Scope,
        order_id: &str,
        kind: &str,
    ) -> Result<Option<TransactionRecord>> {
        query_one(
            self.0,
            "SELECT data FROM transactions WHERE account = ?1 AND live = ?2 AND reference_order_id = ?3 AND kind = ?4",
            params![&*scope.account, scope.live, order_id, kind],
        )
    }

    fn update_transaction(&self, scope: &Scope, tx: &TransactionRecord) -> Result<()> {
        run(
            self.0,
            "UPDATE transactions SET data = ?4, deleted_at = ?5 WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, tx.id, to_json(tx)?, tx.deleted_at],
        )
        .map(drop)
    }

    fn retire_order_id(&self, scope: &Scope, id: &str) -> Result<()> {
        run(
            self.0,
            "UPDATE transactions SET kind = 'replaced:' || id WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
        .map(drop)
    }

    fn refunded(&self, scope: &Scope, tx_id: &str) -> Result<Option<Refunded>> {
        let kept: Option<String> = self
            .0
            .prepare_cached(
                "SELECT refunded FROM transactions WHERE account = ?1 AND live = ?2 AND id = ?3",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![&*scope.account, scope.live, tx_id], |r| r.get(0))
                    .optional()
            })
            .map_err(sqlite_err)?
            .flatten();
        kept.map(|text| from_json(&text)).transpose()
    }

    fn set_refunded(&self, scope: &Scope, tx_id: &str, refunded: &Refunded) -> Result<()> {
        run(
            self.0,
            "UPDATE transactions SET refunded = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, tx_id, to_json(refunded)?],
        )
        .map(drop)
    }

    fn insert_refund(&self, scope: &Scope, r: &RefundRecord, seq: i64) -> Result<()> {
        run_unique(
            self.0,
            "INSERT INTO refunds (account, live, id, transaction_id, seq, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![&*scope.account, scope.live, r.id, r.transaction_id, seq, to_json(r)?],
            RecordKind::Refund,
            &r.id,
        )
    }

    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>> {
        query_one(
            self.0,
            "SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
    }

    fn update_refund(&self, scope: &Scope, r: &RefundRecord) -> Result<()> {
        run(
            self.0,
            "UPDATE refunds SET data = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, r.id, to_json(r)?],
        )
        .map(drop)
    }

    fn refunds(&self, scope: &Scope, tx_id: &str, seqs: (i64, i64)) -> Result<Vec<RefundRecord>> {
        query_all(
            self.0,
            "SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND transaction_id = ?3 AND seq > ?4 ORDER BY seq LIMIT ?5",
            params![&*scope.account, scope.live, tx_id, seqs.0, seqs.1],
        )
    }

    fn transactions_sealed(&self, scope: &Scope, page: Page) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .0
            .prepare_cached(
                "SELECT id, data FROM transactions WHERE account = ?1 AND live = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
            )
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map(
                params![&*scope.account, scope.live, page.after, page.limit],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sqlite_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(sqlite_err)
    }

    fn refunds_by_id(&self, scope: &Scope, page: Page) -> Result<Vec<RefundRecord>> {
        query_all(
            self.0,
            "SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
            params![&*scope.account, scope.live, page.after, page.limit],
        )
    }

    fn refund_seq(&self, scope: &Scope, tx_id: &str, id: &str) -> Result<Option<i64>> {
        self.0
            .prepare_cached(
                "SELECT seq FROM refunds WHERE account = ?1 AND live = ?2 AND id = ?3 AND transaction_id = ?4",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![&*scope.account, scope.live, id, tx_id], |r| r.get(0))
                    .optional()
            })
            .map_err(sqlite_err)
    }

    fn add_nexus(&self, account: &str, tx: &TransactionRecord, change: NexusChange) -> Result<()> {
        let current: Option<(String, i64)> = self
            .0
            .prepare_cached(
                "SELECT sales, count FROM nexus WHERE account = ?1 AND country = ?2 AND region = ?3 AND currency = ?4",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![account, tx.country, tx.region, tx.currency], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
            })
            .map_err(sqlite_err)?;
        let stored = match current {
            Some((s, c)) => (unseal_nexus(&s, c)?, c),
            None => (Decimal::ZERO, 0),
        };
        let (sales, count) = change.apply(stored);
        run(
            self.0,
            "INSERT INTO nexus (account, country, region, currency, sales, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (account, country, region, currency) DO UPDATE SET sales = excluded.sales, count = excluded.count",
            params![account, tx.country, tx.region, tx.currency, seal_nexus(sales, count), count],
        )
        .map(drop)
    }

    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>> {
        let mut stmt = self
            .0
            .prepare_cached(
                "SELECT country, region, currency, sales, count FROM nexus WHERE account = ?1 ORDER BY country, region, currency",
            )
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map(params![account], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .map_err(sqlite_err)?;
        let mut out = Vec::new();
        for row in rows {
            let (country, region, currency, sales, count) = row.map_err(sqlite_err)?;
            out.push(NexusTotal {
                country,
                region,
                currency,
                sales: unseal_nexus(&sales, count)?,
                count,
            });
        }
        Ok(out)
    }

    fn add_nexus_month(
        &self,
        scope: &Scope,
        tx: &TransactionRecord,
        change: &MonthChange,
    ) -> Result<()> {
        let current: Option<(String, i64)> = self
            .0
            .prepare_cached(
                "SELECT sales, count FROM nexus_months WHERE account = ?1 AND live = ?2 AND country = ?3 AND region = ?4 AND currency = ?5 AND month = ?6",
            )
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![&*scope.account, scope.live, tx.country, tx.region, tx.currency, change.month],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .map_err(sqlite_err)?;
        let (gross, taxable, count) = match current {
            Some((s, c)) => {
                let (g, t) = unseal_month(&s, c)?;
                (g + change.gross, t + change.taxable, c + change.count)
            }
            None => (change.gross, change.taxable, change.count),
        };
        run(
            self.0,
            "INSERT INTO nexus_months (account, live, country, region, currency, month, sales, count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (account, live, country, region, currency, month)
             DO UPDATE SET sales = excluded.sales, count = excluded.count",
            params![
                &*scope.account,
                scope.live,
                tx.country,
                tx.region,
                tx.currency,
                change.month,
                seal_month(gross, taxable, count),
                count
            ],
        )
        .map(drop)
    }

    fn nexus_months(&self, scope: &Scope, country: &str) -> Result<Vec<NexusMonth>> {
        let mut stmt = self
            .0
            .prepare_cached(
                "SELECT region, currency, month, sales, count FROM nexus_months
                 WHERE account = ?1 AND live = ?2 AND country = ?3 ORDER BY region, currency, month",
            )
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map(params![&*scope.account, scope.live, country], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .map_err(sqlite_err)?;
        let mut out = Vec::new();
        for row in rows {
            let (region, currency, month, sales, count) = row.map_err(sqlite_err)?;
            let (gross, taxable) = unseal_month(&sales, count)?;
            out.push(NexusMonth {
                country: country.to_string(),
                region,
                currency,
                month,
                gross,
                taxable,
                count,
            });
        }
        Ok(out)
    }

    fn add_liability_day(&self, scope: &Scope, change: &DayChange) -> Result<()> {
        super::days::add_day(self.0, scope, change)
    }

    fn liability_days(
        &self,
        scope: &Scope,
        days: (i64, i64),
        region: Option<&str>,
    ) -> Result<(Vec<DayRow>, Vec<DayTotal>)> {
        super::days::read_days(self.0, scope, days, region)
    }
}

/// A month's sales as stored in `nexus_months.sales`: `<gross> <taxable> <count> <digest
/// of the three>`.
pub(super) fn seal_month(gross: Decimal, taxable: Decimal, count: i64) -> String {
    let text = format!("{} {} {count}", gross.normalize(), taxable.normalize());
    let sum = digest(&text);
    format!("{text} {sum}")
}

/// The gross and taxable sales of a stored month, once its digest matches and its count is
/// the row's.
pub(in crate::store) fn unseal_month(stored: &str, count: i64) -> Result<(Decimal, Decimal)> {
    let (text, sum) = stored
        .rsplit_once(' ')
        .ok_or_else(|| damaged("monthly sales without a digest"))?;
    if sum != digest(text) {
        return Err(damaged("monthly sales digest mismatch"));
    }
    let mut parts = text.split(' ');
    let (gross, taxable, n) = (parts.next(), parts.next(), parts.next());
    if n.and_then(|n| n.parse::<i64>().ok()) != Some(count) || parts.next().is_some() {
        return Err(damaged("monthly sales count"));
    }
    let number = |s: Option<&str>| {
        s.and_then(|s| s.parse::<Decimal>().ok())
            .ok_or_else(|| damaged("monthly sales"))
    };
    Ok((number(gross)?, number(taxable)?))
}

#[cfg(test)]
mod packed_calculation_tests {
    use super::super::super::seal::from_json;
    use super::super::inspect::inspect;
    use super::super::SqliteStore;
    use super::*;

    #[test]
    fn calculations_are_stored_packed_and_older_text_ones_still_read() {
        let dir = std::env::temp_dir().join(format!("levy-packed-{}", crate::random::hex128()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite").display().to_string();
        let scope = Scope {
            account: "shop".into(),
            live: false,
        };
        let mut record: CalculationRecord = from_json(crate::store::pack::SAMPLE).unwrap();
        record.expires_at = crate::clock::now() + 3_600;
        {
            let store = SqliteStore::open(&path).unwrap();
            store
                .submit_calculation(&scope, &record)
                .unwrap()
                .wait()
                .unwrap();
            assert_eq!(
                store
                    .calculation(&scope, &record.id, crate::clock::now())
                    .unwrap(),
                Some(record.clone())
            );
        }
        let conn = Connection::open(&path).unwrap();
        let (kind, len, format): (String, i64, Vec<u8>) = conn
            .query_row(
                "SELECT typeof(data), length(data), substr(data, 1, 1) FROM calculations",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        // Packed in format 3: a BLOB under a quarter of the record's 1,500 bytes of sealed
        // JSON.
        let json = to_json(&record).unwrap();
        assert_eq!(kind, "blob");
        assert_eq!(format, [crate::store::pack::FORMAT_LAYOUT_2_DICT_2]);
        assert!((len as usize) < json.len() / 4, "{len} of {}", json.len());
        drop(conn);
        // A calculation an earlier levy packed in format 2 or 1, or stored as sealed JSON
        // text, reads the same.
        use rusqlite::types::Value as Stored;
        for earlier in [
            Stored::Blob(crate::store::pack::pack_record(&record).unwrap()),
            Stored::Blob(crate::store::pack::pack(&json)),
            Stored::Text(json.clone()),
        ] {
            let conn = Connection::open(&path).unwrap();
            conn.execute("UPDATE calculations SET data = ?1", [earlier])
                .unwrap();
            drop(conn);
            let store = SqliteStore::open(&path).unwrap();
            assert_eq!(
                store
                    .calculation(&scope, &record.id, crate::clock::now())
                    .unwrap(),
                Some(record.clone())
            );
        }
        // The ledger report reads every form, and sees a damaged packed one of each format:
        // reading it is an error, never the record with a changed byte.
        assert!(inspect(&path).unwrap().damaged.is_empty());
        for mut packed in [
            crate::store::pack::pack(&json),
            crate::store::pack::pack_record(&record).unwrap(),
            crate::store::pack::pack_calculation(&record).unwrap(),
        ] {
            let conn = Connection::open(&path).unwrap();
            let last = packed.len() - 1;
            packed[last] ^= 0x20;
            conn.execute("UPDATE calculations SET data = ?1", [&packed])
                .unwrap();
            drop(conn);
            assert_eq!(inspect(&path).unwrap().damaged.len(), 1);
            let store = SqliteStore::open(&path).unwrap();
            assert!(store
                .calculation(&scope, &record.id, crate::clock::now())
                .is_err());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
