//! The acknowledgement of a ledger write that the caller does not wait for in place.
//!
//! A calculation is answered once its record is committed. [`crate::Service::handle`]
//! waits for that commit on its own thread; [`crate::Service::answer`] instead hands back
//! a [`Pending`] answer that an async server awaits, so that no thread sits blocked while
//! the ledger's writer commits a group of writes. The writer completes a [`Commit`]
//! through its [`Completer`]: it wakes the waiting task, or the waiting thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use super::StoreError;

#[derive(Default)]
struct State {
    result: Option<Result<(), StoreError>>,
    waker: Option<Waker>,
    /// Whether a thread waits on the condition variable ([`Commit::wait`]): only then is it
    /// notified. Notifying costs the writer a system call even when nobody waits, and a
    /// task (the server's case) waits through its waker instead.
    thread_waits: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    done: Condvar,
}

/// A ledger write in progress: resolves to `Ok(())` once the write is committed, or to
/// the error that kept it out of the ledger. Wait for it with [`Commit::wait`] on a
/// thread, or `.await` it in a task.
#[must_use = "a write is acknowledged only once its commit has resolved"]
pub struct Commit {
    shared: Arc<Shared>,
}

/// The writer's side of a [`Commit`]. Dropping it without [`Completer::complete`] (the
/// writer stopped) resolves the commit with a ledger error, so that nothing waits forever
/// and nothing is acknowledged that was not stored.
pub(crate) struct Completer {
    shared: Option<Arc<Shared>>,
}

impl Commit {
    /// A commit and the completer that resolves it.
    pub(crate) fn new() -> (Commit, Completer) {
        let shared = Arc::new(Shared::default());
        (
            Commit {
                shared: Arc::clone(&shared),
            },
            Completer {
                shared: Some(shared),
            },
        )
    }

    /// Blocks the calling thread until the write is committed or has failed.
    pub fn wait(self) -> Result<(), StoreError> {
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(result) = state.result.take() {
                return result;
            }
            state.thread_waits = true;
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Future for Commit {
    type Output = Result<(), StoreError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        match state.result.take() {
            Some(result) => Poll::Ready(result),
            None => {
                match &mut state.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    slot => *slot = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

impl std::fmt::Debug for Commit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("Commit")
            .field("resolved", &state.result.is_some())
            .finish()
    }
}

impl Completer {
    /// Resolves the commit and wakes whoever waits for it.
    pub(crate) fn complete(mut self, result: Result<(), StoreError>) {
        if let Some(shared) = self.shared.take() {
            resolve(&shared, result);
        }
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            resolve(
                &shared,
                Err(StoreError::ledger(
                    "the ledger writer stopped before the commit",
                )),
            );
        }
    }
}

fn resolve(shared: &Shared, result: Result<(), StoreError>) {
    let (waker, thread_waits) = {
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        state.result = Some(result);
        (state.waker.take(), state.thread_waits)
    };
    if thread_waits {
        shared.done.notify_all();
    }
    if let Some(w) = waker {
        w.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct CountingWaker(AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_thread_waits_for_the_writer() {
        let (commit, completer) = Commit::new();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            completer.complete(Ok(()));
        });
        assert_eq!(commit.wait(), Ok(()));
        writer.join().unwrap();
    }

    #[test]
    fn a_task_is_woken_once_when_the_commit_resolves() {
        let (mut commit, completer) = Commit::new();
        let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&counter));
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut commit).poll(&mut cx).is_pending());
        assert_eq!(counter.0.load(Ordering::SeqCst), 0);
        completer.complete(Err(StoreError::ledger("disk full")));
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        match Pin::new(&mut commit).poll(&mut cx) {
            Poll::Ready(Err(e)) => assert_eq!(e, StoreError::Ledger("disk full".into())),
            other => panic!("expected the ledger error, got {other:?}"),
        }
    }

    #[test]
    fn a_writer_that_stops_fails_the_commit_instead_of_hanging() {
        let (commit, completer) = Commit::new();
        drop(completer);
        assert!(matches!(commit.wait(), Err(StoreError::Ledger(_))));
    }
}
