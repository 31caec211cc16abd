//! The table's derived indexes, read through the table: each made from the archive on its
//! first use (by `crate::derived`, which reads the archive alone) and kept in the table
//! beside it. Resolution and the calculation ask these; nothing below the table does.

use std::sync::OnceLock;

use crate::date::Date;
use crate::derived::holidays::{HolidayIndex, HolidayPlace};
use crate::derived::spans::{Bounds, Span, Spans};
use crate::derived::taxability::TaxabilityIndex;
use crate::derived::usual_rules::{UsualRule, UsualRules};
use crate::derived::zip4::zip4_starts;
use crate::derived::zip_usual::ZipUsual;
use crate::kinds::Coverage;
use crate::lookup::{JsetId, JurisdictionId, TaxCodeId};
use crate::model::ArchivedRuleKey;
use crate::table::Table;

/// ZIP+4 ranges and ZIP words.
impl<D> Table<D> {
    /// The span of `data().zip4` holding the ranges of `zip5` (empty for none). For a damaged
    /// table whose ranges are out of order the span is wrong but always in bounds.
    pub(crate) fn zip4_span(&self, zip5: u32) -> (usize, usize) {
        let starts = self
            .derived
            .zip4_start
            .get_or_init(|| zip4_starts(&self.data().zip4));
        match (starts.get(zip5 as usize), starts.get(zip5 as usize + 1)) {
            (Some(&s), Some(&e)) => (s as usize, e as usize),
            _ => (0, 0),
        }
    }

    /// The set and coverage of ZIP `zip5` on `date` from its [`ZipUsual`] word (filled from
    /// the record on first use); `None` when the ZIP has no usual answer that day, and the
    /// record decides.
    #[inline]
    pub(crate) fn zip_usual(&self, zip5: u32, date: Date) -> Option<(JsetId, Coverage)> {
        use std::sync::atomic::Ordering::Relaxed;
        if !ZipUsual::DAYS.contains(&date.0) {
            return None;
        }
        let usual = self
            .derived
            .zip_usual
            .get_or_init(|| ZipUsual::new(self.data()));
        let slot = usual.words.get(zip5 as usize)?;
        let mut word = slot.load(Relaxed);
        if word == ZipUsual::EMPTY {
            word = ZipUsual::word_of(self.data(), zip5);
            slot.store(word, Relaxed);
        }
        ZipUsual::answer(word, date)
    }
}

/// Holidays.
impl<D> Table<D> {
    /// The place `place` (numbered as [`crate::derived::place_key`] does) among the holiday
    /// keys, if any key is of it. The keys of a place are consecutive in a sound table; in
    /// a damaged one whose keys are out of order, a place's span may be wrong but is always
    /// in bounds.
    pub(crate) fn holiday_place(&self, place: u64) -> Option<&HolidayPlace> {
        let places = &self.holiday_index().places;
        let i = places.partition_point(|p| p.place < place);
        places.get(i).filter(|p| p.place == place)
    }

    /// Whether any holiday key of the table, of any place, is in force on `date`: when
    /// none is (most days of the year), no jurisdiction of a sale can be on a holiday, and
    /// a line looks no further than this.
    pub(crate) fn any_holiday_on(&self, date: Date) -> bool {
        self.holiday_index().any_on(date.0)
    }

    fn holiday_index(&self) -> &HolidayIndex {
        self.derived
            .holidays
            .get_or_init(|| HolidayIndex::build(&self.data().holiday_keys))
    }
}

/// The usual rules.
impl<D> Table<D> {
    /// The table's [`UsualRules`]: the usual code found, and empty slots made, on first use.
    #[inline]
    fn usual_rules(&self) -> &UsualRules {
        self.derived
            .usual
            .get_or_init(|| UsualRules::new(self.data()))
    }

    /// The usual tax code ([`crate::derived::usual_rules::GENERAL_MERCHANDISE`]); `None`
    /// when the table has none.
    #[inline]
    pub(crate) fn usual_code(&self) -> Option<TaxCodeId> {
        self.usual_rules().code
    }

    /// The slots of [`UsualRules`] when `code` is the usual code.
    #[inline]
    pub(crate) fn usual_slots(&self, code: TaxCodeId) -> Option<&[OnceLock<UsualRule>]> {
        let usual = self.usual_rules();
        (usual.code == Some(code)).then_some(&*usual.slots)
    }

    /// `jurisdiction`'s [`UsualRule`] for the usual `code` among `slots`, searched on
    /// first use; `None` for a jurisdiction the table lacks.
    #[inline]
    pub(crate) fn usual_rule<'a>(
        &self,
        slots: &'a [OnceLock<UsualRule>],
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> Option<&'a UsualRule> {
        let slot = slots.get(jurisdiction.0 as usize)?;
        Some(slot.get_or_init(|| UsualRule::search(self.data(), jurisdiction, code)))
    }

    /// The keys of `rule` (a [`UsualRule`]'s span).
    #[inline]
    pub(crate) fn usual_keys(&self, rule: &UsualRule) -> (usize, &[ArchivedRuleKey]) {
        rule.keys(self.data())
    }
}

/// The taxability index.
impl<D> Table<D> {
    /// The table's [`TaxabilityIndex`], made on first use.
    pub(crate) fn taxability_index(&self) -> &TaxabilityIndex {
        self.derived
            .taxability
            .get_or_init(|| TaxabilityIndex::build(self.data()))
    }
}

/// Each jurisdiction's first day and horizon, and the table's bounds in time.
impl<D> Table<D> {
    /// The span of jurisdiction `id`, worked out from its rules on first use; `None` for an
    /// id the table does not hold.
    pub(crate) fn span(&self, id: JurisdictionId) -> Option<Span> {
        let spans = self.derived.spans.get_or_init(|| Spans::new(self.data()));
        let slot = spans.slots.get(id.0 as usize)?;
        Some(*slot.get_or_init(|| Span::work_out(self.data(), id)))
    }

    /// The first day one of jurisdiction `id`'s rules is in force; `None` when it has no
    /// rules (or the table does not hold it).
    pub fn first_day(&self, id: JurisdictionId) -> Option<Date> {
        self.span(id)
            .filter(|s| s.first != i32::MIN)
            .map(|s| Date(s.first))
    }

    /// The first day of jurisdiction `id` when it is a state's, a province's or a
    /// country's ([`Table::first_day`]); `None` otherwise.
    pub(crate) fn top_first_day(&self, id: JurisdictionId) -> Option<Date> {
        self.span(id)
            .filter(|s| s.top && s.first != i32::MIN)
            .map(|s| Date(s.first))
    }

    /// The table's horizon: the earliest of its jurisdictions' ([`Table::horizon`]), with
    /// the manifest index of its input; `None` when no jurisdiction has one. After it, some
    /// answers of the table are noted `STALE_TABLE`. Worked out once, on first use.
    pub fn earliest_horizon(&self) -> Option<(Date, u32)> {
        self.bounds().earliest_horizon
    }

    /// The table's bounds in time, worked out once over every jurisdiction: a sale on a day
    /// within them needs no jurisdiction's span.
    pub(crate) fn bounds(&self) -> &Bounds {
        self.derived.bounds.get_or_init(|| {
            let mut b = Bounds {
                latest_first: Date(i32::MIN),
                earliest_horizon: None,
            };
            for j in (0..self.jurisdiction_count() as u32).map(JurisdictionId) {
                let Some(span) = self.span(j) else { continue };
                if span.top && span.first != i32::MIN {
                    b.latest_first = b.latest_first.max(Date(span.first));
                }
                if let Some((h, src)) = self.horizon(j) {
                    if b.earliest_horizon.is_none_or(|(e, _)| h < e) {
                        b.earliest_horizon = Some((h, src));
                    }
                }
            }
            b
        })
    }

    /// Jurisdiction `id`'s horizon and the manifest index of the input it is from: the
    /// last day the newest input that wrote its rules is known to hold what is in force.
    /// `None` when one of those inputs makes no claim that ages, or it has no rules.
    pub fn horizon(&self, id: JurisdictionId) -> Option<(Date, u32)> {
        self.span(id)
            .filter(|s| s.horizon != i32::MAX)
            .map(|s| (Date(s.horizon), s.source))
    }
}
