//! A rule as a line applies it: decoded once per line ([`Applied`]) into this thread's
//! buffer ([`Scratch`]), its arithmetic on one unit (band, unit range, holiday cap), and the
//! inverse of a line's tax for amounts that include it ([`back_out`]).

use rust_decimal::Decimal;

use crate::kinds::Sourced;
use crate::lookup::{JurisdictionId, RuleId};
use crate::money::{round_minor, Currency};

use super::{normalized, JurisdictionTax, Note, MAX_RATE, MAX_RULE_AMOUNT};

/// Whether `d` is `Decimal::MAX`, the stored "no upper edge", without a full comparison.
#[inline]
pub(super) fn is_max(d: Decimal) -> bool {
    d.scale() == 0 && d.is_sign_positive() && d.mantissa() == Decimal::MAX.mantissa()
}

/// Whether a rule's stored numbers lie in the ranges the builder accepts (`Decimal::MAX`
/// stands for "no upper edge").
pub(super) fn rule_in_range(
    rate: Decimal,
    band: (Decimal, Decimal),
    units: (Decimal, Decimal),
    fee: Decimal,
) -> bool {
    let amount_ok = |v: Decimal| v.is_zero() || v.abs() <= MAX_RULE_AMOUNT;
    let edge_ok = |v: Decimal| is_max(v) || amount_ok(v);
    rate.abs() <= MAX_RATE
        && amount_ok(band.0)
        && edge_ok(band.1)
        && amount_ok(units.0)
        && edge_ok(units.1)
        && amount_ok(fee)
}

/// One applicable rule, decoded once per line.
pub(super) struct Applied {
    pub(super) jurisdiction: JurisdictionId,
    pub(super) rule: RuleId,
    pub(super) rate: Decimal,
    base_min: Decimal,
    base_max: Option<Decimal>,
    unit_min: Decimal,
    unit_max: Option<Decimal>,
    fee: Decimal,
    /// No band, unit range or fee: the whole amount at `rate`.
    plain: bool,
    /// For a fast rule (see [`crate::model::RuleKey::fast`]): the rate's mantissa and
    /// scale, for the integer path.
    pub(super) fast: Option<(i64, u32)>,
    pub(super) zeroed: Option<(Note, Option<usize>)>,
    pub(super) holiday: Option<(Decimal, bool, u32)>,
    /// For a delivery charge's rule: the share of the sale's goods the jurisdiction taxes,
    /// by which the line's taxed part is scaled. `ONE` for every other rule.
    share: Decimal,
    /// Which address brought the jurisdiction in.
    pub(super) sourced: Sourced,
}

/// What a jurisdiction brings to each of its rules on a line: who it is, which address
/// brought it in, what zeroes its tax (a reason and the exemption's index), and the holiday
/// that may suspend it (cap, whether the cap itself is in, the holiday's index).
#[derive(Clone, Copy)]
pub(super) struct Terms {
    pub(super) jurisdiction: JurisdictionId,
    pub(super) sourced: Sourced,
    pub(super) zeroed: Option<(Note, Option<usize>)>,
    pub(super) holiday: Option<(Decimal, bool, u32)>,
}

/// A rule's band of each unit's price and its unit-price range, each `(low, high)` with
/// `Decimal::MAX` for "no upper edge", and its fee per unit.
pub(super) struct Parts {
    pub(super) band: (Decimal, Decimal),
    pub(super) units: (Decimal, Decimal),
    pub(super) fee: Decimal,
}

impl Applied {
    /// A fast rule, read from its key alone (see [`crate::model::RuleKey::fast`]): its rate,
    /// as a decimal and as its mantissa and scale, on the whole amount.
    #[inline]
    pub(super) fn fast(terms: &Terms, rule: RuleId, rate: (Decimal, i64, u32)) -> Applied {
        let (rate, m, scale) = rate;
        Applied {
            jurisdiction: terms.jurisdiction,
            rule,
            rate,
            base_min: Decimal::ZERO,
            base_max: None,
            unit_min: Decimal::ZERO,
            unit_max: None,
            fee: Decimal::ZERO,
            plain: true,
            fast: Some((m, scale)),
            zeroed: terms.zeroed,
            holiday: terms.holiday,
            share: Decimal::ONE,
            sourced: terms.sourced,
        }
    }

    /// Any other rule, from its record: `plain` when it has no band, unit range or fee;
    /// `share` the part of the line it taxes (see [`Applied::share`]).
    pub(super) fn decoded(
        terms: &Terms,
        rule: RuleId,
        rate: Decimal,
        parts: Parts,
        plain: bool,
        share: Decimal,
    ) -> Applied {
        let Parts { band, units, fee } = parts;
        Applied {
            jurisdiction: terms.jurisdiction,
            rule,
            rate,
            base_min: band.0,
            base_max: (!is_max(band.1)).then_some(band.1),
            unit_min: units.0,
            unit_max: (!is_max(units.1)).then_some(units.1),
            fee,
            plain,
            fast: None,
            zeroed: terms.zeroed,
            holiday: terms.holiday,
            share,
            sourced: terms.sourced,
        }
    }

    fn is_band(&self) -> bool {
        !self.base_min.is_zero() || self.base_max.is_some()
    }
    fn is_threshold(&self) -> bool {
        !self.unit_min.is_zero() || self.unit_max.is_some()
    }
    /// Whether the rule's unit range holds the unit price.
    fn applies_at(&self, unit: Decimal) -> bool {
        // Unit prices are never negative, so a zero lower edge needs no comparison.
        (self.unit_min.is_zero() || unit >= self.unit_min) && self.unit_max.is_none_or(|m| unit < m)
    }
    /// Whether a holiday suspends the rule at this unit price.
    fn on_holiday(&self, unit: Decimal) -> bool {
        match self.holiday {
            Some((cap, inclusive, _)) => unit < cap || (inclusive && unit == cap),
            None => false,
        }
    }
    /// The taxed part of one unit.
    fn band_part(&self, unit: Decimal) -> Decimal {
        let above = unit - self.base_min;
        if above <= Decimal::ZERO {
            return Decimal::ZERO;
        }
        match self.base_max {
            Some(max) => above.min(max - self.base_min),
            None => above,
        }
    }
    /// The taxed part of a whole line of `qty` units priced `unit` each, totalling `total`.
    ///
    /// Computed from the line total rather than as `band_part(unit) * qty`, so that a unit
    /// price with a non-terminating decimal (100.00 / 3) loses nothing: the taxed part is
    /// exact whenever the band does not cut the unit price.
    fn band_total(&self, unit: Decimal, total: Decimal, qty: Decimal) -> Decimal {
        if unit <= self.base_min {
            return Decimal::ZERO;
        }
        match self.base_max {
            Some(max) if unit >= max => (max - self.base_min) * qty,
            _ if self.base_min.is_zero() => total,
            _ => total - self.base_min * qty,
        }
    }

    /// Whether the rule is a plain rate on the whole amount that nothing zeroes or may
    /// suspend (the usual rule): see [`Applied::push_whole`].
    pub(super) fn is_whole(&self) -> bool {
        self.plain && self.zeroed.is_none() && self.holiday.is_none()
    }

    /// The holiday that suspends the rule at this unit price, where the rule applies and
    /// nothing zeroes it first.
    pub(super) fn holiday_at(&self, unit: Decimal) -> Option<u32> {
        let suspended = self.on_holiday(unit) && self.applies_at(unit) && self.zeroed.is_none();
        self.holiday.filter(|_| suspended).map(|h| h.2)
    }

    /// Pushes the entry of a rule that [`Applied::is_whole`] on a line of `excl_minor`
    /// minor units excluding tax, and answers its tax due: the taxable base is the amount
    /// itself, already in minor units, and the tax due is one product, equal to what
    /// [`Applied::push_entry`] computes through major units.
    pub(super) fn push_whole(
        &self,
        excl_minor: Decimal,
        entries: &mut Vec<JurisdictionTax>,
    ) -> Decimal {
        let due = excl_minor * self.rate;
        entries.push(JurisdictionTax {
            jurisdiction: self.jurisdiction,
            rule: self.rule,
            rate: self.rate,
            taxable_base: normalized(excl_minor),
            tax_due: normalized(due),
            fee: Decimal::ZERO,
            note: Note::RateFrac,
            exemption: None,
            sourced: self.sourced,
        });
        due
    }

    /// Pushes the entry of the rule on a line of `qty` units priced `unit` each (major
    /// units), `excl_major` in all, excluding tax, and answers its tax due in minor units:
    /// nothing when something zeroes the rule, the unit price is outside its range or a
    /// holiday suspends it; else its rate on its band of the line, scaled by its share,
    /// plus its fee per unit.
    pub(super) fn push_entry(
        &self,
        (unit, excl_major, qty): (Decimal, Decimal, Decimal),
        currency: Currency,
        entries: &mut Vec<JurisdictionTax>,
    ) -> Decimal {
        let applies = self.applies_at(unit);
        let on_holiday = self.on_holiday(unit);
        let (note, exemption) = match self.zeroed {
            Some((n, e)) => (n, e),
            None if on_holiday && applies => (Note::Holiday, None),
            None if !applies => (Note::BelowThreshold, None),
            None if self.is_band() => (Note::ProgressiveRate, None),
            None if self.is_threshold() => (Note::Threshold, None),
            None => (Note::RateFrac, None),
        };
        let taxed = applies && !on_holiday && self.zeroed.is_none();
        let (base, due, fee) = if taxed {
            let base_major = self.band_total(unit, excl_major, qty) * self.share;
            let base = currency.to_minor(base_major);
            let due = currency.to_minor(base_major * self.rate);
            if self.fee.is_zero() {
                (base, due, Decimal::ZERO)
            } else {
                let fee = currency.to_minor(self.fee * qty);
                (base, due + fee, fee)
            }
        } else {
            (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO)
        };
        entries.push(JurisdictionTax {
            jurisdiction: self.jurisdiction,
            rule: self.rule,
            rate: self.rate,
            taxable_base: normalized(base),
            tax_due: normalized(due),
            fee: normalized(fee),
            note,
            exemption,
            sourced: self.sourced,
        });
        due
    }

    /// Tax per unit (major units) and its slope with respect to the unit price.
    fn unit_tax(&self, unit: Decimal) -> (Decimal, Decimal) {
        if self.zeroed.is_some() || !self.applies_at(unit) || self.on_holiday(unit) {
            return (Decimal::ZERO, Decimal::ZERO);
        }
        let part = self.band_part(unit) * self.share;
        let in_band = unit >= self.base_min && self.base_max.is_none_or(|m| unit < m);
        (
            self.rate * part + self.fee,
            if in_band {
                self.rate * self.share
            } else {
                Decimal::ZERO
            },
        )
    }
}

thread_local! {
    /// This thread's buffer for the decoded rules of a line (see [`Scratch`]).
    static APPLIED: std::cell::Cell<Vec<Applied>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A calculation's buffer for the decoded rules of a line: this thread's, reused across
/// calculations so that the hot path does not allocate one each time (a batch holds it for
/// all its sales). Taken on first use and put back when dropped, so a calculation whose
/// lines are all taxed straight from the rule keys (the usual) never touches it.
pub(super) struct Scratch {
    applied: Option<Vec<Applied>>,
}

impl Scratch {
    pub(super) const fn new() -> Scratch {
        Scratch { applied: None }
    }

    /// The buffer, empty or as the last line left it.
    pub(super) fn applied(&mut self) -> &mut Vec<Applied> {
        self.applied
            .get_or_insert_with(|| APPLIED.try_with(|cell| cell.take()).unwrap_or_default())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let Some(mut applied) = self.applied.take() else {
            return;
        };
        applied.clear();
        // Keep the larger of the two buffers if a nested calculation put one back
        // meanwhile; on a thread being torn down, let it go.
        let _ = APPLIED.try_with(|cell| {
            let other = cell.take();
            cell.set(if other.capacity() > applied.capacity() {
                other
            } else {
                applied
            });
        });
    }
}

/// The amount excluding tax, in whole minor units, of a line whose amount including tax is
/// `incl_major` (major units) over `qty` units.
pub(super) fn back_out(
    applied: &[Applied],
    incl_major: Decimal,
    qty: Decimal,
    currency: Currency,
) -> Decimal {
    let target = incl_major / qty; // inclusive price of one unit
                                   // Segment edges: every finite band edge, unit-range edge and holiday cap.
    let mut edges: Vec<Decimal> = Vec::with_capacity(applied.len() * 4 + 1);
    edges.push(Decimal::ZERO);
    for a in applied {
        edges.push(a.base_min);
        edges.extend(a.base_max);
        edges.push(a.unit_min);
        edges.extend(a.unit_max);
        if let Some((cap, _, _)) = a.holiday {
            if cap != Decimal::MAX {
                edges.push(cap);
            }
        }
    }
    edges.sort();
    edges.dedup();
    let total_at = |u: Decimal| -> (Decimal, Decimal) {
        applied
            .iter()
            .fold((Decimal::ZERO, Decimal::ZERO), |(t, s), a| {
                let (ti, si) = a.unit_tax(u);
                (t + ti, s + si)
            })
    };
    let mut unit = None;
    let mut below_jump = None;
    for (i, &left) in edges.iter().enumerate() {
        let right = edges.get(i + 1).copied();
        let (t_left, slope) = total_at(left);
        if left + t_left > target {
            // The target lies in the jump just below `left`.
            below_jump = Some(left);
            break;
        }
        // On [left, right), u + t(u) = u + t_left + slope * (u - left).
        let u = (target - t_left + slope * left) / (Decimal::ONE + slope);
        if right.is_none_or(|r| u < r) {
            unit = Some(u.max(left));
            break;
        }
    }
    let excl_minor = match (unit, below_jump) {
        (Some(u), _) => round_minor(currency.to_minor(u * qty)),
        (None, Some(edge)) => {
            // Greatest whole minor amount whose unit price is below the edge.
            let edge_total = currency.to_minor(edge * qty);
            let floor = edge_total.floor();
            if floor == edge_total {
                floor - Decimal::ONE
            } else {
                floor
            }
        }
        (None, None) => round_minor(currency.to_minor(incl_major)),
    };
    let incl_minor = currency.to_minor(incl_major);
    excl_minor.max(Decimal::ZERO).min(incl_minor)
}
