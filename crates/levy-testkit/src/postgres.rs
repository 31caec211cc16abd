//! A real PostgreSQL server for the tests that run against one: started once per test
//! process from the machine's PostgreSQL binaries (Debian's `postgresql` package, which
//! `.ci/run` installs), in a scratch directory, on a free loopback port, and stopped when
//! the process ends, however it ends.
//!
//! - [`server`]: the process's server, or `None` (with a line saying why) when no
//!   PostgreSQL can be started outside CI. Under `CI=true` that is a failure.
//! - [`Server::database`]: a new, empty database on it, as a `postgres://` URL, so that
//!   every test has a ledger of its own.
//! - [`ledger`]: a fresh ledger for a test: a new PostgreSQL database when
//!   `LEVY_TEST_LEDGER=postgres`, an SQLite file in `dir` otherwise. The suites that take
//!   their ledger from it run against either store unchanged.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A running PostgreSQL server, owned by the test process.
#[derive(Debug)]
pub struct Server {
    port: u16,
    bin: PathBuf,
    /// The wrapper's stdin: when the test process ends, the pipe closes and the wrapper
    /// stops the server and removes its directory.
    _lifeline: Mutex<std::process::ChildStdin>,
}

/// The user the tests connect as (the cluster's superuser).
const USER: &str = "levy";

static SERVER: OnceLock<Option<Server>> = OnceLock::new();
static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// The process's PostgreSQL server, started on first use; `None` when none can be started
/// (a line says why), which panics under `CI=true`.
pub fn server() -> Option<&'static Server> {
    SERVER
        .get_or_init(|| match Server::start() {
            Ok(s) => Some(s),
            Err(why) => {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "no PostgreSQL server could be started (required under CI=true): {why}"
                );
                println!("skipped: no PostgreSQL server could be started: {why}");
                None
            }
        })
        .as_ref()
}

/// Whether the suites' ledgers should be PostgreSQL databases (`LEVY_TEST_LEDGER=postgres`).
pub fn wanted() -> bool {
    std::env::var("LEVY_TEST_LEDGER").as_deref() == Ok("postgres")
}

/// A fresh ledger for one test: a new database on [`server`] when [`wanted`] (and a
/// server can be started), else `dir/ledger.sqlite`.
pub fn ledger(dir: &Path) -> String {
    ledger_or(&dir.join("ledger.sqlite").to_string_lossy())
}

/// A new database on [`server`] when [`wanted`] (and a server can be started), else
/// `otherwise` (an SQLite path, or `:memory:`).
pub fn ledger_or(otherwise: &str) -> String {
    if wanted() {
        if let Some(server) = server() {
            return server.database();
        }
    }
    otherwise.to_string()
}

/// Where the PostgreSQL server programs are: `$LEVY_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin` (Debian), else `pg_config --bindir`.
fn bin_dir() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("LEVY_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Ok(bin);
    }
    let out = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .map_err(|e| format!("no /usr/lib/postgresql/*/bin and no pg_config ({e})"))?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if dir.join("postgres").is_file() {
        Ok(dir)
    } else {
        Err(format!("no postgres program in {}", dir.display()))
    }
}

/// Whether this process runs as root (PostgreSQL refuses to; it then runs as `postgres`).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A command that runs `program` as the user PostgreSQL runs as.
fn as_server_user(program: &Path, root: bool) -> Command {
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

impl Server {
    fn start() -> Result<Server, String> {
        let bin = bin_dir()?;
        let root = is_root();
        let port = free_port()?;
        let dir = std::env::temp_dir().join(format!("levy-pg-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if root {
            let ok = Command::new("chown")
                .args(["postgres:", &dir.to_string_lossy()])
                .status()
                .map_err(|e| e.to_string())?
                .success();
            if !ok {
                return Err("could not give the data directory to the postgres user".into());
            }
        }
        let data = dir.join("data");
        let out = as_server_user(&bin.join("initdb"), root)
            .args(["-D", &data.to_string_lossy()])
            .args([
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .arg("--data-checksums")
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        // The wrapper starts the server and waits on its stdin; end of input (the test
        // process ended) stops the server (fast shutdown) and removes the directory.
        // Tests do not need the server to survive a power loss: fsync is off, unless
        // LEVY_TEST_PG_FSYNC=on (for measurements beside an SQLite ledger that flushes).
        let durability = if std::env::var("LEVY_TEST_PG_FSYNC").as_deref() == Ok("on") {
            ""
        } else {
            "-c fsync=off -c full_page_writes=off"
        };
        let script = r#"
            "$1/postgres" -D "$2/data" -p "$3" -k "$2" -c listen_addresses=127.0.0.1 \
                -c max_connections=400 -c shared_buffers=64MB $4 >"$2/log" 2>&1 </dev/null &
            pid=$!
            cat >/dev/null
            kill -INT "$pid"
            wait "$pid"
            rm -rf "$2"
        "#;
        let mut child = as_server_user(Path::new("/bin/sh"), root)
            .args(["-c", script, "sh"])
            .arg(&bin)
            .arg(&dir)
            .arg(port.to_string())
            .arg(durability)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("could not start postgres: {e}"))?;
        let lifeline = child.stdin.take().ok_or("no stdin for the server")?;
        let server = Server {
            port,
            bin,
            _lifeline: Mutex::new(lifeline),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if server.psql("postgres", "SELECT 1").is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
                return Err(format!("the server did not accept connections: {log}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs one SQL command with `psql` on `database`.
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, String> {
        let psql = self.bin.join("psql");
        let out = Command::new(&psql)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args(["-d", database, "-v", "ON_ERROR_STOP=1", "-tA", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{}: {e}", psql.display()))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database, as a URL.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        self.url(&name)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }
}
