//! The input columns of `calculate_batch`: which names are read, which Arrow types each
//! accepts, and their values row by row in one layout whatever the producer wrote (string,
//! large string or string view; any integer width; any decimal; dates, timestamps or text).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Decimal128Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int64Array, LargeStringArray,
    RecordBatch, StringArray, StringViewArray,
};
use arrow_schema::{DataType, Schema, TimeUnit};
use levy_core::{Currency, Date, Decimal};

use levy_core::QuoteErrorKind;

use crate::sale::{self, Place, Product, Terms};

/// Why a row could not be calculated: its stable code (a [`QuoteErrorKind`]'s name, or one
/// of `calculate_batch`'s own, [`DATE_MISSING`], [`COVERAGE_NOT_FULL`], [`INTERNAL_ERROR`])
/// and what is wrong.
#[derive(Clone, Debug)]
pub struct RowError {
    /// The stable code (`ZIP_STATE_MISMATCH`, ...), written in the `error_code` column.
    pub code: &'static str,
    /// What is wrong, written in the `error` column.
    pub message: String,
}

/// A row without a day (a null in `date`, or no `date` column) and no `default_date`.
pub const DATE_MISSING: &str = "DATE_MISSING";
/// With `strict=True`, a row whose coverage is short of `FULL`.
pub const COVERAGE_NOT_FULL: &str = "COVERAGE_NOT_FULL";
/// A bug in levy, caught in its row.
pub const INTERNAL_ERROR: &str = "INTERNAL_ERROR";

impl RowError {
    /// An error of `kind` with `message`.
    pub fn new(kind: QuoteErrorKind, message: impl Into<String>) -> RowError {
        RowError {
            code: kind.name(),
            message: message.into(),
        }
    }

    /// A function giving errors of `kind`, for `map_err`.
    pub fn of(kind: QuoteErrorKind) -> impl Fn(String) -> RowError {
        move |message| RowError::new(kind, message)
    }
}

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Amount,
    Integer,
    Text,
    Postal,
    Day,
    Flag,
}

/// Every column `calculate_batch` reads, named as `levy calc`'s flags are (with
/// underscores); the interface's names of the same fields are aliases ([`ALIASES`]). Any
/// other column is ignored (or passed through with `keep`).
const COLUMNS: [(&str, Kind); 24] = [
    ("amount", Kind::Amount),
    ("quantity", Kind::Integer),
    ("category", Kind::Text),
    ("tax_code", Kind::Text),
    ("postal_code", Kind::Postal),
    ("province", Kind::Text),
    ("country", Kind::Text),
    ("city", Kind::Text),
    ("street", Kind::Text),
    ("date", Kind::Day),
    ("currency", Kind::Text),
    ("tax_included", Kind::Flag),
    ("exempt", Kind::Flag),
    ("rounding", Kind::Text),
    ("origin_postal_code", Kind::Postal),
    ("origin_province", Kind::Text),
    ("origin_country", Kind::Text),
    ("origin_city", Kind::Text),
    ("origin_street", Kind::Text),
    ("ip", Kind::Text),
    ("ip_mode", Kind::Text),
    ("delivery", Kind::Flag),
    ("seller_sales", Kind::Text),
    ("exchange_rate", Kind::Text),
];

/// The interface's names of the fields `calculate_batch` reads (a line item's
/// `product_category`, an address's `address_postal_code`, ...), accepted for the column
/// they name: a table exported from the interface's requests reads as it is, and its
/// `product_category` is never ignored.
const ALIASES: [(&str, &str); 9] = [
    ("product_category", "category"),
    ("product_tax_code", "tax_code"),
    ("address_line_1", "street"),
    ("address_city", "city"),
    ("address_province", "province"),
    ("address_postal_code", "postal_code"),
    ("address_country", "country"),
    ("tax_included_in_amount", "tax_included"),
    ("ip_address", "ip"),
];

/// The index in `schema` of column `name` or of its alias; both is an error.
fn index_of(schema: &Schema, name: &str) -> Result<Option<usize>, SchemaError> {
    let own = schema.index_of(name).ok();
    let alias = ALIASES.iter().find(|(_, n)| *n == name).map(|(a, _)| *a);
    match (own, alias.and_then(|a| schema.index_of(a).ok())) {
        (Some(_), Some(_)) => Err(SchemaError::Value(format!(
            "both {name:?} and {:?} columns: they name one field, give one",
            alias.unwrap_or("")
        ))),
        (Some(i), None) | (None, Some(i)) => Ok(Some(i)),
        (None, None) => Ok(None),
    }
}

/// `name` with case, spaces and hyphens folded (`Postal-Code` reads `postal_code`).
fn fold(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            ' ' | '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The edit distance (insertions, deletions, substitutions and swaps of neighbours)
/// between `a` and `b`.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 {
                j
            } else if j == 0 {
                i
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1)
                    .min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

/// Names of other fields, one edit from a name `calculate_batch` reads, that are never taken
/// for a misspelling of it: the address's second line (the interface's `address_line_2`,
/// which taxes nothing), and the county (which levy finds from the address).
const DISTINCT: [&str; 4] = ["address_line_2", "street2", "street_2", "county"];

/// The column `calculate_batch` reads (or its alias) that the unread column `name` looks
/// like a misspelling of: the same name but for case, spaces, hyphens, dots and
/// underscores (`Postal_Code`, `postalcode`); or a few edits from it (a letter added,
/// dropped or changed, two neighbours swapped): one for a known name of five to seven
/// letters (`amout`), two for a longer one (`postal_cod`, `product_categroy`). Short names
/// (`ip`, `date`, `city`) are matched by case and spelling only, so that an `id` or a
/// `rate` column is not taken for one, nor a `count` for `amount`; [`DISTINCT`] names are
/// never matched.
pub fn near_miss(name: &str) -> Option<&'static str> {
    let folded = fold(name);
    if DISTINCT.contains(&folded.as_str()) {
        return None;
    }
    let bare: String = folded.chars().filter(|c| *c != '_').collect();
    let mut best: Option<(usize, &'static str)> = None;
    for known in column_names() {
        let (d, most) = if known.replace('_', "") == bare {
            (0, 0)
        } else {
            match known.chars().count() {
                0..=4 => continue,
                5..=7 => (distance(&folded, known), 1),
                _ => (distance(&folded, known), 2),
            }
        };
        if d <= most && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, known));
        }
    }
    best.map(|(_, k)| k)
}

/// The names of the columns `calculate_batch` reads.
pub fn column_names() -> impl Iterator<Item = &'static str> {
    COLUMNS
        .iter()
        .map(|(n, _)| *n)
        .chain(ALIASES.iter().map(|(a, _)| *a))
}

/// How amounts are written: the unit results come back in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Integers: minor units (cents).
    Minor,
    /// Decimals of this scale: major units (dollars).
    Major {
        /// Decimal places.
        scale: u32,
    },
}

/// Why the input cannot be read at all (as opposed to a bad row).
#[derive(Debug)]
pub enum SchemaError {
    /// A wrong type (Python `TypeError`).
    Type(String),
    /// A missing or conflicting column (Python `ValueError`).
    Value(String),
}

/// What the schema says, checked once for the whole input.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Index of each of [`COLUMNS`] in the input, when present.
    index: [Option<usize>; COLUMNS.len()],
    /// The unit of `amount`.
    pub unit: Unit,
}

fn describe(t: &DataType) -> String {
    format!("{t}")
}

fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

fn is_int(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Null)
}

fn accepts(kind: Kind, t: &DataType) -> bool {
    match kind {
        Kind::Amount => {
            t.is_integer()
                || matches!(
                    t,
                    DataType::Decimal32(..)
                        | DataType::Decimal64(..)
                        | DataType::Decimal128(..)
                        | DataType::Decimal256(..)
                )
        }
        Kind::Integer => is_int(t),
        Kind::Text => is_text(t),
        Kind::Postal => is_text(t) || is_int(t),
        Kind::Day => {
            is_text(t)
                || matches!(
                    t,
                    DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
                )
        }
        Kind::Flag => matches!(t, DataType::Boolean | DataType::Null) || t.is_integer(),
    }
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Amount => {
            "integer minor units (cents) or a decimal in major units (dollars); floats cannot \
             hold cents exactly: cast to a decimal first (pyarrow.decimal128(18, 2), \
             polars.Decimal(18, 2), DECIMAL(18, 2))"
        }
        Kind::Integer => "an integer",
        Kind::Text => "text",
        Kind::Postal => "text, or an integer ZIP code",
        Kind::Day => "a date, a timestamp (its UTC day) or text YYYY-MM-DD",
        Kind::Flag => "a boolean",
    }
}

impl Plan {
    /// Checks `schema`: `amount` present and of an exact type, every known column of a type
    /// it can be read as, a place to resolve, not both `category` and `tax_code`, a `date`
    /// column unless `default_date` is given, and no unread column that looks like a
    /// misspelling of a read one ([`near_miss`]) unless it is in `keep`.
    pub fn new(schema: &Schema, keep: &[String], default_date: bool) -> Result<Plan, SchemaError> {
        for f in schema.fields() {
            let name = f.name().as_str();
            if column_names().any(|n| n == name) || keep.iter().any(|k| k == name) {
                continue;
            }
            if let Some(known) = near_miss(name) {
                return Err(SchemaError::Value(format!(
                    "column {name:?} is not one calculate_batch reads: did you mean \
                     {known:?}? (rename it; or, to pass it through unread, name it in keep=)"
                )));
            }
        }
        let mut index = [None; COLUMNS.len()];
        for (slot, (name, kind)) in index.iter_mut().zip(COLUMNS) {
            let Some(i) = index_of(schema, name)? else {
                continue;
            };
            let t = schema.field(i).data_type();
            if !accepts(kind, t) {
                return Err(SchemaError::Type(format!(
                    "column {name:?} is {}: expected {}",
                    describe(t),
                    expected(kind)
                )));
            }
            *slot = Some(i);
        }
        let Some(amount) = index[0] else {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(SchemaError::Value(format!(
                "no \"amount\" column (the input has: {}); calculate_batch reads {}",
                names.join(", "),
                column_names().collect::<Vec<_>>().join(", ")
            )));
        };
        if index[2].is_some() && index[3].is_some() {
            return Err(SchemaError::Value(
                "both \"category\" and \"tax_code\" columns: give one (a category such as \
                 CLOTHING, or a tax code such as CLOTHING_GENERAL)"
                    .into(),
            ));
        }
        let has_place = ["postal_code", "province", "country", "ip"]
            .iter()
            .filter_map(|n| COLUMNS.iter().position(|(c, _)| c == n))
            .any(|k| index[k].is_some());
        if !has_place {
            return Err(SchemaError::Value(
                "no place to tax at: give a \"postal_code\" column (and \"province\", \
                 \"country\", \"city\", \"street\" as you have them), or an \"ip\" column"
                    .into(),
            ));
        }
        let date = COLUMNS.iter().position(|(c, _)| *c == "date");
        if !default_date && date.and_then(|k| index[k]).is_none() {
            return Err(SchemaError::Value(
                "no \"date\" column: give each sale's day, or default_date= for the day of \
                 every sale (default_date=\"today\" for today's UTC day)"
                    .into(),
            ));
        }
        let unit = match schema.field(amount).data_type() {
            DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)
            | DataType::Decimal128(_, s)
            | DataType::Decimal256(_, s) => {
                if *s < 0 {
                    return Err(SchemaError::Type(format!(
                        "column \"amount\" has a negative scale ({s}): cast it to a decimal \
                         with a scale of at least 0"
                    )));
                }
                Unit::Major { scale: *s as u32 }
            }
            _ => Unit::Minor,
        };
        Ok(Plan { index, unit })
    }

    fn column(&self, batch: &RecordBatch, name: &str) -> Option<ArrayRef> {
        let k = COLUMNS.iter().position(|(n, _)| *n == name)?;
        self.index[k].map(|i| Arc::clone(batch.column(i)))
    }
}

/// A text column in whichever layout it came.
#[derive(Clone, Debug)]
enum Text {
    Utf8(StringArray),
    Large(LargeStringArray),
    View(StringViewArray),
}

impl Text {
    fn of(array: &ArrayRef) -> Result<Option<Text>, String> {
        Ok(Some(match array.data_type() {
            DataType::Null => return Ok(None),
            DataType::Utf8 => Text::Utf8(array.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Text::Large(array.as_string::<i64>().clone()),
            DataType::Utf8View => Text::View(array.as_string_view().clone()),
            _ => {
                let cast = arrow_cast::cast(array, &DataType::Utf8).map_err(|e| e.to_string())?;
                Text::Utf8(cast.as_string::<i32>().clone())
            }
        }))
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&str> {
        match self {
            Text::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Text::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Text::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// A postal code column: text, or ZIP codes written as integers (leading zeros lost).
#[derive(Clone, Debug)]
enum Postal {
    Text(Text),
    Number(Int64Array),
}

/// A postal code for one row: borrowed text, or an integer ZIP spelled out.
pub struct PostalBuf {
    buf: [u8; 10],
    len: usize,
}

impl PostalBuf {
    fn new() -> PostalBuf {
        PostalBuf {
            buf: [0; 10],
            len: 0,
        }
    }

    /// `n` as a ZIP code: five digits, or ZIP+4 (`37203-1234`) for nine.
    fn zip(&mut self, n: i64) -> Result<&str, String> {
        let (digits, dash) = match n {
            0..=99_999 => (5, false),
            100_000..=999_999_999 => (9, true),
            _ => return Err(format!("postal code {n} is not a ZIP code")),
        };
        let mut v = n as u64;
        let len = if dash { 10 } else { 5 };
        let mut pos = len;
        for k in 0..digits {
            if dash && k == 4 {
                pos -= 1;
                self.buf[pos] = b'-';
            }
            pos -= 1;
            self.buf[pos] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        self.len = len;
        // The buffer holds ASCII digits and a dash only.
        Ok(std::str::from_utf8(&self.buf[..self.len]).unwrap_or(""))
    }
}

impl Postal {
    fn of(array: &ArrayRef) -> Result<Option<Postal>, String> {
        if array.data_type().is_integer() {
            let cast = arrow_cast::cast(array, &DataType::Int64).map_err(|e| e.to_string())?;
            return Ok(Some(Postal::Number(
                cast.as_primitive::<Int64Type>().clone(),
            )));
        }
        Ok(Text::of(array)?.map(Postal::Text))
    }

    #[inline]
    fn get<'a>(&'a self, i: usize, buf: &'a mut PostalBuf) -> Result<&'a str, String> {
        match self {
            Postal::Text(t) => Ok(t.get(i).unwrap_or("")),
            Postal::Number(a) if a.is_valid(i) => buf.zip(a.value(i)),
            Postal::Number(_) => Ok(""),
        }
    }
}

/// The amount column.
#[derive(Clone, Debug)]
enum Amount {
    Minor(Int64Array),
    Major(Decimal128Array, u32),
}

/// The date column.
#[derive(Clone, Debug)]
enum Day {
    Date(Date32Array),
    /// Timestamps as integers, and how many make a day.
    Timestamp(Int64Array, i64),
    Text(Text),
}

/// One batch's columns, in one layout.
pub struct Columns {
    amount: Amount,
    quantity: Option<Int64Array>,
    category: Option<Text>,
    tax_code: Option<Text>,
    postal_code: Option<Postal>,
    province: Option<Text>,
    country: Option<Text>,
    city: Option<Text>,
    street: Option<Text>,
    date: Option<Day>,
    currency: Option<Text>,
    tax_included: Option<BooleanArray>,
    exempt: Option<BooleanArray>,
    rounding: Option<Text>,
    origin_postal_code: Option<Postal>,
    origin_province: Option<Text>,
    origin_country: Option<Text>,
    origin_city: Option<Text>,
    origin_street: Option<Text>,
    ip: Option<Text>,
    ip_mode: Option<Text>,
    delivery: Option<BooleanArray>,
    seller_sales: Option<Text>,
    exchange_rate: Option<Text>,
    /// The day of rows without one, when `default_date` is given.
    default_date: Option<Date>,
}

fn text(plan: &Plan, batch: &RecordBatch, name: &str) -> Result<Option<Text>, String> {
    plan.column(batch, name)
        .map(|a| Text::of(&a).map_err(|e| format!("column {name:?}: {e}")))
        .transpose()
        .map(Option::flatten)
}

fn postal(plan: &Plan, batch: &RecordBatch, name: &str) -> Result<Option<Postal>, String> {
    plan.column(batch, name)
        .map(|a| Postal::of(&a).map_err(|e| format!("column {name:?}: {e}")))
        .transpose()
        .map(Option::flatten)
}

fn flag(plan: &Plan, batch: &RecordBatch, name: &str) -> Result<Option<BooleanArray>, String> {
    let Some(a) = plan.column(batch, name) else {
        return Ok(None);
    };
    if a.data_type() == &DataType::Null {
        return Ok(None);
    }
    let cast =
        arrow_cast::cast(&a, &DataType::Boolean).map_err(|e| format!("column {name:?}: {e}"))?;
    Ok(Some(cast.as_boolean().clone()))
}

fn day(plan: &Plan, batch: &RecordBatch) -> Result<Option<Day>, String> {
    let Some(a) = plan.column(batch, "date") else {
        return Ok(None);
    };
    let err = |e: arrow_schema::ArrowError| format!("column \"date\": {e}");
    Ok(Some(match a.data_type() {
        DataType::Null => return Ok(None),
        DataType::Date32 => Day::Date(a.as_primitive::<Date32Type>().clone()),
        DataType::Date64 => {
            let cast = arrow_cast::cast(&a, &DataType::Date32).map_err(err)?;
            Day::Date(cast.as_primitive::<Date32Type>().clone())
        }
        DataType::Timestamp(unit, _) => {
            let per_day = match unit {
                TimeUnit::Second => 86_400,
                TimeUnit::Millisecond => 86_400_000,
                TimeUnit::Microsecond => 86_400_000_000,
                TimeUnit::Nanosecond => 86_400_000_000_000,
            };
            let cast = arrow_cast::cast(&a, &DataType::Int64).map_err(err)?;
            Day::Timestamp(cast.as_primitive::<Int64Type>().clone(), per_day)
        }
        _ => match Text::of(&a).map_err(|e| format!("column \"date\": {e}"))? {
            Some(t) => Day::Text(t),
            None => return Ok(None),
        },
    }))
}

impl Columns {
    /// The columns of `batch` (whose schema `plan` checked).
    pub fn new(
        plan: &Plan,
        batch: &RecordBatch,
        default_date: Option<Date>,
    ) -> Result<Columns, String> {
        let a = plan
            .column(batch, "amount")
            .ok_or_else(|| "no \"amount\" column".to_string())?;
        let amount = match plan.unit {
            Unit::Minor => {
                let cast = arrow_cast::cast(&a, &DataType::Int64)
                    .map_err(|e| format!("column \"amount\": {e}"))?;
                Amount::Minor(cast.as_primitive::<Int64Type>().clone())
            }
            Unit::Major { scale } => {
                let cast = arrow_cast::cast(&a, &DataType::Decimal128(38, scale as i8))
                    .map_err(|e| format!("column \"amount\": {e}"))?;
                Amount::Major(cast.as_primitive::<Decimal128Type>().clone(), scale)
            }
        };
        let quantity = match plan.column(batch, "quantity") {
            Some(q) if q.data_type() != &DataType::Null => {
                let cast = arrow_cast::cast(&q, &DataType::Int64)
                    .map_err(|e| format!("column \"quantity\": {e}"))?;
                Some(cast.as_primitive::<Int64Type>().clone())
            }
            _ => None,
        };
        Ok(Columns {
            amount,
            quantity,
            category: text(plan, batch, "category")?,
            tax_code: text(plan, batch, "tax_code")?,
            postal_code: postal(plan, batch, "postal_code")?,
            province: text(plan, batch, "province")?,
            country: text(plan, batch, "country")?,
            city: text(plan, batch, "city")?,
            street: text(plan, batch, "street")?,
            date: day(plan, batch)?,
            currency: text(plan, batch, "currency")?,
            tax_included: flag(plan, batch, "tax_included")?,
            exempt: flag(plan, batch, "exempt")?,
            rounding: text(plan, batch, "rounding")?,
            origin_postal_code: postal(plan, batch, "origin_postal_code")?,
            origin_province: text(plan, batch, "origin_province")?,
            origin_country: text(plan, batch, "origin_country")?,
            origin_city: text(plan, batch, "origin_city")?,
            origin_street: text(plan, batch, "origin_street")?,
            ip: text(plan, batch, "ip")?,
            ip_mode: text(plan, batch, "ip_mode")?,
            delivery: flag(plan, batch, "delivery")?,
            seller_sales: text(plan, batch, "seller_sales")?,
            exchange_rate: text(plan, batch, "exchange_rate")?,
            default_date,
        })
    }
}

/// Per-thread buffers for reading rows.
pub struct RowBufs {
    postal: PostalBuf,
    origin_postal: PostalBuf,
}

impl Default for RowBufs {
    fn default() -> RowBufs {
        RowBufs::new()
    }
}

impl RowBufs {
    /// Empty buffers.
    pub fn new() -> RowBufs {
        RowBufs {
            postal: PostalBuf::new(),
            origin_postal: PostalBuf::new(),
        }
    }
}

/// One row, read: the sale's terms, and its one line.
pub struct Row<'a> {
    /// Everything but the line.
    pub terms: Terms<'a>,
    /// Amount, minor units: the absolute amount of a refund.
    pub amount: Decimal,
    /// The amount was negative: a refund, written as the negation of the sale of
    /// `amount`.
    pub refund: bool,
    /// Quantity.
    pub quantity: u32,
    /// The product.
    pub product: Product<'a>,
}

#[inline]
fn opt(t: &Option<Text>, i: usize) -> &str {
    match t {
        Some(t) => t.get(i).unwrap_or(""),
        None => "",
    }
}

#[inline]
fn yes(b: &Option<BooleanArray>, i: usize) -> bool {
    match b {
        Some(b) => b.is_valid(i) && b.value(i),
        None => false,
    }
}

/// A decimal of `scale` from its integer, when it fits rust_decimal (28 digits).
fn decimal(v: i128, scale: u32) -> Option<Decimal> {
    if v.unsigned_abs() >= 1u128 << 96 || scale > 28 {
        return None;
    }
    Some(Decimal::from_i128_with_scale(v, scale))
}

/// A decimal amount `v` of `scale` places in major units, as whole minor units of
/// `currency`, by integer arithmetic; `None` when it is negative, has digits finer than the
/// currency's minor unit, or does not fit (the slower path then says which; a refund's
/// amount comes here as its absolute value).
#[inline]
fn minor_units(v: i128, scale: u32, currency: Currency) -> Option<Decimal> {
    const POW10: [i128; 20] = {
        let mut p = [1i128; 20];
        let mut n = 1;
        while n < 20 {
            p[n] = p[n - 1] * 10;
            n += 1;
        }
        p
    };
    if v < 0 {
        return None;
    }
    let digits = currency.minor_units();
    let minor = if scale == digits {
        // Dollars with cents: the decimal's integer is the cents.
        v
    } else if scale > digits {
        let div = *POW10.get((scale - digits) as usize)?;
        if v % div != 0 {
            return None;
        }
        v / div
    } else {
        v.checked_mul(*POW10.get((digits - scale) as usize)?)?
    };
    i64::try_from(minor).ok().map(Decimal::from)
}

impl Columns {
    /// The currency of row `i`.
    #[inline]
    pub fn currency(&self, i: usize) -> Result<Currency, String> {
        match &self.currency {
            None => Ok(Currency::USD),
            Some(t) => match t.get(i) {
                None | Some("USD") => Ok(Currency::USD),
                Some(c) => sale::currency(c),
            },
        }
    }

    /// Row `i`, read and checked.
    pub fn row<'a>(&'a self, i: usize, bufs: &'a mut RowBufs) -> Result<Row<'a>, RowError> {
        use QuoteErrorKind as K;
        let currency = self.currency(i).map_err(RowError::of(K::UnknownCurrency))?;
        let (amount, refund) = self
            .amount(i, currency)
            .map_err(RowError::of(K::InvalidAmount))?;
        let quantity = match &self.quantity {
            Some(q) if q.is_valid(i) => {
                sale::quantity(q.value(i)).map_err(RowError::of(K::InvalidQuantity))?
            }
            _ => 1,
        };
        let product = self.product(i);
        let date = self.date(i)?;
        let rounding = match &self.rounding {
            Some(r) => {
                sale::rounding(r.get(i).unwrap_or("")).map_err(RowError::of(K::InvalidOption))?
            }
            None => levy_core::Rounding::Line,
        };
        let RowBufs {
            postal,
            origin_postal,
        } = bufs;
        let to = self
            .ship_to(i, postal)
            .map_err(RowError::of(K::MalformedAddress))?;
        let from = self
            .ship_from(i, origin_postal)
            .map_err(RowError::of(K::OriginUnresolved))?;
        let decimal = |t: &Option<Text>, what: &str| -> Result<Option<Decimal>, RowError> {
            match opt(t, i).trim() {
                "" => Ok(None),
                v => v
                    .parse::<Decimal>()
                    .ok()
                    .filter(|d| !d.is_sign_negative())
                    .map(Some)
                    .ok_or_else(|| {
                        RowError::new(
                            K::InvalidAmount,
                            format!("{what} {v:?}: expected a decimal such as 0.0067"),
                        )
                    }),
            }
        };
        let exchange_rate = match opt(&self.exchange_rate, i).trim() {
            "" => None,
            v => Some(
                levy_core::quote::read::exchange_rate(v).map_err(|e| RowError {
                    code: e.kind.name(),
                    message: e.message,
                })?,
            ),
        };
        Ok(Row {
            terms: Terms {
                to,
                ip: opt(&self.ip, i).trim(),
                ip_mode: sale::ip_mode(opt(&self.ip_mode, i))
                    .map_err(RowError::of(K::InvalidOption))?,
                from: from.has_address().then_some(from),
                origin_country: opt(&self.origin_country, i),
                date,
                currency,
                exchange_rate,
                tax_included: yes(&self.tax_included, i),
                exempt: yes(&self.exempt, i),
                rounding,
                delivery: yes(&self.delivery, i),
                seller_sales: decimal(&self.seller_sales, "seller_sales")?,
            },
            amount,
            refund,
            quantity,
            product,
        })
    }

    /// The amount of row `i` in minor units of `currency`, required and in whole minor
    /// units: its absolute value, and whether it was negative (a refund).
    #[inline]
    fn amount(&self, i: usize, currency: Currency) -> Result<(Decimal, bool), String> {
        match &self.amount {
            Amount::Minor(a) => {
                if a.is_null(i) {
                    return Err("amount is missing".into());
                }
                let v = a.value(i);
                Ok((Decimal::from(v.unsigned_abs()), v < 0))
            }
            Amount::Major(a, scale) => {
                if a.is_null(i) {
                    return Err("amount is missing".into());
                }
                let v = a.value(i);
                let refund = v < 0;
                let abs = v
                    .checked_abs()
                    .ok_or_else(|| "amount is too large".to_string())?;
                match minor_units(abs, *scale, currency) {
                    Some(minor) => Ok((minor, refund)),
                    // Finer than the currency, or too large: the message.
                    None => {
                        let major = decimal(abs, *scale)
                            .ok_or_else(|| "amount is too large".to_string())?;
                        let minor = sale::major_to_minor(major, currency).map_err(|e| {
                            if refund {
                                format!("refund {e}")
                            } else {
                                e
                            }
                        })?;
                        Ok((minor, refund))
                    }
                }
            }
        }
    }

    /// The product of row `i`: its category when the input has that column, else its tax
    /// code; general merchandise when neither is given.
    #[inline]
    fn product(&self, i: usize) -> Product<'_> {
        match (&self.category, &self.tax_code) {
            (Some(c), _) => c.get(i).map(Product::Category),
            (None, Some(t)) => t.get(i).map(Product::TaxCode),
            (None, None) => None,
        }
        .unwrap_or(Product::DEFAULT)
    }

    /// The day of row `i`, from a date, a timestamp or text; `default_date` when it has
    /// none (a null, or empty text), and an error without one.
    #[inline]
    fn date(&self, i: usize) -> Result<Date, RowError> {
        let missing = || {
            self.default_date.ok_or_else(|| RowError {
                code: DATE_MISSING,
                message: "date is missing: give the sale's day, or default_date= for the \
                          day of sales without one"
                    .into(),
            })
        };
        let invalid = RowError::of(QuoteErrorKind::InvalidDate);
        match &self.date {
            None => missing(),
            Some(Day::Date(d)) => match d.is_valid(i) {
                true => Ok(Date(d.value(i))),
                false => missing(),
            },
            Some(Day::Timestamp(t, per_day)) => match t.is_valid(i) {
                true => Ok(Date(
                    i32::try_from(t.value(i).div_euclid(*per_day))
                        .map_err(|_| invalid("date is out of range".to_string()))?,
                )),
                false => missing(),
            },
            Some(Day::Text(t)) => match t.get(i) {
                Some(s) if !s.trim().is_empty() => sale::parse_date(s).map_err(invalid),
                _ => missing(),
            },
        }
    }

    /// The buyer's address of row `i` (a postal code written as a number spelled out in
    /// `postal`).
    #[inline]
    fn ship_to<'a>(&'a self, i: usize, postal: &'a mut PostalBuf) -> Result<Place<'a>, String> {
        Ok(Place {
            street: opt(&self.street, i),
            city: opt(&self.city, i),
            province: opt(&self.province, i),
            postal_code: match &self.postal_code {
                Some(p) => p.get(i, postal)?,
                None => "",
            },
            country: opt(&self.country, i),
        })
    }

    /// The ship-from address of row `i`, without its country (a postal code written as a
    /// number spelled out in `postal`).
    #[inline]
    fn ship_from<'a>(&'a self, i: usize, postal: &'a mut PostalBuf) -> Result<Place<'a>, String> {
        Ok(Place {
            street: opt(&self.origin_street, i),
            city: opt(&self.origin_city, i),
            province: opt(&self.origin_province, i),
            postal_code: match &self.origin_postal_code {
                Some(p) => p.get(i, postal)?,
                None => "",
            },
            country: "",
        })
    }
}
