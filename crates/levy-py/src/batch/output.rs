//! The output of `calculate_batch`: one row per input row (the sale's totals, what the
//! answer covers, and an `error` for a row that could not be calculated), and optionally a
//! long table with one row per jurisdiction of each sale. Money is exact: integers in minor
//! units, or decimals in major units, the unit of the input's `amount`; rates and unrounded
//! amounts are decimals with 18 places. Names from small vocabularies (coverage, level, ...)
//! are dictionary-encoded, so a row costs a byte for each.

use std::sync::Arc;

use arrow_array::builder::{
    Decimal128Builder, Int32Builder, Int64Builder, Int8Builder, StringBuilder,
};
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use levy_core::{
    AnyTable, Calculation, Coverage, Currency, Decimal, JurisdictionId, Level, Location, Note,
    Precision, Rounding, Sourced, Sourcing, TaxType, ZeroReason,
};
use rust_decimal::RoundingStrategy;

use super::input::Unit;

/// Decimal places of rates and unrounded amounts.
pub const FINE_SCALE: i8 = 18;

/// Coverage names, in the order of their dictionary keys (as every vocabulary below).
pub const COVERAGE: [&str; 3] = ["STATE_ONLY", "PARTIAL", "FULL"];
/// Precision names.
pub const PRECISION: [&str; 6] = [
    "STREET",
    "POSTAL_PLUS",
    "POSTAL",
    "PROVINCE",
    "COUNTRY",
    "APPROXIMATED",
];
/// Sourcing rule names.
pub const SOURCING: [&str; 4] = [
    "DESTINATION",
    "ORIGIN",
    "MODIFIED_ORIGIN",
    "ORIGIN_WITH_USE_TAX",
];
/// Rounding names.
pub const ROUNDING: [&str; 2] = ["LINE", "INVOICE"];
/// Why nothing is due.
pub const ZERO_REASON: [&str; 3] = ["CUSTOMER_EXEMPT", "AUTOMATIC_TAX_DISABLED", "ZERO_RATE"];
/// Jurisdiction levels.
pub const LEVEL: [&str; 6] = ["COUNTRY", "STATE", "PROVINCE", "COUNTY", "CITY", "DISTRICT"];
/// Tax types.
pub const TAX_TYPE: [&str; 4] = ["SALES", "USE", "VAT", "GST"];
/// What an entry's numbers mean.
pub const NOTE: [&str; 13] = [
    "RATE_FRAC",
    "PROGRESSIVE_RATE",
    "THRESHOLD",
    "BELOW_THRESHOLD",
    "HOLIDAY",
    "CUSTOMER_EXEMPT",
    "EXEMPTION_CERTIFICATE",
    "AUTOMATIC_TAX_DISABLED",
    "REVERSE_CHARGE",
    "ZERO_RATE",
    "PER_ORDER_FEE",
    "SMALL_SELLER",
    "FEE_UNKNOWN",
];
/// The codes of the `error_code` column: the front door's kinds, then `calculate_batch`'s
/// own.
pub fn error_codes() -> Vec<&'static str> {
    levy_core::QuoteErrorKind::ALL
        .iter()
        .map(|k| k.name())
        .chain([
            super::input::DATE_MISSING,
            super::input::COVERAGE_NOT_FULL,
            super::input::INTERNAL_ERROR,
        ])
        .collect()
}

/// Whose address brought a jurisdiction in.
pub const SOURCED: [&str; 2] = ["DESTINATION", "ORIGIN"];

fn coverage_key(c: Coverage) -> i8 {
    c as u8 as i8
}
fn precision_key(p: Precision) -> i8 {
    match p {
        Precision::Street => 0,
        Precision::PostalPlus => 1,
        Precision::Postal => 2,
        Precision::Province => 3,
        Precision::Country => 4,
        Precision::Approximated => 5,
    }
}
fn sourcing_key(s: Sourcing) -> i8 {
    s as u8 as i8
}
fn rounding_key(r: Rounding) -> i8 {
    match r {
        Rounding::Line => 0,
        Rounding::Invoice => 1,
    }
}
fn zero_key(z: ZeroReason) -> i8 {
    match z {
        ZeroReason::CustomerExempt => 0,
        ZeroReason::AutomaticTaxDisabled => 1,
        ZeroReason::ZeroRate => 2,
    }
}
fn level_key(l: Level) -> i8 {
    l as u8 as i8
}
fn tax_type_key(t: TaxType) -> i8 {
    t as u8 as i8
}
fn note_key(n: Note) -> i8 {
    match n {
        Note::RateFrac => 0,
        Note::ProgressiveRate => 1,
        Note::Threshold => 2,
        Note::BelowThreshold => 3,
        Note::Holiday => 4,
        Note::CustomerExempt => 5,
        Note::ExemptionCertificate => 6,
        Note::AutomaticTaxDisabled => 7,
        Note::ReverseCharge => 8,
        Note::ZeroRate => 9,
        Note::PerOrderFee => 10,
        Note::SmallSeller => 11,
        Note::FeeUnknown => 12,
    }
}
fn sourced_key(s: Sourced) -> i8 {
    match s {
        Sourced::Destination => 0,
        Sourced::Origin => 1,
    }
}

fn dict8() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}
fn dict32() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}
fn fine() -> DataType {
    DataType::Decimal128(38, FINE_SCALE)
}

/// How money is written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Money {
    /// Int64 minor units.
    Minor,
    /// Decimal128(38, scale) major units.
    Major(u32),
}

impl Money {
    /// The money of an input whose amounts are in `unit`: integers stay minor units;
    /// decimals stay major units, with at least two places.
    pub fn of(unit: Unit) -> Money {
        match unit {
            Unit::Minor => Money::Minor,
            Unit::Major { scale } => Money::Major(scale.clamp(2, 38)),
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Money::Minor => DataType::Int64,
            Money::Major(s) => DataType::Decimal128(38, s as i8),
        }
    }
}

/// The schema of the sales output.
pub fn sales_schema(money: Money, keep: &[Field]) -> SchemaRef {
    let mut fields: Vec<Field> = keep.to_vec();
    fields.extend([
        Field::new("tax", money.data_type(), true),
        Field::new("amount_excluding_tax", money.data_type(), true),
        Field::new("amount_including_tax", money.data_type(), true),
        Field::new("effective_rate", fine(), true),
        Field::new("coverage", dict8(), true),
        Field::new("precision", dict8(), true),
        Field::new("sourcing", dict8(), true),
        Field::new("rounding", dict8(), true),
        Field::new("zero_reason", dict8(), true),
        Field::new("table_hash", dict8(), false),
        Field::new("error", DataType::Utf8, true),
        Field::new("error_code", dict8(), true),
    ]);
    Arc::new(Schema::new(fields))
}

/// The schema of the jurisdictions output.
pub fn jurisdictions_schema(keep: &[Field]) -> SchemaRef {
    let mut fields = vec![Field::new("row", DataType::Int64, false)];
    fields.extend(keep.iter().cloned());
    fields.extend([
        Field::new("jurisdiction_code", dict32(), false),
        Field::new("jurisdiction_name", dict32(), false),
        Field::new("level", dict8(), false),
        Field::new("tax_type", dict8(), false),
        Field::new("rate", fine(), false),
        Field::new("taxable_base", fine(), false),
        Field::new("tax", fine(), false),
        Field::new("fee", fine(), false),
        Field::new("note", dict8(), false),
        Field::new("sourced_from", dict8(), false),
    ]);
    Arc::new(Schema::new(fields))
}

fn values(words: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(words.iter()))
}

/// Dictionary values shared by every batch of one call.
pub struct Vocab {
    coverage: ArrayRef,
    precision: ArrayRef,
    sourcing: ArrayRef,
    rounding: ArrayRef,
    zero_reason: ArrayRef,
    level: ArrayRef,
    tax_type: ArrayRef,
    note: ArrayRef,
    sourced: ArrayRef,
    hash: ArrayRef,
    /// The codes of `error_code`.
    error_code: ArrayRef,
    /// Every jurisdiction's code and name, by id.
    codes: ArrayRef,
    names: ArrayRef,
    /// Every jurisdiction's level and tax type keys, by id: read here, not from each
    /// jurisdiction's record in the table, entry after entry.
    levels: Vec<(i8, i8)>,
}

impl Vocab {
    /// The values for `table` (its hash, and its jurisdictions when `jurisdictions`).
    pub fn new(table: &AnyTable, jurisdictions: bool) -> Vocab {
        let (mut codes, mut names, mut levels) = (Vec::new(), Vec::new(), Vec::new());
        if jurisdictions {
            for id in 0..table.jurisdiction_count() {
                let j = table.jurisdiction(JurisdictionId(id as u32));
                codes.push(j.map(|j| j.code()).unwrap_or(""));
                names.push(j.map(|j| j.name()).unwrap_or(""));
                levels.push(
                    j.map(|j| (level_key(j.level()), tax_type_key(j.tax_type())))
                        .unwrap_or((0, 0)),
                );
            }
        }
        Vocab {
            coverage: values(&COVERAGE),
            precision: values(&PRECISION),
            sourcing: values(&SOURCING),
            rounding: values(&ROUNDING),
            zero_reason: values(&ZERO_REASON),
            level: values(&LEVEL),
            tax_type: values(&TAX_TYPE),
            note: values(&NOTE),
            sourced: values(&SOURCED),
            hash: values(&[table.header().hash_hex().as_str()]),
            error_code: values(&error_codes()),
            codes: values(&codes),
            names: values(&names),
            levels,
        }
    }
}

/// Powers of ten that fit an `i128`, `POW10[n] = 10^n`.
const POW10: [i128; 39] = {
    let mut p = [1i128; 39];
    let mut n = 1;
    while n < 39 {
        p[n] = p[n - 1] * 10;
        n += 1;
    }
    p
};

#[inline]
fn pow10(n: u32) -> Option<i128> {
    POW10.get(n as usize).copied()
}

/// `d` as an integer of `scale` decimal places, exactly: `None` when `d` has digits
/// beyond `scale` or does not fit.
#[inline]
fn exact(d: Decimal, scale: u32) -> Option<i128> {
    let s = d.scale();
    let m = d.mantissa();
    if s == scale {
        Some(m)
    } else if s < scale {
        m.checked_mul(pow10(scale - s)?)
    } else {
        let div = pow10(s - scale)?;
        (m % div == 0).then_some(m / div)
    }
}

/// `d` rounded half away from zero to `scale` places, as an integer.
#[inline]
fn rounded(d: Decimal, scale: u32) -> Option<i128> {
    if d.scale() <= scale {
        exact(d, scale)
    } else {
        exact(
            d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero),
            scale,
        )
    }
}

/// `num / den` rounded half away from zero to 18 places, as an integer, computed exactly
/// (no intermediate rounding); `None` for a zero `den` or numbers too large for the
/// integer path, which [`rounded`] over a `Decimal` quotient then answers.
#[inline]
fn ratio(num: Decimal, den: Decimal) -> Option<i128> {
    let (n, d) = (num.mantissa(), den.mantissa());
    if d == 0 {
        return None;
    }
    // num / den = (n / 10^sn) / (d / 10^sd) = n * 10^(sd - sn) / d.
    let shift = FINE_SCALE as i64 + den.scale() as i64 - num.scale() as i64;
    let (n, d) = if shift >= 0 {
        (n.checked_mul(pow10(shift as u32)?)?, d)
    } else {
        (n, d.checked_mul(pow10((-shift) as u32)?)?)
    };
    let (q, r) = (n / d, n % d);
    let up = r.unsigned_abs().checked_mul(2)? >= d.unsigned_abs();
    Some(if up { q + (n.signum() * d.signum()) } else { q })
}

/// The effective rate (tax / amount excluding tax, zero for a zero amount) at 18 places.
#[inline]
fn effective_rate(calc: &Calculation) -> Option<i128> {
    if calc.total_excluding_tax.is_zero() {
        return Some(0);
    }
    ratio(calc.total_tax, calc.total_excluding_tax)
        .or_else(|| rounded(calc.effective_rate(), FINE_SCALE as u32))
}

/// Why a calculated row could not be written (the row becomes an error).
fn too_fine(what: &str, currency: Currency, money: Money) -> String {
    match money {
        Money::Major(s) => format!(
            "{what} needs {} decimal places in {} and the amount column has {s}: cast \
             \"amount\" to a decimal with more places",
            currency.minor_units(),
            currency.code()
        ),
        Money::Minor => format!("{what} does not fit a 64-bit integer"),
    }
}

enum MoneyBuilder {
    Minor(Int64Builder),
    Major(Decimal128Builder),
}

impl MoneyBuilder {
    fn new(money: Money, n: usize) -> MoneyBuilder {
        match money {
            Money::Minor => MoneyBuilder::Minor(Int64Builder::with_capacity(n)),
            Money::Major(s) => MoneyBuilder::Major(
                Decimal128Builder::with_capacity(n)
                    .with_data_type(DataType::Decimal128(38, s as i8)),
            ),
        }
    }
    fn finish(&mut self) -> ArrayRef {
        match self {
            MoneyBuilder::Minor(b) => Arc::new(b.finish()),
            MoneyBuilder::Major(b) => Arc::new(b.finish()),
        }
    }
}

/// A money amount (minor units, whole) in the output's unit.
#[inline]
fn money_value(minor: Decimal, currency: Currency, money: Money) -> Option<i128> {
    match money {
        Money::Minor => exact(minor, 0).filter(|v| i64::try_from(*v).is_ok()),
        Money::Major(s) => {
            let digits = currency.minor_units();
            if digits > s {
                return None;
            }
            exact(minor, s - digits)
        }
    }
}

/// An unrounded amount in minor units, in the output's unit, at 18 places.
#[inline]
fn fine_money(minor: Decimal, currency: Currency, money: Money) -> Option<i128> {
    match money {
        Money::Minor => rounded(minor, FINE_SCALE as u32),
        Money::Major(_) => rounded(currency.to_major(minor), FINE_SCALE as u32),
    }
}

/// The rows of one chunk, as they are calculated.
pub struct SalesOut {
    money: Money,
    tax: MoneyBuilder,
    excluding: MoneyBuilder,
    including: MoneyBuilder,
    rate: Decimal128Builder,
    coverage: Int8Builder,
    precision: Int8Builder,
    sourcing: Int8Builder,
    rounding: Int8Builder,
    zero_reason: Int8Builder,
    error: StringBuilder,
    error_code: Int8Builder,
    rows: usize,
    /// Every coverage short of `FULL` is an error.
    strict: bool,
}

/// The jurisdiction rows of one chunk.
pub struct JurisdictionsOut {
    money: Money,
    /// Row in the whole input.
    row: Int64Builder,
    /// Row in the chunk (for the kept columns).
    pub local: Vec<u32>,
    jurisdiction: Int32Builder,
    level: Int8Builder,
    tax_type: Int8Builder,
    rate: Decimal128Builder,
    base: Decimal128Builder,
    tax: Decimal128Builder,
    fee: Decimal128Builder,
    note: Int8Builder,
    sourced: Int8Builder,
}

fn fine_builder(n: usize) -> Decimal128Builder {
    Decimal128Builder::with_capacity(n).with_data_type(fine())
}

/// One jurisdiction entry, converted: what a row of the jurisdictions output holds.
pub struct Entry {
    jurisdiction: i32,
    level: i8,
    tax_type: i8,
    rate: i128,
    base: i128,
    tax: i128,
    fee: i128,
    note: i8,
    sourced: i8,
}

impl JurisdictionsOut {
    /// Empty, for about `n` entries.
    pub fn new(money: Money, n: usize) -> JurisdictionsOut {
        JurisdictionsOut {
            money,
            row: Int64Builder::with_capacity(n),
            local: Vec::with_capacity(n),
            jurisdiction: Int32Builder::with_capacity(n),
            level: Int8Builder::with_capacity(n),
            tax_type: Int8Builder::with_capacity(n),
            rate: fine_builder(n),
            base: fine_builder(n),
            tax: fine_builder(n),
            fee: fine_builder(n),
            note: Int8Builder::with_capacity(n),
            sourced: Int8Builder::with_capacity(n),
        }
    }

    fn entries(
        &self,
        vocab: &Vocab,
        calc: &Calculation,
        out: &mut Vec<Entry>,
    ) -> Result<(), String> {
        let c = calc.currency;
        let bad = || too_fine("a jurisdiction's amount", c, self.money);
        for line in &calc.lines {
            for j in &line.jurisdictions {
                let id = j.jurisdiction.0 as usize;
                let (level, tax_type) = vocab.levels.get(id).copied().unwrap_or((0, 0));
                out.push(Entry {
                    jurisdiction: i32::try_from(j.jurisdiction.0).map_err(|_| bad())?,
                    level,
                    tax_type,
                    rate: rounded(j.rate, FINE_SCALE as u32).ok_or_else(bad)?,
                    base: fine_money(j.taxable_base, c, self.money).ok_or_else(bad)?,
                    tax: fine_money(j.tax_due, c, self.money).ok_or_else(bad)?,
                    fee: fine_money(j.fee, c, self.money).ok_or_else(bad)?,
                    note: note_key(j.note),
                    sourced: sourced_key(j.sourced),
                });
            }
        }
        Ok(())
    }

    fn push(&mut self, row: i64, local: u32, e: &Entry) {
        self.row.append_value(row);
        self.local.push(local);
        self.jurisdiction.append_value(e.jurisdiction);
        self.level.append_value(e.level);
        self.tax_type.append_value(e.tax_type);
        self.rate.append_value(e.rate);
        self.base.append_value(e.base);
        self.tax.append_value(e.tax);
        self.fee.append_value(e.fee);
        self.note.append_value(e.note);
        self.sourced.append_value(e.sourced);
    }

    /// The batch, with `kept` (the kept columns of the chunk's rows, taken by `local`).
    pub fn finish(
        &mut self,
        schema: &SchemaRef,
        vocab: &Vocab,
        kept: Vec<ArrayRef>,
    ) -> Result<RecordBatch, String> {
        let keys = self.jurisdiction.finish();
        let mut columns: Vec<ArrayRef> = vec![Arc::new(self.row.finish())];
        columns.extend(kept);
        columns.extend([
            dict32_array(keys.clone(), &vocab.codes)?,
            dict32_array(keys, &vocab.names)?,
            dict8_array(self.level.finish(), &vocab.level)?,
            dict8_array(self.tax_type.finish(), &vocab.tax_type)?,
            Arc::new(self.rate.finish()) as ArrayRef,
            Arc::new(self.base.finish()),
            Arc::new(self.tax.finish()),
            Arc::new(self.fee.finish()),
            dict8_array(self.note.finish(), &vocab.note)?,
            dict8_array(self.sourced.finish(), &vocab.sourced)?,
        ]);
        RecordBatch::try_new(Arc::clone(schema), columns).map_err(|e| e.to_string())
    }
}

fn dict8_array(keys: arrow_array::Int8Array, values: &ArrayRef) -> Result<ArrayRef, String> {
    DictionaryArray::<Int8Type>::try_new(keys, Arc::clone(values))
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| e.to_string())
}

fn dict32_array(keys: arrow_array::Int32Array, values: &ArrayRef) -> Result<ArrayRef, String> {
    DictionaryArray::<Int32Type>::try_new(keys, Arc::clone(values))
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| e.to_string())
}

/// What one calculated row writes.
struct Totals {
    tax: i128,
    excluding: i128,
    including: i128,
    rate: i128,
}

impl SalesOut {
    /// Empty, for `n` rows; with `strict`, a row whose coverage is short of `FULL` is
    /// written as an error.
    pub fn new(money: Money, n: usize, strict: bool) -> SalesOut {
        SalesOut {
            money,
            tax: MoneyBuilder::new(money, n),
            excluding: MoneyBuilder::new(money, n),
            including: MoneyBuilder::new(money, n),
            rate: fine_builder(n),
            coverage: Int8Builder::with_capacity(n),
            precision: Int8Builder::with_capacity(n),
            sourcing: Int8Builder::with_capacity(n),
            rounding: Int8Builder::with_capacity(n),
            zero_reason: Int8Builder::with_capacity(n),
            error: StringBuilder::with_capacity(n, 0),
            error_code: Int8Builder::with_capacity(n),
            rows: 0,
            strict,
        }
    }

    fn totals(&self, calc: &Calculation) -> Result<Totals, String> {
        let (c, m) = (calc.currency, self.money);
        Ok(Totals {
            tax: money_value(calc.total_tax, c, m).ok_or_else(|| too_fine("the tax", c, m))?,
            excluding: money_value(calc.total_excluding_tax, c, m)
                .ok_or_else(|| too_fine("the amount excluding tax", c, m))?,
            including: money_value(calc.total_including_tax, c, m)
                .ok_or_else(|| too_fine("the amount including tax", c, m))?,
            rate: effective_rate(calc)
                .ok_or_else(|| "the effective rate does not fit".to_string())?,
        })
    }

    /// Writes a calculated row (and its jurisdictions into `jur`, numbered `row`, `local`);
    /// a `refund` as the negation of `calc` (every amount, the rates as they are); a row
    /// whose numbers do not fit the output, or with `strict` whose coverage is short of
    /// `FULL`, is written as an error instead.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        vocab: &Vocab,
        location: &Location,
        calc: &Calculation,
        refund: bool,
        jur: Option<(&mut JurisdictionsOut, i64, u32)>,
        entries: &mut Vec<Entry>,
    ) {
        if self.strict && calc.coverage != Coverage::Full {
            let name = COVERAGE[coverage_key(calc.coverage) as usize];
            return self.push_error(
                super::input::COVERAGE_NOT_FULL,
                &format!(
                    "coverage {name}: the table does not hold every local tax of this place \
                     on this day, so the tax may be short (strict=True refuses it)"
                ),
            );
        }
        let invalid = levy_core::QuoteErrorKind::InvalidAmount.name();
        let mut totals = match self.totals(calc) {
            Ok(t) => t,
            Err(e) => return self.push_error(invalid, &e),
        };
        if let Some((jur, _, _)) = &jur {
            entries.clear();
            if let Err(e) = jur.entries(vocab, calc, entries) {
                return self.push_error(invalid, &e);
            }
            if refund {
                for e in entries.iter_mut() {
                    (e.base, e.tax, e.fee) = (-e.base, -e.tax, -e.fee);
                }
            }
        }
        if refund {
            totals.tax = -totals.tax;
            totals.excluding = -totals.excluding;
            totals.including = -totals.including;
        }
        if let Some((jur, row, local)) = jur {
            for e in entries.iter() {
                jur.push(row, local, e);
            }
        }
        let put = |b: &mut MoneyBuilder, v: i128| match b {
            MoneyBuilder::Minor(b) => b.append_value(v as i64),
            MoneyBuilder::Major(b) => b.append_value(v),
        };
        put(&mut self.tax, totals.tax);
        put(&mut self.excluding, totals.excluding);
        put(&mut self.including, totals.including);
        self.rate.append_value(totals.rate);
        self.coverage.append_value(coverage_key(calc.coverage));
        self.precision
            .append_value(precision_key(location.precision));
        self.sourcing.append_value(sourcing_key(calc.sourcing));
        self.rounding.append_value(rounding_key(calc.rounding));
        self.zero_reason
            .append_option(calc.zero_reason.map(zero_key));
        self.error.append_null();
        self.error_code.append_null();
        self.rows += 1;
    }

    /// Writes a row that could not be calculated: why (`message`), and its stable `code`
    /// (one of [`error_codes`]).
    pub fn push_error(&mut self, code: &str, message: &str) {
        for b in [&mut self.tax, &mut self.excluding, &mut self.including] {
            match b {
                MoneyBuilder::Minor(b) => b.append_null(),
                MoneyBuilder::Major(b) => b.append_null(),
            }
        }
        self.rate.append_null();
        for b in [
            &mut self.coverage,
            &mut self.precision,
            &mut self.sourcing,
            &mut self.rounding,
            &mut self.zero_reason,
        ] {
            b.append_null();
        }
        self.error.append_value(message);
        // A code outside the vocabulary would be a bug of levy's: INTERNAL_ERROR, last.
        let key = self.codes_key(code);
        self.error_code.append_value(key);
        self.rows += 1;
    }

    fn codes_key(&self, code: &str) -> i8 {
        let codes = levy_core::QuoteErrorKind::ALL;
        codes
            .iter()
            .position(|k| k.name() == code)
            .or_else(|| match code {
                super::input::DATE_MISSING => Some(codes.len()),
                super::input::COVERAGE_NOT_FULL => Some(codes.len() + 1),
                _ => None,
            })
            .unwrap_or(codes.len() + 2) as i8
    }

    /// The batch, after the kept columns.
    pub fn finish(
        &mut self,
        schema: &SchemaRef,
        vocab: &Vocab,
        kept: Vec<ArrayRef>,
    ) -> Result<RecordBatch, String> {
        let hash_keys = arrow_array::Int8Array::from(vec![0i8; self.rows]);
        let mut columns = kept;
        columns.extend([
            self.tax.finish(),
            self.excluding.finish(),
            self.including.finish(),
            Arc::new(self.rate.finish()) as ArrayRef,
            dict8_array(self.coverage.finish(), &vocab.coverage)?,
            dict8_array(self.precision.finish(), &vocab.precision)?,
            dict8_array(self.sourcing.finish(), &vocab.sourcing)?,
            dict8_array(self.rounding.finish(), &vocab.rounding)?,
            dict8_array(self.zero_reason.finish(), &vocab.zero_reason)?,
            dict8_array(hash_keys, &vocab.hash)?,
            Arc::new(self.error.finish()),
            dict8_array(self.error_code.finish(), &vocab.error_code)?,
        ]);
        RecordBatch::try_new(Arc::clone(schema), columns).map_err(|e| e.to_string())
    }
}

/// Scratch for a row's jurisdiction entries.
pub type Entries = Vec<Entry>;
