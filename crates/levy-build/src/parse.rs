//! Readers for the published input formats. Each takes any [`std::io::Read`] (so that
//! fuzzing and tests need no files) and returns the rows it understood together with a
//! [`RowError`] for each row it did not, by 1-based line number. None of them panics on any
//! input.

use std::io::Read;
use std::net::IpAddr;
use std::str::FromStr;

use levy_core::Date;
use rust_decimal::Decimal;

/// A row that could not be read, by 1-based line number in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowError {
    /// 1-based line number.
    pub line: u64,
    /// What is wrong with it.
    pub message: String,
}

/// The outcome of reading one file: good rows with their line numbers, and bad rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed<T> {
    /// Rows read, each with its 1-based line number.
    pub rows: Vec<(u64, T)>,
    /// Rows that could not be read.
    pub errors: Vec<RowError>,
}

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Parsed {
            rows: Vec::new(),
            errors: Vec::new(),
        }
    }
}

/// Parses a rate written as a decimal fraction (`0.0975`) or in scientific notation
/// (`7.7499999999999999E-2`). It must lie in `0..=1`. The value is exact: no binary
/// floating point is involved.
pub fn parse_rate(s: &str) -> Result<Decimal, String> {
    let t = s.trim_ascii();
    if t.is_empty() {
        return Err("empty rate".into());
    }
    let d = if t.contains(['e', 'E']) {
        Decimal::from_scientific(t).map_err(|e| format!("rate {t:?}: {e}"))?
    } else {
        Decimal::from_str_exact(t).map_err(|e| format!("rate {t:?}: {e}"))?
    };
    if d.is_sign_negative() && !d.is_zero() || d > Decimal::ONE {
        return Err(format!("rate {t:?} is outside 0..1"));
    }
    Ok(d.normalize())
}

fn digits(s: &str, min: usize, max: usize) -> Option<u32> {
    let t = s.trim_ascii();
    if t.len() < min || t.len() > max || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

fn sst_date(s: &str) -> Result<Date, String> {
    let n = digits(s, 8, 8).ok_or_else(|| format!("date {s:?} is not YYYYMMDD"))?;
    // SST files write "no end" as 2999-12-31 or 9999-12-31.
    if n >= 29_991_231 {
        return Ok(Date::MAX);
    }
    Date::from_yyyymmdd(n).ok_or_else(|| format!("date {s:?} does not exist"))
}

fn csv_builder() -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.has_headers(false).flexible(true).trim(csv::Trim::All);
    b
}

/// The longest line a published file may hold: 1 MiB. The longest real line (an SST
/// boundary record with its twenty special jurisdictions) is a few hundred bytes; a longer
/// one is not one of these files, and reading it whole would hold it in memory.
pub const MAX_LINE: usize = 1 << 20;

/// The longest text of a bad row's message: a field echoed back is cut, so that a file of
/// 5,000-character fields gives short, readable errors.
pub const MAX_MESSAGE: usize = 240;

/// A reader that fails, naming the line, when a line is longer than [`MAX_LINE`], and
/// counts the lines it has passed: the files are read as they stream in, in bounded
/// memory, whatever their size.
struct LineLimit<R> {
    inner: R,
    /// Bytes since the last line break.
    run: usize,
    /// Line breaks passed.
    lines: u64,
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.lines += 1;
                self.run = 0;
            } else {
                self.run += 1;
                if self.run > MAX_LINE {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {MAX_LINE} bytes: not a published rate or boundary file",
                            self.lines + 1
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// A bad row's message, cut to [`MAX_MESSAGE`] characters (on a character boundary) with
/// how long it was.
fn cut(message: String) -> String {
    if message.len() <= MAX_MESSAGE {
        return message;
    }
    let mut end = MAX_MESSAGE;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &message[..end], message.len())
}

/// Text read from a file: its control characters (every Unicode `Cc`: NUL, ESC, BEL, tabs,
/// carriage returns, line breaks, DEL and the C1 controls) dropped, so that nothing levy
/// prints or stores from it moves a terminal's cursor, clears its screen or hides a line.
pub fn text(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

/// The longest name (of a jurisdiction, a place, a county, a rate type) a build takes from
/// any input, in characters: the longest real one is under 60.
pub const MAX_NAME: usize = 100;

/// A name read from any input, CSV or local rates file alike: its control characters
/// dropped ([`text`]) and its ends trimmed; refused, never cut, when it is longer than
/// [`MAX_NAME`] characters (the message says how long, and echoes its start only), so
/// that a name is always the one the file gives.
pub fn name(s: &str) -> Result<String, String> {
    let clean = text(s);
    let clean = clean.trim();
    let n = clean.chars().count();
    if n > MAX_NAME {
        let start: String = clean.chars().take(24).collect();
        return Err(format!(
            "{start:?}... is {n} characters long: a name holds at most {MAX_NAME}"
        ));
    }
    Ok(clean.to_string())
}

/// Reads every record of `r` as it streams in (see [`LineLimit`]), handing each to `each`
/// with its 1-based line number (the CSV reader's own count, in which quoted fields and
/// CRLF endings count right). A record `each` rejects, or that the CSV reader cannot split,
/// becomes a [`RowError`]; a line longer than [`MAX_LINE`] fails the file.
fn records<R: Read>(
    r: R,
    builder: &csv::ReaderBuilder,
    mut each: impl FnMut(u64, &csv::ByteRecord) -> Result<(), String>,
) -> std::io::Result<Vec<RowError>> {
    let limited = LineLimit {
        inner: r,
        run: 0,
        lines: 0,
    };
    let mut rdr = builder.from_reader(std::io::BufReader::new(limited));
    let mut rec = csv::ByteRecord::new();
    let mut errors = Vec::new();
    loop {
        match rdr.read_byte_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {
                let l = rec.position().map_or(0, |p| p.line());
                if let Err(message) = each(l, &rec) {
                    errors.push(RowError {
                        line: l,
                        message: cut(message),
                    });
                }
            }
            Err(e) => {
                if let csv::ErrorKind::Io(io) = e.kind() {
                    return Err(std::io::Error::new(io.kind(), io.to_string()));
                }
                let l = e.position().map_or(0, |p| p.line());
                errors.push(RowError {
                    line: l,
                    message: cut(e.to_string()),
                });
            }
        }
    }
    Ok(errors)
}

fn field(rec: &csv::ByteRecord, i: usize) -> &str {
    rec.get(i)
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("")
}

/// One row of a ZIP5 combined-rate table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zip5Row {
    /// Two-letter state.
    pub state: String,
    /// ZIP5.
    pub zip: u32,
    /// The publisher's tax region name (a city, county or district name).
    pub region_name: String,
    /// Estimated combined rate.
    pub combined: Decimal,
    /// State rate.
    pub state_rate: Decimal,
    /// Estimated county rate.
    pub county_rate: Decimal,
    /// Estimated city rate.
    pub city_rate: Decimal,
    /// Estimated special-district rate.
    pub special_rate: Decimal,
}

/// The ZIP5 table's header, which the first line must be.
pub const ZIP5_HEADER: [&str; 9] = [
    "State",
    "ZipCode",
    "TaxRegionName",
    "EstimatedCombinedRate",
    "StateRate",
    "EstimatedCountyRate",
    "EstimatedCityRate",
    "EstimatedSpecialRate",
    "RiskLevel",
];

/// Reads a ZIP5 combined-rate table (`State,ZipCode,TaxRegionName,...`). A first line equal
/// to [`ZIP5_HEADER`] is skipped; any other first line is read as data. Every row is held;
/// [`Zip5Reader`] reads one at a time instead.
pub fn parse_zip5<R: Read>(r: R) -> std::io::Result<Parsed<Zip5Row>> {
    let mut out = Parsed::default();
    let mut reader = Zip5Reader::new(r);
    while let Some(row) = reader.next_row()? {
        match row {
            Ok(row) => out.rows.push(row),
            Err(e) => out.errors.push(e),
        }
    }
    Ok(out)
}

/// A ZIP5 combined-rate table read a row at a time as it streams in (as [`parse_zip5`]
/// reads it, in bounded memory: a build of 5 million rows holds none of them).
pub struct Zip5Reader<R: Read> {
    rdr: csv::Reader<std::io::BufReader<LineLimit<R>>>,
    rec: csv::ByteRecord,
    records: u64,
}

impl<R: Read> Zip5Reader<R> {
    /// A reader of the table `r`.
    pub fn new(r: R) -> Self {
        let limited = LineLimit {
            inner: r,
            run: 0,
            lines: 0,
        };
        Zip5Reader {
            rdr: csv_builder().from_reader(std::io::BufReader::new(limited)),
            rec: csv::ByteRecord::new(),
            records: 0,
        }
    }

    /// The next row with its 1-based line, or the next bad row; `None` at the end of the
    /// file. An error reading the file, or a line longer than [`MAX_LINE`], is `Err`.
    #[allow(clippy::type_complexity)]
    pub fn next_row(&mut self) -> std::io::Result<Option<Result<(u64, Zip5Row), RowError>>> {
        loop {
            match self.rdr.read_byte_record(&mut self.rec) {
                Ok(false) => return Ok(None),
                Ok(true) => {
                    let rec = &self.rec;
                    let line = rec.position().map_or(0, |p| p.line());
                    self.records += 1;
                    if self.records == 1
                        && rec.len() == 9
                        && (0..9).all(|i| field(rec, i).eq_ignore_ascii_case(ZIP5_HEADER[i]))
                    {
                        continue;
                    }
                    if rec.len() == 1 && field(rec, 0).is_empty() {
                        continue;
                    }
                    return Ok(Some(zip5_row(rec).map(|row| (line, row)).map_err(
                        |message| RowError {
                            line,
                            message: cut(message),
                        },
                    )));
                }
                Err(e) => {
                    if let csv::ErrorKind::Io(io) = e.kind() {
                        return Err(std::io::Error::new(io.kind(), io.to_string()));
                    }
                    let line = e.position().map_or(0, |p| p.line());
                    return Ok(Some(Err(RowError {
                        line,
                        message: cut(e.to_string()),
                    })));
                }
            }
        }
    }
}

fn zip5_row(rec: &csv::ByteRecord) -> Result<Zip5Row, String> {
    if rec.len() != 9 {
        return Err(format!("expected 9 fields, found {}", rec.len()));
    }
    let state = field(rec, 0);
    if state.len() != 2 || !state.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("state {state:?} is not a two-letter code"));
    }
    let zip = digits(field(rec, 1), 5, 5)
        .ok_or_else(|| format!("ZIP {:?} is not five digits", field(rec, 1)))?;
    let region_name = name(field(rec, 2))
        .map_err(|e| format!("TaxRegionName {e}"))?
        .to_uppercase();
    if region_name.is_empty() {
        return Err("empty TaxRegionName".into());
    }
    Ok(Zip5Row {
        state: state.to_string(),
        zip,
        region_name,
        combined: parse_rate(field(rec, 3))?,
        state_rate: parse_rate(field(rec, 4))?,
        county_rate: parse_rate(field(rec, 5))?,
        city_rate: parse_rate(field(rec, 6))?,
        special_rate: parse_rate(field(rec, 7))?,
    })
}

/// One row of an SST rate file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstRateRow {
    /// Two-digit state FIPS (`13`).
    pub state: String,
    /// Two-digit SST jurisdiction type: `45` state, `00` county, `01` city, others districts.
    pub jtype: String,
    /// Jurisdiction FIPS code as written (`04000`, `025`).
    pub code: String,
    /// General rate, intrastate.
    pub general: Decimal,
    /// General rate, interstate.
    pub general_interstate: Decimal,
    /// Food and drug rate, intrastate.
    pub food: Decimal,
    /// Food and drug rate, interstate.
    pub food_interstate: Decimal,
    /// First day in force.
    pub from: Date,
    /// Last day in force (`Date::MAX` for the files' 2999-12-31 and 9999-12-31).
    pub to: Date,
}

/// Reads an SST rate file (no header, nine fields a row).
pub fn parse_sst_rates<R: Read>(r: R) -> std::io::Result<Parsed<SstRateRow>> {
    let mut rows = Vec::new();
    let mut n = 0u64;
    let errors = records(r, &csv_builder(), |line, rec| {
        n += 1;
        if rec.len() == 1 && field(rec, 0).is_empty() {
            return Ok(());
        }
        rows.push((line, sst_rate_row(rec)?));
        Ok(())
    })?;
    Ok(Parsed { rows, errors })
}

fn sst_rate_row(rec: &csv::ByteRecord) -> Result<SstRateRow, String> {
    if rec.len() != 9 {
        return Err(format!("expected 9 fields, found {}", rec.len()));
    }
    let state = field(rec, 0);
    digits(state, 2, 2).ok_or_else(|| format!("state FIPS {state:?} is not two digits"))?;
    let jtype = field(rec, 1);
    digits(jtype, 2, 2).ok_or_else(|| format!("jurisdiction type {jtype:?} is not two digits"))?;
    let code = field(rec, 2);
    if code.is_empty() || code.len() > 10 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(format!("jurisdiction code {code:?} is not a FIPS code"));
    }
    let from = sst_date(field(rec, 7))?;
    let to = sst_date(field(rec, 8))?;
    if from > to {
        return Err(format!(
            "interval {}..{} ends before it starts",
            field(rec, 7),
            field(rec, 8)
        ));
    }
    Ok(SstRateRow {
        state: state.to_string(),
        jtype: jtype.to_string(),
        code: code.to_string(),
        general: parse_rate(field(rec, 3))?,
        general_interstate: parse_rate(field(rec, 4))?,
        food: parse_rate(field(rec, 5))?,
        food_interstate: parse_rate(field(rec, 6))?,
        from,
        to,
    })
}

/// What a boundary record locates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundaryTarget {
    /// `A`: a street address range in one ZIP5.
    Address {
        /// ZIP5.
        zip5: u32,
        /// Lowest house number.
        low: u32,
        /// Highest house number.
        high: u32,
        /// `b'O'` odd, `b'E'` even, `b'B'` both.
        parity: u8,
        /// Street normalized with [`levy_core::normalize_street`].
        street: String,
    },
    /// `4`: a ZIP+4 range, possibly spanning several ZIP5s.
    Zip4 {
        /// Low ZIP5.
        zip_low: u32,
        /// Low plus-4.
        plus4_low: u16,
        /// High ZIP5.
        zip_high: u32,
        /// High plus-4.
        plus4_high: u16,
    },
    /// `Z` (or `z`): a range of whole ZIP5s.
    Zip5 {
        /// Low ZIP5.
        zip_low: u32,
        /// High ZIP5.
        zip_high: u32,
    },
}

/// One record of an SST boundary file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundaryRow {
    /// What the record locates.
    pub target: BoundaryTarget,
    /// First day in force.
    pub from: Date,
    /// Last day in force.
    pub to: Date,
    /// Two-digit state FIPS.
    pub state: String,
    /// Three-digit county FIPS, empty for none.
    pub county: String,
    /// Five-digit place FIPS, empty for none.
    pub place: String,
    /// Special taxing jurisdictions as (SST jurisdiction type, code).
    pub specials: Vec<(String, String)>,
}

/// Field positions (0-based) of the SST boundary file, after the Governing Board's
/// "Rate and Boundary File Format": 0 record type, 1-2 begin/end date, 3-4 low/high house
/// number, 5 odd/even/both, 6 pre-directional, 7 street name, 8 suffix, 9 post-directional,
/// 10-13 secondary address fields, 14 city name, 15 ZIP and 16 plus-4 of an `A` record,
/// 17-20 low ZIP, low plus-4, high ZIP, high plus-4 of `4`/`Z` records, 21 composite SER
/// code, 22 state FIPS, 23 FIPS state indicator, 24 county FIPS, 25 place FIPS, 26 place
/// class, 27-28 longitude/latitude, then twenty special jurisdictions of three fields
/// each from 29: class code (`ST`), code, SST jurisdiction type.
pub mod boundary_columns {
    /// Record type.
    pub const TYPE: usize = 0;
    /// Begin date.
    pub const BEGIN: usize = 1;
    /// End date.
    pub const END: usize = 2;
    /// Low house number.
    pub const HOUSE_LOW: usize = 3;
    /// High house number.
    pub const HOUSE_HIGH: usize = 4;
    /// Odd/even/both indicator.
    pub const PARITY: usize = 5;
    /// Street pre-directional.
    pub const PRE: usize = 6;
    /// Street name.
    pub const STREET: usize = 7;
    /// Street suffix.
    pub const SUFFIX: usize = 8;
    /// Street post-directional.
    pub const POST: usize = 9;
    /// ZIP5 of an address record.
    pub const A_ZIP: usize = 15;
    /// Low ZIP5.
    pub const ZIP_LOW: usize = 17;
    /// Low plus-4.
    pub const PLUS4_LOW: usize = 18;
    /// High ZIP5.
    pub const ZIP_HIGH: usize = 19;
    /// High plus-4.
    pub const PLUS4_HIGH: usize = 20;
    /// State FIPS.
    pub const STATE: usize = 22;
    /// County FIPS.
    pub const COUNTY: usize = 24;
    /// Place FIPS.
    pub const PLACE: usize = 25;
    /// First special jurisdiction's class code; code and type follow.
    pub const SPECIAL: usize = 29;
    /// Number of special jurisdiction slots.
    pub const SPECIAL_SLOTS: usize = 20;
}

/// Reads an SST boundary file (no header).
pub fn parse_sst_boundaries<R: Read>(r: R) -> std::io::Result<Parsed<BoundaryRow>> {
    let mut rows = Vec::new();
    let errors = each_sst_boundary(r, |line, row| rows.push((line, row)))?;
    Ok(Parsed { rows, errors })
}

/// Reads an SST boundary file (no header) as it streams in, handing each record to `each`
/// with its line number as it is read (boundary files run to millions of records: the
/// build places each one and keeps no list of them). Returns the rows it could not read.
pub fn each_sst_boundary<R: Read>(
    r: R,
    mut each: impl FnMut(u64, BoundaryRow),
) -> std::io::Result<Vec<RowError>> {
    records(
        r,
        csv::ReaderBuilder::new().has_headers(false).flexible(true),
        |line, rec| {
            if rec.len() == 1 && field(rec, 0).trim_ascii().is_empty() {
                return Ok(());
            }
            each(line, boundary_row(rec)?);
            Ok(())
        },
    )
}

/// One boundary record: its interval, its target (an address range, a ZIP+4 range or a
/// ZIP range), and its state, county, place and special jurisdictions.
fn boundary_row(rec: &csv::ByteRecord) -> Result<BoundaryRow, String> {
    use boundary_columns as c;
    let f = |i: usize| field(rec, i).trim_ascii();
    if rec.len() <= c::PLACE {
        return Err(format!(
            "expected at least {} fields, found {}",
            c::PLACE + 1,
            rec.len()
        ));
    }
    let from = sst_date(f(c::BEGIN))?;
    let to = sst_date(f(c::END))?;
    if from > to {
        return Err(format!(
            "interval {}..{} ends before it starts",
            f(c::BEGIN),
            f(c::END)
        ));
    }
    let target = boundary_target(rec)?;
    let state = f(c::STATE);
    digits(state, 2, 2).ok_or_else(|| format!("state FIPS {state:?} is not two digits"))?;
    let county = f(c::COUNTY);
    if !county.is_empty() && digits(county, 3, 3).is_none() {
        return Err(format!("county FIPS {county:?} is not three digits"));
    }
    let place = f(c::PLACE);
    if !place.is_empty() && digits(place, 5, 5).is_none() {
        return Err(format!("place FIPS {place:?} is not five digits"));
    }
    Ok(BoundaryRow {
        target,
        from,
        to,
        state: state.to_string(),
        county: county.to_string(),
        place: place.to_string(),
        specials: boundary_specials(rec)?,
    })
}

/// The ZIP5 in field `i` of a boundary record.
fn boundary_zip(rec: &csv::ByteRecord, i: usize) -> Result<u32, String> {
    let v = field(rec, i).trim_ascii();
    digits(v, 5, 5).ok_or_else(|| format!("ZIP {v:?} in field {} is not five digits", i + 1))
}

/// The plus-4 in field `i` of a boundary record.
fn boundary_plus4(rec: &csv::ByteRecord, i: usize) -> Result<u16, String> {
    let v = field(rec, i).trim_ascii();
    digits(v, 4, 4)
        .map(|v| v as u16)
        .ok_or_else(|| format!("plus-4 {v:?} in field {} is not four digits", i + 1))
}

/// What a boundary record places, by its type: `A` an address range, `4` a ZIP+4 range,
/// `Z` a ZIP range.
fn boundary_target(rec: &csv::ByteRecord) -> Result<BoundaryTarget, String> {
    use boundary_columns as c;
    let (zip, plus4) = (|i| boundary_zip(rec, i), |i| boundary_plus4(rec, i));
    Ok(match field(rec, c::TYPE).trim_ascii() {
        "A" | "a" => address_target(rec)?,
        "4" => {
            let (zl, pl, zh, ph) = (
                zip(c::ZIP_LOW)?,
                plus4(c::PLUS4_LOW)?,
                zip(c::ZIP_HIGH)?,
                plus4(c::PLUS4_HIGH)?,
            );
            if (zl, pl) > (zh, ph) {
                return Err(format!(
                    "ZIP+4 range {zl:05}-{pl:04}..{zh:05}-{ph:04} is empty"
                ));
            }
            BoundaryTarget::Zip4 {
                zip_low: zl,
                plus4_low: pl,
                zip_high: zh,
                plus4_high: ph,
            }
        }
        "Z" | "z" => {
            let (zl, zh) = (zip(c::ZIP_LOW)?, zip(c::ZIP_HIGH)?);
            if zl > zh {
                return Err(format!("ZIP range {zl:05}..{zh:05} is empty"));
            }
            BoundaryTarget::Zip5 {
                zip_low: zl,
                zip_high: zh,
            }
        }
        t => return Err(format!("record type {t:?} is not A, 4 or Z")),
    })
}

/// The address range of an `A` record: its ZIP, house numbers, parity and street.
fn address_target(rec: &csv::ByteRecord) -> Result<BoundaryTarget, String> {
    use boundary_columns as c;
    let f = |i: usize| field(rec, i).trim_ascii();
    let zip5 = if f(c::A_ZIP).is_empty() {
        boundary_zip(rec, c::ZIP_LOW)?
    } else {
        boundary_zip(rec, c::A_ZIP)?
    };
    let house = |i: usize| {
        digits(f(i), 1, 9)
            .ok_or_else(|| format!("house number {:?} in field {} is not a number", f(i), i + 1))
    };
    let (low, high) = (house(c::HOUSE_LOW)?, house(c::HOUSE_HIGH)?);
    if low > high {
        return Err(format!("house range {low}..{high} is empty"));
    }
    let parity = match f(c::PARITY) {
        "O" | "o" => b'O',
        "E" | "e" => b'E',
        "B" | "b" | "" => b'B',
        p => return Err(format!("odd/even indicator {p:?} is not O, E or B")),
    };
    let street = levy_core::normalize_street(f(c::PRE), f(c::STREET), f(c::SUFFIX), f(c::POST));
    if street.is_empty() {
        return Err("empty street name".into());
    }
    Ok(BoundaryTarget::Address {
        zip5,
        low,
        high,
        parity,
        street,
    })
}

/// The special jurisdictions of a boundary record, as (type, code): each slot of class,
/// code and type that names one.
fn boundary_specials(rec: &csv::ByteRecord) -> Result<Vec<(String, String)>, String> {
    use boundary_columns as c;
    let f = |i: usize| field(rec, i).trim_ascii();
    let mut specials = Vec::new();
    for slot in 0..c::SPECIAL_SLOTS {
        let base = c::SPECIAL + 3 * slot;
        if base + 1 >= rec.len() {
            break;
        }
        let (code, jtype) = (f(base + 1), f(base + 2));
        if code.is_empty() && jtype.is_empty() {
            continue;
        }
        if code.is_empty() || code.len() > 10 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(format!(
                "special jurisdiction code {code:?} in field {} is not a code",
                base + 2
            ));
        }
        if digits(jtype, 2, 2).is_none() {
            return Err(format!(
                "special jurisdiction type {jtype:?} in field {} is not two digits",
                base + 3
            ));
        }
        specials.push((jtype.to_string(), code.to_string()));
    }
    Ok(specials)
}

/// Whether a CDTFA row is a city or a county's unincorporated area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdtfaKind {
    /// An incorporated city.
    City,
    /// The unincorporated area of a county.
    County,
}

/// One row of the CDTFA city and county rate list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdtfaRow {
    /// The city, or `<Name> County`, as written.
    pub location: String,
    /// Combined rate rounded to five decimal places; `None` for a row that only carries
    /// a note (the list then refers to its other rows).
    pub rate: Option<Decimal>,
    /// The county the location lies in.
    pub county: String,
    /// City or county.
    pub kind: CdtfaKind,
    /// The list's note, if any.
    pub notes: String,
}

/// Reads the CDTFA list: two title lines, then `Location,Rate,County,Type,Notes`.
///
/// Rates are written as binary floating-point values printed in full
/// (`7.7499999999999999E-2`); they are read exactly as decimals and rounded half away from
/// zero to five decimal places (CDTFA publishes rates in hundredths of a percent, so five
/// places recover the published value: `0.077499999999999999` -> `0.0775`).
pub fn parse_cdtfa<R: Read>(r: R) -> std::io::Result<Parsed<CdtfaRow>> {
    let mut rows = Vec::new();
    // The line of the last record read: where a missing header is reported. (Counting
    // records instead would overshoot: csv also ends a record at a bare carriage return.)
    let mut last_line = 1u64;
    let mut seen_header = false;
    let mut errors = records(r, &csv_builder(), |line, rec| {
        last_line = line;
        let first = field(rec, 0).trim_start_matches('\u{feff}');
        if !seen_header {
            // Title lines come before the header; anything before it is not data.
            if first.eq_ignore_ascii_case("Location") && field(rec, 1).eq_ignore_ascii_case("Rate")
            {
                seen_header = true;
            }
            return Ok(());
        }
        if rec.iter().all(|f| f.is_empty()) {
            return Ok(());
        }
        rows.push((line, cdtfa_row(rec)?));
        Ok(())
    })?;
    if !seen_header {
        errors.push(RowError {
            line: last_line,
            message: "no `Location,Rate,County,Type,Notes` header line".into(),
        });
    }
    Ok(Parsed { rows, errors })
}

fn cdtfa_kind(s: &str) -> Option<CdtfaKind> {
    match s.to_ascii_lowercase().as_str() {
        "city" => Some(CdtfaKind::City),
        "county" => Some(CdtfaKind::County),
        _ => None,
    }
}

fn cdtfa_row(rec: &csv::ByteRecord) -> Result<CdtfaRow, String> {
    if rec.len() < 4 {
        return Err(format!("expected at least 4 fields, found {}", rec.len()));
    }
    let location = name(field(rec, 0)).map_err(|e| format!("Location {e}"))?;
    if location.is_empty() {
        return Err("empty location".into());
    }
    // A row with only a note leaves the rate out altogether:
    // `Del Norte County,Del Norte,County,Please refer to ...`.
    if rec.len() == 4 && cdtfa_kind(field(rec, 3)).is_none() {
        if let Some(kind) = cdtfa_kind(field(rec, 2)) {
            let notes = text(field(rec, 3));
            if notes.is_empty() {
                return Err("no rate and no note".into());
            }
            return Ok(CdtfaRow {
                location,
                rate: None,
                county: name(field(rec, 1)).map_err(|e| format!("County {e}"))?,
                kind,
                notes,
            });
        }
    }
    let kind = cdtfa_kind(field(rec, 3))
        .ok_or_else(|| format!("type {:?} is not City or County", field(rec, 3)))?;
    let notes = text(field(rec, 4));
    let rate = match field(rec, 1) {
        "" if !notes.is_empty() => None,
        "" => return Err("no rate and no note".into()),
        s => Some(
            parse_rate(s)?
                .round_dp_with_strategy(5, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
                .normalize(),
        ),
    };
    Ok(CdtfaRow {
        location,
        rate,
        county: name(field(rec, 2)).map_err(|e| format!("County {e}"))?,
        kind,
        notes,
    })
}

/// One row of a plain IP range file: `start,end,country[,region,postal]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpCsvRow {
    /// First address.
    pub start: IpAddr,
    /// Last address (inclusive), of the same family.
    pub end: IpAddr,
    /// ISO 3166-1 alpha-2 country, upper case.
    pub country: String,
    /// Subdivision without the country (`TN`), may be empty.
    pub region: String,
    /// Postal code, may be empty.
    pub postal: String,
}

/// One row of a ZIP-to-county relationship file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZipCountyRow {
    /// ZIP code (a census ZIP code tabulation area).
    pub zip: u32,
    /// USPS state abbreviation.
    pub state: String,
    /// Three-digit county FIPS code within the state.
    pub county: String,
}

/// Reads a ZIP-to-county relationship file: a header line, then `zip,state,county_fips3`
/// (the census ZCTA-to-county relationship as `shared/data/census-zcta-county-2020` lays
/// it out); a ZIP in several counties has a row for each.
pub fn parse_zip_county<R: Read>(r: R) -> std::io::Result<Parsed<ZipCountyRow>> {
    let mut rows = Vec::new();
    let mut n = 0u64;
    let errors = records(
        r,
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All),
        |line, rec| {
            n += 1;
            if n == 1 && field(rec, 0).eq_ignore_ascii_case("zip") {
                return Ok(());
            }
            if rec.len() != 3 {
                return Err(format!("expected 3 fields, found {}", rec.len()));
            }
            let zip = field(rec, 0);
            if zip.len() != 5 || !zip.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("ZIP {zip:?} is not five digits"));
            }
            let state = field(rec, 1).to_ascii_uppercase();
            if state.len() != 2 || !state.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(format!("state {state:?} is not a USPS abbreviation"));
            }
            let county = field(rec, 2);
            if county.len() != 3 || !county.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("county FIPS {county:?} is not three digits"));
            }
            rows.push((
                line,
                ZipCountyRow {
                    zip: zip.parse().map_err(|_| format!("ZIP {zip:?}"))?,
                    state,
                    county: county.to_string(),
                },
            ));
            Ok(())
        },
    )?;
    Ok(Parsed { rows, errors })
}

/// Reads a plain IP range file. Addresses are written as text (`192.0.2.0`, `2001:db8::`)
/// or, for IPv4, as a decimal number. A first line whose first field is `start` (any case)
/// is a header and skipped; `#` starts a comment line.
pub fn parse_ip_csv<R: Read>(r: R) -> std::io::Result<Parsed<IpCsvRow>> {
    let mut rows = Vec::new();
    let mut n = 0u64;
    let errors = records(
        r,
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .comment(Some(b'#')),
        |line, rec| {
            n += 1;
            if n == 1 && field(rec, 0).eq_ignore_ascii_case("start") {
                return Ok(());
            }
            if rec.len() == 1 && field(rec, 0).is_empty() {
                return Ok(());
            }
            rows.push((line, ip_row(rec)?));
            Ok(())
        },
    )?;
    Ok(Parsed { rows, errors })
}

fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u32>()
            .map(|v| IpAddr::from(std::net::Ipv4Addr::from(v)))
            .map_err(|_| format!("IPv4 number {s:?} is out of range"));
    }
    IpAddr::from_str(s).map_err(|_| format!("{s:?} is not an IP address"))
}

fn ip_row(rec: &csv::ByteRecord) -> Result<IpCsvRow, String> {
    if rec.len() < 3 || rec.len() > 5 {
        return Err(format!("expected 3 to 5 fields, found {}", rec.len()));
    }
    let start = parse_ip(field(rec, 0))?;
    let end = parse_ip(field(rec, 1))?;
    match (start, end) {
        (IpAddr::V4(a), IpAddr::V4(b)) if a <= b => {}
        (IpAddr::V6(a), IpAddr::V6(b)) if a <= b => {}
        (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
            return Err(format!("range {start}..{end} ends before it starts"))
        }
        _ => return Err(format!("range {start}..{end} mixes IPv4 and IPv6")),
    }
    let country = field(rec, 2).to_ascii_uppercase();
    if country.len() != 2 || !country.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "country {:?} is not ISO 3166-1 alpha-2",
            field(rec, 2)
        ));
    }
    let mut region = name(field(rec, 3))
        .map_err(|e| format!("region {e}"))?
        .to_ascii_uppercase();
    // Accept `US-TN` as well as `TN`.
    if let Some(rest) = region.strip_prefix(&format!("{country}-")) {
        region = rest.to_string();
    }
    Ok(IpCsvRow {
        start,
        end,
        country,
        region,
        postal: name(field(rec, 4)).map_err(|e| format!("postal code {e}"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact() {
        // 7.7499999999999999E-2 is 0.077499999999999999 exactly; CDTFA publishes 7.75%.
        assert_eq!(
            parse_rate("7.7499999999999999E-2").unwrap().to_string(),
            "0.077499999999999999"
        );
        assert_eq!(parse_rate("0.097500").unwrap().to_string(), "0.0975");
        assert!(parse_rate("1.5").is_err());
        assert!(parse_rate("-0.01").is_err());
        assert!(parse_rate("abc").is_err());
    }

    #[test]
    fn cdtfa_without_header_reports_a_line_in_the_input() {
        // Found by fuzzing: `,\r,` is two csv records (a bare CR ends a record) on one line;
        // the missing-header error must name line 1, not the record count 2.
        let parsed = parse_cdtfa(&b",\r,"[..]).unwrap();
        assert!(parsed.rows.is_empty());
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].line, 1);
        assert!(parsed.errors[0].message.contains("header"));
        // Two title lines and no header: the error is on the last line read, line 2.
        let parsed = parse_cdtfa(&b"title\nsubtitle\n"[..]).unwrap();
        assert_eq!(parsed.errors[0].line, 2);
    }

    #[test]
    fn sst_open_end_dates() {
        assert_eq!(sst_date("29991231").unwrap(), Date::MAX);
        assert_eq!(sst_date("99991231").unwrap(), Date::MAX);
        assert_eq!(
            sst_date("20110101").unwrap(),
            Date::from_ymd(2011, 1, 1).unwrap()
        );
        assert!(sst_date("20110230").is_err());
    }

    #[test]
    fn a_line_longer_than_the_limit_fails_the_file_without_holding_it() {
        // An endless line (a file of one 200 MB line, or a device): the reader gives up
        // once the line passes MAX_LINE, having held about that much, and names the line.
        let endless = std::io::Read::take(std::io::repeat(b'x'), 1 << 40);
        let e = parse_zip5(endless).unwrap_err();
        assert!(e.to_string().contains("line 1 is longer than"), "{e}");
        let text = format!("{}\n{}\n", "State,ZipCode", "y".repeat(MAX_LINE + 1));
        let e = parse_sst_rates(text.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("line 2 is longer than"), "{e}");
    }

    #[test]
    fn names_lose_their_control_characters_and_echoed_fields_are_cut() {
        // A NUL and a tab inside a region name are dropped from the name.
        let row = "TN,37203,NASH\u{0}VILLE\tTOWN,0.0925,0.07,0.0225,0,0,0\n";
        let parsed = parse_zip5(row.as_bytes()).unwrap();
        assert_eq!(parsed.rows[0].1.region_name, "NASHVILLETOWN");
        // A 5,000-character bad field comes back cut, saying how long the message was.
        let bad = format!(
            "47,00,{},0.07,0.07,0.04,0.04,20260101,29991231\n",
            "9".repeat(5_000)
        );
        let parsed = parse_sst_rates(bad.as_bytes()).unwrap();
        let m = &parsed.errors[0].message;
        assert!(
            m.len() < MAX_MESSAGE + 40 && m.contains("bytes in all"),
            "{m}"
        );
    }

    #[test]
    fn every_formats_names_are_read_alike() {
        // An IP range file's region and postal code lose their control characters (ESC,
        // BEL); one over 100 characters is a bad row naming its line, as a ZIP5 table's
        // TaxRegionName and a CDTFA location are.
        let text = format!(
            "1.0.0.0,1.0.0.255,US,\u{1b}[2JTN\u{7},37203\u{1b}[0m\n             2.0.0.0,2.0.0.255,US,TN,{}\n",
            "9".repeat(101)
        );
        let parsed = parse_ip_csv(text.as_bytes()).unwrap();
        assert_eq!(
            (
                parsed.rows[0].1.region.as_str(),
                parsed.rows[0].1.postal.as_str()
            ),
            ("[2JTN", "37203[0m")
        );
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].line, 2);
        assert!(
            parsed.errors[0].message.contains("postal code"),
            "{:?}",
            parsed.errors
        );
        let cdtfa = format!(
            "title\nLocation,Rate,County,Type,Notes\n\u{1b}]0;x\u{7}Bell,0.095,Los Angeles,City,\n{},0.095,Los Angeles,City,\n",
            "B".repeat(101)
        );
        let parsed = parse_cdtfa(cdtfa.as_bytes()).unwrap();
        assert_eq!(parsed.rows[0].1.location, "]0;xBell");
        assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
        assert_eq!(parsed.errors[0].line, 4);
        assert!(
            parsed.errors[0].message.starts_with("Location"),
            "{:?}",
            parsed.errors
        );
        // 100 characters are a name; 101 are not.
        assert_eq!(name(&"N".repeat(100)).unwrap().len(), 100);
        assert!(name(&"N".repeat(101)).is_err());
    }
}
