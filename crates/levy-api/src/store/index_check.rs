//! A check both stores' tests run (issue 47): a calculation reads only its seller's
//! registrations active on its date, through the index `registrations_active`, however
//! many others the account has (expired ones, other merchants'). Not timed: the reads are
//! compared with what they must be, and the query plans are read.

use super::statements::Database;
use super::*;

/// 2026-03-15 12:00 UTC, the sale's time.
pub(crate) const AT: i64 = 1_773_576_000;

/// The account's own registrations active at [`AT`]: Tennessee, from 2026-01-01.
fn active_own() -> RegistrationRecord {
    registration("reg_own_tn", None, 1_767_225_600, None)
}

fn registration(
    id: &str,
    merchant: Option<&str>,
    from: i64,
    expires: Option<i64>,
) -> RegistrationRecord {
    RegistrationRecord {
        id: id.into(),
        merchant_id: merchant.map(str::to_string),
        country: "US".into(),
        region: "TN".into(),
        locals: Vec::new(),
        kind: RegistrationKind::SalesTax,
        active_from: from,
        expires_at: expires,
        created_at: from,
        updated_at: from,
    }
}

/// 10,000 registrations beside the one active: 5,000 of the account's own, each active for
/// a day of 2025 and expired since (1735689600 is 2025-01-01), and 5,000 of ten merchants,
/// active; and one of the account's own that begins after [`AT`].
fn others() -> Vec<RegistrationRecord> {
    let mut out = Vec::with_capacity(10_001);
    for i in 0..5_000 {
        let from = 1_735_689_600 + i * 3_600;
        out.push(registration(
            &format!("reg_old_{i:05}"),
            None,
            from,
            Some(from + 86_400),
        ));
        out.push(registration(
            &format!("reg_m_{i:05}"),
            Some(&format!("merch_{}", i % 10)),
            1_735_689_600,
            None,
        ));
    }
    out.push(registration("reg_later", None, AT + 1, None));
    out
}

/// Stores the registrations in `store` (one write) and checks what calculations read;
/// `plans` answers the query plan of each statement of
/// [`Statements::seller_registrations`], as text: of the account's own `sales_tax`
/// registrations active at [`AT`], and of whether `merch_none` has any (PostgreSQL may
/// rightly find one of 5,002 matching rows by a scan that stops at the first; for a
/// seller with none, a scan would read every row).
pub(crate) fn check<D: Database>(store: &D, plans: impl Fn() -> Vec<String>) {
    let scope = Scope {
        account: "shop".into(),
        live: true,
    };
    let mut all = others();
    all.push(active_own());
    let (s, rows) = (scope.clone(), all.clone());
    store
        .write(move |st| rows.iter().try_for_each(|r| st.insert_registration(&s, r)))
        .unwrap();
    let read = |seller: Option<&str>, at: i64| {
        store
            .calculation_reads(&scope, None, &[], Some(SellerAt { seller, at }))
            .unwrap()
    };
    // The account's own: the one active on the day, of 10,002 stored.
    let own = read(None, AT);
    assert_eq!(own.registrations, vec![active_own()]);
    assert_eq!(own.registered, vec![RegistrationKind::SalesTax]);
    // Before any began: none active, but registered (so it collects nowhere).
    let early = read(None, 1_700_000_000);
    assert!(early.registrations.is_empty());
    assert_eq!(early.registered, vec![RegistrationKind::SalesTax]);
    // During one of 2025's days: that day's own registration only.
    let day = read(None, 1_735_689_600 + 7 * 3_600 + 60);
    let ids: Vec<&str> = day.registrations.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        (0..=7)
            .map(|i| format!("reg_old_{i:05}"))
            .collect::<Vec<_>>()
    );
    // A merchant: its own 500, by id, and no one else's.
    let merchant = read(Some("merch_3"), AT);
    let want: Vec<RegistrationRecord> = all
        .iter()
        .filter(|r| r.merchant_id.as_deref() == Some("merch_3"))
        .cloned()
        .collect();
    assert_eq!(merchant.registrations.len(), 500);
    assert_eq!(merchant.registrations, want);
    // A merchant without registrations: nothing, and it collects everywhere.
    let none = read(Some("merch_none"), AT);
    assert!(none.registrations.is_empty() && none.registered.is_empty());
    // Expiring the active one ends it at that time, for the index too.
    let mut expired = active_own();
    expired.expires_at = Some(AT);
    let (s, e) = (scope.clone(), expired.clone());
    store
        .write(move |st| st.update_registration(&s, &e))
        .unwrap();
    assert!(read(None, AT).registrations.is_empty());
    assert_eq!(read(None, AT - 1).registrations, vec![expired]);
    let plans = plans();
    assert_eq!(plans.len(), 2);
    for plan in plans {
        assert!(plan.contains("registrations_active"), "{plan}");
        assert!(!plan.contains("SCAN registrations"), "{plan}");
        assert!(!plan.contains("Seq Scan"), "{plan}");
    }
}

/// After [`check`], on a ledger whose registrations' columns and index were taken away and
/// made again by the migration from the sealed records: the same reads.
pub(crate) fn check_migrated<D: Database>(store: &D) {
    let scope = Scope {
        account: "shop".into(),
        live: true,
    };
    let read = |seller: Option<&str>, at: i64| {
        store
            .calculation_reads(&scope, None, &[], Some(SellerAt { seller, at }))
            .unwrap()
    };
    let mut expired = active_own();
    expired.expires_at = Some(AT);
    assert_eq!(read(None, AT - 1).registrations, vec![expired]);
    assert!(read(None, AT).registrations.is_empty());
    assert_eq!(read(None, AT).registered, vec![RegistrationKind::SalesTax]);
    assert_eq!(read(Some("merch_3"), AT).registrations.len(), 500);
    assert!(read(Some("merch_none"), AT).registered.is_empty());
}
