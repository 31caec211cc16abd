//! `levy ledger copy`: an SQLite ledger into an empty PostgreSQL ledger, in one
//! PostgreSQL transaction, every record checked against its seal on the way.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use tokio_postgres::types::ToSql;

use super::seal::unseal;
use super::*;

/// A column's type, as SQLite stores it and as PostgreSQL takes it.
#[derive(Clone, Copy)]
pub(super) enum Col {
    /// Text.
    Text,
    /// Text or NULL.
    OptText,
    /// A whole number (BIGINT).
    Int,
    /// A whole number or NULL.
    OptInt,
    /// SQLite's 0/1 mode column, PostgreSQL's BOOLEAN.
    Bool,
    /// Bytes (BYTEA).
    Bytes,
    /// A sealed record: checked against its seal, copied as it is.
    Sealed,
}

/// The tables copied, with their columns, in an order that keeps every reference valid.
const TABLES: &[(&str, &[(&str, Col)])] = &[
    (
        "customers",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("reference_customer_id", Col::OptText),
            ("data", Col::Sealed),
            ("deleted_at", Col::OptInt),
        ],
    ),
    (
        "products",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("data", Col::Sealed),
        ],
    ),
    (
        "calculations",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("expires_at", Col::Int),
            ("data", Col::Sealed),
        ],
    ),
    (
        "transactions",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("reference_order_id", Col::Text),
            ("kind", Col::Text),
            ("data", Col::Sealed),
            ("deleted_at", Col::OptInt),
        ],
    ),
    (
        "refunds",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("transaction_id", Col::Text),
            ("seq", Col::Int),
            ("data", Col::Sealed),
        ],
    ),
    (
        "platform_calculations",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("expires_at", Col::Int),
            ("data", Col::Sealed),
        ],
    ),
    (
        "certificates",
        &[
            ("id", Col::Text),
            ("account", Col::Text),
            ("customer_id", Col::OptText),
            ("data", Col::Sealed),
        ],
    ),
    (
        "certificate_documents",
        &[
            ("certificate_id", Col::Text),
            ("content_type", Col::Text),
            ("bytes", Col::Bytes),
        ],
    ),
    (
        "certificate_requests",
        &[
            ("id", Col::Text),
            ("account", Col::Text),
            ("data", Col::Sealed),
        ],
    ),
    ("secrets", &[("name", Col::Text), ("value", Col::Bytes)]),
    (
        "registrations",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("id", Col::Text),
            ("country", Col::Text),
            ("region", Col::Text),
            ("kind", Col::Text),
            ("data", Col::Sealed),
            ("seller", Col::Text),
            ("active_from", Col::Int),
            ("active_until", Col::Int),
        ],
    ),
    // Answers kept under idempotency keys: the unexpired ones, so that a request the SQLite
    // ledger answered is answered the same by PostgreSQL.
    (
        "idempotency_keys",
        &[
            ("account", Col::Text),
            ("live", Col::Bool),
            ("idempotency_key", Col::Text),
            ("expires_at", Col::Int),
            ("bytes", Col::Int),
            ("data", Col::Sealed),
        ],
    ),
];

/// One value on its way to PostgreSQL.
pub(super) type Cell = Box<dyn ToSql + Sync + Send>;

/// The rows of one table, read from SQLite.
pub(super) struct Rows {
    /// The table.
    pub(super) table: &'static str,
    /// The PostgreSQL insert.
    pub(super) insert: String,
    /// The rows.
    pub(super) rows: Vec<Vec<Cell>>,
}

/// A record `levy ledger copy` could not carry into PostgreSQL, left behind and reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Its table (`transactions`).
    pub table: String,
    /// Its id, with a NUL written `\0`.
    pub id: String,
    /// Why it was left behind.
    pub why: String,
}

/// What was copied: rows per table, and the records left behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// `(table, rows)`, in the order copied.
    pub tables: Vec<(String, u64)>,
    /// Expired calculations left behind (they can no longer become transactions).
    pub expired_calculations: u64,
    /// Records PostgreSQL cannot hold (a NUL in an id: the SQLite ledger of an older
    /// release took it), and the records that depend on them (a skipped transaction's
    /// refunds, a skipped certificate's document). The nexus totals are copied as they
    /// were, so they still count the skipped sales.
    pub skipped: Vec<Skipped>,
}

impl CopyReport {
    /// The report as lines of text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (table, n) in &self.tables {
            out.push_str(&format!("{table:<24}{n:>10}\n"));
        }
        out.push_str(&format!(
            "{:<24}{:>10} (not copied)\n",
            "expired calculations", self.expired_calculations
        ));
        if !self.skipped.is_empty() {
            out.push_str(&format!(
                "{:<24}{:>10} (not copied: PostgreSQL cannot hold them; the nexus totals still count them)\n",
                "records left behind",
                self.skipped.len()
            ));
            for s in &self.skipped {
                out.push_str(&format!("  {} {}: {}\n", s.table, s.id, s.why));
            }
        }
        out
    }
}

/// A text written for a report: NUL as `\0`.
fn shown(text: &[u8]) -> String {
    String::from_utf8_lossy(text).replace('\0', "\\0")
}

fn sqlite_err(e: rusqlite::Error) -> StoreError {
    StoreError::ledger(e)
}

fn cell(value: ValueRef<'_>, col: Col, table: &str) -> Result<Cell, StoreError> {
    let wrong = || StoreError::ledger(format!("{table}: a value of an unexpected type"));
    Ok(match (col, value) {
        (Col::Text, ValueRef::Text(t)) => Box::new(String::from_utf8_lossy(t).into_owned()),
        (Col::OptText, ValueRef::Text(t)) => {
            Box::new(Some(String::from_utf8_lossy(t).into_owned()))
        }
        (Col::OptText, ValueRef::Null) => Box::new(None::<String>),
        (Col::Int, ValueRef::Integer(i)) => Box::new(i),
        (Col::OptInt, ValueRef::Integer(i)) => Box::new(Some(i)),
        (Col::OptInt, ValueRef::Null) => Box::new(None::<i64>),
        (Col::Bool, ValueRef::Integer(i)) => Box::new(i != 0),
        (Col::Bytes, ValueRef::Blob(b)) => Box::new(b.to_vec()),
        // Calculations are packed in SQLite (`pack`); PostgreSQL keeps every record as text.
        (Col::Sealed, v @ (ValueRef::Text(_) | ValueRef::Blob(_))) => {
            let text = super::pack::unpack(v)?;
            unseal(&text)?;
            Box::new(text.into_owned())
        }
        _ => return Err(wrong()),
    })
}

/// The column of a row that PostgreSQL's text cannot hold (one with a NUL), if any.
fn unstorable<'a>(
    row: &rusqlite::Row<'_>,
    cols: &[(&'a str, Col)],
) -> Result<Option<&'a str>, StoreError> {
    for (i, (name, col)) in cols.iter().enumerate() {
        if matches!(col, Col::Text | Col::OptText) {
            if let ValueRef::Text(t) = row.get_ref(i).map_err(sqlite_err)? {
                if t.contains(&0) {
                    return Ok(Some(name));
                }
            }
        }
    }
    Ok(None)
}

/// The value of column `name` of a row, as text for a report.
fn text_of(row: &rusqlite::Row<'_>, cols: &[(&str, Col)], name: &str) -> String {
    cols.iter()
        .position(|(n, _)| *n == name)
        .and_then(|i| match row.get_ref(i) {
            Ok(ValueRef::Text(t)) => Some(shown(t)),
            _ => None,
        })
        .unwrap_or_default()
}

/// Which rows of a table depend on a skipped row of another: `(table, column, table it
/// names, that table's column)`.
const DEPENDS: &[(&str, &str, &str, &str)] = &[
    ("refunds", "transaction_id", "transactions", "id"),
    (
        "certificate_documents",
        "certificate_id",
        "certificates",
        "id",
    ),
];

/// Reads every table of an SQLite ledger (opened read-only), checking each sealed record;
/// calculations that expired before `now` are left out and counted; rows PostgreSQL cannot
/// hold, and the rows that depend on them, are left out and reported.
fn export(path: &str, now: i64) -> Result<(Vec<Rows>, u64, Vec<Skipped>), StoreError> {
    let conn =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sqlite_err)?;
    let mut out = Vec::new();
    let mut expired = 0u64;
    let mut skipped: Vec<Skipped> = Vec::new();
    // The ids of skipped rows, by table: rows naming them are skipped too.
    let mut gone: std::collections::HashMap<&str, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    for (table, cols) in TABLES {
        let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
        let expiring = names.contains(&"expires_at");
        let filter = if expiring {
            " WHERE expires_at >= ?1"
        } else {
            ""
        };
        let select = format!(
            "SELECT {} FROM {table}{filter} ORDER BY rowid",
            names.join(", ")
        );
        let mut stmt = conn.prepare(&select).map_err(sqlite_err)?;
        let mut query = if expiring {
            stmt.query([now])
        } else {
            stmt.query([])
        }
        .map_err(sqlite_err)?;
        let mut rows = Vec::new();
        while let Some(row) = query.next().map_err(sqlite_err)? {
            let key = if cols.iter().any(|(n, _)| *n == "id") {
                "id"
            } else {
                cols[0].0
            };
            let id = text_of(row, cols, key);
            if let Some(col) = unstorable(row, cols)? {
                skipped.push(Skipped {
                    table: table.to_string(),
                    id: id.clone(),
                    why: format!(
                        "its {col} holds NUL (U+0000), which PostgreSQL's text cannot hold"
                    ),
                });
                gone.entry(table).or_default().insert(id);
                continue;
            }
            let orphan = DEPENDS.iter().find(|(t, col, parent, _)| {
                *t == *table
                    && gone
                        .get(parent)
                        .is_some_and(|ids| ids.contains(&text_of(row, cols, col)))
            });
            if let Some((_, col, parent, _)) = orphan {
                skipped.push(Skipped {
                    table: table.to_string(),
                    id: id.clone(),
                    why: format!(
                        "its {col} names {} left behind",
                        parent.trim_end_matches('s')
                    ),
                });
                continue;
            }
            let mut cells = Vec::with_capacity(cols.len() + 1);
            for (i, (_, col)) in cols.iter().enumerate() {
                cells.push(cell(row.get_ref(i).map_err(sqlite_err)?, *col, table)?);
            }
            rows.push(cells);
        }
        if expiring && table.ends_with("calculations") {
            let n: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM {table} WHERE expires_at < ?1"),
                    [now],
                    |r| r.get(0),
                )
                .map_err(sqlite_err)?;
            expired += n.max(0) as u64;
        }
        let params: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
        out.push(Rows {
            table,
            insert: format!(
                "INSERT INTO {table} ({}) VALUES ({})",
                names.join(", "),
                params.join(", ")
            ),
            rows,
        });
    }
    out.push(merchants(&conn, &mut skipped)?);
    out.push(nexus(&conn, &mut skipped)?);
    out.push(nexus_months(&conn, &mut skipped)?);
    Ok((out, expired, skipped))
}

/// Whether a text holds NUL; reported as left behind when it does.
fn left_behind(skipped: &mut Vec<Skipped>, table: &str, id: &str, texts: &[&str]) -> bool {
    if texts.iter().any(|t| t.contains('\0')) {
        skipped.push(Skipped {
            table: table.to_string(),
            id: id.replace('\0', "\\0"),
            why: "it holds NUL (U+0000), which PostgreSQL's text cannot hold".to_string(),
        });
        return true;
    }
    false
}

/// Merchants, with the `status` column PostgreSQL keeps beside the record.
fn merchants(conn: &Connection, skipped: &mut Vec<Skipped>) -> Result<Rows, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT account, live, id, reference_merchant_id, data FROM merchants ORDER BY rowid",
        )
        .map_err(sqlite_err)?;
    let mut query = stmt.query([]).map_err(sqlite_err)?;
    let mut rows = Vec::new();
    while let Some(row) = query.next().map_err(sqlite_err)? {
        let data: String = row.get(4).map_err(sqlite_err)?;
        let record: MerchantRecord = serde_json::from_str(unseal(&data)?)
            .map_err(|e| StoreError::ledger(format!("a stored merchant is unreadable: {e}")))?;
        let (account, id, reference): (String, String, String) = (
            row.get(0).map_err(sqlite_err)?,
            row.get(2).map_err(sqlite_err)?,
            row.get(3).map_err(sqlite_err)?,
        );
        if left_behind(skipped, "merchants", &id, &[&account, &id, &reference]) {
            continue;
        }
        let cells: Vec<Cell> = vec![
            Box::new(account),
            Box::new(row.get::<_, i64>(1).map_err(sqlite_err)? != 0),
            Box::new(id),
            Box::new(reference),
            Box::new(record.status.as_str()),
            Box::new(data),
        ];
        rows.push(cells);
    }
    Ok(Rows {
        table: "merchants",
        insert: "INSERT INTO merchants (account, live, id, reference_merchant_id, status, data) VALUES ($1, $2, $3, $4, $5, $6)".into(),
        rows,
    })
}

/// Nexus totals, unsealed (checked) and copied as exact `numeric`.
fn nexus(conn: &Connection, skipped: &mut Vec<Skipped>) -> Result<Rows, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT account, country, region, currency, sales, count FROM nexus ORDER BY rowid",
        )
        .map_err(sqlite_err)?;
    let mut query = stmt.query([]).map_err(sqlite_err)?;
    let mut rows = Vec::new();
    while let Some(row) = query.next().map_err(sqlite_err)? {
        let count: i64 = row.get(5).map_err(sqlite_err)?;
        let sealed: String = row.get(4).map_err(sqlite_err)?;
        let sales = super::sqlite::unseal_nexus(&sealed, count)?;
        let texts: Vec<String> = (0..4)
            .map(|i| row.get::<_, String>(i))
            .collect::<Result<_, _>>()
            .map_err(sqlite_err)?;
        let place = format!("{} {} {} {}", texts[0], texts[1], texts[2], texts[3]);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        if left_behind(skipped, "nexus", &place, &refs) {
            continue;
        }
        let mut cells: Vec<Cell> = Vec::with_capacity(6);
        for t in texts {
            cells.push(Box::new(t));
        }
        cells.push(Box::new(sales.to_string()));
        cells.push(Box::new(count));
        rows.push(cells);
    }
    Ok(Rows {
        table: "nexus",
        insert: "INSERT INTO nexus (account, country, region, currency, sales, count) VALUES ($1, $2, $3, $4, $5::text::numeric, $6)".into(),
        rows,
    })
}

/// Monthly sales, unsealed (checked) and copied as exact `numeric` gross and taxable sales.
fn nexus_months(conn: &Connection, skipped: &mut Vec<Skipped>) -> Result<Rows, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT account, country, region, currency, month, live, sales, count FROM nexus_months ORDER BY rowid",
        )
        .map_err(sqlite_err)?;
    let mut query = stmt.query([]).map_err(sqlite_err)?;
    let mut rows = Vec::new();
    while let Some(row) = query.next().map_err(sqlite_err)? {
        let count: i64 = row.get(7).map_err(sqlite_err)?;
        let sealed: String = row.get(6).map_err(sqlite_err)?;
        let (gross, taxable) = super::sqlite::unseal_month(&sealed, count)?;
        let texts: Vec<String> = (0..5)
            .map(|i| row.get::<_, String>(i))
            .collect::<Result<_, _>>()
            .map_err(sqlite_err)?;
        let place = texts.join(" ");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        if left_behind(skipped, "nexus_months", &place, &refs) {
            continue;
        }
        let live = row.get::<_, i64>(5).map_err(sqlite_err)? != 0;
        let mut cells: Vec<Cell> = Vec::with_capacity(9);
        for t in texts {
            cells.push(Box::new(t));
        }
        cells.push(Box::new(live));
        cells.push(Box::new(gross.to_string()));
        cells.push(Box::new(taxable.to_string()));
        cells.push(Box::new(count));
        rows.push(cells);
    }
    Ok(Rows {
        table: "nexus_months",
        insert: "INSERT INTO nexus_months (account, country, region, currency, month, live, gross, taxable, count) VALUES ($1, $2, $3, $4, $5, $6, $7::text::numeric, $8::text::numeric, $9)".into(),
        rows,
    })
}

/// Copies the SQLite ledger at `from` into the PostgreSQL ledger at `to`, which must be
/// empty (a new database, or a levy ledger with no records). The SQLite file is first
/// opened as `levy serve` opens it (checked, and migrated to the current schema), then
/// read; every sealed record is checked, and a damaged one stops the copy before anything
/// is written. The copy is one PostgreSQL transaction: all of it or nothing.
/// Calculations that have expired are not copied.
pub fn copy_ledger(from: &str, to: &str) -> Result<CopyReport, StoreError> {
    if is_postgres_url(from) {
        return Err(StoreError::ledger(
            "the ledger to copy from must be an SQLite file",
        ));
    }
    if !is_postgres_url(to) {
        return Err(StoreError::ledger(
            "the ledger to copy to must be a PostgreSQL database (postgres://… or host=… dbname=…)",
        ));
    }
    if !std::path::Path::new(from).is_file() {
        return Err(StoreError::ledger(format!("{from}: no such ledger file")));
    }
    drop(SqliteStore::open(from)?);
    let (tables, expired, skipped) = export(from, crate::clock::now())?;
    let target = PostgresStore::open(to)?;
    let copied = target.import(tables)?;
    Ok(CopyReport {
        tables: copied,
        expired_calculations: expired,
        skipped,
    })
}
