//! Randomness: the operating system's generator, drawn through a per-thread pool for
//! identifiers ([`fill_random`]) and straight for secrets ([`bytes32`]).

/// How many bytes of the operating system's generator each thread draws at a time.
const POOL_BYTES: usize = 1024;

/// Which process this is, as far as the pools of [`fill_random`] are concerned: a value that
/// changes in the child of every `fork`, read without a system call.
///
/// A child handler registered once with `pthread_atfork` counts the forks; reading the
/// count is one atomic load, where asking for the process id is a system call (160 ns on
/// a virtual machine, several per request). Until the handler is registered, or should the
/// registration fail, the process id is asked for instead, as before. The registration
/// takes no lock, so a `fork` during it cannot leave the child waiting for one; such a
/// child goes on asking for its id. (A child made by a raw `clone` system call, which
/// runs no fork handlers, is not told apart: levy supports `fork`.)
#[cfg(unix)]
fn process_generation() -> u64 {
    use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
    const UNTRIED: u8 = 0;
    const REGISTERING: u8 = 1;
    const REGISTERED: u8 = 2;
    const FAILED: u8 = 3;
    static FORKS: AtomicU64 = AtomicU64::new(0);
    static STATE: AtomicU8 = AtomicU8::new(UNTRIED);
    extern "C" fn forked() {
        // In the child, right after `fork`: one atomic add, which is async-signal-safe.
        FORKS.fetch_add(1, Ordering::Relaxed);
    }
    let mut state = STATE.load(Ordering::Acquire);
    if state == UNTRIED
        && STATE
            .compare_exchange(UNTRIED, REGISTERING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    {
        // SAFETY: `pthread_atfork` only records the handler; `forked` is an `extern "C"`
        // function that lives as long as the program and does nothing but an atomic add.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::pthread_atfork(None, None, Some(forked)) };
        state = if rc == 0 { REGISTERED } else { FAILED };
        STATE.store(state, Ordering::Release);
    }
    if state == REGISTERED {
        FORKS.load(Ordering::Relaxed)
    } else {
        // Apart from every count: the top bit set.
        u64::from(std::process::id()) | 1 << 63
    }
}

/// Where processes cannot be forked, there is one.
#[cfg(not(unix))]
fn process_generation() -> u64 {
    0
}

/// Fills `out` with bytes from the operating system's generator, drawn `POOL_BYTES` at a
/// time into a per-thread pool, so that an id costs a copy instead of a system call. Every
/// byte is the generator's and is used once. The pool belongs to the process that drew it:
/// a process forked from one that holds a pool (a host of liblevy may fork) draws its own
/// before it makes an id (`process_generation`), so parent and child never share bytes.
///
/// For identifiers. A secret key is drawn straight from the generator
/// ([`bytes32`]).
pub fn fill_random(out: &mut [u8]) -> Result<(), getrandom::Error> {
    struct Pool {
        generation: u64,
        used: usize,
        bytes: [u8; POOL_BYTES],
    }
    thread_local! {
        static POOL: std::cell::RefCell<Pool> = const {
            std::cell::RefCell::new(Pool { generation: 0, used: POOL_BYTES, bytes: [0; POOL_BYTES] })
        };
    }
    if out.len() > POOL_BYTES / 4 {
        return getrandom::fill(out);
    }
    // A thread being torn down has lost its pool: it asks the generator directly.
    let pooled = POOL.try_with(|pool| {
        let mut pool = pool.borrow_mut();
        let generation = process_generation();
        if pool.generation != generation || pool.used + out.len() > POOL_BYTES {
            // Mark the pool empty first: should the generator fail, no byte is reused.
            pool.used = POOL_BYTES;
            getrandom::fill(&mut pool.bytes)?;
            pool.generation = generation;
            pool.used = 0;
        }
        let start = pool.used;
        out.copy_from_slice(&pool.bytes[start..start + out.len()]);
        // Each byte is handed out once: wipe it from the pool.
        pool.bytes[start..start + out.len()].fill(0);
        pool.used += out.len();
        Ok(())
    });
    match pooled {
        Ok(result) => result,
        Err(_) => getrandom::fill(out),
    }
}

/// 128 random bits as 32 lower-case hex digits.
pub(crate) fn hex128() -> String {
    let mut bytes = [0u8; 16];
    // The operating system's generator; on the platforms levy supports it does not fail
    // once the system has booted. Should it fail, the clock and a counter keep ids unique
    // (though no longer unguessable), and the failure is logged.
    if let Err(e) = fill_random(&mut bytes) {
        tracing::error!("random number generator failed: {e}");
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let t = crate::clock::now_nanos();
        bytes[..8].copy_from_slice(&t.to_le_bytes());
        bytes[8..].copy_from_slice(&n.to_le_bytes());
    }
    hex::encode(bytes)
}

/// 256 random bits (a new secret key), from the operating system's generator. A secret is
/// never derived from anything guessable: when the generator fails, this is an error (and
/// `Service::open`, which makes the service's secrets, fails to start).
pub(crate) fn bytes32() -> Result<[u8; 32], getrandom::Error> {
    let mut out = [0u8; 32];
    getrandom::fill(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn pooled_random_bytes_are_never_handed_out_twice() {
        // 3,000 draws of 10 bytes cross the 1,024-byte pool about 30 times; 80-bit values
        // from the generator collide with probability about 2^-58, so a repeat means a
        // byte was reused (a pool not advanced, or refilled with the same bytes).
        let mut seen = std::collections::HashSet::new();
        for _ in 0..3_000 {
            let mut b = [0u8; 10];
            super::fill_random(&mut b).unwrap();
            assert!(seen.insert(b), "a value repeated: {b:?}");
        }
        // A draw larger than a quarter of the pool goes straight to the generator.
        let (mut a, mut b) = ([0u8; 512], [0u8; 512]);
        super::fill_random(&mut a).unwrap();
        super::fill_random(&mut b).unwrap();
        assert_ne!(a, b);
    }

    /// A child forked from a thread that holds a pool must not hand out the bytes the
    /// parent hands out next: with the pool copied by `fork` and nothing to tell the two
    /// processes apart, both would make the same "random" ids.
    #[cfg(unix)]
    #[test]
    #[allow(unsafe_code)]
    fn a_forked_child_never_uses_its_parents_pool() {
        // The pool of this thread now holds bytes the parent has yet to hand out.
        let mut first = [0u8; 16];
        super::fill_random(&mut first).unwrap();
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child uses only this thread's pool (no allocation, no lock another
        // thread might hold), `write` and `_exit`.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let mut b = [0u8; 16];
            let ok = super::fill_random(&mut b).is_ok();
            // SAFETY: `b` is 16 readable bytes; `_exit` ends the child without running
            // the parent's exit handlers or the test harness.
            unsafe {
                if ok {
                    libc::write(fds[1], b.as_ptr().cast(), 16);
                }
                libc::_exit(0);
            }
        }
        let mut mine = [0u8; 16];
        super::fill_random(&mut mine).unwrap();
        let mut theirs = [0u8; 16];
        // SAFETY: `theirs` has room for the 16 bytes read; the child is reaped after.
        let read = unsafe {
            libc::close(fds[1]);
            let n = libc::read(fds[0], theirs.as_mut_ptr().cast(), 16);
            libc::close(fds[0]);
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
            n
        };
        assert_eq!(read, 16, "the child could not draw random bytes");
        // 128 bits from the generator are equal with probability 2^-128: equal means the
        // child reused the pool it was forked with.
        assert_ne!(mine, theirs, "the child handed out its parent's next bytes");
        assert_ne!(first, theirs);
    }
}
