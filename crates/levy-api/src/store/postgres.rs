//! The PostgreSQL ledger: one database shared by any number of levy processes, through a
//! pool of connections (`tokio-postgres` with `deadpool-postgres`).
//!
//! # The same guarantees as the SQLite ledger
//!
//! - **Nothing is acknowledged before it is committed.** Every write is one PostgreSQL
//!   transaction, committed with `synchronous_commit = on` (flushed to PostgreSQL's WAL)
//!   before the method returns. Calculations, 24-hour quotes, are committed with
//!   `synchronous_commit = off`, as the SQLite ledger commits them without a flush:
//!   PostgreSQL crashing (not levy) can lose the last fraction of a second of them.
//! - **Isolation.** Every query names the account and the mode.
//! - **One winner per order id.** A unique index on (account, mode, order id, kind); the
//!   loser's insert fails with `unique_violation`, answered as [`StoreError::Duplicate`].
//! - **Refunds, reversals and deletions exact under concurrency.** Each locks its
//!   transaction's row (`SELECT … FOR UPDATE`) before it reads the refunds so far, so two
//!   processes refunding one sale take turns; the money rules are [`crate::ledger`]'s.
//! - **Nexus totals consistent.** Each change is one `INSERT … ON CONFLICT DO UPDATE`
//!   adding [`crate::ledger::NexusChange`] to the row, in the same transaction as the record
//!   that causes it. Totals are `numeric`, exact.
//! - **Damage is an error.** Records are stored sealed with their digest, as in the SQLite
//!   ledger ([`super::seal`]); run PostgreSQL with data checksums (`initdb
//!   --data-checksums`) so that damaged pages are found too.
//!
//! # Threads
//!
//! The [`Store`] trait is synchronous. The store owns a small Tokio runtime on which its
//! connections run; a method hands its work to that runtime and waits for the answer
//! (from any thread, inside another runtime's blocking pool included).
//! [`Store::submit_calculation`] does not wait: its [`Commit`] resolves when the insert
//! has committed.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use super::seal::{from_json, to_json};
use super::*;

/// The current schema version (`levy_ledger.schema_version`).
const SCHEMA_VERSION: i64 = 2;

/// The advisory lock taken while the schema is checked and migrated, so that processes
/// starting together migrate once: "LEVY" in ASCII.
const MIGRATION_LOCK: i64 = 0x4C45_5659;

/// Connections per process.
const POOL_SIZE: usize = 16;

/// How long a stored-calculation count is used before it is counted again. Other
/// processes' calculations are seen within this time.
const COUNT_TTL: Duration = Duration::from_secs(10);

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
];

/// Unexpired calculations per account and mode (how many, and their bytes), counted at
/// most every [`COUNT_TTL`].
type CalculationCounts =
    std::sync::Arc<Mutex<std::collections::HashMap<Scope, (StoredCalculations, Instant)>>>;

/// The PostgreSQL implementation of [`Store`].
pub struct PostgresStore {
    pool: Pool,
    runtime: Option<tokio::runtime::Runtime>,
    counts: CalculationCounts,
    /// The database, for messages (no password).
    target: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// An error and its causes, as one line (a TLS failure's cause is the reason: the
/// certificate's issuer unknown, a name that does not match).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

fn pg_err(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => StoreError::ledger(format!("PostgreSQL: {}", db.message())),
        None => StoreError::ledger(format!("PostgreSQL: {}", with_causes(&e))),
    }
}

fn pool_err(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::ledger(format!(
        "could not reach the PostgreSQL ledger: {}",
        with_causes(&e)
    ))
}

/// Maps an insert's or update's error: a unique violation is the client's id of `what`
/// already taken ([`StoreError::Duplicate`]), anything else a database error.
fn conflict(
    what: RecordKind,
    value: &str,
) -> impl FnOnce(tokio_postgres::Error) -> StoreError + '_ {
    move |e| {
        if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
            StoreError::Duplicate {
                what,
                value: value.to_string(),
            }
        } else {
            pg_err(e)
        }
    }
}

/// The text of column `i` of a row.
fn text(row: &Row, i: usize) -> Result<String, StoreError> {
    row.try_get(i).map_err(pg_err)
}

/// A sealed record in column 0 of a row.
fn record<T: for<'de> Deserialize<'de>>(row: &Row) -> Result<T, StoreError> {
    from_json(&text(row, 0)?)
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A connection or a transaction: statements prepared once per connection and cached.
trait Conn: Sync {
    fn opt<'a>(
        &'a self,
        sql: &'static str,
        params: Params<'a>,
    ) -> impl Future<Output = Result<Option<Row>, tokio_postgres::Error>> + Send + 'a;
    fn all<'a>(
        &'a self,
        sql: &'static str,
        params: Params<'a>,
    ) -> impl Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a;
    fn exec<'a>(
        &'a self,
        sql: &'static str,
        params: Params<'a>,
    ) -> impl Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a;
}

macro_rules! conn_impl {
    ($t:ty) => {
        impl Conn for $t {
            fn opt<'a>(
                &'a self,
                sql: &'static str,
                params: Params<'a>,
            ) -> impl Future<Output = Result<Option<Row>, tokio_postgres::Error>> + Send + 'a {
                async move {
                    let st = self.prepare_cached(sql).await?;
                    self.query_opt(&st, params).await
                }
            }
            fn all<'a>(
                &'a self,
                sql: &'static str,
                params: Params<'a>,
            ) -> impl Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a {
                async move {
                    let st = self.prepare_cached(sql).await?;
                    self.query(&st, params).await
                }
            }
            fn exec<'a>(
                &'a self,
                sql: &'static str,
                params: Params<'a>,
            ) -> impl Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a {
                async move {
                    let st = self.prepare_cached(sql).await?;
                    self.execute(&st, params).await
                }
            }
        }
    };
}
conn_impl!(deadpool_postgres::Client);
conn_impl!(deadpool_postgres::Transaction<'_>);

async fn one<T: for<'de> Deserialize<'de>>(
    c: &impl Conn,
    sql: &'static str,
    params: Params<'_>,
) -> Result<Option<T>, StoreError> {
    match c.opt(sql, params).await.map_err(pg_err)? {
        Some(row) => Ok(Some(record(&row)?)),
        None => Ok(None),
    }
}

async fn many<T: for<'de> Deserialize<'de>>(
    c: &impl Conn,
    sql: &'static str,
    params: Params<'_>,
) -> Result<Vec<T>, StoreError> {
    let rows = c.all(sql, params).await.map_err(pg_err)?;
    rows.iter().map(record).collect()
}

/// Begins a write that is acknowledged only once flushed: a transaction with
/// `synchronous_commit = on` (the pool's connections default to `off`, for calculations).
/// Every write but a calculation begins here.
async fn begin(
    client: &mut deadpool_postgres::Client,
) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    let tx = client.transaction().await.map_err(pg_err)?;
    tx.batch_execute("SET LOCAL synchronous_commit TO on")
        .await
        .map_err(pg_err)?;
    Ok(tx)
}

async fn get_customer(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
    by_reference: bool,
) -> Result<Option<CustomerRecord>, StoreError> {
    let sql = if by_reference {
        "SELECT data FROM customers WHERE account = $1 AND live = $2 AND reference_customer_id = $3 AND deleted_at IS NULL"
    } else {
        "SELECT data FROM customers WHERE account = $1 AND live = $2 AND id = $3 AND deleted_at IS NULL"
    };
    one(c, sql, &[&account, &live, &id]).await
}

async fn get_product(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<ProductRecord>, StoreError> {
    one(
        c,
        "SELECT data FROM products WHERE account = $1 AND live = $2 AND id = $3",
        &[&account, &live, &id],
    )
    .await
}

async fn get_certificates(
    c: &impl Conn,
    account: &str,
    customer: Option<&str>,
) -> Result<Vec<CertificateRecord>, StoreError> {
    match customer {
        Some(customer) => {
            many(
                c,
                "SELECT data FROM certificates WHERE account = $1 AND customer_id = $2 ORDER BY id",
                &[&account, &customer],
            )
            .await
        }
        None => {
            many(
                c,
                "SELECT data FROM certificates WHERE account = $1 ORDER BY id",
                &[&account],
            )
            .await
        }
    }
}

/// A transaction; with `lock`, its row is locked until the surrounding transaction ends.
async fn get_transaction(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
    lock: bool,
) -> Result<Option<TransactionRecord>, StoreError> {
    let sql = if lock {
        "SELECT data FROM transactions WHERE account = $1 AND live = $2 AND id = $3 FOR UPDATE"
    } else {
        "SELECT data FROM transactions WHERE account = $1 AND live = $2 AND id = $3"
    };
    one(c, sql, &[&account, &live, &id]).await
}

async fn get_refunds(
    c: &impl Conn,
    account: &str,
    live: bool,
    tx_id: &str,
) -> Result<Vec<RefundRecord>, StoreError> {
    many(
        c,
        "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND transaction_id = $3 ORDER BY seq",
        &[&account, &live, &tx_id],
    )
    .await
}

/// A transaction's running refund total ([`crate::ledger::Refunded`]): as kept beside it,
/// or, for a transaction that has none yet, computed once from its refunds. Read under the
/// transaction's row lock.
async fn get_refunded(
    c: &impl Conn,
    account: &str,
    live: bool,
    tx: &TransactionRecord,
) -> Result<crate::ledger::Refunded, StoreError> {
    let row = c
        .opt(
            "SELECT refunded FROM transactions WHERE account = $1 AND live = $2 AND id = $3",
            &[&account, &live, &tx.id],
        )
        .await
        .map_err(pg_err)?;
    let kept: Option<String> = match row {
        Some(r) => r.try_get(0).map_err(pg_err)?,
        None => None,
    };
    match kept {
        Some(text) => from_json(&text),
        None => Ok(crate::ledger::Refunded::of(
            tx.lines.len(),
            &get_refunds(c, account, live, &tx.id).await?,
        )),
    }
}

/// Keeps a transaction's running refund total.
async fn set_refunded(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
    refunded: &crate::ledger::Refunded,
) -> Result<(), StoreError> {
    let data = to_json(refunded)?;
    c.exec(
        "UPDATE transactions SET refunded = $4 WHERE account = $1 AND live = $2 AND id = $3",
        &[&account, &live, &id, &data],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

/// A refund by id.
async fn get_refund(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<RefundRecord>, StoreError> {
    one(
        c,
        "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND id = $3",
        &[&account, &live, &id],
    )
    .await
}

/// Inserts one transaction and, in live mode, adds it to the nexus totals.
async fn insert_tx(
    c: &deadpool_postgres::Transaction<'_>,
    account: &str,
    live: bool,
    tx: &TransactionRecord,
) -> Result<(), StoreError> {
    let kind = tx.platform.as_ref().map_or("order", |p| p.kind.as_str());
    let data = to_json(tx)?;
    c.exec(
        "INSERT INTO transactions (account, live, id, reference_order_id, kind, data) VALUES ($1, $2, $3, $4, $5, $6)",
        &[&account, &live, &tx.id, &tx.reference_order_id, &kind, &data],
    )
    .await
    .map_err(conflict(RecordKind::Transaction, &tx.reference_order_id))?;
    if let Some(change) = crate::ledger::transaction_effect(live, tx) {
        add_nexus(c, account, tx, change).await?;
    }
    Ok(())
}

/// Adds `change` (see [`crate::ledger`]) to an account's live nexus total of the place and
/// currency of `tx`, atomically.
async fn add_nexus(
    c: &deadpool_postgres::Transaction<'_>,
    account: &str,
    tx: &TransactionRecord,
    change: crate::ledger::NexusChange,
) -> Result<(), StoreError> {
    let sales = change.sales.to_string();
    c.exec(
        "INSERT INTO nexus (account, country, region, currency, sales, count)
         VALUES ($1, $2, $3, $4, $5::text::numeric, $6)
         ON CONFLICT (account, country, region, currency)
         DO UPDATE SET sales = nexus.sales + excluded.sales, count = nexus.count + excluded.count",
        &[
            &account,
            &tx.country,
            &tx.region,
            &tx.currency,
            &sales,
            &change.count,
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

async fn get_merchant(
    c: &impl Conn,
    account: &str,
    live: bool,
    id: &str,
    lock: bool,
) -> Result<Option<MerchantRecord>, StoreError> {
    // The service's id first; then the client's id.
    let (by_id, by_reference) = if lock {
        (
            "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id = $3 FOR UPDATE",
            "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND reference_merchant_id = $3 FOR UPDATE",
        )
    } else {
        (
            "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id = $3",
            "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND reference_merchant_id = $3",
        )
    };
    match one(c, by_id, &[&account, &live, &id]).await? {
        Some(m) => Ok(Some(m)),
        None => one(c, by_reference, &[&account, &live, &id]).await,
    }
}

/// Checks that the database is a levy ledger (or empty, and makes it one) and brings its
/// schema up to date, under an advisory lock so that processes starting together take
/// turns.
async fn migrate(pool: Pool, target: String) -> Result<(), StoreError> {
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
    for sql in MIGRATIONS.iter().skip(version.max(0) as usize) {
        tx.batch_execute(sql).await.map_err(pg_err)?;
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
async fn purge(pool: &Pool) -> Result<(), StoreError> {
    let client = pool.get().await.map_err(pool_err)?;
    let now = crate::ids::now();
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

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`,
    /// or `key=value` pairs as libpq and tokio-postgres read them; `host=/path` for a Unix
    /// socket) and brings its schema up to date. An empty database becomes a ledger; a
    /// database whose schema holds other tables, or whose encoding cannot hold every
    /// character (other than UTF8 and SQL_ASCII), is refused and left untouched.
    ///
    /// TLS (rustls) follows libpq's `sslmode`: `disable` (and no `sslmode`), `prefer`,
    /// `require`, `verify-ca` and `verify-full`, the last two against the CA certificates
    /// of `sslrootcert` (a PEM file, or `system`).
    pub fn open(url: &str) -> Result<PostgresStore, StoreError> {
        let target = super::location::redact(url);
        let connection = super::pg_tls::connection(url)
            .map_err(|e| StoreError::ledger(format!("{target}: {e}")))?;
        let tls = connection.tls;
        let mut config = connection.config;
        if config.get_application_name().is_none() {
            config.application_name("levy");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        // Calculations commit without waiting for the flush; every other write sets
        // `synchronous_commit = on` in its transaction (`begin`).
        let options = match config.get_options() {
            Some(o) => format!("{o} -c synchronous_commit=off"),
            None => "-c synchronous_commit=off".to_string(),
        };
        config.options(&options);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("levy-postgres")
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::ledger(format!("could not start the PostgreSQL client: {e}"))
            })?;
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match tls {
            Some(tls) => Manager::from_config(config, tls, manager_config),
            None => Manager::from_config(config, NoTls, manager_config),
        };
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(10)))
            .build()
            .map_err(|e| StoreError::ledger(format!("could not make a connection pool: {e}")))?;
        let store = PostgresStore {
            pool,
            runtime: Some(runtime),
            counts: CalculationCounts::default(),
            target,
        };
        store
            .run(migrate(store.pool.clone(), store.target.clone()))
            .map_err(|e| match e {
                StoreError::Ledger(m) => StoreError::Ledger(format!("{}: {m}", store.target)),
                other => other,
            })?;
        // Expired calculations are purged every minute, by every process (each purge is
        // one statement; processes purging together do the same work twice at worst).
        let (pool, counts) = (store.pool.clone(), std::sync::Arc::clone(&store.counts));
        store.spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                every.tick().await;
                if purge(&pool).await.is_ok() {
                    counts.lock().unwrap_or_else(|e| e.into_inner()).clear();
                }
            }
        });
        Ok(store)
    }

    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.runtime {
            rt.spawn(fut);
        }
    }

    /// Runs `fut` on the store's runtime and waits for its answer. A task that panics is
    /// an internal error, not a panic of the caller.
    fn run<R: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<R, StoreError>> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().map_err(|_| {
            StoreError::Internal("the PostgreSQL ledger failed unexpectedly".to_string())
        })?
    }

    /// Runs `f` on a connection of the pool and waits for its answer.
    fn read<R: Send + 'static, F>(
        &self,
        f: impl FnOnce(deadpool_postgres::Client) -> F + Send + 'static,
    ) -> Result<R, StoreError>
    where
        F: Future<Output = Result<R, StoreError>> + Send + 'static,
    {
        let pool = self.pool.clone();
        self.run(async move { f(pool.get().await.map_err(pool_err)?).await })
    }

    /// Runs a write on a connection of the pool; `f` begins its transaction with
    /// [`begin`], so that the write is acknowledged once flushed.
    fn write<R: Send + 'static, F>(
        &self,
        f: impl FnOnce(deadpool_postgres::Client) -> F + Send + 'static,
    ) -> Result<R, StoreError>
    where
        F: Future<Output = Result<R, StoreError>> + Send + 'static,
    {
        self.read(f)
    }

    /// Stores one calculation (its table, id and expiry) without a flush; the commit
    /// resolves once PostgreSQL has committed it.
    fn submit_calc(
        &self,
        scope: &Scope,
        sql: &'static str,
        id: String,
        expires_at: i64,
        data: String,
    ) -> Commit {
        let (commit, completer) = Commit::new();
        let bytes = data.len() as u64;
        let (pool, counts, scope) = (
            self.pool.clone(),
            std::sync::Arc::clone(&self.counts),
            scope.clone(),
        );
        self.spawn(async move {
            let result = async {
                let client = pool.get().await.map_err(pool_err)?;
                client
                    .exec(
                        sql,
                        &[&&*scope.account, &scope.live, &id, &expires_at, &data],
                    )
                    .await
                    .map_err(pg_err)?;
                Ok(())
            }
            .await;
            if result.is_ok() {
                if let Some((n, _)) = counts
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(&scope)
                {
                    n.count += 1;
                    n.bytes += bytes;
                }
            }
            completer.complete(result);
        });
        // Without a runtime the task (and its completer) was dropped: the commit has
        // resolved with the ledger's error.
        commit
    }
}

/// The ledger's tables, to check that a copy's target is empty.
const LEDGER_TABLES: [&str; 13] = [
    "customers",
    "products",
    "calculations",
    "transactions",
    "refunds",
    "nexus",
    "merchants",
    "platform_calculations",
    "certificates",
    "certificate_documents",
    "certificate_requests",
    "secrets",
    "levy_ledger",
];

impl PostgresStore {
    /// Inserts the rows of a copied ledger ([`super::copy_ledger`]) in one transaction,
    /// once it is sure the ledger holds no records, and checks each table's count before
    /// committing. Rows per table.
    pub(super) fn import(
        &self,
        tables: Vec<super::copy::Rows>,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(pg_err)?;
            for table in &LEDGER_TABLES[..12] {
                let sql = format!("SELECT EXISTS (SELECT 1 FROM {table})");
                let any: bool = tx
                    .query_one(sql.as_str(), &[])
                    .await
                    .map_err(pg_err)?
                    .try_get(0)
                    .map_err(pg_err)?;
                if any {
                    return Err(StoreError::ledger(format!(
                        "the PostgreSQL ledger is not empty (its {table} table has rows); copy into a new database"
                    )));
                }
            }
            let mut copied = Vec::with_capacity(tables.len());
            for t in tables {
                let st = tx.prepare(&t.insert).await.map_err(pg_err)?;
                for row in &t.rows {
                    let params: Vec<&(dyn ToSql + Sync)> = row
                        .iter()
                        .map(|c| c.as_ref() as &(dyn ToSql + Sync))
                        .collect();
                    tx.execute(&st, &params).await.map_err(pg_err)?;
                }
                let sql = format!("SELECT count(*) FROM {}", t.table);
                let n: i64 = tx
                    .query_one(sql.as_str(), &[])
                    .await
                    .map_err(pg_err)?
                    .try_get(0)
                    .map_err(pg_err)?;
                if n as usize != t.rows.len() {
                    return Err(StoreError::ledger(format!(
                        "{}: {} rows read, {n} in PostgreSQL; nothing was copied",
                        t.table,
                        t.rows.len()
                    )));
                }
                copied.push((t.table.to_string(), n as u64));
            }
            tx.commit().await.map_err(pg_err)?;
            Ok(copied)
        })
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        // A runtime must not be dropped inside another runtime's worker; shutting it down
        // in the background is allowed anywhere.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Store for PostgresStore {
    fn reads_cross_a_network(&self) -> bool {
        true
    }

    fn insert_customer(&self, scope: &Scope, c: CustomerRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&c)?;
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            tx.exec(
                "INSERT INTO customers (account, live, id, reference_customer_id, data) VALUES ($1, $2, $3, $4, $5)",
                &[&&*account, &live, &c.id, &c.reference_customer_id, &data],
            )
            .await
            .map_err(conflict(
                RecordKind::Customer,
                c.reference_customer_id.as_deref().unwrap_or(""),
            ))?;
            tx.commit().await.map_err(pg_err)
        })
    }

    fn customer(
        &self,
        scope: &Scope,
        id: &str,
        by_reference: bool,
    ) -> Result<Option<CustomerRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move {
            get_customer(&client, &account, live, &id, by_reference).await
        })
    }

    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let n = tx
                .exec(
                    "UPDATE customers SET deleted_at = $4 WHERE account = $1 AND live = $2 AND id = $3 AND deleted_at IS NULL",
                    &[&&*account, &live, &id, &at],
                )
                .await
                .map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)?;
            Ok(n == 1)
        })
    }

    fn insert_product(&self, scope: &Scope, p: ProductRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&p)?;
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            tx.exec(
                "INSERT INTO products (account, live, id, data) VALUES ($1, $2, $3, $4)",
                &[&&*account, &live, &p.reference_product_id, &data],
            )
            .await
            .map_err(conflict(RecordKind::Product, &p.reference_product_id))?;
            tx.commit().await.map_err(pg_err)
        })
    }

    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move { get_product(&client, &account, live, &id).await })
    }

    fn calculation_reads(
        &self,
        scope: &Scope,
        customer_id: Option<&str>,
        product_ids: &[Option<&str>],
    ) -> Result<CalculationReads, StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let customer_id = customer_id.map(str::to_string);
        let product_ids: Vec<Option<String>> =
            product_ids.iter().map(|p| p.map(str::to_string)).collect();
        self.read(move |mut client| async move {
            // One snapshot for all the reads.
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(pg_err)?;
            let customer = match &customer_id {
                Some(id) => get_customer(&tx, &account, live, id, false).await?,
                None => None,
            };
            let mut products = Vec::with_capacity(product_ids.len());
            for id in &product_ids {
                products.push(match id {
                    Some(id) => get_product(&tx, &account, live, id).await?,
                    None => None,
                });
            }
            let certificates = match &customer {
                Some(c) if live && !c.is_tax_exempt => {
                    get_certificates(&tx, &account, Some(&c.id)).await?
                }
                _ => Vec::new(),
            };
            tx.commit().await.map_err(pg_err)?;
            Ok(CalculationReads {
                customer,
                products,
                certificates,
            })
        })
    }

    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let n = tx
                .exec(
                    "DELETE FROM products WHERE account = $1 AND live = $2 AND id = $3",
                    &[&&*account, &live, &id],
                )
                .await
                .map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)?;
            Ok(n == 1)
        })
    }

    fn list_products(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProductRecord>, StoreError> {
        let (account, live, cursor) = (
            scope.account.clone(),
            scope.live,
            cursor.unwrap_or("").to_string(),
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |client| async move {
            // `COLLATE "C"`: ordered by bytes, as SQLite orders them, whatever the
            // database's collation.
            many(
                &client,
                r#"SELECT data FROM products WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3 ORDER BY id COLLATE "C" LIMIT $4"#,
                &[&&*account, &live, &cursor, &limit],
            )
            .await
        })
    }

    fn insert_calculation(
        &self,
        scope: &Scope,
        calc: &CalculationRecord,
    ) -> Result<(), StoreError> {
        self.submit_calculation(scope, calc)?.wait()
    }

    fn submit_calculation(
        &self,
        scope: &Scope,
        calc: &CalculationRecord,
    ) -> Result<Commit, StoreError> {
        Ok(self.submit_calc(
            scope,
            "INSERT INTO calculations (account, live, id, expires_at, data) VALUES ($1, $2, $3, $4, $5)",
            calc.id.clone(),
            calc.expires_at,
            to_json(calc)?,
        ))
    }

    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations, StoreError> {
        if let Some((n, at)) = self
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(scope)
        {
            if at.elapsed() < COUNT_TTL {
                return Ok(*n);
            }
        }
        let (account, live) = (scope.account.clone(), scope.live);
        let (count, bytes): (i64, i64) = self.read(move |client| async move {
            let row = client
                .opt(
                    "SELECT (SELECT count(*) FROM calculations WHERE account = $1 AND live = $2)
                          + (SELECT count(*) FROM platform_calculations WHERE account = $1 AND live = $2),
                            (SELECT coalesce(sum(octet_length(data)), 0) FROM calculations WHERE account = $1 AND live = $2)
                          + (SELECT coalesce(sum(octet_length(data)), 0) FROM platform_calculations WHERE account = $1 AND live = $2)",
                    &[&&*account, &live],
                )
                .await
                .map_err(pg_err)?;
            match row {
                Some(row) => Ok((
                    row.try_get::<_, i64>(0).map_err(pg_err)?,
                    row.try_get::<_, i64>(1).map_err(pg_err)?,
                )),
                None => Ok((0, 0)),
            }
        })?;
        let n = StoredCalculations {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        };
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scope.clone(), (n, Instant::now()));
        Ok(n)
    }

    fn calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<CalculationRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move {
            one(
                &client,
                "SELECT data FROM calculations WHERE account = $1 AND live = $2 AND id = $3 AND expires_at > $4",
                &[&&*account, &live, &id, &now],
            )
            .await
        })
    }

    fn insert_transaction(&self, scope: &Scope, t: TransactionRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            insert_tx(&tx, &account, live, &t).await?;
            tx.commit().await.map_err(pg_err)
        })
    }

    fn transaction(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<TransactionRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move {
            get_transaction(&client, &account, live, &id, false).await
        })
    }

    fn delete_transaction(&self, scope: &Scope, id: &str, at: i64) -> Result<(), StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let mut t = get_transaction(&tx, &account, live, &id, true)
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    what: RecordKind::Transaction,
                    id: id.clone(),
                })?;
            if t.deleted_at.is_some() {
                return Err(StoreError::AlreadyDeleted { id: id.clone() });
            }
            t.deleted_at = Some(at);
            let data = to_json(&t)?;
            tx.exec(
                "UPDATE transactions SET data = $4, deleted_at = $5 WHERE account = $1 AND live = $2 AND id = $3",
                &[&&*account, &live, &id, &data, &at],
            )
            .await
            .map_err(pg_err)?;
            if live {
                let left = get_refunded(&tx, &account, live, &t).await?.remaining(&t);
                if let Some(change) = crate::ledger::deletion_effect(live, &left) {
                    add_nexus(&tx, &account, &t, change).await?;
                }
            }
            tx.commit().await.map_err(pg_err)
        })
    }

    fn insert_refund(
        &self,
        scope: &Scope,
        transaction_id: &str,
        build: RefundBuilder,
    ) -> Result<RefundRecord, StoreError> {
        let (account, live, id) = (
            scope.account.clone(),
            scope.live,
            transaction_id.to_string(),
        );
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            // The transaction's row is locked: refunds of one sale take turns, in every
            // process.
            let t = get_transaction(&tx, &account, live, &id, true)
                .await?
                .filter(|t| t.deleted_at.is_none())
                .ok_or_else(|| StoreError::NotFound {
                    what: RecordKind::Transaction,
                    id: id.clone(),
                })?;
            let mut refunded = get_refunded(&tx, &account, live, &t).await?;
            let refund = build(&t, &refunded.remaining(&t))?;
            let (seq, data) = (refunded.count, to_json(&refund)?);
            tx.exec(
                "INSERT INTO refunds (account, live, id, transaction_id, seq, data) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&&*account, &live, &refund.id, &id, &seq, &data],
            )
            .await
            .map_err(conflict(RecordKind::Refund, &refund.id))?;
            refunded.add(&refund);
            set_refunded(&tx, &account, live, &id, &refunded).await?;
            if let Some(change) = crate::ledger::refund_effect(live, &refund) {
                add_nexus(&tx, &account, &t, change).await?;
            }
            tx.commit().await.map_err(pg_err)?;
            Ok(refund)
        })
    }

    fn refunds(
        &self,
        scope: &Scope,
        transaction_id: &str,
    ) -> Result<Vec<RefundRecord>, StoreError> {
        let (account, live, id) = (
            scope.account.clone(),
            scope.live,
            transaction_id.to_string(),
        );
        self.read(move |client| async move { get_refunds(&client, &account, live, &id).await })
    }

    fn refunds_page(
        &self,
        scope: &Scope,
        transaction_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RefundRecord>, StoreError> {
        let (account, live, id) = (
            scope.account.clone(),
            scope.live,
            transaction_id.to_string(),
        );
        let after = after.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |client| async move {
            let from: i64 = match &after {
                None => -1,
                Some(cursor) => client
                    .opt(
                        "SELECT seq FROM refunds WHERE account = $1 AND live = $2 AND id = $3 AND transaction_id = $4",
                        &[&&*account, &live, cursor, &id],
                    )
                    .await
                    .map_err(pg_err)?
                    .ok_or_else(|| StoreError::NotFound {
                        what: RecordKind::Refund,
                        id: cursor.clone(),
                    })?
                    .try_get(0)
                    .map_err(pg_err)?,
            };
            many(
                &client,
                "SELECT data FROM refunds WHERE account = $1 AND live = $2 AND transaction_id = $3 AND seq > $4 ORDER BY seq LIMIT $5",
                &[&&*account, &live, &id, &from, &limit],
            )
            .await
        })
    }

    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move { get_refund(&client, &account, live, &id).await })
    }

    fn reverse_refund(
        &self,
        scope: &Scope,
        refund_id: &str,
        at: i64,
    ) -> Result<RefundRecord, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, refund_id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let found = get_refund(&tx, &account, live, &id).await?;
            let Some(unlocked) = found else {
                return Err(StoreError::NotFound {
                    what: RecordKind::Refund,
                    id: id.clone(),
                });
            };
            // Lock the transaction (as a refund does), then read the refund again under
            // the lock: a reversal racing another sees it reversed.
            let t = get_transaction(&tx, &account, live, &unlocked.transaction_id, true)
                .await?
                .ok_or_else(|| {
                    StoreError::ledger(format!("refund {id} names a missing transaction"))
                })?;
            let mut refund: RefundRecord = get_refund(&tx, &account, live, &id)
                .await?
                .ok_or_else(|| StoreError::ledger(format!("refund {id} vanished")))?;
            if refund.reversed_at.is_some() {
                return Err(StoreError::AlreadyReversed { id: id.clone() });
            }
            // Read before the refund is marked: computed from the refunds, it must still
            // count this one.
            let mut refunded = get_refunded(&tx, &account, live, &t).await?;
            refunded.give_back(&refund);
            set_refunded(&tx, &account, live, &t.id, &refunded).await?;
            refund.reversed_at = Some(at);
            let data = to_json(&refund)?;
            tx.exec(
                "UPDATE refunds SET data = $4 WHERE account = $1 AND live = $2 AND id = $3",
                &[&&*account, &live, &id, &data],
            )
            .await
            .map_err(pg_err)?;
            if let Some(change) = crate::ledger::reversal_effect(live, &t, &refund) {
                add_nexus(&tx, &account, &t, change).await?;
            }
            tx.commit().await.map_err(pg_err)?;
            Ok(refund)
        })
    }

    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>, StoreError> {
        let account = account.to_string();
        self.read(move |client| async move {
            let rows = client
                .all(
                    r#"SELECT country, region, currency, sales::text, count FROM nexus WHERE account = $1
                       ORDER BY country COLLATE "C", region COLLATE "C", currency COLLATE "C""#,
                    &[&account],
                )
                .await
                .map_err(pg_err)?;
            rows.iter()
                .map(|r| {
                    let sales = text(r, 3)?;
                    Ok(NexusTotal {
                        country: text(r, 0)?,
                        region: text(r, 1)?,
                        currency: text(r, 2)?,
                        sales: sales.parse::<Decimal>().map_err(|e| {
                            StoreError::ledger(format!("nexus total {sales:?}: {e}"))
                        })?,
                        count: r.try_get(4).map_err(pg_err)?,
                    })
                })
                .collect()
        })
    }
}

impl PlatformStore for PostgresStore {
    fn insert_merchant(&self, scope: &Scope, m: MerchantRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&m)?;
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            tx.exec(
                "INSERT INTO merchants (account, live, id, reference_merchant_id, status, data) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&&*account, &live, &m.id, &m.reference_merchant_id, &m.status, &data],
            )
            .await
            .map_err(conflict(RecordKind::Merchant, &m.reference_merchant_id))?;
            tx.commit().await.map_err(pg_err)
        })
    }

    fn merchant(&self, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(
            move |client| async move { get_merchant(&client, &account, live, &id, false).await },
        )
    }

    fn change_merchant(
        &self,
        scope: &Scope,
        id: &str,
        change: MerchantChange,
    ) -> Result<Option<MerchantRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let Some(mut m) = get_merchant(&tx, &account, live, &id, true).await? else {
                return Ok(None);
            };
            change(&mut m)?;
            let data = to_json(&m)?;
            tx.exec(
                "UPDATE merchants SET data = $4, reference_merchant_id = $5, status = $6 WHERE account = $1 AND live = $2 AND id = $3",
                &[&&*account, &live, &m.id, &data, &m.reference_merchant_id, &m.status],
            )
            .await
            .map_err(conflict(RecordKind::Merchant, &m.reference_merchant_id))?;
            tx.commit().await.map_err(pg_err)?;
            Ok(Some(m))
        })
    }

    fn list_merchants(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: MerchantFilter,
        limit: usize,
    ) -> Result<Vec<MerchantRecord>, StoreError> {
        let (account, live, cursor) = (
            scope.account.clone(),
            scope.live,
            cursor.unwrap_or("").to_string(),
        );
        let status = match filter {
            MerchantFilter::Active => "active",
            MerchantFilter::Deleted => "deleted",
            MerchantFilter::All => "%",
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |client| async move {
            many(
                &client,
                r#"SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3
                   AND status LIKE $4 ORDER BY id COLLATE "C" LIMIT $5"#,
                &[&&*account, &live, &cursor, &status, &limit],
            )
            .await
        })
    }

    fn insert_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<(), StoreError> {
        self.submit_platform_calculation(scope, calc)?.wait()
    }

    fn submit_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<Commit, StoreError> {
        Ok(self.submit_calc(
            scope,
            "INSERT INTO platform_calculations (account, live, id, expires_at, data) VALUES ($1, $2, $3, $4, $5)",
            calc.id.clone(),
            calc.order.expires_at,
            to_json(calc)?,
        ))
    }

    fn platform_calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<PlatformCalculationRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |client| async move {
            one(
                &client,
                "SELECT data FROM platform_calculations WHERE account = $1 AND live = $2 AND id = $3 AND expires_at > $4",
                &[&&*account, &live, &id, &now],
            )
            .await
        })
    }

    fn insert_transactions(
        &self,
        scope: &Scope,
        txs: Vec<TransactionRecord>,
    ) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            for t in &txs {
                insert_tx(&tx, &account, live, t).await?;
            }
            tx.commit().await.map_err(pg_err)
        })
    }

    fn import_certificates(
        &self,
        account: &str,
        batch: CertificateBatch,
    ) -> Result<(), StoreError> {
        let account = account.to_string();
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            for (c, doc) in &batch.certificates {
                let data = to_json(c)?;
                tx.exec(
                    "INSERT INTO certificates (id, account, customer_id, data) VALUES ($1, $2, $3, $4)",
                    &[&c.id, &account, &c.customer_id, &data],
                )
                .await
                .map_err(pg_err)?;
                if let (Some(info), Some(bytes)) = (&c.document, doc) {
                    tx.exec(
                        "INSERT INTO certificate_documents (certificate_id, content_type, bytes) VALUES ($1, $2, $3)",
                        &[&c.id, &info.content_type, bytes],
                    )
                    .await
                    .map_err(pg_err)?;
                }
            }
            for r in &batch.requests {
                let data = to_json(r)?;
                tx.exec(
                    "INSERT INTO certificate_requests (id, account, data) VALUES ($1, $2, $3)",
                    &[&r.id, &account, &data],
                )
                .await
                .map_err(pg_err)?;
            }
            tx.commit().await.map_err(pg_err)
        })
    }

    fn certificates(
        &self,
        account: &str,
        customer_id: Option<&str>,
    ) -> Result<Vec<CertificateRecord>, StoreError> {
        let (account, customer) = (account.to_string(), customer_id.map(str::to_string));
        self.read(move |client| async move {
            get_certificates(&client, &account, customer.as_deref()).await
        })
    }

    fn certificate(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRecord>, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |client| async move {
            one(
                &client,
                "SELECT data FROM certificates WHERE account = $1 AND id = $2",
                &[&account, &id],
            )
            .await
        })
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        let id = id.to_string();
        self.read(move |client| async move {
            let row = client
                .opt(
                    "SELECT content_type, bytes FROM certificate_documents WHERE certificate_id = $1",
                    &[&id],
                )
                .await
                .map_err(pg_err)?;
            match row {
                Some(r) => Ok(Some((text(&r, 0)?, r.try_get(1).map_err(pg_err)?))),
                None => Ok(None),
            }
        })
    }

    fn certificate_requests(
        &self,
        account: &str,
    ) -> Result<Vec<CertificateRequestRecord>, StoreError> {
        let account = account.to_string();
        self.read(move |client| async move {
            many(
                &client,
                r#"SELECT data FROM certificate_requests WHERE account = $1 ORDER BY id COLLATE "C""#,
                &[&account],
            )
            .await
        })
    }

    fn certificate_request(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRequestRecord>, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |client| async move {
            one(
                &client,
                "SELECT data FROM certificate_requests WHERE account = $1 AND id = $2",
                &[&account, &id],
            )
            .await
        })
    }

    fn cancel_certificate_request(
        &self,
        account: &str,
        id: &str,
        at: i64,
    ) -> Result<CertificateRequestRecord, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let found: Option<CertificateRequestRecord> = one(
                &tx,
                "SELECT data FROM certificate_requests WHERE account = $1 AND id = $2 FOR UPDATE",
                &[&account, &id],
            )
            .await?;
            let Some(mut r) = found else {
                return Err(StoreError::NotFound {
                    what: RecordKind::CertificateRequest,
                    id: id.clone(),
                });
            };
            match r.status.as_str() {
                "canceled" => Ok(r),
                "fulfilled" => Err(StoreError::RequestFulfilled { id: id.clone() }),
                "invalid" => Err(StoreError::RequestInvalid { id: id.clone() }),
                _ => {
                    r.status = "canceled".to_string();
                    r.canceled_at = Some(at);
                    r.updated_at = at;
                    let data = to_json(&r)?;
                    tx.exec(
                        "UPDATE certificate_requests SET data = $3 WHERE account = $1 AND id = $2",
                        &[&account, &id, &data],
                    )
                    .await
                    .map_err(pg_err)?;
                    tx.commit().await.map_err(pg_err)?;
                    Ok(r)
                }
            }
        })
    }

    fn secret(&self, name: &str) -> Result<[u8; 32], StoreError> {
        let name = name.to_string();
        let fresh = crate::ids::random_bytes32().map_err(|e| StoreError::Internal(e.message))?;
        self.write(move |mut client| async move {
            let tx = begin(&mut client).await?;
            let fresh = fresh.to_vec();
            tx.exec(
                "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &fresh],
            )
            .await
            .map_err(pg_err)?;
            let row = tx
                .opt("SELECT value FROM secrets WHERE name = $1", &[&name])
                .await
                .map_err(pg_err)?
                .ok_or_else(|| StoreError::ledger(format!("secret {name} is missing")))?;
            let value: Vec<u8> = row.try_get(0).map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)?;
            value
                .try_into()
                .map_err(|_| StoreError::ledger(format!("secret {name} is not 32 bytes")))
        })
    }
}
