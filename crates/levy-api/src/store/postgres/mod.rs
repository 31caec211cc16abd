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
//! - **Refunds, reversals and deletions exact under concurrency.** Inside a write, every
//!   read of a transaction, refund, merchant or certificate request locks its row
//!   (`SELECT … FOR UPDATE`), so two processes refunding one sale take turns; the recipes
//!   and the money rules are the store's own, as for SQLite.
//! - **Nexus totals consistent.** Each change is one `INSERT … ON CONFLICT DO UPDATE`
//!   adding [`crate::ledger::NexusChange`] to the row, in the same transaction as the record
//!   that causes it. Totals are `numeric`, exact.
//! - **Damage is an error.** Records are stored sealed with their digest, as in the SQLite
//!   ledger ([`super::seal`]); run PostgreSQL with data checksums (`initdb
//!   --data-checksums`) so that damaged pages are found too.
//!
//! # Threads
//!
//! The [`Store`] trait and the statements are synchronous. The store owns a small Tokio
//! runtime on which its connections run; a read or write runs on a thread of that
//! runtime's blocking pool, each statement awaited there (`Handle::block_on`), and the
//! caller waits for the answer (from any thread, inside another runtime's blocking pool
//! included). [`Store::submit_calculation`] does not wait: its [`Commit`] resolves when the
//! insert has committed.
//!
//! # A network that fails
//!
//! Every wait on PostgreSQL is bounded (`link.rs`): a connection within `connect_timeout`,
//! a statement's answer within `statement_timeout` and a second more, with TCP keepalives
//! and a TCP user timeout on every connection, each settable in the connection string. A
//! request that meets an unreachable PostgreSQL fails within the bound with
//! [`StoreError::Unavailable`] (nothing was changed), or, when the connection was lost
//! after a write's `COMMIT` was sent, with [`StoreError::OutcomeUnknown`]; never a hang.
//! Idle connections are checked before use, so that a restarted PostgreSQL's stale
//! connections fail no request.
//!
//! `schema.rs` holds the migrations; `queries.rs`, `platform.rs` and `outbox.rs` the
//! statements; `link.rs` the bounds and what the store knows of PostgreSQL answering.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde::Deserialize;
use tokio::runtime::Handle;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use super::seal::{from_json, to_json};
use super::*;

mod days;
mod kept;
mod link;
mod outbox;
mod platform;
mod queries;
mod schema;

use link::{Link, Op};
use queries::Pg;
use schema::MIGRATION_LOCK;

/// Connections per process.
const POOL_SIZE: usize = 16;

/// How long a stored-calculation count is used before it is counted again. Other
/// processes' calculations are seen within this time.
const COUNT_TTL: Duration = Duration::from_secs(10);

/// Unexpired calculations per account and mode (how many, and their bytes), counted at
/// most every [`COUNT_TTL`].
type CalculationCounts =
    std::sync::Arc<Mutex<std::collections::HashMap<Scope, (StoredCalculations, Instant)>>>;

/// The PostgreSQL ledger, a [`Database`] (and so a [`Store`]).
pub struct PostgresStore {
    pool: Pool,
    runtime: Option<tokio::runtime::Runtime>,
    counts: CalculationCounts,
    /// The database, for messages (no password).
    target: String,
    /// The bounds of every wait, and what the store knows of PostgreSQL answering.
    link: Arc<Link>,
    /// Round trips the writes awaited, begin and commit included (for tests and
    /// measurements: [`PostgresStore::write_round_trips`]).
    round_trips: std::sync::Arc<std::sync::atomic::AtomicU64>,
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

/// The store's error for PostgreSQL's: a connection that is gone (closed, reset, the
/// server shutting down) or a statement canceled by `statement_timeout` is
/// [`StoreError::Unavailable`]; anything else a ledger error.
pub(super) fn pg_err(e: tokio_postgres::Error) -> StoreError {
    let text = match e.as_db_error() {
        Some(db) => format!("PostgreSQL: {}", db.message()),
        None => format!("PostgreSQL: {}", with_causes(&e)),
    };
    if link::connection_gone(&e) || link::timed_out(&e) {
        StoreError::Unavailable(text)
    } else {
        StoreError::Ledger(text)
    }
}

pub(super) fn pool_err(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::ledger(format!(
        "could not reach the PostgreSQL ledger: {}",
        with_causes(&e)
    ))
}

/// Maps an insert's or update's error: a unique violation is the client's id of `what`
/// already taken ([`StoreError::Duplicate`]), anything else a database error.
pub(super) fn conflict(
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
pub(super) fn text(row: &Row, i: usize) -> Result<String, StoreError> {
    row.try_get(i).map_err(pg_err)
}

/// A sealed record in column 0 of a row.
pub(super) fn record<T: for<'de> Deserialize<'de>>(row: &Row) -> Result<T, StoreError> {
    from_json(&text(row, 0)?)
}

pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A connection or a transaction: statements prepared once per connection and cached.
pub(super) trait Conn: Sync {
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
    /// As `exec`, with owned parameters, so that the statement can be sent and its answer
    /// awaited later (`queries::Pg::later`).
    fn exec_owned<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<queries::Owned>,
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
            fn exec_owned<'a>(
                &'a self,
                sql: &'static str,
                params: Vec<queries::Owned>,
            ) -> impl Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a {
                async move {
                    let st = self.prepare_cached(sql).await?;
                    self.execute_raw(&st, params).await
                }
            }
        }
    };
}
conn_impl!(deadpool_postgres::Client);
conn_impl!(deadpool_postgres::Transaction<'_>);

/// Begins a write that is acknowledged only once flushed: a transaction with
/// `synchronous_commit = on` (the pool's connections default to `off`, for calculations).
/// Every write but a calculation begins here; each statement's answer awaited within the
/// bound of `op`.
async fn begin<'a>(
    op: &Op,
    client: &'a mut deadpool_postgres::Client,
) -> Result<deadpool_postgres::Transaction<'a>, StoreError> {
    let tx = op.answer(client.transaction(), pg_err).await?;
    op.answer(
        tx.batch_execute("SET LOCAL synchronous_commit TO on"),
        pg_err,
    )
    .await?;
    Ok(tx)
}

/// Begins a write as [`begin`] does, for work that may take long (migrations, a copy):
/// without `statement_timeout` or `idle_in_transaction_session_timeout`. The TCP
/// keepalives and user timeout still end it if PostgreSQL goes silent.
pub(super) async fn begin_long(
    client: &mut deadpool_postgres::Client,
) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    let tx = client.transaction().await.map_err(pg_err)?;
    tx.batch_execute(
        "SET LOCAL synchronous_commit TO on; SET LOCAL statement_timeout TO 0; \
         SET LOCAL idle_in_transaction_session_timeout TO 0",
    )
    .await
    .map_err(pg_err)?;
    Ok(tx)
}

impl PostgresStore {
    /// How many round trips to PostgreSQL this store's writes have awaited (each write's
    /// begin, statements and commit): what a write costs beside PostgreSQL's own work.
    pub fn write_round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

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
        // The timeouts and keepalives the string leaves unset; calculations commit without
        // waiting for the flush, and every other write sets `synchronous_commit = on` in
        // its transaction (`begin`).
        let bounds = link::configure(&mut config)
            .map_err(|e| StoreError::ledger(format!("{target}: {e}")))?;
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
            .wait_timeout(Some(bounds.connection))
            .create_timeout(Some(bounds.connection))
            .recycle_timeout(Some(bounds.connection))
            .pre_recycle(link::check_hook(bounds.connection))
            .build()
            .map_err(|e| StoreError::ledger(format!("could not make a connection pool: {e}")))?;
        let store = PostgresStore {
            pool,
            runtime: Some(runtime),
            counts: CalculationCounts::default(),
            target,
            link: Link::new(bounds),
            round_trips: Default::default(),
        };
        store
            .run(schema::migrate(store.pool.clone(), store.target.clone()))
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
                if schema::purge(&pool).await.is_ok() {
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

    /// Runs `f` on a thread of the store's blocking pool, where it may await the runtime's
    /// futures (`Handle::block_on`), and waits for its answer. A panic is an internal error,
    /// not a panic of the caller.
    fn blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Handle, &Pool) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let failed = || StoreError::Internal("the PostgreSQL ledger failed unexpectedly".into());
        let rt = self.runtime.as_ref().ok_or_else(failed)?;
        let (handle, pool) = (rt.handle().clone(), self.pool.clone());
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        rt.spawn_blocking(move || {
            let _ = tx.send(f(&handle, &pool));
        });
        rx.recv().map_err(|_| failed())?
    }

    /// Runs `f` as [`PostgresStore::blocking`] does, over a connection of the pool had
    /// within the bound: once PostgreSQL lets the operation through ([`Link::admit`]),
    /// and with the connection dropped afterwards if it broke or went silent.
    fn over_connection<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Handle, &Op, &mut deadpool_postgres::Client) -> Result<R, StoreError>
            + Send
            + 'static,
    ) -> Result<R, StoreError> {
        let link = Arc::clone(&self.link);
        let _admitted = link.admit()?;
        self.blocking(move |rt, pool| {
            let op = Op::new(&link);
            let mut client = rt.block_on(op.connect(pool))?;
            let out = f(rt, &op, &mut client);
            op.release(client);
            out
        })
    }

    /// Stores one calculation (its table, id and expiry) without a flush; the commit
    /// resolves once PostgreSQL has committed it.
    fn submit_calc(
        &self,
        scope: &Scope,
        sql: &'static str,
        (id, expires_at, data): (String, i64, String),
        kept: Option<KeptAnswer>,
    ) -> Commit {
        let (commit, completer) = Commit::new();
        let bytes = data.len() as u64;
        let (pool, counts, scope) = (
            self.pool.clone(),
            std::sync::Arc::clone(&self.counts),
            scope.clone(),
        );
        let link = Arc::clone(&self.link);
        self.spawn(async move {
            let result = async {
                let _admitted = link.admit()?;
                let op = Op::new(&link);
                let mut client = op.connect(&pool).await?;
                let params: Params<'_> = &[&&*scope.account, &scope.live, &id, &expires_at, &data];
                let stored = match &kept {
                    None => op.commit(client.exec(sql, params)).await.map(drop),
                    // With an answer to keep: one transaction, both or neither (committed
                    // without a flush, as a calculation is).
                    Some(answer) => {
                        async {
                            let tx = op.answer(client.transaction(), pg_err).await?;
                            op.answer(tx.exec(sql, params), pg_err).await?;
                            kept::keep_on(&tx, &scope, answer).await?;
                            op.commit(tx.commit()).await
                        }
                        .await
                    }
                };
                op.release(client);
                stored
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
const LEDGER_TABLES: [&str; 19] = [
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
    "outbox",
    "registrations",
    "nexus_months",
    "liability_rows",
    "liability_totals",
    "idempotency_keys",
    "levy_ledger",
];

impl PostgresStore {
    /// Inserts the rows of a copied ledger ([`super::copy_ledger`]) in one transaction,
    /// once it is sure the ledger holds no records, and checks each table's count before
    /// committing. Rows per table.
    pub(in crate::store) fn import(
        &self,
        tables: Vec<super::copy::Rows>,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let pool = self.pool.clone();
        self.run(async move {
            let mut client = pool.get().await.map_err(pool_err)?;
            let tx = begin_long(&mut client).await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(pg_err)?;
            for table in &LEDGER_TABLES[..LEDGER_TABLES.len() - 1] {
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
            // The daily liability totals, from the records copied.
            schema::fill_days(&tx).await?;
            tx.commit().await.map_err(pg_err)?;
            Ok(copied)
        })
    }
}

impl Database for PostgresStore {
    fn read<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.over_connection(move |rt, op, client| work(&Pg::new(&*client, rt, op, false)))
    }

    fn snapshot<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.over_connection(move |rt, op, client| {
            let start = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start();
            let tx = rt.block_on(op.answer(start, pg_err))?;
            let pg = Pg::new(&tx, rt, op, false);
            let out = work(&pg);
            drop(pg);
            let out = out?;
            rt.block_on(op.answer(tx.commit(), pg_err))?;
            Ok(out)
        })
    }

    fn write<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let round_trips = std::sync::Arc::clone(&self.round_trips);
        self.over_connection(move |rt, op, client| {
            let tx = rt.block_on(begin(op, client))?;
            let pg = Pg::new(&tx, rt, op, true);
            let out = work(&pg).and_then(|out| pg.finish().map(|()| out));
            // `begin`'s two and the commit's, beside the statements'.
            round_trips.fetch_add(pg.round_trips() + 3, std::sync::atomic::Ordering::Relaxed);
            let out = out?;
            drop(pg);
            rt.block_on(op.commit(tx.commit()))?;
            Ok(out)
        })
    }

    fn submit(
        &self,
        scope: &Scope,
        quote: Quote<'_>,
        kept: Option<&KeptAnswer>,
    ) -> Result<Commit, StoreError> {
        let kept = kept.cloned();
        Ok(match quote {
            Quote::Calculation(c) => self.submit_calc(
                scope,
                "INSERT INTO calculations (account, live, id, expires_at, data) VALUES ($1, $2, $3, $4, $5)",
                (c.id.clone(), c.expires_at, to_json(c)?),
                kept,
            ),
            Quote::Platform(p) => self.submit_calc(
                scope,
                "INSERT INTO platform_calculations (account, live, id, expires_at, data) VALUES ($1, $2, $3, $4, $5)",
                (p.id.clone(), p.order.expires_at, to_json(p)?),
                kept,
            ),
        })
    }

    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations, StoreError> {
        let counts = || self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, at)) = counts().get(scope) {
            if at.elapsed() < COUNT_TTL {
                return Ok(*n);
            }
        }
        let counted = scope.clone();
        let n = self.read(move |s| s.count_calculations(&counted))?;
        counts().insert(scope.clone(), (n, Instant::now()));
        Ok(n)
    }

    fn reads_cross_a_network(&self) -> bool {
        true
    }

    fn health(&self) -> Health {
        self.link.health()
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
