//! The SQLite ledger's file: its schema and migrations, and what makes a file a levy
//! ledger (the application id, the tables, `PRAGMA quick_check`) before anything is written.

use rusqlite::{params, Connection};
use rust_decimal::Decimal;

use super::super::seal::{from_json, seal};
use super::super::tables;
use super::super::*;
use super::queries::{seal_nexus, Sql};
use super::sqlite_err;

/// The current schema version (`PRAGMA user_version`).
pub(super) const SCHEMA_VERSION: i64 = 11;

/// SQLite's first transactions, whose layout differs from the shared definitions: no
/// `kind`, the order id unique alone. (Its refund index, not unique, and its merchants,
/// without `status`, are SQLite's own too.)
const TRANSACTIONS_1: &str = "CREATE TABLE transactions (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    reference_order_id TEXT NOT NULL, data TEXT NOT NULL, deleted_at INTEGER,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id);
";

/// Schema 2's change of transactions (a `kind`, the order id unique per kind) and its
/// merchants.
const TRANSACTIONS_2_MERCHANTS: &str =
    "ALTER TABLE transactions ADD COLUMN kind TEXT NOT NULL DEFAULT 'order';
DROP INDEX transactions_order;
CREATE UNIQUE INDEX transactions_order ON transactions (account, live, reference_order_id, kind);
CREATE TABLE merchants (
    account TEXT NOT NULL, live INTEGER NOT NULL, id TEXT NOT NULL,
    reference_merchant_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX merchants_reference ON merchants (account, live, reference_merchant_id);
";

/// Migrations, in order; entry `i` brings the schema from version `i` to `i + 1`. The
/// shared definitions ([`tables`]) in SQLite's words, and SQLite's own.
pub(super) fn migrations() -> [String; SCHEMA_VERSION as usize] {
    let t = |parts: &[&str]| format!("\n{}", tables::render(&parts.concat(), &tables::SQLITE));
    [
        t(&[
            tables::CUSTOMERS,
            tables::PRODUCTS,
            &tables::quotes("calculations"),
            TRANSACTIONS_1,
            tables::REFUNDS,
            "CREATE INDEX refunds_transaction ON refunds (account, live, transaction_id, seq);\n",
            tables::NEXUS,
        ]),
        t(&[
            TRANSACTIONS_2_MERCHANTS,
            &tables::quotes("platform_calculations"),
            tables::CERTIFICATES,
        ]),
        // Schema 3 changes no table: `seal_existing_rows` seals every stored record.
        String::new(),
        // Schema 4: the outbox of records not yet sent to a central ledger (`levy sync`);
        // `fill_outbox` puts every record already stored in it.
        t(&[tables::OUTBOX]),
        // Schema 5: calculations are purged by rowid (`purge_calculations`), so the index on
        // their expiry, which every calculation paid an insert for, goes.
        "DROP INDEX IF EXISTS calculations_expiry;".into(),
        // Schema 6: each transaction's running refund total (`crate::ledger::Refunded`,
        // sealed), so that a refund reads one record instead of every earlier refund. NULL
        // until the transaction's first refund, reversal or deletion computes it. The column
        // is added by `add_refunded_column` (when it is not there yet).
        String::new(),
        // Schema 7: registrations (`IF NOT EXISTS`: a file whose version was set back by
        // hand keeps its registrations).
        t(&[tables::REGISTRATIONS]),
        // Schema 8: each place's sales per calendar month, in both modes, for economic-nexus
        // monitoring (`store::months`); `sales` is sealed like the nexus totals:
        // `<gross> <taxable> <count> <digest>`. `fill_months` computes them from the
        // transactions and refunds already stored (a table left by a file whose version was set
        // back by hand is computed again).
        r#"
DROP TABLE IF EXISTS nexus_months;
CREATE TABLE nexus_months (
    account TEXT NOT NULL, live INTEGER NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL,
    currency TEXT NOT NULL, month TEXT NOT NULL, sales TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (account, live, country, region, currency, month)
);
"#
        .into(),
        // Schema 9: the daily liability totals (`store::days`), their amounts sealed;
        // `fill_days` computes them from the records already stored.
        t(&[tables::LIABILITY]),
        // Schema 10: answers kept under idempotency keys (`store::kept`).
        t(&[tables::IDEMPOTENCY_KEYS]),
        // Schema 11: a registration's seller and the span of its activity beside the sealed
        // record, and the index of a calculation's reads (`tables::REGISTRATIONS_ACTIVE`),
        // made by `index_registrations`.
        String::new(),
    ]
}

/// Schema 8: the monthly sales of every transaction already stored, with its refunds,
/// reversals and deletion, as the recipes would have written them
/// ([`super::super::months::months_of`]).
fn fill_months(conn: &Connection) -> Result<(), StoreError> {
    let s = Sql(conn);
    each_transaction(conn, |scope, tx, refunds| {
        for change in super::super::months::months_of(tx, refunds) {
            s.add_nexus_month(scope, tx, &change)?;
        }
        Ok(())
    })
}

/// Schema 9: the daily liability totals of every transaction already stored, with its
/// refunds and reversals (none of a deleted one), summed in memory and written once
/// ([`super::super::days::DaySums`]).
fn fill_days(conn: &Connection) -> Result<(), StoreError> {
    let mut sums = super::super::days::DaySums::default();
    each_transaction(conn, |scope, tx, refunds| {
        sums.add(&scope.account, scope.live, tx, refunds);
        Ok(())
    })?;
    super::days::write_sums(conn, &sums)
}

/// Runs `f` on every transaction stored, in the order written, with its scope and refunds:
/// what the migrations that compute totals from the records read.
fn each_transaction(
    conn: &Connection,
    mut f: impl FnMut(&Scope, &TransactionRecord, &[RefundRecord]) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare("SELECT account, live, id FROM transactions ORDER BY rowid")
        .map_err(sqlite_err)?;
    let mut rows = stmt.query([]).map_err(sqlite_err)?;
    let s = Sql(conn);
    while let Some(r) = rows.next().map_err(sqlite_err)? {
        let account: String = r.get(0).map_err(sqlite_err)?;
        let scope = Scope {
            account: account.into(),
            live: r.get(1).map_err(sqlite_err)?,
        };
        let id: String = r.get(2).map_err(sqlite_err)?;
        if let Some(tx) = s.transaction(&scope, &id)? {
            f(&scope, &tx, &s.refunds(&scope, &id, (-1, i64::MAX))?)?;
        }
    }
    Ok(())
}

/// Schema 6: the `refunded` column of transactions, unless the file has it already.
fn add_refunded_column(conn: &Connection) -> Result<(), StoreError> {
    let has: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM pragma_table_info('transactions') WHERE name = 'refunded'",
            [],
            |r| r.get(0),
        )
        .map_err(sqlite_err)?;
    if !has {
        conn.execute_batch("ALTER TABLE transactions ADD COLUMN refunded TEXT;")
            .map_err(sqlite_err)?;
    }
    Ok(())
}

/// Schema 11: the columns of a calculation's reads of registrations (where missing: a file
/// whose version was set back by hand has them), filled from each sealed record, and
/// their index.
fn index_registrations(conn: &Connection) -> Result<(), StoreError> {
    for (name, definition) in tables::REGISTRATION_COLUMNS {
        let has: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM pragma_table_info('registrations') WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .map_err(sqlite_err)?;
        if !has {
            let column = tables::render(definition, &tables::SQLITE);
            conn.execute_batch(&format!(
                "ALTER TABLE registrations ADD COLUMN {name} {column};"
            ))
            .map_err(sqlite_err)?;
        }
    }
    let rows: Vec<(i64, String)> = {
        let mut stmt = conn
            .prepare("SELECT rowid, data FROM registrations")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)?
    };
    let mut update = conn
        .prepare("UPDATE registrations SET seller = ?2, active_from = ?3, active_until = ?4 WHERE rowid = ?1")
        .map_err(sqlite_err)?;
    for (rowid, data) in rows {
        let r: RegistrationRecord = from_json(&data)?;
        update
            .execute(params![
                rowid,
                r.seller_key(),
                r.active_from,
                r.active_until()
            ])
            .map_err(sqlite_err)?;
    }
    conn.execute_batch(tables::REGISTRATIONS_ACTIVE)
        .map_err(sqlite_err)
}

/// Tables whose `data` column holds sealed records.
pub(super) const SEALED_TABLES: [&str; 11] = [
    "customers",
    "products",
    "calculations",
    "transactions",
    "refunds",
    "merchants",
    "platform_calculations",
    "certificates",
    "certificate_requests",
    "registrations",
    "idempotency_keys",
];

/// Schema 3: every record sealed with its digest (see [`seal`]); nexus totals likewise.
fn seal_existing_rows(conn: &Connection) -> Result<(), StoreError> {
    // The tables of schema 3; later ones were sealed from their start.
    for table in &SEALED_TABLES[..9] {
        let rows: Vec<(i64, String)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT rowid, data FROM {table}"))
                .map_err(sqlite_err)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sqlite_err)?;
            rows.collect::<Result<_, _>>().map_err(sqlite_err)?
        };
        let mut update = conn
            .prepare(&format!("UPDATE {table} SET data = ?2 WHERE rowid = ?1"))
            .map_err(sqlite_err)?;
        for (rowid, data) in rows {
            update
                .execute(params![rowid, seal(&data)?])
                .map_err(sqlite_err)?;
        }
    }
    let rows: Vec<(i64, String, i64)> = {
        let mut stmt = conn
            .prepare("SELECT rowid, sales, count FROM nexus")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)?
    };
    for (rowid, sales, count) in rows {
        let sales: Decimal = sales.parse().map_err(StoreError::ledger)?;
        conn.execute(
            "UPDATE nexus SET sales = ?2 WHERE rowid = ?1",
            params![rowid, seal_nexus(sales, count)],
        )
        .map_err(sqlite_err)?;
    }
    Ok(())
}

/// Schema 4: every transaction and refund already stored goes into the outbox, in the
/// order they were written, with their deletions and reversals after them.
fn fill_outbox(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'transaction', id FROM transactions ORDER BY rowid;
         INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'refund', id FROM refunds ORDER BY rowid;
         INSERT INTO outbox (account, live, kind, record_id)
             SELECT account, live, 'deletion', id FROM transactions
             WHERE deleted_at IS NOT NULL ORDER BY rowid;",
    )
    .map_err(sqlite_err)?;
    // A reversal is only in the sealed record.
    let refunds: Vec<(String, bool, String, String)> = {
        let mut stmt = conn
            .prepare("SELECT account, live, id, data FROM refunds ORDER BY rowid")
            .map_err(sqlite_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(sqlite_err)?;
        rows.collect::<Result<_, _>>().map_err(sqlite_err)?
    };
    for (account, live, id, data) in refunds {
        let refund: RefundRecord = from_json(&data)?;
        if refund.reversed_at.is_some() {
            let scope = Scope {
                account: account.into(),
                live,
            };
            Sql(conn).outbox_add(&scope, "reversal", &id)?;
        }
    }
    Ok(())
}

/// How long a connection waits for a lock another connection holds before it gives up
/// with `SQLITE_BUSY`.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The step of that wait.
const BUSY_STEP: std::time::Duration = std::time::Duration::from_micros(100);

/// Waits one [`BUSY_STEP`] for a lock, up to [`BUSY_WAIT`] in all. SQLite's own busy
/// timeout sleeps 1, 2, 5, 10 ms and longer between tries: a writer held off for a
/// moment by the checkpointer would sleep for milliseconds after the lock was free.
fn busy(tries: i32) -> bool {
    let most = (BUSY_WAIT.as_micros() / BUSY_STEP.as_micros()) as i32;
    if tries >= most {
        return false;
    }
    std::thread::sleep(BUSY_STEP);
    true
}

pub(super) fn open_connection(path: &str) -> Result<Connection, StoreError> {
    let conn = Connection::open(path).map_err(sqlite_err)?;
    conn.busy_handler(Some(busy)).map_err(sqlite_err)?;
    Ok(conn)
}

/// Brings the schema up to date, one migration a transaction.
pub(super) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlite_err)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, sql) in migrations().iter().enumerate().skip(version as usize) {
        let tx = conn.unchecked_transaction().map_err(sqlite_err)?;
        tx.execute_batch(sql).map_err(sqlite_err)?;
        if i + 1 == 3 {
            seal_existing_rows(&tx)?;
        }
        if i + 1 == 4 {
            fill_outbox(&tx)?;
        }
        if i + 1 == 6 {
            add_refunded_column(&tx)?;
        }
        if i + 1 == 8 {
            fill_months(&tx)?;
        }
        if i + 1 == 9 {
            fill_days(&tx)?;
        }
        if i + 1 == 11 {
            index_registrations(&tx)?;
        }
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
            .map_err(sqlite_err)?;
        tx.commit().map_err(sqlite_err)?;
    }
    Ok(())
}

/// `PRAGMA application_id` of a levy ledger: "LEVY" in ASCII. Written when a ledger is
/// created (or first opened by a release that knows it); a file with another id is not
/// opened.
pub(super) const LEDGER_APPLICATION_ID: i32 = 0x4C45_5659;

pub(super) fn not_a_ledger(path: &str, why: &str) -> StoreError {
    StoreError::NotALedger {
        path: path.to_string(),
        why: why.to_string(),
    }
}

/// Before anything is written: a file that exists must already be a levy ledger. A missing
/// file is created; an empty file is refused (it is what a failed copy, a truncation or a
/// full disk leaves, and opening it as a new ledger would make every stored transaction
/// read as 404).
pub(super) fn check_existing_file(path: &str) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::ledger(format!("{path}: {e}"))),
        Ok(m) if m.is_dir() => Err(not_a_ledger(path, "it is a directory")),
        Ok(m) if m.len() == 0 => Err(not_a_ledger(path, "the file is empty (0 bytes)")),
        Ok(_) => Ok(true),
    }
}

/// `PRAGMA quick_check`, its first five findings: `["ok"]` when the structure is sound.
pub(super) fn quick_check(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare("PRAGMA quick_check(5)").map_err(sqlite_err)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sqlite_err)?;
    rows.collect::<Result<_, _>>().map_err(sqlite_err)
}

/// For a file that existed: it is an SQLite database, it is a levy ledger (the application
/// id, or, for ledgers written before the id, a schema version and levy's tables), and
/// `PRAGMA quick_check` finds its structure sound.
pub(super) fn check_ledger(conn: &Connection, path: &str) -> Result<(), StoreError> {
    check_identity(conn, path)?;
    let problems = quick_check(conn)?;
    if problems != ["ok"] {
        return Err(StoreError::FileDamaged {
            path: path.to_string(),
            problems,
        });
    }
    Ok(())
}

/// The file is an SQLite database and a levy ledger (see [`check_ledger`]).
pub(super) fn check_identity(conn: &Connection, path: &str) -> Result<(), StoreError> {
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => {
                not_a_ledger(path, "it is not an SQLite database")
            }
            _ => sqlite_err(e),
        })?;
    if app_id != LEDGER_APPLICATION_ID {
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sqlite_err)?;
        let levy_tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('calculations', 'transactions', 'refunds', 'nexus')",
                [],
                |r| r.get(0),
            )
            .map_err(sqlite_err)?;
        if app_id != 0 || version < 1 || levy_tables != 4 {
            return Err(not_a_ledger(
                path,
                &format!("application id {app_id:#x}, schema version {version}, {levy_tables} of levy's 4 ledger tables"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod migration_tests {
    use super::*;

    /// A version-1 record (unsealed JSON): a February 2026 sale of $100.00 taxed $8.00 in
    /// California, and (`refund`) a partial refund of $20.00 of it in March.
    fn sale_json(refund: bool) -> String {
        // 1769990400 is 2026-02-02T00:00:00Z; 1772409600 is 2026-03-02T00:00:00Z.
        let line = |sales: i64, tax: i64| {
            serde_json::json!({
                "line_item_id": "l1", "reference_product_id": null, "reference_product_name": null,
                "reference_line_item_id": null, "product_tax_code": "txcd_99999999", "quantity": 1,
                "amount_excluding_tax": sales.to_string(), "tax_amount": tax.to_string(),
                "amount_including_tax": (sales + tax).to_string(), "jurisdictions": []
            })
        };
        let record = if refund {
            serde_json::json!({
                "id": "ref_tr_1", "transaction_id": "tr_1", "refund_type": "partial",
                "processed_at": 1_772_409_600, "created_at": 1_772_409_600,
                "lines": [{"index": 0, "line": line(-2_000, -160)}], "reversed_at": null
            })
        } else {
            serde_json::json!({
                "id": "tr_1", "calculation_id": "calc_1", "reference_order_id": "o-1",
                "processed_at": 1_769_990_400, "created_at": 1_769_990_400, "currency": "usd",
                "tax_included": false, "country": "US", "region": "CA",
                "lines": [line(10_000, 800)], "metadata": null, "deleted_at": null
            })
        };
        record.to_string()
    }

    #[test]
    fn a_version_1_ledger_migrates_and_keeps_its_transactions() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&migrations()[0]).unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        conn.execute(
            "INSERT INTO transactions (account, live, id, reference_order_id, data) VALUES ('shop', 1, 'tr_1', 'o-1', ?1)",
            [sale_json(false)],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO refunds (account, live, id, transaction_id, seq, data) VALUES ('shop', 1, 'ref_tr_1', 'tr_1', 0, ?1)",
            [sale_json(true)],
        )
        .unwrap();
        migrate(&conn).unwrap();
        // Schema 8: the monthly sales, from the transaction and its refund: February's sale,
        // March's partial refund (the sale still counted).
        let months: Vec<(String, String, i64)> = conn
            .prepare("SELECT month, sales, count FROM nexus_months WHERE account = 'shop' AND live = 1 AND region = 'CA' ORDER BY month")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let unsealed: Vec<(&str, (Decimal, Decimal), i64)> = months
            .iter()
            .map(|(m, s, c)| {
                (
                    m.as_str(),
                    super::super::queries::unseal_month(s, *c).unwrap(),
                    *c,
                )
            })
            .collect();
        assert_eq!(
            unsealed,
            [
                ("2026-02", (Decimal::from(10_000), Decimal::from(10_000)), 1),
                ("2026-03", (Decimal::from(-2_000), Decimal::from(-2_000)), 0),
            ]
        );
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let kind: String = conn
            .query_row("SELECT kind FROM transactions WHERE id = 'tr_1'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kind, "order", "existing transactions are orders");
        // Schema 4: the transaction already stored is in the outbox, unsent.
        let outbox: (String, String, String) = conn
            .query_row(
                "SELECT kind, record_id, state FROM outbox ORDER BY seq",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            outbox,
            ("transaction".into(), "tr_1".into(), "unsent".into())
        );
        // The order id stays unique per kind: another order with o-1 is refused, a fee
        // with o-1 is accepted.
        let insert = |id: &str, kind: &str| {
            conn.execute(
                "INSERT INTO transactions (account, live, id, reference_order_id, data, kind) VALUES ('shop', 1, ?1, 'o-1', '{}', ?2)",
                params![id, kind],
            )
        };
        assert!(insert("tr_2", "order").is_err());
        assert!(insert("tr_3", "fee").is_ok());
    }
}
