//! Where a ledger is, read from the one string `--ledger` (or [`crate::ServiceConfig::ledger`])
//! gives: an SQLite file, an in-memory ledger, or a PostgreSQL database.
//!
//! The rule, in order:
//!
//! 1. `:memory:` is an in-memory SQLite ledger.
//! 2. `postgres://…` and `postgresql://…` are PostgreSQL connection URLs.
//! 3. `key=value` pairs (`host=db port=5432 user=levy dbname=levy`, the form libpq and
//!    tokio-postgres read) are a PostgreSQL connection string. A string whose first word
//!    is `name=` is read this way or refused; it never becomes a file name.
//! 4. A file that exists is an SQLite ledger (checked when opened).
//! 5. A string that starts like a URL or a connection string (`postgres:levy`,
//!    `sqlite:x`: a scheme of two letters or more and a colon) and is no file is refused.
//! 6. Anything else is the path of a new SQLite file, whose directory must exist.
//!
//! So a PostgreSQL password can never end up in a file name. Messages name a location
//! through [`redact`], which hides passwords in both forms.

use std::path::Path;

use super::StoreError;

/// Where a ledger is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// An in-memory SQLite ledger (`:memory:`), gone when the service stops.
    Memory,
    /// An SQLite file: one that exists, or a new one whose directory exists.
    Sqlite(String),
    /// A PostgreSQL connection string (a URL or `key=value` pairs), as given.
    Postgres(String),
}

/// Reads a ledger location by the rule of this module; a string that is neither an SQLite
/// path nor a PostgreSQL connection string is refused with a message that says what to
/// write instead (and never shows a password).
pub fn locate(ledger: &str) -> Result<Location, StoreError> {
    if ledger == ":memory:" {
        return Ok(Location::Memory);
    }
    if ledger.starts_with("postgres://") || ledger.starts_with("postgresql://") {
        return Ok(Location::Postgres(ledger.to_string()));
    }
    if is_key_value(ledger) {
        return Ok(Location::Postgres(ledger.to_string()));
    }
    if ledger.trim().is_empty() {
        return Err(StoreError::ledger(
            "the ledger location is empty: give an SQLite file path or a PostgreSQL connection string",
        ));
    }
    let path = Path::new(ledger);
    if path.exists() {
        if path.is_dir() {
            return Err(StoreError::ledger(format!(
                "{ledger} is a directory, not a ledger file; name a file in it (such as {}/levy-ledger.sqlite)",
                ledger.trim_end_matches('/')
            )));
        }
        return Ok(Location::Sqlite(ledger.to_string()));
    }
    if let Some(scheme) = scheme(ledger) {
        // Not echoed: what follows the scheme may hold a password.
        return Err(StoreError::ledger(format!(
            "the ledger location starts with \"{scheme}:\" but is neither a PostgreSQL connection string nor an SQLite file. Write postgres://user@host/database or host=… dbname=… for PostgreSQL, or ./NAME for a new SQLite file"
        )));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent {
        if !dir.is_dir() {
            return Err(StoreError::ledger(format!(
                "{ledger}: there is no directory {}; create it first, or name a ledger file in a directory that exists",
                dir.display()
            )));
        }
    }
    Ok(Location::Sqlite(ledger.to_string()))
}

/// Whether `s` reads as `key=value` pairs: its first word is a parameter name followed by
/// `=` (spaces allowed around it), as in libpq's connection strings.
pub(crate) fn is_key_value(s: &str) -> bool {
    let s = s.trim_start();
    let name_len = s
        .bytes()
        .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
        .count();
    name_len > 0 && s[name_len..].trim_start().starts_with('=')
}

/// The URL scheme `s` starts with (`postgres` of `postgres:levy`), when it starts with one
/// of two characters or more: one letter and a colon is a Windows drive.
fn scheme(s: &str) -> Option<&str> {
    let (head, _) = s.split_once(':')?;
    let mut chars = head.chars();
    let first = chars.next()?;
    (head.len() >= 2
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(head)
}

/// A ledger location fit for messages and logs: the password of a URL
/// (`postgres://user:***@host/db`, and a `password=` query parameter) or of `key=value`
/// pairs (`password=***`) hidden.
pub fn redact(ledger: &str) -> String {
    if is_key_value(ledger) {
        return redact_pairs(ledger);
    }
    let mut out = match (ledger.find("://"), ledger.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &ledger[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &ledger[..scheme + 3], &ledger[at..]),
                None => ledger.to_string(),
            }
        }
        _ => ledger.to_string(),
    };
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let query: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_string(),
            })
            .collect();
        out = format!("{head}{}", query.join("&"));
    }
    out
}

/// `key=value` pairs with the value of `password` replaced by `***`.
fn redact_pairs(s: &str) -> String {
    match parse_pairs(s) {
        Ok(pairs) => pairs
            .iter()
            .map(|(k, v)| {
                if k == "password" {
                    format!("{k}=***")
                } else {
                    format!("{k}={}", quote(v))
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        // Unreadable: nothing of it is shown but that it was pairs.
        Err(_) => "(a connection string that cannot be read)".to_string(),
    }
}

/// The `key=value` pairs of a libpq-style connection string, in order. A value may be
/// quoted (`'a b'`); a backslash escapes the next character, in quotes or not.
pub(crate) fn parse_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    loop {
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        if it.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = it.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        if it.next() != Some('=') {
            return Err(format!("{key:?} is not followed by ="));
        }
        while it.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if it.next_if_eq(&'\'').is_some() {
            loop {
                match it.next() {
                    None => return Err(format!("the quoted value of {key} is not closed")),
                    Some('\'') => break,
                    Some('\\') => match it.next() {
                        Some(c) => value.push(c),
                        None => return Err(format!("the value of {key} ends in a backslash")),
                    },
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = it.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    match it.next() {
                        Some(c) => value.push(c),
                        None => return Err(format!("the value of {key} ends in a backslash")),
                    }
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// A value quoted for a connection string: `'…'` with `\` and `'` escaped.
pub(crate) fn quote(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('\'');
    for c in v.chars() {
        if c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_read_by_the_rule() {
        let dir = std::env::temp_dir().join(format!("levy-locate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let existing = dir.join("ledger.sqlite");
        std::fs::write(&existing, b"").unwrap();
        let existing = existing.to_string_lossy().into_owned();
        assert_eq!(locate(":memory:").unwrap(), Location::Memory);
        for url in [
            "postgres://levy@db/levy",
            "postgresql://levy:pw@db:5432/levy",
        ] {
            assert_eq!(locate(url).unwrap(), Location::Postgres(url.into()));
        }
        for pairs in [
            "host=127.0.0.1 port=5432 user=levy password=secret dbname=levy",
            "  dbname = levy",
            "host=/var/run/postgresql dbname='a b'",
        ] {
            assert_eq!(locate(pairs).unwrap(), Location::Postgres(pairs.into()));
        }
        assert_eq!(
            locate(&existing).unwrap(),
            Location::Sqlite(existing.clone())
        );
        // A new file in a directory that exists, relative or not.
        let new = dir.join("new.sqlite").to_string_lossy().into_owned();
        assert_eq!(locate(&new).unwrap(), Location::Sqlite(new.clone()));
        assert_eq!(
            locate("till.sqlite").unwrap(),
            Location::Sqlite("till.sqlite".into())
        );
        // What is neither is refused, never made a file.
        for bad in [
            "postgres:levy",
            "postgresql:host=db",
            "sqlite:ledger",
            "",
            "/no/such/dir/ledger.sqlite",
        ] {
            let e = locate(bad).unwrap_err().to_string();
            assert!(!e.is_empty(), "{bad}");
        }
        let dir_text = dir.to_string_lossy().into_owned();
        assert!(locate(&dir_text)
            .unwrap_err()
            .to_string()
            .contains("directory"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn passwords_are_redacted_in_both_forms() {
        assert_eq!(
            redact("postgres://levy:s3cret@db:5432/levy"),
            "postgres://levy:***@db:5432/levy"
        );
        assert_eq!(
            redact("postgres://levy@db/levy?password=s3cret&sslmode=require"),
            "postgres://levy@db/levy?password=***&sslmode=require"
        );
        let r = redact("host=db user=levy password='s3 cret' dbname=levy");
        assert!(!r.contains("s3"), "{r}");
        assert!(
            r.contains("password=***") && r.contains("dbname='levy'"),
            "{r}"
        );
        let r = redact("host=db password='unclosed");
        assert!(!r.contains("unclosed"), "{r}");
        // An error for a refused location shows no password either.
        let e = locate("postgres:levy:s3cret@db").unwrap_err().to_string();
        assert!(e.contains("\"postgres:\"") && !e.contains("s3cret"), "{e}");
    }

    #[test]
    fn pairs_read_as_libpq_reads_them() {
        assert_eq!(
            parse_pairs(r"host = db  dbname='a \'b\' c' password=x\ y").unwrap(),
            [
                ("host".to_string(), "db".to_string()),
                ("dbname".to_string(), "a 'b' c".to_string()),
                ("password".to_string(), "x y".to_string()),
            ]
        );
        assert!(parse_pairs("host").is_err());
        assert!(parse_pairs("host='x").is_err());
        assert_eq!(quote(r"a'b\c"), r"'a\'b\\c'");
        let round = parse_pairs(&format!("k={}", quote(r"a'b\c d"))).unwrap();
        assert_eq!(round[0].1, r"a'b\c d");
    }
}
