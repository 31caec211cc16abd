//! Shared fixtures for levy's criterion benches.
//!
//! [`Synthetic`] is a deterministic, realistically sized US rate data set: 50 states,
//! 3,000 counties, 10,000 cities and 2,000 districts; 40,000 ZIP codes, each divided into
//! 25 ZIP+4 ranges (1,000,000 in all) that each lie in five jurisdictions; and 200,000 IPv4
//! ranges. The same data is loaded three ways, so that each bench measures levy beside a
//! baseline in the same run: a levy [`Table`], a `HashMap<String, Vec<Rate>>`, and an
//! indexed in-memory SQLite database.

use std::collections::{BTreeMap, HashMap};

use levy_core::{
    round_minor, Address, AlignedBytes, AutomaticTax, Currency, Customer, Date, Decimal,
    IpLocationSpec, JurisdictionId, JurisdictionSpec, Level, RuleSpec, Sale, SaleLine, Table,
    TableBuilder, TaxType,
};

#[path = "report_fixture.rs"]
pub mod report;
#[path = "service_fixture.rs"]
pub mod service;

/// A small, fast, deterministic generator (SplitMix64), so that fixtures are identical in
/// every run without a dependency.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// How big a data set to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// ZIP codes.
    pub zips: u32,
    /// ZIP+4 ranges per ZIP code (they split 0000..=9999 evenly).
    pub ranges_per_zip: u32,
    /// IPv4 ranges.
    pub ipv4_ranges: u32,
}

impl Size {
    /// The full size: 40,000 ZIPs, 1,000,000 ZIP+4 ranges, 200,000 IPv4 ranges.
    pub const FULL: Size = Size {
        zips: 40_000,
        ranges_per_zip: 25,
        ipv4_ranges: 200_000,
    };
    /// A small size for `cargo bench -- --test`, which runs each bench once.
    pub const SMOKE: Size = Size {
        zips: 400,
        ranges_per_zip: 25,
        ipv4_ranges: 2_000,
    };

    /// [`Size::SMOKE`] when the bench binary was started with `--test`, else [`Size::FULL`].
    pub fn from_args() -> Size {
        if std::env::args().any(|a| a == "--test") {
            Size::SMOKE
        } else {
            Size::FULL
        }
    }
}

/// One jurisdiction's rate, as the baselines store it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Jurisdiction index.
    pub jurisdiction: u32,
    /// Rate as a fraction.
    pub rate: Decimal,
}

/// A ZIP+4 range and the five jurisdictions it lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zip4Range {
    /// ZIP5.
    pub zip5: u32,
    /// First plus-4.
    pub low: u16,
    /// Last plus-4.
    pub high: u16,
    /// State, county, city and two districts (jurisdiction indexes).
    pub members: [u32; 5],
}

impl Zip4Range {
    /// The range's first ZIP+4, as a request writes it (`10234-0400`).
    pub fn key(&self) -> String {
        format!("{:05}-{:04}", self.zip5, self.low)
    }
}

/// An IPv4 range and the ZIP its location has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Range {
    /// First address.
    pub start: u32,
    /// Last address.
    pub end: u32,
    /// Index of the ZIP (into `Synthetic::zips`) of its location.
    pub zip: u32,
}

/// The synthetic data set.
#[derive(Clone, Debug)]
pub struct Synthetic {
    /// Every jurisdiction: code, level, state index, rate.
    pub jurisdictions: Vec<(String, Level, u32, Decimal)>,
    /// ZIP codes: number, state index, the ZIP-wide members.
    pub zips: Vec<(u32, u32, [u32; 5])>,
    /// ZIP+4 ranges, sorted by (zip5, low).
    pub ranges: Vec<Zip4Range>,
    /// IPv4 ranges, sorted, disjoint.
    pub ipv4: Vec<Ipv4Range>,
}

const STATES: u32 = 50;
const COUNTIES_PER_STATE: u32 = 60;
const CITIES_PER_STATE: u32 = 200;
const DISTRICTS_PER_STATE: u32 = 40;

/// Two capital letters naming state `i` (AA, AB, ...).
pub fn state_code(i: u32) -> String {
    let b = [b'A' + (i / 26) as u8, b'A' + (i % 26) as u8];
    String::from_utf8(b.to_vec()).expect("ASCII")
}

impl Synthetic {
    /// Generates the data set of the given size (deterministic).
    pub fn generate(size: Size) -> Synthetic {
        let mut rng = SplitMix::new(0x1e57_da7a);
        let mut jurisdictions = Vec::new();
        // Ids: states first, then each state's counties, cities and districts in blocks.
        for s in 0..STATES {
            jurisdictions.push((
                format!("S{s:02}"),
                Level::State,
                s,
                Decimal::new(40_000 + rng.below(35_000) as i64, 6),
            ));
        }
        let county0 = jurisdictions.len() as u32;
        for s in 0..STATES {
            for c in 0..COUNTIES_PER_STATE {
                let rate = Decimal::new(2_500 + rng.below(17_500) as i64, 6);
                jurisdictions.push((format!("S{s:02}C{c:03}"), Level::County, s, rate));
            }
        }
        let city0 = jurisdictions.len() as u32;
        for s in 0..STATES {
            for c in 0..CITIES_PER_STATE {
                let rate = Decimal::new(5_000 + rng.below(35_000) as i64, 6);
                jurisdictions.push((format!("S{s:02}T{c:03}"), Level::City, s, rate));
            }
        }
        let district0 = jurisdictions.len() as u32;
        for s in 0..STATES {
            for c in 0..DISTRICTS_PER_STATE {
                let rate = Decimal::new(1_000 + rng.below(9_000) as i64, 6);
                jurisdictions.push((format!("S{s:02}D{c:03}"), Level::District, s, rate));
            }
        }

        let mut zips = Vec::with_capacity(size.zips as usize);
        let mut ranges = Vec::with_capacity((size.zips * size.ranges_per_zip) as usize);
        let width = 10_000 / size.ranges_per_zip;
        for z in 0..size.zips {
            // ZIPs spread over 01000..=89999, grouped by state as the real ones are.
            let number = 1_000 + z * (89_000 / size.zips);
            let s = z * STATES / size.zips;
            let county =
                county0 + s * COUNTIES_PER_STATE + rng.below(u64::from(COUNTIES_PER_STATE)) as u32;
            let city = |rng: &mut SplitMix| {
                city0 + s * CITIES_PER_STATE + rng.below(u64::from(CITIES_PER_STATE)) as u32
            };
            // Two kinds of district (transit, then others), so that a place's two differ.
            let half = DISTRICTS_PER_STATE / 2;
            let district = |rng: &mut SplitMix, kind: u32| {
                district0
                    + s * DISTRICTS_PER_STATE
                    + kind * half
                    + rng.below(u64::from(half)) as u32
            };
            // Each ZIP straddles up to three cities and two district pairs.
            let cities = [city(&mut rng), city(&mut rng), city(&mut rng)];
            let d1 = district(&mut rng, 0);
            let d2 = [district(&mut rng, 1), district(&mut rng, 1)];
            let zip_members = [s, county, cities[0], d1, d2[0]];
            zips.push((number, s, zip_members));
            for r in 0..size.ranges_per_zip {
                let low = (r * width) as u16;
                let high = if r + 1 == size.ranges_per_zip {
                    9_999
                } else {
                    (low as u32 + width - 1) as u16
                };
                let members = [
                    s,
                    county,
                    cities[rng.below(3) as usize],
                    d1,
                    d2[rng.below(2) as usize],
                ];
                ranges.push(Zip4Range {
                    zip5: number,
                    low,
                    high,
                    members,
                });
            }
        }

        // IPv4 ranges: disjoint blocks of 1..=4096 addresses with gaps, from 1.0.0.0 up.
        let mut ipv4 = Vec::with_capacity(size.ipv4_ranges as usize);
        let mut next = 0x0100_0000u32;
        for _ in 0..size.ipv4_ranges {
            let start = next + rng.below(2_048) as u32;
            let end = start + rng.below(4_096) as u32;
            ipv4.push(Ipv4Range {
                start,
                end,
                zip: rng.below(u64::from(size.zips)) as u32,
            });
            next = end + 1;
        }
        Synthetic {
            jurisdictions,
            zips,
            ranges,
            ipv4,
        }
    }

    /// The levy table of this data: each jurisdiction one flat rule on general merchandise.
    pub fn levy_table(&self) -> Table<AlignedBytes> {
        let mut b = TableBuilder::new();
        b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property")
            .expect("tax code");
        b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
        let mut ids = Vec::with_capacity(self.jurisdictions.len());
        for (code, level, s, rate) in &self.jurisdictions {
            let id = b
                .jurisdiction(JurisdictionSpec {
                    code: code.clone(),
                    name: code.clone(),
                    level: *level,
                    country: "US".into(),
                    region: state_code(*s),
                    authority: String::new(),
                    tax_type: TaxType::Sales,
                })
                .expect("jurisdiction");
            b.rule(RuleSpec::flat(
                id,
                "GENERAL_MERCHANDISE",
                *rate,
                Date::MIN,
                Date::MAX,
                "GENERAL",
            ))
            .expect("rule");
            ids.push(id);
        }
        let js = |m: &[u32; 5]| -> [JurisdictionId; 5] { m.map(|j| ids[j as usize]) };
        for s in 0..STATES {
            b.region(
                "US",
                &state_code(s),
                &format!("STATE {s}"),
                &[ids[s as usize]],
                "",
            )
            .expect("region");
        }
        for (number, s, members) in &self.zips {
            b.zip(*number, &state_code(*s), "CITY", &js(members), 1)
                .expect("zip");
        }
        for r in &self.ranges {
            b.zip4(r.zip5, r.low, r.high, &js(&r.members), Date::MIN, Date::MAX)
                .expect("zip4");
        }
        for r in &self.ipv4 {
            let (number, s, _) = self.zips[r.zip as usize];
            let loc = IpLocationSpec {
                country: "US".into(),
                region: state_code(s),
                postal: format!("{number:05}"),
                ..Default::default()
            };
            b.ipv4_range(r.start, r.end, loc).expect("ipv4");
        }
        Table::from_bytes(&b.build(0).expect("build")).expect("open")
    }

    /// The baseline map: each ZIP+4 range's first ZIP+4 (`10234-0400`) to its rates.
    pub fn hash_map(&self) -> HashMap<String, Vec<Rate>> {
        self.ranges
            .iter()
            .map(|r| {
                let rates = r
                    .members
                    .iter()
                    .map(|&j| Rate {
                        jurisdiction: j,
                        rate: self.jurisdictions[j as usize].3,
                    })
                    .collect();
                (r.key(), rates)
            })
            .collect()
    }

    /// The baseline IPv4 map: range start to (end, ZIP index).
    pub fn ipv4_btree(&self) -> BTreeMap<u32, (u32, u32)> {
        self.ipv4
            .iter()
            .map(|r| (r.start, (r.end, r.zip)))
            .collect()
    }

    /// The baseline database: an in-memory SQLite with the same ranges and rates, indexed
    /// on (zip5, low), rates stored as integer millionths.
    pub fn sqlite(&self) -> rusqlite::Connection {
        let mut db = rusqlite::Connection::open_in_memory().expect("sqlite");
        db.execute_batch(
            "CREATE TABLE jurisdiction (id INTEGER PRIMARY KEY, rate_e6 INTEGER NOT NULL);
             CREATE TABLE zip4 (zip5 INTEGER NOT NULL, low INTEGER NOT NULL, high INTEGER NOT NULL,
                                j1 INTEGER, j2 INTEGER, j3 INTEGER, j4 INTEGER, j5 INTEGER);",
        )
        .expect("schema");
        let tx = db.transaction().expect("transaction");
        {
            let mut ins = tx
                .prepare("INSERT INTO jurisdiction VALUES (?1, ?2)")
                .expect("prepare");
            for (i, j) in self.jurisdictions.iter().enumerate() {
                let e6 = (j.3 * Decimal::from(1_000_000)).trunc().mantissa() as i64;
                ins.execute((i as i64, e6)).expect("insert");
            }
            let mut ins = tx
                .prepare("INSERT INTO zip4 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .expect("prepare");
            for r in &self.ranges {
                let m = r.members;
                ins.execute((r.zip5, r.low, r.high, m[0], m[1], m[2], m[3], m[4]))
                    .expect("insert");
            }
        }
        tx.commit().expect("commit");
        db.execute_batch("CREATE INDEX zip4_key ON zip4 (zip5, low);")
            .expect("index");
        db
    }

    /// `n` request keys (`10234-0400`, each the first ZIP+4 of a range, so that every
    /// store answers from the same rows), in random order.
    pub fn zip4_keys(&self, n: usize, seed: u64) -> Vec<String> {
        let mut rng = SplitMix::new(seed);
        (0..n)
            .map(|_| self.ranges[rng.below(self.ranges.len() as u64) as usize].key())
            .collect()
    }

    /// `n` IPv4 addresses, nine in ten inside some range, in random order.
    pub fn ipv4_keys(&self, n: usize, seed: u64) -> Vec<u32> {
        let mut rng = SplitMix::new(seed);
        (0..n)
            .map(|_| {
                let r = self.ipv4[rng.below(self.ipv4.len() as u64) as usize];
                if rng.below(10) == 0 {
                    r.end.wrapping_add(1)
                } else {
                    r.start + rng.below(u64::from(r.end - r.start) + 1) as u32
                }
            })
            .collect()
    }
}

/// The sale every resolve-and-calculate bench prices: one $123.45 line of general
/// merchandise.
pub fn bench_sale<D>(table: &Table<D>) -> Sale {
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date: bench_date(),
        origin_country: None,
        rounding: levy_core::Rounding::Line,
        lines: vec![SaleLine {
            amount: Decimal::from(12_345),
            quantity: 1,
            per_unit: false,
            tax_code: table.category("GENERAL_MERCHANDISE").expect("category"),
        }],
    }
}

/// The day of every bench sale.
pub fn bench_date() -> Date {
    Date::from_ymd(2026, 3, 1).expect("a real day")
}

/// A US address with only a ZIP+4, as a request sends it.
pub fn zip4_address(key: &str) -> Address {
    Address {
        postal_code: key.to_string(),
        country: "US".into(),
        ..Default::default()
    }
}

/// levy: resolve the ZIP+4 and calculate the sale; the line's tax in cents.
pub fn levy_tax<D>(table: &Table<D>, address: &Address, sale: &Sale) -> Decimal {
    let location = table.resolve(address, sale.date).expect("resolves");
    table
        .calculate(&location, sale)
        .expect("calculates")
        .total_tax
}

/// Baseline: hash the key, sum rate × amount, round once; the tax in cents.
pub fn hash_map_tax(map: &HashMap<String, Vec<Rate>>, key: &str, amount: Decimal) -> Decimal {
    let rates = map.get(key).expect("known key");
    round_minor(rates.iter().map(|r| r.rate * amount).sum())
}

/// Baseline: one indexed SQLite query for the range and its five rates, then the same sum.
pub fn sqlite_tax(stmt: &mut rusqlite::CachedStatement<'_>, key: &str, amount: Decimal) -> Decimal {
    let (zip5, plus4) = levy_core::parse_us_zip(key).expect("a ZIP+4");
    let plus4 = plus4.expect("a plus-4");
    let mut rows = stmt.query((zip5, plus4)).expect("query");
    let mut sum = Decimal::ZERO;
    while let Some(row) = rows.next().expect("row") {
        let e6: i64 = row.get(0).expect("rate");
        sum += Decimal::new(e6, 6) * amount;
    }
    round_minor(sum)
}

/// The baseline SQL: the range holding the ZIP+4 (greatest `low` not above it) joined to
/// its five jurisdictions' rates.
pub const SQLITE_QUERY: &str = "
    WITH r AS (SELECT j1, j2, j3, j4, j5, high FROM zip4
               WHERE zip5 = ?1 AND low <= ?2 ORDER BY low DESC LIMIT 1)
    SELECT j.rate_e6 FROM r JOIN jurisdiction j ON j.id IN (r.j1, r.j2, r.j3, r.j4, r.j5)
    WHERE r.high >= ?2";

/// Baseline: the IPv4 range holding `ip` by `BTreeMap::range`; the ZIP index.
pub fn btree_ipv4(map: &BTreeMap<u32, (u32, u32)>, ip: u32) -> Option<u32> {
    let (_, &(end, zip)) = map.range(..=ip).next_back()?;
    (ip <= end).then_some(zip)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All three stores answer the same tax for the same keys, and levy's IP lookup agrees
    /// with the BTreeMap's.
    #[test]
    fn stores_agree() {
        let data = Synthetic::generate(Size::SMOKE);
        let table = data.levy_table();
        let map = data.hash_map();
        let db = data.sqlite();
        let mut stmt = db.prepare_cached(SQLITE_QUERY).unwrap();
        let sale = bench_sale(&table);
        // The kept buffers go from key to key, as in the bench, and must give the same tax
        // as fresh ones for each.
        let mut buffers = levy_build::bench::Buffers::default();
        for key in data.zip4_keys(500, 7) {
            let levy = levy_tax(&table, &zip4_address(&key), &sale);
            assert_eq!(
                levy,
                levy_build::bench::levy_tax(
                    &table,
                    &zip4_address(&key),
                    &sale,
                    sale.date,
                    &mut buffers
                ),
                "{key}"
            );
            assert_eq!(
                levy,
                hash_map_tax(&map, &key, Decimal::from(12_345)),
                "{key}"
            );
            assert_eq!(
                levy,
                sqlite_tax(&mut stmt, &key, Decimal::from(12_345)),
                "{key}"
            );
        }
        let btree = data.ipv4_btree();
        for ip in data.ipv4_keys(2_000, 9) {
            let levy = table
                .lookup_ip(std::net::Ipv4Addr::from(ip).into())
                .map(|p| p.postal().to_string());
            let base = btree_ipv4(&btree, ip).map(|z| format!("{:05}", data.zips[z as usize].0));
            assert_eq!(levy, base, "{ip}");
        }
    }
}
