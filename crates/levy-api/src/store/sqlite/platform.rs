//! The ledger's statements in SQLite for merchants, platform calculations, registrations,
//! certificates and secrets.

use rusqlite::{params, OptionalExtension};

use super::super::seal::to_json;
use super::super::*;
use super::queries::{query_all, query_one, query_packed, run, run_unique, Sql};
use super::sqlite_err;

/// A seller's registrations of one kind active at a time (`?5`): a range of the index
/// `registrations_active` (account, mode, seller, kind, end), whatever else the account
/// has.
pub(super) const ACTIVE_REGISTRATIONS: &str =
    "SELECT data FROM registrations WHERE account = ?1 AND live = ?2 AND seller = ?3 AND kind = ?4
     AND active_until > ?5 AND active_from <= ?5 ORDER BY id";

/// Whether a seller has a registration of one kind, active or not: one probe of that index.
pub(super) const SELLER_HAS_KIND: &str = "SELECT EXISTS (SELECT 1 FROM registrations
     WHERE account = ?1 AND live = ?2 AND seller = ?3 AND kind = ?4)";

impl PlatformStatements for Sql<'_> {
    fn platform_calc(&self, scope: &Scope, id: &str) -> Result<Option<PlatformCalculationRecord>> {
        query_packed(
            self.0,
            "SELECT data FROM platform_calculations WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
    }

    fn insert_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()> {
        run_unique(
            self.0,
            "INSERT INTO merchants (account, live, id, reference_merchant_id, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![&*scope.account, scope.live, m.id, m.reference_merchant_id, to_json(m)?],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchant(&self, scope: &Scope, key: Key) -> Result<Option<MerchantRecord>> {
        let (sql, id) = key.pick(
            "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND id = ?3",
            "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND reference_merchant_id = ?3",
        );
        query_one(self.0, sql, params![&*scope.account, scope.live, id])
    }

    fn update_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()> {
        run_unique(
            self.0,
            "UPDATE merchants SET data = ?4, reference_merchant_id = ?5 WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, m.id, to_json(m)?, m.reference_merchant_id],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchants(&self, scope: &Scope, status: &str, page: Page) -> Result<Vec<MerchantRecord>> {
        query_all(
            self.0,
            "SELECT data FROM merchants WHERE account = ?1 AND live = ?2 AND id > ?3
             AND json_extract(data, '$.record.status') LIKE ?4 ORDER BY id LIMIT ?5",
            params![&*scope.account, scope.live, page.after, status, page.limit],
        )
    }

    fn insert_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()> {
        run(
            self.0,
            "INSERT INTO registrations (account, live, id, country, region, kind, data, seller, active_from, active_until)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                &*scope.account,
                scope.live,
                r.id,
                r.country,
                r.region,
                r.kind.as_str(),
                to_json(r)?,
                r.seller_key(),
                r.active_from,
                r.active_until()
            ],
        )
        .map(drop)
    }

    fn registration(&self, scope: &Scope, id: &str) -> Result<Option<RegistrationRecord>> {
        query_one(
            self.0,
            "SELECT data FROM registrations WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![&*scope.account, scope.live, id],
        )
    }

    fn update_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()> {
        run(
            self.0,
            "UPDATE registrations SET data = ?4, active_from = ?5, active_until = ?6
             WHERE account = ?1 AND live = ?2 AND id = ?3",
            params![
                &*scope.account,
                scope.live,
                r.id,
                to_json(r)?,
                r.active_from,
                r.active_until()
            ],
        )
        .map(drop)
    }

    fn registrations(
        &self,
        scope: &Scope,
        filter: &RegistrationFilter,
        page: Page,
    ) -> Result<Vec<RegistrationRecord>> {
        query_all(
            self.0,
            "SELECT data FROM registrations WHERE account = ?1 AND live = ?2 AND id > ?3
             AND country LIKE ?4 AND region LIKE ?5 ORDER BY id LIMIT ?6",
            params![
                &*scope.account,
                scope.live,
                page.after,
                filter.country_pattern(),
                filter.region_pattern(),
                page.limit
            ],
        )
    }

    fn registrations_of_kind(
        &self,
        scope: &Scope,
        kind: RegistrationKind,
    ) -> Result<Vec<RegistrationRecord>> {
        query_all(
            self.0,
            "SELECT data FROM registrations WHERE account = ?1 AND live = ?2 AND kind = ?3 ORDER BY id",
            params![&*scope.account, scope.live, kind.as_str()],
        )
    }

    fn seller_registrations(
        &self,
        scope: &Scope,
        seller: &str,
        kind: RegistrationKind,
        at: i64,
    ) -> Result<(Vec<RegistrationRecord>, bool)> {
        let key = params![&*scope.account, scope.live, seller, kind.as_str(), at];
        let active: Vec<RegistrationRecord> = query_all(self.0, ACTIVE_REGISTRATIONS, key)?;
        if !active.is_empty() {
            return Ok((active, true));
        }
        let key = params![&*scope.account, scope.live, seller, kind.as_str()];
        let any = self
            .0
            .prepare_cached(SELLER_HAS_KIND)
            .and_then(|mut st| st.query_row(key, |r| r.get(0)))
            .map_err(sqlite_err)?;
        Ok((active, any))
    }

    fn insert_certificate(&self, account: &str, c: &CertificateRecord) -> Result<()> {
        run(
            self.0,
            "INSERT INTO certificates (id, account, customer_id, data) VALUES (?1, ?2, ?3, ?4)",
            params![c.id, account, c.customer_id, to_json(c)?],
        )
        .map(drop)
    }

    fn insert_document(&self, id: &str, content_type: &str, bytes: &[u8]) -> Result<()> {
        run(
            self.0,
            "INSERT INTO certificate_documents (certificate_id, content_type, bytes) VALUES (?1, ?2, ?3)",
            params![id, content_type, bytes],
        )
        .map(drop)
    }

    fn insert_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()> {
        run(
            self.0,
            "INSERT INTO certificate_requests (id, account, data) VALUES (?1, ?2, ?3)",
            params![r.id, account, to_json(r)?],
        )
        .map(drop)
    }

    fn certificates(&self, account: &str, owner: Option<&str>) -> Result<Vec<CertificateRecord>> {
        match owner {
            Some(c) => query_all(
                self.0,
                "SELECT data FROM certificates WHERE account = ?1 AND customer_id = ?2 ORDER BY id",
                params![account, c],
            ),
            None => query_all(
                self.0,
                "SELECT data FROM certificates WHERE account = ?1 ORDER BY id",
                params![account],
            ),
        }
    }

    fn certificate(&self, account: &str, id: &str) -> Result<Option<CertificateRecord>> {
        query_one(
            self.0,
            "SELECT data FROM certificates WHERE account = ?1 AND id = ?2",
            params![account, id],
        )
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>> {
        self.0
            .query_row(
                "SELECT content_type, bytes FROM certificate_documents WHERE certificate_id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sqlite_err)
    }

    fn requests(&self, account: &str) -> Result<Vec<CertificateRequestRecord>> {
        query_all(
            self.0,
            "SELECT data FROM certificate_requests WHERE account = ?1 ORDER BY id",
            params![account],
        )
    }

    fn request(&self, account: &str, id: &str) -> Result<Option<CertificateRequestRecord>> {
        query_one(
            self.0,
            "SELECT data FROM certificate_requests WHERE account = ?1 AND id = ?2",
            params![account, id],
        )
    }

    fn update_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()> {
        run(
            self.0,
            "UPDATE certificate_requests SET data = ?3 WHERE account = ?1 AND id = ?2",
            params![account, r.id, to_json(r)?],
        )
        .map(drop)
    }

    fn secret(&self, name: &str, fresh: &[u8; 32]) -> Result<Vec<u8>> {
        run(
            self.0,
            "INSERT OR IGNORE INTO secrets (name, value) VALUES (?1, ?2)",
            params![name, &fresh[..]],
        )?;
        self.0
            .query_row(
                "SELECT value FROM secrets WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .map_err(sqlite_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calculation reads its seller's registrations active on its date through the index
    /// `registrations_active`, not the account's 10,002 (`store::index_check`).
    #[test]
    fn a_calculation_reads_only_the_active_registrations_of_its_seller() {
        let dir = levy_testkit::TempDir::new("levy-registrations-index");
        let path = dir.join("ledger.sqlite").to_string_lossy().into_owned();
        let store = super::super::SqliteStore::open(&path).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        let plan = |sql: &str, params: &[&dyn rusqlite::ToSql]| -> String {
            let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let rows = st
                .query_map(params, |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<std::result::Result<Vec<_>, _>>()
                .unwrap();
            rows.join("; ")
        };
        super::super::super::index_check::check(&store, || {
            let at = super::super::super::index_check::AT;
            vec![
                plan(
                    ACTIVE_REGISTRATIONS,
                    &[&"shop", &true, &"", &"sales_tax", &at],
                ),
                plan(
                    SELLER_HAS_KIND,
                    &[&"shop", &true, &"merch_none", &"sales_tax"],
                ),
            ]
        });
        drop(store);
        // A ledger of schema 9 (before the columns and the index) is migrated: the columns
        // are filled from the sealed records.
        conn.execute_batch(
            "DROP INDEX registrations_active; ALTER TABLE registrations DROP COLUMN seller;
             ALTER TABLE registrations DROP COLUMN active_from;
             ALTER TABLE registrations DROP COLUMN active_until; PRAGMA user_version = 9;",
        )
        .unwrap();
        let store = super::super::SqliteStore::open(&path).unwrap();
        super::super::super::index_check::check_migrated(&store);
    }
}
