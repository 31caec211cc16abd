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
use crate::model::ArchivedTableData;

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

/// A table's bounds in time (see [`crate::Table::earliest_horizon`]).
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
    pub(crate) slots: Box<[OnceLock<Span>]>,
}

impl Spans {
    /// An empty slot for each jurisdiction of `data`.
    pub(crate) fn new(data: &ArchivedTableData) -> Spans {
        Spans {
            slots: (0..data.jurisdiction_count())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }
}

impl Span {
    /// The span of jurisdiction `id` of `data`, worked out from its rules.
    pub(crate) fn work_out(data: &ArchivedTableData, id: JurisdictionId) -> Span {
        let manifest = &data.manifest;
        let mut span = Span {
            first: i32::MIN,
            horizon: i32::MIN,
            source: u32::MAX,
            top: data.jurisdiction(id).is_some_and(|x| {
                matches!(
                    x.level(),
                    crate::Level::Country | crate::Level::State | crate::Level::Province
                )
            }),
        };
        let usual = data.tax_code(super::usual_rules::GENERAL_MERCHANDISE);
        let has_usual =
            usual.is_some() && data.rules_of(id).any(|(_, r)| Some(r.tax_code()) == usual);
        let mut any = false;
        let rates = data
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
}
