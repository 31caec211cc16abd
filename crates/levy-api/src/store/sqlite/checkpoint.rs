//! The checkpoint thread of a file ledger: it copies the WAL into the database file off
//! the writer's path, and asks the writer to start the WAL over once it has grown.

use std::sync::mpsc;

use rusqlite::Connection;

/// The size of the WAL, in pages, from which it is started over ([`checkpoint_loop`],
/// [`restart_wal`]): 8 MiB of 4 KiB pages.
pub(super) const WAL_RESTART_FRAMES: i64 = 2048;

/// How often the checkpointer copies the WAL into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Copies the WAL into the database file every [`CHECKPOINT_EVERY`] (a passive checkpoint:
/// it never blocks the writer or the readers) and flushes the file (`db`), on its own
/// connection, so that neither the copy nor its flush happens inside a commit of the
/// writer. Once the WAL holds `restart_frames` pages, it catches up with the writer and
/// sets `restart`, for the writer to start the WAL over ([`restart_wal`]). Ends when
/// `stop`'s sender is dropped.
pub(super) fn checkpoint_loop(
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
pub(super) fn restart_wal(conn: &Connection, restart: &std::sync::atomic::AtomicBool) {
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

#[cfg(test)]
mod tests {
    use super::super::super::seal::from_json;
    use super::super::super::*;
    use super::super::SqliteStore;
    use rusqlite::Connection;
    use std::collections::VecDeque;
    use std::time::{Duration, Instant};

    #[test]
    fn the_wal_starts_over_under_sustained_writes() {
        let dir = std::env::temp_dir().join(format!("levy-wal-{}", crate::random::hex128()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite").display().to_string();
        let wal = format!("{path}-wal");
        // Started over from 64 pages (256 KiB), so that the test need not write megabytes.
        let store = SqliteStore::open_with(&path, 64).unwrap();
        let scope = Scope {
            account: "shop".into(),
            live: false,
        };
        let mut record: CalculationRecord = from_json(crate::store::pack::SAMPLE).unwrap();
        record.expires_at = crate::clock::now() + 3_600;
        // Calculations without a pause for two seconds, eight in flight, so that the
        // writer is never idle long enough for a passive checkpoint to catch up: without
        // the restart, the WAL grows by every page each commit writes.
        let (started, mut written) = (Instant::now(), 0u64);
        let mut in_flight = VecDeque::new();
        while started.elapsed() < Duration::from_secs(2) {
            record.id = format!("calc_{}", crate::random::hex128());
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
