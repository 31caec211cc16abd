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
//! resolved in `zero` mode).

use rust_decimal::Decimal;

use crate::date::Date;
use crate::kinds::{Level, Rounding, Sourced, Sourcing, TaxType};
use crate::lookup::{JsetId, JurisdictionId, RuleId, TaxCodeId};
use crate::model::{ArchivedHolidayRecord, ArchivedRuleKey};
use crate::money::{round_minor, Currency};
use crate::resolve::Location;
use crate::table::{load_decimal, Table};
use crate::taxability::Taxability;

/// The largest line amount accepted, in minor units (10^15: ten trillion dollars).
pub const MAX_AMOUNT_MINOR: i64 = 1_000_000_000_000_000;
/// The largest quantity accepted.
pub const MAX_QUANTITY: u32 = 1_000_000_000;
/// The largest rate a rule may carry: 10, that is 1000%.
pub const MAX_RATE: Decimal = Decimal::from_parts(10, 0, 0, false, 0);
/// The largest band edge, unit-range edge, per-unit fee or holiday cap, in major units
/// (10^12). With [`MAX_AMOUNT_MINOR`], [`MAX_QUANTITY`] and [`MAX_RATE`] this keeps every
/// intermediate of a calculation far inside `Decimal`'s range. The builder refuses larger
/// values; a damaged table (opened without `verify`) may still hold them, and calculation
/// then skips the rule (or ignores the holiday) instead of overflowing.
pub const MAX_RULE_AMOUNT: Decimal = Decimal::from_parts(0xD4A5_1000, 0xE8, 0, false, 0);

/// Whether the rule of `key` is in force on `date`.
#[inline]
fn key_in_force(key: &ArchivedRuleKey, date: Date) -> bool {
    crate::resolve::in_force(key.from.to_native(), key.to.to_native(), date)
}

/// The rate of a fast rule's key, as a decimal and as its mantissa and scale; `None` for a
/// rule that is not fast (its record holds what the integer path cannot take) or a scale
/// no decimal holds.
#[inline]
fn fast_rate(key: &ArchivedRuleKey) -> Option<(Decimal, i64, u32)> {
    if !key.fast {
        return None;
    }
    let (m, scale) = (key.rate_mantissa.to_native(), u32::from(key.rate_scale));
    Some((Decimal::try_new(m, scale).ok()?, m, scale))
}

/// `d` without trailing zeros; whole numbers (most minor-unit amounts) skip the work.
#[inline]
fn normalized(d: Decimal) -> Decimal {
    if d.scale() == 0 && !d.is_sign_negative() {
        d
    } else {
        d.normalize()
    }
}

/// Whether `d` is `Decimal::MAX`, the stored "no upper edge", without a full comparison.
#[inline]
fn is_max(d: Decimal) -> bool {
    d.scale() == 0 && d.is_sign_positive() && d.mantissa() == Decimal::MAX.mantissa()
}

/// Whether a rule's stored numbers lie in the ranges the builder accepts (`Decimal::MAX`
/// stands for "no upper edge").
fn rule_in_range(
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

/// Whether the seller collects tax automatically.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AutomaticTax {
    /// Tax where the seller collects.
    #[default]
    Auto,
    /// Always zero.
    Disabled,
}

/// Consumer or business buyer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CustomerType {
    /// A consumer.
    #[default]
    Consumer,
    /// A business.
    Business,
}

/// A buyer's tax id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaxId {
    /// `VAT`, `GST` or `EIN`.
    pub kind: String,
    /// The id.
    pub value: String,
}

/// An exemption that covers some jurisdictions, for example from an exemption certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exemption {
    /// ISO country of the jurisdictions covered.
    pub country: String,
    /// Region (state) covered; every jurisdiction of the region, local ones included.
    pub region: String,
    /// What to say in the note's detail (a certificate id, say).
    pub reference: String,
}

/// The buyer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Customer {
    /// Exempt everywhere (`is_tax_exempt`).
    pub exempt: bool,
    /// Consumer or business.
    pub kind: CustomerType,
    /// Tax ids, for business sales.
    pub tax_ids: Vec<TaxId>,
    /// Exemptions in particular jurisdictions.
    pub exemptions: Vec<Exemption>,
}

/// One line of a sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaleLine {
    /// Amount in minor units: the line total, or the unit price when `per_unit`.
    pub amount: Decimal,
    /// Quantity, at least 1.
    pub quantity: u32,
    /// Whether `amount` is the price of one unit (platform calculations).
    pub per_unit: bool,
    /// The product tax code.
    pub tax_code: TaxCodeId,
}

/// A sale to calculate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sale {
    /// Currency of every amount.
    pub currency: Currency,
    /// Whether amounts already include tax.
    pub tax_included: bool,
    /// The buyer.
    pub customer: Customer,
    /// Automatic tax mode.
    pub automatic_tax: AutomaticTax,
    /// The day of the sale (decides rates and holidays).
    pub date: Date,
    /// ISO country the goods ship from, when known (decides reverse charge).
    pub origin_country: Option<String>,
    /// How the seller asks the tax to be rounded; [`Rounding::Invoice`] applies only where
    /// the destination's state allows it (see [`Calculation::rounding`]).
    pub rounding: Rounding,
    /// The lines.
    pub lines: Vec<SaleLine>,
}

/// Why a whole calculation owes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroReason {
    /// The customer is exempt.
    CustomerExempt,
    /// `automatic_tax` is `disabled`.
    AutomaticTaxDisabled,
    /// The location is zero-rate (IP `zero` mode).
    ZeroRate,
}

impl ZeroReason {
    /// The note written on every jurisdiction entry.
    pub fn note(self) -> Note {
        match self {
            ZeroReason::CustomerExempt => Note::CustomerExempt,
            ZeroReason::AutomaticTaxDisabled => Note::AutomaticTaxDisabled,
            ZeroReason::ZeroRate => Note::ZeroRate,
        }
    }
}

/// What a jurisdiction entry's numbers mean. See the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Note {
    /// The rate applied to the whole amount.
    RateFrac,
    /// The rate applied to a band of the amount.
    ProgressiveRate,
    /// An all-or-nothing rule whose threshold was met.
    Threshold,
    /// An all-or-nothing rule whose threshold was not met: nothing due.
    BelowThreshold,
    /// Suspended by a sales tax holiday.
    Holiday,
    /// The customer is exempt.
    CustomerExempt,
    /// An exemption certificate covers this jurisdiction.
    ExemptionCertificate,
    /// Automatic tax is disabled.
    AutomaticTaxDisabled,
    /// Cross-border business sale: the buyer accounts for the VAT/GST.
    ReverseCharge,
    /// Zero-rate location.
    ZeroRate,
}

impl Note {
    /// The interface's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Note::RateFrac => "RATE_FRAC",
            Note::ProgressiveRate => "PROGRESSIVE_RATE",
            Note::Threshold => "THRESHOLD",
            Note::BelowThreshold => "BELOW_THRESHOLD",
            Note::Holiday => "HOLIDAY",
            Note::CustomerExempt => "CUSTOMER_EXEMPT",
            Note::ExemptionCertificate => "EXEMPTION_CERTIFICATE",
            Note::AutomaticTaxDisabled => "AUTOMATIC_TAX_DISABLED",
            Note::ReverseCharge => "REVERSE_CHARGE",
            Note::ZeroRate => "ZERO_RATE",
        }
    }
}

/// The tax of one line in one jurisdiction under one rule.
// `repr(C)`, decimals first: each decimal at a multiple of 16 bytes from the start, so
// that an entry is written into a calculation's buffer field by field, not copied in
// from pieces of a value made apart on the stack (a copy read back in other pieces than it
// was written in waits for the stores: about 5% of a ZIP5 sale's time, measured).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct JurisdictionTax {
    /// The rule's statutory rate.
    pub rate: Decimal,
    /// The taxed part of the line amount, minor units.
    pub taxable_base: Decimal,
    /// Tax due before rounding, minor units (fee included).
    pub tax_due: Decimal,
    /// Fixed fee, minor units.
    pub fee: Decimal,
    /// The exemption (certificate) that zeroed it, when one did.
    pub exemption: Option<usize>,
    /// The jurisdiction.
    pub jurisdiction: JurisdictionId,
    /// The rule that applied.
    pub rule: RuleId,
    /// What the numbers mean.
    pub note: Note,
    /// Which address decided that this jurisdiction taxes the sale.
    pub sourced: Sourced,
}

/// The tax of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineTax {
    /// The tax code used.
    pub tax_code: TaxCodeId,
    /// Quantity.
    pub quantity: u32,
    /// Amount excluding tax, minor units.
    pub amount_excluding_tax: Decimal,
    /// Tax, minor units, rounded.
    pub tax: Decimal,
    /// Amount including tax, minor units.
    pub amount_including_tax: Decimal,
    /// One entry per jurisdiction rule, in the location's level order.
    pub jurisdictions: Vec<JurisdictionTax>,
    /// The holiday that applied, by index in the table.
    pub holiday: Option<u32>,
    /// Whether the table's taxability matrix knows how every jurisdiction of the answer
    /// treats the line's product: when it does not, the line was taxed at the rule its code
    /// inherits, which may be wrong, and the calculation's coverage is at most `PARTIAL`.
    pub taxability: Taxability,
}

impl LineTax {
    /// A line with nothing in it yet.
    fn empty(tax_code: TaxCodeId) -> LineTax {
        LineTax {
            tax_code,
            quantity: 0,
            amount_excluding_tax: Decimal::ZERO,
            tax: Decimal::ZERO,
            amount_including_tax: Decimal::ZERO,
            jurisdictions: Vec::new(),
            holiday: None,
            taxability: Taxability::Known,
        }
    }
}

/// The result of a calculation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calculation {
    /// Content hash (BLAKE3) of the table that produced it.
    pub table_hash: [u8; 32],
    /// Currency.
    pub currency: Currency,
    /// Whether input amounts included tax.
    pub tax_included: bool,
    /// Lines, in the sale's order.
    pub lines: Vec<LineTax>,
    /// Sum of the lines' tax.
    pub total_tax: Decimal,
    /// Sum of the lines' amounts excluding tax.
    pub total_excluding_tax: Decimal,
    /// Sum of the lines' amounts including tax.
    pub total_including_tax: Decimal,
    /// Why the whole sale owes nothing, when it does.
    pub zero_reason: Option<ZeroReason>,
    /// Whether the answer holds every tax due: the location's (see [`crate::Location`]: a
    /// `STATE_ONLY` answer may owe local taxes the table lacks), and at most `PARTIAL` when
    /// a line's product treatment is not known ([`Calculation::taxability`]).
    pub coverage: crate::Coverage,
    /// `Unknown` when some line's product treatment in some jurisdiction of its answer is
    /// not in the table's taxability matrix (see [`LineTax::taxability`]).
    pub taxability: Taxability,
    /// The sourcing rule applied: [`Sourcing::Destination`] unless the sale ships from a
    /// place in the buyer's state and that state sources intrastate sales otherwise.
    pub sourcing: Sourcing,
    /// The rounding applied: [`Rounding::Invoice`] only when the sale asked for it, its
    /// amounts exclude tax and the destination's state allows it; else [`Rounding::Line`].
    pub rounding: Rounding,
}

impl Calculation {
    /// A calculation of nothing yet, for `sale`, to be filled by [`Table::calculate_into`].
    fn empty(table_hash: [u8; 32], sale: &Sale) -> Calculation {
        Calculation {
            table_hash,
            currency: sale.currency,
            tax_included: sale.tax_included,
            lines: Vec::new(),
            total_tax: Decimal::ZERO,
            total_excluding_tax: Decimal::ZERO,
            total_including_tax: Decimal::ZERO,
            zero_reason: None,
            coverage: crate::Coverage::Full,
            taxability: Taxability::Known,
            sourcing: Sourcing::Destination,
            rounding: Rounding::Line,
        }
    }

    /// Makes the calculation one of `sale` with nothing in it yet, keeping its vectors.
    fn reset(&mut self, table_hash: [u8; 32], sale: &Sale) {
        let lines = std::mem::take(&mut self.lines);
        *self = Calculation::empty(table_hash, sale);
        self.lines = lines;
    }

    /// Effective rate: total tax / total excluding tax (zero for a zero total). Never a
    /// sum of rates.
    pub fn effective_rate(&self) -> Decimal {
        if self.total_excluding_tax.is_zero() {
            Decimal::ZERO
        } else {
            self.total_tax / self.total_excluding_tax
        }
    }

    /// The table hash as lower-case hex.
    pub fn table_hash_hex(&self) -> String {
        crate::table::hex32(&self.table_hash)
    }
}

/// Why a sale could not be calculated.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CalcError {
    /// A line's quantity is zero or above [`MAX_QUANTITY`].
    #[error("line {line}: quantity must be between 1 and {MAX_QUANTITY}")]
    Quantity {
        /// Line index.
        line: usize,
    },
    /// A line's amount is negative or above [`MAX_AMOUNT_MINOR`].
    #[error("line {line}: amount must be between 0 and {MAX_AMOUNT_MINOR} minor units")]
    Amount {
        /// Line index.
        line: usize,
    },
    /// A line's tax code is not in the table.
    #[error("line {line}: unknown tax code id {code}")]
    TaxCode {
        /// Line index.
        line: usize,
        /// The id.
        code: u32,
    },
}

/// One applicable rule, decoded once per line.
struct Applied {
    jurisdiction: JurisdictionId,
    rule: RuleId,
    rate: Decimal,
    base_min: Decimal,
    base_max: Option<Decimal>,
    unit_min: Decimal,
    unit_max: Option<Decimal>,
    fee: Decimal,
    /// No band, unit range or fee: the whole amount at `rate`.
    plain: bool,
    /// For a fast rule (see [`crate::model::RuleKey::fast`]): the rate's mantissa and
    /// scale, for the integer path.
    fast: Option<(i64, u32)>,
    zeroed: Option<(Note, Option<usize>)>,
    holiday: Option<(Decimal, bool, u32)>,
    /// For a delivery charge's rule: the share of the sale's goods the jurisdiction taxes,
    /// by which the line's taxed part is scaled. `ONE` for every other rule.
    share: Decimal,
    /// Which address brought the jurisdiction in.
    sourced: Sourced,
}

impl Applied {
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

fn holiday_covers<D>(
    table: &Table<D>,
    h: &ArchivedHolidayRecord,
    jur: &crate::Jurisdiction<'_>,
    code: TaxCodeId,
    date: Date,
) -> bool {
    if date.0 < h.from.to_native() || date.0 > h.to.to_native() {
        return false;
    }
    if jur.country().as_bytes() != h.country || jur.region() != h.region.as_str() {
        return false;
    }
    let cap = load_decimal(&h.max_unit);
    if cap != Decimal::MAX && cap.abs() > MAX_RULE_AMOUNT {
        return false;
    }
    let level_ok = matches!(jur.level(), Level::State | Level::Province)
        || (h.include_local && jur.level().is_local());
    let within = |c: &rkyv::rend::u32_le| table.tax_code_within(code, TaxCodeId(c.to_native()));
    level_ok && h.tax_codes.iter().any(within) && !h.exclude_codes.iter().any(within)
}

/// A place of the holiday keys as one number that orders places as `(country, region)`
/// does: the two country bytes, then the region's (at most six; the rest count as the zero
/// bytes a stored key is padded with), big-endian. Built by shifts, without a copy into a
/// padded array.
#[inline]
pub(crate) fn place_key(country: [u8; 2], region: &[u8]) -> u64 {
    let mut key = u64::from(country[0]) << 56 | u64::from(country[1]) << 48;
    for (i, &b) in region.iter().take(6).enumerate() {
        key |= u64::from(b) << (40 - 8 * i);
    }
    key
}

/// The place of a stored holiday key, as [`place_key`] orders it: the stored region is
/// already padded to six bytes, so the eight bytes read as one big-endian number.
#[inline]
pub(crate) fn stored_place_key(k: &crate::model::ArchivedHolidayKey) -> u64 {
    let [c0, c1] = k.country;
    let [r0, r1, r2, r3, r4, r5] = k.region;
    u64::from_be_bytes([c0, c1, r0, r1, r2, r3, r4, r5])
}

thread_local! {
    /// This thread's buffer for the decoded rules of a line (see [`Scratch`]).
    static APPLIED: std::cell::Cell<Vec<Applied>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A calculation's buffer for the decoded rules of a line: this thread's, reused across
/// calculations so that the hot path does not allocate one each time (a batch holds it for
/// all its sales). Taken on first use and put back when dropped, so a calculation whose
/// lines are all taxed straight from the rule keys (the usual) never touches it.
struct Scratch {
    applied: Option<Vec<Applied>>,
}

impl Scratch {
    const fn new() -> Scratch {
        Scratch { applied: None }
    }

    /// The buffer, empty or as the last line left it.
    fn applied(&mut self) -> &mut Vec<Applied> {
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

/// What [`Table::usual_sale`] made of a sale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UsualSale {
    /// The sale is the usual one and is answered.
    Answered,
    /// The sale is not the usual one: the general path answers it.
    Other,
    /// The sale looked usual, but its line is not one [`Table::direct_line`] takes (a rule
    /// that is not fast, a holiday, an amount out of range): the general path answers it,
    /// without trying that again.
    GaveUp,
}

/// The usual tax code's name: what most lines sell, and what a local-rate cap counts.
const GENERAL_MERCHANDISE: &str = "GENERAL_MERCHANDISE";

/// Each jurisdiction's rule keys for the usual tax code ([`GENERAL_MERCHANDISE`]), found
/// on the jurisdiction's first usual line and kept beside the table
/// (like its ZIP+4 and holiday indexes): what [`Table::code_rule_keys`] would otherwise
/// search for, line after line, jurisdiction after jurisdiction. One slot of about 56
/// bytes a jurisdiction, so the memory is bounded by the table's jurisdictions (under 1 MB
/// for the 16,961 of every state's ZIP5 file), not by its places.
pub(crate) struct UsualRules {
    /// The usual tax code; `None` when the table has no [`GENERAL_MERCHANDISE`] code.
    code: Option<TaxCodeId>,
    /// One slot a jurisdiction, by id.
    slots: Box<[std::sync::OnceLock<UsualRule>]>,
}

/// A jurisdiction's rule keys for the usual code (walking up the taxonomy as
/// [`Table::code_rule_keys`] does): their span, and when there is one key (a jurisdiction
/// whose rate never changed within the table), that key as the integer path reads it, so
/// that a line need not read the key again.
#[derive(Clone, Copy, Debug)]
struct UsualRule {
    /// The single key's rate as a decimal (zero when it is not fast, or there are several).
    rate: Decimal,
    /// The single key's rate mantissa (see [`fast_rate`]).
    mantissa: i64,
    /// The rule id of the first key.
    first: u32,
    /// How many keys.
    len: u32,
    /// The single key's first and last day in force.
    from: i32,
    to: i32,
    /// The single key's rate scale.
    scale: u8,
    /// Whether the single key is fast (see [`fast_rate`]).
    fast: bool,
}

impl<D> Table<D> {
    /// The table's [`UsualRules`]: the usual code found, and empty slots made, on first use.
    #[inline]
    fn usual_rules(&self) -> &UsualRules {
        self.usual.get_or_init(|| UsualRules {
            code: self.tax_code(GENERAL_MERCHANDISE),
            slots: (0..self.jurisdiction_count())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
        })
    }

    /// The slots of [`UsualRules`] when `code` is the usual code.
    #[inline]
    fn usual_slots(&self, code: TaxCodeId) -> Option<&[std::sync::OnceLock<UsualRule>]> {
        let usual = self.usual_rules();
        (usual.code == Some(code)).then_some(&*usual.slots)
    }

    /// `jurisdiction`'s [`UsualRule`] for the usual `code` among `slots`, searched on
    /// first use; `None` for a jurisdiction the table lacks.
    #[inline]
    fn usual_rule<'a>(
        &self,
        slots: &'a [std::sync::OnceLock<UsualRule>],
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> Option<&'a UsualRule> {
        let slot = slots.get(jurisdiction.0 as usize)?;
        Some(slot.get_or_init(|| {
            let (first, keys) = self.search_rule_keys(jurisdiction, code);
            let single = match keys {
                [key] => fast_rate(key).map(|r| (r, key)),
                _ => None,
            };
            UsualRule {
                rate: single.map_or(Decimal::ZERO, |s| s.0 .0),
                mantissa: single.map_or(0, |s| s.0 .1),
                first: first as u32,
                len: keys.len() as u32,
                from: keys.first().map_or(0, |k| k.from.to_native()),
                to: keys.first().map_or(0, |k| k.to.to_native()),
                // The key's own scale, a byte (`fast_rate` only widened it).
                scale: single.map_or(0, |s| s.0 .2 as u8),
                fast: single.is_some(),
            }
        }))
    }

    /// The keys of `rule` (a [`UsualRule`]'s span).
    #[inline]
    fn usual_keys(&self, rule: &UsualRule) -> (usize, &[ArchivedRuleKey]) {
        let (first, len) = (rule.first as usize, rule.len as usize);
        let keys = self.data().rule_keys.get(first..first + len);
        (first, keys.unwrap_or_default())
    }
}

impl<D> Table<D> {
    /// The rules of `jurisdiction` in force on `date` for `code`, walking up the taxonomy to
    /// the nearest code that has any. Returns the span of rule ids (contiguous).
    fn rules_for(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
        date: Date,
    ) -> impl Iterator<Item = RuleId> + '_ {
        self.rule_keys_for(jurisdiction, code, date)
            .map(|(id, _)| id)
    }

    /// [`Table::rules_for`], each rule with its compact key.
    fn rule_keys_for(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
        date: Date,
    ) -> impl Iterator<Item = (RuleId, &ArchivedRuleKey)> + '_ {
        let (first, keys) = self.code_rule_keys(jurisdiction, code);
        keys.iter()
            .enumerate()
            .filter(move |(_, r)| key_in_force(r, date))
            .map(move |(i, r)| (RuleId((first + i) as u32), r))
    }

    /// The compact keys of every rule of `jurisdiction` for `code` (every period), walking
    /// up the taxonomy to the nearest code that has any, and the id of the first: what
    /// [`Table::rule_keys_for`] filters by date.
    #[inline]
    fn code_rule_keys(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> (usize, &[ArchivedRuleKey]) {
        let usual = self.usual_slots(code);
        match usual.and_then(|slots| self.usual_rule(slots, jurisdiction, code)) {
            Some(rule) => self.usual_keys(rule),
            None => self.search_rule_keys(jurisdiction, code),
        }
    }

    /// [`Table::code_rule_keys`], searched: the jurisdiction's span of rule keys, then the
    /// code's keys in it (or its parent's, up the taxonomy).
    fn search_rule_keys(
        &self,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> (usize, &[ArchivedRuleKey]) {
        let (start, end) = self.rule_span(jurisdiction);
        // The compact keys, parallel to the rules (a damaged table whose key list is short
        // finds no rules rather than reading out of bounds).
        let keys = self.data().rule_keys.get(start..end).unwrap_or_default();
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

    /// The first holiday that suspends `code` in `jur` on `date`, found through the holiday
    /// keys of the jurisdiction's place. `span` remembers, for one line's date, the keys of
    /// the place last asked for (none when no holiday of the place is in force that day):
    /// the jurisdictions of a set mostly share one place (a state and its local
    /// jurisdictions), so a line searches the keys once rather than once per jurisdiction.
    fn holiday_for(
        &self,
        jur: &crate::Jurisdiction<'_>,
        code: TaxCodeId,
        date: Date,
        span: &mut Option<(u64, std::ops::Range<usize>)>,
    ) -> Option<(usize, &ArchivedHolidayRecord)> {
        let d = self.data();
        let keys = &d.holiday_keys;
        if keys.is_empty() {
            return None;
        }
        let region = jur.region().as_bytes();
        if region.len() > 6 {
            return None;
        }
        let place = place_key(jur.country_bytes(), region);
        let in_force = |k: &crate::model::ArchivedHolidayKey| {
            k.from.to_native() <= date.0 && date.0 <= k.to.to_native()
        };
        let range = match span {
            Some((p, range)) if *p == place => range.clone(),
            _ => {
                // A place with no holiday, or none of whose holidays is in force on the
                // date (the usual day), keeps an empty span: its other jurisdictions look
                // no further.
                let range = match self.holiday_place(place) {
                    Some(p) if p.days.0 <= date.0 && date.0 <= p.days.1 => {
                        let range = p.keys.0 as usize..p.keys.1 as usize;
                        match keys.get(range.clone()) {
                            Some(ks) if ks.iter().any(in_force) => range,
                            _ => 0..0,
                        }
                    }
                    _ => 0..0,
                };
                *span = Some((place, range.clone()));
                range
            }
        };
        let mut found: Option<(usize, &ArchivedHolidayRecord)> = None;
        for k in keys.get(range).unwrap_or_default() {
            if !in_force(k) {
                continue;
            }
            let i = k.holiday.to_native() as usize;
            // The earliest-written holiday wins, as when every holiday was scanned in order.
            if found.is_some_and(|(f, _)| f < i) {
                continue;
            }
            if let Some(h) = d.holidays.get(i) {
                if holiday_covers(self, h, jur, code, date) {
                    found = Some((i, h));
                }
            }
        }
        found
    }

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
            let tried = match self.usual_sale(location, sale, &mut out[n]) {
                UsualSale::Answered => None,
                UsualSale::Other => Some(false),
                UsualSale::GaveUp => Some(true),
            };
            if let Some(tried) = tried {
                let calc =
                    self.calculate_with(None, location, sale, &mut out[n], &mut scratch, tried);
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
            None => match self.usual_sale(location, sale, out) {
                UsualSale::Answered => return Ok(()),
                UsualSale::Other => false,
                UsualSale::GaveUp => true,
            },
        };
        self.calculate_with(origin, location, sale, out, &mut Scratch::new(), tried)
    }

    /// [`Table::calculate_into`] by the general path (any sale: see [`Table::usual_sale`]
    /// for the one that does not need it), with `scratch` the buffer for a line's decoded
    /// rules; `usual_tried` when [`Table::usual_sale`] gave up on this sale (its one line
    /// is then not tried again by [`Table::direct_line`], which would give up again).
    fn calculate_with(
        &self,
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
        let (sourcing, sourced) = self.sourced_jurisdictions(origin, location, sale.date);
        self.calculate_lines(
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
    /// in force (see [`Table::direct_line`]). The answer is the general path's to the last
    /// field: the same entries from the same function, the same totals (a one-line sale's
    /// are its line's), `Destination` sourcing, `Line` rounding and the location's
    /// coverage. For any other sale `out` is left in no particular state and the general
    /// path fills it afresh.
    fn usual_sale(&self, location: &Location, sale: &Sale, out: &mut Calculation) -> UsualSale {
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
            && (line.tax_code.0 as usize) < self.data().tax_codes.len();
        if !usual {
            return UsualSale::Other;
        }
        if out.lines.is_empty() {
            out.lines.push(LineTax::empty(line.tax_code));
        }
        out.lines.truncate(1);
        let line_out = &mut out.lines[0];
        line_out.jurisdictions.clear();
        let Some((minor, tax)) = self.direct_line(
            jset,
            line,
            sale.date,
            line.amount,
            &mut line_out.jurisdictions,
        ) else {
            return UsualSale::GaveUp;
        };
        whole_line_totals(line_out, line, minor, tax);
        let taxability = self.line_taxability(line.tax_code, &line_out.jurisdictions, sale.date);
        line_out.taxability = taxability;
        out.table_hash = self.header().content_hash;
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

    /// The jurisdictions that tax a sale from `origin` to `dest`, each with the address that
    /// brought it in, and the rule applied; `None` for the destination's own set (the usual
    /// case, which needs no list).
    fn sourced_jurisdictions(
        &self,
        origin: Option<&Location>,
        dest: &Location,
        date: Date,
    ) -> (Sourcing, Option<Vec<(JurisdictionId, Sourced)>>) {
        let (Some(origin), Some(dest_jset)) = (origin, dest.jset) else {
            return (Sourcing::Destination, None);
        };
        let Some(origin_jset) = origin.jset else {
            return (Sourcing::Destination, None);
        };
        let dest_region = self.location_region(dest);
        let intrastate = origin.country().eq_ignore_ascii_case(dest.country())
            && !dest_region.is_empty()
            && self
                .location_region(origin)
                .eq_ignore_ascii_case(dest_region);
        if !intrastate {
            return (Sourcing::Destination, None);
        }
        let (rule, cap) = self.region_sourcing(dest.country(), dest_region);
        let level = |j: JurisdictionId| self.jurisdiction(j).map(|x| x.level());
        let from_origin = || self.jset(origin_jset).map(|j| (j, Sourced::Origin));
        let list: Vec<(JurisdictionId, Sourced)> = match rule {
            Sourcing::Destination => return (Sourcing::Destination, None),
            Sourcing::Origin => from_origin().collect(),
            Sourcing::ModifiedOrigin => from_origin()
                .filter(|&(j, _)| level(j) != Some(Level::District))
                .chain(
                    self.jset(dest_jset)
                        .filter(|&j| level(j) == Some(Level::District))
                        .map(|j| (j, Sourced::Destination)),
                )
                .collect(),
            Sourcing::OriginWithUseTax => {
                let mut list: Vec<_> = from_origin().collect();
                let is_local = |j: JurisdictionId| level(j).is_some_and(|l| l.is_local());
                let mut local: Decimal = list
                    .iter()
                    .filter(|&&(j, _)| is_local(j))
                    .map(|&(j, _)| self.general_rate(j, date))
                    .sum();
                // The buyer's local jurisdictions the seller's place lacks: city, then county,
                // then districts; each in full while the cap allows, else not at all.
                for wanted in [Level::City, Level::County, Level::District] {
                    for j in self.jset(dest_jset) {
                        if level(j) != Some(wanted) || list.iter().any(|&(o, _)| o == j) {
                            continue;
                        }
                        let rate = self.general_rate(j, date);
                        if local + rate <= cap {
                            local += rate;
                            list.push((j, Sourced::Destination));
                        }
                    }
                }
                list
            }
        };
        (rule, Some(list))
    }

    /// A jurisdiction's general merchandise rate on `date` (its first plain rule for the
    /// general code, or zero): what a local-rate cap counts.
    fn general_rate(&self, j: JurisdictionId, date: Date) -> Decimal {
        let Some(general) = self.usual_rules().code else {
            return Decimal::ZERO;
        };
        self.rules_for(j, general, date)
            .filter_map(|r| self.rule(r))
            .map(|r| r.rate())
            .next()
            .unwrap_or(Decimal::ZERO)
    }

    fn calculate_lines(
        &self,
        out: &mut Calculation,
        ctx: LineCtx<'_>,
        scratch: &mut Scratch,
    ) -> Result<(), CalcError> {
        let LineCtx {
            location,
            sale,
            zero_reason,
            ..
        } = ctx;
        out.reset(self.header().content_hash, sale);
        let mut lines = std::mem::take(&mut out.lines);
        lines.truncate(sale.lines.len());
        let result = self.fill_lines(&ctx, scratch, &mut lines);
        out.lines = lines;
        match result {
            Ok(()) => {}
            Err(e) => {
                out.lines.clear();
                return Err(e);
            }
        }
        let lines = &mut out.lines;
        let rounding = if sale.rounding == Rounding::Invoice
            && !sale.tax_included
            && zero_reason.is_none()
            && self.region_invoice_rounding(location.country(), self.location_region(location))
        {
            round_invoice(lines);
            Rounding::Invoice
        } else {
            Rounding::Line
        };
        // A one-line sale (most of them) takes its line's amounts as they are: adding them
        // to zero gives the same value at the same scale.
        let (total_tax, total_excl, total_incl) = match lines.as_slice() {
            [l] => (l.tax, l.amount_excluding_tax, l.amount_including_tax),
            _ => lines.iter().fold(
                (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO),
                |(t, e, i), l| {
                    (
                        t + l.tax,
                        e + l.amount_excluding_tax,
                        i + l.amount_including_tax,
                    )
                },
            ),
        };
        // What the matrix knows of each line's product; a sale that owes nothing whatever
        // the product (an exempt buyer, tax disabled, a zero-rate place) needs nothing of it.
        let mut taxability = Taxability::Known;
        for (l, sl) in lines.iter_mut().zip(&sale.lines) {
            l.taxability = match zero_reason {
                Some(_) => Taxability::Known,
                None => self.line_taxability(sl.tax_code, &l.jurisdictions, sale.date),
            };
            if l.taxability == Taxability::Unknown {
                taxability = Taxability::Unknown;
            }
        }
        out.rounding = rounding;
        out.sourcing = ctx.sourcing;
        out.coverage = with_taxability(ctx.coverage, taxability);
        out.taxability = taxability;
        out.total_tax = normalized(total_tax);
        out.total_excluding_tax = normalized(total_excl);
        out.total_including_tax = normalized(total_incl);
        out.zero_reason = zero_reason;
        Ok(())
    }

    /// Fills `lines` (truncated to at most the sale's line count; entries already there are
    /// overwritten, their vectors reused) with the tax of every line of the sale.
    fn fill_lines(
        &self,
        ctx: &LineCtx<'_>,
        scratch: &mut Scratch,
        lines: &mut Vec<LineTax>,
    ) -> Result<(), CalcError> {
        let sale = ctx.sale;
        // Delivery lines (not goods), and those of them whose tax waits for the goods' shares.
        let mut delivery = Vec::new();
        let mut waiting = Vec::new();
        // The per-sale threshold groups each line's rules name, as (line, group).
        let mut grouped: Vec<(usize, u32)> = Vec::new();
        for (index, line) in sale.lines.iter().enumerate() {
            if line.quantity == 0 || line.quantity > MAX_QUANTITY {
                return Err(CalcError::Quantity { line: index });
            }
            // A whole amount (the usual) compares as an integer; any other as a decimal.
            let too_large = if line.amount.scale() == 0 {
                line.amount.mantissa() > i128::from(MAX_AMOUNT_MINOR)
            } else {
                line.amount > Decimal::from(MAX_AMOUNT_MINOR)
            };
            if line.amount.is_sign_negative() || too_large {
                return Err(CalcError::Amount { line: index });
            }
            if self
                .data()
                .tax_codes
                .get(line.tax_code.0 as usize)
                .is_none()
            {
                return Err(CalcError::TaxCode {
                    line: index,
                    code: line.tax_code.0,
                });
            }
            if index == lines.len() {
                lines.push(LineTax::empty(line.tax_code));
            }
            let mut groups = SaleGroups::first(&mut grouped, index);
            let proportional =
                self.line_tax(ctx, line, scratch, &[], &mut groups, &mut lines[index]);
            if self.tax_code_is_delivery(line.tax_code) {
                delivery.push(index);
            }
            if proportional {
                waiting.push(index);
            }
        }
        if !grouped.is_empty() {
            // The first pass took every per-sale threshold as met; now that the lines'
            // amounts excluding tax are known, the grouped lines are taxed again on each
            // group's total.
            let totals = group_totals(lines, &grouped, sale.currency);
            let mut lines_grouped: Vec<usize> = grouped.iter().map(|&(i, _)| i).collect();
            lines_grouped.dedup();
            for i in lines_grouped {
                let mut groups = SaleGroups::Totals(&totals);
                self.line_tax(
                    ctx,
                    &sale.lines[i],
                    scratch,
                    &[],
                    &mut groups,
                    &mut lines[i],
                );
            }
        }
        if !waiting.is_empty() {
            let shares = goods_shares(lines, &delivery);
            for &i in &waiting {
                let mut groups = SaleGroups::None;
                self.line_tax(
                    ctx,
                    &sale.lines[i],
                    scratch,
                    &shares,
                    &mut groups,
                    &mut lines[i],
                );
            }
        }
        Ok(())
    }

    /// The tax of a line of `amount` minor units (excluding tax) in the jurisdictions of
    /// `jset`, in integer arithmetic, its entries pushed onto `entries` straight from the rule
    /// keys: what `line_tax` and `integer_line` give for such a line, without an `Applied`
    /// per rule. `None`, with `entries` as they were, when a jurisdiction is on a holiday, a
    /// rule is not fast (a band, a threshold, a fee, a delivery share, a finer rate), or the
    /// amount is outside the integer path's range: the general path answers those.
    fn direct_line(
        &self,
        jset: JsetId,
        line: &SaleLine,
        date: Date,
        amount: Decimal,
        entries: &mut Vec<JurisdictionTax>,
    ) -> Option<(i64, i64)> {
        let minor = integer_amount(amount)?;
        let mut holidays = None;
        // On a day with no holiday in force anywhere (most days), no jurisdiction is on one.
        let holiday_today = self.any_holiday_on(date);
        let jurisdictions = self.jurisdiction_count();
        let usual = self.usual_slots(line.tax_code);
        push_fast_entries(entries, minor, amount, |fast| {
            for jid in self.jset(jset) {
                // A jurisdiction the table lacks (a damaged table) is the general path's to
                // skip; a sound one's record is read only when a holiday may apply.
                if jid.0 as usize >= jurisdictions {
                    return None;
                }
                if holiday_today {
                    let jur = self.jurisdiction(jid)?;
                    if self
                        .holiday_for(&jur, line.tax_code, date, &mut holidays)
                        .is_some()
                    {
                        return None;
                    }
                }
                let usual = usual.and_then(|slots| self.usual_rule(slots, jid, line.tax_code));
                let (first, keys) = match usual {
                    // The usual code's one rule of the jurisdiction, read from its slot.
                    Some(u) if u.len == 1 => {
                        if crate::resolve::in_force(u.from, u.to, date) {
                            if !u.fast {
                                return None;
                            }
                            let who = (jid, RuleId(u.first), Sourced::Destination);
                            fast.push(who, (u.rate, u.mantissa, u32::from(u.scale)))?;
                        }
                        continue;
                    }
                    Some(u) => self.usual_keys(u),
                    None => self.code_rule_keys(jid, line.tax_code),
                };
                for (i, key) in keys.iter().enumerate() {
                    if !key_in_force(key, date) {
                        continue;
                    }
                    let rid = RuleId((first + i) as u32);
                    fast.push((jid, rid, Sourced::Destination), fast_rate(key)?)?;
                }
            }
            Some(())
        })
        .map(|tax| (minor, tax))
    }

    /// The tax of one (checked) line, and whether any of its rules is a delivery charge's.
    /// `shares` gives, per jurisdiction, the share of the sale's goods it taxes; empty in the
    /// first pass, when a delivery rule counts in full. `groups` says how a rule with a
    /// per-sale threshold is decided (see [`SaleGroups`]).
    fn line_tax(
        &self,
        ctx: &LineCtx<'_>,
        line: &SaleLine,
        scratch: &mut Scratch,
        shares: &[(JurisdictionId, Decimal)],
        groups: &mut SaleGroups<'_>,
        out: &mut LineTax,
    ) -> bool {
        let LineCtx {
            location,
            sale,
            zero_reason,
            reverse_charge,
            sourced: sourced_list,
            ..
        } = *ctx;
        let mut proportional = false;
        let qty = Decimal::from(line.quantity);
        let given_minor = if line.per_unit {
            line.amount * qty
        } else {
            line.amount
        };

        // The usual sale (taxed at the destination, nothing zeroed or exempted, amounts
        // excluding tax) whose rules are all fast and on no holiday: its entries straight
        // from the rule keys, without decoding them (see `direct_line`).
        if let (true, None, false, None, true, false, Some(jset)) = (
            ctx.direct,
            zero_reason,
            reverse_charge,
            sourced_list,
            sale.customer.exemptions.is_empty(),
            sale.tax_included,
            location.jset,
        ) {
            out.jurisdictions.clear();
            if let Some((minor, tax)) =
                self.direct_line(jset, line, sale.date, given_minor, &mut out.jurisdictions)
            {
                whole_line_totals(out, line, minor, tax);
                return false;
            }
        }

        // Decode the applicable rules once.
        let applied = scratch.applied();
        applied.clear();
        let mut holiday = None;
        let mut holidays = None;
        let holiday_today = self.any_holiday_on(sale.date);
        if let Some(jset) = location.jset {
            let (mut listed, mut own);
            let jurisdictions: &mut dyn Iterator<Item = (JurisdictionId, Sourced)> =
                match sourced_list {
                    Some(list) => {
                        listed = list.iter().copied();
                        &mut listed
                    }
                    None => {
                        own = self.jset(jset).map(|j| (j, Sourced::Destination));
                        &mut own
                    }
                };
            for (jid, sourced) in jurisdictions {
                let Some(jur) = self.jurisdiction(jid) else {
                    continue;
                };
                let hol = if holiday_today {
                    self.holiday_for(&jur, line.tax_code, sale.date, &mut holidays)
                } else {
                    None
                };
                let exemption = sale.customer.exemptions.iter().position(|e| {
                    e.country.eq_ignore_ascii_case(jur.country())
                        && e.region.eq_ignore_ascii_case(jur.region())
                        && !e.region.is_empty()
                });
                let zeroed = match (zero_reason, exemption) {
                    (Some(z), _) => Some((z.note(), None)),
                    (None, Some(i)) => Some((Note::ExemptionCertificate, Some(i))),
                    _ if reverse_charge
                        && matches!(jur.tax_type(), TaxType::Vat | TaxType::Gst) =>
                    {
                        Some((Note::ReverseCharge, None))
                    }
                    _ => None,
                };
                for (rid, key) in self.rule_keys_for(jid, line.tax_code, sale.date) {
                    // A fast rule is read from its key alone; any other from its record.
                    if let Some((rate, m, scale)) = fast_rate(key) {
                        applied.push(Applied {
                            jurisdiction: jid,
                            rule: rid,
                            rate,
                            base_min: Decimal::ZERO,
                            base_max: None,
                            unit_min: Decimal::ZERO,
                            unit_max: None,
                            fee: Decimal::ZERO,
                            plain: true,
                            fast: Some((m, scale)),
                            zeroed,
                            holiday: hol.map(|(i, h)| {
                                (load_decimal(&h.max_unit), h.cap_inclusive, i as u32)
                            }),
                            share: Decimal::ONE,
                            sourced,
                        });
                        continue;
                    }
                    let Some(rule) = self.rule(rid) else { continue };
                    if let Some((group, limit, above)) = rule.sale_condition() {
                        if !groups.applies(group, limit, above) {
                            continue;
                        }
                    }
                    let plain = rule.is_plain();
                    let rate = rule.rate();
                    let ((base_min, base_max), (unit_min, unit_max), fee) = if plain {
                        (
                            (Decimal::ZERO, Decimal::MAX),
                            (Decimal::ZERO, Decimal::MAX),
                            Decimal::ZERO,
                        )
                    } else {
                        (rule.band(), rule.unit_range(), rule.fee())
                    };
                    let in_range = if plain {
                        rate.abs() <= MAX_RATE
                    } else {
                        rule_in_range(rate, (base_min, base_max), (unit_min, unit_max), fee)
                    };
                    if !in_range {
                        continue;
                    }
                    let share = if rule.is_proportional() {
                        proportional = true;
                        match shares.iter().find(|(j, _)| *j == jid) {
                            Some(&(_, share)) => share,
                            // First pass, or a delivery charge with no goods beside it:
                            // in full. A jurisdiction the goods never name taxes none.
                            None if shares.is_empty() => Decimal::ONE,
                            None => Decimal::ZERO,
                        }
                    } else {
                        Decimal::ONE
                    };
                    applied.push(Applied {
                        jurisdiction: jid,
                        rule: rid,
                        rate,
                        base_min,
                        base_max: (!is_max(base_max)).then_some(base_max),
                        unit_min,
                        unit_max: (!is_max(unit_max)).then_some(unit_max),
                        fee,
                        plain,
                        fast: None,
                        zeroed,
                        holiday: hol
                            .map(|(i, h)| (load_decimal(&h.max_unit), h.cap_inclusive, i as u32)),
                        share,
                        sourced,
                    });
                }
            }
        }

        let currency = sale.currency;
        let excl_minor = if sale.tax_included && zero_reason.is_none() {
            back_out(applied, currency.to_major(given_minor), qty, currency)
        } else {
            given_minor
        };
        let excl_major = currency.to_major(excl_minor);
        // One unit (the usual line) needs no division.
        let unit = if line.quantity == 1 {
            excl_major
        } else {
            excl_major / qty
        };
        let entries = &mut out.jurisdictions;
        entries.clear();
        if let Some(tax) = integer_line(applied, excl_minor, entries) {
            // Every rule was fast: taxed in integers (see `integer_line`).
            line_totals(
                out,
                line,
                sale.tax_included,
                given_minor,
                excl_minor,
                tax,
                None,
            );
            return proportional;
        }
        let mut due_sum = Decimal::ZERO;
        for a in applied.iter() {
            if a.plain && a.zeroed.is_none() && a.holiday.is_none() {
                // A plain rate on the whole amount (the usual rule): the taxable base is the
                // amount itself, already in minor units, and the tax due is one product,
                // equal to what the general path computes through major units.
                let due = excl_minor * a.rate;
                due_sum += due;
                entries.push(JurisdictionTax {
                    jurisdiction: a.jurisdiction,
                    rule: a.rule,
                    rate: a.rate,
                    taxable_base: normalized(excl_minor),
                    tax_due: normalized(due),
                    fee: Decimal::ZERO,
                    note: Note::RateFrac,
                    exemption: None,
                    sourced: a.sourced,
                });
                continue;
            }
            let applies = a.applies_at(unit);
            let on_holiday = a.on_holiday(unit);
            if on_holiday && applies && a.zeroed.is_none() {
                holiday = a.holiday.map(|h| h.2);
            }
            let (note, exemption) = match a.zeroed {
                Some((n, e)) => (n, e),
                None if on_holiday && applies => (Note::Holiday, None),
                None if !applies => (Note::BelowThreshold, None),
                None if a.is_band() => (Note::ProgressiveRate, None),
                None if a.is_threshold() => (Note::Threshold, None),
                None => (Note::RateFrac, None),
            };
            let taxed = applies && !on_holiday && a.zeroed.is_none();
            let (base, due, fee) = if taxed {
                let base_major = a.band_total(unit, excl_major, qty) * a.share;
                let base = currency.to_minor(base_major);
                let due = currency.to_minor(base_major * a.rate);
                if a.fee.is_zero() {
                    (base, due, Decimal::ZERO)
                } else {
                    let fee = currency.to_minor(a.fee * qty);
                    (base, due + fee, fee)
                }
            } else {
                (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO)
            };
            due_sum += due;
            entries.push(JurisdictionTax {
                jurisdiction: a.jurisdiction,
                rule: a.rule,
                rate: a.rate,
                taxable_base: normalized(base),
                tax_due: normalized(due),
                fee: normalized(fee),
                note,
                exemption,
                sourced: a.sourced,
            });
        }
        let tax = round_minor(due_sum);
        line_totals(
            out,
            line,
            sale.tax_included,
            given_minor,
            excl_minor,
            tax,
            holiday,
        );
        proportional
    }
}

/// A line's totals in minor units. Tax included: the given amount holds the tax, which is
/// what remains once `excl_minor` was backed out. Excluded: `tax` is added to the amount.
fn line_totals(
    out: &mut LineTax,
    line: &SaleLine,
    tax_included: bool,
    given_minor: Decimal,
    excl_minor: Decimal,
    tax: Decimal,
    holiday: Option<u32>,
) {
    let (tax, excl, incl) = if tax_included {
        (given_minor - excl_minor, excl_minor, given_minor)
    } else {
        (tax, given_minor, given_minor + tax)
    };
    out.tax_code = line.tax_code;
    out.quantity = line.quantity;
    out.amount_excluding_tax = normalized(excl);
    out.tax = normalized(tax);
    out.amount_including_tax = normalized(incl);
    out.holiday = holiday;
}

/// [`line_totals`] of a line taxed at the destination in whole minor units: `minor`
/// excluding tax (at most [`MAX_AMOUNT_MINOR`]) and its rounded `tax` (at most ten times it
/// either way), the amounts as `line_totals` gives them, built from integers.
fn whole_line_totals(out: &mut LineTax, line: &SaleLine, minor: i64, tax: i64) {
    out.tax_code = line.tax_code;
    out.quantity = line.quantity;
    // Whole numbers at scale 0 have no trailing zeros to drop: what `normalized` gives.
    out.amount_excluding_tax = whole(minor);
    out.tax = whole(tax);
    out.amount_including_tax = whole(minor + tax);
    out.holiday = None;
}

/// `n` as a decimal at scale 0, as `Decimal::from` gives it; a non-negative `n` (every
/// amount and, at a rate of zero or more, every tax) is put together from its two 32-bit
/// halves without the sign's work.
#[inline]
fn whole(n: i64) -> Decimal {
    match u64::try_from(n) {
        Ok(u) => Decimal::from_parts(u as u32, (u >> 32) as u32, 0, false, 0),
        Err(_) => Decimal::from(n),
    }
}

/// 10^k for k in 0..=12.
const POW10: [i64; 13] = {
    let mut t = [1i64; 13];
    let mut k = 1;
    while k < 13 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// The integer path: when every applied rule is fast (a plain rate held as a mantissa and
/// a scale of at most 12), nothing zeroes or suspends it, and the amount is a whole number
/// of minor units, fills `entries` and returns the line's rounded tax; else `None`, and the
/// decimal path runs.
///
/// Each entry's tax due is `amount × mantissa` at the rate's scale, exact; the line's tax
/// is their sum at scale 12, rounded half away from zero to a whole minor unit. That is
/// the decimal path's arithmetic to the last digit: `Decimal` multiplies exactly in this
/// range (amount at most 10^15, rate at most 10, so every product is below 10^28), and
/// [`round_minor`] rounds half away from zero.
fn integer_line(
    applied: &[Applied],
    excl_minor: Decimal,
    entries: &mut Vec<JurisdictionTax>,
) -> Option<Decimal> {
    let amount = integer_amount(excl_minor)?;
    push_fast_entries(entries, amount, excl_minor, |fast| {
        for a in applied {
            if a.zeroed.is_some() || a.holiday.is_some() {
                return None;
            }
            let (m, scale) = a.fast?;
            fast.push((a.jurisdiction, a.rule, a.sourced), (a.rate, m, scale))?;
        }
        Some(())
    })
    .map(Decimal::from)
}

/// A line's entries on the integer path as its rules are pushed, and the sum of their
/// taxes due at scale 12 (see [`push_fast_entries`]).
struct FastEntries<'a> {
    entries: &'a mut Vec<JurisdictionTax>,
    amount: i64,
    excl_minor: Decimal,
    sum: i128,
}

impl FastEntries<'_> {
    /// Adds the entry of a fast rule: who (jurisdiction, rule, the address that brought it
    /// in) and the rate as a decimal and as its mantissa and scale. `None` when the rule is
    /// out of the path's range.
    #[inline(always)]
    fn push(
        &mut self,
        who: (JurisdictionId, RuleId, Sourced),
        rate: (Decimal, i64, u32),
    ) -> Option<()> {
        let ((jurisdiction, rule, sourced), (rate, m, scale)) = (who, rate);
        let (tax_due, scaled) = fast_due(m, scale, self.amount)?;
        self.sum = self.sum.checked_add(scaled)?;
        self.entries.push(JurisdictionTax {
            jurisdiction,
            rule,
            rate,
            taxable_base: self.excl_minor,
            tax_due,
            fee: Decimal::ZERO,
            note: Note::RateFrac,
            exemption: None,
            sourced,
        });
        Some(())
    }
}

/// The integer path's line: `rules` is handed the line's [`FastEntries`] (on a line of
/// `amount` minor units, `excl_minor` as a decimal, pushed onto `entries`), and pushes each
/// of the line's rules in turn. The answer is the line's tax in minor units, the sum of the
/// taxes due rounded once, half away from zero. When `rules` gives up (`None`: a rule that is not
/// fast, a holiday) or a rule is out of the path's range, `entries` are left as they were
/// and the answer is `None`: the decimal path starts afresh.
fn push_fast_entries(
    entries: &mut Vec<JurisdictionTax>,
    amount: i64,
    excl_minor: Decimal,
    rules: impl FnOnce(&mut FastEntries<'_>) -> Option<()>,
) -> Option<i64> {
    let start = entries.len();
    let mut fast = FastEntries {
        entries,
        amount,
        excl_minor,
        sum: 0,
    };
    let done = rules(&mut fast);
    let (entries, sum) = (fast.entries, fast.sum);
    // At most 10^15 minor units at a rate of at most 10: the tax, and the amount including
    // it, fit an `i64` (a forged key's may not, and is the general path's to refuse).
    let tax = done
        .and_then(|()| i64::try_from(round_half_away(sum, i128::from(POW10[12]))).ok())
        .filter(|&tax| amount.checked_add(tax).is_some());
    if tax.is_none() {
        entries.truncate(start);
    }
    tax
}

/// A line amount in minor units as the integer path takes it: a whole, non-negative number
/// of at most [`MAX_AMOUNT_MINOR`]; `None` for any other.
#[inline]
fn integer_amount(amount: Decimal) -> Option<i64> {
    if amount.scale() != 0 || amount.is_sign_negative() {
        return None;
    }
    i64::try_from(amount.mantissa())
        .ok()
        .filter(|&a| a <= MAX_AMOUNT_MINOR)
}

/// A fast rule's tax due on a line of `amount` minor units, the rate being `m ×
/// 10^-scale`: as the entry shows it (exact, normalized) and scaled to 10^-12, for the
/// line's sum. `None` when the scale is beyond the integer path's.
#[inline]
fn fast_due(m: i64, scale: u32, amount: i64) -> Option<(Decimal, i128)> {
    let due = i128::from(amount) * i128::from(m);
    // The rate at scale 12: at most 10^13 for a sound key (a rate of at most 10), checked
    // so that a forged key is refused rather than wrapped; the product with an amount of
    // at most 10^15 then fits an `i128` without a check.
    let m12 = m.checked_mul(*POW10.get(12usize.checked_sub(scale as usize)?)?)?;
    let scaled = i128::from(amount) * i128::from(m12);
    Some((normalized_parts(due, scale)?, scaled))
}

/// `n / d` rounded half away from zero (`d` positive).
#[inline]
fn round_half_away(n: i128, d: i128) -> i128 {
    if let (Ok(n), Ok(d)) = (u64::try_from(n), u64::try_from(d)) {
        // The usual case, a positive tax below 1.8 × 10^7 minor units: 64-bit division.
        let (q, r) = (n / d, n % d);
        return i128::from(q + u64::from(r >= d - r));
    }
    let (q, r) = (n / d, n % d);
    if r.abs() >= d - r.abs() {
        q + n.signum()
    } else {
        q
    }
}

/// The decimal `n × 10^-scale` without trailing zeros, as [`Decimal::normalize`] gives it;
/// `None` outside `Decimal`'s range.
#[inline]
fn normalized_parts(mut n: i128, mut scale: u32) -> Option<Decimal> {
    if n == 0 {
        return Some(Decimal::ZERO);
    }
    match u64::try_from(n.unsigned_abs()) {
        Ok(mut u) => {
            while scale > 0 && u % 10 == 0 {
                u /= 10;
                scale -= 1;
            }
            // The usual tax due fits an `i64`: built from it without the 96-bit checks.
            if let Ok(v) = i64::try_from(u) {
                return Decimal::try_new(if n < 0 { -v } else { v }, scale).ok();
            }
            n = if n < 0 { -i128::from(u) } else { i128::from(u) };
        }
        Err(_) => {
            while scale > 0 && n % 10 == 0 {
                n /= 10;
                scale -= 1;
            }
        }
    }
    Decimal::try_from_i128_with_scale(n, scale).ok()
}

/// Rounds a sale's tax once and shares it out (amounts excluding tax): the total is the
/// unrounded sum of every line's tax due, rounded half up; each line starts from its own
/// rounded tax, and the difference (a few minor units at most) goes, one unit each, to the
/// lines whose own rounding moved them furthest the other way (the earlier line on a tie).
/// Every line keeps `excluding + tax == including`.
fn round_invoice(lines: &mut [LineTax]) {
    let due: Vec<Decimal> = lines
        .iter()
        .map(|l| l.jurisdictions.iter().map(|j| j.tax_due).sum())
        .collect();
    let total = round_minor(due.iter().copied().sum());
    let mut taxes: Vec<Decimal> = due.iter().map(|d| round_minor(*d)).collect();
    let mut diff = total - taxes.iter().copied().sum::<Decimal>();
    // Lines by how far their rounding moved them down (due - rounded), most first.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| {
        (due[b] - taxes[b])
            .cmp(&(due[a] - taxes[a]))
            .then(a.cmp(&b))
    });
    let mut k = 0;
    while diff > Decimal::ZERO && !order.is_empty() {
        taxes[order[k % order.len()]] += Decimal::ONE;
        diff -= Decimal::ONE;
        k += 1;
    }
    let mut k = 0;
    while diff < Decimal::ZERO && !order.is_empty() {
        // From the other end: the lines rounded up the most give a unit back, never below
        // zero.
        let i = order[order.len() - 1 - (k % order.len())];
        if taxes[i] > Decimal::ZERO {
            taxes[i] -= Decimal::ONE;
            diff += Decimal::ONE;
        }
        k += 1;
        if k > 4 * order.len() {
            break;
        }
    }
    for (l, t) in lines.iter_mut().zip(taxes) {
        l.tax = normalized(t);
        l.amount_including_tax = normalized(l.amount_excluding_tax + t);
    }
}

/// How a line's rules with a per-sale threshold are decided.
enum SaleGroups<'a> {
    /// The first pass over line `line`: every threshold is taken as met (the rule for "at
    /// most" applies, the one for "above" does not), and each group a rule names is noted
    /// in `seen` with the line, for the second pass.
    First {
        /// The (line, group) pairs noted so far.
        seen: &'a mut Vec<(usize, u32)>,
        /// The line being taxed.
        line: usize,
    },
    /// The second pass: each group's total before tax, in major units.
    Totals(&'a [(u32, Decimal)]),
    /// No rule with a per-sale threshold is expected (delivery charges); one found is
    /// decided as in the first pass.
    None,
}

impl SaleGroups<'_> {
    fn first(seen: &mut Vec<(usize, u32)>, line: usize) -> SaleGroups<'_> {
        SaleGroups::First { seen, line }
    }

    /// Whether a rule of `group` whose threshold is `limit` applies (`above`: only above it).
    fn applies(&mut self, group: u32, limit: Decimal, above: bool) -> bool {
        match self {
            SaleGroups::First { seen, line } => {
                // The line's own pairs are the last ones noted.
                let noted = seen
                    .iter()
                    .rev()
                    .take_while(|(l, _)| l == line)
                    .any(|&(_, g)| g == group);
                if !noted {
                    seen.push((*line, group));
                }
                !above
            }
            SaleGroups::Totals(totals) => {
                let total = totals
                    .iter()
                    .find(|(g, _)| *g == group)
                    .map_or(Decimal::ZERO, |&(_, t)| t);
                (total > limit) == above
            }
            SaleGroups::None => !above,
        }
    }
}

/// Each per-sale threshold group's total: the amounts excluding tax of the lines whose
/// rules name it, in major units.
fn group_totals(
    lines: &[LineTax],
    grouped: &[(usize, u32)],
    currency: Currency,
) -> Vec<(u32, Decimal)> {
    let mut totals: Vec<(u32, Decimal)> = Vec::new();
    for &(i, group) in grouped {
        let amount = lines
            .get(i)
            .map_or(Decimal::ZERO, |l| l.amount_excluding_tax);
        match totals.iter_mut().find(|(g, _)| *g == group) {
            Some((_, t)) => *t += amount,
            None => totals.push((group, amount)),
        }
    }
    for (_, t) in totals.iter_mut() {
        *t = currency.to_major(*t);
    }
    totals
}

/// A calculation's coverage, at most `PARTIAL` when a line's product treatment is unknown.
fn with_taxability(coverage: crate::Coverage, taxability: Taxability) -> crate::Coverage {
    match taxability {
        Taxability::Known => coverage,
        Taxability::Unknown => coverage.min(crate::Coverage::Partial),
    }
}

/// What every line of one calculation shares.
#[derive(Clone, Copy)]
struct LineCtx<'a> {
    /// Whether a line may be taxed by [`Table::direct_line`]: `false` when
    /// [`Table::usual_sale`] already tried it on the sale's one line and it gave up.
    direct: bool,
    location: &'a Location,
    sale: &'a Sale,
    zero_reason: Option<ZeroReason>,
    reverse_charge: bool,
    /// The jurisdictions as sourcing chose them; `None`: the location's own set.
    sourced: Option<&'a [(JurisdictionId, Sourced)]>,
    sourcing: Sourcing,
    /// What the answer covers: the destination's, or the lesser of both places' when the
    /// origin's jurisdictions are in it.
    coverage: crate::Coverage,
}

/// For each jurisdiction of the goods lines (every line not in `delivery`), the share of the
/// goods' amount it taxes: the sum over goods lines of the largest taxable base of an entry
/// of that jurisdiction that owes tax (at most the line's amount), over the sum of the goods'
/// amounts. With no goods amount at all, a delivery charge stands alone and counts in full
/// (`ONE` for every jurisdiction).
fn goods_shares(lines: &[LineTax], delivery: &[usize]) -> Vec<(JurisdictionId, Decimal)> {
    let mut total = Decimal::ZERO;
    let mut taxed: Vec<(JurisdictionId, Decimal)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if delivery.contains(&i) {
            continue;
        }
        total += l.amount_excluding_tax;
        for e in &l.jurisdictions {
            if !taxed.iter().any(|(j, _)| *j == e.jurisdiction) {
                taxed.push((e.jurisdiction, Decimal::ZERO));
            }
        }
        for (j, sum) in taxed.iter_mut() {
            let base = l
                .jurisdictions
                .iter()
                .filter(|e| e.jurisdiction == *j && e.tax_due > Decimal::ZERO)
                .map(|e| e.taxable_base)
                .max()
                .unwrap_or(Decimal::ZERO)
                .min(l.amount_excluding_tax);
            *sum += base;
        }
    }
    if total.is_zero() {
        return Vec::new();
    }
    taxed.into_iter().map(|(j, sum)| (j, sum / total)).collect()
}

/// The amount excluding tax, in whole minor units, of a line whose amount including tax is
/// `incl_major` (major units) over `qty` units.
fn back_out(applied: &[Applied], incl_major: Decimal, qty: Decimal, currency: Currency) -> Decimal {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The holiday keys are searched by the place of each stored key read as one number;
    /// it must order and match exactly as the jurisdiction's place does, or a holiday would
    /// be missed (or found in the wrong state).
    #[test]
    fn a_stored_holiday_place_reads_as_the_jurisdictions_place() {
        let places: [(&[u8; 2], &[u8]); 6] = [
            (b"US", b"TX"),
            (b"US", b""),
            (b"US", b"T"),
            (b"CA", b"QC"),
            (b"US", b"TXABCD"),
            (b"ZZ", b"\xff\xff"),
        ];
        let mut keys = Vec::new();
        for (country, region) in places {
            let mut padded = [0u8; 6];
            padded[..region.len()].copy_from_slice(region);
            let key = crate::model::HolidayKey {
                country: *country,
                region: padded,
                from: 0,
                to: 0,
                holiday: 0,
            };
            let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&key).unwrap();
            let archived =
                rkyv::access::<crate::model::ArchivedHolidayKey, rkyv::rancor::Error>(&bytes)
                    .unwrap();
            let stored = stored_place_key(archived);
            assert_eq!(
                stored,
                place_key(*country, region),
                "{country:?} {region:?}"
            );
            keys.push((stored, (country, padded)));
        }
        // And the numbers order as (country, region) does.
        let mut by_number = keys.clone();
        by_number.sort_by_key(|k| k.0);
        let mut by_place = keys;
        by_place.sort_by_key(|k| k.1);
        assert_eq!(by_number, by_place);
    }
}
