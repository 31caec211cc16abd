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

/// What was copied: rows per table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// `(table, rows)`, in the order copied.
    pub tables: Vec<(String, u64)>,
    /// Expired calculations left behind (they can no longer become transactions).
    pub expired_calculations: u64,
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
        out
    }
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

/// Reads every table of an SQLite ledger (opened read-only), checking each sealed record;
/// calculations that expired before `now` are left out and counted.
fn export(path: &str, now: i64) -> Result<(Vec<Rows>, u64), StoreError> {
    let conn =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sqlite_err)?;
    let mut out = Vec::new();
    let mut expired = 0u64;
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
            let mut cells = Vec::with_capacity(cols.len() + 1);
            for (i, (_, col)) in cols.iter().enumerate() {
                cells.push(cell(row.get_ref(i).map_err(sqlite_err)?, *col, table)?);
            }
            rows.push(cells);
        }
        if expiring {
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
    out.push(merchants(&conn)?);
    out.push(nexus(&conn)?);
    Ok((out, expired))
}

/// Merchants, with the `status` column PostgreSQL keeps beside the record.
fn merchants(conn: &Connection) -> Result<Rows, StoreError> {
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
        let cells: Vec<Cell> = vec![
            Box::new(row.get::<_, String>(0).map_err(sqlite_err)?),
            Box::new(row.get::<_, i64>(1).map_err(sqlite_err)? != 0),
            Box::new(row.get::<_, String>(2).map_err(sqlite_err)?),
            Box::new(row.get::<_, String>(3).map_err(sqlite_err)?),
            Box::new(record.status),
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
fn nexus(conn: &Connection) -> Result<Rows, StoreError> {
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
        let mut cells: Vec<Cell> = Vec::with_capacity(6);
        for i in 0..4 {
            cells.push(Box::new(row.get::<_, String>(i).map_err(sqlite_err)?));
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
            "the ledger to copy to must be a PostgreSQL database (postgres://…)",
        ));
    }
    if !std::path::Path::new(from).is_file() {
        return Err(StoreError::ledger(format!("{from}: no such ledger file")));
    }
    drop(SqliteStore::open(from)?);
    let (tables, expired) = export(from, crate::ids::now())?;
    let target = PostgresStore::open(to)?;
    let copied = target.import(tables)?;
    Ok(CopyReport {
        tables: copied,
        expired_calculations: expired,
    })
}
