//! The daily liability totals in SQLite ([`super::super::days`]): tables `liability_rows`
//! and `liability_totals` (schema 9), their amounts sealed text like the nexus totals
//! (`<amounts…> <counts…> <digest>`), each key read, added to and written back in the
//! write that books it. A report reads a range of the primary key (account, mode, day).

use rusqlite::{params, Connection, OptionalExtension};
use rust_decimal::Decimal;

use super::super::days::{
    row_amounts, row_of_amounts, DayChange, DayRow, DayState, DaySums, DayTotal,
};
use super::super::liability::RowKey;
use super::super::seal::{damaged, digest};
use super::super::{Result, Scope};
use super::queries::run;
use super::sqlite_err;

/// Numbers and counts as sealed text: `<numbers…> <counts…> <digest of them>`.
pub(in crate::store) fn seal_numbers(numbers: &[Decimal], counts: &[i64]) -> String {
    let mut text = String::new();
    for n in numbers {
        if n.is_zero() {
            text.push('0');
        } else {
            text.push_str(&n.normalize().to_string());
        }
        text.push(' ');
    }
    for c in counts {
        text.push_str(&c.to_string());
        text.push(' ');
    }
    text.pop();
    let sum = digest(&text);
    format!("{text} {sum}")
}

/// The `N` numbers of sealed text, once its digest matches and its counts are `counts`
/// (the row's own columns).
pub(in crate::store) fn unseal_numbers<const N: usize>(
    stored: &str,
    counts: &[i64],
    what: &str,
) -> Result<[Decimal; N]> {
    let (text, sum) = stored
        .rsplit_once(' ')
        .ok_or_else(|| damaged(&format!("{what} without a digest")))?;
    if sum != digest(text) {
        return Err(damaged(&format!("{what} digest mismatch")));
    }
    let parts: Vec<&str> = text.split(' ').collect();
    if parts.len() != N + counts.len() {
        return Err(damaged(what));
    }
    for (part, count) in parts[N..].iter().zip(counts) {
        if part.parse::<i64>().ok() != Some(*count) {
            return Err(damaged(&format!("{what} counts")));
        }
    }
    let mut out = [Decimal::ZERO; N];
    for (slot, part) in out.iter_mut().zip(&parts[..N]) {
        *slot = part.parse().map_err(|_| damaged(what))?;
    }
    Ok(out)
}

/// Adds one row of a booking to its day's row.
fn add_row(conn: &Connection, scope: &Scope, r: &DayRow) -> Result<()> {
    let k = &r.key;
    let keys = params![
        &*scope.account,
        scope.live,
        r.day,
        k.country,
        k.region,
        k.jurisdiction_code,
        k.jurisdiction_name,
        k.authority_type,
        k.outlet
    ];
    let current: Option<(String, i64)> = conn
        .prepare_cached(
            "SELECT amounts, entries FROM liability_rows WHERE account = ?1 AND live = ?2 AND day = ?3
             AND country = ?4 AND region = ?5 AND code = ?6 AND name = ?7 AND authority = ?8 AND outlet = ?9",
        )
        .and_then(|mut stmt| stmt.query_row(keys, |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(sqlite_err)?;
    let mut amounts = row_amounts(&r.row);
    let mut entries = r.entries;
    if let Some((sealed, n)) = current {
        let had: [Decimal; 16] = unseal_numbers(&sealed, &[n], "daily liability row")?;
        amounts.iter_mut().zip(had).for_each(|(a, h)| *a += h);
        entries += n;
    }
    put_row(
        conn,
        &scope.account,
        scope.live,
        r.day,
        k,
        &amounts,
        entries,
    )
}

fn put_row(
    conn: &Connection,
    account: &str,
    live: bool,
    day: i64,
    k: &RowKey,
    amounts: &[Decimal; 16],
    entries: i64,
) -> Result<()> {
    run(
        conn,
        "INSERT INTO liability_rows (account, live, day, country, region, code, name, authority, outlet, amounts, entries)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (account, live, day, country, region, code, name, authority, outlet)
         DO UPDATE SET amounts = excluded.amounts, entries = excluded.entries",
        params![
            account,
            live,
            day,
            k.country,
            k.region,
            k.jurisdiction_code,
            k.jurisdiction_name,
            k.authority_type,
            k.outlet,
            seal_numbers(amounts, &[entries]),
            entries
        ],
    )
    .map(drop)
}

/// Adds a booking's state total to its day's.
fn add_total(conn: &Connection, scope: &Scope, t: &DayTotal) -> Result<()> {
    let keys = params![
        &*scope.account,
        scope.live,
        t.day,
        t.country,
        t.region,
        t.currency,
        t.table_hash
    ];
    let current: Option<(String, i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT sums, transactions, refunds, reversals FROM liability_totals WHERE account = ?1 AND live = ?2
             AND day = ?3 AND country = ?4 AND region = ?5 AND currency = ?6 AND table_hash = ?7",
        )
        .and_then(|mut stmt| {
            stmt.query_row(keys, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .optional()
        })
        .map_err(sqlite_err)?;
    let mut state = t.state;
    if let Some((sealed, a, b, c)) = current {
        let sums = unseal_numbers(&sealed, &[a, b, c], "daily liability total")?;
        state.add(&DayState::from_parts([a, b, c], sums));
    }
    let at = (&*scope.account, scope.live, t.day);
    put_total(conn, at, t, &state)
}

fn put_total(conn: &Connection, at: (&str, bool, i64), t: &DayTotal, s: &DayState) -> Result<()> {
    let counts = [s.transactions, s.refunds, s.reversals];
    run(
        conn,
        "INSERT INTO liability_totals (account, live, day, country, region, currency, table_hash, sums, transactions, refunds, reversals)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (account, live, day, country, region, currency, table_hash)
         DO UPDATE SET sums = excluded.sums, transactions = excluded.transactions,
             refunds = excluded.refunds, reversals = excluded.reversals",
        params![
            at.0,
            at.1,
            at.2,
            t.country,
            t.region,
            t.currency,
            t.table_hash,
            seal_numbers(&s.sums(), &counts),
            counts[0],
            counts[1],
            counts[2]
        ],
    )
    .map(drop)
}

/// Adds a booking (or one taken back) to the daily totals.
pub(super) fn add_day(conn: &Connection, scope: &Scope, change: &DayChange) -> Result<()> {
    for r in &change.rows {
        add_row(conn, scope, r)?;
    }
    add_total(conn, scope, &change.total)
}

/// The totals of days `[days.0, days.1)`, of one region or all.
pub(super) fn read_days(
    conn: &Connection,
    scope: &Scope,
    days: (i64, i64),
    region: Option<&str>,
) -> Result<(Vec<DayRow>, Vec<DayTotal>)> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT day, country, region, code, name, authority, outlet, amounts, entries FROM liability_rows
             WHERE account = ?1 AND live = ?2 AND day >= ?3 AND day < ?4 AND (?5 IS NULL OR region = ?5)",
        )
        .map_err(sqlite_err)?;
    let mut q = stmt
        .query(params![&*scope.account, scope.live, days.0, days.1, region])
        .map_err(sqlite_err)?;
    let mut rows = Vec::new();
    while let Some(r) = q.next().map_err(sqlite_err)? {
        let text = |i: usize| r.get::<_, String>(i).map_err(sqlite_err);
        let entries: i64 = r.get(8).map_err(sqlite_err)?;
        let amounts = unseal_numbers(&text(7)?, &[entries], "daily liability row")?;
        rows.push(DayRow {
            day: r.get(0).map_err(sqlite_err)?,
            key: RowKey {
                country: text(1)?,
                region: text(2)?,
                jurisdiction_code: text(3)?,
                jurisdiction_name: text(4)?,
                authority_type: text(5)?,
                outlet: text(6)?,
            },
            row: row_of_amounts(&amounts),
            entries,
        });
    }
    Ok((rows, read_totals(conn, scope, days, region)?))
}

fn read_totals(
    conn: &Connection,
    scope: &Scope,
    days: (i64, i64),
    region: Option<&str>,
) -> Result<Vec<DayTotal>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT day, country, region, currency, table_hash, sums, transactions, refunds, reversals
             FROM liability_totals
             WHERE account = ?1 AND live = ?2 AND day >= ?3 AND day < ?4 AND (?5 IS NULL OR region = ?5)",
        )
        .map_err(sqlite_err)?;
    let mut q = stmt
        .query(params![&*scope.account, scope.live, days.0, days.1, region])
        .map_err(sqlite_err)?;
    let mut out = Vec::new();
    while let Some(r) = q.next().map_err(sqlite_err)? {
        let text = |i: usize| r.get::<_, String>(i).map_err(sqlite_err);
        let count = |i: usize| r.get::<_, i64>(i).map_err(sqlite_err);
        let counts = [count(6)?, count(7)?, count(8)?];
        let sums = unseal_numbers(&text(5)?, &counts, "daily liability total")?;
        out.push(DayTotal {
            day: r.get(0).map_err(sqlite_err)?,
            country: text(1)?,
            region: text(2)?,
            currency: text(3)?,
            table_hash: text(4)?,
            state: DayState::from_parts(counts, sums),
        });
    }
    Ok(out)
}

/// Writes totals summed in memory (schema 9's fill), each key once.
pub(super) fn write_sums(conn: &Connection, sums: &DaySums) -> Result<()> {
    for ((account, live, day, key), (row, entries)) in &sums.rows {
        put_row(conn, account, *live, *day, key, &row_amounts(row), *entries)?;
    }
    for ((account, live, day, country, region, currency, hash), state) in &sums.totals {
        let total = DayTotal {
            day: *day,
            country: country.clone(),
            region: region.clone(),
            currency: currency.clone(),
            table_hash: hash.clone(),
            state: *state,
        };
        put_total(conn, (account, *live, *day), &total, state)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_numbers_come_back_only_as_written() {
        let nums = [Decimal::new(72_500, 2), Decimal::ZERO, Decimal::from(-27)];
        let sealed = seal_numbers(&nums, &[3]);
        assert!(sealed.starts_with("725 0 -27 3 "), "{sealed}");
        assert_eq!(unseal_numbers::<3>(&sealed, &[3], "x").unwrap(), nums);
        // A count column that disagrees, a number changed, a missing digest: damage.
        assert!(unseal_numbers::<3>(&sealed, &[4], "x").is_err());
        assert!(unseal_numbers::<3>(&sealed.replacen("725", "726", 1), &[3], "x").is_err());
        assert!(unseal_numbers::<3>("725", &[3], "x").is_err());
        assert!(unseal_numbers::<2>(&sealed, &[3], "x").is_err());
    }
}
