//! The writer of a SQLite ledger: one thread owns the write connection and commits every
//! write in groups (one fsync a group), and the park hooks by which an async host's
//! workers tell it when to stop gathering a group.
//!
//! A caller's write is a closure run inside a savepoint of the writer's current
//! transaction; the writer takes every write that is waiting, runs each in its own
//! savepoint (a failing write rolls back alone; a write of one statement, which SQLite
//! undoes alone, needs none), commits once, and only then answers each caller. So an
//! acknowledged write is on disk, concurrent callers share the cost of the fsync, and a
//! check-then-insert (refund limits) is atomic because no other write can interleave.
//!
//! Calculations (24-hour quotes) are the exception to flushing: they are committed with
//! `synchronous=NORMAL`, without waiting for the flush (see [`Durability::Cached`]). A group
//! is all of one level: a flushed write never waits in a cached group, and a cached write
//! that joins a flushed group is flushed with it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};

use super::super::StoreError;
use super::checkpoint::restart_wal;
use super::CalculationCounts;

pub(super) type Reply = Box<dyn FnOnce(Result<(), String>) + Send>;
pub(super) type Job = Box<dyn FnOnce(&Connection) -> Reply + Send>;

/// How a write reaches the disk before it is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Durability {
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

/// How a writer job's write is kept apart from the rest of its group should it fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
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
pub(super) fn job<R: Send + 'static>(
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

pub(super) fn writer_loop(
    conn: Connection,
    jobs: mpsc::Receiver<(Durability, Job)>,
    counts: CalculationCounts,
    restart: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let mut last_purge = crate::clock::now();
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
        let now = crate::clock::now();
        if began && now - last_purge >= 60 {
            // Expired calculations can no longer become transactions.
            let _ = purge_calculations(&conn, now);
            let _ = conn.execute(
                "DELETE FROM platform_calculations WHERE expires_at < ?1",
                [now],
            );
            // Expired answers free their idempotency keys.
            let _ = conn.execute("DELETE FROM idempotency_keys WHERE expires_at <= ?1", [now]);
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
mod gather_tests {
    use super::*;
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
        let id = writer.thread().id();
        workers_idle();
        writer.join().unwrap();
        worker_busy();
        assert!(started.elapsed() < Duration::from_secs(30));
        // (The list is the process's: a ledger of another test may be gathering.)
        let listed = GATHERING
            .lock()
            .unwrap()
            .iter()
            .any(|(t, _, _)| t.id() == id);
        assert!(!listed, "the writer is no longer listed");

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
        assert!(WORKERS.load(Ordering::SeqCst) >= 1);
        // Fewer than a dozen writes in the group before (a handful of clients): the first
        // worker to park ends the gathering. From a dozen on, every worker.
        assert_eq!(parked_to_end(0), 1);
        assert_eq!(parked_to_end(GATHER_ALL_FROM - 1), 1);
        // The count is the process's: the thread of a test that ran before this one may
        // end (and leave it) at any moment, so each check is made again until no other
        // thread came or went while it ran; a broken count fails every time.
        let steady = |check: &dyn Fn() -> (usize, usize)| {
            for _ in 0..100 {
                let before = WORKERS.load(Ordering::SeqCst);
                let (got, want) = check();
                if WORKERS.load(Ordering::SeqCst) == before {
                    return (got, want);
                }
            }
            panic!("the worker count never held still");
        };
        let (got, want) = steady(&|| {
            (
                parked_to_end(GATHER_ALL_FROM),
                WORKERS.load(Ordering::SeqCst),
            )
        });
        assert_eq!(got, want);
        // A thread that reported parks and ended is no longer counted.
        let (before, after) = steady(&|| {
            let before = WORKERS.load(Ordering::SeqCst);
            std::thread::spawn(|| {
                workers_idle();
                worker_busy();
            })
            .join()
            .unwrap();
            (before, WORKERS.load(Ordering::SeqCst))
        });
        assert_eq!(after, before);
    }
}

#[cfg(test)]
mod purge_tests {
    use super::super::schema::{migrate, open_connection};
    use super::*;
    use rusqlite::params;

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
