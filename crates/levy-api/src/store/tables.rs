//! The ledger's tables, defined once in levy's words and written in each database's
//! ([`render`] with a [`Dialect`]). Each store's migrations (`sqlite/schema.rs`,
//! `postgres/schema.rs`) are its history: which of these definitions it created at which
//! version, beside the few tables whose layout differs by design (the transactions and
//! merchants of SQLite's first schemas, the monthly sales SQLite seals as text and
//! PostgreSQL keeps as numbers). A new store is a new [`Dialect`] and one migration of
//! these definitions.
//!
//! A definition is SQL with placeholders for the types the databases spell differently:
//! `{flag}` (a mode), `{int}` (a 64-bit integer), `{bytes}`, `{decimal}` and `{decimals}`
//! (an amount, and a row of amounts, which SQLite holds as sealed text), `{serial}` (a key
//! counted up by the database). `tests/schema.rs` checks that a new ledger on each store is
//! laid out as the releases before these definitions laid it out.

/// How a database spells the types of the definitions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dialect {
    /// A mode flag (`live`).
    pub flag: &'static str,
    /// A 64-bit integer (times, counts, sequence numbers).
    pub int: &'static str,
    /// Bytes (certificate documents, secrets).
    pub bytes: &'static str,
    /// One amount.
    pub decimal: &'static str,
    /// A row of amounts.
    pub decimals: &'static str,
    /// A key the database counts up, with its `PRIMARY KEY`.
    pub serial: &'static str,
}

/// SQLite: integers for flags, amounts as sealed text ([`super::seal`]).
pub(crate) const SQLITE: Dialect = Dialect {
    flag: "INTEGER",
    int: "INTEGER",
    bytes: "BLOB",
    decimal: "TEXT",
    decimals: "TEXT",
    serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
};

/// PostgreSQL: booleans, `numeric` amounts added to in SQL.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) const POSTGRES: Dialect = Dialect {
    flag: "BOOLEAN",
    int: "BIGINT",
    bytes: "BYTEA",
    decimal: "NUMERIC",
    decimals: "NUMERIC[]",
    serial: "BIGSERIAL PRIMARY KEY",
};

/// `sql` (definitions concatenated) in `dialect`'s words.
pub(crate) fn render(sql: &str, dialect: &Dialect) -> String {
    sql.replace("{flag}", dialect.flag)
        .replace("{int}", dialect.int)
        .replace("{bytes}", dialect.bytes)
        .replace("{decimals}", dialect.decimals)
        .replace("{decimal}", dialect.decimal)
        .replace("{serial}", dialect.serial)
}

/// Customers, one reference id each while not deleted.
pub(crate) const CUSTOMERS: &str = "CREATE TABLE customers (
    account TEXT NOT NULL, live {flag} NOT NULL, id TEXT NOT NULL,
    reference_customer_id TEXT, data TEXT NOT NULL, deleted_at {int},
    PRIMARY KEY (account, live, id)
);
CREATE UNIQUE INDEX customers_reference ON customers (account, live, reference_customer_id)
    WHERE reference_customer_id IS NOT NULL AND deleted_at IS NULL;
";

/// Products.
pub(crate) const PRODUCTS: &str = "CREATE TABLE products (
    account TEXT NOT NULL, live {flag} NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
";

/// A table of quotes kept until they expire (`calculations`, `platform_calculations`), and
/// the index their purge by expiry reads.
const QUOTES: &str = "CREATE TABLE {quotes} (
    account TEXT NOT NULL, live {flag} NOT NULL, id TEXT NOT NULL,
    expires_at {int} NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX {quotes}_expiry ON {quotes} (expires_at);
";

/// The definition of the quotes table `name` ([`QUOTES`]).
pub(crate) fn quotes(name: &str) -> String {
    QUOTES.replace("{quotes}", name)
}

/// Refunds, numbered within their transaction (`seq`); each store indexes that number
/// itself (SQLite's first schema did not make it unique).
pub(crate) const REFUNDS: &str = "CREATE TABLE refunds (
    account TEXT NOT NULL, live {flag} NOT NULL, id TEXT NOT NULL,
    transaction_id TEXT NOT NULL, seq {int} NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
";

/// Each account's sales per place, both modes together.
pub(crate) const NEXUS: &str = "CREATE TABLE nexus (
    account TEXT NOT NULL, country TEXT NOT NULL, region TEXT NOT NULL, currency TEXT NOT NULL,
    sales {decimal} NOT NULL, count {int} NOT NULL,
    PRIMARY KEY (account, country, region, currency)
);
";

/// Exemption certificates, their documents and requests, and the ledger's secrets (the key
/// that signs certificate request URLs).
pub(crate) const CERTIFICATES: &str = "CREATE TABLE certificates (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, customer_id TEXT, data TEXT NOT NULL
);
CREATE INDEX certificates_account ON certificates (account, customer_id);
CREATE TABLE certificate_documents (
    certificate_id TEXT NOT NULL PRIMARY KEY, content_type TEXT NOT NULL, bytes {bytes} NOT NULL
);
CREATE TABLE certificate_requests (
    id TEXT NOT NULL PRIMARY KEY, account TEXT NOT NULL, data TEXT NOT NULL
);
CREATE INDEX certificate_requests_account ON certificate_requests (account, id);
CREATE TABLE secrets (name TEXT NOT NULL PRIMARY KEY, value {bytes} NOT NULL);
";

/// The outbox of records not yet sent to a central ledger, in the order they were written.
pub(crate) const OUTBOX: &str = "CREATE TABLE outbox (
    seq {serial},
    account TEXT NOT NULL, live {flag} NOT NULL,
    kind TEXT NOT NULL, record_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'unsent', note TEXT
);
CREATE INDEX outbox_unsent ON outbox (live, state, seq);
";

/// Registrations, where an account is registered to collect (expired, never deleted).
/// `country`, `region` and `kind` are copies of the sealed record's, for the filters of a
/// list and the reads of a calculation. `IF NOT EXISTS`: a ledger whose version was set
/// back by hand keeps its registrations.
pub(crate) const REGISTRATIONS: &str = "CREATE TABLE IF NOT EXISTS registrations (
    account TEXT NOT NULL, live {flag} NOT NULL, id TEXT NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, id)
);
CREATE INDEX IF NOT EXISTS registrations_kind ON registrations (account, live, kind);
";

/// What a calculation reads of registrations, through an index: one seller's (`seller`: a
/// merchant's id, `''` for the account's own) of one kind by the end of their activity
/// (`active_until`: `expires_at`, or the largest integer when open-ended), so that those
/// active at a time are one range of it, whatever else the account has; `active_from` is
/// its last column. The columns ([`REGISTRATION_COLUMNS`]) are copies of the sealed
/// record's, added (where missing) and filled by each store's migration before it makes
/// the index.
pub(crate) const REGISTRATIONS_ACTIVE: &str = "CREATE INDEX IF NOT EXISTS registrations_active
    ON registrations (account, live, seller, kind, active_until, active_from);
";

/// The columns of [`REGISTRATIONS_ACTIVE`], each added with `ALTER TABLE registrations ADD
/// COLUMN`: name and definition.
pub(crate) const REGISTRATION_COLUMNS: [(&str, &str); 3] = [
    ("seller", "TEXT NOT NULL DEFAULT ''"),
    ("active_from", "{int} NOT NULL DEFAULT 0"),
    ("active_until", "{int} NOT NULL DEFAULT 9223372036854775807"),
];

/// The daily liability totals (`store::days`): per account, mode, UTC day and jurisdiction
/// the 16 amounts of a report's row and its entries; per state, currency and rate table 4
/// sums and 3 counts. Made anew (a ledger whose version was set back by hand has its
/// totals computed again).
pub(crate) const LIABILITY: &str = "DROP TABLE IF EXISTS liability_rows;
CREATE TABLE liability_rows (
    account TEXT NOT NULL, live {flag} NOT NULL, day {int} NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, code TEXT NOT NULL, name TEXT NOT NULL,
    authority TEXT NOT NULL, outlet TEXT NOT NULL, amounts {decimals} NOT NULL, entries {int} NOT NULL,
    PRIMARY KEY (account, live, day, country, region, code, name, authority, outlet)
);
DROP TABLE IF EXISTS liability_totals;
CREATE TABLE liability_totals (
    account TEXT NOT NULL, live {flag} NOT NULL, day {int} NOT NULL,
    country TEXT NOT NULL, region TEXT NOT NULL, currency TEXT NOT NULL, table_hash TEXT NOT NULL,
    sums {decimals} NOT NULL, transactions {int} NOT NULL, refunds {int} NOT NULL,
    reversals {int} NOT NULL,
    PRIMARY KEY (account, live, day, country, region, currency, table_hash)
);
";

/// Answers kept under idempotency keys (`store::kept`), per account and mode, each until
/// `expires_at`; `bytes` is the sealed answer's size, summed for the account's limit
/// without reading the answers. `IF NOT EXISTS`: a ledger whose version was set back by
/// hand keeps its answers.
pub(crate) const IDEMPOTENCY_KEYS: &str = "CREATE TABLE IF NOT EXISTS idempotency_keys (
    account TEXT NOT NULL, live {flag} NOT NULL, idempotency_key TEXT NOT NULL,
    expires_at {int} NOT NULL, bytes {int} NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (account, live, idempotency_key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placeholder of every definition is one the dialects spell: none is left in
    /// the SQL a store runs.
    #[test]
    fn every_placeholder_is_rendered() {
        let all = [
            CUSTOMERS,
            PRODUCTS,
            &quotes("calculations"),
            REFUNDS,
            NEXUS,
            &quotes("platform_calculations"),
            CERTIFICATES,
            OUTBOX,
            REGISTRATIONS,
            LIABILITY,
            IDEMPOTENCY_KEYS,
            REGISTRATIONS_ACTIVE,
            &REGISTRATION_COLUMNS.map(|(_, c)| c).concat(),
        ]
        .concat();
        for dialect in [SQLITE, POSTGRES] {
            let sql = render(&all, &dialect);
            assert!(!sql.contains('{') && !sql.contains('}'), "{sql}");
        }
        assert!(render(LIABILITY, &POSTGRES).contains("amounts NUMERIC[] NOT NULL"));
        assert!(render(LIABILITY, &SQLITE).contains("amounts TEXT NOT NULL"));
    }
}
