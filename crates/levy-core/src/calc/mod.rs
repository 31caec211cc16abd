//! The calculation: a sale at a location to tax per line and per jurisdiction.
//!
//! # The arithmetic, in one place
//!
//! For each line, the unit price is the line amount divided by the quantity (or the amount
//! itself for per-unit lines, whose base is then amount × quantity). For each jurisdiction
//! of the location, the rules in force on the sale's date for the line's tax code are found
//! (walking up the taxonomy until a code has rules in that jurisdiction). Each rule taxes the
//! part of the unit price inside its band, only when the unit price lies in its unit range,
//! times the quantity, plus its fee per unit. That is `tax_due_decimal`, in minor units,
//! unrounded. The line's tax is the sum of its jurisdictions' `tax_due_decimal`, rounded once
//! with [`crate::round_minor`]. Totals are sums of lines.
//!
//! With `tax_included_in_amount`, the amount excluding tax is found by inverting the
//! piecewise-linear tax function segment by segment (bands and thresholds are the segment
//! edges), rounded to the minor unit, and the line's tax is the given amount minus that:
//! excluding + tax == including, exactly, always. Where an all-or-nothing threshold makes
//! the tax jump, an inclusive amount inside the jump has no exact pre-image; levy then takes
//! the greatest excluding amount below the threshold and the tax is the remainder.
//!
//! # Notes
//!
//! Each jurisdiction entry carries a `note`: `RATE_FRAC` (the rate applied to the whole
//! amount), `PROGRESSIVE_RATE` (to a band of it), `THRESHOLD` (an all-or-nothing rule whose
//! threshold was met), `BELOW_THRESHOLD` (not met: nothing due), `HOLIDAY` (suspended by a
//! sales tax holiday), `CUSTOMER_EXEMPT`, `EXEMPTION_CERTIFICATE`, `AUTOMATIC_TAX_DISABLED`,
//! `REVERSE_CHARGE` (a business-to-business cross-border VAT/GST sale), `ZERO_RATE` (an IP
//! resolved in `zero` mode); and on a per-order fee's entries ([`Table::apply_order_fees`]),
//! `PER_ORDER_FEE` (the fee charged), `SMALL_SELLER` (not owed by a small seller) and
//! `FEE_UNKNOWN` (its amount that day not known).
//!
//! # Layout
//!
//! | module | what it holds |
//! |---|---|
//! | `sale` | the sale's vocabulary: [`Sale`], [`SaleLine`], [`Customer`], [`Calculation`], [`LineTax`], [`JurisdictionTax`], [`Note`], the limits |
//! | `sourcing` | where a sale within one state is taxed ([`Sourcing`]) |
//! | `schedule` | the schedule in force: a line's rules and holiday in a jurisdiction on the day |
//! | `line` | one line's tax, by the direct, integer or decimal path |
//! | `applied` | a rule as a line applies it, and backing tax out of an amount that includes it |
//! | `integer` | the integer path, and the usual line straight from the rule keys |
//! | `groups` | per-sale thresholds: how a line's rules whose threshold is the sale's total are decided |
//! | `totals` | the sale's lines together: per-sale threshold groups summed, delivery shares, rounding, totals |
//! | `fees` | per-order fees on retail deliveries ([`Delivery`], [`FeeOutcome`]) |
//!
//! This module holds the entry points ([`Table::calculate`] and its kin) and the usual
//! sale's short path. The entry points, [`Table::apply_order_fees`] and the region facts
//! ([`Table::region_sourcing`], [`Table::region_invoice_rounding`]) are the table's methods,
//! its public calculation; every phase below them is a function that takes the table as
//! its first argument (`line_tax(table, ...)`), or, where it needs none, not even that (a
//! fee's small-seller test), so that a phase is never mistaken for a lookup of the table.

use rust_decimal::Decimal;

use crate::kinds::{Rounding, Sourcing};
use crate::resolve::Location;
use crate::table::Table;

mod applied;
mod fees;
mod groups;
mod integer;
mod line;
mod sale;
mod schedule;
mod sourcing;
mod totals;

pub use fees::{Delivery, FeeOutcome};
pub use sale::{
    AutomaticTax, CalcError, Calculation, Covers, Customer, CustomerType, Exemption,
    JurisdictionTax, LineTax, Note, Sale, SaleLine, Stale, TaxId, ZeroReason, MAX_AMOUNT_MINOR,
    MAX_QUANTITY, MAX_RATE, MAX_RULE_AMOUNT,
};

use applied::Scratch;
use integer::direct_line;
use integer::whole_line_totals;
use line::LineCtx;
use sourcing::sourced_jurisdictions;
use totals::calculate_lines;
use totals::with_taxability;

/// `d` without trailing zeros; whole numbers (most minor-unit amounts) skip the work.
#[inline]
fn normalized(d: Decimal) -> Decimal {
    if d.scale() == 0 && !d.is_sign_negative() {
        d
    } else {
        d.normalize()
    }
}

/// What `usual_sale` made of a sale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UsualSale {
    /// The sale is the usual one and is answered.
    Answered,
    /// The sale is not the usual one: the general path answers it.
    Other,
    /// The sale looked usual, but its line is not one `direct_line` takes (a rule
    /// that is not fast, a holiday, an amount out of range): the general path answers it,
    /// without trying that again.
    GaveUp,
}

impl<D> Table<D> {
    /// Calculates the tax of `sale` at `location` (the buyer's place), as a sale shipped
    /// from an unknown place: taxed at the destination.
    pub fn calculate(&self, location: &Location, sale: &Sale) -> Result<Calculation, CalcError> {
        self.calculate_from(None, location, sale)
    }

    /// Calculates the tax of `sale` shipped from `origin` (the seller's place, when known)
    /// to `location` (the buyer's). A sale within one US state follows the state's sourcing
    /// rule (see [`Sourcing`]); any other sale is taxed at the destination.
    pub fn calculate_from(
        &self,
        origin: Option<&Location>,
        location: &Location,
        sale: &Sale,
    ) -> Result<Calculation, CalcError> {
        let mut out = Calculation::empty(self.header().content_hash, sale);
        self.calculate_into(origin, location, sale, &mut out)?;
        Ok(out)
    }

    /// Calculates many sales, each at its location, into `out`: after the call `out[i]` is
    /// the calculation of the `i`-th item, and `out` holds nothing else. The calculations
    /// already in `out` are reused, vectors and all, so a caller that keeps `out` from one
    /// batch to the next calculates without allocating once the buffers have grown to
    /// the size of its sales. A sale that cannot be calculated leaves its entry with no
    /// lines and zero totals, and its index and error are in the returned list (empty when
    /// every sale succeeded, which allocates nothing).
    ///
    /// While it calculates a sale, the batch asks the processor for the table records of
    /// the sales after it (their jurisdiction sets, jurisdictions and rules, each level a
    /// couple of sales nearer than the one before it), so that on a table larger than the
    /// cache a sale finds its records fetched instead of waiting on each level in turn.
    pub fn calculate_batch<'a>(
        &self,
        items: impl IntoIterator<Item = (&'a Location, &'a Sale)>,
        out: &mut Vec<Calculation>,
    ) -> Vec<(usize, CalcError)> {
        use crate::lookup::Prefetch;
        /// How many sales ahead the first stage looks; the stages after it look
        /// `AHEAD - 2`, `AHEAD - 4` and `AHEAD - 6` ahead.
        const AHEAD: usize = 8;
        const STAGES: [(usize, Prefetch); 3] = [
            (AHEAD - 2, Prefetch::SetItems),
            (AHEAD - 4, Prefetch::Jurisdictions),
            (AHEAD - 6, Prefetch::RuleKeys),
        ];
        let mut items = items.into_iter();
        let mut errors = Vec::new();
        // The sales after the current one, in a ring: `ring[(head + k) % AHEAD]` is `k`
        // sales ahead (the slot at `head` is refilled with the sale `AHEAD` ahead).
        let mut ring: [Option<(&Location, &Sale)>; AHEAD] = [None; AHEAD];
        for slot in ring.iter_mut() {
            *slot = items.next();
            if let Some(jset) = slot.and_then(|(l, _)| l.jset) {
                self.prefetch_jset(jset, Prefetch::SetStart);
            }
        }
        let (mut head, mut n) = (0, 0);
        let mut scratch = Scratch::new();
        while let Some((location, sale)) = ring[head].take() {
            ring[head] = items.next();
            if let Some(jset) = ring[head].and_then(|(l, _)| l.jset) {
                self.prefetch_jset(jset, Prefetch::SetStart);
            }
            for (k, stage) in STAGES {
                if let Some(jset) = ring[(head + k) % AHEAD].and_then(|(l, _)| l.jset) {
                    self.prefetch_jset(jset, stage);
                }
            }
            head = (head + 1) % AHEAD;
            if n == out.len() {
                out.push(Calculation::empty(self.header().content_hash, sale));
            }
            let tried = match usual_sale(self, location, sale, &mut out[n]) {
                UsualSale::Answered => None,
                UsualSale::Other => Some(false),
                UsualSale::GaveUp => Some(true),
            };
            if let Some(tried) = tried {
                let calc =
                    calculate_with(self, None, location, sale, &mut out[n], &mut scratch, tried);
                if let Err(e) = calc {
                    errors.push((n, e));
                }
            }
            n += 1;
        }
        out.truncate(n);
        errors
    }

    /// Calculates like [`Table::calculate_from`], into `out`, reusing its vectors (the
    /// lines, and each line's jurisdiction entries) instead of allocating new ones. On an
    /// error `out` holds no lines and zero totals.
    pub fn calculate_into(
        &self,
        origin: Option<&Location>,
        location: &Location,
        sale: &Sale,
        out: &mut Calculation,
    ) -> Result<(), CalcError> {
        // The usual sale needs no scratch buffer: it is not made for it.
        let tried = match origin {
            Some(_) => false,
            None => match usual_sale(self, location, sale, out) {
                UsualSale::Answered => return Ok(()),
                UsualSale::Other => false,
                UsualSale::GaveUp => true,
            },
        };
        calculate_with(
            self,
            origin,
            location,
            sale,
            out,
            &mut Scratch::new(),
            tried,
        )
    }
}
/// [`Table::calculate_into`] by the general path (any sale: see `usual_sale`
/// for the one that does not need it), with `scratch` the buffer for a line's decoded
/// rules; `usual_tried` when `usual_sale` gave up on this sale (its one line
/// is then not tried again by `direct_line`, which would give up again).
fn calculate_with<D>(
    table: &Table<D>,
    origin: Option<&Location>,
    location: &Location,
    sale: &Sale,
    out: &mut Calculation,
    scratch: &mut Scratch,
    usual_tried: bool,
) -> Result<(), CalcError> {
    let zero_reason = if sale.customer.exempt {
        Some(ZeroReason::CustomerExempt)
    } else if sale.automatic_tax == AutomaticTax::Disabled {
        Some(ZeroReason::AutomaticTaxDisabled)
    } else if location.is_zero_rate() {
        Some(ZeroReason::ZeroRate)
    } else {
        None
    };
    let reverse_charge = sale.customer.kind == CustomerType::Business
        && sale
            .customer
            .tax_ids
            .iter()
            .any(|t| t.kind == "VAT" || t.kind == "GST")
        && sale
            .origin_country
            .as_deref()
            .is_some_and(|o| !o.eq_ignore_ascii_case(location.country()));
    let (sourcing, sourced) = sourced_jurisdictions(table, origin, location, sale.date);
    calculate_lines(
        table,
        out,
        LineCtx {
            location,
            sale,
            zero_reason,
            reverse_charge,
            sourced: sourced.as_deref(),
            sourcing,
            direct: !usual_tried,
            // An answer that takes jurisdictions from the origin knows no more of the
            // local taxes than the origin's place does.
            coverage: match (sourcing, origin) {
                (Sourcing::Destination, _) | (_, None) => location.coverage,
                (_, Some(o)) => location.coverage.min(o.coverage),
            },
        },
        scratch,
    )
}

/// The usual sale, calculated into `out` without the general path's steps: one line of
/// a whole, valid amount (excluding tax, not per unit) of a known tax code, sold to a
/// buyer not exempt, with no certificate or tax id, at a place with jurisdictions, taxed
/// at the destination (no origin given), rounded by line, every rule fast and no holiday
/// in force (see `direct_line`). The answer is the general path's to the last
/// field: the same entries from the same function, the same totals (a one-line sale's
/// are its line's), `Destination` sourcing, `Line` rounding and the location's
/// coverage. For any other sale `out` is left in no particular state and the general
/// path fills it afresh.
fn usual_sale<D>(
    table: &Table<D>,
    location: &Location,
    sale: &Sale,
    out: &mut Calculation,
) -> UsualSale {
    let ([line], Some(jset)) = (sale.lines.as_slice(), location.jset) else {
        return UsualSale::Other;
    };
    let customer = &sale.customer;
    let usual = !customer.exempt
        && customer.exemptions.is_empty()
        && customer.tax_ids.is_empty()
        && sale.automatic_tax == AutomaticTax::Auto
        && !sale.tax_included
        && sale.rounding == Rounding::Line
        && !line.per_unit
        && (1..=MAX_QUANTITY).contains(&line.quantity)
        && (line.tax_code.0 as usize) < table.data().tax_codes.len();
    if !usual {
        return UsualSale::Other;
    }
    if out.lines.is_empty() {
        out.lines.push(LineTax::empty(line.tax_code));
    }
    out.lines.truncate(1);
    let line_out = &mut out.lines[0];
    line_out.jurisdictions.clear();
    let Some((minor, tax)) = direct_line(
        table,
        jset,
        line,
        sale.date,
        line.amount,
        &mut line_out.jurisdictions,
    ) else {
        return UsualSale::GaveUp;
    };
    whole_line_totals(line_out, line, minor, tax);
    let taxability = table.line_taxability(line.tax_code, &line_out.jurisdictions, sale.date);
    line_out.taxability = taxability;
    out.table_hash = table.header().content_hash;
    out.currency = sale.currency;
    out.tax_included = false;
    out.total_tax = line_out.tax;
    out.total_excluding_tax = line_out.amount_excluding_tax;
    out.total_including_tax = line_out.amount_including_tax;
    out.zero_reason = None;
    out.coverage = with_taxability(location.coverage, taxability);
    out.taxability = taxability;
    out.sourcing = Sourcing::Destination;
    out.rounding = Rounding::Line;
    UsualSale::Answered
}
