//! Each jurisdiction's span in the table: the first day one of its rates is in force, and
//! its horizon, the last day the newest input that wrote its rates is known to hold what is
//! in force. A jurisdiction's rates are its rules for the usual code
//! ([`super::usual_rules::GENERAL_MERCHANDISE`]; the rules of other codes follow from them
//! and the taxability matrix), or all its rules when it has none for that code (a per-order
//! fee's). The front door refuses a sale before a state's or country's first day (the
//! table cannot know what was due then) and notes one after a horizon
//! ([`crate::Stale`]).

use std::sync::OnceLock;

use crate::date::Date;
use crate::lookup::JurisdictionId;
use crate::table::Table;

/// A jurisdiction's first day and horizon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// The first day any of its rules is in force; `i32::MIN` when it has none (a
    /// jurisdiction without rules claims nothing about any day).
    pub(crate) first: i32,
    /// The latest horizon among the inputs that wrote its rules; `i32::MAX` when one of
    /// them has none.
    pub(crate) horizon: i32,
    /// The manifest index of the input whose horizon that is (`u32::MAX` when none).
    pub(crate) source: u32,
}

/// One slot a jurisdiction, filled on its first use.
pub(crate) struct Spans {
    slots: Box<[OnceLock<Span>]>,
}

impl<D> Table<D> {
    /// The span of jurisdiction `id`, worked out from its rules on first use; `None` for an
    /// id the table does not hold.
    pub(crate) fn span(&self, id: JurisdictionId) -> Option<Span> {
        let spans = self.derived.spans.get_or_init(|| Spans {
            slots: (0..self.jurisdiction_count())
                .map(|_| OnceLock::new())
                .collect(),
        });
        let slot = spans.slots.get(id.0 as usize)?;
        Some(*slot.get_or_init(|| self.work_out_span(id)))
    }

    fn work_out_span(&self, id: JurisdictionId) -> Span {
        let manifest = &self.data().manifest;
        let mut span = Span {
            first: i32::MIN,
            horizon: i32::MIN,
            source: u32::MAX,
        };
        let usual = self.tax_code(super::usual_rules::GENERAL_MERCHANDISE);
        let has_usual =
            usual.is_some() && self.rules_of(id).any(|(_, r)| Some(r.tax_code()) == usual);
        let mut any = false;
        let rates = self
            .rules_of(id)
            .filter(|(_, r)| !has_usual || Some(r.tax_code()) == usual);
        for (_, rule) in rates {
            let from = rule.interval().0 .0;
            span.first = if any { span.first.min(from) } else { from };
            any = true;
            let horizon = manifest
                .get(rule.source() as usize)
                .map_or(i32::MAX, |e| e.horizon.to_native());
            if horizon > span.horizon {
                span.horizon = horizon;
                span.source = rule.source();
            }
        }
        if !any {
            span.horizon = i32::MAX;
        }
        span
    }

    /// The first day one of jurisdiction `id`'s rules is in force; `None` when it has no
    /// rules (or the table does not hold it).
    pub fn first_day(&self, id: JurisdictionId) -> Option<Date> {
        self.span(id)
            .filter(|s| s.first != i32::MIN)
            .map(|s| Date(s.first))
    }

    /// The table's horizon: the earliest of its jurisdictions' ([`Table::horizon`]), with
    /// the manifest index of its input; `None` when no jurisdiction has one. After it, some
    /// answers of the table are noted `STALE_TABLE`. Worked out once, on first use.
    pub fn earliest_horizon(&self) -> Option<(Date, u32)> {
        *self.derived.earliest_horizon.get_or_init(|| {
            (0..self.jurisdiction_count() as u32)
                .filter_map(|j| self.horizon(JurisdictionId(j)))
                .min_by_key(|(h, _)| *h)
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
