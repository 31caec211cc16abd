//! A calculation record's binary layout, which the SQLite ledger compresses and seals as
//! format 3 (see [`super::pack`]).
//!
//! The record's JSON is mostly the names of its fields and words that every calculation
//! repeats. Written field by field in a fixed order instead, a one-line calculation in two
//! jurisdictions takes about a third of the bytes, and the work of a request's most
//! frequent write (writing JSON, then compressing all of it) shrinks with it.
//!
//! Layout 2 is layout 1 with each jurisdiction entry's taxable base after its other fields
//! (a byte 0 when absent, else a byte 1 and the decimal); layout 1 records are still read
//! (their entries have no base).
//!
//! Layout 1, fields in the order of [`CalculationRecord`]'s declaration:
//!
//! - a string is its length in bytes (LEB128) and its UTF-8 bytes; an optional string is
//!   0 when absent, else its length plus one, then its bytes;
//! - an `i64` is 8 bytes, a `u32` 4, little-endian; a `bool` one byte, 0 or 1;
//! - a [`Decimal`] is its flags word (sign and scale, little-endian `u32`), a byte `n`
//!   (at most 12), then the low `n` bytes of its 96-bit mantissa, little-endian: the same
//!   digits and scale come back, so `700` and `700.00` stay apart;
//! - a list is its length (LEB128), then its items;
//! - the table hash is a byte 1 and 32 bytes when it is 64 lower-case hex digits (as levy
//!   writes it), else a byte 0 and the string;
//! - the metadata is an optional string holding its JSON text.
//!
//! The layout is fixed for ever once written: a change to the record's fields is a new
//! format byte (with its own layout), and records of this one are still read. A test
//! pins the bytes a sample record packs to, and the writer takes the record apart field by
//! field, so a field added to it does not compile until a layout places it.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use super::seal::damaged;
use super::StoreError;
use crate::store::CustomerKind;
use crate::store::{CalculationRecord, JurisdictionRecord, LineRecord, PlaceRecord};

/// Appends `record` in layout 2 (the newest) to `out`. Fails only if its metadata cannot be written as
/// JSON (a map of JSON values always can).
pub(super) fn write_calculation(
    out: &mut Vec<u8>,
    record: &CalculationRecord,
) -> Result<(), StoreError> {
    let CalculationRecord {
        id,
        created_at,
        expires_at,
        transacted_at,
        currency,
        tax_included,
        automatic_tax,
        customer_id,
        customer_type,
        place,
        lines,
        total_tax,
        total_excluding_tax,
        total_including_tax,
        table_hash,
        metadata,
    } = record;
    let mut w = Writer(out);
    w.str(id);
    for t in [created_at, expires_at, transacted_at] {
        w.0.extend_from_slice(&t.to_le_bytes());
    }
    w.str(currency);
    w.0.push(u8::from(*tax_included));
    w.str(automatic_tax);
    w.opt_str(customer_id.as_deref());
    w.str(customer_type.as_str());
    let PlaceRecord {
        status,
        precision,
        source,
        line1,
        line2,
        city,
        region,
        postal_code,
        country,
    } = place;
    for s in [
        status,
        precision,
        source,
        line1,
        line2,
        city,
        region,
        postal_code,
        country,
    ] {
        w.str(s);
    }
    w.len(lines.len());
    for line in lines {
        w.line(line);
    }
    for d in [total_tax, total_excluding_tax, total_including_tax] {
        w.decimal(d);
    }
    match hex32(table_hash) {
        Some(bytes) => {
            w.0.push(1);
            w.0.extend_from_slice(&bytes);
        }
        None => {
            w.0.push(0);
            w.str(table_hash);
        }
    }
    let metadata = metadata
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(StoreError::ledger)?;
    w.opt_str(metadata.as_deref());
    Ok(())
}

/// Reads a record in layout `layout` (1 or 2) that fills `bytes` exactly. Anything else (cut short, a
/// length past the end, text that is not UTF-8, a decimal or flag out of range, bytes
/// left over) is a damaged record.
pub(super) fn read_calculation(bytes: &[u8], layout: u8) -> Result<CalculationRecord, StoreError> {
    let mut r = Reader(bytes);
    let id = r.string()?;
    let created_at = r.i64()?;
    let expires_at = r.i64()?;
    let transacted_at = r.i64()?;
    let currency = r.string()?;
    let tax_included = r.bool()?;
    let automatic_tax = r.string()?;
    let customer_id = r.opt_string()?;
    let customer_type =
        CustomerKind::parse(&r.string()?).ok_or_else(|| damaged("customer type"))?;
    let place = PlaceRecord {
        status: r.string()?,
        precision: r.string()?,
        source: r.string()?,
        line1: r.string()?,
        line2: r.string()?,
        city: r.string()?,
        region: r.string()?,
        postal_code: r.string()?,
        country: r.string()?,
    };
    let n = r.len()?;
    let mut lines = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        lines.push(r.line(layout)?);
    }
    let total_tax = r.decimal()?;
    let total_excluding_tax = r.decimal()?;
    let total_including_tax = r.decimal()?;
    let table_hash = match r.byte()? {
        1 => hex::encode(r.take(32)?),
        0 => r.string()?,
        _ => return Err(damaged("table hash tag out of range")),
    };
    let metadata = match r.opt_string()? {
        None => None,
        Some(text) => Some(
            serde_json::from_str::<Map<String, Value>>(&text)
                .map_err(|_| damaged("metadata is not a JSON object"))?,
        ),
    };
    if !r.0.is_empty() {
        return Err(damaged("bytes after the record"));
    }
    Ok(CalculationRecord {
        id,
        created_at,
        expires_at,
        transacted_at,
        currency,
        tax_included,
        automatic_tax,
        customer_id,
        customer_type,
        place,
        lines,
        total_tax,
        total_excluding_tax,
        total_including_tax,
        table_hash,
        metadata,
    })
}

/// The 32 bytes of 64 lower-case hex digits; `None` for any other text (which would not
/// come back the same from bytes).
fn hex32(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    let ok = s.len() == 64
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && hex::decode_to_slice(s, &mut out).is_ok();
    ok.then_some(out)
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn len(&mut self, mut n: usize) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.len(s.len() + 1);
                self.0.extend_from_slice(s.as_bytes());
            }
        }
    }

    fn decimal(&mut self, d: &Decimal) {
        let b = d.serialize();
        self.0.extend_from_slice(&b[..4]);
        let mantissa = &b[4..];
        let n = mantissa.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
        self.0.push(n as u8);
        self.0.extend_from_slice(&mantissa[..n]);
    }

    fn line(&mut self, line: &LineRecord) {
        let LineRecord {
            line_item_id,
            reference_product_id,
            reference_product_name,
            reference_line_item_id,
            product_tax_code,
            quantity,
            amount_excluding_tax,
            tax_amount,
            amount_including_tax,
            jurisdictions,
        } = line;
        self.str(line_item_id);
        for s in [
            reference_product_id,
            reference_product_name,
            reference_line_item_id,
        ] {
            self.opt_str(s.as_deref());
        }
        self.str(product_tax_code);
        self.0.extend_from_slice(&quantity.to_le_bytes());
        for d in [amount_excluding_tax, tax_amount, amount_including_tax] {
            self.decimal(d);
        }
        self.len(jurisdictions.len());
        for j in jurisdictions {
            self.jurisdiction(j);
        }
    }

    fn jurisdiction(&mut self, j: &JurisdictionRecord) {
        let JurisdictionRecord {
            tax_rate,
            tax_due,
            fee,
            rate_type,
            jurisdiction_name,
            jurisdiction_code,
            authority_name,
            authority_type,
            tax_type,
            note,
            rule_id,
            exemption_certificate_id,
            taxable_base,
        } = j;
        for d in [tax_rate, tax_due, fee] {
            self.decimal(d);
        }
        for s in [
            rate_type,
            jurisdiction_name,
            jurisdiction_code,
            authority_name,
            authority_type,
            tax_type,
            note,
        ] {
            self.str(s);
        }
        self.0.extend_from_slice(&rule_id.to_le_bytes());
        self.opt_str(exemption_certificate_id.as_deref());
        // Layout 2: the taxable base, a byte 0 when absent, else 1 and the decimal.
        match taxable_base {
            None => self.0.push(0),
            Some(d) => {
                self.0.push(1);
                self.decimal(d);
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], StoreError> {
        if n > self.0.len() {
            return Err(damaged("record cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, StoreError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn i64(&mut self) -> Result<i64, StoreError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, StoreError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn bool(&mut self) -> Result<bool, StoreError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(damaged("flag out of range")),
        }
    }

    /// A LEB128 number.
    fn leb128(&mut self) -> Result<u64, StoreError> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(damaged("length too long"))
    }

    /// At most what the bytes left could hold, so that a damaged length never makes the
    /// reader allocate.
    fn bounded(&self, n: u64) -> Result<usize, StoreError> {
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.0.len())
            .ok_or_else(|| damaged("length past the end of the record"))
    }

    /// A length (of a string or a list: each item takes at least a byte).
    fn len(&mut self) -> Result<usize, StoreError> {
        let n = self.leb128()?;
        self.bounded(n)
    }

    fn text(&mut self, n: usize) -> Result<String, StoreError> {
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| damaged("text is not UTF-8"))
    }

    fn string(&mut self) -> Result<String, StoreError> {
        let n = self.len()?;
        self.text(n)
    }

    fn opt_string(&mut self) -> Result<Option<String>, StoreError> {
        match self.leb128()? {
            0 => Ok(None),
            n => {
                let n = self.bounded(n - 1)?;
                self.text(n).map(Some)
            }
        }
    }

    fn decimal(&mut self) -> Result<Decimal, StoreError> {
        let flags = self.u32()?;
        // Sign (bit 31) and scale (bits 16 to 20, at most 28); every other bit clear.
        if flags & !0x801F_0000 != 0 || (flags >> 16) & 0x1F > 28 {
            return Err(damaged("decimal out of range"));
        }
        let n = usize::from(self.byte()?);
        if n > 12 {
            return Err(damaged("decimal out of range"));
        }
        let mut b = [0u8; 16];
        b[..4].copy_from_slice(&flags.to_le_bytes());
        b[4..4 + n].copy_from_slice(self.take(n)?);
        Ok(Decimal::deserialize(b))
    }

    fn line(&mut self, layout: u8) -> Result<LineRecord, StoreError> {
        let line_item_id = self.string()?;
        let reference_product_id = self.opt_string()?;
        let reference_product_name = self.opt_string()?;
        let reference_line_item_id = self.opt_string()?;
        let product_tax_code = self.string()?;
        let quantity = self.u32()?;
        let amount_excluding_tax = self.decimal()?;
        let tax_amount = self.decimal()?;
        let amount_including_tax = self.decimal()?;
        let n = self.len()?;
        let mut jurisdictions = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            jurisdictions.push(JurisdictionRecord {
                tax_rate: self.decimal()?,
                tax_due: self.decimal()?,
                fee: self.decimal()?,
                rate_type: self.string()?,
                jurisdiction_name: self.string()?,
                jurisdiction_code: self.string()?,
                authority_name: self.string()?,
                authority_type: self.string()?,
                tax_type: self.string()?,
                note: self.string()?,
                rule_id: self.u32()?,
                exemption_certificate_id: self.opt_string()?,
                taxable_base: match layout {
                    1 => None,
                    _ => match self.byte()? {
                        0 => None,
                        1 => Some(self.decimal()?),
                        _ => return Err(damaged("flag out of range")),
                    },
                },
            });
        }
        Ok(LineRecord {
            line_item_id,
            reference_product_id,
            reference_product_name,
            reference_line_item_id,
            product_tax_code,
            quantity,
            amount_excluding_tax,
            tax_amount,
            amount_including_tax,
            jurisdictions,
        })
    }
}
