//! The ledger's statements in PostgreSQL for merchants, platform calculations,
//! registrations, certificates and secrets.

use super::super::seal::to_json;
use super::super::*;
use super::queries::{locking, Pg};
use super::{pg_err, text, Conn};

/// A seller's registrations of one kind active at a time (`$5`): a range of the index
/// `registrations_active` (account, mode, seller, kind, end), whatever else the account
/// has.
pub(super) const ACTIVE_REGISTRATIONS: &str = r#"SELECT data FROM registrations
    WHERE account = $1 AND live = $2 AND seller = $3 AND kind = $4
    AND active_until > $5 AND active_from <= $5 ORDER BY id COLLATE "C""#;

/// Whether a seller has a registration of one kind, active or not: one probe of that index.
pub(super) const SELLER_HAS_KIND: &str = "SELECT EXISTS (SELECT 1 FROM registrations
    WHERE account = $1 AND live = $2 AND seller = $3 AND kind = $4)";

impl<C: Conn> PlatformStatements for Pg<'_, C> {
    fn insert_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()> {
        let data = to_json(m)?;
        self.exec_unique(
            "INSERT INTO merchants (account, live, id, reference_merchant_id, status, data) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&&*scope.account, &scope.live, &m.id, &m.reference_merchant_id, &m.status.as_str(), &data],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchant(&self, scope: &Scope, key: Key) -> Result<Option<MerchantRecord>> {
        let (sql, id) = key.pick(
            locking!(self, "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id = $3"),
            locking!(self, "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND reference_merchant_id = $3"),
        );
        self.one(sql, &[&&*scope.account, &scope.live, &id])
    }

    fn update_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<()> {
        let data = to_json(m)?;
        self.exec_unique(
            "UPDATE merchants SET data = $4, reference_merchant_id = $5, status = $6 WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &m.id, &data, &m.reference_merchant_id, &m.status.as_str()],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchants(&self, scope: &Scope, status: &str, page: Page) -> Result<Vec<MerchantRecord>> {
        self.many(
            r#"SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3
               AND status LIKE $4 ORDER BY id COLLATE "C" LIMIT $5"#,
            &[
                &&*scope.account,
                &scope.live,
                &page.after,
                &status,
                &page.limit,
            ],
        )
    }

    fn insert_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()> {
        let data = to_json(r)?;
        self.exec(
            "INSERT INTO registrations (account, live, id, country, region, kind, data, seller, active_from, active_until)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &&*scope.account,
                &scope.live,
                &r.id,
                &r.country,
                &r.region,
                &r.kind.as_str(),
                &data,
                &r.seller_key(),
                &r.active_from,
                &r.active_until(),
            ],
        )
        .map(drop)
    }

    fn registration(&self, scope: &Scope, id: &str) -> Result<Option<RegistrationRecord>> {
        let sql = locking!(
            self,
            "SELECT data FROM registrations WHERE account = $1 AND live = $2 AND id = $3"
        );
        self.one(sql, &[&&*scope.account, &scope.live, &id])
    }

    fn update_registration(&self, scope: &Scope, r: &RegistrationRecord) -> Result<()> {
        let data = to_json(r)?;
        self.exec(
            "UPDATE registrations SET data = $4, active_from = $5, active_until = $6
             WHERE account = $1 AND live = $2 AND id = $3",
            &[
                &&*scope.account,
                &scope.live,
                &r.id,
                &data,
                &r.active_from,
                &r.active_until(),
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
        self.many(
            r#"SELECT data FROM registrations WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3
               AND country LIKE $4 AND region LIKE $5 ORDER BY id COLLATE "C" LIMIT $6"#,
            &[
                &&*scope.account,
                &scope.live,
                &page.after,
                &filter.country_pattern(),
                &filter.region_pattern(),
                &page.limit,
            ],
        )
    }

    fn registrations_of_kind(
        &self,
        scope: &Scope,
        kind: RegistrationKind,
    ) -> Result<Vec<RegistrationRecord>> {
        self.many(
            r#"SELECT data FROM registrations WHERE account = $1 AND live = $2 AND kind = $3 ORDER BY id COLLATE "C""#,
            &[&&*scope.account, &scope.live, &kind.as_str()],
        )
    }

    fn seller_registrations(
        &self,
        scope: &Scope,
        seller: &str,
        kind: RegistrationKind,
        at: i64,
    ) -> Result<(Vec<RegistrationRecord>, bool)> {
        let kind = kind.as_str();
        let active: Vec<RegistrationRecord> = self.many(
            ACTIVE_REGISTRATIONS,
            &[&&*scope.account, &scope.live, &seller, &kind, &at],
        )?;
        if !active.is_empty() {
            return Ok((active, true));
        }
        let row = self.row(
            SELLER_HAS_KIND,
            &[&&*scope.account, &scope.live, &seller, &kind],
        )?;
        let any = row
            .map(|r| r.try_get::<_, bool>(0))
            .transpose()
            .map_err(pg_err)?;
        Ok((active, any.unwrap_or(false)))
    }

    fn insert_certificate(&self, account: &str, c: &CertificateRecord) -> Result<()> {
        let data = to_json(c)?;
        self.exec(
            "INSERT INTO certificates (id, account, customer_id, data) VALUES ($1, $2, $3, $4)",
            &[&c.id, &account, &c.customer_id, &data],
        )
        .map(drop)
    }

    fn insert_document(&self, id: &str, content_type: &str, bytes: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO certificate_documents (certificate_id, content_type, bytes) VALUES ($1, $2, $3)",
            &[&id, &content_type, &bytes],
        )
        .map(drop)
    }

    fn insert_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()> {
        let data = to_json(r)?;
        self.exec(
            "INSERT INTO certificate_requests (id, account, data) VALUES ($1, $2, $3)",
            &[&r.id, &account, &data],
        )
        .map(drop)
    }

    fn certificates(&self, account: &str, owner: Option<&str>) -> Result<Vec<CertificateRecord>> {
        match owner {
            Some(customer) => self.many(
                "SELECT data FROM certificates WHERE account = $1 AND customer_id = $2 ORDER BY id",
                &[&account, &customer],
            ),
            None => self.many(
                "SELECT data FROM certificates WHERE account = $1 ORDER BY id",
                &[&account],
            ),
        }
    }

    fn certificate(&self, account: &str, id: &str) -> Result<Option<CertificateRecord>> {
        self.one(
            "SELECT data FROM certificates WHERE account = $1 AND id = $2",
            &[&account, &id],
        )
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>> {
        match self.row(
            "SELECT content_type, bytes FROM certificate_documents WHERE certificate_id = $1",
            &[&id],
        )? {
            Some(r) => Ok(Some((text(&r, 0)?, r.try_get(1).map_err(pg_err)?))),
            None => Ok(None),
        }
    }

    fn requests(&self, account: &str) -> Result<Vec<CertificateRequestRecord>> {
        self.many(
            r#"SELECT data FROM certificate_requests WHERE account = $1 ORDER BY id COLLATE "C""#,
            &[&account],
        )
    }

    fn request(&self, account: &str, id: &str) -> Result<Option<CertificateRequestRecord>> {
        let sql = locking!(
            self,
            "SELECT data FROM certificate_requests WHERE account = $1 AND id = $2"
        );
        self.one(sql, &[&account, &id])
    }

    fn update_request(&self, account: &str, r: &CertificateRequestRecord) -> Result<()> {
        let data = to_json(r)?;
        self.exec(
            "UPDATE certificate_requests SET data = $3 WHERE account = $1 AND id = $2",
            &[&account, &r.id, &data],
        )
        .map(drop)
    }

    fn secret(&self, name: &str, fresh: &[u8; 32]) -> Result<Vec<u8>> {
        let fresh = fresh.to_vec();
        self.exec(
            "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            &[&name, &fresh],
        )?;
        self.row("SELECT value FROM secrets WHERE name = $1", &[&name])?
            .ok_or_else(|| StoreError::ledger(format!("secret {name} is missing")))?
            .try_get(0)
            .map_err(pg_err)
    }

    fn platform_calc(&self, scope: &Scope, id: &str) -> Result<Option<PlatformCalculationRecord>> {
        self.one(
            "SELECT data FROM platform_calculations WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &id],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statement `sql` with its parameters written in (`$1` … as `values`), for
    /// `EXPLAIN` through psql.
    fn with_values(sql: &str, values: &[&str]) -> String {
        values
            .iter()
            .enumerate()
            .rev()
            .fold(sql.to_string(), |sql, (i, v)| {
                sql.replace(&format!("${}", i + 1), v)
            })
    }

    /// As the SQLite ledger's test: a calculation reads its seller's registrations active
    /// on its date through the index `registrations_active` (`store::index_check`).
    #[test]
    fn a_calculation_reads_only_the_active_registrations_of_its_seller() {
        if !levy_testkit::postgres::wanted() {
            eprintln!("skipped: LEVY_TEST_LEDGER=postgres is not set");
            return;
        }
        let server = levy_testkit::postgres::server().expect("a PostgreSQL server for the test");
        let url = server.database();
        let database = url.rsplit('/').next().unwrap().to_string();
        let store = super::super::PostgresStore::open(&url).unwrap();
        super::super::super::index_check::check(&store, || {
            server.psql(&database, "ANALYZE registrations").unwrap();
            let at = super::super::super::index_check::AT.to_string();
            let key = ["'shop'", "true", "''", "'sales_tax'"];
            let active = with_values(ACTIVE_REGISTRATIONS, &[key[0], key[1], key[2], key[3], &at]);
            let none = ["'shop'", "true", "'merch_none'", "'sales_tax'"];
            [active, with_values(SELLER_HAS_KIND, &none)]
                .iter()
                .map(|sql| server.psql(&database, &format!("EXPLAIN {sql}")).unwrap())
                .collect()
        });
        drop(store);
        // A ledger of schema 6 (before the columns and the index) is migrated: the columns
        // are filled from the sealed records.
        server
            .psql(
                &database,
                "DROP INDEX registrations_active; ALTER TABLE registrations DROP COLUMN seller,
                 DROP COLUMN active_from, DROP COLUMN active_until;
                 UPDATE levy_ledger SET schema_version = 6",
            )
            .unwrap();
        let store = super::super::PostgresStore::open(&url).unwrap();
        super::super::super::index_check::check_migrated(&store);
    }
}
