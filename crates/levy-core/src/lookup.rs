//! Read access to a table: jurisdictions, tax codes, categories, rules.
//!
//! Every accessor bounds-checks the ids it is given, so a table opened without `verify`
//! whose indexes were damaged answers "not found" instead of panicking.

use rust_decimal::Decimal;

use crate::kinds::{Level, TaxType};
use crate::model::{
    load_decimal, ArchivedJurisdictionRecord, ArchivedRuleKey, ArchivedRuleRecord,
    ArchivedTableData, ArchivedZipCity, ArchivedZipRecord,
};

/// `Decimal::MAX.serialize()`: flags 0 (positive, scale 0), then a mantissa of 96 one bits.
pub(crate) const MAX_BYTES: [u8; 16] = [
    0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
];

/// Id of a jurisdiction in a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JurisdictionId(pub u32);

/// Id of a product tax code in a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaxCodeId(pub u32);

/// Id of a tax rule in a table: the rule that produced a number, for explaining it later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub u32);

/// Id of a jurisdiction set (the jurisdictions that tax one place).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JsetId(pub u32);

/// A jurisdiction, read in place.
#[derive(Clone, Copy, Debug)]
pub struct Jurisdiction<'t> {
    rec: &'t ArchivedJurisdictionRecord,
}

impl<'t> Jurisdiction<'t> {
    /// Code: FIPS in the US, ISO 3166 elsewhere.
    pub fn code(&self) -> &'t str {
        self.rec.code.as_str()
    }
    /// Name.
    pub fn name(&self) -> &'t str {
        self.rec.name.as_str()
    }
    /// Level.
    pub fn level(&self) -> Level {
        Level::from_u8(self.rec.level)
    }
    /// ISO 3166-1 alpha-2 country.
    pub fn country(&self) -> &'t str {
        std::str::from_utf8(&self.rec.country).unwrap_or("")
    }
    /// The country's two bytes as stored, unchecked (the hot path compares them as bytes).
    pub(crate) fn country_bytes(&self) -> [u8; 2] {
        self.rec.country
    }
    /// Region (state or province), empty for a country.
    pub fn region(&self) -> &'t str {
        self.rec.region.as_str()
    }
    /// Authority name.
    pub fn authority(&self) -> &'t str {
        self.rec.authority.as_str()
    }
    /// Tax type.
    pub fn tax_type(&self) -> TaxType {
        TaxType::from_u8(self.rec.tax_type)
    }
}

/// A tax rule, read in place.
#[derive(Clone, Copy, Debug)]
pub struct Rule<'t> {
    pub(crate) rec: &'t ArchivedRuleRecord,
}

impl<'t> Rule<'t> {
    /// Jurisdiction it belongs to.
    pub fn jurisdiction(&self) -> JurisdictionId {
        JurisdictionId(self.rec.jurisdiction.to_native())
    }
    /// Tax code it is written for.
    pub fn tax_code(&self) -> TaxCodeId {
        TaxCodeId(self.rec.tax_code.to_native())
    }
    /// First and last day in force, as days since 1970-01-01.
    pub fn interval(&self) -> (crate::Date, crate::Date) {
        (
            crate::Date(self.rec.from.to_native()),
            crate::Date(self.rec.to.to_native()),
        )
    }
    /// Rate as a fraction.
    pub fn rate(&self) -> Decimal {
        load_decimal(&self.rec.rate)
    }
    /// Taxed band of the unit price, in major units (`Decimal::MAX` upper edge: none).
    pub fn band(&self) -> (Decimal, Decimal) {
        (
            load_decimal(&self.rec.base_min),
            load_decimal(&self.rec.base_max),
        )
    }
    /// Unit prices the rule applies to, `[min, max)` in major units.
    pub fn unit_range(&self) -> (Decimal, Decimal) {
        (
            load_decimal(&self.rec.unit_min),
            load_decimal(&self.rec.unit_max),
        )
    }
    /// Fixed fee per unit in major units.
    pub fn fee(&self) -> Decimal {
        load_decimal(&self.rec.fee)
    }
    /// Rate type label.
    pub fn rate_type(&self) -> &'t str {
        self.rec.rate_type.as_str()
    }
    /// Whether the rule is a plain rate on the whole amount: no band, no unit range, no fee.
    /// Read from the stored bytes without decoding a decimal (the builder stores "none" as
    /// zero and `Decimal::MAX`).
    #[inline]
    pub fn is_plain(&self) -> bool {
        const ZERO: [u8; 16] = [0; 16];
        self.rec.base_min == ZERO
            && self.rec.unit_min == ZERO
            && self.rec.fee == ZERO
            && self.rec.base_max == MAX_BYTES
            && self.rec.unit_max == MAX_BYTES
            && !self.rec.proportional
            && self.rec.sale_group.to_native() == 0
    }

    /// The per-sale threshold the rule applies under: its group, its limit in major units
    /// and whether it applies above the limit (else at or below it); `None` for most rules.
    pub fn sale_condition(&self) -> Option<(u32, Decimal, bool)> {
        let group = self.rec.sale_group.to_native();
        (group != 0).then(|| {
            (
                group,
                load_decimal(&self.rec.sale_limit),
                self.rec.sale_above,
            )
        })
    }

    /// Whether the rule taxes a delivery charge in proportion to the taxable share of the
    /// sale's goods.
    pub fn is_proportional(&self) -> bool {
        self.rec.proportional
    }

    /// Index of the manifest entry that wrote the rule.
    pub fn source(&self) -> u32 {
        self.rec.source.to_native()
    }
}

impl ArchivedRuleKey {
    /// Whether the rule of the key is in force on `date`.
    #[inline]
    pub(crate) fn in_force(&self, date: crate::Date) -> bool {
        date.within(self.from.to_native(), self.to.to_native())
    }

    /// The rate of a fast rule's key, as a decimal and as its mantissa and scale; `None`
    /// for a rule that is not fast (its record holds what the integer path cannot take) or
    /// a scale no decimal holds.
    #[inline]
    pub(crate) fn fast_rate(&self) -> Option<(Decimal, i64, u32)> {
        if !self.fast {
            return None;
        }
        let (m, scale) = (self.rate_mantissa.to_native(), u32::from(self.rate_scale));
        Some((Decimal::try_new(m, scale).ok()?, m, scale))
    }
}

impl ArchivedTableData {
    /// A jurisdiction by id.
    pub fn jurisdiction(&self, id: JurisdictionId) -> Option<Jurisdiction<'_>> {
        self.jurisdictions
            .get(id.0 as usize)
            .map(|rec| Jurisdiction { rec })
    }

    /// How many jurisdictions the table has; ids run from 0 below this.
    pub fn jurisdiction_count(&self) -> usize {
        self.jurisdictions.len()
    }

    /// Finds a jurisdiction by code (linear; for tools and tests, not the hot path).
    pub fn jurisdiction_by_code(&self, code: &str) -> Option<JurisdictionId> {
        self.jurisdictions
            .iter()
            .position(|j| j.code.as_str() == code)
            .map(|i| JurisdictionId(i as u32))
    }

    /// A rule by id.
    pub fn rule(&self, id: RuleId) -> Option<Rule<'_>> {
        self.rules.get(id.0 as usize).map(|rec| Rule { rec })
    }

    /// The rules of one jurisdiction, every tax code and date.
    pub fn rules_of(&self, id: JurisdictionId) -> impl Iterator<Item = (RuleId, Rule<'_>)> + '_ {
        let (start, end) = self.rule_span(id);
        (start..end).filter_map(move |i| self.rule(RuleId(i as u32)).map(|r| (RuleId(i as u32), r)))
    }

    pub(crate) fn rule_span(&self, id: JurisdictionId) -> (usize, usize) {
        let starts = &self.rule_start;
        let n = self.rules.len();
        let i = id.0 as usize;
        match (starts.get(i), starts.get(i + 1)) {
            (Some(s), Some(e)) => {
                let (s, e) = (s.to_native() as usize, e.to_native() as usize);
                if s <= e && e <= n {
                    (s, e)
                } else {
                    (0, 0)
                }
            }
            _ => (0, 0),
        }
    }

    /// The record of US ZIP code `zip5`, if the table knows it.
    pub(crate) fn zip_record(&self, zip5: u32) -> Option<&ArchivedZipRecord> {
        let d = self;
        let i = d.zip5.get(zip5 as usize)?.to_native();
        d.zips.get(i as usize)
    }

    /// The places a buyer may name in ZIP `zip5` (see [`crate::model::TableData::zip_cities`]):
    /// empty for most ZIPs.
    pub(crate) fn zip_city_records(&self, zip5: u32) -> &[ArchivedZipCity] {
        let all = self.zip_cities.as_slice();
        let start = all.partition_point(|c| c.zip.to_native() < zip5);
        let len = all[start..].partition_point(|c| c.zip.to_native() == zip5);
        &all[start..start + len]
    }

    /// The compact keys of every rule of `jurisdiction` for `code` (every period), walking
    /// up the taxonomy to the nearest code that has any, and the id of the first, searched:
    /// the jurisdiction's span of rule keys, then the code's keys in it (or its parent's).
    pub(crate) fn search_rule_keys(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> (usize, &[ArchivedRuleKey]) {
        let (start, end) = self.rule_span(jurisdiction);
        // The compact keys, parallel to the rules (a damaged table whose key list is short
        // finds no rules rather than reading out of bounds).
        let keys = self.rule_keys.get(start..end).unwrap_or_default();
        let mut found = (0, 0);
        let mut c = Some(code);
        for _ in 0..64 {
            let Some(cur) = c else { break };
            let lo = keys.partition_point(|r| r.tax_code.to_native() < cur.0);
            // A code has few rules in a jurisdiction (its periods, its bands): counted
            // one by one rather than searched.
            let hi = lo
                + keys[lo..]
                    .iter()
                    .take_while(|r| r.tax_code.to_native() == cur.0)
                    .count();
            if lo < hi {
                found = (lo, hi);
                break;
            }
            c = self.tax_code_parent(cur);
        }
        (start + found.0, &keys[found.0..found.1])
    }

    /// A tax code by exact name (`CLOTHING_GENERAL`).
    pub fn tax_code(&self, name: &str) -> Option<TaxCodeId> {
        let codes = &self.tax_codes;
        codes
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(|i| TaxCodeId(i as u32))
    }

    /// The name of a tax code.
    pub fn tax_code_name(&self, id: TaxCodeId) -> Option<&str> {
        self.tax_codes.get(id.0 as usize).map(|c| c.name.as_str())
    }

    /// Whether every place's row of the taxability matrix must address a tax code (see
    /// [`crate::model::TaxCodeRecord::matrix`]).
    pub fn tax_code_in_matrix(&self, id: TaxCodeId) -> bool {
        self.tax_codes.get(id.0 as usize).is_some_and(|c| c.matrix)
    }

    /// The description of a tax code.
    pub fn tax_code_description(&self, id: TaxCodeId) -> Option<&str> {
        self.tax_codes
            .get(id.0 as usize)
            .map(|c| c.description.as_str())
    }

    /// The Streamlined Library of Definitions term a tax code implements; empty for none.
    pub fn tax_code_sst(&self, id: TaxCodeId) -> Option<&str> {
        self.tax_codes.get(id.0 as usize).map(|c| c.sst.as_str())
    }

    /// The number of tax codes (ids run from 0 below it, in name order).
    pub fn tax_code_count(&self) -> usize {
        self.tax_codes.len()
    }

    /// Whether a code is a delivery charge's (see [`crate::model::TaxCodeRecord::delivery`]).
    pub fn tax_code_is_delivery(&self, id: TaxCodeId) -> bool {
        self.tax_codes
            .get(id.0 as usize)
            .is_some_and(|c| c.delivery)
    }

    /// The parent of a tax code, if any.
    pub fn tax_code_parent(&self, id: TaxCodeId) -> Option<TaxCodeId> {
        let p = self.tax_codes.get(id.0 as usize)?.parent.to_native();
        (p != u32::MAX && (p as usize) < self.tax_codes.len()).then_some(TaxCodeId(p))
    }

    /// Whether `code` is `ancestor` or lies beneath it in the taxonomy.
    pub fn tax_code_within(&self, code: TaxCodeId, ancestor: TaxCodeId) -> bool {
        let mut c = Some(code);
        // The depth bound keeps a damaged, cyclic taxonomy from looping.
        for _ in 0..64 {
            match c {
                Some(x) if x == ancestor => return true,
                Some(x) => c = self.tax_code_parent(x),
                None => return false,
            }
        }
        false
    }

    /// The tax code a product category maps to (`CLOTHING` -> its code). Category names
    /// are matched exactly, as the interface sends them.
    pub fn category(&self, name: &str) -> Option<TaxCodeId> {
        let cats = &self.categories;
        let i = cats.binary_search_by(|c| c.name.as_str().cmp(name)).ok()?;
        let code = cats[i].tax_code.to_native();
        ((code as usize) < self.tax_codes.len()).then_some(TaxCodeId(code))
    }

    /// Every category name, sorted.
    pub fn category_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.categories.iter().map(|c| c.name.as_str())
    }

    /// The jurisdictions of a set, in level order.
    pub fn jset(&self, id: JsetId) -> impl Iterator<Item = JurisdictionId> + '_ {
        let d = self;
        let i = id.0 as usize;
        let span = match (d.jset_start.get(i), d.jset_start.get(i + 1)) {
            (Some(s), Some(e)) => {
                let (s, e) = (s.to_native() as usize, e.to_native() as usize);
                if s <= e && e <= d.jset_items.len() {
                    &d.jset_items[s..e]
                } else {
                    &d.jset_items[0..0]
                }
            }
            _ => &d.jset_items[0..0],
        };
        span.iter().map(|j| JurisdictionId(j.to_native()))
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    #[test]
    fn max_bytes_are_decimal_max() {
        assert_eq!(Decimal::MAX.serialize(), super::MAX_BYTES);
        assert_eq!(Decimal::ZERO.serialize(), [0u8; 16]);
    }
}

/// The stages of [`ArchivedTableData::prefetch_jset`], in the order a batch runs them for a sale: each
/// reads what the stage before brought into cache and asks for the next level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefetch {
    /// The set's entry in the span index.
    SetStart,
    /// The set's jurisdiction ids.
    SetItems,
    /// Each jurisdiction's record and its entry in the rule span index.
    Jurisdictions,
    /// The first rule keys of each jurisdiction.
    RuleKeys,
}

/// Asks the processor to bring the cache line holding `value` into cache, without waiting
/// for it: a hint, with no effect on what the program computes (nor any fault on any
/// address). A no-op on processors without a stable prefetch instruction in Rust.
#[inline(always)]
fn prefetch<T>(value: &T) {
    prefetch_address((value as *const T).cast());
}

/// [`prefetch`] of the line holding the byte at `address`, which may be any address: the
/// pointer is never read through.
#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // `_mm_prefetch` is an `unsafe fn` before Rust 1.87 (the minimum is 1.85) and safe
    // after, where the block is unneeded.
    #[allow(unused_unsafe)]
    // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the
    // address; SSE, which it needs, is part of every x86-64 processor.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// The most cache lines [`prefetch_slice`] asks for: a ZIP's ZIP+4 ranges fit in it
/// (25 ranges of 20 bytes take 8 lines), and a larger span is searched mostly in its
/// first lines' neighbourhood anyway.
const PREFETCH_LINES: usize = 16;

/// Asks for every cache line of `items` (up to [`PREFETCH_LINES`]) at once, so that a
/// binary search over them waits for one memory access instead of one for each of its
/// steps. A hint, as [`prefetch`].
#[inline]
pub(crate) fn prefetch_slice<T>(items: &[T]) {
    if items.is_empty() {
        return;
    }
    let start = items.as_ptr().cast::<u8>();
    // From the start of the line holding the first byte, so that a slice that starts
    // inside a line gets its last line too.
    let skew = start as usize % 64;
    let line = start.wrapping_sub(skew);
    let bytes = (std::mem::size_of_val(items) + skew).min(PREFETCH_LINES * 64);
    for offset in (0..bytes).step_by(64) {
        // `wrapping_*`: the addresses are only hints, never read through.
        prefetch_address(line.wrapping_add(offset));
    }
}

impl ArchivedTableData {
    /// One stage of bringing into cache the records a calculation in jurisdiction set `id`
    /// reads, so that a batch can ask for those of the sales a few places ahead while it
    /// calculates the current one, instead of waiting on each level in turn (set, its
    /// jurisdictions, their rules). Reads only what the previous stage fetched; a hint,
    /// so any id, even one out of range, is harmless.
    pub(crate) fn prefetch_jset(&self, id: JsetId, stage: Prefetch) {
        let d = self;
        let i = id.0 as usize;
        match stage {
            Prefetch::SetStart => {
                if let Some(s) = d.jset_start.get(i) {
                    prefetch(s);
                }
            }
            Prefetch::SetItems => {
                if let Some(s) = d.jset_start.get(i) {
                    if let Some(item) = d.jset_items.get(s.to_native() as usize) {
                        prefetch(item);
                    }
                }
            }
            Prefetch::Jurisdictions => {
                for j in self.jset(id) {
                    if let Some(rec) = d.jurisdictions.get(j.0 as usize) {
                        prefetch(rec);
                    }
                    if let Some(s) = d.rule_start.get(j.0 as usize) {
                        prefetch(s);
                    }
                }
            }
            Prefetch::RuleKeys => {
                for j in self.jset(id) {
                    if let Some(s) = d.rule_start.get(j.0 as usize) {
                        if let Some(k) = d.rule_keys.get(s.to_native() as usize) {
                            prefetch(k);
                        }
                    }
                }
            }
        }
    }
}
