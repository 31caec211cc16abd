//! The SQLite ledger: one file, WAL (checkpointed by its own thread, `checkpoint.rs`),
//! versioned migrations (`schema.rs`), every stored record sealed with its BLAKE3 digest,
//! and one writer thread that commits writes in groups (`writer.rs`). Its statements are in
//! `queries.rs`, `platform.rs` and `outbox.rs`; `inspect.rs` reads a ledger for
//! `levy info --ledger`.
//!
//! # Reads
//!
//! A file ledger reads through a small pool of read connections (WAL lets readers run
//! beside the writer). An in-memory ledger (`:memory:`) has one connection, so its reads
//! go through the writer too.

use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::pack::{pack_calculation, pack_record};
use super::*;

mod checkpoint;
mod days;
mod inspect;
mod kept;
mod outbox;
mod platform;
mod queries;
mod schema;
mod writer;

pub use inspect::{inspect, LedgerReport};
// The daily totals' seal, for `store::read_daily_totals` and `seal_daily_totals`.
pub(super) use days::{seal_numbers, unseal_numbers};
// For copying a ledger into PostgreSQL (`store::copy`).
#[cfg(feature = "postgres")]
pub(super) use queries::{unseal_month, unseal_nexus};
pub use writer::{worker_busy, workers_idle};

use checkpoint::{checkpoint_loop, WAL_RESTART_FRAMES};
use queries::Sql;
use schema::{check_existing_file, check_ledger, migrate, open_connection, LEDGER_APPLICATION_ID};
use writer::{job, writer_loop, Durability, Job, Unit};

/// Unexpired calculations stored per account and mode (how many, and their bytes), counted
/// once from the ledger and then kept up to date in memory; emptied by every purge (and
/// counted again when next asked), so it never drifts for long.
type CalculationCounts = Arc<Mutex<std::collections::HashMap<Scope, StoredCalculations>>>;

/// The SQLite ledger, a [`Database`] (and so a [`Store`]).
pub struct SqliteStore {
    jobs: Mutex<Option<mpsc::Sender<(Durability, Job)>>>,
    counts: CalculationCounts,
    readers: Vec<Mutex<Connection>>,
    writer: Option<JoinHandle<()>>,
    /// Dropped to stop the checkpointer (a file ledger's only).
    checkpoints: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

pub(super) fn sqlite_err(e: rusqlite::Error) -> StoreError {
    StoreError::ledger(e)
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

    /// Queues `f` (one SQL statement, or with [`Unit::Savepoint`] several) for the writer's
    /// transaction and returns at once: the [`Commit`] resolves when it is committed as
    /// `level` says. `after` runs (on the writer's thread) once it is, if it succeeded.
    fn submit_statement(
        &self,
        (level, unit): (Durability, Unit),
        f: impl FnOnce(&Connection) -> Result<(), StoreError> + Send + 'static,
        after: impl FnOnce() + Send + 'static,
    ) -> Commit {
        let (commit, completer) = Commit::new();
        // A refused send drops the job and its completer with it, which resolves the
        // commit with the ledger's error.
        let _ = self.send(
            level,
            job(unit, f, move |result| {
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
    fn read_on<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        if self.readers.is_empty() {
            return self.write_store(Durability::Flushed, f);
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
            return self.read_on(f);
        }
        self.read_on(move |conn| {
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

impl Database for SqliteStore {
    fn read<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.read_on(move |conn| work(&Sql(conn)))
    }

    fn snapshot<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.read_snapshot(move |conn| work(&Sql(conn)))
    }

    fn write<R: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Statements) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_store(Durability::Flushed, move |conn| work(&Sql(conn)))
    }

    fn submit(
        &self,
        scope: &Scope,
        quote: Quote<'_>,
        kept: Option<&KeptAnswer>,
    ) -> Result<Commit, StoreError> {
        let (sql, id, expires_at, data) = match quote {
            Quote::Calculation(c) => (
                "INSERT INTO calculations (account, live, id, expires_at, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                c.id.clone(),
                c.expires_at,
                pack_calculation(c)?,
            ),
            Quote::Platform(p) => (
                "INSERT INTO platform_calculations (account, live, id, expires_at, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                p.id.clone(),
                p.order.expires_at,
                pack_record(p)?,
            ),
        };
        let bytes = data.len();
        let (counts, scope) = (Arc::clone(&self.counts), scope.clone());
        let account = Arc::clone(&scope.account);
        let live = scope.live;
        // With an answer to keep, two statements: in a savepoint, both or neither.
        let unit = if kept.is_some() {
            Unit::Savepoint
        } else {
            Unit::Statement
        };
        let kept = kept.cloned();
        Ok(self.submit_statement(
            (Durability::Cached, unit),
            move |conn| {
                let mut stmt = conn.prepare_cached(sql).map_err(sqlite_err)?;
                stmt.execute(rusqlite::params![&*account, live, id, expires_at, data])
                    .map_err(sqlite_err)?;
                if let Some(answer) = &kept {
                    let scope = Scope { account, live };
                    Sql(conn).keep(&scope, answer)?;
                }
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
        let counted = scope.clone();
        let n = self.read_on(move |conn| Sql(conn).count_calculations(&counted))?;
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scope.clone(), n);
        Ok(n)
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
            review_status: ReviewStatus::Active,
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
            .calculation_reads(
                &live,
                Some("cus_1"),
                &[Some("p1"), None, Some("nope")],
                None,
            )
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
            .calculation_reads(&live, Some("cus_exempt"), &[], None)
            .unwrap();
        assert!(exempt.customer.is_some() && exempt.certificates.is_empty());
        let test = Scope {
            account: "shop".into(),
            live: false,
        };
        let reads = store
            .calculation_reads(&test, Some("cus_1"), &[Some("p1")], None)
            .unwrap();
        assert!(reads.customer.is_some() && reads.certificates.is_empty());
        // No customer named, or one that does not exist: nothing but the products.
        let none = store
            .calculation_reads(&live, Some("cus_x"), &[], None)
            .unwrap();
        assert_eq!(none, CalculationReads::default());
        let nothing_named = store
            .calculation_reads(&live, None, &[None, None], None)
            .unwrap();
        assert_eq!(nothing_named.products, vec![None, None]);
        assert!(nothing_named.customer.is_none() && nothing_named.certificates.is_empty());
    }

    #[test]
    fn one_read_gives_the_customer_products_and_certificates() {
        check(&ledger(":memory:"));
        let dir = std::env::temp_dir().join(format!("levy-reads-{}", crate::random::hex128()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite");
        check(&ledger(&path.display().to_string()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
