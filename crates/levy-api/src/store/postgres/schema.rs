//! The PostgreSQL ledger's schema: its migrations, and what makes a database a levy ledger
//! (the `levy_ledger` table, an encoding that holds every character) before anything is
//! written; and the purge of expired calculations.

use deadpool_postgres::Pool;

use super::super::StoreError;
use super::{begin, pg_err, pool_err, Conn};

/// The current schema version (`levy_ledger.schema_version`).
pub(super) const SCHEMA_VERSION: i64 = 6;

/// The advisory lock taken while the schema is checked and migrated, so that processes
/// starting together migrate once: "LEVY" in ASCII.
pub(super) const MIGRATION_LOCK: i64 = 0x4C45_5659;

/// Migrations, in order; entry `i` brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE customers (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    reference_customer_id TEXT, data TEXT NOT NULL, deleted_at BIGINT,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX customers_reference ON customers (account, live, reference_customer_id)
    WHERE reference_customer_id IS NOT NULL AND deleted_at IS NULL;
CREATE TABLE products (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE TABLE calculations (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    expires_at BIGINT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX calculations_expiry ON calculations (expires_at);
CREATE TABLE transactions (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    reference_order_id TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    deleted_at BIGINT,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id, kind);
CREATE TABLE refunds (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    transaction_id TEXT NOT NULL, seq BIGINT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX refunds_transaction ON refunds (account, live, transaction_id, seq);
CREATE TABLE nexus (
    account TEXT NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL, currency TEXT NOT NULL,
    sales NUMERIC NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY (account, country, region, currency)
);
CREATE TABLE merchants (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    reference_merchant_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX merchants_reference ON merchants (account, live, reference_merchant_id);
CREATE TABLE platform_calculations (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    expires_at BIGINT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX platform_calculations_expiry ON platform_calculations (expires_at);
CREATE TABLE certificates (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, customer_id TEXT, data TEXT NOT NULL
);
CREATE INDEX certificates_account ON certificates (account, customer_id);
CREATE TABLE certificate_documents (
    certificate_id TEXT NOT NULL PRIMARY KEY, content_type TEXT NOT NULL, bytes BYTEA NOT NULL
);
CREATE TABLE certificate_requests (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, data TEXT NOT NULL
);
CREATE INDEX certificate_requests_account ON certificate_requests (account, id);
CREATE TABLE secrets (name TEXT NOT NULL PRIMARY KEY, value BYTEA NOT NULL);
"#,
    // Schema 2: each transaction's running refund total (`crate::ledger::Refunded`,
    // sealed), so that a refund reads one record instead of every earlier refund. NULL
    // until the transaction's first refund, reversal or deletion computes it.
    "ALTER TABLE transactions ADD COLUMN refunded TEXT;",
    // Schema 3: the outbox, as in the SQLite ledger (its schema 4), with every record already
    // stored in it: transactions, refunds, then deletions and reversals.
    r#"
CREATE TABLE outbox (
    seq BIGSERIAL PRIMARY KEY,
    account TEXT NOT NULL, live BOOLEAN NOT NULL,
    kind TEXT NOT NULL, record_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'unsent', note TEXT
);
CREATE INDEX outbox_unsent ON outbox (live, state, seq);
INSERT INTO outbox (account, live, kind, record_id)
    SELECT account, live, 'transaction', id FROM transactions ORDER BY account, live, id;
INSERT INTO outbox (account, live, kind, record_id)
    SELECT account, live, 'refund', id FROM refunds ORDER BY account, live, transaction_id, seq;
INSERT INTO outbox (account, live, kind, record_id)
    SELECT account, live, 'deletion', id FROM transactions
    WHERE deleted_at IS NOT NULL ORDER BY account, live, id;
INSERT INTO outbox (account, live, kind, record_id)
    SELECT account, live, 'reversal', id FROM refunds
    WHERE (data::jsonb -> 'record' ->> 'reversed_at') IS NOT NULL
    ORDER BY account, live, transaction_id, seq;
"#,
    // Schema 4: registrations, as in the SQLite ledger (its schema 7).
    r#"
CREATE TABLE IF NOT EXISTS registrations (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX IF NOT EXISTS registrations_kind ON registrations (account, live, kind);
"#,
    // Schema 5: each place's sales per calendar month, as in the SQLite ledger (its schema
    // 8), in numeric columns; `fill_months` computes them from the records already stored.
    r#"
DROP TABLE IF EXISTS nexus_months;
CREATE TABLE nexus_months (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL,
    currency TEXT NOT NULL, month TEXT NOT NULL,
    gross NUMERIC NOT NULL, taxable NUMERIC NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY (account, live, country, region, currency, month)
);
"#,
    // Schema 6: the daily liability totals, as in the SQLite ledger (its schema 9), their
    // amounts `numeric[]` (16 of a row: sales then refunds; 4 sums of a state); `fill_days`
    // computes them from the records already stored.
    r#"
DROP TABLE IF EXISTS liability_rows;
CREATE TABLE liability_rows (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, day BIGINT NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, code TEXT NOT NULL, name TEXT NOT NULL,
    authority TEXT NOT NULL, outlet TEXT NOT NULL, amounts NUMERIC[] NOT NULL,
    entries BIGINT NOT NULL,
    PRIMARY KEY (account, live, day, country, region, code, name, authority, outlet)
);
DROP TABLE IF EXISTS liability_totals;
CREATE TABLE liability_totals (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, day BIGINT NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, currency TEXT NOT NULL, table_hash TEXT NOT NULL,
    sums NUMERIC[] NOT NULL, transactions BIGINT NOT NULL, refunds BIGINT NOT NULL,
    reversals BIGINT NOT NULL,
    PRIMARY KEY (account, live, day, country, region, currency, table_hash)
);
"#,
];

/// The migration after which [`fill_days`] runs (the one that makes schema 6).
const DAYS_MIGRATION: usize = 5;

/// Schema 6 (and a copied ledger): the daily liability totals of every transaction stored,
/// with its refunds and reversals (none of a deleted one), summed in memory and written
/// once ([`super::super::days::DaySums`]).
pub(super) async fn fill_days(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
    use super::super::days::DaySums;
    use super::super::seal::from_json;
    use super::super::TransactionRecord;

    let mut refunds = refunds_by_transaction(tx).await?;
    let mut sums = DaySums::default();
    let rows = tx
        .query("SELECT account, live, data FROM transactions", &[])
        .await
        .map_err(pg_err)?;
    for r in &rows {
        let account: String = r.try_get(0).map_err(pg_err)?;
        let live: bool = r.try_get(1).map_err(pg_err)?;
        let data: String = r.try_get(2).map_err(pg_err)?;
        let t: TransactionRecord = from_json(&data)?;
        let of = refunds.remove(&(account.clone(), live, t.id.clone()));
        sums.add(&account, live, &t, of.as_deref().unwrap_or(&[]));
    }
    super::days::write_sums(tx, &sums).await
}

/// Every refund stored, by its transaction's `(account, live, id)`, in their order.
async fn refunds_by_transaction(
    tx: &deadpool_postgres::Transaction<'_>,
) -> Result<
    std::collections::HashMap<(String, bool, String), Vec<super::super::RefundRecord>>,
    StoreError,
> {
    let mut refunds: std::collections::HashMap<_, Vec<super::super::RefundRecord>> =
        std::collections::HashMap::new();
    let rows = tx
        .query(
            "SELECT account, live, transaction_id, data FROM refunds ORDER BY account, live, transaction_id, seq",
            &[],
        )
        .await
        .map_err(pg_err)?;
    for r in &rows {
        let key = (
            r.try_get(0).map_err(pg_err)?,
            r.try_get(1).map_err(pg_err)?,
            r.try_get(2).map_err(pg_err)?,
        );
        let data: String = r.try_get(3).map_err(pg_err)?;
        refunds
            .entry(key)
            .or_default()
            .push(super::super::seal::from_json(&data)?);
    }
    Ok(refunds)
}

/// The migration after which [`fill_months`] runs (the one that makes schema 5).
const MONTHS_MIGRATION: usize = 4;

/// Schema 5: the monthly sales of every transaction already stored, with its refunds,
/// reversals and deletion, as the recipes would have written them
/// ([`super::super::months::months_of`]), summed per month and written once.
async fn fill_months(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
    use std::collections::BTreeMap;

    use rust_decimal::Decimal;

    use super::super::months::months_of;
    use super::super::seal::from_json;
    use super::super::TransactionRecord;

    let refunds = refunds_by_transaction(tx).await?;
    type Key = (String, bool, String, String, String, String);
    let mut months: BTreeMap<Key, (Decimal, Decimal, i64)> = BTreeMap::new();
    let rows = tx
        .query("SELECT account, live, data FROM transactions", &[])
        .await
        .map_err(pg_err)?;
    for r in &rows {
        let account: String = r.try_get(0).map_err(pg_err)?;
        let live: bool = r.try_get(1).map_err(pg_err)?;
        let data: String = r.try_get(2).map_err(pg_err)?;
        let t: TransactionRecord = from_json(&data)?;
        let of = refunds.get(&(account.clone(), live, t.id.clone()));
        for change in months_of(&t, of.map_or(&[][..], Vec::as_slice)) {
            let key = (
                account.clone(),
                live,
                t.country.clone(),
                t.region.clone(),
                t.currency.clone(),
                change.month,
            );
            let sum = months.entry(key).or_default();
            sum.0 += change.gross;
            sum.1 += change.taxable;
            sum.2 += change.count;
        }
    }
    for ((account, live, country, region, currency, month), (gross, taxable, count)) in months {
        tx.execute(
            "INSERT INTO nexus_months (account, live, country, region, currency, month, gross, taxable, count)
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::numeric, $8::text::numeric, $9)",
            &[&account, &live, &country, &region, &currency, &month, &gross.to_string(), &taxable.to_string(), &count],
        )
        .await
        .map_err(pg_err)?;
    }
    Ok(())
}

/// Checks that the database is a levy ledger (or empty, and makes it one) and brings its
/// schema up to date, under an advisory lock so that processes starting together take
/// turns.
pub(super) async fn migrate(pool: Pool, target: String) -> Result<(), StoreError> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = begin(&mut client).await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg_err)?;
    let marked: bool = tx
        .query_one("SELECT to_regclass('levy_ledger') IS NOT NULL", &[])
        .await
        .map_err(pg_err)?
        .try_get(0)
        .map_err(pg_err)?;
    // Text columns hold what requests send: an encoding other than UTF8 (or SQL_ASCII,
    // which stores bytes as they come) would refuse some characters with an error.
    let encoding: String = tx
        .query_one("SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()", &[])
        .await
        .map_err(pg_err)?
        .try_get(0)
        .map_err(pg_err)?;
    if encoding != "UTF8" && encoding != "SQL_ASCII" {
        return Err(StoreError::NotALedger {
            path: target,
            why: format!(
                "its encoding is {encoding}, which cannot hold every character a request may send; create the database with ENCODING 'UTF8' (createdb -E UTF8 -T template0)"
            ),
        });
    }
    let version: i64 = if marked {
        let row = tx
            .query_one("SELECT application, schema_version FROM levy_ledger", &[])
            .await
            .map_err(pg_err)?;
        let application: String = row.try_get(0).map_err(pg_err)?;
        if application != "levy" {
            return Err(StoreError::NotALedger {
                path: target,
                why: format!("its levy_ledger table names the application {application:?}"),
            });
        }
        row.try_get(1).map_err(pg_err)?
    } else {
        let tables: i64 = tx
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )
            .await
            .map_err(pg_err)?
            .try_get(0)
            .map_err(pg_err)?;
        if tables > 0 {
            return Err(StoreError::NotALedger {
                path: target,
                why: format!(
                    "its schema holds {tables} tables of something else (no levy_ledger table)"
                ),
            });
        }
        tx.batch_execute(
            "CREATE TABLE levy_ledger (
                 one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
                 application TEXT NOT NULL,
                 schema_version BIGINT NOT NULL
             );
             INSERT INTO levy_ledger (application, schema_version) VALUES ('levy', 0);",
        )
        .await
        .map_err(pg_err)?;
        0
    };
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tx.batch_execute(sql).await.map_err(pg_err)?;
        if i == MONTHS_MIGRATION {
            fill_months(&tx).await?;
        }
        if i == DAYS_MIGRATION {
            fill_days(&tx).await?;
        }
    }
    tx.execute(
        "UPDATE levy_ledger SET schema_version = $1",
        &[&SCHEMA_VERSION],
    )
    .await
    .map_err(pg_err)?;
    tx.commit().await.map_err(pg_err)
}

/// Deletes expired calculations (they can no longer become transactions).
pub(super) async fn purge(pool: &Pool) -> Result<(), StoreError> {
    let client = pool.get().await.map_err(pool_err)?;
    let now = crate::clock::now();
    client
        .exec("DELETE FROM calculations WHERE expires_at < $1", &[&now])
        .await
        .map_err(pg_err)?;
    client
        .exec(
            "DELETE FROM platform_calculations WHERE expires_at < $1",
            &[&now],
        )
        .await
        .map_err(pg_err)?;
    Ok(())
}
