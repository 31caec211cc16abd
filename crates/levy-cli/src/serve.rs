//! The `levy serve` and `levy keys new` commands.
//!
//! ```text
//! levy serve [--listen 127.0.0.1:8787] [--table FILE] [--ledger FILE|CONNECTION] [--keys FILE]
//! levy keys new --account NAME [--keys FILE]
//! ```
//!
//! `main.rs` mounts [`Command`] as subcommands of the `levy` parser and calls [`run`]; the
//! HTTP side is levy-server's [`serve`] with [`ServeOptions`].
//!
//! `levy serve` stops on SIGTERM or ctrl-c after finishing the requests in flight, and on
//! SIGHUP re-reads the `--table` file and swaps it in atomically: a request is answered
//! wholly with the old table or wholly with the new one. A table file that fails to open
//! is logged and the old table stays in use.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use levy_server::{serve, ServeOptions, DEFAULT_BODY_LIMIT};

/// The commands of this module: `levy serve` and `levy keys`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the tax service interface over HTTP.
    Serve(ServeArgs),
    /// Manage API keys.
    Keys(KeysArgs),
}

/// Arguments of `levy serve`.
#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Use 0.0.0.0 only behind a proxy that terminates TLS.
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// Rate table file (`*.levy`). Without it, the table built into levy is used, and
    /// SIGHUP has nothing to reload.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// The ledger for transactions, refunds and the other stored resources: an SQLite file
    /// (one that exists, or a new one in a directory that exists), or a PostgreSQL
    /// database (`postgres://user@host/db`, or `host=… dbname=…` pairs; `sslmode` and
    /// `sslrootcert` as libpq reads them). Anything else is refused.
    #[arg(
        long,
        value_name = "FILE|CONNECTION",
        default_value = "./levy-ledger.sqlite"
    )]
    pub ledger: String,
    /// Keys file written by `levy keys new`.
    #[arg(long, value_name = "FILE", default_value = "./levy-keys.toml")]
    pub keys: PathBuf,
    /// Largest request body in bytes; larger bodies are answered with 413. The service's
    /// limit, which the HTTP server reads, so both take bodies up to this size.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Refuse a sale or refund dated more than this many days before it is recorded
    /// (`400 BACKDATED_PAST_LIMIT`), so that a late record does not reopen a period already
    /// filed by mistake; `levy sync`'s till records are not held to it. No limit by
    /// default.
    #[arg(long, value_name = "DAYS")]
    pub max_backdate_days: Option<u32>,
    /// Seconds a client has to send a request's headers, and a kept-alive connection may
    /// sit idle, before the connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = levy_server::DEFAULT_HEADER_TIMEOUT.as_secs())]
    pub header_timeout: u64,
    /// Seconds a client has to send a request's body once its headers are in; later, 408.
    #[arg(long, value_name = "SECONDS", default_value_t = levy_server::DEFAULT_BODY_TIMEOUT.as_secs())]
    pub body_timeout: u64,
    /// The most connections served at once; a connection beyond it is closed at once.
    #[arg(long, value_name = "N", default_value_t = levy_server::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Requests per second allowed to each account and mode (a token bucket); beyond it,
    /// 429 with Retry-After. 0 turns the limit off.
    #[arg(long, value_name = "N", default_value_t = levy_api::Limits::default().requests_per_second)]
    pub rate_limit: u32,
    /// Requests an account and mode may send at once above the rate.
    #[arg(long, value_name = "N", default_value_t = levy_api::Limits::default().burst)]
    pub burst: u32,
    /// Unexpired calculations each account and mode may store (each is kept 24 hours);
    /// beyond it, 429. 0 turns the limit off.
    #[arg(long, value_name = "N", default_value_t = levy_api::Limits::default().stored_calculations)]
    pub max_stored_calculations: u64,
    /// Bytes of unexpired calculations each account and mode may store (as the ledger
    /// stores them); beyond it, 429. 0 turns the limit off.
    #[arg(long, value_name = "BYTES", default_value_t = levy_api::Limits::default().stored_calculation_bytes)]
    pub max_stored_calculation_bytes: u64,
    /// Requests of each account (its test and live keys together) answered at once; one
    /// more is answered 429 at once, so that one account cannot hold every ledger
    /// connection. 0 turns the limit off.
    #[arg(long, value_name = "N", default_value_t = levy_api::Limits::default().concurrent_requests)]
    pub max_concurrent_requests: u32,
    /// Large requests (bodies over 16 KiB: a calculation of some 40 lines or more)
    /// answered at once, of all accounts; more wait their turn, which goes first to the
    /// account with the fewest being answered. Default: the machine's processors. 0 turns
    /// the limit off.
    #[arg(long, value_name = "N", default_value_t = levy_api::Limits::default().large_requests)]
    pub max_large_requests: u32,
    /// Answer every request on the async worker threads, each write waiting for its
    /// commit in place (for measurements; see ServeOptions::inline).
    #[arg(long, hide = true)]
    pub inline: bool,
    /// Log filter (`RUST_LOG` syntax), used when `RUST_LOG` is not set.
    #[arg(long, value_name = "FILTER", default_value = "info")]
    pub log: String,
}

/// Arguments of `levy keys`.
#[derive(Debug, Args)]
pub struct KeysArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: KeysCommand,
}

/// `levy keys` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create an account's test and live keys. The keys are printed once; the keys file
    /// keeps only their hashes.
    New(KeysNewArgs),
}

/// Arguments of `levy keys new`.
#[derive(Clone, Debug, Args)]
pub struct KeysNewArgs {
    /// Account name; test and live data of one account are kept apart from every other
    /// account's.
    #[arg(long)]
    pub account: String,
    /// Keys file to add the account's keys to (created when missing).
    #[arg(long, value_name = "FILE", default_value = "./levy-keys.toml")]
    pub keys: PathBuf,
}

/// Why a command failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// The service could not start (table, ledger or keys file); the message says which.
    Service(String),
    /// The keys could not be created or written.
    Keys(String),
    /// The listen address could not be bound, or the server failed.
    Io(std::io::Error),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Service(m) => write!(f, "cannot start the service: {m}"),
            CliError::Keys(m) => write!(f, "cannot create keys: {m}"),
            CliError::Io(e) => write!(f, "server error: {e}"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Io(e)
    }
}

/// Runs a command to completion. `levy serve` returns after a graceful shutdown.
pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Serve(args) => run_serve(args),
        Command::Keys(KeysArgs {
            command: KeysCommand::New(args),
        }) => {
            let text = run_keys_new(&args)?;
            print!("{text}");
            Ok(())
        }
    }
}

/// Creates an account's keys and returns the text to show the user (the keys, once).
pub fn run_keys_new(args: &KeysNewArgs) -> Result<String, CliError> {
    let (test, live) = levy_api::keys::create_account_keys(&args.keys, &args.account)
        .map_err(|e| CliError::Keys(e.to_string()))?;
    Ok(format!(
        "account {account}\n  test key: {test}\n  live key: {live}\n\
         The keys are shown only now; {path} keeps their hashes.\n",
        account = args.account,
        path = args.keys.display(),
    ))
}

/// `levy serve`: opens the service, binds, prints `listening on http://ADDR` on stdout,
/// and serves until SIGTERM or ctrl-c.
pub fn run_serve(args: ServeArgs) -> Result<(), CliError> {
    init_logging(&args.log);
    let table = match &args.table {
        Some(path) => levy_api::TableSource::Path(path.clone()),
        None => crate::default_table(),
    };
    let config = levy_api::ServiceConfig {
        table,
        ledger: args.ledger.clone(),
        keys: levy_api::KeySource::File(args.keys.clone()),
    };
    let limits = levy_api::Limits {
        requests_per_second: args.rate_limit,
        burst: args.burst,
        stored_calculations: args.max_stored_calculations,
        stored_calculation_bytes: args.max_stored_calculation_bytes,
        concurrent_requests: args.max_concurrent_requests,
        large_requests: args.max_large_requests,
    };
    let mut service = levy_api::Service::open(config)
        .map_err(|e| CliError::Service(e.to_string()))?
        .with_limits(limits)
        .with_body_limit(args.body_limit);
    if let Some(days) = args.max_backdate_days {
        service = service.with_backdating_limit(days);
    }
    let service = Arc::new(service);
    let runtime = levy_server::runtime_builder().build()?;
    runtime.block_on(async move {
        let options = ServeOptions {
            listen: args.listen,
            inline: args.inline,
            header_timeout: std::time::Duration::from_secs(args.header_timeout.max(1)),
            body_timeout: std::time::Duration::from_secs(args.body_timeout.max(1)),
            max_connections: args.max_connections.max(1),
        };
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let running = serve(Arc::clone(&service), options, async move {
            let _ = stopped.wait_for(|s| *s).await;
        })
        .await?;
        let addr = running.local_addr();
        tracing::info!(target: LOG_TARGET, %addr, table = %service.table().header().hash_hex(), "levy listening");
        warn_if_stale(&service.table());
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening on http://{addr}");
            let _ = out.flush();
        }
        let reload = tokio::spawn(reload_on_sighup(Arc::clone(&service), args.table.clone()));
        let watch_keys = tokio::spawn(reload_keys_on_change(
            Arc::clone(&service),
            args.keys.clone(),
        ));
        let waiting = running.wait();
        tokio::pin!(waiting);
        let result = tokio::select! {
            r = &mut waiting => r,
            () = shutdown_signal() => {
                let _ = stop.send(true);
                match tokio::time::timeout(SHUTDOWN_GRACE, &mut waiting).await {
                    Ok(r) => r,
                    Err(_) => {
                        tracing::warn!(target: LOG_TARGET,
                            seconds = SHUTDOWN_GRACE.as_secs(),
                            "connections still open after the grace period; stopping anyway"
                        );
                        Ok(())
                    }
                }
            }
        };
        reload.abort();
        watch_keys.abort();
        tracing::info!(target: LOG_TARGET, "levy stopped");
        result.map_err(CliError::Io)
    })
}

/// The target of this module's log lines: the one they had when this module was
/// levy-server's `cli`, so that `--log`/`RUST_LOG` filters such as `levy_server=info` and
/// whatever reads the logs see the same lines as before.
const LOG_TARGET: &str = "levy_server::cli";

/// How long `levy serve` waits, after SIGTERM or ctrl-c, for requests in flight.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// Completes on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!(target: LOG_TARGET, "ctrl-c: finishing requests in flight, then stopping"),
        _ = term => tracing::info!(target: LOG_TARGET, "SIGTERM: finishing requests in flight, then stopping"),
    }
}

/// Logs a warning when today is past the table's horizon: some answers may be out of date
/// (each says so), and every response carries `Levy-Table-Horizon`.
fn warn_if_stale(table: &levy_core::AnyTable) {
    if let Some((horizon, true)) = levy_api::table_horizon(table, levy_api::clock::now()) {
        tracing::warn!(target: LOG_TARGET, horizon = %horizon, "the table is past its horizon: answers that use that input are PARTIAL and say STALE_TABLE; install a newer table (`levy build`, then SIGHUP)");
    }
}

/// Re-reads the table file on every SIGHUP and swaps it in.
#[cfg(unix)]
async fn reload_on_sighup(service: Arc<levy_api::Service>, table: Option<PathBuf>) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, error = %e, "cannot listen for SIGHUP; table reload is off");
            return;
        }
    };
    while hup.recv().await.is_some() {
        // A failed reload is retried by the keys poll, which sees the file's state as new.
        let _ = reload_keys(&service, "SIGHUP");
        let Some(path) = table.clone() else {
            tracing::warn!(target: LOG_TARGET, "SIGHUP: serving the built-in table, which has no file to reload; start with --table FILE");
            continue;
        };
        let read = tokio::task::spawn_blocking(move || levy_core::AnyTable::open_file(&path)).await;
        match read {
            Ok(Ok(t)) => {
                let hash = t.header().hash_hex();
                service.reload_table(Arc::new(t));
                tracing::info!(target: LOG_TARGET, table = %hash, "SIGHUP: table reloaded");
                warn_if_stale(&service.table());
            }
            Ok(Err(e)) => {
                tracing::error!(target: LOG_TARGET, error = %e, "SIGHUP: table reload failed; the old table stays in use")
            }
            Err(e) => {
                tracing::error!(target: LOG_TARGET, error = %e, "SIGHUP: table reload failed; the old table stays in use")
            }
        }
    }
}

/// Reads the keys file again and swaps the keys in; on an error the old keys stay (a
/// deleted keys file revokes every key: see `Service::reload_keys`). Whether it succeeded.
fn reload_keys(service: &levy_api::Service, why: &str) -> bool {
    match service.reload_keys() {
        Ok(0) => {
            tracing::error!(target: LOG_TARGET, "{why}: the keys file holds no key (or is gone): every request is refused until keys are added");
            true
        }
        Ok(n) => {
            tracing::info!(target: LOG_TARGET, keys = n, "{why}: keys reloaded");
            true
        }
        Err(e) => {
            tracing::error!(target: LOG_TARGET, error = %e, "{why}: keys reload failed; the old keys stay in use until a reload succeeds (tried again every second)");
            false
        }
    }
}

/// How often `levy serve` looks at the keys file for a change.
pub const KEYS_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// What the keys poll compares: the file's modification time, size, inode, mode and a
/// hash of its content (a file rewritten within one second to the same size is still
/// seen); `None` when it cannot be read.
type KeysStamp = Option<(std::time::SystemTime, u64, u64, u32, [u8; 32])>;

/// The keys file's [`KeysStamp`] now. At most the first 4 MiB are hashed: a keys file is a
/// few kilobytes.
fn keys_stamp(path: &std::path::Path) -> KeysStamp {
    use std::io::Read;
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (ino, mode) = (
        std::os::unix::fs::MetadataExt::ino(&m),
        std::os::unix::fs::MetadataExt::mode(&m),
    );
    #[cfg(not(unix))]
    let (ino, mode) = (0, 0);
    let mut content = Vec::new();
    let readable = std::fs::File::open(path)
        .and_then(|f| f.take(4 << 20).read_to_end(&mut content))
        .is_ok();
    let hash = if readable {
        *blake3::hash(&content).as_bytes()
    } else {
        [0; 32]
    };
    Some((m.modified().ok()?, m.len(), ino, mode, hash))
}

/// Reloads the keys whenever the keys file changes: its modification time, size, inode,
/// mode or content (`levy keys new` replaces the file by renaming a new one over it). A
/// reload that fails is tried again every poll until one succeeds, so a change made while
/// the file could not be read (a moment of mode 000, a half-written file) is never missed.
/// A deleted file revokes every key.
async fn reload_keys_on_change(service: Arc<levy_api::Service>, path: PathBuf) {
    let mut last = keys_stamp(&path);
    let mut failed = false;
    loop {
        tokio::time::sleep(KEYS_POLL).await;
        let now = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || keys_stamp(&path))
                .await
                .unwrap_or(None)
        };
        if now == last && !failed {
            continue;
        }
        let service = Arc::clone(&service);
        let why = if failed {
            "keys reload retried"
        } else {
            "keys file changed"
        };
        let ok = tokio::task::spawn_blocking(move || reload_keys(&service, why))
            .await
            .unwrap_or(false);
        failed = !ok;
        last = now;
    }
}

#[cfg(not(unix))]
async fn reload_on_sighup(_service: Arc<levy_api::Service>, _table: Option<PathBuf>) {}

/// Installs the program's `tracing` subscriber (the program's, not a library's: levy-server
/// only emits events): human-readable lines on stderr, filtered by `filter` (an `EnvFilter` directive such as `info` or
/// `levy_server=debug`), or by `RUST_LOG` when it is set. Does nothing when a subscriber
/// is already installed.
pub(crate) fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_stamp_sees_content_and_mode_not_only_time_and_size() {
        // A keys file rewritten in place to the same size with its old modification time
        // (an editor that keeps it, a copy with -p) is still a change; so is its mode.
        let dir = std::env::temp_dir().join(format!("levy-keys-stamp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys.toml");
        std::fs::write(&path, "aaaa").unwrap();
        let when = std::fs::metadata(&path).unwrap().modified().unwrap();
        let first = keys_stamp(&path);
        assert!(first.is_some());
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut &file, b"bbbb").unwrap();
        file.set_modified(when).unwrap();
        drop(file);
        let second = keys_stamp(&path);
        assert_eq!(
            (first.unwrap().0, first.unwrap().1),
            (second.unwrap().0, second.unwrap().1)
        );
        assert_ne!(first, second, "same time and size, other content");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            assert_ne!(keys_stamp(&path), second, "another mode");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(keys_stamp(&path), None, "a deleted file has no stamp");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    use clap::Parser;

    #[derive(Parser)]
    struct Levy {
        #[command(subcommand)]
        command: Command,
    }

    #[test]
    fn serve_defaults_are_the_documented_ones() {
        let Levy {
            command: Command::Serve(args),
        } = Levy::parse_from(["levy", "serve"])
        else {
            panic!("not serve")
        };
        // Defaults from the task's command line: 127.0.0.1:8787, embedded table,
        // ./levy-ledger.sqlite, ./levy-keys.toml, 1 MiB body limit.
        assert_eq!(
            args.listen,
            "127.0.0.1:8787".parse::<std::net::SocketAddr>().unwrap()
        );
        assert_eq!(args.table, None);
        assert_eq!(args.ledger, "./levy-ledger.sqlite");
        assert_eq!(args.keys, std::path::PathBuf::from("./levy-keys.toml"));
        assert_eq!(args.body_limit, 1_048_576);

        let Levy {
            command: Command::Serve(args),
        } = Levy::parse_from([
            "levy",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--table",
            "t.levy",
            "--ledger",
            "l.db",
            "--keys",
            "k.toml",
        ])
        else {
            panic!("not serve")
        };
        assert_eq!(args.listen.port(), 0);
        assert_eq!(args.table.as_deref(), Some(std::path::Path::new("t.levy")));

        // A listen address that is not one is a usage error, not a panic.
        assert!(Levy::try_parse_from(["levy", "serve", "--listen", "localhost"]).is_err());
        // keys new needs an account.
        assert!(Levy::try_parse_from(["levy", "keys", "new"]).is_err());
        let Levy {
            command: Command::Keys(k),
        } = Levy::parse_from(["levy", "keys", "new", "--account", "shop"])
        else {
            panic!("not keys")
        };
        let KeysCommand::New(new) = k.command;
        assert_eq!(new.account, "shop");
        assert_eq!(new.keys, std::path::PathBuf::from("./levy-keys.toml"));
    }
}
