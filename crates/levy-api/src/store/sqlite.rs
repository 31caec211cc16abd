//! The SQLite ledger: one file, WAL (checkpointed by its own thread), versioned migrations, every
//! stored record sealed with its BLAKE3 digest.
//!
//! # Writes: one writer, group commit
//!
//! All writes go through one writer thread that owns the write connection. A caller's
//! write is a closure run inside a savepoint of the writer's current transaction; the
//! writer takes every write that is waiting, runs each in its own savepoint (a failing
//! write rolls back alone; a write of one statement, which SQLite undoes alone, needs
//! none), commits once (one fsync for the whole group), and only then answers each
//! caller. So an acknowledged write is on disk, concurrent callers share the
//! cost of the fsync, and a check-then-insert (refund limits) is atomic because no other
//! write can interleave.
//!
//! Calculations (24-hour quotes) are stored packed (LZ4 against a fixed dictionary; see
//! `store/pack.rs`), and they are the exception to flushing: they are committed with
//! `synchronous=NORMAL`, without waiting for the flush (see `Durability::Cached`). A group
//! is all of one level: a flushed write never waits in a cached group, and a cached write
//! that joins a flushed group is flushed with it.
//!
//! # Reads
//!
//! A file ledger reads through a small pool of read connections (WAL lets readers run
//! beside the writer). An in-memory ledger (`:memory:`) has one connection, so its reads
//! go through the writer too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::{params, Connection, OptionalExtension};

use super::pack::{pack_calculation, pack_record, unpack};
use super::seal::{damaged, digest, from_json, seal, to_json, unseal};
use super::*;

/// The current schema version (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 6;

/// Migrations, in order; entry `i` brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE customers (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    reference_customer_id TEXT, data TEXT NOT NULL, deleted_at INTEGER,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX customers_reference ON customers (account, live, reference_customer_id)
    WHERE reference_customer_id IS NOT NULL AND deleted_at IS NULL;
CREATE TABLE products (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE TABLE calculations (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    expires_at INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX calculations_expiry ON calculations (expires_at);
CREATE TABLE transactions (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    reference_order_id TEXT NOT NULL, data TEXT NOT NULL, deleted_at INTEGER,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id);
CREATE TABLE refunds (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    transaction_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX refunds_transaction ON refunds (account, live, transaction_id, seq);
CREATE TABLE nexus (
    account TEXT NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL, currency TEXT NOT NULL,
    sales TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (account, country, region, currency)
);
"#,
    r#"
ALTER TABLE transactions ADD COLUMN kind TEXT NOT NULL DEFAULT 'order';
DROP INDEX transactions_order;
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id, kind);
CREATE TABLE merchants (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    reference_merchant_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX merchants_reference ON merchants (account, live, reference_merchant_id);
CREATE TABLE platform_calculations (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    expires_at INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX platform_calculations_expiry ON platform_calculations (expires_at);
CREATE TABLE certificates (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, customer_id TEXT, data TEXT NOT NULL
);
CREATE INDEX certificates_account ON certificates (account, customer_id);
CREATE TABLE certificate_documents (
    certificate_id TEXT NOT NULL PRIMARY KEY, content_type TEXT NOT NULL, bytes BLOB NOT NULL
);
CREATE TABLE certificate_requests (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, data TEXT NOT NULL
);
CREATE INDEX certificate_requests_account ON certificate_requests (account, id);
CREATE TABLE secrets (name TEXT NOT NULL PRIMARY KEY, value BLOB NOT NULL);
"#,
    // Schema 3 changes no table: `seal_existing_rows` seals every stored record.
    "",
    // Schema 4: the outbox of records not yet sent to a central ledger (`levy sync`);
    // `fill_outbox` puts every record already stored in it.
    r#"
CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL, live INTEGER NOT NULL,
    kind TEXT NOT NULL, record_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'unsent', note TEXT
);
CREATE INDEX outbox_unsent ON outbox (live, state, seq);
"#,
    // Schema 5: calculations are purged by rowid (`purge_calculations`), so the index on
    // their expiry, which every calculation paid an insert for, goes.
    "DROP INDEX IF EXISTS calculations_expiry;",
    // Schema 6: each transaction's running refund total (`crate::ledger::Refunded`,
    // sealed), so that a refund reads one record instead of every earlier refund. NULL
    // until the transaction's first refund, reversal or deletion computes it. The column
    // is added by `add_refunded_column` (when it is not there yet).
    "",
];

/// Schema 6: the `refunded` column of transactions, unless the file has it already.
fn add_refunded_column(conn: &Connection) -> Result<(), StoreError> {
    let has: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM pragma_table_info('transactions') WHERE name = 'refunded'",
            [],
            |r| r.get(0),
        )
        .map_err(sqlite_err)?;
    if !has {
        conn.execute_batch("ALTER TABLE transactions ADD COLUMN refunded TEXT;")
            .map_err(sqlite_err)?;
    }
    Ok(())
}

type Reply = Box<dyn FnOnce(Result<(), String>) + Send>;
type Job = Box<dyn FnOnce(&Connection) -> Reply + Send>;

/// How a write reaches the disk before it is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Durability {
    /// Committed with `synchronous=FULL`: the WAL is flushed to the disk (fsync) before
    /// the answer. Transactions, refunds, reversals and every other record.
    Flushed,
    /// Committed with `synchronous=NORMAL`: in the WAL, in the operating system's page
    /// cache, not yet flushed. Survives the process being killed; a power loss or an
    /// operating-system crash can lose the last of these (never a flushed write, and the
    /// next flushed commit flushes them too). For calculations: 24-hour quotes that the
    /// client can ask for again.
    Cached,
}

/// Unexpired calculations stored per account and mode (how many, and their bytes), counted
/// once from the ledger and then kept up to date in memory; emptied by every purge (and
/// counted again when next asked), so it never drifts for long.
type CalculationCounts =
    std::sync::Arc<Mutex<std::collections::HashMap<Scope, StoredCalculations>>>;

/// The SQLite implementation of [`Store`].
pub struct SqliteStore {
    jobs: Mutex<Option<mpsc::Sender<(Durability, Job)>>>,
    counts: CalculationCounts,
    readers: Vec<Mutex<Connection>>,
    writer: Option<JoinHandle<()>>,
    /// Dropped to stop the checkpointer (a file ledger's only).
    checkpoints: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

/// The size of the WAL, in pages, from which it is started over ([`checkpoint_loop`],
/// [`restart_wal`]): 8 MiB of 4 KiB pages.
const WAL_RESTART_FRAMES: i64 = 2048;

/// How often the checkpointer copies the WAL into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Copies the WAL into the database file every [`CHECKPOINT_EVERY`] (a passive checkpoint:
/// it never blocks the writer or the readers) and flushes the file (`db`), on its own
/// connection, so that neither the copy nor its flush happens inside a commit of the
/// writer. Once the WAL holds `restart_frames` pages, it catches up with the writer and
/// sets `restart`, for the writer to start the WAL over ([`restart_wal`]). Ends when
/// `stop`'s sender is dropped.
fn checkpoint_loop(
    conn: Connection,
    db: std::fs::File,
    stop: mpsc::Receiver<()>,
    restart: std::sync::Arc<std::sync::atomic::AtomicBool>,
    restart_frames: i64,
) {
    use std::sync::atomic::Ordering;
    // Frames in the WAL and frames copied, as `wal_checkpoint(PASSIVE)` reports them. SQLite
    // flushes the database file only after a checkpoint that copied the whole WAL, which a
    // passive one under sustained writes never does: the pages it copied would wait for
    // the writer's restart, which would flush them all while every commit waits (23 ms for
    // a 64 MiB WAL under the load test). They are flushed here instead, after each pass,
    // off the writer's path; what SQLite flushes itself is then only the last pages.
    // The counts of the last pass: a pass that reports the same copied nothing new, and an
    // idle ledger is not flushed every 200 ms.
    let mut last = (0, 0);
    let mut passive = || {
        let counts = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        if counts.1 > 0 && counts != last {
            if let Err(e) = db.sync_data() {
                tracing::warn!(error = %e, "could not flush the ledger file after a checkpoint");
            }
        }
        last = counts;
        Ok::<_, rusqlite::Error>(counts)
    };
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT_EVERY) {
        if restart.load(Ordering::Acquire) {
            // The writer has yet to start the WAL over; a checkpoint now would only
            // compete with it.
            continue;
        }
        let (frames, mut copied) = match passive() {
            Ok(counts) => counts,
            Err(e) => {
                tracing::warn!(error = %e, "ledger checkpoint failed; the next one retries");
                continue;
            }
        };
        if frames < restart_frames {
            continue;
        }
        // Under sustained writes a passive checkpoint never catches up with the writer,
        // and SQLite starts the WAL over only once every frame in it has been copied: it
        // would grow without bound. The writer copies the last frames itself between two
        // groups and starts the WAL over ([`restart_wal`]), holding its commits for as
        // long; so that little is left for it, copy what was written during the copy
        // before, until that is a few pages (each pass is shorter than the one before).
        for _ in 0..CATCH_UP_PASSES {
            match passive() {
                Ok((frames, now)) => {
                    let behind = frames - copied;
                    copied = now;
                    if behind <= CAUGHT_UP_FRAMES {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        restart.store(true, Ordering::Release);
    }
}

/// The most passive checkpoints the checkpointer runs in a row to catch up with the writer
/// before it asks the writer to start the WAL over.
const CATCH_UP_PASSES: usize = 4;

/// Frames left behind by a passive checkpoint that count as caught up.
const CAUGHT_UP_FRAMES: i64 = 64;

/// Copies what is left of the WAL into the database and starts the WAL over, on the
/// writer's connection between two groups (no write waits in it, none is held off by a
/// lock), when the checkpointer asks for it ([`checkpoint_loop`]).
fn restart_wal(conn: &Connection, restart: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    if !restart.load(Ordering::Acquire) {
        return;
    }
    let started = std::time::Instant::now();
    match conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
    }) {
        Ok((busy, frames)) => tracing::debug!(
            busy,
            frames,
            micros = started.elapsed().as_micros() as u64,
            "ledger WAL started over"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "ledger WAL restart failed; the next checkpoint asks again")
        }
    }
    restart.store(false, Ordering::Release);
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

fn sqlite_err(e: rusqlite::Error) -> StoreError {
    StoreError::ledger(e)
}

/// A nexus total as stored in `sales`: `<sales> <count> <digest of both>`.
fn seal_nexus(sales: Decimal, count: i64) -> String {
    let text = format!("{} {count}", sales.normalize());
    let sum = digest(&text);
    format!("{text} {sum}")
}

/// The sales of a stored nexus total, once its digest matches and its count is the row's.
pub(super) fn unseal_nexus(stored: &str, count: i64) -> Result<Decimal, StoreError> {
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

/// Schema 3: every record sealed with its digest (see [`seal`]); nexus totals likewise.
fn seal_existing_rows(conn: &Connection) -> Result<(), StoreError> {
    for table in SEALED_TABLES {
        let rows: Vec<(i64, String)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT rowid, data FROM {table}"))
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sqlite_err)?;
            rows.collect::<Result<_, _>>().map_err(sqlite_err)?
        };
        let mut update = conn
            .prepare(&format!("UPDATE {table} SET data = ?2 WHERE rowid = ?1"))
            .map_err(sqlite_err)?;
        for (rowid, data) in rows {
            update
                .execute(params![rowid, seal(&data)?])
                .map_err(sqlite_err)?;
        }
    }
    let rows: Vec<(i64, String, i64)> = {
        let mut stmt = conn
            .prepare("SELECT rowid, sales, count FROM nexus")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)?
    };
    for (rowid, sales, count) in rows {
        let sales: Decimal = sales.parse().map_err(StoreError::ledger)?;
        conn.execute(
            "UPDATE nexus SET sales = ?2 WHERE rowid = ?1",
            params![rowid, seal_nexus(sales, count)],
        )
        .map_err(sqlite_err)?;
    }
    Ok(())
}

/// Schema 4: every transaction and refund already stored goes into the outbox, in the
/// order they were written, with their deletions and reversals after them.
fn fill_outbox(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'transaction', id FROM transactions ORDER BY rowid;
         INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'refund', id FROM refunds ORDER BY rowid;
         INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'deletion', id FROM transactions
             WHERE deleted_at IS NOT NULL ORDER BY rowid;",
    )
    .map_err(sqlite_err)?;
    // A reversal is only in the sealed record.
    let refunds: Vec<(String, bool, String, String)> = {
        let mut stmt = conn
            .prepare("SELECT account, live, id, data FROM refunds ORDER BY rowid")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)?
    };
    for (account, live, id, data) in refunds {
        let refund: RefundRecord = from_json(&data)?;
        if refund.reversed_at.is_some() {
            outbox_add(conn, &account, live, "reversal", &id)?;
        }
    }
    Ok(())
}

/// Appends an event to the outbox (`levy sync` sends it to a central ledger).
fn outbox_add(
    conn: &Connection,
    account: &str,
    live: bool,
    kind: &str,
    id: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO outbox (account, live, kind, record_id) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut stmt| stmt.execute(params![account, live, kind, id]))
    .map_err(sqlite_err)?;
    Ok(())
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

/// How long a connection waits for a lock another connection holds before it gives up
/// with `SQLITE_BUSY`.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The step of that wait.
const BUSY_STEP: std::time::Duration = std::time::Duration::from_micros(100);

/// Waits one [`BUSY_STEP`] for a lock, up to [`BUSY_WAIT`] in all. SQLite's own busy
/// timeout sleeps 1, 2, 5, 10 ms and longer between tries: a writer held off for a
/// moment by the checkpointer would sleep for milliseconds after the lock was free.
fn busy(tries: i32) -> bool {
    let most = (BUSY_WAIT.as_micros() / BUSY_STEP.as_micros()) as i32;
    if tries >= most {
        return false;
    }
    std::thread::sleep(BUSY_STEP);
    true
}

fn open_connection(path: &str) -> Result<Connection, StoreError> {
    let conn = Connection::open(path).map_err(sqlite_err)?;
    conn.busy_handler(Some(busy)).map_err(sqlite_err)?;
    Ok(conn)
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlite_err)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.unchecked_transaction().map_err(sqlite_err)?;
        tx.execute_batch(sql).map_err(sqlite_err)?;
        if i + 1 == 3 {
            seal_existing_rows(&tx)?;
        }
        if i + 1 == 4 {
            fill_outbox(&tx)?;
        }
        if i + 1 == 6 {
            add_refunded_column(&tx)?;
        }
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
            .map_err(sqlite_err)?;
        tx.commit().map_err(sqlite_err)?;
    }
    Ok(())
}

/// How a writer job's write is kept apart from the rest of its group should it fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// In its own savepoint, rolled back alone: any write.
    Savepoint,
    /// One SQL statement, which SQLite already undoes alone when it fails, so no savepoint
    /// (two statements fewer per write): the calculations' single INSERT.
    Statement,
}

/// A writer job: runs `f` in its own savepoint of the writer's transaction (rolled back
/// alone when it fails or panics; with [`Unit::Statement`], `f` is one statement and needs
/// none), then, once the group's commit is known, hands `f`'s result to `deliver`, turned
/// into a ledger error if the commit failed (nothing of the group was stored, so a success
/// must not be reported).
fn job<R: Send + 'static>(
    unit: Unit,
    f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    deliver: impl FnOnce(Result<R, StoreError>) + Send + 'static,
) -> Job {
    Box::new(move |conn: &Connection| {
        let run = |conn: &Connection| {
            catch_unwind(AssertUnwindSafe(|| f(conn))).unwrap_or_else(|_| {
                Err(StoreError::Internal(
                    "the ledger write failed unexpectedly".into(),
                ))
            })
        };
        let result = match unit {
            Unit::Statement => run(conn),
            Unit::Savepoint => savepoint(conn, run),
        };
        Box::new(move |commit: Result<(), String>| {
            deliver(match commit {
                Ok(()) => result,
                Err(e) => result.and(Err(StoreError::Ledger(e))),
            });
        })
    })
}

/// Runs `run` in a savepoint of the writer's transaction, rolled back when it fails.
fn savepoint<R>(
    conn: &Connection,
    run: impl FnOnce(&Connection) -> Result<R, StoreError>,
) -> Result<R, StoreError> {
    conn.execute_batch("SAVEPOINT job")
        .map_err(StoreError::ledger)?;
    let r = run(conn);
    let end = if r.is_ok() {
        "RELEASE job"
    } else {
        "ROLLBACK TO job; RELEASE job"
    };
    match conn.execute_batch(end) {
        Ok(()) => r,
        Err(e) => Err(StoreError::ledger(e)),
    }
}

/// A customer by id, or by `reference_customer_id` when `by_reference`; deleted ones are
/// not found.
fn get_customer(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
    by_reference: bool,
) -> Result<Option<CustomerRecord>, StoreError> {
    let sql = if by_reference {
        "SELECT data FROM customers WHERE account = ?1 AND live = ?2 AND reference_customer_id = ?3 AND deleted_at IS NULL"
    } else {
        "SELECT data FROM customers WHERE account = ?1 AND live = ?2 AND id = ?3 AND deleted_at IS NULL"
    };
    let data: Option<String> = conn
        .prepare_cached(sql)
        .and_then(|mut stmt| {
            stmt.query_row(params![account, live, id], |r| r.get(0))
                .optional()
        })
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

/// A product by `reference_product_id`.
fn get_product(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<ProductRecord>, StoreError> {
    let data: Option<String> = conn
        .prepare_cached("SELECT data FROM products WHERE account = ?1 AND live = ?2 AND id = ?3")
        .and_then(|mut stmt| {
            stmt.query_row(params![account, live, id], |r| r.get(0))
                .optional()
        })
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

/// An account's certificates, oldest id first; one customer's when given.
fn get_certificates(
    conn: &Connection,
    account: &str,
    customer: Option<&str>,
) -> Result<Vec<CertificateRecord>, StoreError> {
    match customer {
        Some(c) => query_all(
            conn,
            "SELECT data FROM certificates WHERE account = ?1 AND customer_id = ?2 ORDER BY id",
            params![account, c],
        ),
        None => query_all(
            conn,
            "SELECT data FROM certificates WHERE account = ?1 ORDER BY id",
            params![account],
        ),
    }
}

/// Counts a calculation of `bytes` just stored for `scope` (when its count is known).
fn count_one_more(counts: &CalculationCounts, scope: &Scope, bytes: usize) {
    if let Some(n) = counts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_mut(scope)
    {
        n.count += 1;
        n.bytes += bytes as u64;
    }
}

/// How long a cached group waits for more writes under load ([`gathers`]) before it is
/// committed.
const GATHER: std::time::Duration = std::time::Duration::from_micros(400);

/// Whether a group that starts with a write of `level` waits [`GATHER`] for more writes
/// before it is committed, given how many writes the group before it held.
///
/// A cached commit (a calculation's) costs the writer one WAL append of every page the
/// group touched, whether the group holds one write or a hundred, and waking the writer
/// for each write costs its caller a system call. So under load, which the last group
/// shows by holding more than one write, a cached group is gathered for [`GATHER`]: its
/// callers wait that much longer for their answer, and the ledger does a fraction of the
/// work for each. A lone write (the last group held one) is committed at once, so a single
/// client is never slowed, and the gathering ends as soon as the workers run out of work
/// ([`workers_idle`], [`parked_to_end`]), so a few clients are not slowed either. A flushed
/// group never waits here: its flush takes longer than the wait would, and the writes that
/// arrive meanwhile make the next group.
fn gathers(level: Durability, last_group: usize) -> bool {
    level == Durability::Cached && last_group > 1
}

/// The writers gathering a group now, each with the flag that ends its gathering and how
/// many parked workers end it: what [`workers_idle`] wakes.
#[allow(clippy::type_complexity)]
static GATHERING: Mutex<Vec<(std::thread::Thread, Arc<AtomicBool>, usize)>> =
    Mutex::new(Vec::new());

/// How many writers are in [`GATHERING`], read without its lock.
static GATHERING_COUNT: AtomicUsize = AtomicUsize::new(0);

/// How many workers are parked, by [`workers_idle`] and [`worker_busy`].
static PARKED: AtomicUsize = AtomicUsize::new(0);

/// How many live threads have reported a park through [`workers_idle`]: the workers of the
/// runtimes built with the hooks (each parks as soon as it starts idle), counted by a mark
/// each such thread keeps and drops when it ends.
static WORKERS: AtomicUsize = AtomicUsize::new(0);

/// A thread's place in [`WORKERS`], taken on its first park and given back when it ends.
struct WorkerMark;

impl WorkerMark {
    fn new() -> WorkerMark {
        WORKERS.fetch_add(1, Ordering::SeqCst);
        WorkerMark
    }
}

impl Drop for WorkerMark {
    fn drop(&mut self) {
        WORKERS.fetch_sub(1, Ordering::SeqCst);
    }
}

thread_local! {
    static WORKER_MARK: WorkerMark = WorkerMark::new();
}

/// From how many writes in the group before it a gathering waits for every worker to park
/// ([`parked_to_end`]) rather than the first.
const GATHER_ALL_FROM: usize = 12;

/// Tells the ledgers' writers that a thread answering requests has run out of work, as an
/// async runtime's worker does when it is about to park (tokio's `Builder::on_thread_park`;
/// `levy_server::runtime_builder` installs it, with [`worker_busy`] as the unpark hook).
///
/// A writer gathering a group of calculations (up to 400 µs) then commits it at once when
/// enough workers are parked (the first; every one under heavy load, once the group before
/// held a dozen writes): the requests that could still join the group are waiting on it,
/// so waiting longer would leave the processor idle. While that many stay parked, a group
/// is not gathered at all. The workers are counted as the live threads that have called
/// this. The counts are the process's: a parked worker of any runtime with these hooks
/// counts for every ledger's gathering. Costs an atomic add and an atomic load when no
/// writer is gathering.
pub fn workers_idle() {
    // Counted once; a thread being torn down is no longer counted.
    let _ = WORKER_MARK.try_with(|_| ());
    let parked = PARKED.fetch_add(1, Ordering::SeqCst) + 1;
    if GATHERING_COUNT.load(Ordering::SeqCst) == 0 {
        return;
    }
    let gathering = GATHERING.lock().unwrap_or_else(|e| e.into_inner());
    for (thread, done, need) in gathering.iter() {
        if parked >= *need && !done.swap(true, Ordering::Relaxed) {
            thread.unpark();
        }
    }
}

/// Says that a worker that [`workers_idle`] saw park has work again (tokio's
/// `Builder::on_thread_unpark`).
pub fn worker_busy() {
    // Never below zero: a runtime might report an unpark without its park.
    let _ = PARKED.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
}

/// How many parked workers end a gathering that follows a group of `last_group` writes.
///
/// The first worker to park ends it under light load: with few clients, each worker holds
/// one or two of their requests, and once one runs dry the others are on their way to the
/// group or already in it. Under heavy load, which a group of [`GATHER_ALL_FROM`] writes or
/// more shows, the first worker to run dry says little: the other workers are still
/// reading and calculating requests that will join the group, so it waits for every
/// worker ([`WORKERS`]), up to [`GATHER`]. The load test's groups (64 connections on
/// 2 cores) hold 35 to 40 calculations that way instead of 11 or 12, and the group
/// commits, the WAL pages written and the threads woken a calculation fall with them. A
/// threshold of a few groups' worth of writes keeps a handful of clients (4 or 10
/// connections, groups of no more than that) at the first-worker rule, where waiting for
/// the second worker to park cost a fifth of their rate.
fn parked_to_end(last_group: usize) -> usize {
    if last_group >= GATHER_ALL_FROM {
        WORKERS.load(Ordering::SeqCst).max(1)
    } else {
        1
    }
}

/// Waits up to `limit` ([`GATHER`]) for more writes to arrive, or until [`workers_idle`]
/// says that `need` workers are parked, so that no more will come before the group is
/// answered; not at all while that many are parked. Registered before the parked workers
/// are counted, and counted by [`workers_idle`] before it looks for gatherings, so a
/// worker that parks meanwhile is seen by one side or the other.
fn gather_for(limit: std::time::Duration, need: usize) {
    let done = Arc::new(AtomicBool::new(false));
    {
        let mut gathering = GATHERING.lock().unwrap_or_else(|e| e.into_inner());
        gathering.push((std::thread::current(), Arc::clone(&done), need));
        GATHERING_COUNT.fetch_add(1, Ordering::SeqCst);
    }
    if PARKED.load(Ordering::SeqCst) >= need {
        done.store(true, Ordering::Relaxed);
    }
    let start = std::time::Instant::now();
    // A wake-up left over from an earlier gathering, or a spurious one, is not an end:
    // only the flag or the time is.
    while !done.load(Ordering::Relaxed) {
        let Some(left) = limit.checked_sub(start.elapsed()) else {
            break;
        };
        std::thread::park_timeout(left);
    }
    let mut gathering = GATHERING.lock().unwrap_or_else(|e| e.into_inner());
    gathering.retain(|(_, d, _)| !Arc::ptr_eq(d, &done));
    GATHERING_COUNT.fetch_sub(1, Ordering::SeqCst);
}

/// Runs a statement without parameters from the connection's cache of prepared
/// statements: the writer begins and commits every group, and `execute_batch` would parse
/// each statement anew.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn writer_loop(
    conn: Connection,
    jobs: mpsc::Receiver<(Durability, Job)>,
    counts: CalculationCounts,
    restart: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let mut last_purge = crate::ids::now();
    // The connection starts with synchronous=FULL (set in `open`).
    let mut synchronous = Durability::Flushed;
    // A flushed write that arrived while a cached group was being gathered: it starts the
    // next group, since the level cannot change inside a transaction.
    let mut held: Option<(Durability, Job)> = None;
    // How many writes the last group held.
    let mut last_group = 0;
    loop {
        let (level, first) = match held.take() {
            Some(job) => job,
            None => match jobs.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        if gathers(level, last_group) {
            // Parked rather than waiting on the channel: a write sent meanwhile does not
            // wake this thread, and is taken below.
            gather_for(GATHER, parked_to_end(last_group));
        }
        restart_wal(&conn, &restart);
        if level != synchronous {
            let pragma = match level {
                Durability::Flushed => "PRAGMA synchronous=FULL",
                Durability::Cached => "PRAGMA synchronous=NORMAL",
            };
            // Should this fail, the level stays FULL or NORMAL as it was; a cached write
            // committed with FULL is only slower, and a flushed one is never gathered
            // into a NORMAL group (below), so only a failure to go back to FULL matters:
            // then `synchronous` still says NORMAL and the next flushed group retries.
            if conn.execute_batch(pragma).is_ok() {
                synchronous = level;
            }
        }
        let began = run_cached(&conn, "BEGIN IMMEDIATE").is_ok();
        let mut replies: Vec<Reply> = Vec::with_capacity(16);
        replies.push(first(&conn));
        while replies.len() < 1024 {
            match jobs.try_recv() {
                // A cached write may ride in a flushed group; a flushed one must not be
                // committed by a cached group.
                Ok((l, job)) if l == synchronous || l == Durability::Cached => {
                    replies.push(job(&conn))
                }
                Ok(other) => {
                    held = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        if synchronous != level && level == Durability::Flushed {
            // Could not switch back to FULL: do not acknowledge a flushed group as such.
            let _ = conn.execute_batch("ROLLBACK");
            for reply in replies {
                reply(Err(
                    "could not make the ledger flush its commits".to_string()
                ));
            }
            continue;
        }
        let now = crate::ids::now();
        if began && now - last_purge >= 60 {
            // Expired calculations can no longer become transactions.
            let _ = purge_calculations(&conn, now);
            let _ = conn.execute(
                "DELETE FROM platform_calculations WHERE expires_at < ?1",
                [now],
            );
            counts.lock().unwrap_or_else(|e| e.into_inner()).clear();
            last_purge = now;
        }
        let commit = if began {
            match run_cached(&conn, "COMMIT") {
                Ok(()) => Ok(()),
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(e.to_string())
                }
            }
        } else {
            Err("could not begin a transaction".to_string())
        };
        last_group = replies.len();
        for reply in replies {
            reply(commit.clone());
        }
    }
}

/// Deletes the calculations that expired before `now`, without an index on their expiry.
///
/// Calculations are inserted as they are made, and each expires a fixed time after it was
/// made ([`VALIDITY_SECONDS`](crate::read::VALIDITY_SECONDS)), so their rowids rise with
/// their expiry: a binary search over the rowids (about 20 lookups for a million
/// calculations) finds where the unexpired ones begin, and the expired ones before that
/// point are deleted as one range of the table. An index on the expiry would cost every
/// calculation an insert (and its page in every group commit) for a delete that runs once
/// a minute. A clock set back can put an unexpired calculation among expired ones: the
/// delete checks each one's expiry, so it is kept, and the expired ones after it may wait
/// for a later purge. Returns how many were deleted.
fn purge_calculations(conn: &Connection, now: i64) -> rusqlite::Result<usize> {
    let mut first_from = conn.prepare_cached(
        "SELECT rowid, expires_at FROM calculations WHERE rowid >= ?1 ORDER BY rowid LIMIT 1",
    )?;
    let mut probe = |rowid: i64| -> rusqlite::Result<Option<(i64, i64)>> {
        first_from
            .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
    };
    let Some((first, _)) = probe(i64::MIN)? else {
        return Ok(0);
    };
    let last: i64 = conn.query_row("SELECT max(rowid) FROM calculations", [], |r| r.get(0))?;
    // Every calculation before `lo` has expired; none from `hi` on has.
    let (mut lo, mut hi) = (first, last.saturating_add(1));
    while lo < hi {
        // In i128: rowids written by hand could span more than an i64 holds.
        let mid = (i128::from(lo) + (i128::from(hi) - i128::from(lo)) / 2) as i64;
        match probe(mid)? {
            Some((rowid, expires_at)) if rowid < hi => {
                if expires_at < now {
                    lo = rowid + 1;
                } else {
                    hi = rowid;
                }
            }
            // No calculation in mid..hi.
            _ => hi = mid,
        }
    }
    conn.prepare_cached("DELETE FROM calculations WHERE rowid < ?1 AND expires_at < ?2")?
        .execute([lo, now])
}

/// `PRAGMA application_id` of a levy ledger: "LEVY" in ASCII. Written when a ledger is
/// created (or first opened by a release that knows it); a file with another id is not
/// opened.
const LEDGER_APPLICATION_ID: i32 = 0x4C45_5659;

fn not_a_ledger(path: &str, why: &str) -> StoreError {
    StoreError::NotALedger {
        path: path.to_string(),
        why: why.to_string(),
    }
}

/// Before anything is written: a file that exists must already be a levy ledger. A missing
/// file is created; an empty file is refused (it is what a failed copy, a truncation or a
/// full disk leaves, and opening it as a new ledger would make every stored transaction
/// read as 404).
fn check_existing_file(path: &str) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::ledger(format!("{path}: {e}"))),
        Ok(m) if m.is_dir() => Err(not_a_ledger(path, "it is a directory")),
        Ok(m) if m.len() == 0 => Err(not_a_ledger(path, "the file is empty (0 bytes)")),
        Ok(_) => Ok(true),
    }
}

/// `PRAGMA quick_check`, its first five findings: `["ok"]` when the structure is sound.
fn quick_check(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare("PRAGMA quick_check(5)").map_err(sqlite_err)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sqlite_err)?;
    rows.collect::<Result<_, _>>().map_err(sqlite_err)
}

/// For a file that existed: it is an SQLite database, it is a levy ledger (the application
/// id, or, for ledgers written before the id, a schema version and levy's tables), and
/// `PRAGMA quick_check` finds its structure sound.
fn check_ledger(conn: &Connection, path: &str) -> Result<(), StoreError> {
    check_identity(conn, path)?;
    let problems = quick_check(conn)?;
    if problems != ["ok"] {
        return Err(StoreError::FileDamaged {
            path: path.to_string(),
            problems,
        });
    }
    Ok(())
}

/// The file is an SQLite database and a levy ledger (see [`check_ledger`]).
fn check_identity(conn: &Connection, path: &str) -> Result<(), StoreError> {
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => {
                not_a_ledger(path, "it is not an SQLite database")
            }
            _ => sqlite_err(e),
        })?;
    if app_id != LEDGER_APPLICATION_ID {
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sqlite_err)?;
        let levy_tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('calculations', 'transactions', 'refunds', 'nexus')",
                [],
                |r| r.get(0),
            )
            .map_err(sqlite_err)?;
        if app_id != 0 || version < 1 || levy_tables != 4 {
            return Err(not_a_ledger(
                path,
                &format!("application id {app_id:#x}, schema version {version}, {levy_tables} of levy's 4 ledger tables"),
            ));
        }
    }
    Ok(())
}

/// What `levy info --ledger` reports: a ledger's size, its counts, and whether every
/// stored record still matches its seal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LedgerReport {
    /// The file's path.
    pub path: String,
    /// Size of the database file, in bytes.
    pub file_bytes: u64,
    /// Size of its write-ahead log (`-wal`), in bytes; 0 when absent.
    pub wal_bytes: u64,
    /// Pages on the free list (space a `VACUUM` would return), in bytes.
    pub free_bytes: u64,
    /// Schema version (`PRAGMA user_version`).
    pub schema_version: i64,
    /// `PRAGMA quick_check`: `["ok"]` when sound.
    pub quick_check: Vec<String>,
    /// Rows of each table, by table name.
    pub rows: std::collections::BTreeMap<String, i64>,
    /// Calculations (and platform calculations) past their 24 hours, which a running
    /// service purges within a minute.
    pub expired_calculations: i64,
    /// Stored records whose seal does not match, as `table rowid: why`.
    pub damaged: Vec<String>,
}

impl LedgerReport {
    /// The report as text, one fact per line.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "ledger      {}", self.path);
        let _ = writeln!(
            out,
            "size        {} bytes (+ {} bytes of WAL; {} bytes free)",
            self.file_bytes, self.wal_bytes, self.free_bytes
        );
        let _ = writeln!(out, "schema      {}", self.schema_version);
        let _ = writeln!(out, "structure   {}", self.quick_check.join("; "));
        for (table, n) in &self.rows {
            let _ = writeln!(out, "{table:<24}{n:>10}");
        }
        let _ = writeln!(
            out,
            "expired calculations {} (purged within a minute while served)",
            self.expired_calculations
        );
        if self.damaged.is_empty() {
            let _ = writeln!(out, "records     every seal matches");
        } else {
            let _ = writeln!(out, "records     {} DAMAGED:", self.damaged.len());
            for d in &self.damaged {
                let _ = writeln!(out, "  {d}");
            }
        }
        out
    }

    /// Whether the ledger is sound: its structure passes `quick_check` and every record
    /// matches its seal.
    pub fn is_sound(&self) -> bool {
        self.quick_check == ["ok"] && self.damaged.is_empty()
    }
}

/// Tables whose `data` column holds sealed records.
const SEALED_TABLES: [&str; 9] = [
    "customers",
    "products",
    "calculations",
    "transactions",
    "refunds",
    "merchants",
    "platform_calculations",
    "certificates",
    "certificate_requests",
];

/// Reads a ledger without changing it (the file is opened read-only): its size, counts and
/// structure, and every stored record checked against its seal. A file that is not a levy
/// ledger is an error, as for [`SqliteStore::open`].
pub fn inspect(path: &str) -> Result<LedgerReport, ApiError> {
    inspect_ledger(path).map_err(ApiError::from)
}

/// [`inspect`], in the store's terms.
fn inspect_ledger(path: &str) -> Result<LedgerReport, StoreError> {
    if !check_existing_file(path)? {
        return Err(not_a_ledger(path, "no such file"));
    }
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite_err)?;
    check_identity(&conn, path)?;
    let quick_check = quick_check(&conn)?;
    let pragma = |name: &str| -> Result<i64, StoreError> {
        conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .map_err(sqlite_err)
    };
    let mut report = LedgerReport {
        path: path.to_string(),
        file_bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        wal_bytes: std::fs::metadata(format!("{path}-wal"))
            .map(|m| m.len())
            .unwrap_or(0),
        free_bytes: (pragma("freelist_count")? * pragma("page_size")?) as u64,
        schema_version: pragma("user_version")?,
        quick_check,
        ..LedgerReport::default()
    };
    let now = crate::ids::now();
    let exists = |table: &str| -> Result<bool, StoreError> {
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n == 1)
        .map_err(sqlite_err)
    };
    for table in SEALED_TABLES.iter().chain(["nexus", "secrets"].iter()) {
        if !exists(table)? {
            continue;
        }
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(sqlite_err)?;
        report.rows.insert(table.to_string(), n);
    }
    for table in ["calculations", "platform_calculations"] {
        if !exists(table)? {
            continue;
        }
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE expires_at < ?1"),
                [now],
                |r| r.get(0),
            )
            .map_err(sqlite_err)?;
        report.expired_calculations += n;
    }
    if report.schema_version >= 3 {
        for table in SEALED_TABLES {
            let mut stmt = conn
                .prepare(&format!("SELECT rowid, data FROM {table}"))
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        unpack(r.get_ref(1)?).map(|t| t.into_owned()),
                    ))
                })
                .map_err(sqlite_err)?;
            for row in rows {
                let (rowid, data) = row.map_err(sqlite_err)?;
                if let Err(e) = data.and_then(|d| unseal(&d).map(|_| ())) {
                    report.damaged.push(format!("{table} {rowid}: {e}"));
                }
            }
        }
        let mut stmt = conn
            .prepare("SELECT rowid, sales, count FROM nexus")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(sqlite_err)?;
        for row in rows {
            let (rowid, sales, count) = row.map_err(sqlite_err)?;
            if let Err(e) = unseal_nexus(&sales, count) {
                report.damaged.push(format!("nexus {rowid}: {e}"));
            }
        }
    }
    Ok(report)
}

impl SqliteStore {
    /// Opens a ledger file, or an in-memory ledger for `:memory:`, and brings its schema up
    /// to date. A missing file is created. A file that exists must be a levy ledger whose
    /// structure passes `PRAGMA quick_check`; anything else (an empty file included) is
    /// refused and left as it was.
    pub fn open(path: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, WAL_RESTART_FRAMES)
    }

    /// [`SqliteStore::open`], the WAL started over from `restart_frames` pages.
    fn open_with(path: &str, restart_frames: i64) -> Result<SqliteStore, StoreError> {
        let memory = path == ":memory:";
        let existed = !memory && check_existing_file(path)?;
        let conn = open_connection(path)?;
        if existed {
            check_ledger(&conn, path)?;
        }
        if !memory {
            let mode: String = conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .map_err(sqlite_err)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::ledger(format!(
                    "could not switch {path} to WAL (journal mode is {mode})"
                )));
            }
        }
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(sqlite_err)?;
        migrate(&conn)?;
        conn.execute_batch(&format!("PRAGMA application_id = {LEDGER_APPLICATION_ID}"))
            .map_err(sqlite_err)?;
        // Set by the checkpointer when the WAL has grown past WAL_RESTART_FRAMES.
        let restart = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let asked = std::sync::Arc::clone(&restart);
        let checkpoints = if memory {
            None
        } else {
            // The writer no longer checkpoints at commit; the checkpointer does. A WAL that
            // grew large (while a long read kept it from starting over) is cut back to
            // 64 MiB when it starts over.
            conn.execute_batch("PRAGMA wal_autocheckpoint=0; PRAGMA journal_size_limit=67108864;")
                .map_err(sqlite_err)?;
            let c = open_connection(path)?;
            c.execute_batch("PRAGMA synchronous=FULL")
                .map_err(sqlite_err)?;
            // Opened to be flushed, never written (a handle that may write: Windows flushes
            // no other).
            let db = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|e| {
                    StoreError::ledger(format!("could not open {path} for the checkpointer: {e}"))
                })?;
            let (stop, stopped) = mpsc::channel::<()>();
            let thread = std::thread::Builder::new()
                .name("levy-ledger-checkpoint".into())
                .spawn(move || checkpoint_loop(c, db, stopped, asked, restart_frames))
                .map_err(|e| {
                    StoreError::ledger(format!("could not start the checkpoint thread: {e}"))
                })?;
            Some((stop, thread))
        };
        let mut readers = Vec::new();
        if !memory {
            for _ in 0..4 {
                let r = open_connection(path)?;
                r.execute_batch("PRAGMA query_only=ON;")
                    .map_err(sqlite_err)?;
                readers.push(Mutex::new(r));
            }
        }
        let (tx, rx) = mpsc::channel::<(Durability, Job)>();
        let counts = CalculationCounts::default();
        let writer_counts = std::sync::Arc::clone(&counts);
        let writer = std::thread::Builder::new()
            .name("levy-ledger-writer".into())
            .spawn(move || writer_loop(conn, rx, writer_counts, restart))
            .map_err(|e| StoreError::ledger(format!("could not start the writer thread: {e}")))?;
        Ok(SqliteStore {
            jobs: Mutex::new(Some(tx)),
            counts,
            readers,
            writer: Some(writer),
            checkpoints,
        })
    }

    /// Runs `f` in the writer's transaction and returns once it is committed and flushed
    /// to the disk.
    fn write<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_store(Durability::Flushed, f)
    }

    /// Runs `f` in the writer's transaction and returns once it is committed as `level`
    /// says.
    fn write_store<R: Send + 'static>(
        &self,
        level: Durability,
        f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = mpsc::sync_channel::<Result<R, StoreError>>(1);
        self.send(
            level,
            job(Unit::Savepoint, f, move |result| {
                let _ = tx.send(result);
            }),
        )?;
        rx.recv()
            .map_err(|_| StoreError::ledger("the ledger writer has stopped"))?
    }

    /// Queues `f`, one SQL statement, for the writer's transaction and returns at once:
    /// the [`Commit`] resolves when it is committed as `level` says. `after` runs (on the
    /// writer's thread) once it is, if it succeeded.
    fn submit_statement(
        &self,
        level: Durability,
        f: impl FnOnce(&Connection) -> Result<(), StoreError> + Send + 'static,
        after: impl FnOnce() + Send + 'static,
    ) -> Commit {
        let (commit, completer) = Commit::new();
        // A refused send drops the job and its completer with it, which resolves the
        // commit with the ledger's error.
        let _ = self.send(
            level,
            job(Unit::Statement, f, move |result| {
                if result.is_ok() {
                    after();
                }
                completer.complete(result);
            }),
        );
        commit
    }

    /// Hands a job to the writer.
    fn send(&self, level: Durability, job: Job) -> Result<(), StoreError> {
        let guard = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let sender = guard
            .as_ref()
            .ok_or_else(|| StoreError::ledger("the ledger is closed"))?;
        sender
            .send((level, job))
            .map_err(|_| StoreError::ledger("the ledger writer has stopped"))
    }

    /// Runs a read on a read connection (or on the writer for an in-memory ledger).
    fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        if self.readers.is_empty() {
            return self.write(f);
        }
        for r in &self.readers {
            if let Ok(conn) = r.try_lock() {
                return f(&conn);
            }
        }
        let conn = self.readers[0].lock().unwrap_or_else(|e| e.into_inner());
        f(&conn)
    }

    /// Runs several reads that must see one state of the ledger: in one read transaction
    /// on a read connection (WAL gives it a snapshot), or on the writer for an in-memory
    /// ledger, where no write can interleave.
    fn read_snapshot<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        if self.readers.is_empty() {
            return self.read(f);
        }
        self.read(move |conn| {
            conn.execute_batch("BEGIN").map_err(sqlite_err)?;
            let out = f(conn);
            // A read transaction changes nothing: ending it either way only lets the
            // connection see later commits again.
            let end = conn.execute_batch("COMMIT");
            if end.is_err() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            out
        })
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer after it has committed what it holds.
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        if let Some((stop, thread)) = self.checkpoints.take() {
            drop(stop);
            let _ = thread.join();
        }
    }
}

fn get_transaction(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<TransactionRecord>, StoreError> {
    let data: Option<String> = conn
        .query_row(
            "SELECT data FROM transactions WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![account, live, id],
            |r| r.get(0),
        )
        .optional()
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

fn get_refunds(
    conn: &Connection,
    account: &str,
    live: bool,
    tx_id: &str,
) -> Result<Vec<RefundRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND transaction_id = ?3 ORDER BY seq",
        )
        .map_err(sqlite_err)?;
    let rows = stmt
        .query_map(params![account, live, tx_id], |r| r.get::<_, String>(0))
        .map_err(sqlite_err)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(from_json(&row.map_err(sqlite_err)?)?);
    }
    Ok(out)
}

/// A transaction's running refund total ([`crate::ledger::Refunded`]): as kept beside it,
/// or, for a transaction that has none yet (stored before schema 6, or never refunded),
/// computed once from its refunds.
fn get_refunded(
    conn: &Connection,
    account: &str,
    live: bool,
    tx: &TransactionRecord,
) -> Result<crate::ledger::Refunded, StoreError> {
    let kept: Option<String> = conn
        .prepare_cached(
            "SELECT refunded FROM transactions WHERE account = ?1 AND live = ?2 AND id = ?3",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![account, live, tx.id], |r| r.get(0))
                .optional()
        })
        .map_err(sqlite_err)?
        .flatten();
    match kept {
        Some(text) => from_json(&text),
        None => Ok(crate::ledger::Refunded::of(
            tx.lines.len(),
            &get_refunds(conn, account, live, &tx.id)?,
        )),
    }
}

/// Keeps a transaction's running refund total.
fn set_refunded(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
    refunded: &crate::ledger::Refunded,
) -> Result<(), StoreError> {
    let data = to_json(refunded)?;
    conn.prepare_cached(
        "UPDATE transactions SET refunded = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3",
    )
    .and_then(|mut stmt| stmt.execute(params![account, live, id, data]))
    .map_err(sqlite_err)?;
    Ok(())
}

/// A refund by id.
fn get_refund(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<RefundRecord>, StoreError> {
    let data: Option<String> = conn
        .prepare_cached("SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND id = ?3")
        .and_then(|mut stmt| {
            stmt.query_row(params![account, live, id], |r| r.get(0))
                .optional()
        })
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

/// Inserts one transaction and, in live mode, adds it to the nexus totals.
fn insert_tx(
    conn: &Connection,
    account: &str,
    live: bool,
    tx: &TransactionRecord,
) -> Result<(), StoreError> {
    let kind = tx.platform.as_ref().map_or("order", |p| p.kind.as_str());
    conn.execute(
        "INSERT INTO transactions (account, live, id, reference_order_id, data, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![account, live, tx.id, tx.reference_order_id, to_json(tx)?, kind],
    )
    .map_err(conflict(RecordKind::Transaction, &tx.reference_order_id))?;
    if let Some(change) = crate::ledger::transaction_effect(live, tx) {
        add_nexus(conn, account, tx, change)?;
    }
    outbox_add(conn, account, live, "transaction", &tx.id)
}

/// Applies `change` (see [`crate::ledger`]) to an account's live nexus total of the place
/// and currency of `tx`.
fn add_nexus(
    conn: &Connection,
    account: &str,
    tx: &TransactionRecord,
    change: crate::ledger::NexusChange,
) -> Result<(), StoreError> {
    let current: Option<(String, i64)> = conn
        .query_row(
            "SELECT sales, count FROM nexus WHERE account = ?1 AND country = ?2 AND region = ?3 AND currency = ?4",
            params![account, tx.country, tx.region, tx.currency],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(sqlite_err)?;
    let stored = match current {
        Some((s, c)) => (unseal_nexus(&s, c)?, c),
        None => (Decimal::ZERO, 0),
    };
    let (sales, count) = change.apply(stored);
    conn.execute(
        "INSERT INTO nexus (account, country, region, currency, sales, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (account, country, region, currency) DO UPDATE SET sales = excluded.sales, count = excluded.count",
        params![account, tx.country, tx.region, tx.currency, seal_nexus(sales, count), count],
    )
    .map_err(sqlite_err)?;
    Ok(())
}

impl Store for SqliteStore {
    fn insert_customer(&self, scope: &Scope, c: CustomerRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&c)?;
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO customers (account, live, id, reference_customer_id, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![&*account, live, c.id, c.reference_customer_id, data],
            )
            .map_err(conflict(RecordKind::Customer, c.reference_customer_id.as_deref().unwrap_or("")))?;
            Ok(())
        })
    }

    fn customer(
        &self,
        scope: &Scope,
        id: &str,
        by_reference: bool,
    ) -> Result<Option<CustomerRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| get_customer(conn, &account, live, &id, by_reference))
    }

    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |conn| {
            let n = conn
                .execute(
                    "UPDATE customers SET deleted_at = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3 AND deleted_at IS NULL",
                    params![&*account, live, id, at],
                )
                .map_err(sqlite_err)?;
            Ok(n == 1)
        })
    }

    fn insert_product(&self, scope: &Scope, p: ProductRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&p)?;
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO products (account, live, id, data) VALUES (?1, ?2, ?3, ?4)",
                params![&*account, live, p.reference_product_id, data],
            )
            .map_err(conflict(RecordKind::Product, &p.reference_product_id))?;
            Ok(())
        })
    }

    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| get_product(conn, &account, live, &id))
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
        self.read_snapshot(move |conn| {
            let customer = match &customer_id {
                Some(id) => get_customer(conn, &account, live, id, false)?,
                None => None,
            };
            let mut products = Vec::with_capacity(product_ids.len());
            for id in &product_ids {
                products.push(match id {
                    Some(id) => get_product(conn, &account, live, id)?,
                    None => None,
                });
            }
            let certificates = match &customer {
                Some(c) if live && !c.is_tax_exempt => {
                    get_certificates(conn, &account, Some(&c.id))?
                }
                _ => Vec::new(),
            };
            Ok(CalculationReads {
                customer,
                products,
                certificates,
            })
        })
    }

    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |conn| {
            let n = conn
                .execute(
                    "DELETE FROM products WHERE account = ?1 AND live = ?2 AND id = ?3",
                    params![&*account, live, id],
                )
                .map_err(sqlite_err)?;
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
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT data FROM products WHERE account = ?1 AND live = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
                )
                .map_err(sqlite_err)?;
            let rows = stmt.query_map(params![&*account, live, cursor, limit as i64], |r| r.get::<_, String>(0)).map_err(sqlite_err)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(from_json(&row.map_err(sqlite_err)?)?);
            }
            Ok(out)
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
        let (account, live) = (scope.account.clone(), scope.live);
        let (id, expires_at) = (calc.id.clone(), calc.expires_at);
        let data = pack_calculation(calc)?;
        let bytes = data.len();
        let (counts, scope) = (std::sync::Arc::clone(&self.counts), scope.clone());
        Ok(self.submit_statement(
            Durability::Cached,
            move |conn| {
                let mut stmt = conn
                    .prepare_cached("INSERT INTO calculations (account, live, id, expires_at, data) VALUES (?1, ?2, ?3, ?4, ?5)")
                    .map_err(sqlite_err)?;
                stmt.execute(params![&*account, live, id, expires_at, data]).map_err(sqlite_err)?;
                Ok(())
            },
            move || count_one_more(&counts, &scope, bytes),
        ))
    }

    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations, StoreError> {
        if let Some(n) = self
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(scope)
        {
            return Ok(*n);
        }
        let (account, live) = (scope.account.clone(), scope.live);
        // `length` of a blob reads its size, not its bytes.
        let (count, bytes): (i64, i64) = self.read(move |conn| {
            conn.query_row(
                "SELECT (SELECT count(*) FROM calculations WHERE account = ?1 AND live = ?2)
                      + (SELECT count(*) FROM platform_calculations WHERE account = ?1 AND live = ?2),
                        (SELECT coalesce(sum(length(data)), 0) FROM calculations WHERE account = ?1 AND live = ?2)
                      + (SELECT coalesce(sum(length(data)), 0) FROM platform_calculations WHERE account = ?1 AND live = ?2)",
                params![&*account, live],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sqlite_err)
        })?;
        let n = StoredCalculations {
            count: count.max(0) as u64,
            bytes: bytes.max(0) as u64,
        };
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scope.clone(), n);
        Ok(n)
    }

    fn calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<CalculationRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| {
            query_packed(
                conn,
                "SELECT data FROM calculations WHERE account = ?1 AND live = ?2 AND id = ?3 AND expires_at > ?4",
                params![&*account, live, id, now],
            )
        })
    }

    fn insert_transaction(&self, scope: &Scope, tx: TransactionRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        self.write(move |conn| insert_tx(conn, &account, live, &tx))
    }

    fn transaction(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<TransactionRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| get_transaction(conn, &account, live, &id))
    }

    fn delete_transaction(&self, scope: &Scope, id: &str, at: i64) -> Result<(), StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |conn| {
            let mut tx = get_transaction(conn, &account, live, &id)?.ok_or_else(|| {
                StoreError::NotFound { what: RecordKind::Transaction, id: id.clone() }
            })?;
            if tx.deleted_at.is_some() {
                return Err(StoreError::AlreadyDeleted { id: id.clone() });
            }
            tx.deleted_at = Some(at);
            conn.execute(
                "UPDATE transactions SET data = ?4, deleted_at = ?5 WHERE account = ?1 AND live = ?2 AND id = ?3",
                params![&*account, live, id, to_json(&tx)?, at],
            )
            .map_err(sqlite_err)?;
            if live {
                let left = get_refunded(conn, &account, live, &tx)?.remaining(&tx);
                if let Some(change) = crate::ledger::deletion_effect(live, &left) {
                    add_nexus(conn, &account, &tx, change)?;
                }
            }
            outbox_add(conn, &account, live, "deletion", &id)
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
        self.write(move |conn| {
            let tx = get_transaction(conn, &account, live, &id)?
                .filter(|t| t.deleted_at.is_none())
                .ok_or_else(|| {
                    StoreError::NotFound {
                        what: RecordKind::Transaction,
                        id: id.clone(),
                    }
                })?;
            let mut refunded = get_refunded(conn, &account, live, &tx)?;
            let refund = build(&tx, &refunded.remaining(&tx))?;
            let data = to_json(&refund)?;
            conn.prepare_cached(
                "INSERT INTO refunds (account, live, id, transaction_id, seq, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![&*account, live, refund.id, id, refunded.count, data])
            })
            .map_err(conflict(RecordKind::Refund, &refund.id))?;
            refunded.add(&refund);
            set_refunded(conn, &account, live, &id, &refunded)?;
            if let Some(change) = crate::ledger::refund_effect(live, &refund) {
                add_nexus(conn, &account, &tx, change)?;
            }
            outbox_add(conn, &account, live, "refund", &refund.id)?;
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
        self.read(move |conn| get_refunds(conn, &account, live, &id))
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
        self.read_snapshot(move |conn| {
            let from: i64 = match &after {
                None => -1,
                Some(cursor) => conn
                    .prepare_cached(
                        "SELECT seq FROM refunds WHERE account = ?1 AND live = ?2 AND id = ?3 AND transaction_id = ?4",
                    )
                    .and_then(|mut stmt| {
                        stmt.query_row(params![&*account, live, cursor, id], |r| r.get(0))
                            .optional()
                    })
                    .map_err(sqlite_err)?
                    .ok_or_else(|| StoreError::NotFound {
                        what: RecordKind::Refund,
                        id: cursor.clone(),
                    })?,
            };
            query_all(
                conn,
                "SELECT data FROM refunds WHERE account = ?1 AND live = ?2 AND transaction_id = ?3 AND seq > ?4 ORDER BY seq LIMIT ?5",
                params![&*account, live, id, from, limit],
            )
        })
    }

    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| get_refund(conn, &account, live, &id))
    }

    fn reverse_refund(
        &self,
        scope: &Scope,
        refund_id: &str,
        at: i64,
    ) -> Result<RefundRecord, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, refund_id.to_string());
        self.write(move |conn| {
            let Some(mut refund) = get_refund(conn, &account, live, &id)? else {
                return Err(StoreError::NotFound {
                    what: RecordKind::Refund,
                    id: id.clone(),
                });
            };
            if refund.reversed_at.is_some() {
                return Err(StoreError::AlreadyReversed { id: id.clone() });
            }
            let tx = get_transaction(conn, &account, live, &refund.transaction_id)?.ok_or_else(
                || StoreError::ledger(format!("refund {id} names a missing transaction")),
            )?;
            // Read before the refund is marked: computed from the refunds, it must still
            // count this one.
            let mut refunded = get_refunded(conn, &account, live, &tx)?;
            refunded.give_back(&refund);
            set_refunded(conn, &account, live, &tx.id, &refunded)?;
            refund.reversed_at = Some(at);
            conn.execute(
                "UPDATE refunds SET data = ?4 WHERE account = ?1 AND live = ?2 AND id = ?3",
                params![&*account, live, id, to_json(&refund)?],
            )
            .map_err(sqlite_err)?;
            if let Some(change) = crate::ledger::reversal_effect(live, &tx, &refund) {
                add_nexus(conn, &account, &tx, change)?;
            }
            outbox_add(conn, &account, live, "reversal", &id)?;
            Ok(refund)
        })
    }

    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>, StoreError> {
        let account = account.to_string();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT country, region, currency, sales, count FROM nexus WHERE account = ?1 ORDER BY country, region, currency",
                )
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map(params![account], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, i64>(4)?))
                })
                .map_err(sqlite_err)?;
            let mut out = Vec::new();
            for row in rows {
                let (country, region, currency, sales, count) = row.map_err(sqlite_err)?;
                out.push(NexusTotal { country, region, currency, sales: unseal_nexus(&sales, count)?, count });
            }
            Ok(out)
        })
    }
}

fn query_all<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<T>, StoreError> {
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

fn query_one<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<T>, StoreError> {
    let data: Option<String> = conn
        .query_row(sql, params, |r| r.get(0))
        .optional()
        .map_err(sqlite_err)?;
    data.map(|d| from_json(&d)).transpose()
}

/// One calculation (or platform calculation), packed or not ([`pack`]).
fn query_packed<T: for<'de> Deserialize<'de>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<T>, StoreError> {
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

fn get_merchant(
    conn: &Connection,
    account: &str,
    live: bool,
    id: &str,
) -> Result<Option<MerchantRecord>, StoreError> {
    // The service's id first; then the client's id.
    let by_id = query_one(
        conn,
        "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND id = ?3",
        params![account, live, id],
    )?;
    match by_id {
        Some(m) => Ok(Some(m)),
        None => query_one(
            conn,
            "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND reference_merchant_id = ?3",
            params![account, live, id],
        ),
    }
}

/// Maps an insert's or update's error: a unique-index violation is the client's id of
/// `what` already taken ([`StoreError::Duplicate`]), anything else a database error.
fn conflict(what: RecordKind, value: &str) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
    move |e| {
        if !is_unique_violation(&e) {
            return sqlite_err(e);
        }
        StoreError::Duplicate {
            what,
            value: value.to_string(),
        }
    }
}

impl PlatformStore for SqliteStore {
    fn insert_merchant(&self, scope: &Scope, m: MerchantRecord) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        let data = to_json(&m)?;
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO merchants (account, live, id, reference_merchant_id, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![&*account, live, m.id, m.reference_merchant_id, data],
            )
            .map_err(conflict(RecordKind::Merchant, &m.reference_merchant_id))?;
            Ok(())
        })
    }

    fn merchant(&self, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| get_merchant(conn, &account, live, &id))
    }

    fn change_merchant(
        &self,
        scope: &Scope,
        id: &str,
        change: MerchantChange,
    ) -> Result<Option<MerchantRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.write(move |conn| {
            let Some(mut m) = get_merchant(conn, &account, live, &id)? else {
                return Ok(None);
            };
            change(&mut m)?;
            conn.execute(
                "UPDATE merchants SET data = ?4, reference_merchant_id = ?5 WHERE account = ?1 AND live = ?2 AND id = ?3",
                params![&*account, live, m.id, to_json(&m)?, m.reference_merchant_id],
            )
            .map_err(conflict(RecordKind::Merchant, &m.reference_merchant_id))?;
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
        self.read(move |conn| {
            query_all(
                conn,
                "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND id > ?3
                 AND json_extract(data, '$.record.status') LIKE ?4 ORDER BY id LIMIT ?5",
                params![&*account, live, cursor, status, limit as i64],
            )
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
        let (account, live) = (scope.account.clone(), scope.live);
        let (id, expires_at) = (calc.id.clone(), calc.order.expires_at);
        let data = pack_record(calc)?;
        let bytes = data.len();
        let (counts, scope) = (std::sync::Arc::clone(&self.counts), scope.clone());
        Ok(self.submit_statement(
            Durability::Cached,
            move |conn| {
                let mut stmt = conn
                    .prepare_cached("INSERT INTO platform_calculations (account, live, id, expires_at, data) VALUES (?1, ?2, ?3, ?4, ?5)")
                    .map_err(sqlite_err)?;
                stmt.execute(params![&*account, live, id, expires_at, data]).map_err(sqlite_err)?;
                Ok(())
            },
            move || count_one_more(&counts, &scope, bytes),
        ))
    }

    fn platform_calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<PlatformCalculationRecord>, StoreError> {
        let (account, live, id) = (scope.account.clone(), scope.live, id.to_string());
        self.read(move |conn| {
            query_packed(
                conn,
                "SELECT data FROM platform_calculations WHERE account = ?1 AND live = ?2 AND id = ?3 AND expires_at > ?4",
                params![&*account, live, id, now],
            )
        })
    }

    fn insert_transactions(
        &self,
        scope: &Scope,
        txs: Vec<TransactionRecord>,
    ) -> Result<(), StoreError> {
        let (account, live) = (scope.account.clone(), scope.live);
        self.write(move |conn| {
            for tx in &txs {
                insert_tx(conn, &account, live, tx)?;
            }
            Ok(())
        })
    }

    fn import_certificates(
        &self,
        account: &str,
        batch: CertificateBatch,
    ) -> Result<(), StoreError> {
        let account = account.to_string();
        self.write(move |conn| {
            for (c, doc) in &batch.certificates {
                conn.execute(
                    "INSERT INTO certificates (id, account, customer_id, data) VALUES (?1, ?2, ?3, ?4)",
                    params![c.id, account, c.customer_id, to_json(c)?],
                )
                .map_err(sqlite_err)?;
                if let (Some(info), Some(bytes)) = (&c.document, doc) {
                    conn.execute(
                        "INSERT INTO certificate_documents (certificate_id, content_type, bytes) VALUES (?1, ?2, ?3)",
                        params![c.id, info.content_type, bytes],
                    )
                    .map_err(sqlite_err)?;
                }
            }
            for r in &batch.requests {
                conn.execute(
                    "INSERT INTO certificate_requests (id, account, data) VALUES (?1, ?2, ?3)",
                    params![r.id, account, to_json(r)?],
                )
                .map_err(sqlite_err)?;
            }
            Ok(())
        })
    }

    fn certificates(
        &self,
        account: &str,
        customer_id: Option<&str>,
    ) -> Result<Vec<CertificateRecord>, StoreError> {
        let (account, customer) = (account.to_string(), customer_id.map(str::to_string));
        self.read(move |conn| get_certificates(conn, &account, customer.as_deref()))
    }

    fn certificate(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRecord>, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |conn| {
            query_one(
                conn,
                "SELECT data FROM certificates WHERE account = ?1 AND id = ?2",
                params![account, id],
            )
        })
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        let id = id.to_string();
        self.read(move |conn| {
            conn.query_row(
                "SELECT content_type, bytes FROM certificate_documents WHERE certificate_id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sqlite_err)
        })
    }

    fn certificate_requests(
        &self,
        account: &str,
    ) -> Result<Vec<CertificateRequestRecord>, StoreError> {
        let account = account.to_string();
        self.read(move |conn| {
            query_all(
                conn,
                "SELECT data FROM certificate_requests WHERE account = ?1 ORDER BY id",
                params![account],
            )
        })
    }

    fn certificate_request(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRequestRecord>, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |conn| {
            query_one(
                conn,
                "SELECT data FROM certificate_requests WHERE account = ?1 AND id = ?2",
                params![account, id],
            )
        })
    }

    fn cancel_certificate_request(
        &self,
        account: &str,
        id: &str,
        at: i64,
    ) -> Result<CertificateRequestRecord, StoreError> {
        let (account, id) = (account.to_string(), id.to_string());
        self.write(move |conn| {
            let found: Option<CertificateRequestRecord> = query_one(
                conn,
                "SELECT data FROM certificate_requests WHERE account = ?1 AND id = ?2",
                params![account, id],
            )?;
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
                    conn.execute(
                        "UPDATE certificate_requests SET data = ?3 WHERE account = ?1 AND id = ?2",
                        params![account, id, to_json(&r)?],
                    )
                    .map_err(sqlite_err)?;
                    Ok(r)
                }
            }
        })
    }

    fn secret(&self, name: &str) -> Result<[u8; 32], StoreError> {
        let name = name.to_string();
        let fresh = crate::ids::random_bytes32().map_err(|e| StoreError::Internal(e.message))?;
        self.write(move |conn| {
            conn.execute(
                "INSERT OR IGNORE INTO secrets (name, value) VALUES (?1, ?2)",
                params![name, fresh.to_vec()],
            )
            .map_err(sqlite_err)?;
            let value: Vec<u8> = conn
                .query_row(
                    "SELECT value FROM secrets WHERE name = ?1",
                    params![name],
                    |r| r.get(0),
                )
                .map_err(sqlite_err)?;
            value
                .try_into()
                .map_err(|_| StoreError::ledger(format!("secret {name} is not 32 bytes")))
        })
    }
}

/// The record an outbox event sends: a transaction or refund as it was when the event
/// was written (a transaction before its deletion, a refund before its reversal), or as
/// it is now for a deletion or a reversal (which carry its time), with its mode
/// (`livemode`) inside the seal, so that the central ledger checks it against the key's.
fn outbox_record(
    conn: &Connection,
    account: &str,
    live: bool,
    kind: &str,
    id: &str,
) -> Result<String, StoreError> {
    let missing = || StoreError::ledger(format!("the outbox names a missing record {id}"));
    let mut value = match kind {
        "transaction" | "deletion" => {
            let mut tx = get_transaction(conn, account, live, id)?.ok_or_else(missing)?;
            if kind == "transaction" {
                tx.deleted_at = None;
            }
            serde_json::to_value(&tx)
        }
        "refund" | "reversal" => {
            let mut refund = get_refund(conn, account, live, id)?.ok_or_else(missing)?;
            if kind == "refund" {
                refund.reversed_at = None;
            }
            serde_json::to_value(&refund)
        }
        other => {
            return Err(StoreError::ledger(format!(
                "the outbox holds an event of unknown kind {other:?}"
            )))
        }
    }
    .map_err(StoreError::ledger)?;
    if let Some(object) = value.as_object_mut() {
        object.insert("livemode".to_string(), serde_json::Value::Bool(live));
    }
    to_json(&value)
}

/// The outbox of a till's ledger: what `levy sync` sends to a central ledger.
impl SqliteStore {
    /// Up to `limit` unsent events of one mode, oldest first, with their records sealed.
    /// `account`, when given, keeps one account's.
    pub fn outbox(
        &self,
        live: bool,
        account: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutboxEvent>, StoreError> {
        let account = account.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read_snapshot(move |conn| {
            let rows: Vec<(i64, String, String, String)> = {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT seq, account, kind, record_id FROM outbox
                         WHERE live = ?1 AND state = 'unsent' AND (?2 IS NULL OR account = ?2)
                         ORDER BY seq LIMIT ?3",
                    )
                    .map_err(sqlite_err)?;
                let rows = stmt
                    .query_map(params![live, account, limit], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })
                    .map_err(sqlite_err)?;
                rows.collect::<Result<_, _>>().map_err(sqlite_err)?
            };
            rows.into_iter()
                .map(|(seq, account, kind, id)| {
                    let record = outbox_record(conn, &account, live, &kind, &id)?;
                    Ok(OutboxEvent {
                        seq,
                        account,
                        kind,
                        id,
                        record,
                    })
                })
                .collect()
        })
    }

    /// The accounts with unsent events of one mode.
    pub fn outbox_accounts(&self, live: bool) -> Result<Vec<String>, StoreError> {
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT DISTINCT account FROM outbox WHERE live = ?1 AND state = 'unsent' ORDER BY account",
                )
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map(params![live], |r| r.get::<_, String>(0))
                .map_err(sqlite_err)?;
            rows.collect::<Result<_, _>>().map_err(sqlite_err)
        })
    }

    /// Puts the events of one mode the central ledger refused as conflicts back in the
    /// outbox, to be sent again (once their cause is settled: the central order id freed,
    /// its body limit raised); returns how many.
    pub fn retry_conflicts(&self, live: bool) -> Result<usize, StoreError> {
        self.write(move |conn| {
            conn.execute(
                "UPDATE outbox SET state = 'unsent', note = NULL WHERE live = ?1 AND state = 'conflict'",
                params![live],
            )
            .map_err(sqlite_err)
        })
    }

    /// Records what the central ledger answered for events: sent, or a conflict with its
    /// message (kept, and no longer sent).
    pub fn mark_outbox(&self, marks: Vec<OutboxMark>) -> Result<(), StoreError> {
        self.write(move |conn| {
            let mut stmt = conn
                .prepare_cached("UPDATE outbox SET state = ?2, note = ?3 WHERE seq = ?1")
                .map_err(sqlite_err)?;
            for m in &marks {
                let (state, note) = match &m.conflict {
                    None => ("sent", None),
                    Some(why) => ("conflict", Some(why.as_str())),
                };
                stmt.execute(params![m.seq, state, note])
                    .map_err(sqlite_err)?;
            }
            Ok(())
        })
    }

    /// The events of one mode the central ledger refused as conflicts: `(seq, kind, id,
    /// why)`, oldest first.
    pub fn outbox_conflicts(
        &self,
        live: bool,
    ) -> Result<Vec<(i64, String, String, String)>, StoreError> {
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, kind, record_id, coalesce(note, '') FROM outbox
                     WHERE live = ?1 AND state = 'conflict' ORDER BY seq",
                )
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map(params![live], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .map_err(sqlite_err)?;
            rows.collect::<Result<_, _>>().map_err(sqlite_err)
        })
    }
}

#[cfg(test)]
mod migration_tests {
    use super::*;

    #[test]
    fn a_version_1_ledger_migrates_and_keeps_its_transactions() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        conn.execute(
            "INSERT INTO transactions (account, live, id, reference_order_id, data) VALUES ('shop', 1, 'tr_1', 'o-1', '{}')",
            [],
        )
        .unwrap();
        migrate(&conn).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let kind: String = conn
            .query_row("SELECT kind FROM transactions WHERE id = 'tr_1'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kind, "order", "existing transactions are orders");
        // Schema 4: the transaction already stored is in the outbox, unsent.
        let outbox: (String, String, String) = conn
            .query_row("SELECT kind, record_id, state FROM outbox", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(
            outbox,
            ("transaction".into(), "tr_1".into(), "unsent".into())
        );
        // The order id stays unique per kind: another order with o-1 is refused, a fee
        // with o-1 is accepted.
        let insert = |id: &str, kind: &str| {
            conn.execute(
                "INSERT INTO transactions (account, live, id, reference_order_id, data, kind) VALUES ('shop', 1, ?1, 'o-1', '{}', ?2)",
                params![id, kind],
            )
        };
        assert!(insert("tr_2", "order").is_err());
        assert!(insert("tr_3", "fee").is_ok());
    }
}

#[cfg(test)]
mod durability_tests {
    use super::*;

    /// A job that records the `synchronous` level it runs under (0 OFF, 1 NORMAL, 2 FULL)
    /// and, once committed, reports it with its label.
    fn probe(label: &'static str, seen: mpsc::Sender<(&'static str, i64)>) -> Job {
        Box::new(move |conn: &Connection| {
            let level: i64 = conn
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap();
            Box::new(move |commit: Result<(), String>| {
                commit.unwrap();
                seen.send((label, level)).unwrap();
            })
        })
    }

    #[test]
    fn a_flushed_write_is_never_committed_under_synchronous_normal() {
        let dir = std::env::temp_dir().join(format!("levy-durability-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite");
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        conn.execute_batch("PRAGMA synchronous=FULL").unwrap();
        let (jobs, rx) = mpsc::channel::<(Durability, Job)>();
        let (seen_tx, seen) = mpsc::channel();
        // Queued before the writer starts, so they are gathered into groups together:
        // cached, cached, flushed, cached, flushed. The first group (cached) must stop at
        // the flushed write, which starts a FULL group that the rest may join.
        let order = [
            ("c1", Durability::Cached),
            ("c2", Durability::Cached),
            ("f1", Durability::Flushed),
            ("c3", Durability::Cached),
            ("f2", Durability::Flushed),
        ];
        for (label, level) in order {
            jobs.send((level, probe(label, seen_tx.clone()))).unwrap();
        }
        drop(jobs);
        writer_loop(conn, rx, CalculationCounts::default(), Default::default());
        drop(seen_tx);
        let got: Vec<(&str, i64)> = seen.iter().collect();
        assert_eq!(
            got,
            [("c1", 1), ("c2", 1), ("f1", 2), ("c3", 2), ("f2", 2)],
            "label and synchronous level (1 NORMAL, 2 FULL) of each committed write"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod calculation_reads_tests {
    use super::*;

    fn customer(id: &str, exempt: bool) -> CustomerRecord {
        CustomerRecord {
            id: id.into(),
            reference_customer_id: None,
            name: None,
            email: format!("{id}@example.com"),
            is_tax_exempt: exempt,
            kind: None,
            tax_ids: Vec::new(),
            created_at: 1_772_323_200,
        }
    }

    fn product(id: &str) -> ProductRecord {
        ProductRecord {
            reference_product_id: id.into(),
            reference_product_name: format!("product {id}"),
            product_category: "GENERAL_MERCHANDISE".into(),
            created_at: 1_772_323_200,
            updated_at: 1_772_323_200,
        }
    }

    fn certificate(id: &str, customer: &str) -> CertificateRecord {
        CertificateRecord {
            id: id.into(),
            reference: None,
            customer_id: Some(customer.into()),
            linked_buyer: None,
            kind: "RESALE".into(),
            review_status: "active".into(),
            jurisdictions: vec![CoverageRecord {
                country: "US".into(),
                region: "TN".into(),
            }],
            valid_from: 1_772_323_200,
            expires_at: None,
            document: None,
            created_at: 1_772_323_200,
            updated_at: 1_772_323_200,
        }
    }

    /// One ledger, file or in memory, holding in each mode: customer `cus_1` with a
    /// certificate (live), customer `cus_exempt` exempt everywhere with one too, product
    /// `p1`.
    fn ledger(path: &str) -> SqliteStore {
        let store = SqliteStore::open(path).unwrap();
        for live in [false, true] {
            let scope = Scope {
                account: "shop".into(),
                live,
            };
            store
                .insert_customer(&scope, customer("cus_1", false))
                .unwrap();
            store
                .insert_customer(&scope, customer("cus_exempt", true))
                .unwrap();
            store.insert_product(&scope, product("p1")).unwrap();
        }
        store
            .import_certificates(
                "shop",
                CertificateBatch {
                    certificates: vec![
                        (certificate("cert_1", "cus_1"), None),
                        (certificate("cert_2", "cus_exempt"), None),
                    ],
                    requests: Vec::new(),
                },
            )
            .unwrap();
        store
    }

    fn check(store: &SqliteStore) {
        let live = Scope {
            account: "shop".into(),
            live: true,
        };
        let reads = store
            .calculation_reads(&live, Some("cus_1"), &[Some("p1"), None, Some("nope")])
            .unwrap();
        assert_eq!(reads.customer, Some(customer("cus_1", false)));
        assert_eq!(reads.products, vec![Some(product("p1")), None, None]);
        assert_eq!(reads.certificates, vec![certificate("cert_1", "cus_1")]);
        // The same reads, one by one, agree.
        assert_eq!(
            reads.customer,
            store.customer(&live, "cus_1", false).unwrap()
        );
        assert_eq!(reads.products[0], store.product(&live, "p1").unwrap());
        assert_eq!(
            reads.certificates,
            store.certificates("shop", Some("cus_1")).unwrap()
        );

        // A customer exempt everywhere needs no certificates; test mode never uses any.
        let exempt = store
            .calculation_reads(&live, Some("cus_exempt"), &[])
            .unwrap();
        assert!(exempt.customer.is_some() && exempt.certificates.is_empty());
        let test = Scope {
            account: "shop".into(),
            live: false,
        };
        let reads = store
            .calculation_reads(&test, Some("cus_1"), &[Some("p1")])
            .unwrap();
        assert!(reads.customer.is_some() && reads.certificates.is_empty());
        // No customer named, or one that does not exist: nothing but the products.
        let none = store.calculation_reads(&live, Some("cus_x"), &[]).unwrap();
        assert_eq!(none, CalculationReads::default());
        let nothing_named = store.calculation_reads(&live, None, &[None, None]).unwrap();
        assert_eq!(nothing_named.products, vec![None, None]);
        assert!(nothing_named.customer.is_none() && nothing_named.certificates.is_empty());
    }

    #[test]
    fn one_read_gives_the_customer_products_and_certificates() {
        check(&ledger(":memory:"));
        let dir = std::env::temp_dir().join(format!("levy-reads-{}", crate::ids::new_id("")));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite");
        check(&ledger(&path.display().to_string()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod packed_calculation_tests {
    use super::*;

    #[test]
    fn calculations_are_stored_packed_and_older_text_ones_still_read() {
        let dir = std::env::temp_dir().join(format!("levy-packed-{}", crate::ids::new_id("")));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite").display().to_string();
        let scope = Scope {
            account: "shop".into(),
            live: false,
        };
        let mut record: CalculationRecord = from_json(super::super::pack::SAMPLE).unwrap();
        record.expires_at = crate::ids::now() + 3_600;
        {
            let store = SqliteStore::open(&path).unwrap();
            store
                .submit_calculation(&scope, &record)
                .unwrap()
                .wait()
                .unwrap();
            assert_eq!(
                store
                    .calculation(&scope, &record.id, crate::ids::now())
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
        assert_eq!(format, [super::super::pack::FORMAT_LAYOUT_1_DICT_2]);
        assert!((len as usize) < json.len() / 4, "{len} of {}", json.len());
        drop(conn);
        // A calculation an earlier levy packed in format 2 or 1, or stored as sealed JSON
        // text, reads the same.
        use rusqlite::types::Value as Stored;
        for earlier in [
            Stored::Blob(super::super::pack::pack_record(&record).unwrap()),
            Stored::Blob(super::super::pack::pack(&json)),
            Stored::Text(json.clone()),
        ] {
            let conn = Connection::open(&path).unwrap();
            conn.execute("UPDATE calculations SET data = ?1", [earlier])
                .unwrap();
            drop(conn);
            let store = SqliteStore::open(&path).unwrap();
            assert_eq!(
                store
                    .calculation(&scope, &record.id, crate::ids::now())
                    .unwrap(),
                Some(record.clone())
            );
        }
        // The ledger report reads every form, and sees a damaged packed one of each format:
        // reading it is an error, never the record with a changed byte.
        assert!(inspect_ledger(&path).unwrap().damaged.is_empty());
        for mut packed in [
            super::super::pack::pack(&json),
            super::super::pack::pack_record(&record).unwrap(),
            super::super::pack::pack_calculation(&record).unwrap(),
        ] {
            let conn = Connection::open(&path).unwrap();
            let last = packed.len() - 1;
            packed[last] ^= 0x20;
            conn.execute("UPDATE calculations SET data = ?1", [&packed])
                .unwrap();
            drop(conn);
            assert_eq!(inspect_ledger(&path).unwrap().damaged.len(), 1);
            let store = SqliteStore::open(&path).unwrap();
            assert!(store
                .calculation(&scope, &record.id, crate::ids::now())
                .is_err());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod wal_tests {
    use super::*;
    use std::collections::VecDeque;
    use std::time::{Duration, Instant};

    #[test]
    fn only_a_cached_group_under_load_is_gathered() {
        // A lone calculation (the group before held one write) is committed at once.
        assert!(!gathers(Durability::Cached, 0));
        assert!(!gathers(Durability::Cached, 1));
        // Under load it waits for the others.
        assert!(gathers(Durability::Cached, 2));
        assert!(gathers(Durability::Cached, 1024));
        // A flushed group never waits: its flush gathers the next one.
        assert!(!gathers(Durability::Flushed, 1024));
    }

    /// Taken by the tests that report parks: the counts are the process's, and the tests
    /// of this module run side by side.
    static HOOKS: Mutex<()> = Mutex::new(());

    /// A gathering of a minute, ended when `need` workers are parked, on a thread of its
    /// own; returned once the gathering is listed.
    fn minute_gathering(need: usize) -> std::thread::JoinHandle<()> {
        let writer = std::thread::spawn(move || gather_for(Duration::from_secs(60), need));
        while GATHERING_COUNT.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        writer
    }

    #[test]
    fn a_gathering_ends_when_the_workers_run_out_of_work() {
        let _hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        // A gathering of a minute, ended by a worker about to park: it returns long
        // before the minute is out (the test would otherwise take a minute and fail).
        let started = Instant::now();
        let writer = minute_gathering(1);
        workers_idle();
        writer.join().unwrap();
        worker_busy();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(
            GATHERING.lock().unwrap().is_empty(),
            "the writer is no longer listed"
        );

        // A worker parked already: the gathering does not start.
        workers_idle();
        let started = Instant::now();
        gather_for(Duration::from_secs(60), 1);
        worker_busy();
        assert!(started.elapsed() < Duration::from_secs(30));

        // With every worker busy again, a gathering runs its time (a short one here),
        // a stray wake-up of the thread notwithstanding.
        let started = Instant::now();
        std::thread::current().unpark();
        gather_for(Duration::from_millis(20), 1);
        assert!(started.elapsed() >= Duration::from_millis(20));
        // An unpark reported without its park leaves the count at zero, not below.
        worker_busy();
        assert_eq!(PARKED.load(Ordering::SeqCst), 0);

        // Under heavy load a gathering waits for two parked workers: one parked already
        // does not end it (it runs its time), a second one does.
        workers_idle();
        let started = Instant::now();
        gather_for(Duration::from_millis(20), 2);
        assert!(started.elapsed() >= Duration::from_millis(20));
        let started = Instant::now();
        let writer = minute_gathering(2);
        workers_idle();
        writer.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        worker_busy();
        worker_busy();
        assert_eq!(PARKED.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn heavy_load_waits_for_every_worker() {
        let _hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        // This thread's park (a test standing in for a worker) counts it among the
        // workers, for as long as it lives.
        workers_idle();
        worker_busy();
        let workers = WORKERS.load(Ordering::SeqCst);
        assert!(workers >= 1);
        // Fewer than a dozen writes in the group before (a handful of clients): the first
        // worker to park ends the gathering. From a dozen on, every worker.
        assert_eq!(parked_to_end(0), 1);
        assert_eq!(parked_to_end(GATHER_ALL_FROM - 1), 1);
        assert_eq!(parked_to_end(GATHER_ALL_FROM), workers);
        // A thread that reported parks and ended is no longer counted.
        let before = WORKERS.load(Ordering::SeqCst);
        std::thread::spawn(|| {
            workers_idle();
            worker_busy();
        })
        .join()
        .unwrap();
        assert_eq!(WORKERS.load(Ordering::SeqCst), before);
    }

    #[test]
    fn the_wal_starts_over_under_sustained_writes() {
        let dir = std::env::temp_dir().join(format!("levy-wal-{}", crate::ids::new_id("")));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite").display().to_string();
        let wal = format!("{path}-wal");
        // Started over from 64 pages (256 KiB), so that the test need not write megabytes.
        let store = SqliteStore::open_with(&path, 64).unwrap();
        let scope = Scope {
            account: "shop".into(),
            live: false,
        };
        let mut record: CalculationRecord = from_json(super::super::pack::SAMPLE).unwrap();
        record.expires_at = crate::ids::now() + 3_600;
        // Calculations without a pause for two seconds, eight in flight, so that the
        // writer is never idle long enough for a passive checkpoint to catch up: without
        // the restart, the WAL grows by every page each commit writes.
        let (started, mut written) = (Instant::now(), 0u64);
        let mut in_flight = VecDeque::new();
        while started.elapsed() < Duration::from_secs(2) {
            record.id = crate::ids::new_id("calc_");
            in_flight.push_back(store.submit_calculation(&scope, &record).unwrap());
            if in_flight.len() >= 8 {
                in_flight.pop_front().unwrap().wait().unwrap();
            }
            written += 1;
        }
        for commit in in_flight {
            commit.wait().unwrap();
        }
        // The WAL header's checkpoint sequence (bytes 12..16, big-endian; SQLite's WAL
        // format) counts the times the WAL was started over. Passive checkpoints alone
        // leave it at 0 under these writes, and the WAL grows by every page each commit
        // appends (18 MB in this test without the restart); the checkpointer looks every
        // 200 ms, so in two seconds it asks for a restart several times.
        let header = std::fs::read(&wal).unwrap();
        let restarts = u32::from_be_bytes(header[12..16].try_into().unwrap());
        assert!(
            restarts >= 3,
            "the WAL was started over {restarts} times under {written} calculations in 2 s ({} bytes now)",
            header.len()
        );
        // Nothing was lost on the way: every calculation reads back.
        let stored: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT count(*) FROM calculations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored as u64, written);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod purge_tests {
    use super::*;

    /// A ledger's connection with `expiries` inserted as calculations in that order.
    fn ledger_with(dir: &levy_testkit::TempDir, expiries: &[i64]) -> Connection {
        let conn = open_connection(&dir.join("ledger.sqlite").display().to_string()).unwrap();
        migrate(&conn).unwrap();
        for (i, e) in expiries.iter().enumerate() {
            conn.execute(
                "INSERT INTO calculations (account, live, id, expires_at, data) VALUES ('a', 0, ?1, ?2, '')",
                params![format!("calc_{i:04}"), e],
            )
            .unwrap();
        }
        conn
    }

    fn left(conn: &Connection) -> Vec<i64> {
        let mut stmt = conn
            .prepare("SELECT expires_at FROM calculations ORDER BY rowid")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    }

    #[test]
    fn expired_calculations_are_purged_and_no_other() {
        let dir = levy_testkit::TempDir::new("levy-purge");
        // In the order they were made, as a ledger holds them.
        let conn = ledger_with(&dir, &[10, 20, 30, 40, 50, 60]);
        assert_eq!(purge_calculations(&conn, 45).unwrap(), 4);
        assert_eq!(left(&conn), [50, 60]);
        // Expiring exactly now is not yet expired (a calculation reads as found while
        // `expires_at > now`, and is deleted once `expires_at < now`).
        assert_eq!(purge_calculations(&conn, 50).unwrap(), 0);
        assert_eq!(purge_calculations(&conn, 61).unwrap(), 2);
        assert!(left(&conn).is_empty());
        // Nothing to purge in an empty table.
        assert_eq!(purge_calculations(&conn, 1_000).unwrap(), 0);
        // The index on the expiry is gone (schema 5).
        let indexes: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'calculations_expiry'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 0);
    }

    #[test]
    fn every_count_of_expired_calculations_is_found_among_many_with_gaps() {
        let dir = levy_testkit::TempDir::new("levy-purge-many");
        // 1,000 calculations, one a second, with every third already deleted (gaps in the
        // rowids); for each cut, exactly those before it go.
        let expiries: Vec<i64> = (0..1_000).collect();
        let conn = ledger_with(&dir, &expiries);
        conn.execute("DELETE FROM calculations WHERE rowid % 3 = 0", [])
            .unwrap();
        let mut remaining: Vec<i64> = expiries
            .iter()
            .copied()
            .filter(|e| (e + 1) % 3 != 0)
            .collect();
        for now in [0, 1, 2, 3, 17, 500, 501, 998, 999, 1_000, 5_000] {
            let expired = remaining.iter().filter(|&&e| e < now).count();
            assert_eq!(
                purge_calculations(&conn, now).unwrap(),
                expired,
                "now {now}"
            );
            remaining.retain(|&e| e >= now);
            assert_eq!(left(&conn), remaining, "now {now}");
        }
    }

    #[test]
    fn rowids_at_the_ends_of_their_range_are_searched_without_overflow() {
        let dir = levy_testkit::TempDir::new("levy-purge-ends");
        let conn = ledger_with(&dir, &[]);
        for (rowid, e) in [(i64::MIN + 1, 10), (-5, 20), (7, 30), (i64::MAX - 1, 40)] {
            conn.execute(
                "INSERT INTO calculations (rowid, account, live, id, expires_at, data) VALUES (?1, 'a', 0, ?2, ?3, '')",
                params![rowid, format!("calc_{rowid}"), e],
            )
            .unwrap();
        }
        assert_eq!(purge_calculations(&conn, 25).unwrap(), 2);
        assert_eq!(left(&conn), [30, 40]);
        assert_eq!(purge_calculations(&conn, 100).unwrap(), 2);
    }

    #[test]
    fn a_clock_set_back_never_gets_an_unexpired_calculation_deleted() {
        let dir = levy_testkit::TempDir::new("levy-purge-clock");
        // A calculation made while the clock ran a day ahead sits among older ones.
        let conn = ledger_with(&dir, &[10, 20, 86_400, 30, 40, 50, 60]);
        // The search (rowids 1 to 7) probes rowid 4 (30: expired), 6 (50: not), 5 (40:
        // expired) and stops at 6; below it, the expired four go and the one ahead stays.
        assert_eq!(purge_calculations(&conn, 45).unwrap(), 4);
        assert_eq!(left(&conn), [86_400, 50, 60]);
        // Once it has expired too, everything expired goes.
        assert_eq!(purge_calculations(&conn, 100_000).unwrap(), 3);
        assert!(left(&conn).is_empty());
    }
}
