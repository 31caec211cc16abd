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
use crate::derived::{code_span, known_at, place_key, place_span, TaxabilityIndex};
use crate::kinds::{Level, TaxabilityLevels};
use crate::lookup::{JurisdictionId, TaxCodeId};
use crate::model::load_decimal;
use crate::model::ArchivedTaxabilityRecord;
use crate::table::Table;

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
            .filter(|k| date.is_none_or(|day| day.within(k.from.to_native(), k.to.to_native())))
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
