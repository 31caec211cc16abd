//! The layering core: the state of a build ([`Ctx`]) and how each source's rules, ZIP
//! codes and IP ranges are layered over what earlier sources said (see the module docs of
//! `compile`).

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use levy_core::{
    Coverage, Date, Decimal, IpLocationSpec, JurisdictionId, JurisdictionSpec, Level, RuleSpec,
    TableBuilder, TaxType,
};

use crate::error::BuildError;
use crate::parse::RowError;
use crate::states;

use super::{BadRow, Conflict, ConflictKind, Summary, GENERAL};

type RuleKey = (u32, String);

pub(super) struct Ctx {
    pub(super) b: TableBuilder,
    pub(super) strict: bool,
    pub(super) summary: Summary,
    pub(super) pending: Vec<RuleSpec>,
    pub(super) pending_iv: HashMap<RuleKey, Vec<(Date, Date, Decimal)>>,
    pub(super) zip_owner: HashMap<u32, u32>,
    /// IP ranges by start: (end, index into `ip_places`). Places are interned, so millions
    /// of ranges of a city database cost a few words each.
    pub(super) ip4: BTreeMap<u32, (u32, u32)>,
    pub(super) ip6: BTreeMap<u128, (u128, u32)>,
    pub(super) ip_places: Vec<IpLocationSpec>,
    pub(super) ip_place_ids: HashMap<IpLocationSpec, u32>,
    /// California's statewide split, for CDTFA lists.
    pub(super) ca_base: crate::ca_base::CaBase,
    pub(super) latest_period: Option<Date>,
    pub(super) usps: Option<HashMap<u32, &'static zipcodes::Zipcode>>,
    /// What the local rates files said that later inputs and the end of the build need:
    /// the districts and cities to place, the states they list completely, and the counties
    /// of each ZIP.
    pub(super) local: super::local_rates::LocalState,
}

impl Ctx {
    /// A build's state before any source: reading rows strictly (`strict`) or not, with
    /// California's statewide split for CDTFA lists.
    pub(super) fn new(strict: bool, ca_base: crate::ca_base::CaBase) -> Ctx {
        Ctx {
            b: TableBuilder::new(),
            strict,
            summary: Summary::default(),
            pending: Vec::new(),
            pending_iv: HashMap::new(),
            zip_owner: HashMap::new(),
            ip4: BTreeMap::new(),
            ip6: BTreeMap::new(),
            ip_places: Vec::new(),
            ip_place_ids: HashMap::new(),
            ca_base,
            latest_period: None,
            usps: None,
            local: Default::default(),
        }
    }
}

pub(super) fn usps_index() -> HashMap<u32, &'static zipcodes::Zipcode> {
    zipcodes::database()
        .iter()
        .filter_map(|z| z.zip_code.parse::<u32>().ok().map(|n| (n, z)))
        .collect()
}

fn rate_type(level: Level, food: bool) -> String {
    let base = match level {
        Level::Country => "COUNTRY TAX",
        Level::State | Level::Province => "STATE SALES TAX",
        Level::County => "COUNTY SALES TAX",
        Level::City => "CITY SALES TAX",
        Level::District => "SPECIAL DISTRICT SALES TAX",
    };
    if food {
        format!("{base} (FOOD AND DRUG)")
    } else {
        base.to_string()
    }
}

/// `a` minus `cut`, as up to two intervals.
pub(super) fn subtract(a: (Date, Date), cut: (Date, Date)) -> Vec<(Date, Date)> {
    if cut.1 < a.0 || cut.0 > a.1 {
        return vec![a];
    }
    let mut out = Vec::new();
    if cut.0 > a.0 {
        out.push((a.0, Date(cut.0 .0 - 1)));
    }
    if cut.1 < a.1 {
        out.push((Date(cut.1 .0 + 1), a.1));
    }
    out
}

impl Ctx {
    /// Reports a reader's row errors; returns how many rows they skipped.
    pub(super) fn bad_rows(
        &mut self,
        file: &str,
        errors: Vec<RowError>,
    ) -> Result<u64, BuildError> {
        let n = errors.len() as u64;
        for e in errors {
            self.bad(file, e)?;
        }
        Ok(n)
    }

    /// The postal abbreviation of a state FIPS code; an unknown code is reported as a bad
    /// row of `file` at `line` and gives `None`.
    pub(super) fn state_abbr(
        &mut self,
        file: &str,
        line: u64,
        fips: &str,
    ) -> Result<Option<&'static str>, BuildError> {
        match states::by_fips(fips) {
            Some((abbr, _)) => Ok(Some(abbr)),
            None => {
                self.bad(
                    file,
                    RowError {
                        line,
                        message: format!("unknown state FIPS {fips:?}"),
                    },
                )?;
                Ok(None)
            }
        }
    }

    pub(super) fn bad(&mut self, file: &str, e: RowError) -> Result<(), BuildError> {
        if self.strict {
            return Err(BuildError::BadRow {
                file: file.to_string(),
                line: e.line,
                message: e.message,
            });
        }
        self.summary.bad_rows.push(BadRow {
            file: file.to_string(),
            line: e.line,
            message: e.message,
        });
        Ok(())
    }

    pub(super) fn conflict(&mut self, kind: ConflictKind, file: &str, detail: String) {
        self.summary.conflicts.push(Conflict {
            kind,
            file: file.to_string(),
            detail,
        });
    }

    /// The kind of manifest entry `source` (`zip5`, `local-rates`, ...), read from the
    /// manifest itself: an input may add more than one entry.
    pub(super) fn source_kind(&self, source: u32) -> Option<&str> {
        self.b
            .sources()
            .get(source as usize)
            .map(|s| s.kind.as_str())
    }

    pub(super) fn jur_code(&self, j: JurisdictionId) -> String {
        self.b
            .jurisdictions()
            .nth(j.0 as usize)
            .map(|(_, r)| r.code.clone())
            .unwrap_or_default()
    }

    /// The state jurisdiction, created with its region when new.
    pub(super) fn state(&mut self, abbr: &str) -> Result<JurisdictionId, BuildError> {
        let (fips, name) = states::by_abbr(abbr).ok_or_else(|| {
            BuildError::Table(levy_core::BuildError::Invalid {
                what: "state",
                detail: format!("{abbr:?} is unknown"),
            })
        })?;
        if let Some(j) = self.b.find_jurisdiction(fips) {
            return Ok(j);
        }
        let j = self.b.jurisdiction(JurisdictionSpec {
            code: fips.to_string(),
            name: name.to_string(),
            level: Level::State,
            country: "US".into(),
            region: abbr.to_string(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })?;
        self.b.region("US", abbr, name, &[j], "")?;
        // A state the curated rules do not know: nothing says it levies no local taxes.
        self.b.region_coverage("US", abbr, Coverage::StateOnly)?;
        Ok(j)
    }

    /// A jurisdiction by code, created when new (an existing one is left as it is).
    pub(super) fn jur(
        &mut self,
        code: &str,
        name: &str,
        level: Level,
        region: &str,
    ) -> Result<JurisdictionId, BuildError> {
        if let Some(j) = self.b.find_jurisdiction(code) {
            return Ok(j);
        }
        Ok(self.b.jurisdiction(JurisdictionSpec {
            code: code.to_string(),
            name: name.to_string(),
            level,
            country: "US".into(),
            region: region.to_string(),
            authority: String::new(),
            tax_type: TaxType::Sales,
        })?)
    }

    /// The general rate an earlier source than `source` gives jurisdiction `j` on `day`.
    pub(super) fn state_rate_on(
        &self,
        j: JurisdictionId,
        day: Date,
        source: u32,
    ) -> Option<Decimal> {
        self.b
            .rules()
            .iter()
            .find(|r| {
                r.jurisdiction == j
                    && r.source != source
                    && r.tax_code == GENERAL
                    && r.from <= day
                    && day <= r.to
                    && r.band == (Decimal::ZERO, None)
                    && r.unit_range == (Decimal::ZERO, None)
                    && r.fee.is_zero()
            })
            .map(|r| r.rate)
    }

    /// Queues a rule of the current source.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rule(
        &mut self,
        j: JurisdictionId,
        code: &str,
        rate: Decimal,
        from: Date,
        to: Date,
        level: Level,
        food: bool,
        source: u32,
        file: &str,
    ) -> Result<(), BuildError> {
        let mut spec = RuleSpec::flat(j, code, rate, from, to, &rate_type(level, food));
        spec.source = source;
        self.queue_rule(spec, file);
        Ok(())
    }

    /// Queues a rule of the current source as written (its band, label and source): the
    /// first rule for a jurisdiction, code and day wins, a second is a
    /// [`ConflictKind::DuplicateRule`].
    pub(super) fn queue_rule(&mut self, spec: RuleSpec, file: &str) {
        let (j, code, from, to, rate) = (
            spec.jurisdiction,
            spec.tax_code.clone(),
            spec.from,
            spec.to,
            spec.rate,
        );
        let list = self.pending_iv.entry((j.0, code.clone())).or_default();
        if let Some(&(f, t, r)) = list.iter().find(|(f, t, _)| *f <= to && from <= *t) {
            let detail = format!(
                "{} {code}: {rate} for {from}..{to} overlaps {r} for {f}..{t} written earlier; kept the first",
                self.jur_code(j)
            );
            self.conflict(ConflictKind::DuplicateRule, file, detail);
            return;
        }
        list.push((from, to, rate));
        self.pending.push(spec);
    }

    /// Layers the current source's rules over the earlier ones.
    pub(super) fn commit(&mut self, source: u32, file: &str) -> Result<(), BuildError> {
        let pending = std::mem::take(&mut self.pending);
        let iv = std::mem::take(&mut self.pending_iv);
        if pending.is_empty() {
            return Ok(());
        }
        let mut cut_pieces = Vec::new();
        let mut conflicts = Vec::new();
        for r in self.b.rules() {
            if r.source == source {
                continue;
            }
            let Some(news) = iv.get(&(r.jurisdiction.0, r.tax_code.clone())) else {
                continue;
            };
            let mut pieces = vec![(r.from, r.to)];
            for &(f, t, rate) in news {
                if f <= r.to && r.from <= t && rate != r.rate {
                    conflicts.push(format!(
                        "{} {}: {} ({}..{}) replaced by {} from {}..{}",
                        r.jurisdiction.0, r.tax_code, r.rate, r.from, r.to, rate, f, t
                    ));
                }
                pieces = pieces
                    .into_iter()
                    .flat_map(|p| subtract(p, (f, t)))
                    .collect();
            }
            if pieces != [(r.from, r.to)] {
                for (f, t) in pieces {
                    let mut s = r.clone();
                    s.from = f;
                    s.to = t;
                    cut_pieces.push(s);
                }
            }
        }
        for c in conflicts {
            // Name the jurisdiction by code rather than by id.
            let (id, rest) = c.split_once(' ').unwrap_or(("", &c));
            let code = id
                .parse::<u32>()
                .map(|i| self.jur_code(JurisdictionId(i)))
                .unwrap_or_default();
            self.conflict(ConflictKind::RuleReplaced, file, format!("{code} {rest}"));
        }
        self.b.retain_rules(|r| {
            r.source == source || !iv.contains_key(&(r.jurisdiction.0, r.tax_code.clone()))
        });
        for s in cut_pieces.into_iter().chain(pending) {
            self.b.rule(s)?;
        }
        Ok(())
    }

    /// Assigns a ZIP code to `js` from `from` to `to` with `coverage`, over what earlier
    /// sources said for those days (outside them the earlier assignment keeps answering);
    /// reports each replaced period whose jurisdictions differ.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_zip(
        &mut self,
        zip: u32,
        state: &str,
        city: &str,
        js: &[JurisdictionId],
        (from, to): (Date, Date),
        coverage: Coverage,
        source: u32,
        file: &str,
    ) -> Result<(), BuildError> {
        let new_jset = self.b.jset(js)?;
        let old_state = self.b.zip_record(zip).map(|r| r.state.clone());
        let replaced = self
            .b
            .zip_period(zip, state, city, js, from, to, coverage, source)?;
        let describe = |ctx: &Ctx, jset: u32| {
            ctx.b
                .jset_members(jset)
                .iter()
                .map(|&j| ctx.jur_code(j))
                .collect::<Vec<_>>()
                .join("+")
        };
        for p in replaced {
            let moved_state = old_state.as_deref().is_some_and(|s| s != state);
            if p.jset == new_jset && !moved_state {
                continue;
            }
            let same = p.source == source;
            let detail = format!(
                "ZIP {zip:05} {state} {}..{}: {} -> {}{}",
                Date(p.from),
                Date(p.to),
                describe(self, p.jset),
                describe(self, new_jset),
                if same {
                    " (written twice in this file; the later row wins)"
                } else {
                    ""
                }
            );
            self.conflict(ConflictKind::ZipReassigned, file, detail);
        }
        self.zip_owner.insert(zip, source);
        Ok(())
    }

    pub(super) fn add_ip(&mut self, start: IpAddr, end: IpAddr, loc: IpLocationSpec, file: &str) {
        let place = match self.ip_place_ids.get(&loc) {
            Some(&id) => id,
            None => {
                let id = self.ip_places.len() as u32;
                self.ip_places.push(loc.clone());
                self.ip_place_ids.insert(loc, id);
                id
            }
        };
        let (cut, shown) = match (start, end) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (
                layer_range(&mut self.ip4, u32::from(a), u32::from(b), place),
                (start, end),
            ),
            (IpAddr::V6(a), IpAddr::V6(b)) => (
                layer_range(&mut self.ip6, u128::from(a), u128::from(b), place),
                (start, end),
            ),
            _ => return,
        };
        // A finer place in the same country refines a coarser range; only a change of
        // country is a conflict worth reporting.
        let country = &self.ip_places[place as usize].country;
        let replaced = cut
            .iter()
            .filter(|&&old| self.ip_places[old as usize].country != *country)
            .count();
        if replaced > 0 {
            let detail = format!(
                "{}..{} ({}) replaced {replaced} earlier range(s) of another country",
                shown.0, shown.1, country
            );
            self.conflict(ConflictKind::IpRangeReplaced, file, detail);
        }
    }
}

pub(super) fn finish_ip(ctx: &mut Ctx) -> Result<(), BuildError> {
    // The places go to the builder once, moved, in the order interned; then the ranges,
    // adjacent ones of the same place merged, by the builder's id of their place.
    ctx.ip_place_ids = HashMap::new();
    let mut ids = Vec::with_capacity(ctx.ip_places.len());
    for place in std::mem::take(&mut ctx.ip_places) {
        ids.push(ctx.b.ip_place(place)?);
    }
    let v4 = merged(std::mem::take(&mut ctx.ip4));
    for (s, e, place) in v4 {
        ctx.b.ipv4_range_at(s, e, ids[place as usize])?;
    }
    let v6 = merged(std::mem::take(&mut ctx.ip6));
    for (s, e, place) in v6 {
        ctx.b.ipv6_range_at(s, e, ids[place as usize])?;
    }
    Ok(())
}

/// The ranges of a layer in order, adjacent ranges of the same place joined.
fn merged<K: Copy + Eq + num_succ::Succ>(map: BTreeMap<K, (K, u32)>) -> Vec<(K, K, u32)> {
    let mut out: Vec<(K, K, u32)> = Vec::new();
    for (s, (e, place)) in map {
        if let Some(last) = out.last_mut() {
            if last.1.succ() == Some(s) && last.2 == place {
                last.1 = e;
                continue;
            }
        }
        out.push((s, e, place));
    }
    out
}

/// Puts `start..=end` (of `place`) into a layer, cutting every earlier range it overlaps to
/// what lies outside it; returns the places of the ranges it cut.
fn layer_range<K: Copy + Ord + num_succ::Succ>(
    map: &mut BTreeMap<K, (K, u32)>,
    start: K,
    end: K,
    place: u32,
) -> Vec<u32> {
    // Earlier ranges start at or before `end`; those whose end reaches `start` overlap.
    let overlapping: Vec<K> = map
        .range(..=end)
        .rev()
        .take_while(|(_, (e, _))| *e >= start)
        .map(|(k, _)| *k)
        .collect();
    // Ranges are disjoint, so walking back from `end` stops at the first one that ends
    // before `start`; nothing before it can overlap.
    let mut cut = Vec::with_capacity(overlapping.len());
    for k in overlapping {
        let Some((e, old)) = map.remove(&k) else {
            continue;
        };
        cut.push(old);
        if k < start {
            if let Some(before) = start.pred() {
                map.insert(k, (before, old));
            }
        }
        if e > end {
            if let Some(after) = end.succ() {
                map.insert(after, (e, old));
            }
        }
    }
    map.insert(start, (end, place));
    cut
}

/// Successor and predecessor of address integers, without overflow.
mod num_succ {
    /// An address type with a next and a previous value.
    pub(super) trait Succ: Sized {
        /// `self + 1`, unless at the top.
        fn succ(self) -> Option<Self>;
        /// `self - 1`, unless at zero.
        fn pred(self) -> Option<Self>;
    }
    impl Succ for u32 {
        fn succ(self) -> Option<u32> {
            self.checked_add(1)
        }
        fn pred(self) -> Option<u32> {
            self.checked_sub(1)
        }
    }
    impl Succ for u128 {
        fn succ(self) -> Option<u128> {
            self.checked_add(1)
        }
        fn pred(self) -> Option<u128> {
            self.checked_sub(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtract_intervals() {
        let (a, b, c, e) = (Date(0), Date(10), Date(3), Date(5));
        assert_eq!(
            subtract((a, b), (c, e)),
            vec![(Date(0), Date(2)), (Date(6), Date(10))]
        );
        assert_eq!(subtract((a, b), (Date::MIN, Date::MAX)), vec![]);
        assert_eq!(subtract((c, e), (Date(6), Date(9))), vec![(c, e)]);
    }
}
