//! The sale's vocabulary: what a calculation is asked ([`Sale`], its [`SaleLine`]s and
//! [`Customer`]) and what it answers ([`Calculation`], a [`LineTax`] per line, a
//! [`JurisdictionTax`] per jurisdiction rule, each with its [`Note`]), and the limits a
//! sale and a table's rules are held to.

use rust_decimal::Decimal;

use crate::date::Date;
use crate::kinds::{Rounding, Sourced, Sourcing};
use crate::lookup::{JurisdictionId, RuleId, TaxCodeId};
use crate::money::Currency;
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

/// An exemption that covers some jurisdictions, for example from an exemption certificate,
/// or a place where the seller does not collect (no registration there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exemption {
    /// ISO country of the jurisdictions covered.
    pub country: String,
    /// Region (state) covered: which of its jurisdictions, [`Exemption::covers`] says.
    pub region: String,
    /// What to say in the note's detail (a certificate id, say).
    pub reference: String,
    /// Which jurisdictions of the region it covers.
    pub covers: Covers,
}

/// Which jurisdictions of its region an [`Exemption`] covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Covers {
    /// Every jurisdiction of the region, local ones included (an exemption certificate).
    #[default]
    Region,
    /// Every jurisdiction of the region, and the country's own (Canada's GST, whose
    /// jurisdiction names no region): a seller not registered in the region. With an empty
    /// region, the country's own jurisdictions.
    RegionAndCountry,
    /// The region's local jurisdictions (county, city, district) except those whose
    /// [`crate::Jurisdiction::code`] is listed: a seller registered with the region and
    /// with the listed local (home-rule) jurisdictions only.
    LocalsExcept(Vec<String>),
}

impl Exemption {
    /// Whether the exemption covers a jurisdiction of `country` and `region` (empty for a
    /// country's own), at `level`, whose code is `code`.
    pub fn covers(&self, country: &str, region: &str, level: crate::Level, code: &str) -> bool {
        use crate::Level;
        if !self.country.eq_ignore_ascii_case(country) {
            return false;
        }
        let in_region = !self.region.is_empty() && self.region.eq_ignore_ascii_case(region);
        match &self.covers {
            Covers::Region => in_region,
            Covers::RegionAndCountry => in_region || (region.is_empty() && level == Level::Country),
            Covers::LocalsExcept(listed) => {
                in_region
                    && matches!(level, Level::County | Level::City | Level::District)
                    && !listed.iter().any(|c| c.eq_ignore_ascii_case(code))
            }
        }
    }
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
    /// A per-order fee on a retail delivery: `tax_due` and `fee` are the fee's amount (see
    /// [`crate::Table::apply_order_fees`]).
    PerOrderFee,
    /// A per-order fee the seller does not owe: its sales in the state are under the
    /// fee's small-seller threshold.
    SmallSeller,
    /// A per-order fee whose amount on the sale's day is not known: nothing is charged,
    /// and the answer's coverage is at most `PARTIAL`.
    FeeUnknown,
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
            Note::PerOrderFee => "PER_ORDER_FEE",
            Note::SmallSeller => "SMALL_SELLER",
            Note::FeeUnknown => "FEE_UNKNOWN",
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
    pub(super) fn empty(tax_code: TaxCodeId) -> LineTax {
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
    /// The input the table was built from that the answer used past its horizon, when the
    /// sale is dated after one (`coverage` is then at most `PARTIAL`); `None` when every
    /// input it used is in force on the sale's day. Written by the front door
    /// ([`crate::quote::Quoter`]), not by [`crate::Table::calculate_into`].
    pub stale: Option<Stale>,
}

/// An input of the table that an answer used after its horizon (the `STALE_TABLE` note):
/// the rates may have changed since, and the table cannot know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The input's index in the table's manifest ([`crate::model::TableData::manifest`]).
    pub source: u32,
    /// The last day the input is known to hold what is in force.
    pub horizon: crate::Date,
}

impl Stale {
    /// The note's name, as each front writes it.
    pub const NOTE: &'static str = "STALE_TABLE";

    /// The note in words: `STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv (period 2026-01-01) is in
    /// force to 2026-03-31; rates may have changed since`.
    pub fn describe<D>(&self, table: &crate::Table<D>) -> String {
        let Some(e) = table.data().manifest.get(self.source as usize) else {
            return format!("{}: an input is in force to {}", Stale::NOTE, self.horizon);
        };
        let (kind, name) = (e.kind.as_str(), e.name.as_str());
        let mut notes = Vec::new();
        if !e.period.is_empty() {
            notes.push(format!("period {}", e.period.as_str()));
        }
        // A curated file's rules over a published input's rates name that input.
        if kind == "curated" && !e.publication.is_empty() {
            notes.push(format!("over the rates of {}", e.publication.as_str()));
        }
        let period = match notes.is_empty() {
            true => String::new(),
            false => format!(" ({})", notes.join(", ")),
        };
        format!(
            "{}: {kind} {name}{period} is in force to {}; rates may have changed since",
            Stale::NOTE,
            self.horizon
        )
    }
}

impl Default for Calculation {
    /// A calculation of nothing yet, in USD, of no table: a buffer for
    /// [`crate::Table::calculate_into`] or [`crate::quote::Quoter::swap_answer`] to fill.
    fn default() -> Calculation {
        Calculation::empty([0; 32], &Sale::default())
    }
}

impl Default for Sale {
    /// A sale of no line, in USD, on day 0 (1970-01-01), to a buyer of no exemption, taxed
    /// by the line: what a front fills sale after sale.
    fn default() -> Sale {
        Sale {
            currency: Currency::USD,
            tax_included: false,
            customer: Customer::default(),
            automatic_tax: AutomaticTax::Auto,
            date: Date(0),
            origin_country: None,
            rounding: Rounding::Line,
            lines: Vec::new(),
        }
    }
}

impl Calculation {
    /// A calculation of nothing yet, for `sale`, to be filled by [`crate::Table::calculate_into`].
    pub(crate) fn empty(table_hash: [u8; 32], sale: &Sale) -> Calculation {
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
            stale: None,
        }
    }

    /// Makes the calculation one of `sale` with nothing in it yet, keeping its vectors.
    pub(super) fn reset(&mut self, table_hash: [u8; 32], sale: &Sale) {
        let lines = std::mem::take(&mut self.lines);
        *self = Calculation::empty(table_hash, sale);
        self.lines = lines;
    }

    /// No lines and zero totals, its vectors kept: what a refused sale of a batch leaves.
    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.total_tax = Decimal::ZERO;
        self.total_excluding_tax = Decimal::ZERO;
        self.total_including_tax = Decimal::ZERO;
        self.zero_reason = None;
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
