//! The link to PostgreSQL: how long the ledger waits for it ([`Bounds`], from the
//! connection string), and what it knows of PostgreSQL answering ([`Link`]), so that a
//! request meets a network that has gone silent with an answer within the bound, never
//! a hang.
//!
//! - Every connection is opened with TCP keepalives and a TCP user timeout (a connection
//!   whose data goes unacknowledged is dropped), and with PostgreSQL's own
//!   `statement_timeout`, `idle_in_transaction_session_timeout` and TCP keepalives, so
//!   that the server also lets go of a client it can no longer reach (and of the rows it
//!   locked).
//! - Every wait of a request is bounded in the client too: a connection from the pool
//!   within `connect_timeout`, each statement's answer within `statement_timeout` and a
//!   second more, whatever the network does.
//! - A connection that has been idle is checked (an empty query) before it is used, and
//!   replaced by a fresh one when the check fails: after PostgreSQL restarts, its stale
//!   connections fail no request. A connection whose statement got no answer, or that
//!   broke, is dropped rather than put back.
//! - A wait that ran out, or a connection that could not be opened, marks PostgreSQL
//!   unreachable: from then on one request at a time tries it, and the others are
//!   answered at once ([`StoreError::Unavailable`]); the first answer clears the mark.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::{Object, Pool, PoolError};
use tokio_postgres::error::SqlState;

use super::super::{Health, StoreError};

/// `statement_timeout` when the connection string sets none.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);
/// `connect_timeout` when the connection string sets none.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `tcp_user_timeout` when the connection string sets none.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(5);
/// `keepalives_idle`, `keepalives_interval` and `keepalives_retries` when the connection
/// string sets none: a silent peer is found within 5 + 2 × 3 = 11 s.
const KEEPALIVES: (Duration, Duration, u32) = (Duration::from_secs(5), Duration::from_secs(2), 3);
/// tokio-postgres's `keepalives_idle` when none is given (2 hours).
const TOKIO_POSTGRES_IDLE: Duration = Duration::from_secs(2 * 60 * 60);
/// PostgreSQL's `idle_in_transaction_session_timeout` when the options set none: a
/// transaction whose client went silent is rolled back (its locks released) after this.
const IDLE_IN_TRANSACTION: Duration = Duration::from_secs(10);
/// How long a statement's answer may take beyond `statement_timeout`, for PostgreSQL to
/// cancel it and say so before the client gives up.
const CANCEL_MARGIN: Duration = Duration::from_secs(1);
/// A connection unused for this long is checked before it is used.
const CHECK_IDLE: Duration = Duration::from_secs(1);
/// Waits on PostgreSQL with no answer for this long make it count as unreachable in
/// [`Health`].
const SILENCE: Duration = Duration::from_millis(500);

/// How long the ledger waits on PostgreSQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bounds {
    /// For a connection from the pool (waiting for one, checking it, or opening one):
    /// `connect_timeout`.
    pub connection: Duration,
    /// For one statement's answer: `statement_timeout` and [`CANCEL_MARGIN`]; `None`
    /// when `statement_timeout` is 0 (off), where the TCP keepalives and user timeout
    /// still end a connection that has gone silent.
    pub statement: Option<Duration>,
}

/// Sets levy's defaults on what the connection string leaves unset (timeouts, keepalives,
/// the server's options), and returns the bounds they make.
pub(super) fn configure(config: &mut tokio_postgres::Config) -> Result<Bounds, String> {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    if config.get_keepalives() {
        // tokio-postgres reports its own 2 hours when the string gives no idle time.
        if config.get_keepalives_idle() == TOKIO_POSTGRES_IDLE {
            config.keepalives_idle(KEEPALIVES.0);
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(KEEPALIVES.1);
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(KEEPALIVES.2);
        }
    }
    let given = config.get_options().unwrap_or("").to_string();
    let statement = match option(&given, "statement_timeout") {
        Some(v) => duration(v).ok_or_else(|| {
            format!("statement_timeout {v:?} in options is not a duration (5000, 5s, 1min)")
        })?,
        None => STATEMENT_TIMEOUT,
    };
    config.options(server_options(config, statement, &given));
    Ok(Bounds {
        connection: *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT),
        statement: (!statement.is_zero()).then(|| statement + CANCEL_MARGIN),
    })
}

/// The options sent to the server: levy's timeouts and keepalives first, then the
/// string's own (which PostgreSQL applies after, so that they win), then
/// `synchronous_commit=off` (every write but a calculation sets it on in its transaction).
fn server_options(config: &tokio_postgres::Config, statement: Duration, given: &str) -> String {
    let ms = |d: Duration| d.as_millis();
    let mut o = format!(
        "-c statement_timeout={} -c idle_in_transaction_session_timeout={}",
        ms(statement),
        ms(IDLE_IN_TRANSACTION)
    );
    if let Some(t) = config.get_tcp_user_timeout() {
        o.push_str(&format!(" -c tcp_user_timeout={}", ms(*t)));
    }
    if config.get_keepalives() {
        o.push_str(&format!(
            " -c tcp_keepalives_idle={} -c tcp_keepalives_interval={} -c tcp_keepalives_count={}",
            config.get_keepalives_idle().as_secs().max(1),
            config
                .get_keepalives_interval()
                .unwrap_or(KEEPALIVES.1)
                .as_secs()
                .max(1),
            config.get_keepalives_retries().unwrap_or(KEEPALIVES.2)
        ));
    }
    if !given.trim().is_empty() {
        o.push(' ');
        o.push_str(given.trim());
    }
    o.push_str(" -c synchronous_commit=off");
    o
}

/// The value of setting `name` in a PostgreSQL `options` string (`-c name=value`,
/// `-cname=value` or `--name=value`), the last one given.
fn option<'a>(options: &'a str, name: &str) -> Option<&'a str> {
    let mut found = None;
    let mut words = options.split_whitespace();
    while let Some(w) = words.next() {
        let setting = match w {
            "-c" => words.next(),
            _ => w.strip_prefix("--").or_else(|| w.strip_prefix("-c")),
        };
        if let Some((k, v)) = setting.and_then(|s| s.split_once('=')) {
            if k.replace('-', "_").eq_ignore_ascii_case(name) {
                found = Some(v);
            }
        }
    }
    found
}

/// A PostgreSQL duration setting: milliseconds without a unit, else a number with `us`,
/// `ms`, `s`, `min`, `h` or `d`.
fn duration(v: &str) -> Option<Duration> {
    let v = v.trim().trim_matches('\'');
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().ok()?;
    let ms = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1_000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    let ms = n * ms;
    (0.0..1e12)
        .contains(&ms)
        .then(|| Duration::from_micros((ms * 1000.0) as u64))
}

/// Whether an error says the connection is gone (closed, reset, timed out, or closed by
/// the server as it shut down), as opposed to an answer of the server's.
pub(super) fn connection_gone(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        return code.code().starts_with("08")
            || [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
            ]
            .contains(code);
    }
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<std::io::Error>() {
            return true;
        }
        cause = c.source();
    }
    e.to_string() == "timeout waiting for server"
}

/// Whether an error of the server's says a statement ran past `statement_timeout`.
pub(super) fn timed_out(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::QUERY_CANCELED)
}

/// The check before an idle connection is used (a `pre_recycle` hook): an empty query,
/// answered within the bound. A connection that fails it is dropped, and the pool takes
/// the next one or opens a fresh one.
pub(super) fn check_hook(bound: Duration) -> deadpool_postgres::Hook {
    deadpool_postgres::Hook::async_fn(move |client, metrics| {
        let idle = metrics.last_used();
        Box::pin(async move {
            if idle < CHECK_IDLE {
                return Ok(());
            }
            match tokio::time::timeout(bound, client.simple_query("")).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(deadpool_postgres::HookError::message(format!(
                    "a pooled connection failed its check: {e}"
                ))),
                Err(_) => Err(deadpool_postgres::HookError::message(
                    "a pooled connection did not answer its check",
                )),
            }
        })
    })
}

/// What the ledger knows of PostgreSQL answering, shared by every operation.
#[derive(Debug, Default)]
struct State {
    /// Since when, and why, PostgreSQL counts as unreachable; cleared by its next answer.
    down: Option<(Instant, String)>,
    /// Whether an operation is trying PostgreSQL while it is down.
    probing: bool,
    /// The waits under way (for a connection or an answer), by number: when each began.
    waits: BTreeMap<u64, Instant>,
    next: u64,
    /// When PostgreSQL last answered.
    answered: Option<Instant>,
}

/// The store's link to PostgreSQL: its bounds, and what it knows of PostgreSQL answering.
#[derive(Debug)]
pub(super) struct Link {
    pub bounds: Bounds,
    state: Mutex<State>,
}

impl Link {
    pub(super) fn new(bounds: Bounds) -> Arc<Link> {
        Arc::new(Link {
            bounds,
            state: Mutex::default(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets an operation go to PostgreSQL, or refuses it at once while PostgreSQL is down
    /// and another operation is trying it (the one let through then is that try).
    pub(super) fn admit(self: &Arc<Self>) -> Result<Admitted, StoreError> {
        let mut s = self.state();
        let Some((since, why)) = &s.down else {
            return Ok(Admitted(None));
        };
        if s.probing {
            return Err(StoreError::Unavailable(format!(
                "PostgreSQL has been unreachable for {} s ({why})",
                since.elapsed().as_secs()
            )));
        }
        s.probing = true;
        Ok(Admitted(Some(Arc::clone(self))))
    }

    /// PostgreSQL answered.
    fn answered(&self) {
        let mut s = self.state();
        s.down = None;
        s.answered = Some(Instant::now());
    }

    /// PostgreSQL did not answer in time, or no connection could be opened.
    fn unreachable(&self, why: &str) {
        let mut s = self.state();
        let since = s.down.as_ref().map_or_else(Instant::now, |d| d.0);
        s.down = Some((since, why.to_string()));
    }

    /// Awaits `fut` as one wait on PostgreSQL, for at most `bound`; `None` when the bound
    /// ran out.
    async fn wait<T>(&self, bound: Option<Duration>, fut: impl Future<Output = T>) -> Option<T> {
        let id = {
            let mut s = self.state();
            s.next += 1;
            let id = s.next;
            s.waits.insert(id, Instant::now());
            id
        };
        // Removed however the wait ends, a dropped future included.
        let _done = Waiting(self, id);
        match bound {
            Some(b) => tokio::time::timeout(b, fut).await.ok(),
            None => Some(fut.await),
        }
    }

    /// What [`Health`] says of PostgreSQL now.
    pub(super) fn health(&self) -> Health {
        let s = self.state();
        let now = Instant::now();
        let oldest = s.waits.values().next().copied();
        let unreachable = match (&s.down, oldest) {
            (Some((since, why)), _) => Some(format!(
                "PostgreSQL has been unreachable for {} s ({why})",
                since.elapsed().as_secs()
            )),
            (None, Some(oldest)) => {
                let quiet_since = s.answered.map_or(oldest, |a| a.max(oldest));
                let quiet = now.duration_since(quiet_since);
                (quiet >= SILENCE)
                    .then(|| format!("PostgreSQL has not answered for {} ms", quiet.as_millis()))
            }
            (None, None) => None,
        };
        Health {
            unreachable,
            waiting: oldest.is_some(),
            answered: s.answered,
        }
    }
}

/// A wait under way, removed when dropped.
struct Waiting<'a>(&'a Link, u64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.state().waits.remove(&self.1);
    }
}

/// An operation let through by [`Link::admit`]; when it was the try of a PostgreSQL that
/// is down, the next one may try once it is dropped.
pub(super) struct Admitted(Option<Arc<Link>>);

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Some(link) = self.0.take() {
            link.state().probing = false;
        }
    }
}

/// One operation's use of the link: its connection, and whether that connection may go
/// back to the pool.
pub(super) struct Op {
    pub link: Arc<Link>,
    /// The connection broke or went silent: it is dropped, not put back.
    lost: AtomicBool,
}

impl Op {
    pub(super) fn new(link: &Arc<Link>) -> Op {
        Op {
            link: Arc::clone(link),
            lost: AtomicBool::new(false),
        }
    }

    /// A connection from the pool, within the connection bound.
    pub(super) async fn connect(&self, pool: &Pool) -> Result<Object, StoreError> {
        let bound = self.link.bounds.connection;
        match self.link.wait(Some(bound), pool.get()).await {
            Some(Ok(client)) => {
                self.link.answered();
                Ok(client)
            }
            Some(Err(e)) => Err(self.pool_failed(e)),
            None => {
                let why = format!("no connection within {} s", bound.as_secs_f64());
                self.link.unreachable(&why);
                Err(StoreError::Unavailable(format!("PostgreSQL: {why}")))
            }
        }
    }

    fn pool_failed(&self, e: PoolError) -> StoreError {
        let gone = match &e {
            PoolError::Timeout(_) => true,
            PoolError::Backend(b) => connection_gone(b),
            _ => false,
        };
        let text = super::with_causes(&e);
        if gone {
            self.link.unreachable(&text);
            StoreError::Unavailable(format!("could not reach PostgreSQL: {text}"))
        } else {
            super::pool_err(e)
        }
    }

    /// Awaits one statement's answer within the statement bound; its error mapped by `map`.
    pub(super) async fn answer<T>(
        &self,
        fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
        map: impl FnOnce(tokio_postgres::Error) -> StoreError,
    ) -> Result<T, StoreError> {
        let bound = self.link.bounds.statement;
        match self.link.wait(bound, fut).await {
            Some(Ok(v)) => {
                self.link.answered();
                Ok(v)
            }
            Some(Err(e)) => {
                if connection_gone(&e) {
                    self.lost.store(true, Ordering::Relaxed);
                } else {
                    self.link.answered();
                }
                Err(map(e))
            }
            None => {
                self.lost.store(true, Ordering::Relaxed);
                let why = format!(
                    "no answer to a statement within {} s",
                    bound.unwrap_or_default().as_secs_f64()
                );
                self.link.unreachable(&why);
                Err(StoreError::Unavailable(format!("PostgreSQL: {why}")))
            }
        }
    }

    /// Awaits the answer to the statement that commits (`COMMIT`, or a statement that
    /// commits itself). Without an answer the outcome is unknown, and said so
    /// ([`StoreError::OutcomeUnknown`]); an answer that is an error means nothing was
    /// committed.
    pub(super) async fn commit<T>(
        &self,
        fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, StoreError> {
        let mut server_answered = false;
        let out = self
            .answer(fut, |e| {
                server_answered = e.as_db_error().is_some();
                super::pg_err(e)
            })
            .await;
        match out {
            // No answer (the bound ran out, or the connection broke on the way): the
            // commit may have happened or not.
            Err(StoreError::Unavailable(why)) if !server_answered => {
                Err(StoreError::OutcomeUnknown(why))
            }
            other => other,
        }
    }

    /// Puts the connection back in the pool, or drops it when it broke or went silent.
    pub(super) fn release(&self, client: Object) {
        if self.lost.load(Ordering::Relaxed) {
            drop(Object::take(client));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configured(s: &str) -> (tokio_postgres::Config, Bounds) {
        let mut config: tokio_postgres::Config = s.parse().unwrap();
        let bounds = configure(&mut config).unwrap();
        (config, bounds)
    }

    #[test]
    fn defaults_fill_what_the_string_leaves_unset() {
        let (c, b) = configured("postgres://levy@db/levy");
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(5)));
        assert_eq!(c.get_tcp_user_timeout(), Some(&Duration::from_secs(5)));
        assert!(c.get_keepalives());
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(5));
        assert_eq!(c.get_keepalives_interval(), Some(Duration::from_secs(2)));
        assert_eq!(c.get_keepalives_retries(), Some(3));
        assert_eq!(
            c.get_options(),
            Some(
                "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=10000 \
                 -c tcp_user_timeout=5000 -c tcp_keepalives_idle=5 \
                 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3 \
                 -c synchronous_commit=off"
            )
        );
        // 5 s of statement_timeout and the second of the cancel's margin.
        assert_eq!(
            b,
            Bounds {
                connection: Duration::from_secs(5),
                statement: Some(Duration::from_secs(6)),
            }
        );
    }

    #[test]
    fn the_string_sets_each_bound() {
        let (c, b) = configured(
            "postgres://levy@db/levy?connect_timeout=3&tcp_user_timeout=9&keepalives_idle=30\
             &keepalives_interval=4&keepalives_retries=5&options=-c%20statement_timeout%3D2min",
        );
        assert_eq!(c.get_tcp_user_timeout(), Some(&Duration::from_secs(9)));
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(30));
        assert_eq!(c.get_keepalives_retries(), Some(5));
        let o = c.get_options().unwrap();
        // levy's first, the string's after them (PostgreSQL applies the last).
        assert!(
            o.starts_with("-c statement_timeout=120000 ")
                && o.contains(" -c tcp_user_timeout=9000 -c tcp_keepalives_idle=30 -c tcp_keepalives_interval=4 -c tcp_keepalives_count=5 ")
                && o.ends_with(" -c statement_timeout=2min -c synchronous_commit=off"),
            "{o}"
        );
        assert_eq!(
            b,
            Bounds {
                connection: Duration::from_secs(3),
                statement: Some(Duration::from_secs(121)),
            }
        );
        // Keepalives off, statement_timeout off: no bound on a statement in the client.
        let (c, b) = configured(
            "host=db user=levy keepalives=0 options='-c statement_timeout=0 -c work_mem=8MB'",
        );
        assert!(!c.get_keepalives());
        assert!(!c.get_options().unwrap().contains("tcp_keepalives"));
        assert_eq!(b.statement, None);
    }

    #[test]
    fn a_statement_timeout_that_is_no_duration_is_refused() {
        let mut config: tokio_postgres::Config =
            "postgres://levy@db/levy?options=-c%20statement_timeout%3Dsoon"
                .parse()
                .unwrap();
        let e = configure(&mut config).unwrap_err();
        assert!(e.contains("\"soon\""), "{e}");
    }

    #[test]
    fn options_and_durations_read_as_postgresql_reads_them() {
        assert_eq!(
            option("-c statement_timeout=5s", "statement_timeout"),
            Some("5s")
        );
        assert_eq!(
            option("-cstatement_timeout=7", "statement_timeout"),
            Some("7")
        );
        assert_eq!(
            option("--statement-timeout=1h", "statement_timeout"),
            Some("1h")
        );
        assert_eq!(
            option(
                "-c statement_timeout=1 -c statement_timeout=2",
                "statement_timeout"
            ),
            Some("2")
        );
        assert_eq!(option("-c work_mem=8MB", "statement_timeout"), None);
        // PostgreSQL's time units (milliseconds without one).
        for (text, ms) in [
            ("5000", 5_000),
            ("5s", 5_000),
            ("1.5s", 1_500),
            ("2min", 120_000),
            ("1h", 3_600_000),
            ("1d", 86_400_000),
            ("250ms", 250),
            ("0", 0),
        ] {
            assert_eq!(duration(text), Some(Duration::from_millis(ms)), "{text}");
        }
        for bad in ["", "s", "5 parsecs", "-1", "1e400"] {
            assert_eq!(duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn health_counts_a_silence_only_while_something_waits() {
        let link = Link::new(Bounds {
            connection: Duration::from_secs(5),
            statement: Some(Duration::from_secs(6)),
        });
        assert_eq!(link.health(), Health::default());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // A wait of 700 ms with no answer: more than the 500 ms of silence allowed.
        let l = Arc::clone(&link);
        let during = rt.block_on(async move {
            let waiting = l.wait(None, tokio::time::sleep(Duration::from_millis(700)));
            let probe = async {
                tokio::time::sleep(Duration::from_millis(600)).await;
                l.health()
            };
            tokio::join!(waiting, probe).1
        });
        assert!(during.waiting);
        assert!(
            during
                .unreachable
                .as_deref()
                .unwrap()
                .starts_with("PostgreSQL has not answered for"),
            "{during:?}"
        );
        // Done waiting, nothing is unreachable; a wait that ran out marks it so until
        // the next answer.
        assert_eq!(link.health().unreachable, None);
        link.unreachable("no answer to a statement within 6 s");
        assert!(link.health().unreachable.unwrap().contains("within 6 s"));
        let first = link.admit().unwrap();
        assert!(matches!(link.admit(), Err(StoreError::Unavailable(_))));
        drop(first);
        let second = link.admit().unwrap();
        link.answered();
        drop(second);
        assert_eq!(link.health().unreachable, None);
        assert!(link.admit().is_ok() && link.admit().is_ok());
    }

    /// A connection to a new database on the tests' PostgreSQL server, on `rt`.
    async fn connect(url: &str) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
    }

    #[test]
    fn a_commit_without_an_answer_is_an_unknown_outcome_and_an_answered_error_is_not() {
        // Under CI=true the server must start (levy_testkit panics); elsewhere it may not.
        let Some(server) = levy_testkit::postgres::server() else {
            return;
        };
        let url = server.database();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let c = connect(&url).await;
            // A commit that takes 2 s (a deferred trigger sleeps), and one that fails.
            c.batch_execute(
                "CREATE TABLE slow (n int); CREATE TABLE failing (n int);
                 CREATE FUNCTION nap() RETURNS trigger LANGUAGE plpgsql AS
                     $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$;
                 CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
                     $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
                 CREATE CONSTRAINT TRIGGER nap AFTER INSERT ON slow
                     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION nap();
                 CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON failing
                     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse();",
            )
            .await
            .unwrap();
            let link = Link::new(Bounds {
                connection: Duration::from_secs(5),
                statement: Some(Duration::from_millis(500)),
            });
            // No answer within the bound: the outcome is unknown, and said so.
            c.batch_execute("BEGIN; INSERT INTO slow VALUES (1)")
                .await
                .unwrap();
            let op = Op::new(&link);
            let e = op.commit(c.batch_execute("COMMIT")).await.unwrap_err();
            assert!(matches!(e, StoreError::OutcomeUnknown(_)), "{e:?}");
            assert!(e.to_string().contains("the outcome is unknown"), "{e}");
            assert!(
                op.lost.load(Ordering::Relaxed),
                "a silent connection is not put back"
            );
            // ... and indeed the write was stored, after the client gave up on it.
            let other = connect(&url).await;
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let n: i64 = other
                    .query_one("SELECT count(*) FROM slow", &[])
                    .await
                    .unwrap()
                    .get(0);
                if n == 1 {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the unanswered commit never landed"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            // An error the server answers COMMIT with: nothing was committed, a plain
            // failure (not an unknown outcome).
            other
                .batch_execute("BEGIN; INSERT INTO failing VALUES (1)")
                .await
                .unwrap();
            let op = Op::new(&link);
            let e = op.commit(other.batch_execute("COMMIT")).await.unwrap_err();
            assert!(
                matches!(&e, StoreError::Ledger(m) if m.contains("refused at commit")),
                "{e:?}"
            );
            let n: i64 = other
                .query_one("SELECT count(*) FROM failing", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 0);
        });
    }
}
