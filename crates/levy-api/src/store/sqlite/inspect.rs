//! `levy info --ledger`: a ledger read without changing it, every record checked against
//! its seal.

use rusqlite::Connection;
use serde::Serialize;

use super::super::pack::unpack;
use super::super::seal::unseal;
use super::super::*;
use super::days::unseal_numbers;
use super::queries::{unseal_month, unseal_nexus};
use super::schema::{
    check_existing_file, check_identity, not_a_ledger, quick_check, SEALED_TABLES,
};
use super::sqlite_err;

/// What `levy info --ledger` reports: a ledger's size, its counts, and whether every
/// stored record still matches its seal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LedgerReport {
    /// The file's path.
    pub path: String,
    /// Size of the database file, in bytes.
    pub file_bytes: u64,
    /// Size of its write-ahead log (`-wal`), in bytes; 0 when absent.
    pub wal_bytes: u64,
    /// Pages on the free list (space a `VACUUM` would return), in bytes.
    pub free_bytes: u64,
    /// Schema version (`PRAGMA user_version`).
    pub schema_version: i64,
    /// `PRAGMA quick_check`: `["ok"]` when sound.
    pub quick_check: Vec<String>,
    /// Rows of each table, by table name.
    pub rows: std::collections::BTreeMap<String, i64>,
    /// Calculations (and platform calculations) past their 24 hours, which a running
    /// service purges within a minute.
    pub expired_calculations: i64,
    /// Stored records whose seal does not match, as `table rowid: why`.
    pub damaged: Vec<String>,
}

impl LedgerReport {
    /// The report as text, one fact per line.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "ledger      {}", self.path);
        let _ = writeln!(
            out,
            "size        {} bytes (+ {} bytes of WAL; {} bytes free)",
            self.file_bytes, self.wal_bytes, self.free_bytes
        );
        let _ = writeln!(out, "schema      {}", self.schema_version);
        let _ = writeln!(out, "structure   {}", self.quick_check.join("; "));
        for (table, n) in &self.rows {
            let _ = writeln!(out, "{table:<24}{n:>10}");
        }
        let _ = writeln!(
            out,
            "expired calculations {} (purged within a minute while served)",
            self.expired_calculations
        );
        if self.damaged.is_empty() {
            let _ = writeln!(out, "records     every seal matches");
        } else {
            let _ = writeln!(out, "records     {} DAMAGED:", self.damaged.len());
            for d in &self.damaged {
                let _ = writeln!(out, "  {d}");
            }
        }
        out
    }

    /// Whether the ledger is sound: its structure passes `quick_check` and every record
    /// matches its seal.
    pub fn is_sound(&self) -> bool {
        self.quick_check == ["ok"] && self.damaged.is_empty()
    }
}

/// Reads a ledger without changing it (the file is opened read-only): its size, counts and
/// structure, and every stored record checked against its seal. A file that is not a levy
/// ledger is an error, as for [`SqliteStore::open`].
pub fn inspect(path: &str) -> Result<LedgerReport, StoreError> {
    if !check_existing_file(path)? {
        return Err(not_a_ledger(path, "no such file"));
    }
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite_err)?;
    check_identity(&conn, path)?;
    let mut report = sizes(&conn, path)?;
    count_rows(&conn, &mut report)?;
    if report.schema_version >= 3 {
        check_records(&conn, &mut report.damaged)?;
        check_totals(&conn, &mut report.damaged)?;
    }
    Ok(report)
}

/// The report's sizes, schema version and structure check, its counts still empty.
fn sizes(conn: &Connection, path: &str) -> Result<LedgerReport, StoreError> {
    let pragma = |name: &str| -> Result<i64, StoreError> {
        conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .map_err(sqlite_err)
    };
    Ok(LedgerReport {
        path: path.to_string(),
        file_bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        wal_bytes: std::fs::metadata(format!("{path}-wal"))
            .map(|m| m.len())
            .unwrap_or(0),
        free_bytes: (pragma("freelist_count")? * pragma("page_size")?) as u64,
        schema_version: pragma("user_version")?,
        quick_check: quick_check(conn)?,
        ..LedgerReport::default()
    })
}

/// Whether the ledger has `table` (a ledger of an older schema may not).
fn exists(conn: &Connection, table: &str) -> Result<bool, StoreError> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n == 1)
    .map_err(sqlite_err)
}

/// The rows of each table, and the calculations expired now.
fn count_rows(conn: &Connection, report: &mut LedgerReport) -> Result<(), StoreError> {
    let totals = [
        "nexus",
        "nexus_months",
        "liability_rows",
        "liability_totals",
        "secrets",
    ];
    for table in SEALED_TABLES.iter().chain(totals.iter()) {
        if !exists(conn, table)? {
            continue;
        }
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(sqlite_err)?;
        report.rows.insert(table.to_string(), n);
    }
    let now = crate::clock::now();
    for table in ["calculations", "platform_calculations"] {
        if !exists(conn, table)? {
            continue;
        }
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE expires_at < ?1"),
                [now],
                |r| r.get(0),
            )
            .map_err(sqlite_err)?;
        report.expired_calculations += n;
    }
    Ok(())
}

/// The sealed records (packed or not) that do not match their seal.
fn check_records(conn: &Connection, damaged: &mut Vec<String>) -> Result<(), StoreError> {
    for table in SEALED_TABLES {
        if !exists(conn, table)? {
            continue;
        }
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, data FROM {table}"))
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    unpack(r.get_ref(1)?).map(|t| t.into_owned()),
                ))
            })
            .map_err(sqlite_err)?;
        for row in rows {
            let (rowid, data) = row.map_err(sqlite_err)?;
            if let Err(e) = data.and_then(|d| unseal(&d).map(|_| ())) {
                damaged.push(format!("{table} {rowid}: {e}"));
            }
        }
    }
    Ok(())
}

/// The nexus totals, monthly sales and daily liability totals that do not match their
/// seal.
fn check_totals(conn: &Connection, damaged: &mut Vec<String>) -> Result<(), StoreError> {
    check_sealed_sales(conn, "nexus", damaged, |s, n| unseal_nexus(s, n).map(drop))?;
    if exists(conn, "nexus_months")? {
        check_sealed_sales(conn, "nexus_months", damaged, |s, n| {
            unseal_month(s, n).map(drop)
        })?;
    }
    if exists(conn, "liability_rows")? {
        check_days(conn, damaged)?;
    }
    Ok(())
}

/// The rows of `table` (`sales` sealed text, `count` its count) that `unseal` refuses.
fn check_sealed_sales(
    conn: &Connection,
    table: &str,
    damaged: &mut Vec<String>,
    unseal: impl Fn(&str, i64) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare(&format!("SELECT rowid, sales, count FROM {table}"))
        .map_err(sqlite_err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .map_err(sqlite_err)?;
    for row in rows {
        let (rowid, sales, count) = row.map_err(sqlite_err)?;
        if let Err(e) = unseal(&sales, count) {
            damaged.push(format!("{table} {rowid}: {e}"));
        }
    }
    Ok(())
}

/// The daily liability totals whose sealed amounts do not match their digest or counts.
fn check_days(conn: &Connection, damaged: &mut Vec<String>) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare("SELECT rowid, amounts, entries FROM liability_rows")
        .map_err(sqlite_err)?;
    let mut q = stmt.query([]).map_err(sqlite_err)?;
    while let Some(r) = q.next().map_err(sqlite_err)? {
        let rowid: i64 = r.get(0).map_err(sqlite_err)?;
        let sealed: String = r.get(1).map_err(sqlite_err)?;
        let n: i64 = r.get(2).map_err(sqlite_err)?;
        if let Err(e) = unseal_numbers::<16>(&sealed, &[n], "daily liability row") {
            damaged.push(format!("liability_rows {rowid}: {e}"));
        }
    }
    let mut stmt = conn
        .prepare("SELECT rowid, sums, transactions, refunds, reversals FROM liability_totals")
        .map_err(sqlite_err)?;
    let mut q = stmt.query([]).map_err(sqlite_err)?;
    while let Some(r) = q.next().map_err(sqlite_err)? {
        let rowid: i64 = r.get(0).map_err(sqlite_err)?;
        let sealed: String = r.get(1).map_err(sqlite_err)?;
        let counts: [i64; 3] = [
            r.get(2).map_err(sqlite_err)?,
            r.get(3).map_err(sqlite_err)?,
            r.get(4).map_err(sqlite_err)?,
        ];
        if let Err(e) = unseal_numbers::<4>(&sealed, &counts, "daily liability total") {
            damaged.push(format!("liability_totals {rowid}: {e}"));
        }
    }
    Ok(())
}
