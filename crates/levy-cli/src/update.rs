//! `levy update`, `levy build --sign` and `levy signing-key`: a safe way to take a new
//! table.
//!
//! A signed table is two files: the table (`us.levy`) and its signature (`us.levy.sig`),
//! the Ed25519 signature, as 128 hex digits and a newline, of
//! [`SIGNATURE_CONTEXT`] followed by the 32-byte BLAKE3 hash of the table file's bytes.
//! `levy update` fetches both from a folder or an `http://` URL into a temporary file beside
//! the table it replaces, checks the length it was promised, the signature against the
//! operator's public key, then opens and verifies the table (format, content hash), prints
//! what it changes (`levy diff`'s lines), and only then renames it over the old file. Any
//! failure removes the temporary file and leaves the old table as it was: a server or a
//! till keeps serving it. `levy serve` takes the new table on SIGHUP; a C program opens a
//! new engine on it (`levy_engine_open`) and frees the old one when its calls are done.
//!
//! HTTPS is not fetched here (levy carries no TLS client): fetch over HTTPS with the
//! system's tools into a folder and update from it. The signature, not the transport, is
//! what makes the table safe to take.

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// What is signed, before the table's hash: names the scheme, so that a signature made for
/// something else never passes for a table's.
pub const SIGNATURE_CONTEXT: &[u8] = b"levy table signature v1\n";

/// The largest table `levy update` takes (a full US table is some hundreds of MB).
const MAX_TABLE: u64 = 8 << 30;

/// The largest signature file or response head read.
const MAX_SMALL: u64 = 64 << 10;

/// `levy update --from DIR|URL --table FILE --public-key KEY`.
#[derive(Args, Clone, Debug)]
pub struct UpdateArgs {
    /// Where the new table is: a folder, or an `http://` URL of a folder, holding NAME and
    /// NAME.sig.
    #[arg(long, value_name = "DIR|URL")]
    pub from: String,
    /// The table to replace (its file name is NAME unless --name says otherwise).
    #[arg(long, value_name = "FILE")]
    pub table: PathBuf,
    /// The publisher's Ed25519 public key: 64 hex digits, or @FILE holding them (what
    /// `levy signing-key` printed).
    #[arg(long = "public-key", value_name = "HEX|@FILE")]
    pub public_key: String,
    /// The file name to fetch, when it is not the table's.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// `levy signing-key --out FILE`.
#[derive(Args, Clone, Debug)]
pub struct SigningKeyArgs {
    /// Where to write the new secret key (64 hex digits; created, never overwritten, mode
    /// 0600). The public key is printed.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Why an update (or a signature) failed; the old table is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// A file or the network failed.
    #[error("{what}: {message}")]
    Io {
        /// What was being read or written.
        what: String,
        /// The operating system's or the server's message.
        message: String,
    },
    /// A key or signature is not what it must be.
    #[error("{0}")]
    Key(String),
    /// The signature does not verify under the public key.
    #[error(
        "the signature of {0} does not verify with the public key given: the table was not taken"
    )]
    BadSignature(String),
    /// The download ended early.
    #[error(
        "{what}: the download was interrupted after {got} of {want} bytes: the table was not taken"
    )]
    Interrupted {
        /// What was fetched.
        what: String,
        /// Bytes received.
        got: u64,
        /// Bytes promised.
        want: u64,
    },
    /// The fetched table does not open (damaged, another format).
    #[error("the fetched table does not open: {0}; the table was not taken")]
    Table(#[from] levy_core::TableError),
}

fn io(what: impl std::fmt::Display) -> impl Fn(std::io::Error) -> UpdateError {
    let what = what.to_string();
    move |e| UpdateError::Io {
        what: what.clone(),
        message: e.to_string(),
    }
}

use levy_build::update::hex;

fn unhex<const N: usize>(text: &str, what: &str) -> Result<[u8; N], UpdateError> {
    levy_build::update::hex_bytes::<N>(text, what).map_err(UpdateError::Key)
}

/// Reads at most [`MAX_SMALL`] bytes of a small text file.
fn read_small(path: &Path) -> Result<String, UpdateError> {
    let mut s = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SMALL).read_to_string(&mut s))
        .map_err(io(path.display()))?;
    Ok(s)
}

/// The message signed for the table file at `path`: [`SIGNATURE_CONTEXT`] and its BLAKE3
/// hash, read in a stream.
fn message(path: &Path) -> Result<Vec<u8>, UpdateError> {
    let mut hasher = blake3::Hasher::new();
    let f = std::fs::File::open(path).map_err(io(path.display()))?;
    std::io::copy(&mut BufReader::with_capacity(1 << 16, f), &mut hasher)
        .map_err(io(path.display()))?;
    let mut m = SIGNATURE_CONTEXT.to_vec();
    m.extend_from_slice(hasher.finalize().as_bytes());
    Ok(m)
}

fn signing_key(path: &Path) -> Result<SigningKey, UpdateError> {
    let seed = unhex::<32>(&read_small(path)?, "the secret key file")?;
    Ok(SigningKey::from_bytes(&seed))
}

/// The public key of `--public-key`: hex, or `@FILE` holding it.
fn public_key(arg: &str) -> Result<VerifyingKey, UpdateError> {
    let text = match arg.strip_prefix('@') {
        Some(file) => read_small(Path::new(file))?,
        None => arg.to_string(),
    };
    let bytes = unhex::<32>(&text, "the public key")?;
    VerifyingKey::from_bytes(&bytes)
        .map_err(|_| UpdateError::Key("the public key is not an Ed25519 key".into()))
}

/// The signature file of a table: `TABLE.sig` beside it.
pub fn signature_path(table: &Path) -> PathBuf {
    let mut s = table.as_os_str().to_os_string();
    s.push(".sig");
    PathBuf::from(s)
}

/// Signs the table at `table` with the secret key at `key`, writing `TABLE.sig`; returns
/// its path.
pub fn sign(table: &Path, key: &Path) -> Result<PathBuf, UpdateError> {
    let key = signing_key(key)?;
    let sig = key.sign(&message(table)?);
    let path = signature_path(table);
    crate::build_cmd::write_atomic(&path, format!("{}\n", hex(&sig.to_bytes())).as_bytes())
        .map_err(|e| UpdateError::Io {
            what: path.display().to_string(),
            message: e.to_string(),
        })?;
    Ok(path)
}

/// `levy signing-key`: a new secret key at `out`; returns the public key's hex.
pub fn new_signing_key(args: &SigningKeyArgs) -> Result<String, UpdateError> {
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .map_err(io("/dev/urandom"))?;
    let key = SigningKey::from_bytes(&seed);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&args.out).map_err(io(args.out.display()))?;
    f.write_all(format!("{}\n", hex(&seed)).as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(io(args.out.display()))?;
    Ok(hex(key.verifying_key().as_bytes()))
}

/// Where the files come from.
enum Origin<'a> {
    Dir(&'a Path),
    Http {
        host: String,
        port: u16,
        path: String,
    },
}

fn origin(from: &str) -> Result<Origin<'_>, UpdateError> {
    if let Some(rest) = from.strip_prefix("http://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse()
                    .map_err(|_| UpdateError::Key(format!("{from}: the port is not a number")))?,
            ),
            None => (authority.to_string(), 80),
        };
        let path = format!("/{}", path.trim_end_matches('/'));
        return Ok(Origin::Http { host, port, path });
    }
    if from.contains("://") {
        return Err(UpdateError::Key(format!(
            "{from}: levy update fetches from a folder or an http:// URL; fetch over HTTPS \
             with your system's tools into a folder and update from it (the signature is \
             checked either way)"
        )));
    }
    Ok(Origin::Dir(Path::new(from)))
}

/// Fetches `name` from `origin` into `out` (at most `limit` bytes); returns its length.
fn fetch(
    origin: &Origin<'_>,
    name: &str,
    out: &mut std::fs::File,
    limit: u64,
) -> Result<u64, UpdateError> {
    match origin {
        Origin::Dir(dir) => {
            let path = dir.join(name);
            let meta = std::fs::metadata(&path).map_err(io(path.display()))?;
            if !meta.is_file() {
                return Err(UpdateError::Io {
                    what: path.display().to_string(),
                    message: "not a regular file".into(),
                });
            }
            let f = std::fs::File::open(&path).map_err(io(path.display()))?;
            let want = meta.len().min(limit);
            let got = std::io::copy(&mut f.take(want), out).map_err(io(path.display()))?;
            if got < want {
                return Err(UpdateError::Interrupted {
                    what: path.display().to_string(),
                    got,
                    want,
                });
            }
            Ok(got)
        }
        Origin::Http { host, port, path } => {
            http_get(host, *port, &format!("{path}/{name}"), out, limit)
        }
    }
}

/// A plain HTTP/1.1 GET of `path` into `out`: status 200 with a `Content-Length`, and
/// every byte of it.
fn http_get(
    host: &str,
    port: u16,
    path: &str,
    out: &mut std::fs::File,
    limit: u64,
) -> Result<u64, UpdateError> {
    use std::net::ToSocketAddrs;
    let what = format!("http://{host}:{port}{path}");
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(io(&what))?
        .next()
        .ok_or_else(|| UpdateError::Io {
            what: what.clone(),
            message: "the host has no address".into(),
        })?;
    let mut stream =
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(10)).map_err(io(&what))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(io(&what))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: levy-update\r\nConnection: close\r\n\r\n"
    )
    .map_err(io(&what))?;
    let mut reader = BufReader::new(stream);
    let head =
        levy_build::update::response_head(&mut reader).map_err(|message| UpdateError::Io {
            what: what.clone(),
            message,
        })?;
    if head.transfer_encoding {
        return Err(UpdateError::Io {
            what,
            message: "a chunked response is not read: serve the file with its Content-Length"
                .into(),
        });
    }
    if head.status != Some(200) {
        return Err(UpdateError::Io {
            what,
            message: format!("the server answered {:?}", head.status_line),
        });
    }
    let Some(want) = head.content_length else {
        return Err(UpdateError::Io {
            what,
            message: "the response has no Content-Length, so a cut download could not be told from a whole one".into(),
        });
    };
    if want > limit {
        return Err(UpdateError::Io {
            what,
            message: format!("{want} bytes is more than the {limit} taken"),
        });
    }
    let got = std::io::copy(&mut reader.take(want), out).map_err(io(&what))?;
    if got < want {
        return Err(UpdateError::Interrupted { what, got, want });
    }
    Ok(got)
}

/// A temporary file beside `target`, removed when dropped unless kept.
struct Temp {
    path: PathBuf,
    keep: bool,
}

impl Temp {
    fn beside(target: &Path, tag: &str) -> Temp {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "table".into());
        Temp {
            path: dir.join(format!(".{name}.{tag}{}", std::process::id())),
            keep: false,
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What an update did.
#[derive(Debug)]
pub struct Updated {
    /// The old table's content hash, when there was one that opened.
    pub old_hash: Option<String>,
    /// The new table's.
    pub new_hash: String,
    /// `levy diff`'s text, old to new (empty without an old table).
    pub diff: String,
}

/// `levy update`: fetch, check, verify, then rename over the table; nothing is changed on
/// any failure.
pub fn update(args: &UpdateArgs) -> Result<Updated, UpdateError> {
    let key = public_key(&args.public_key)?;
    let name = match &args.name {
        Some(n) => n.clone(),
        None => args
            .table
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| UpdateError::Key("--table names no file".into()))?,
    };
    if name.contains('/') || name.starts_with('.') {
        return Err(UpdateError::Key(format!(
            "{name:?}: the name to fetch is a plain file name"
        )));
    }
    let origin = origin(&args.from)?;
    // The signature first: small, and nothing is fetched at length without one.
    let sig_tmp = Temp::beside(&args.table, "sig");
    let mut f = std::fs::File::create(&sig_tmp.path).map_err(io(sig_tmp.path.display()))?;
    fetch(&origin, &format!("{name}.sig"), &mut f, MAX_SMALL)?;
    drop(f);
    let sig = Signature::from_bytes(&unhex::<64>(
        &read_small(&sig_tmp.path)?,
        &format!("{name}.sig"),
    )?);
    let mut tmp = Temp::beside(&args.table, "download");
    let mut f = std::fs::File::create(&tmp.path).map_err(io(tmp.path.display()))?;
    fetch(&origin, &name, &mut f, MAX_TABLE)?;
    f.sync_all().map_err(io(tmp.path.display()))?;
    drop(f);
    key.verify_strict(&message(&tmp.path)?, &sig)
        .map_err(|_| UpdateError::BadSignature(name.clone()))?;
    let new = levy_core::AnyTable::open_file(&tmp.path)?;
    let old = levy_core::AnyTable::open_file(&args.table).ok();
    let diff = old
        .as_ref()
        .map(|o| levy_build::diff(o, &new).to_text())
        .unwrap_or_default();
    let updated = Updated {
        old_hash: old.as_ref().map(|o| o.header().hash_hex()),
        new_hash: new.header().hash_hex(),
        diff,
    };
    drop((old, new));
    std::fs::rename(&tmp.path, &args.table).map_err(io(args.table.display()))?;
    tmp.keep = true;
    if let Some(dir) = args.table.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(updated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        match origin("http://127.0.0.1:8080/tables/").unwrap() {
            Origin::Http { host, port, path } => {
                assert_eq!(
                    (host.as_str(), port, path.as_str()),
                    ("127.0.0.1", 8080, "/tables")
                );
            }
            Origin::Dir(_) => panic!("a URL"),
        }
        assert!(matches!(
            origin("https://example.com/t"),
            Err(UpdateError::Key(_))
        ));
        assert!(matches!(origin("/srv/tables"), Ok(Origin::Dir(_))));
    }
}
