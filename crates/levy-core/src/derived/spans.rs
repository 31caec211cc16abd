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
    /// Whether it is a state's, a province's or a country's: its first day bounds the
    /// table's answers in its places.
    pub(crate) top: bool,
}

/// A table's bounds in time (see [`Table::bounds`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    /// The latest first day among the state and country jurisdictions: a sale on or after
    /// it is after every one's.
    pub(crate) latest_first: Date,
    /// The earliest horizon, with its input: a sale on or before it is within every one.
    pub(crate) earliest_horizon: Option<(Date, u32)>,
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
            top: self.jurisdiction(id).is_some_and(|x| {
                matches!(
                    x.level(),
                    crate::Level::Country | crate::Level::State | crate::Level::Province
                )
            }),
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
