//! The schema a new ledger gets, on each store, is the one earlier releases wrote: the
//! migrations are history, and a ledger created today must be laid out as one created
//! before and migrated since, whatever the code that writes them looks like.
//!
//! The expected schemas, `tests/schema/sqlite.txt` and `tests/schema/postgres.txt`, were
//! written from ledgers that the release before the shared table definitions
//! (`store/tables.rs`) created (schema versions 9 and 6). A change of schema is a new
//! migration and a new expected file: `LEVY_BLESS_SCHEMA=1 cargo test -p levy-api --test
//! schema` writes them again, for review in the diff.

mod common;
use common::*;

use std::path::PathBuf;

fn expected(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schema")
        .join(name)
}

/// Compares `found` with the expected file, or writes it under `LEVY_BLESS_SCHEMA=1`.
fn check(name: &str, found: &str) {
    let path = expected(name);
    if std::env::var_os("LEVY_BLESS_SCHEMA").is_some() {
        std::fs::write(&path, found).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap();
    for (i, (w, f)) in want.lines().zip(found.lines()).enumerate() {
        assert_eq!(f, w, "{name}, line {}", i + 1);
    }
    assert_eq!(
        found.lines().count(),
        want.lines().count(),
        "{name}: line counts differ"
    );
}

/// Every table and index of a new SQLite ledger, with the SQL SQLite keeps for it (the text
/// of the `CREATE` as run, then changed by each `ALTER TABLE`), and the schema version.
#[test]
fn a_new_sqlite_ledger_has_the_schema_of_before() {
    let dir = levy_testkit::TempDir::new("levy-schema-sqlite");
    let path = dir.join("ledger.sqlite").to_string_lossy().into_owned();
    drop(levy_testkit::service::with_ledger(table(), &path));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut out = String::new();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    out.push_str(&format!("user_version {version}\n"));
    let mut stmt = conn
        .prepare(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master
             WHERE name NOT LIKE 'sqlite_%' ORDER BY type DESC, name",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} on {}\n{}\n",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?
            ))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
    }
    check("sqlite.txt", &out);
}

/// Every column (type, nullability, default) and index of a new PostgreSQL ledger, as the
/// catalog describes them, and the schema version.
#[test]
fn a_new_postgres_ledger_has_the_schema_of_before() {
    let Some(server) = levy_testkit::postgres::server() else {
        return;
    };
    let url = server.database();
    drop(levy_testkit::service::with_ledger(table(), &url));
    let db = url.rsplit('/').next().unwrap();
    let sql = |q: &str| server.psql(db, q).unwrap();
    let out = format!(
        "schema_version {}\n{}\n{}\n",
        sql("SELECT schema_version FROM levy_ledger"),
        sql(
            "SELECT table_name || '.' || column_name || ' ' || udt_name || ' '
                 || is_nullable || ' ' || coalesce(column_default, '-')
             FROM information_schema.columns WHERE table_schema = 'public'
             ORDER BY table_name, ordinal_position"
        ),
        sql("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
             ORDER BY tablename, indexname"),
    );
    check("postgres.txt", &out);
}

/// Why `url` could not be opened as a ledger.
fn refusal(url: &str) -> String {
    let opened = levy_api::Service::open(levy_api::ServiceConfig {
        table: levy_api::TableSource::Table(table()),
        ledger: url.into(),
        keys: levy_testkit::keys::inline(),
    });
    match opened {
        Ok(_) => panic!("{url} opened as a ledger"),
        Err(e) => e.message,
    }
}

/// A PostgreSQL database that is not a levy ledger of this release is refused with the
/// reason and its remedy, and left as it was: one holding another program's tables, one
/// whose `levy_ledger` names another application, one whose encoding cannot hold every
/// character a request may send, and a ledger of a newer schema.
#[test]
fn a_postgres_database_that_is_not_a_ledger_is_refused_untouched() {
    let Some(server) = levy_testkit::postgres::server() else {
        return;
    };
    let name = |url: &str| url.rsplit('/').next().unwrap().to_string();

    // Another program's database: one table of its own, and no levy_ledger made.
    let other = server.database();
    server
        .psql(
            &name(&other),
            "CREATE TABLE orders (id INT); INSERT INTO orders VALUES (7)",
        )
        .unwrap();
    let why = refusal(&other);
    assert!(
        why.contains("is not a levy ledger: its schema holds 1 tables of something else"),
        "{why}"
    );
    assert_eq!(
        server
            .psql(
                &name(&other),
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
            )
            .unwrap(),
        "1",
        "no table was added"
    );
    assert_eq!(
        server.psql(&name(&other), "SELECT id FROM orders").unwrap(),
        "7"
    );

    // A levy_ledger table of another application.
    let named = server.database();
    server
        .psql(
            &name(&named),
            "CREATE TABLE levy_ledger (application TEXT, schema_version BIGINT);
             INSERT INTO levy_ledger VALUES ('tally', 1)",
        )
        .unwrap();
    let why = refusal(&named);
    assert!(
        why.contains("its levy_ledger table names the application \"tally\""),
        "{why}"
    );

    // An encoding that cannot hold every character (LATIN1 has no emoji).
    let latin = format!("latin_{}", std::process::id());
    server
        .psql(
            "postgres",
            &format!("CREATE DATABASE {latin} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"),
        )
        .unwrap();
    let why = refusal(&server.url(&latin));
    assert!(
        why.contains("its encoding is LATIN1") && why.contains("createdb -E UTF8 -T template0"),
        "{why}"
    );
    assert_eq!(
        server
            .psql(
                &latin,
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
            )
            .unwrap(),
        "0",
        "nothing was made"
    );

    // A ledger a newer release wrote (schema 8 is this release's, tests/schema/postgres.txt).
    let newer = server.database();
    drop(levy_testkit::service::with_ledger(table(), &newer));
    server
        .psql(&name(&newer), "UPDATE levy_ledger SET schema_version = 99")
        .unwrap();
    let why = refusal(&newer);
    assert!(
        why.contains("the ledger's schema version 99 is newer than this release's 8; upgrade levy"),
        "{why}"
    );
}
