//! The daily liability totals in PostgreSQL ([`super::super::days`]): tables
//! `liability_rows` and `liability_totals` (schema 6), their amounts exact `numeric[]`
//! added to in SQL (element by element), so that writes side by side on one day's row
//! add up. A report reads a range of the primary key (account, mode, day).

use rust_decimal::Decimal;
use tokio_postgres::Row;

use super::super::days::{
    row_amounts, row_of_amounts, DayChange, DayRow, DayState, DaySums, DayTotal,
};
use super::super::liability::RowKey;
use super::super::{Result, Scope, StoreError};
use super::queries::Pg;
use super::{pg_err, text, Conn};

/// Adds a row's amounts (`$10`, text) and entries to its day's.
const ADD_ROW: &str = "INSERT INTO liability_rows (account, live, day, country, region, code, name, authority, outlet, amounts, entries)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[]::numeric[], $11)
     ON CONFLICT (account, live, day, country, region, code, name, authority, outlet)
     DO UPDATE SET amounts = ARRAY(SELECT u.x + u.y FROM unnest(liability_rows.amounts, excluded.amounts)
             WITH ORDINALITY AS u(x, y, i) ORDER BY u.i),
         entries = liability_rows.entries + excluded.entries";

/// Adds a state's sums (`$8`, text) and counts to its day's.
const ADD_TOTAL: &str = "INSERT INTO liability_totals (account, live, day, country, region, currency, table_hash, sums, transactions, refunds, reversals)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[]::numeric[], $9, $10, $11)
     ON CONFLICT (account, live, day, country, region, currency, table_hash)
     DO UPDATE SET sums = ARRAY(SELECT u.x + u.y FROM unnest(liability_totals.sums, excluded.sums)
             WITH ORDINALITY AS u(x, y, i) ORDER BY u.i),
         transactions = liability_totals.transactions + excluded.transactions,
         refunds = liability_totals.refunds + excluded.refunds,
         reversals = liability_totals.reversals + excluded.reversals";

fn texts(numbers: &[Decimal]) -> Vec<String> {
    numbers.iter().map(|d| d.to_string()).collect()
}

/// Adds one booking to its day: its rows (`$4`…`$10`, one element a row, and `$11`, their
/// 16 amounts each in a row, as text) and its state total, in one statement: one round
/// trip a booking, as many rows as it has.
const ADD_CHANGE: &str = "WITH rows AS (
     INSERT INTO liability_rows (account, live, day, country, region, code, name, authority, outlet, amounts, entries)
     SELECT $1, $2, $3, u.country, u.region, u.code, u.name, u.authority, u.outlet,
         (SELECT array_agg(a.x::numeric ORDER BY a.i) FROM unnest($11::text[]) WITH ORDINALITY AS a(x, i)
             WHERE a.i > (u.n - 1) * 16 AND a.i <= u.n * 16),
         u.entries
     FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
         WITH ORDINALITY AS u(country, region, code, name, authority, outlet, entries, n)
     ON CONFLICT (account, live, day, country, region, code, name, authority, outlet)
     DO UPDATE SET amounts = ARRAY(SELECT v.x + v.y FROM unnest(liability_rows.amounts, excluded.amounts)
             WITH ORDINALITY AS v(x, y, i) ORDER BY v.i),
         entries = liability_rows.entries + excluded.entries
 )
 INSERT INTO liability_totals (account, live, day, country, region, currency, table_hash, sums, transactions, refunds, reversals)
     VALUES ($1, $2, $3, $12, $13, $14, $15, $16::text[]::numeric[], $17, $18, $19)
     ON CONFLICT (account, live, day, country, region, currency, table_hash)
     DO UPDATE SET sums = ARRAY(SELECT u.x + u.y FROM unnest(liability_totals.sums, excluded.sums)
             WITH ORDINALITY AS u(x, y, i) ORDER BY u.i),
         transactions = liability_totals.transactions + excluded.transactions,
         refunds = liability_totals.refunds + excluded.refunds,
         reversals = liability_totals.reversals + excluded.reversals";

/// The rows of a booking as the columns [`ADD_CHANGE`] takes: one array a column.
#[derive(Default)]
struct Columns {
    country: Vec<String>,
    region: Vec<String>,
    code: Vec<String>,
    name: Vec<String>,
    authority: Vec<String>,
    outlet: Vec<String>,
    entries: Vec<i64>,
    amounts: Vec<String>,
}

impl Columns {
    fn of(rows: &[DayRow]) -> Columns {
        let mut c = Columns::default();
        for r in rows {
            let k = &r.key;
            c.country.push(k.country.clone());
            c.region.push(k.region.clone());
            c.code.push(k.jurisdiction_code.clone());
            c.name.push(k.jurisdiction_name.clone());
            c.authority.push(k.authority_type.clone());
            c.outlet.push(k.outlet.clone());
            c.entries.push(r.entries);
            c.amounts.extend(texts(&row_amounts(&r.row)));
        }
        c
    }
}

/// Adds a booking (or one taken back) to the daily totals, in one statement. Its rows
/// are all of its day (a booking is one day's).
pub(super) fn add_day<C: Conn>(pg: &Pg<'_, C>, scope: &Scope, change: &DayChange) -> Result<()> {
    let account: &str = &scope.account;
    let t = &change.total;
    debug_assert!(change.rows.iter().all(|r| r.day == t.day));
    let c = Columns::of(&change.rows);
    let s = &t.state;
    let sums = texts(&s.sums());
    let account = account.to_string();
    pg.later(
        ADD_CHANGE,
        vec![
            Box::new(account),
            Box::new(scope.live),
            Box::new(t.day),
            Box::new(c.country),
            Box::new(c.region),
            Box::new(c.code),
            Box::new(c.name),
            Box::new(c.authority),
            Box::new(c.outlet),
            Box::new(c.entries),
            Box::new(c.amounts),
            Box::new(t.country.clone()),
            Box::new(t.region.clone()),
            Box::new(t.currency.clone()),
            Box::new(t.table_hash.clone()),
            Box::new(sums),
            Box::new(s.transactions),
            Box::new(s.refunds),
            Box::new(s.reversals),
        ],
    )
}

/// Exact numbers from a `numeric[]` read as `text[]`.
fn numbers<const N: usize>(row: &Row, i: usize, what: &str) -> Result<[Decimal; N]> {
    let t: Vec<String> = row.try_get(i).map_err(pg_err)?;
    let mut out = [Decimal::ZERO; N];
    if t.len() != N {
        return Err(StoreError::ledger(format!(
            "{what}: {} amounts, not {N}",
            t.len()
        )));
    }
    for (slot, s) in out.iter_mut().zip(&t) {
        *slot = s
            .parse()
            .map_err(|e| StoreError::ledger(format!("{what} {s:?}: {e}")))?;
    }
    Ok(out)
}

/// The totals of days `[days.0, days.1)`, of one region or all.
pub(super) fn read_days<C: Conn>(
    pg: &Pg<'_, C>,
    scope: &Scope,
    days: (i64, i64),
    region: Option<&str>,
) -> Result<(Vec<DayRow>, Vec<DayTotal>)> {
    let account: &str = &scope.account;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
        [&account, &scope.live, &days.0, &days.1, &region];
    let rows = pg.rows(
        "SELECT day, country, region, code, name, authority, outlet, amounts::text[], entries
         FROM liability_rows
         WHERE account = $1 AND live = $2 AND day >= $3 AND day < $4
             AND ($5::text IS NULL OR region = $5::text)",
        &params,
    )?;
    let rows = rows
        .iter()
        .map(|r| {
            Ok(DayRow {
                day: r.try_get(0).map_err(pg_err)?,
                key: RowKey {
                    country: text(r, 1)?,
                    region: text(r, 2)?,
                    jurisdiction_code: text(r, 3)?,
                    jurisdiction_name: text(r, 4)?,
                    authority_type: text(r, 5)?,
                    outlet: text(r, 6)?,
                },
                row: row_of_amounts(&numbers(r, 7, "daily liability row")?),
                entries: r.try_get(8).map_err(pg_err)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let totals = pg.rows(
        "SELECT day, country, region, currency, table_hash, sums::text[], transactions, refunds, reversals
         FROM liability_totals
         WHERE account = $1 AND live = $2 AND day >= $3 AND day < $4
             AND ($5::text IS NULL OR region = $5::text)",
        &params,
    )?;
    let totals = totals
        .iter()
        .map(|r| {
            let count = |i: usize| r.try_get::<_, i64>(i).map_err(pg_err);
            Ok(DayTotal {
                day: r.try_get(0).map_err(pg_err)?,
                country: text(r, 1)?,
                region: text(r, 2)?,
                currency: text(r, 3)?,
                table_hash: text(r, 4)?,
                state: DayState::from_parts(
                    [count(6)?, count(7)?, count(8)?],
                    numbers(r, 5, "daily liability total")?,
                ),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((rows, totals))
}

/// Writes totals summed in memory (schema 6's fill, a copied ledger's), each key once.
pub(super) async fn write_sums(
    tx: &deadpool_postgres::Transaction<'_>,
    sums: &DaySums,
) -> Result<()> {
    for ((account, live, day, k), (row, entries)) in &sums.rows {
        let amounts = texts(&row_amounts(row));
        tx.execute(
            ADD_ROW,
            &[
                account,
                live,
                day,
                &k.country,
                &k.region,
                &k.jurisdiction_code,
                &k.jurisdiction_name,
                &k.authority_type,
                &k.outlet,
                &amounts,
                entries,
            ],
        )
        .await
        .map_err(pg_err)?;
    }
    for ((account, live, day, country, region, currency, hash), s) in &sums.totals {
        let sums = texts(&s.sums());
        tx.execute(
            ADD_TOTAL,
            &[
                account,
                live,
                day,
                country,
                region,
                currency,
                hash,
                &sums,
                &s.transactions,
                &s.refunds,
                &s.reversals,
            ],
        )
        .await
        .map_err(pg_err)?;
    }
    Ok(())
}
