//! The product rules written over every jurisdiction of the builder
//! ([`Curated::apply_rules`]): the rules of `us-rules.toml` and the taxability matrix's US
//! cells, as modifiers of each targeted jurisdiction's rules for a code.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use levy_core::{Date, Decimal, JurisdictionId, Level, RuleSpec, SaleCondition, TableBuilder};

use super::taxonomy::Taxonomy;
use super::us_rules::{Modifier, Scope};
use super::values::{invalid, Part, PartRate};
use super::{Curated, CuratedError, CuratedStats, FILES, GENERAL};

impl Curated {
    /// Writes the product-specific rules of `us-rules.toml` over every jurisdiction in the
    /// builder (matched by country, state and level, or by code), and adds each add-on
    /// jurisdiction (`in_every_set`) to every set that holds its state. A part at the
    /// `general` rate takes the jurisdiction's GENERAL_MERCHANDISE rules as they stand in
    /// the builder, period by period. Call it last, after every source has added its
    /// jurisdictions and rates.
    pub fn apply_rules(&self, b: &mut TableBuilder) -> Result<CuratedStats, CuratedError> {
        let mut stats = CuratedStats::default();
        let f = FILES[2];
        let src = self.source_index(b, f);
        let matrix_src = if self.matrix.files.is_empty() {
            src
        } else {
            self.source_index(b, &format!("{}/", crate::matrix::DIR))
        };
        self.extend_sets(b, &mut stats)?;
        let modifiers = self.us_modifiers();
        self.write_modifiers(b, &modifiers, (src, matrix_src), &mut stats)?;
        // Canada's and the countries' codes, and every cell recorded.
        let tax = Taxonomy {
            codes: self.codes.clone(),
            aliases: Vec::new(),
            names: self.codes.iter().map(|c| c.name.clone()).collect(),
        };
        let (added, removed) = self.matrix.apply_rates(b, &tax, matrix_src)?;
        stats.rules += added;
        stats.rules_replaced += removed;
        stats.taxability_cells += self.matrix.record(b)?;
        Ok(stats)
    }

    /// Adds each add-on jurisdiction (`in_every_set`) to every set of the builder that holds
    /// its state.
    fn extend_sets(
        &self,
        b: &mut TableBuilder,
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        let f = FILES[2];
        for x in self.extras.iter().filter(|x| x.in_every_set) {
            let Some(state) = self.states.iter().find(|s| s.abbr == x.state) else {
                continue;
            };
            let (Some(sj), Some(xj)) = (
                b.find_jurisdiction(&state.fips),
                b.find_jurisdiction(&x.code),
            ) else {
                return Err(invalid(f, &x.key, "apply_base must run before apply_rules"));
            };
            stats.sets_extended +=
                b.add_to_sets_containing(sj, xj)
                    .map_err(|e| CuratedError::Build {
                        file: f.into(),
                        key: x.key.clone(),
                        source: e,
                    })?;
        }
        Ok(())
    }

    /// The modifiers of the US: the rules of `us-rules.toml` for what the matrix does not
    /// give, then the matrix's US cells.
    fn us_modifiers(&self) -> Vec<Modifier> {
        let mut modifiers: Vec<Modifier> = Vec::new();
        for m in &self.modifiers {
            let mut m = m.clone();
            m.states.retain(|s| !self.matrix.names_us(s, &m.code));
            if !m.states.is_empty() {
                modifiers.push(m);
            }
        }
        for (place, cell, code) in self.matrix.us_rules() {
            modifiers.push(Modifier {
                states: vec![place.region.clone()],
                code: code.to_string(),
                scopes: cell.scopes.clone(),
                from: cell.from,
                to: cell.to,
                label: cell.label.clone(),
                parts: cell.parts.clone(),
                sale: cell.sale_at_most.map(|limit| (cell.group, limit)),
                origin: format!("{} {}", place.file, cell.key),
                matrix: true,
            });
        }
        modifiers
    }

    /// Rewrites the rules of every jurisdiction and code `modifiers` reach (see
    /// [`Curated::rewrite`]), `srcs` the manifest indexes of `us-rules.toml` and the matrix.
    fn write_modifiers(
        &self,
        b: &mut TableBuilder,
        modifiers: &[Modifier],
        (src, matrix_src): (u32, u32),
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        let by_target = self.targets(b, modifiers);
        // Work on a copy of the rules of the jurisdictions concerned, indexed by jurisdiction
        // (a full build has tens of thousands of both), then put them back in one pass.
        let targets: BTreeSet<u32> = by_target.keys().map(|k| k.2).collect();
        let mut index: BTreeMap<u32, Vec<RuleSpec>> = BTreeMap::new();
        for r in b.rules() {
            if targets.contains(&r.jurisdiction.0) {
                index.entry(r.jurisdiction.0).or_default().push(r.clone());
            }
        }
        // Rules a published source wrote (not this curated data), which a `general` part
        // takes as the jurisdiction's own rate for the code.
        let curated: BTreeSet<u32> = b
            .sources()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == "curated")
            .map(|(i, _)| i as u32)
            .collect();
        // The manifest entry of this file's rules over each published input's rates.
        let mut over: BTreeMap<u32, u32> = BTreeMap::new();
        for ((_, code, j), ms) in by_target {
            let mods: Vec<&Modifier> = ms.iter().map(|&i| &modifiers[i]).collect();
            overlapping(&mods, j)?;
            let rules = index.entry(j).or_default();
            let published = newest_published(b, rules, &code, &curated);
            let target = Target {
                code: &code,
                jid: JurisdictionId(j),
                src,
                matrix_src,
                curated: &curated,
            };
            let (added, removed) = self.rewrite(rules, &target, &mods);
            stats.rules += added;
            stats.rules_replaced += removed;
            if let Some(p) = published {
                let entry = *over.entry(p).or_insert_with(|| over_published(b, src, p));
                for r in rules
                    .iter_mut()
                    .filter(|r| r.source == src && r.tax_code == code)
                {
                    r.source = entry;
                }
            }
        }
        b.retain_rules(|r| !targets.contains(&r.jurisdiction.0));
        for (j, rules) in index {
            for r in rules {
                b.rule(r).map_err(|e| CuratedError::Build {
                    file: FILES[2].into(),
                    key: format!("rules of jurisdiction {j}"),
                    source: e,
                })?;
            }
        }
        Ok(())
    }

    /// Which jurisdictions of the builder each modifier reaches, grouped by (depth of the
    /// code, code, jurisdiction): GENERAL_MERCHANDISE first, then parents before children,
    /// so that `general` and inherited rules are final when read.
    fn targets(
        &self,
        b: &TableBuilder,
        modifiers: &[Modifier],
    ) -> BTreeMap<(usize, String, u32), Vec<usize>> {
        let fips: HashMap<&str, &str> = self
            .states
            .iter()
            .map(|s| (s.abbr.as_str(), s.fips.as_str()))
            .collect();
        let depth = |code: &str| -> usize {
            let mut d = 0;
            let mut cur = code;
            while let Some(p) = self
                .codes
                .iter()
                .find(|c| c.name == cur)
                .and_then(|c| c.parent.as_deref())
            {
                d += 1;
                cur = p;
                if d > self.codes.len() {
                    break;
                }
            }
            d
        };
        let mut by_target: BTreeMap<(usize, String, u32), Vec<usize>> = BTreeMap::new();
        for (mi, m) in modifiers.iter().enumerate() {
            for (jid, rec) in b.jurisdictions() {
                if rec.country != *b"US" || !m.states.contains(&rec.region) {
                    continue;
                }
                let level = level_of(rec.level);
                let is_state_code = fips
                    .get(rec.region.as_str())
                    .is_some_and(|f| *f == rec.code);
                let hit = m.scopes.iter().any(|s| match s {
                    Scope::State => is_state_code,
                    Scope::StateAll => level == Level::State,
                    Scope::Local => level.is_local(),
                    Scope::County => level == Level::County,
                    Scope::City => level == Level::City,
                    Scope::District => level == Level::District,
                    Scope::Code(c) => match c.strip_suffix('*') {
                        Some(prefix) => rec.code.starts_with(prefix),
                        None => *c == rec.code,
                    },
                });
                if hit {
                    by_target
                        .entry((depth(&m.code), m.code.clone(), jid.0))
                        .or_default()
                        .push(mi);
                }
            }
        }
        by_target
    }

    /// Replaces the rules of the target's code in its jurisdiction with the modifiers'
    /// parts over their periods, keeping (or copying down from the nearest ancestor) the
    /// rules outside them. A modifier with a per-sale threshold writes its parts for sales
    /// at or below it, and the rules the code has without it for sales above.
    fn rewrite(
        &self,
        rules: &mut Vec<RuleSpec>,
        target: &Target<'_>,
        mods: &[&Modifier],
    ) -> (usize, usize) {
        let code = target.code;
        let base = self.inherited(rules, code);
        let own = base.first().is_some_and(|r| r.tax_code == code);
        // What a `general` part charges: the code's own rules where a published source wrote
        // them (a rate file's food rate), else the jurisdiction's general rules.
        let published = own && base.iter().all(|r| !target.curated.contains(&r.source));
        let general: Vec<RuleSpec> = if code == GENERAL || published {
            base.clone()
        } else {
            rules
                .iter()
                .filter(|r| r.tax_code == GENERAL)
                .cloned()
                .collect()
        };
        let mut out: Vec<RuleSpec> = Vec::new();
        let mut windows: Vec<(Date, Date)> = Vec::new();
        let (plain, thresholds): (Vec<&Modifier>, Vec<&Modifier>) =
            mods.iter().partition(|m| m.sale.is_none());
        for m in &plain {
            windows.push((m.from, m.to));
            out.extend(self.parts_rules(m, target, &general, None));
        }
        // Outside the modifiers' periods the code keeps what it had.
        for r in &base {
            for (from, to) in uncovered(r.from, r.to, &windows) {
                let mut copy = r.clone();
                copy.tax_code = code.to_string();
                copy.from = from;
                copy.to = to;
                out.push(copy);
            }
        }
        // A threshold's parts at or below it; above it, what the code has without it.
        for m in &thresholds {
            let Some((group, limit)) = m.sale else {
                continue;
            };
            out = above_threshold(out, m, group, limit);
            let at_most = SaleCondition {
                group,
                limit,
                above: false,
            };
            out.extend(self.parts_rules(m, target, &general, Some(at_most)));
        }
        // Rules that say what the code would inherit anyway are not written: a `taxable`
        // cell over a county that taxes the code at its general rate adds nothing (and a
        // state's hundreds of local jurisdictions would each hold a copy).
        if !own && same_rules(&out, &base) {
            return (0, 0);
        }
        let mut removed = 0;
        if own {
            let before = rules.len();
            rules.retain(|r| r.tax_code != code);
            removed = before - rules.len();
        }
        let added = out.len();
        rules.extend(out);
        (added, removed)
    }

    /// The rules `code` has now among `rules`: its own, or the nearest ancestor's.
    fn inherited(&self, rules: &[RuleSpec], code: &str) -> Vec<RuleSpec> {
        let mut base_code = Some(code.to_string());
        let mut base: Vec<RuleSpec> = Vec::new();
        let mut steps = 0;
        while let Some(c) = base_code.take() {
            base = rules.iter().filter(|r| r.tax_code == c).cloned().collect();
            if !base.is_empty() {
                break;
            }
            base_code = self
                .codes
                .iter()
                .find(|x| x.name == c)
                .and_then(|x| x.parent.clone());
            steps += 1;
            if steps > self.codes.len() {
                break;
            }
        }
        base
    }

    /// The rules of one modifier's parts over its period: a fixed rate as written, a
    /// `general` part over each of `general`'s periods inside it.
    fn parts_rules(
        &self,
        m: &Modifier,
        target: &Target<'_>,
        general: &[RuleSpec],
        sale: Option<SaleCondition>,
    ) -> Vec<RuleSpec> {
        let src = if m.matrix {
            target.matrix_src
        } else {
            target.src
        };
        let mut out = Vec::new();
        for p in &m.parts {
            match p.rate {
                PartRate::Fixed(rate) => {
                    let mut r = part_rule(
                        target.jid,
                        target.code,
                        m.from,
                        m.to,
                        rate * p.scale,
                        p,
                        &m.label,
                        src,
                    );
                    r.sale = sale;
                    out.push(r);
                }
                PartRate::General => {
                    for g in general {
                        let (from, to) = (g.from.max(m.from), g.to.min(m.to));
                        if from > to {
                            continue;
                        }
                        let band = intersect(g.band, p.band);
                        let units = intersect(g.unit_range, p.units);
                        let (Some(band), Some(units)) = (band, units) else {
                            continue;
                        };
                        // A `taxable` cell keeps the general rule's own label.
                        let label = if m.label.is_empty() {
                            &g.rate_type
                        } else {
                            &m.label
                        };
                        let mut r = part_rule(
                            target.jid,
                            target.code,
                            from,
                            to,
                            g.rate * p.scale,
                            p,
                            label,
                            src,
                        );
                        r.band = band;
                        r.unit_range = units;
                        r.proportional = p.proportional || g.proportional;
                        r.sale = sale;
                        out.push(r);
                    }
                }
            }
        }
        out
    }
}

/// The code and jurisdiction [`Curated::rewrite`] works on, and the sources it writes.
struct Target<'a> {
    code: &'a str,
    jid: JurisdictionId,
    /// The manifest index of `us-rules.toml`.
    src: u32,
    /// The manifest index of the matrix.
    matrix_src: u32,
    /// The manifest indexes of the curated files.
    curated: &'a BTreeSet<u32>,
}

/// `out` with each rule of modifier `m`'s days that has no per-sale threshold of its own
/// split: outside `m`'s days as it was, inside them for sales above `m`'s threshold
/// (`group`, `limit`) only.
fn above_threshold(out: Vec<RuleSpec>, m: &Modifier, group: u32, limit: Decimal) -> Vec<RuleSpec> {
    let above = SaleCondition {
        group,
        limit,
        above: true,
    };
    let mut split = Vec::with_capacity(out.len() + 1);
    for r in out {
        if r.sale.is_some() || r.to < m.from || m.to < r.from {
            split.push(r);
            continue;
        }
        for (from, to) in uncovered(r.from, r.to, &[(m.from, m.to)]) {
            let mut outside = r.clone();
            outside.from = from;
            outside.to = to;
            split.push(outside);
        }
        let mut inside = r;
        inside.from = inside.from.max(m.from);
        inside.to = inside.to.min(m.to);
        inside.sale = Some(above);
        split.push(inside);
    }
    split
}

/// Whether two lists of rules say the same on every day, whatever codes they are written
/// for (what a code would inherit from its nearest ancestor with rules).
fn same_rules(a: &[RuleSpec], b: &[RuleSpec]) -> bool {
    let key = |r: &RuleSpec| {
        (
            r.from,
            r.to,
            r.rate,
            r.band,
            r.unit_range,
            r.fee,
            r.rate_type.clone(),
            r.proportional,
            r.sale.map(|s| (s.group, s.limit, s.above)),
        )
    };
    let mut x: Vec<_> = a.iter().map(key).collect();
    let mut y: Vec<_> = b.iter().map(key).collect();
    x.sort();
    y.sort();
    x == y
}

/// Two matrix cells may not write one code in one jurisdiction on one day (a cell with a
/// per-sale threshold may lie over one without): their parts would add up.
fn overlapping(mods: &[&Modifier], j: u32) -> Result<(), CuratedError> {
    for (i, a) in mods.iter().enumerate() {
        for b in &mods[i + 1..] {
            if a.matrix
                && b.matrix
                && a.sale.is_none() == b.sale.is_none()
                && !(a.to < b.from || b.to < a.from)
            {
                return Err(invalid(
                    &a.origin,
                    &a.code,
                    format!(
                        "overlaps {} in jurisdiction {j} on the same days: each jurisdiction, code and day takes one cell",
                        b.origin
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The level of a jurisdiction record.
fn level_of(v: u8) -> Level {
    [
        Level::Country,
        Level::State,
        Level::Province,
        Level::County,
        Level::City,
    ]
    .into_iter()
    .find(|l| *l as u8 == v)
    .unwrap_or(Level::District)
}

/// The published input (not curated) with the latest horizon among those that wrote
/// `code`'s rules in `rules`: the one whose rates a `general` part takes.
fn newest_published(
    b: &TableBuilder,
    rules: &[RuleSpec],
    code: &str,
    curated: &BTreeSet<u32>,
) -> Option<u32> {
    rules
        .iter()
        .filter(|r| r.tax_code == code && !curated.contains(&r.source))
        .map(|r| r.source)
        .max_by_key(|&s| b.sources().get(s as usize).map_or(i32::MAX, |e| e.horizon))
}

/// A copy of the manifest entry `src` (this file) for its rules over the rates of the
/// published input `published`: they hold no longer than those rates do, so its horizon
/// is the earlier of the two, and its publication names the input (`zip5
/// TAXRATES_ZIP5_TN202512.csv`).
fn over_published(b: &mut TableBuilder, src: u32, published: u32) -> u32 {
    let mut entry = b.sources().get(src as usize).cloned().unwrap_or_default();
    if let Some(p) = b.sources().get(published as usize) {
        entry.horizon = entry.horizon.min(p.horizon);
        entry.publication = format!("{} {}", p.kind, p.name);
    }
    b.add_source(entry)
}

/// A rule from a part with a resolved rate.
#[allow(clippy::too_many_arguments)]
pub(super) fn part_rule(
    jid: JurisdictionId,
    code: &str,
    from: Date,
    to: Date,
    rate: Decimal,
    p: &Part,
    label: &str,
    src: u32,
) -> RuleSpec {
    RuleSpec {
        jurisdiction: jid,
        tax_code: code.to_string(),
        from,
        to,
        rate,
        band: p.band,
        unit_range: p.units,
        fee: p.fee,
        rate_type: label.to_string(),
        source: src,
        proportional: p.proportional,
        sale: None,
    }
}

/// The intersection of two `(low, high)` ranges; `None` when empty.
fn intersect(
    a: (Decimal, Option<Decimal>),
    c: (Decimal, Option<Decimal>),
) -> Option<(Decimal, Option<Decimal>)> {
    let lo = a.0.max(c.0);
    let hi = match (a.1, c.1) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    };
    match hi {
        Some(h) if h < lo => None,
        _ => Some((lo, hi)),
    }
}

/// The parts of `[from, to]` outside every window.
fn uncovered(from: Date, to: Date, windows: &[(Date, Date)]) -> Vec<(Date, Date)> {
    let mut w: Vec<(Date, Date)> = windows.to_vec();
    w.sort();
    let mut out = Vec::new();
    let mut cur = from;
    for (wf, wt) in w {
        if wt < cur || wf > to {
            continue;
        }
        if wf > cur {
            out.push((cur, Date(wf.0 - 1)));
        }
        if wt >= to {
            return out;
        }
        cur = Date(wt.0 + 1);
    }
    if cur <= to {
        out.push((cur, to));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncovered_splits_around_windows() {
        // [1, 10] less [3, 4] and [8, 20] leaves [1, 2] and [5, 7].
        let got = uncovered(
            Date(1),
            Date(10),
            &[(Date(8), Date(20)), (Date(3), Date(4))],
        );
        assert_eq!(got, vec![(Date(1), Date(2)), (Date(5), Date(7))]);
        // An open window covers everything.
        assert!(uncovered(Date::MIN, Date::MAX, &[(Date::MIN, Date::MAX)]).is_empty());
    }
}
