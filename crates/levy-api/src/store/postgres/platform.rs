//! The ledger's statements in PostgreSQL for merchants, platform calculations,
//! certificates and secrets.

use super::super::seal::to_json;
use super::super::*;
use super::queries::{locking, Pg};
use super::{pg_err, text, Conn};

impl<C: Conn> PlatformStatements for Pg<'_, C> {
    fn platform_calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<PlatformCalculationRecord>, StoreError> {
        self.one(
            "SELECT data FROM platform_calculations WHERE account = $1 AND live = $2 AND id = $3 AND expires_at > $4",
            &[&&*scope.account, &scope.live, &id, &now],
        )
    }

    fn insert_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<(), StoreError> {
        let data = to_json(m)?;
        self.exec_unique(
            "INSERT INTO merchants (account, live, id, reference_merchant_id, status, data) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&&*scope.account, &scope.live, &m.id, &m.reference_merchant_id, &m.status.as_str(), &data],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchant(
        &self,
        scope: &Scope,
        id: &str,
        by_reference: bool,
    ) -> Result<Option<MerchantRecord>, StoreError> {
        let sql = if by_reference {
            locking!(
                self,
                "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND reference_merchant_id = $3"
            )
        } else {
            locking!(
                self,
                "SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id = $3"
            )
        };
        self.one(sql, &[&&*scope.account, &scope.live, &id])
    }

    fn update_merchant(&self, scope: &Scope, m: &MerchantRecord) -> Result<(), StoreError> {
        let data = to_json(m)?;
        self.exec_unique(
            "UPDATE merchants SET data = $4, reference_merchant_id = $5, status = $6 WHERE account = $1 AND live = $2 AND id = $3",
            &[&&*scope.account, &scope.live, &m.id, &data, &m.reference_merchant_id, &m.status.as_str()],
            RecordKind::Merchant,
            &m.reference_merchant_id,
        )
    }

    fn merchants(
        &self,
        scope: &Scope,
        after: &str,
        filter: MerchantFilter,
        limit: i64,
    ) -> Result<Vec<MerchantRecord>, StoreError> {
        let status = match filter {
            MerchantFilter::Active => MerchantStatus::Active.as_str(),
            MerchantFilter::Deleted => MerchantStatus::Deleted.as_str(),
            MerchantFilter::All => "%",
        };
        self.many(
            r#"SELECT data FROM merchants WHERE account = $1 AND live = $2 AND id COLLATE "C" > $3
               AND status LIKE $4 ORDER BY id COLLATE "C" LIMIT $5"#,
            &[&&*scope.account, &scope.live, &after, &status, &limit],
        )
    }

    fn insert_certificate(
        &self,
        account: &str,
        c: &CertificateRecord,
        document: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let data = to_json(c)?;
        self.exec(
            "INSERT INTO certificates (id, account, customer_id, data) VALUES ($1, $2, $3, $4)",
            &[&c.id, &account, &c.customer_id, &data],
        )?;
        if let (Some(info), Some(bytes)) = (&c.document, document) {
            self.exec(
                "INSERT INTO certificate_documents (certificate_id, content_type, bytes) VALUES ($1, $2, $3)",
                &[&c.id, &info.content_type, &bytes],
            )?;
        }
        Ok(())
    }

    fn insert_certificate_request(
        &self,
        account: &str,
        r: &CertificateRequestRecord,
    ) -> Result<(), StoreError> {
        let data = to_json(r)?;
        self.exec(
            "INSERT INTO certificate_requests (id, account, data) VALUES ($1, $2, $3)",
            &[&r.id, &account, &data],
        )
        .map(drop)
    }

    fn certificates(
        &self,
        account: &str,
        customer: Option<&str>,
    ) -> Result<Vec<CertificateRecord>, StoreError> {
        match customer {
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

    fn certificate(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRecord>, StoreError> {
        self.one(
            "SELECT data FROM certificates WHERE account = $1 AND id = $2",
            &[&account, &id],
        )
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        match self.row(
            "SELECT content_type, bytes FROM certificate_documents WHERE certificate_id = $1",
            &[&id],
        )? {
            Some(r) => Ok(Some((text(&r, 0)?, r.try_get(1).map_err(pg_err)?))),
            None => Ok(None),
        }
    }

    fn certificate_requests(
        &self,
        account: &str,
    ) -> Result<Vec<CertificateRequestRecord>, StoreError> {
        self.many(
            r#"SELECT data FROM certificate_requests WHERE account = $1 ORDER BY id COLLATE "C""#,
            &[&account],
        )
    }

    fn certificate_request(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRequestRecord>, StoreError> {
        let sql = locking!(
            self,
            "SELECT data FROM certificate_requests WHERE account = $1 AND id = $2"
        );
        self.one(sql, &[&account, &id])
    }

    fn update_certificate_request(
        &self,
        account: &str,
        r: &CertificateRequestRecord,
    ) -> Result<(), StoreError> {
        let data = to_json(r)?;
        self.exec(
            "UPDATE certificate_requests SET data = $3 WHERE account = $1 AND id = $2",
            &[&account, &r.id, &data],
        )
        .map(drop)
    }

    fn secret(&self, name: &str, fresh: &[u8; 32]) -> Result<Vec<u8>, StoreError> {
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
}
