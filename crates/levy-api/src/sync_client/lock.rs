//! One sync of a till's ledger at a time: [`OutboxLock`], an exclusive lock on a file
//! beside the ledger, held while a sync reads and marks the outbox.

use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::SyncError;

/// How long a taker waits for the lock before [`SyncError::Busy`]. Taking it is several
/// steps of SQLite's locks (shared, reserved, exclusive), so two takers at the same moment
/// can each stop the other; the wait lets one of them through. A sync that holds the lock
/// holds it for its whole run, far longer.
const PATIENCE: Duration = Duration::from_millis(250);

/// The exclusive right to send a till's outbox, held until dropped. It is SQLite's own
/// exclusive lock on a small file beside the ledger, `<ledger>.sync-lock` (an empty
/// database, never written), so it is the operating system's file lock (POSIX advisory
/// locks, `LockFileEx` on Windows), between processes and between threads of one process
/// alike, and it goes with the process that holds it, however that process ends (a killed
/// sync leaves nothing to clear). The ledger itself is not locked: the till goes on
/// selling while it syncs.
#[derive(Debug)]
pub struct OutboxLock {
    /// The connection whose `BEGIN EXCLUSIVE` holds the lock; closing it lets go.
    _held: Connection,
}

impl OutboxLock {
    /// The lock file of the ledger at `ledger`.
    pub fn path(ledger: &str) -> String {
        format!("{ledger}.sync-lock")
    }

    /// Takes the lock of the ledger at `ledger`, or answers [`SyncError::Busy`] when
    /// another sync holds it (after a quarter of a second, [`PATIENCE`]).
    pub fn take(ledger: &str) -> Result<OutboxLock, SyncError> {
        let path = OutboxLock::path(ledger);
        let failed = |e: rusqlite::Error| {
            SyncError::Failed(format!("{path}: could not take the sync lock: {e}"))
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(failed)?;
        conn.busy_timeout(PATIENCE).map_err(failed)?;
        match conn.execute_batch("BEGIN EXCLUSIVE") {
            Ok(()) => Ok(OutboxLock { _held: conn }),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
            {
                Err(SyncError::Busy {
                    ledger: ledger.to_string(),
                    lock: path,
                })
            }
            Err(e) => Err(failed(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_the_lock_goes_with_it() {
        let dir = levy_testkit::TempDir::new("outbox-lock");
        let ledger = dir.join("till.sqlite").to_string_lossy().into_owned();
        let first = OutboxLock::take(&ledger).unwrap();
        // A second taker, here another connection of the same process (another thread, a
        // second `levy_sync` call), is refused, as another process is.
        match OutboxLock::take(&ledger) {
            Err(SyncError::Busy { ledger: l, lock }) => {
                assert_eq!(l, ledger);
                assert_eq!(lock, format!("{ledger}.sync-lock"));
            }
            other => panic!("{other:?}"),
        }
        let busy = std::thread::spawn({
            let ledger = ledger.clone();
            move || matches!(OutboxLock::take(&ledger), Err(SyncError::Busy { .. }))
        });
        assert!(busy.join().unwrap());
        drop(first);
        let again = OutboxLock::take(&ledger).unwrap();
        drop(again);
        // Takers at the same moment: exactly one holds it each time (two at once must not
        // both be refused, as SQLite's lock steps would without a moment's patience).
        for round in 0..10 {
            let barrier = std::sync::Barrier::new(4);
            let held: usize = std::thread::scope(|scope| {
                let takers: Vec<_> = (0..4)
                    .map(|_| {
                        scope.spawn(|| {
                            barrier.wait();
                            let lock = OutboxLock::take(&ledger);
                            // Held until all four have given up.
                            std::thread::sleep(PATIENCE * 2);
                            lock.is_ok()
                        })
                    })
                    .collect();
                takers.into_iter().map(|t| t.join().unwrap() as usize).sum()
            });
            assert!(held <= 1, "round {round}: {held} holders at once");
            assert!(held == 1, "round {round}: every taker was refused");
        }
        // Holding it writes nothing: the lock file stays empty, and no journal is left.
        assert_eq!(
            std::fs::metadata(OutboxLock::path(&ledger)).unwrap().len(),
            0
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["till.sqlite.sync-lock"]);
    }
}
