//! The PostgreSQL ledger's schema: its migrations, and what makes a database a levy ledger
//! (the `levy_ledger` table, an encoding that holds every character) before anything is
//! written; and the purge of expired calculations.

use std::collections::HashMap;

use deadpool_postgres::Pool;

use super::super::seal::from_json;
use super::super::{tables, RefundRecord, RegistrationRecord, StoreError, TransactionRecord};
use super::{begin_long, pg_err, pool_err, Conn};

/// The current schema version (`levy_ledger.schema_version`).
pub(super) const SCHEMA_VERSION: i64 = 8;

/// The advisory lock taken while the schema is checked and migrated, so that processes
/// starting together migrate once: "LEVY" in ASCII.
pub(super) const MIGRATION_LOCK: i64 = 0x4C45_5659;

/// PostgreSQL's own tables, whose layout differs from SQLite's first ones (its
/// transactions had a `kind` and its merchants a `status` from the start; refunds are unique
/// by number) or by design (monthly sales as numbers, not sealed text).
const TRANSACTIONS: &str = "CREATE TABLE transactions (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    reference_order_id TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    deleted_at BIGINT,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id, kind);
";

/// Refunds unique by their number within a transaction.
const REFUNDS_INDEX: &str =
    "CREATE UNIQUE INDEX refunds_transaction ON refunds (account, live, transaction_id, seq);\n";

/// Merchants, with their status.
const MERCHANTS: &str = "CREATE TABLE merchants (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, id TEXT NOT NULL,
    reference_merchant_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX merchants_reference ON merchants (account, live, reference_merchant_id);
";

/// Schema 3's filling of the outbox: every record already stored, transactions, refunds,
/// then deletions and reversals.
const FILL_OUTBOX: &str = "INSERT INTO outbox (account, live, kind, record_id)
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
";

/// Schema 5's monthly sales, in numeric columns.
const NEXUS_MONTHS: &str = "DROP TABLE IF EXISTS nexus_months;
CREATE TABLE nexus_months (
    account TEXT NOT NULL, live BOOLEAN NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL,
    currency TEXT NOT NULL, month TEXT NOT NULL,
    gross NUMERIC NOT NULL, taxable NUMERIC NOT NULL, count BIGINT NOT NULL,
    PRIMARY KEY (account, live, country, region, currency, month)
);
";

/// Migrations, in order; entry `i` brings the schema from version `i` to `i + 1`. The
/// shared definitions ([`tables`]) in PostgreSQL's words, and PostgreSQL's own.
fn migrations() -> [String; SCHEMA_VERSION as usize] {
    let t = |parts: &[&str]| tables::render(&parts.concat(), &tables::POSTGRES);
    [
        t(&[
            tables::CUSTOMERS,
            tables::PRODUCTS,
            &tables::quotes("calculations"),
            TRANSACTIONS,
            tables::REFUNDS,
            REFUNDS_INDEX,
            tables::NEXUS,
            MERCHANTS,
            &tables::quotes("platform_calculations"),
            tables::CERTIFICATES,
        ]),
        // Schema 2: each transaction's running refund total (`crate::ledger::Refunded`,
        // sealed), so that a refund reads one record instead of every earlier refund. NULL
        // until the transaction's first refund, reversal or deletion computes it.
        "ALTER TABLE transactions ADD COLUMN refunded TEXT;".into(),
        // Schema 3: the outbox, as in the SQLite ledger (its schema 4), with every record
        // already stored in it.
        t(&[tables::OUTBOX, FILL_OUTBOX]),
        // Schema 4: registrations, as in the SQLite ledger (its schema 7).
        t(&[tables::REGISTRATIONS]),
        // Schema 5: each place's sales per calendar month, as in the SQLite ledger (its
        // schema 8), in numeric columns; `fill_months` computes them from the records
        // already stored.
        NEXUS_MONTHS.into(),
        // Schema 6: the daily liability totals, as in the SQLite ledger (its schema 9), their
        // amounts `numeric[]` (16 of a row: sales then refunds; 4 sums of a state);
        // `fill_days` computes them from the records already stored.
        t(&[tables::LIABILITY]),
        // Schema 7: answers kept under idempotency keys, as in the SQLite ledger (its
        // schema 10).
        t(&[tables::IDEMPOTENCY_KEYS]),
        // Schema 8: a registration's seller and the span of its activity beside the sealed
        // record, and the index of a calculation's reads, as in the SQLite ledger (its
        // schema 11); `fill_registrations` fills the columns.
        t(&[
            &tables::REGISTRATION_COLUMNS
                .map(|(name, definition)| {
                    format!(
                        "ALTER TABLE registrations ADD COLUMN IF NOT EXISTS {name} {definition};\n"
                    )
                })
                .concat(),
            tables::REGISTRATIONS_ACTIVE,
        ]),
    ]
}

/// The migration after which [`fill_registrations`] runs (the one that makes schema 8).
const REGISTRATIONS_MIGRATION: usize = 7;

/// Schema 8: each registration's seller and span, copied from its sealed record.
async fn fill_registrations(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
    let rows = tx
        .query("SELECT account, live, id, data FROM registrations", &[])
        .await
        .map_err(pg_err)?;
    for row in rows {
        let (account, live, id): (String, bool, String) = (
            row.try_get(0).map_err(pg_err)?,
            row.try_get(1).map_err(pg_err)?,
            row.try_get(2).map_err(pg_err)?,
        );
        let r: RegistrationRecord = from_json(&row.try_get::<_, String>(3).map_err(pg_err)?)?;
        tx.execute(
            "UPDATE registrations SET seller = $4, active_from = $5, active_until = $6
             WHERE account = $1 AND live = $2 AND id = $3",
            &[
                &account,
                &live,
                &id,
                &r.seller_key(),
                &r.active_from,
                &r.active_until(),
            ],
        )
        .await
        .map_err(pg_err)?;
    }
    Ok(())
}

/// The migration after which [`fill_days`] runs (the one that makes schema 6).
const DAYS_MIGRATION: usize = 5;

/// Schema 6 (and a copied ledger): the daily liability totals of every transaction stored,
/// with its refunds and reversals (none of a deleted one), summed in memory and written
/// once ([`super::super::days::DaySums`]).
pub(super) async fn fill_days(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
    let mut sums = super::super::days::DaySums::default();
    for (account, live, t, refunds) in stored_transactions(tx).await? {
        sums.add(&account, live, &t, &refunds);
    }
    super::days::write_sums(tx, &sums).await
}

/// Every transaction stored, with its account, mode and refunds (in their order): what
/// the migrations that compute totals from the records read.
async fn stored_transactions(
    tx: &deadpool_postgres::Transaction<'_>,
) -> Result<Vec<(String, bool, TransactionRecord, Vec<RefundRecord>)>, StoreError> {
    let mut refunds: HashMap<(String, bool, String), Vec<RefundRecord>> = HashMap::new();
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
        refunds.entry(key).or_default().push(from_json(&data)?);
    }
    let rows = tx
        .query("SELECT account, live, data FROM transactions", &[])
        .await
        .map_err(pg_err)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let account: String = r.try_get(0).map_err(pg_err)?;
        let live: bool = r.try_get(1).map_err(pg_err)?;
        let data: String = r.try_get(2).map_err(pg_err)?;
        let t: TransactionRecord = from_json(&data)?;
        let of = refunds
            .remove(&(account.clone(), live, t.id.clone()))
            .unwrap_or_default();
        out.push((account, live, t, of));
    }
    Ok(out)
}

/// The migration after which [`fill_months`] runs (the one that makes schema 5).
const MONTHS_MIGRATION: usize = 4;

/// Schema 5: the monthly sales of every transaction already stored, with its refunds,
/// reversals and deletion, as the recipes would have written them
/// ([`super::super::months::months_of`]), summed per month and written once.
async fn fill_months(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
    use std::collections::BTreeMap;

    use rust_decimal::Decimal;

    type Key = (String, bool, String, String, String, String);
    let mut months: BTreeMap<Key, (Decimal, Decimal, i64)> = BTreeMap::new();
    for (account, live, t, refunds) in stored_transactions(tx).await? {
        for change in super::super::months::months_of(&t, &refunds) {
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
    let tx = begin_long(&mut client).await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg_err)?;
    check_encoding(&tx, &target).await?;
    let version = ledger_version(&tx, &target).await?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, sql) in migrations()
        .iter()
        .enumerate()
        .skip(version.max(0) as usize)
    {
        tx.batch_execute(sql).await.map_err(pg_err)?;
        if i == MONTHS_MIGRATION {
            fill_months(&tx).await?;
        }
        if i == DAYS_MIGRATION {
            fill_days(&tx).await?;
        }
        if i == REGISTRATIONS_MIGRATION {
            fill_registrations(&tx).await?;
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

/// One value of a one-row query.
async fn one<T>(tx: &deadpool_postgres::Transaction<'_>, sql: &str) -> Result<T, StoreError>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    tx.query_one(sql, &[])
        .await
        .map_err(pg_err)?
        .try_get(0)
        .map_err(pg_err)
}

/// Text columns hold what requests send: an encoding other than UTF8 (or SQL_ASCII, which
/// stores bytes as they come) would refuse some characters with an error.
async fn check_encoding(
    tx: &deadpool_postgres::Transaction<'_>,
    target: &str,
) -> Result<(), StoreError> {
    let encoding: String = one(
        tx,
        "SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()",
    )
    .await?;
    if encoding != "UTF8" && encoding != "SQL_ASCII" {
        return Err(StoreError::NotALedger {
            path: target.to_string(),
            why: format!(
                "its encoding is {encoding}, which cannot hold every character a request may send; create the database with ENCODING 'UTF8' (createdb -E UTF8 -T template0)"
            ),
        });
    }
    Ok(())
}

/// The schema version of a levy ledger; an empty database is made one, at version 0; a
/// database of something else is refused.
async fn ledger_version(
    tx: &deadpool_postgres::Transaction<'_>,
    target: &str,
) -> Result<i64, StoreError> {
    let not_a_ledger = |why: String| StoreError::NotALedger {
        path: target.to_string(),
        why,
    };
    if one::<bool>(tx, "SELECT to_regclass('levy_ledger') IS NOT NULL").await? {
        let row = tx
            .query_one("SELECT application, schema_version FROM levy_ledger", &[])
            .await
            .map_err(pg_err)?;
        let application: String = row.try_get(0).map_err(pg_err)?;
        if application != "levy" {
            return Err(not_a_ledger(format!(
                "its levy_ledger table names the application {application:?}"
            )));
        }
        return row.try_get(1).map_err(pg_err);
    }
    let tables: i64 = one(
        tx,
        "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()",
    )
    .await?;
    if tables > 0 {
        return Err(not_a_ledger(format!(
            "its schema holds {tables} tables of something else (no levy_ledger table)"
        )));
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
    Ok(0)
}

/// Deletes expired calculations (they can no longer become transactions) and expired
/// answers kept under idempotency keys (their keys are free again).
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
    client
        .exec(
            "DELETE FROM idempotency_keys WHERE expires_at <= $1",
            &[&now],
        )
        .await
        .map_err(pg_err)?;
    Ok(())
}
