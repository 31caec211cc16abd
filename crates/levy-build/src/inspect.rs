//! `levy info` and `levy diff`: what a table holds, and what changed between two.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use levy_core::{Date, Decimal, Level, Table};

/// Table decimals are the 16 bytes of `Decimal::serialize` (see `levy_core::model`).
fn load_decimal(bytes: &[u8; 16]) -> Decimal {
    Decimal::deserialize(*bytes)
}

fn date_text(d: i32) -> String {
    match Date(d) {
        Date::MIN => "-".into(),
        Date::MAX => "-".into(),
        d => {
            let (y, m, dd) = d.ymd();
            format!("{y:04}-{m:02}-{dd:02}")
        }
    }
}

fn interval(from: i32, to: i32) -> String {
    format!("{}..{}", date_text(from), date_text(to))
}

/// A readable summary of a table: header, manifest and counts.
pub fn info<D>(table: &Table<D>) -> String {
    let h = table.header();
    let d = table.data();
    let mut s = String::new();
    let _ = writeln!(s, "format version  {}", h.format_version);
    let _ = writeln!(
        s,
        "build time      {} ({})",
        h.build_time,
        date_text(Date::from_unix_seconds(h.build_time).0)
    );
    // Every way to get a table here (`AnyTable::open_file`, `Table::open`) verified it.
    let _ = writeln!(s, "content hash    {} (BLAKE3, verified)", h.hash_hex());
    let _ = writeln!(
        s,
        "size            {} bytes",
        h.archive_len + levy_core::table::HEADER_LEN as u64
    );
    let _ = writeln!(s, "sources         {}", d.manifest.len());
    for e in d.manifest.iter() {
        let _ = writeln!(
            s,
            "  {:<15} {:<40} {} read {} skipped {} period {} horizon {}",
            e.kind.as_str(),
            e.name.as_str(),
            &e.sha256.as_str()[..e.sha256.len().min(12)],
            e.rows_read.to_native(),
            e.rows_skipped.to_native(),
            e.period.as_str(),
            date_text(e.horizon.to_native())
        );
        if !e.publication.is_empty() {
            let _ = writeln!(s, "    from {}", e.publication.as_str());
        }
    }
    counts(&mut s, table);
    coverage(&mut s, table);
    horizons(&mut s, table);
    s
}

/// `levy info`'s span of each region: the first day the table holds its state or country
/// tax (a sale before it is refused), and its horizon, the earliest among its
/// jurisdictions' (a sale after it is answered at most `PARTIAL`, noted `STALE_TABLE`), with
/// the input it comes from.
fn horizons<D>(s: &mut String, table: &Table<D>) {
    // Region key -> (first day of a state-level tax, earliest horizon and its source).
    type Span = (Option<Date>, Option<(Date, u32)>);
    let mut spans: BTreeMap<String, Span> = BTreeMap::new();
    for j in 0..table.jurisdiction_count() {
        let id = levy_core::JurisdictionId(j as u32);
        let Some(jur) = table.jurisdiction(id) else {
            continue;
        };
        let key = match jur.region() {
            "" => jur.country().to_string(),
            r => format!("{}-{r}", jur.country()),
        };
        let span = spans.entry(key).or_default();
        let top = matches!(jur.level(), Level::Country | Level::State | Level::Province);
        if let (true, Some(first)) = (top, table.first_day(id)) {
            span.0 = Some(span.0.map_or(first, |f| f.min(first)));
        }
        if let Some((h, src)) = table.horizon(id) {
            if span.1.is_none_or(|(o, _)| h < o) {
                span.1 = Some((h, src));
            }
        }
    }
    let _ = writeln!(
        s,
        "horizons        each region's first day (a sale before it is refused) and horizon \
         (a sale after it is answered at most PARTIAL, noted STALE_TABLE), with its input"
    );
    let manifest = &table.data().manifest;
    for (key, (first, horizon)) in &spans {
        let first = first.map_or("-".to_string(), |d| d.to_string());
        let horizon = match horizon {
            Some((h, src)) => {
                let name = manifest.get(*src as usize).map_or("?", |e| e.name.as_str());
                format!("{h} ({name})")
            }
            None => "none".to_string(),
        };
        let _ = writeln!(s, "  {key:<7} from {first:<10} to {horizon}");
    }
}

/// `levy info`'s counts: jurisdictions by level, rules, codes, places and ranges.
fn counts<D>(s: &mut String, table: &Table<D>) {
    let d = table.data();
    let mut levels: BTreeMap<&str, usize> = BTreeMap::new();
    for j in 0..table.jurisdiction_count() {
        if let Some(j) = table.jurisdiction(levy_core::JurisdictionId(j as u32)) {
            *levels.entry(j.level().as_str()).or_default() += 1;
        }
    }
    let by_level: Vec<String> = levels.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let _ = writeln!(
        s,
        "jurisdictions   {} ({})",
        table.jurisdiction_count(),
        by_level.join(", ")
    );
    let _ = writeln!(s, "rules           {}", d.rules.len());
    let _ = writeln!(s, "tax codes       {}", d.tax_codes.len());
    let _ = writeln!(s, "categories      {}", d.categories.len());
    let _ = writeln!(s, "holidays        {}", d.holidays.len());
    let _ = writeln!(
        s,
        "jurisdiction sets {}",
        d.jset_start.len().saturating_sub(1)
    );
    let _ = writeln!(s, "ZIP codes       {}", d.zips.len());
    let _ = writeln!(s, "ZIP+4 ranges    {}", d.zip4.len());
    let _ = writeln!(s, "street ranges   {}", d.streets.len());
    let _ = writeln!(s, "regions         {}", d.regions.len());
    let _ = writeln!(s, "postal prefixes {}", d.postal_prefixes.len());
    let _ = writeln!(s, "IPv4 ranges     {}", d.ipv4.len());
    let _ = match d.ipv4_top_bits {
        0 => writeln!(s, "IPv4 index      none (a binary search over every range)"),
        bits => writeln!(
            s,
            "IPv4 index      /{bits} blocks ({} entries)",
            d.ipv4_top.len()
        ),
    };
    let _ = writeln!(s, "IPv6 ranges     {}", d.ipv6.len());
}

/// `levy info`'s coverage: the levels the places of each US state and Canadian province
/// name, and the coverage of an answer that knows only the region.
fn coverage<D>(s: &mut String, table: &Table<D>) {
    let sources = local_sources(table);
    let _ = writeln!(
        s,
        "coverage        levels the places of each US state and Canadian province name; \
         the coverage of an answer that knows only the region; the inputs of each US state's \
         local rates, by level"
    );
    for r in table.data().regions.iter() {
        let country = std::str::from_utf8(&r.country).unwrap_or("??");
        if !matches!(country, "US" | "CA") || r.region.is_empty() {
            continue;
        }
        let bits = r.levels;
        let names: Vec<&str> = [
            levy_core::Level::Country,
            levy_core::Level::State,
            levy_core::Level::Province,
            levy_core::Level::County,
            levy_core::Level::City,
            levy_core::Level::District,
        ]
        .into_iter()
        .filter(|l| bits & (1 << (*l as u8)) != 0)
        .map(levy_core::Level::as_str)
        .collect();
        let region_cov = match r.coverage {
            2 => "FULL",
            1 => "PARTIAL",
            _ => "STATE_ONLY",
        };
        let from = match (country, sources.get(r.region.as_str())) {
            ("US", Some(by_level)) => {
                local_sources_text(by_level, named_only(table, r.region.as_str()))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "  {country}-{:<3} {:<40} region-level {region_cov}{from}",
            r.region.as_str(),
            names.join(" ")
        );
    }
}

/// Per US state, per local level, the inputs (manifest names) whose general rates the
/// state's local jurisdictions of that level carry: where each level comes from.
fn local_sources<D>(table: &Table<D>) -> BTreeMap<String, BTreeMap<u8, BTreeSet<String>>> {
    let d = table.data();
    let general = table.tax_code("GENERAL_MERCHANDISE").map(|c| c.0);
    let mut out: BTreeMap<String, BTreeMap<u8, BTreeSet<String>>> = BTreeMap::new();
    for r in d.rules.iter() {
        if Some(r.tax_code.to_native()) != general {
            continue;
        }
        let Some(j) = table.jurisdiction(levy_core::JurisdictionId(r.jurisdiction.to_native()))
        else {
            continue;
        };
        let Some(e) = d.manifest.get(r.source.to_native() as usize) else {
            continue;
        };
        if j.country() != "US" || !j.level().is_local() || e.kind.as_str() == "curated" {
            continue;
        }
        out.entry(j.region().to_string())
            .or_default()
            .entry(j.level() as u8)
            .or_default()
            .insert(e.name.as_str().to_string());
    }
    out
}

/// The level bits of a state that only a city named in an address brings (no ZIP period
/// of the state names them).
fn named_only<D>(table: &Table<D>, state: &str) -> u8 {
    let d = table.data();
    let levels = |jset: u32| -> u8 {
        table
            .jset(levy_core::JsetId(jset))
            .filter_map(|j| table.jurisdiction(j))
            .fold(0, |acc, j| acc | 1 << (j.level() as u8))
    };
    let (mut by_zip, mut by_name) = (0u8, 0u8);
    let zips: BTreeSet<u32> = d
        .zips
        .iter()
        .filter(|z| z.state.as_str() == state)
        .map(|z| {
            for p in z.periods.iter() {
                by_zip |= levels(p.jset.to_native());
            }
            z.zip.to_native()
        })
        .collect();
    for c in d
        .zip_cities
        .iter()
        .filter(|c| zips.contains(&c.zip.to_native()))
    {
        by_name |= levels(c.jset.to_native());
    }
    by_name & !by_zip
}

/// `  COUNTY FL.toml; CITY (named) WIR...csv`: each local level and its inputs.
fn local_sources_text(by_level: &BTreeMap<u8, BTreeSet<String>>, named_only: u8) -> String {
    let mut parts = Vec::new();
    for (&level, names) in by_level {
        let name = [Level::County, Level::City, Level::District]
            .into_iter()
            .find(|l| *l as u8 == level)
            .map_or("LOCAL", Level::as_str);
        let how = if named_only & (1 << level) != 0 {
            " (a city the address names)"
        } else {
            ""
        };
        let list: Vec<&str> = names.iter().map(String::as_str).collect();
        parts.push(format!("{name}{how} {}", list.join(", ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  local: {}", parts.join("; "))
    }
}

/// A rule added, removed or changed, named by jurisdiction code and tax code.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RuleChange {
    /// Jurisdiction code.
    pub jurisdiction: String,
    /// Tax code name.
    pub tax_code: String,
    /// Interval in force, `YYYY-MM-DD..YYYY-MM-DD` (`-` for open).
    pub interval: String,
    /// Rate (with band, unit range and fee when not plain) before; `None` when added.
    pub old: Option<String>,
    /// After; `None` when removed.
    pub new: Option<String>,
}

/// A product's treatment in a place that changed: a cell of the taxability matrix added,
/// removed, or with another treatment or source.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TaxabilityChange {
    /// The place as the matrix names it (`US-TN`, `CA-ON`, `DE`).
    pub place: String,
    /// Tax code name.
    pub tax_code: String,
    /// The levels (`state`, `local`, `all`, `federal`, `provincial`, `country`, or the
    /// jurisdictions a cell names).
    pub level: String,
    /// Days in force, `YYYY-MM-DD..YYYY-MM-DD` (`-` for open), with the per-sale threshold
    /// when the cell has one.
    pub interval: String,
    /// The treatment and its source before; `None` when added.
    pub old: Option<String>,
    /// After; `None` when removed.
    pub new: Option<String>,
}

/// A place (ZIP, ZIP+4 range, street range) whose jurisdictions changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ZoneChange {
    /// The place, for example `37010`, `55025-0100..2127 2019-01-01..2019-03-31`.
    pub place: String,
    /// Jurisdiction codes before; empty when the place is new.
    pub old: Vec<String>,
    /// After; empty when removed.
    pub new: Vec<String>,
}

/// A jurisdiction added or removed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// Code.
    pub code: String,
    /// Name.
    pub name: String,
    /// Level.
    pub level: String,
}

/// What changed between two tables.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Diff {
    /// Jurisdictions only in the new table.
    pub jurisdictions_added: Vec<Change>,
    /// Jurisdictions only in the old table.
    pub jurisdictions_removed: Vec<Change>,
    /// Rules added, removed or with another rate.
    pub rules: Vec<RuleChange>,
    /// ZIP codes whose jurisdictions changed.
    pub zips: Vec<ZoneChange>,
    /// ZIP+4 ranges added, removed or moved.
    pub zip4: Vec<ZoneChange>,
    /// Street ranges added, removed or moved.
    pub streets: Vec<ZoneChange>,
    /// IP ranges whose place changed, as text.
    pub ip_ranges: Vec<ZoneChange>,
    /// Products whose treatment in a place changed (the taxability matrix).
    pub taxability: Vec<TaxabilityChange>,
}

impl Diff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.jurisdictions_added.is_empty()
            && self.jurisdictions_removed.is_empty()
            && self.rules.is_empty()
            && self.zips.is_empty()
            && self.zip4.is_empty()
            && self.streets.is_empty()
            && self.ip_ranges.is_empty()
            && self.taxability.is_empty()
    }

    /// As text, one change a line.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for j in &self.jurisdictions_added {
            let _ = writeln!(s, "+ jurisdiction {} {} ({})", j.code, j.name, j.level);
        }
        for j in &self.jurisdictions_removed {
            let _ = writeln!(s, "- jurisdiction {} {} ({})", j.code, j.name, j.level);
        }
        for r in &self.rules {
            let what = format!("rule {} {} {}", r.jurisdiction, r.tax_code, r.interval);
            let _ = match (&r.old, &r.new) {
                (None, Some(n)) => writeln!(s, "+ {what}: {n}"),
                (Some(o), None) => writeln!(s, "- {what}: {o}"),
                (Some(o), Some(n)) => writeln!(s, "~ {what}: {o} -> {n}"),
                (None, None) => Ok(()),
            };
        }
        for t in &self.taxability {
            let what = format!(
                "taxability {} {} {} {}",
                t.place, t.tax_code, t.level, t.interval
            );
            let _ = match (&t.old, &t.new) {
                (None, Some(n)) => writeln!(s, "+ {what}: {n}"),
                (Some(o), None) => writeln!(s, "- {what}: {o}"),
                (Some(o), Some(n)) => writeln!(s, "~ {what}: {o} -> {n}"),
                (None, None) => Ok(()),
            };
        }
        for (label, list) in [
            ("ZIP", &self.zips),
            ("ZIP+4", &self.zip4),
            ("street", &self.streets),
            ("IP", &self.ip_ranges),
        ] {
            for z in list {
                let sign = match (z.old.is_empty(), z.new.is_empty()) {
                    (true, false) => '+',
                    (false, true) => '-',
                    _ => '~',
                };
                let _ = writeln!(
                    s,
                    "{sign} {label} {}: [{}] -> [{}]",
                    z.place,
                    z.old.join(" "),
                    z.new.join(" ")
                );
            }
        }
        if s.is_empty() {
            s.push_str("no changes\n");
        }
        s
    }

    /// As pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

fn rule_map<D>(t: &Table<D>) -> BTreeMap<(String, String, String, String), String> {
    let d = t.data();
    let mut out = BTreeMap::new();
    for r in d.rules.iter() {
        let j = d
            .jurisdictions
            .get(r.jurisdiction.to_native() as usize)
            .map(|j| j.code.as_str())
            .unwrap_or("?");
        let code = d
            .tax_codes
            .get(r.tax_code.to_native() as usize)
            .map(|c| c.name.as_str())
            .unwrap_or("?");
        let (bmin, bmax) = (load_decimal(&r.base_min), load_decimal(&r.base_max));
        let (umin, umax) = (load_decimal(&r.unit_min), load_decimal(&r.unit_max));
        let fee = load_decimal(&r.fee);
        let band =
            if bmin.is_zero() && bmax == Decimal::MAX && umin.is_zero() && umax == Decimal::MAX {
                String::new()
            } else {
                format!("band {bmin}..{bmax} units {umin}..{umax}")
            };
        let mut value = load_decimal(&r.rate).normalize().to_string();
        if !fee.is_zero() {
            value.push_str(&format!(" + fee {fee}"));
        }
        out.insert(
            (
                j.to_string(),
                code.to_string(),
                interval(r.from.to_native(), r.to.to_native()),
                band,
            ),
            value,
        );
    }
    out
}

fn jset_codes<D>(t: &Table<D>, jset: u32) -> Vec<String> {
    let mut v: Vec<String> = t
        .jset(levy_core::JsetId(jset))
        .filter_map(|j| t.jurisdiction(j).map(|j| j.code().to_string()))
        .collect();
    v.sort();
    v
}

fn zone_diff(
    old: &BTreeMap<String, Vec<String>>,
    new: &BTreeMap<String, Vec<String>>,
) -> Vec<ZoneChange> {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        let (o, n) = (old.get(k), new.get(k));
        if o != n {
            out.push(ZoneChange {
                place: k.clone(),
                old: o.cloned().unwrap_or_default(),
                new: n.cloned().unwrap_or_default(),
            });
        }
    }
    out
}

fn zones<D>(t: &Table<D>) -> [BTreeMap<String, Vec<String>>; 4] {
    let d = t.data();
    let mut zips = BTreeMap::new();
    for z in d.zips.iter() {
        for p in z.periods.iter() {
            let mut codes = jset_codes(t, p.jset.to_native());
            if p.coverage != levy_core::Coverage::Full as u8 {
                codes.push(
                    if p.coverage == 1 {
                        "(PARTIAL)"
                    } else {
                        "(STATE_ONLY)"
                    }
                    .into(),
                );
            }
            zips.insert(
                format!(
                    "{:05} {} {}",
                    z.zip.to_native(),
                    z.state.as_str(),
                    interval(p.from.to_native(), p.to.to_native())
                ),
                codes,
            );
        }
    }
    let mut zip4 = BTreeMap::new();
    for z in d.zip4.iter() {
        let key = format!(
            "{:05}-{:04}..{:04} {}",
            z.zip5.to_native(),
            z.low.to_native(),
            z.high.to_native(),
            interval(z.from.to_native(), z.to.to_native())
        );
        zip4.insert(key, jset_codes(t, z.jset.to_native()));
    }
    let mut streets = BTreeMap::new();
    for s in d.streets.iter() {
        let key = format!(
            "{:05} {} {}..{} {} {}",
            s.zip5.to_native(),
            s.street.as_str(),
            s.low.to_native(),
            s.high.to_native(),
            s.parity as char,
            interval(s.from.to_native(), s.to.to_native())
        );
        streets.insert(key, jset_codes(t, s.jset.to_native()));
    }
    let mut ips = BTreeMap::new();
    let place = |i: u32| {
        d.ip_locations
            .get(i as usize)
            .map(|l| {
                vec![format!(
                    "{}-{} {} {}",
                    std::str::from_utf8(&l.country).unwrap_or("??"),
                    l.region.as_str(),
                    l.city.as_str(),
                    l.postal.as_str()
                )]
            })
            .unwrap_or_default()
    };
    for r in d.ipv4.iter() {
        let key = format!(
            "{}..{}",
            std::net::Ipv4Addr::from(r.start.to_native()),
            std::net::Ipv4Addr::from(r.end.to_native())
        );
        ips.insert(key, place(r.location.to_native()));
    }
    for r in d.ipv6.iter() {
        let key = format!(
            "{}..{}",
            std::net::Ipv6Addr::from(r.start),
            std::net::Ipv6Addr::from(r.end)
        );
        ips.insert(key, place(r.location.to_native()));
    }
    [zips, zip4, streets, ips]
}

fn jurisdictions<D>(t: &Table<D>) -> BTreeMap<String, Change> {
    (0..t.jurisdiction_count())
        .filter_map(|i| t.jurisdiction(levy_core::JurisdictionId(i as u32)))
        .map(|j| {
            let level: Level = j.level();
            (
                j.code().to_string(),
                Change {
                    code: j.code().into(),
                    name: j.name().into(),
                    level: level.as_str().into(),
                },
            )
        })
        .collect()
}

/// What changed from `old` to `new`: jurisdictions, rules (by jurisdiction code, tax code
/// and interval), and the places (ZIP, ZIP+4, street and IP ranges) whose jurisdictions
/// changed. Ids are never compared, only codes, so two builds can be diffed whatever order
/// their jurisdictions were added in.
pub fn diff<A, B>(old: &Table<A>, new: &Table<B>) -> Diff {
    let mut out = Diff::default();
    let (jo, jn) = (jurisdictions(old), jurisdictions(new));
    out.jurisdictions_added = jn
        .iter()
        .filter(|(k, _)| !jo.contains_key(*k))
        .map(|(_, v)| v.clone())
        .collect();
    out.jurisdictions_removed = jo
        .iter()
        .filter(|(k, _)| !jn.contains_key(*k))
        .map(|(_, v)| v.clone())
        .collect();
    let (ro, rn) = (rule_map(old), rule_map(new));
    let keys: BTreeSet<_> = ro.keys().chain(rn.keys()).collect();
    for k in keys {
        let (o, n) = (ro.get(k), rn.get(k));
        if o != n {
            let interval = if k.3.is_empty() {
                k.2.clone()
            } else {
                format!("{} {}", k.2, k.3)
            };
            out.rules.push(RuleChange {
                jurisdiction: k.0.clone(),
                tax_code: k.1.clone(),
                interval,
                old: o.cloned(),
                new: n.cloned(),
            });
        }
    }
    let [zo, z4o, so, io] = zones(old);
    let [zn, z4n, sn, inew] = zones(new);
    out.zips = zone_diff(&zo, &zn);
    out.zip4 = zone_diff(&z4o, &z4n);
    out.streets = zone_diff(&so, &sn);
    out.ip_ranges = zone_diff(&io, &inew);
    let (to, tn) = (taxability_map(old), taxability_map(new));
    let keys: BTreeSet<_> = to.keys().chain(tn.keys()).collect();
    for k in keys {
        let (o, n) = (to.get(k), tn.get(k));
        if o != n {
            out.taxability.push(TaxabilityChange {
                place: k.0.clone(),
                tax_code: k.1.clone(),
                level: k.2.clone(),
                interval: k.3.clone(),
                old: o.cloned(),
                new: n.cloned(),
            });
        }
    }
    out
}

/// Every (place, code, levels, days) of a table's matrix, with its treatment and source.
fn taxability_map<D>(t: &Table<D>) -> BTreeMap<(String, String, String, String), String> {
    let mut out = BTreeMap::new();
    for c in t.taxability_cells() {
        let (from, to) = c.interval();
        let day = |d: Date, open: Date| {
            if d == open {
                "-".to_string()
            } else {
                d.to_string()
            }
        };
        let mut interval = format!("{}..{}", day(from, Date::MIN), day(to, Date::MAX));
        if let Some(limit) = c.sale_at_most() {
            interval += &format!(" sale<={limit}");
        }
        let value = format!(
            "{}: {} ({})",
            c.treatment().as_str(),
            c.summary(),
            c.source()
        );
        for code in c.codes() {
            let name = t.tax_code_name(code).unwrap_or("?").to_string();
            out.insert(
                (c.place(), name, c.scope().to_string(), interval.clone()),
                value.clone(),
            );
        }
    }
    out
}
