//! The taxability matrix a table carries: how each place treats each product tax code, with
//! the source of every cell, and whether a calculation's line knows its product's treatment.
//!
//! A place is a US state, Canada (the federal GST) or a Canadian province, or a whole
//! country. A cell speaks for levels of its place: the upper level (a state's own tax, the
//! federal GST, a country's VAT) and the lower (a state's local taxes, a province's own
//! tax). A line's treatment is known when, for every jurisdiction in its answer, a cell of
//! the jurisdiction's place names the line's code (or, for a code outside the matrix, the
//! nearest code above it that the place's cells name) at the jurisdiction's level on the
//! sale's day, with a treatment other than `unknown`. The roots of the taxonomy
//! (`GENERAL_MERCHANDISE`, `EXEMPT`, ...) are known everywhere.

use rust_decimal::Decimal;

use crate::date::Date;
use crate::kinds::Level;
use crate::lookup::{JurisdictionId, TaxCodeId};
use crate::model::{ArchivedTaxabilityKey, ArchivedTaxabilityRecord};
use crate::table::{load_decimal, Table};

/// The levels of a place a cell speaks for, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TaxabilityLevels(pub u8);

impl TaxabilityLevels {
    /// The level's name for a place of `country`: `state` or `local` in the US, `federal`
    /// or `provincial` in Canada, `country` elsewhere (`all` for both levels).
    pub fn name(self, country: &str) -> &'static str {
        match (country, self.0) {
            (_, 3) => "all",
            ("US", 1) => "state",
            ("US", _) => "local",
            ("CA", 1) => "federal",
            ("CA", _) => "provincial",
            _ => "country",
        }
    }

    /// The place's own tax: a US state's, Canada's federal GST, a country's VAT or GST.
    pub const UPPER: TaxabilityLevels = TaxabilityLevels(1);
    /// The taxes below it: a US state's county, city and district taxes; a Canadian
    /// province's own tax (PST, RST, QST) or the provincial part of its HST.
    pub const LOWER: TaxabilityLevels = TaxabilityLevels(2);
    /// Both.
    pub const ALL: TaxabilityLevels = TaxabilityLevels(3);

    /// Whether every level of `other` is in `self`.
    pub fn contains(self, other: TaxabilityLevels) -> bool {
        self.0 & other.0 == other.0
    }
}

/// How a cell treats its codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Treatment {
    /// At the level's general rate.
    Taxable = 0,
    /// Not taxed: exempt, zero-rated or outside the tax.
    Exempt = 1,
    /// At a rate of its own, reduced or higher.
    Rate = 2,
    /// By rule lines of their own: bands, per-item thresholds, shares, fees.
    Parts = 3,
    /// Not known: the cell documents why; it writes no rule.
    Unknown = 4,
}

impl Treatment {
    /// The name the matrix files and `levy taxability` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Treatment::Taxable => "taxable",
            Treatment::Exempt => "exempt",
            Treatment::Rate => "rate",
            Treatment::Parts => "parts",
            Treatment::Unknown => "unknown",
        }
    }

    /// Parses the name.
    pub fn parse(s: &str) -> Option<Treatment> {
        Some(match s {
            "taxable" => Treatment::Taxable,
            "exempt" => Treatment::Exempt,
            "rate" => Treatment::Rate,
            "parts" => Treatment::Parts,
            "unknown" => Treatment::Unknown,
            _ => return None,
        })
    }

    /// Reads a stored code; an unknown code (a damaged table) reads as `Unknown`, never as
    /// more than the table knows.
    pub(crate) fn from_u8(v: u8) -> Treatment {
        match v {
            0 => Treatment::Taxable,
            1 => Treatment::Exempt,
            2 => Treatment::Rate,
            3 => Treatment::Parts,
            _ => Treatment::Unknown,
        }
    }
}

/// Whether a line's (or a whole calculation's) product treatment is known in every
/// jurisdiction of its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Taxability {
    /// Every jurisdiction's treatment of the product is in the table's matrix.
    #[default]
    Known,
    /// Some jurisdiction's is not: the line was taxed at the rule its code inherits (most
    /// often the general rate), which may be wrong.
    Unknown,
}

impl Taxability {
    /// `KNOWN` or `UNKNOWN`, as the interfaces write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Taxability::Known => "KNOWN",
            Taxability::Unknown => "UNKNOWN",
        }
    }
}

/// One cell of a table's taxability matrix, read in place.
#[derive(Clone, Copy, Debug)]
pub struct TaxabilityCell<'t> {
    rec: &'t ArchivedTaxabilityRecord,
}

impl<'t> TaxabilityCell<'t> {
    /// ISO 3166-1 alpha-2 country of the place.
    pub fn country(&self) -> &'t str {
        std::str::from_utf8(&self.rec.country).unwrap_or("")
    }
    /// The place's region; empty for a whole country or Canada's federal tax.
    pub fn region(&self) -> &'t str {
        self.rec.region.as_str()
    }
    /// The place as the matrix names it: `US-TN`, `CA`, `CA-ON`, `DE`.
    pub fn place(&self) -> String {
        if self.region().is_empty() {
            self.country().to_string()
        } else {
            format!("{}-{}", self.country(), self.region())
        }
    }
    /// The levels it speaks for.
    pub fn levels(&self) -> TaxabilityLevels {
        TaxabilityLevels(self.rec.levels)
    }
    /// The levels as written (`state`, `local`, `all`, `federal`, `provincial`, `country`,
    /// or the jurisdictions the cell names).
    pub fn scope(&self) -> &'t str {
        self.rec.scope.as_str()
    }
    /// The treatment.
    pub fn treatment(&self) -> Treatment {
        Treatment::from_u8(self.rec.treatment)
    }
    /// What the treatment charges, in words.
    pub fn summary(&self) -> &'t str {
        self.rec.summary.as_str()
    }
    /// The tax codes it names.
    pub fn codes(&self) -> impl Iterator<Item = TaxCodeId> + 't {
        self.rec.codes.iter().map(|c| TaxCodeId(c.to_native()))
    }
    /// First and last day (inclusive).
    pub fn interval(&self) -> (Date, Date) {
        (
            Date(self.rec.from.to_native()),
            Date(self.rec.to.to_native()),
        )
    }
    /// The per-sale threshold it applies under (major units), if any.
    pub fn sale_at_most(&self) -> Option<Decimal> {
        let d = load_decimal(&self.rec.sale_at_most);
        (d != Decimal::MAX).then_some(d)
    }
    /// The rate type label of the rules it wrote.
    pub fn label(&self) -> &'t str {
        self.rec.label.as_str()
    }
    /// The primary source.
    pub fn source(&self) -> &'t str {
        self.rec.source.as_str()
    }
    /// The day it was last checked against its source.
    pub fn as_of(&self) -> Date {
        Date(self.rec.as_of.to_native())
    }
    /// What it does and does not cover.
    pub fn note(&self) -> &'t str {
        self.rec.note.as_str()
    }
}

/// A place's key, as the taxability keys and holiday keys order places.
pub(crate) use crate::calc::place_key;

/// A place's key as the matrix names the place: `US-TN`, `CA`, `DE`.
fn place_name(key: u64) -> String {
    let bytes = key.to_be_bytes();
    let country = String::from_utf8_lossy(&bytes[..2]).into_owned();
    let region: String = bytes[2..]
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| b as char)
        .collect();
    if region.is_empty() {
        country
    } else {
        format!("{country}-{region}")
    }
}

/// What a table's matrix says of each (place, tax code), made on the first question: one
/// byte per pair, so that a line asks one load per place of its answer.
#[derive(Debug, Default)]
pub(crate) struct TaxabilityIndex {
    /// The places with cells, ascending.
    places: Box<[u64]>,
    /// `status[p * codes + c]`: the [`TaxabilityLevels`] known on every day for code `c` in
    /// place `p`, plus [`TaxabilityIndex::DATED`] when what is known depends on the day
    /// (the place's keys then decide).
    status: Box<[u8]>,
    /// The number of tax codes.
    codes: usize,
    /// The Canadian provinces whose tax is an HST (their region's jurisdictions hold no
    /// federal GST beside it), as places: an HST answers to the federal cells and the
    /// province's alike.
    hst: Box<[u64]>,
}

impl TaxabilityIndex {
    /// Known on some days and not others: the keys decide.
    const DATED: u8 = 0x80;

    fn build<D>(table: &Table<D>) -> TaxabilityIndex {
        let d = table.data();
        let keys = &d.taxability_keys;
        let codes = d.tax_codes.len();
        let mut places: Vec<u64> = keys.iter().map(|k| k.place.to_native()).collect();
        places.dedup();
        let mut status = vec![0u8; places.len() * codes];
        for (p, &place) in places.iter().enumerate() {
            let span = place_span(keys, place);
            let place_keys = &keys[span];
            for c in 0..codes {
                status[p * codes + c] = resolve_status(table, place_keys, TaxCodeId(c as u32));
            }
        }
        let mut hst: Vec<u64> = d
            .regions
            .iter()
            .filter(|r| r.country == *b"CA" && !r.region.is_empty())
            .filter(|r| {
                !table.jset(crate::JsetId(r.jset.to_native())).any(|j| {
                    table
                        .jurisdiction(j)
                        .is_some_and(|x| x.level() == Level::Country)
                })
            })
            .map(|r| place_key(r.country, r.region.as_bytes()))
            .collect();
        hst.sort_unstable();
        TaxabilityIndex {
            places: places.into_boxed_slice(),
            status: status.into_boxed_slice(),
            codes,
            hst: hst.into_boxed_slice(),
        }
    }
}

/// The span of `keys` (sorted by place) holding `place`'s keys.
fn place_span(keys: &[ArchivedTaxabilityKey], place: u64) -> std::ops::Range<usize> {
    let lo = keys.partition_point(|k| k.place.to_native() < place);
    let hi = keys.partition_point(|k| k.place.to_native() <= place);
    // Keys out of order (a damaged table) find less, never a reversed span.
    lo..hi.max(lo)
}

/// The span of `keys` (one place's, sorted by code) holding `code`'s keys.
fn code_span(keys: &[ArchivedTaxabilityKey], code: u32) -> std::ops::Range<usize> {
    let lo = keys.partition_point(|k| k.tax_code.to_native() < code);
    let hi = keys.partition_point(|k| k.tax_code.to_native() <= code);
    lo..hi.max(lo)
}

/// Whether one place's keys make `code`'s treatment known at the level `bit` on `day`:
/// a key of the code itself for that level in force that day decides (an `unknown` cell
/// says no); without one, a code outside the matrix asks its parent, a root is known, and
/// any other code is not.
fn known_at<D>(
    table: &Table<D>,
    place_keys: &[ArchivedTaxabilityKey],
    code: TaxCodeId,
    bit: u8,
    day: i32,
) -> bool {
    let mut c = code;
    for _ in 0..64 {
        let mut own = place_keys[code_span(place_keys, c.0)].iter().filter(|k| {
            k.levels & bit != 0 && k.from.to_native() <= day && day <= k.to.to_native()
        });
        if let Some(first) = own.next() {
            return first.known & bit != 0 || own.any(|k| k.known & bit != 0);
        }
        match table.data().tax_codes.get(c.0 as usize) {
            Some(r) if r.parent.to_native() == u32::MAX => return true,
            Some(r) if !r.matrix => c = TaxCodeId(r.parent.to_native()),
            _ => return false,
        }
    }
    false
}

/// What one place's keys say of `code`: the levels known on every day, with
/// [`TaxabilityIndex::DATED`] when some level is known on some days only (then
/// [`known_at`] decides, day by day).
fn resolve_status<D>(
    table: &Table<D>,
    place_keys: &[ArchivedTaxabilityKey],
    code: TaxCodeId,
) -> u8 {
    // The days on which the answer may change: those of the keys of the code and of every
    // code above it through codes outside the matrix.
    let mut days = vec![Date::MIN.0];
    let mut c = code;
    for _ in 0..64 {
        for k in &place_keys[code_span(place_keys, c.0)] {
            days.push(k.from.to_native());
            days.push(k.to.to_native().saturating_add(1));
        }
        match table.data().tax_codes.get(c.0 as usize) {
            Some(r) if r.parent.to_native() != u32::MAX && !r.matrix => {
                c = TaxCodeId(r.parent.to_native())
            }
            _ => break,
        }
    }
    days.sort_unstable();
    days.dedup();
    let mut status = 0u8;
    for bit in [TaxabilityLevels::UPPER.0, TaxabilityLevels::LOWER.0] {
        let known: Vec<bool> = days
            .iter()
            .map(|&d| known_at(table, place_keys, code, bit, d))
            .collect();
        if known.iter().all(|&k| k) {
            status |= bit;
        } else if known.iter().any(|&k| k) {
            status |= TaxabilityIndex::DATED;
        }
    }
    status
}

impl<D> Table<D> {
    /// The cells of the table's taxability matrix, in the order written.
    pub fn taxability_cells(&self) -> impl Iterator<Item = TaxabilityCell<'_>> + '_ {
        self.data()
            .taxability
            .iter()
            .map(|rec| TaxabilityCell { rec })
    }

    /// The cells of `place` (`US-TN`, `CA`, `CA-ON`, `DE`) that name `code` itself, in
    /// force on `date` when one is given.
    pub fn taxability_cells_for(
        &self,
        country: &str,
        region: &str,
        code: TaxCodeId,
        date: Option<Date>,
    ) -> Vec<TaxabilityCell<'_>> {
        let (Ok(cc), true) = (<[u8; 2]>::try_from(country.as_bytes()), region.len() <= 6) else {
            return Vec::new();
        };
        let d = self.data();
        let keys = &d.taxability_keys;
        let span = place_span(keys, place_key(cc, region.as_bytes()));
        let place_keys = &keys[span];
        place_keys[code_span(place_keys, code.0)]
            .iter()
            .filter(|k| {
                date.is_none_or(|day| k.from.to_native() <= day.0 && day.0 <= k.to.to_native())
            })
            .filter_map(|k| d.taxability.get(k.cell.to_native() as usize))
            .map(|rec| TaxabilityCell { rec })
            .collect()
    }

    /// The cells that answer for `code` in a place on `date` (every date without one): the
    /// code's own, or, for a code outside the matrix without cells of its own, those of the
    /// nearest code above it that has some; with the code they name. `None` when no cell
    /// of the place answers for it (a root is known without cells).
    pub fn taxability_answer(
        &self,
        country: &str,
        region: &str,
        code: TaxCodeId,
        date: Option<Date>,
    ) -> Option<(TaxCodeId, Vec<TaxabilityCell<'_>>)> {
        let mut c = code;
        for _ in 0..64 {
            let cells: Vec<TaxabilityCell<'_>> = self
                .taxability_cells_for(country, region, c, None)
                .into_iter()
                .filter(|cell| {
                    let (from, to) = cell.interval();
                    date.is_none_or(|d| from <= d && d <= to)
                })
                .collect();
            let rec = self.data().tax_codes.get(c.0 as usize)?;
            // A code outside the matrix without cells on the day answers as its parent.
            if !cells.is_empty() || rec.matrix {
                return Some((c, cells));
            }
            if rec.parent.to_native() == u32::MAX {
                return None;
            }
            c = TaxCodeId(rec.parent.to_native());
        }
        None
    }

    fn taxability_index(&self) -> &TaxabilityIndex {
        self.taxability.get_or_init(|| TaxabilityIndex::build(self))
    }

    /// Whether the treatment of `code` in the places and at the levels of `jurisdiction` is
    /// known on `date`.
    pub fn treatment_known(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
        date: Date,
    ) -> bool {
        self.asks(jurisdiction)
            .iter()
            .filter(|(_, bit)| *bit != 0)
            .all(|&(place, bit)| self.known_in(place, code, bit, date))
    }

    /// The places and levels of a line's answer whose treatment of `code` on `date` the
    /// matrix does not hold: what to tell the user when a line's taxability is `Unknown`,
    /// each as (place as the matrix names it, `US-DC`; the level).
    pub fn taxability_gaps(
        &self,
        code: TaxCodeId,
        entries: &[crate::JurisdictionTax],
        date: Date,
    ) -> Vec<(String, TaxabilityLevels)> {
        let mut gaps: Vec<(String, TaxabilityLevels)> = Vec::new();
        if self.is_root(code) {
            return gaps;
        }
        for e in entries {
            for (place, bit) in self.asks(e.jurisdiction) {
                if bit == 0 || self.known_in(place, code, bit, date) {
                    continue;
                }
                let name = place_name(place);
                let level = TaxabilityLevels(bit);
                if !gaps.iter().any(|g| g.0 == name && g.1 == level) {
                    gaps.push((name, level));
                }
            }
        }
        gaps
    }

    /// The (place, level bit) pairs whose cells decide whether `jurisdiction` knows a
    /// product's treatment (a bit of 0 asks nothing).
    fn asks(&self, jurisdiction: JurisdictionId) -> [(u64, u8); 2] {
        let Some(j) = self.jurisdiction(jurisdiction) else {
            // A jurisdiction the table lacks (a damaged table) knows nothing.
            return [(0, TaxabilityLevels::UPPER.0), (0, 0)];
        };
        let region = j.region().as_bytes();
        let upper = place_key(j.country_bytes(), b"");
        let own = place_key(j.country_bytes(), region);
        let asks: [(u64, u8); 2] = match (j.country(), j.level()) {
            // A US state's own tax and the state-level add-ons; its local taxes.
            ("US", Level::State) => [(own, TaxabilityLevels::UPPER.0), (0, 0)],
            ("US", _) => [(own, TaxabilityLevels::LOWER.0), (0, 0)],
            // Canada: the federal GST; a province's own tax; an HST (a provincial
            // jurisdiction of the GST's type) is both.
            ("CA", Level::Country) => [(upper, TaxabilityLevels::UPPER.0), (0, 0)],
            ("CA", _) if self.taxability_index().hst.binary_search(&own).is_ok() => [
                (upper, TaxabilityLevels::UPPER.0),
                (own, TaxabilityLevels::LOWER.0),
            ],
            ("CA", _) => [(own, TaxabilityLevels::LOWER.0), (0, 0)],
            // A whole country's VAT or GST; a region of another country answers at the
            // country's cells.
            _ => [(upper, TaxabilityLevels::UPPER.0), (0, 0)],
        };
        asks
    }

    /// Whether `place`'s cells make `code`'s treatment known at the level `bit` on `date`.
    fn known_in(&self, place: u64, code: TaxCodeId, bit: u8, date: Date) -> bool {
        let index = self.taxability_index();
        let Ok(p) = index.places.binary_search(&place) else {
            // A place with no cells knows only the roots (and the codes outside the matrix
            // that lead to one).
            return known_at(self, &[], code, bit, date.0);
        };
        let Some(&status) = index.status.get(p * index.codes + code.0 as usize) else {
            return false;
        };
        if status & bit != 0 {
            return true;
        }
        if status & TaxabilityIndex::DATED == 0 {
            return false;
        }
        let keys = &self.data().taxability_keys;
        known_at(self, &keys[place_span(keys, place)], code, bit, date.0)
    }

    /// Whether `code` is a root of the taxonomy.
    fn is_root(&self, code: TaxCodeId) -> bool {
        self.data()
            .tax_codes
            .get(code.0 as usize)
            .is_some_and(|r| r.parent.to_native() == u32::MAX)
    }

    /// Whether the treatment of `code` is known in every jurisdiction of `entries` on
    /// `date`: a line's [`Taxability`].
    pub(crate) fn line_taxability(
        &self,
        code: TaxCodeId,
        entries: &[crate::JurisdictionTax],
        date: Date,
    ) -> Taxability {
        if self.is_root(code) {
            return Taxability::Known;
        }
        let mut last = None;
        for e in entries {
            // A line's entries are grouped by jurisdiction (a rule of several parts gives
            // several entries of one jurisdiction): each asked once.
            if last == Some(e.jurisdiction) {
                continue;
            }
            last = Some(e.jurisdiction);
            if !self.treatment_known(e.jurisdiction, code, date) {
                return Taxability::Unknown;
            }
        }
        Taxability::Known
    }
}
