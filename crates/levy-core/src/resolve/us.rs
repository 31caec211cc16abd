//! US resolution: a street range, a ZIP+4 range, a ZIP code or its named places, else the
//! state (see the parent module's table).

use crate::address::{city_key, parse_street_line, parse_us_zip, trim, StreetLine};
use crate::date::Date;
use crate::kinds::{Coverage, PlaceNote};
use crate::lookup::JsetId;
use crate::model::{ArchivedZip4Record, ArchivedZipCity, ArchivedZipPeriod, ArchivedZipRecord};
use std::fmt::Write as _;

use crate::table::Table;

use super::{
    set, set_upper, Address, Location, LocationSource, Precision, ResolutionStatus, ResolveError,
};

/// `37203` or `37203-1234`.
fn zip_text(zip5: u32, plus4: Option<u16>) -> String {
    let mut s = String::with_capacity(10);
    push_zip(&mut s, zip5, plus4);
    s
}

/// Appends `37203` or `37203-1234`, without the formatting machinery (this is on the hot
/// path).
fn push_zip(s: &mut String, zip5: u32, plus4: Option<u16>) {
    push_digits(s, zip5, 5);
    if let Some(p) = plus4 {
        s.push('-');
        push_digits(s, u32::from(p), 4);
    }
}

/// Appends the last `width` decimal digits of `n`, zeros first.
fn push_digits(s: &mut String, n: u32, width: u32) {
    for i in (0..width).rev() {
        s.push(char::from(b'0' + (n / 10u32.pow(i) % 10) as u8));
    }
}

/// Appends the text of `zip5` and `plus4`, parsed from `postal` (trimmed), as [`push_zip`]
/// writes it, copied from `postal` rather than written digit by digit: a postal code
/// [`parse_us_zip`] accepts begins with the ZIP's five digits and, when it has a plus-4,
/// ends with its four.
fn push_zip_of(s: &mut String, postal: &str, zip5: u32, plus4: Option<u16>) {
    let last4 = postal.len().checked_sub(4).and_then(|i| postal.get(i..));
    match (postal.get(..5), plus4, last4) {
        (Some(z), None, _) => s.push_str(z),
        (Some(z), Some(_), Some(p)) if postal.len() >= 9 => {
            s.push_str(z);
            s.push('-');
            s.push_str(p);
        }
        _ => push_zip(s, zip5, plus4),
    }
}

/// Appends `-1234`, the plus-4 of `postal` (trimmed), to the ZIP's five digits that
/// [`push_zip_of`] wrote into `s`: copied from the postal code's last four when it has
/// nine digits or more, as [`push_zip_of`] copies them, written from `plus4` otherwise.
fn push_plus4_of(s: &mut String, postal: &str, plus4: u16) {
    match postal.len().checked_sub(4).and_then(|i| postal.get(i..)) {
        Some(p) if postal.len() >= 9 => {
            s.push('-');
            s.push_str(p);
        }
        _ => {
            s.push('-');
            push_digits(s, u32::from(plus4), 4);
        }
    }
}

/// The jurisdiction set of `plus4` among one ZIP5's ZIP+4 `ranges` (sorted by their low
/// end) on `date`.
fn zip4_jset(ranges: &[ArchivedZip4Record], plus4: u16, date: Date) -> Option<JsetId> {
    let end = ranges.partition_point(|r| r.low.to_native() <= plus4);
    // Ranges of one ZIP5 may overlap across dates; the latest-starting one in force wins.
    ranges[..end]
        .iter()
        .rev()
        .find(|r| plus4 <= r.high.to_native() && date.within(r.from.to_native(), r.to.to_native()))
        .map(|r| JsetId(r.jset.to_native()))
}

/// The period of a ZIP in force on `date`. Periods are sorted and disjoint in a table levy
/// built; in a damaged one the search still stays in bounds.
fn zip_period(zip: &ArchivedZipRecord, date: Date) -> Option<&ArchivedZipPeriod> {
    let periods = zip.periods.as_slice();
    // Most ZIPs have one period (one source, one set): nothing to search.
    if let [p] = periods {
        return date
            .within(p.from.to_native(), p.to.to_native())
            .then_some(p);
    }
    let i = periods
        .partition_point(|p| p.from.to_native() <= date.0)
        .checked_sub(1)?;
    let p = &periods[i];
    date.within(p.from.to_native(), p.to.to_native())
        .then_some(p)
}

/// Writes the address used of a US address: its street line as parsed (`street_line`),
/// unit, city and state (`region`) in upper case, the country `US`, and no postal code yet
/// (the resolve writes the ZIP it matched).
fn write_us_address(used: &mut Address, address: &Address, region: &str, street_line: &StreetLine) {
    used.line1.clear();
    match street_line.number {
        Some(n) if !street_line.street.is_empty() => {
            let _ = write!(used.line1, "{n} {}", street_line.street);
        }
        _ if street_line.street.is_empty() => {}
        _ => used.line1.push_str(&street_line.street),
    }
    if street_line.unit.is_empty() {
        set_upper(&mut used.line2, trim(&address.line2));
    } else {
        set(&mut used.line2, &street_line.unit);
    }
    set_upper(&mut used.city, trim(&address.city));
    set(&mut used.region, region);
    used.postal_code.clear();
    if used.country != "US" {
        set(&mut used.country, "US");
    }
}

/// What decides a ZIP's place on a date: its usual answer, from memory, or its record.
enum ZipAnswer<'a> {
    Usual((JsetId, Coverage)),
    Record(&'a ArchivedZipRecord),
}

impl<D> Table<D> {
    /// `address` with ZIP `zip`'s state, and its city when it has none.
    pub(super) fn complete_address(&self, zip: Option<u32>, mut address: Address) -> Address {
        if let Some(zip) = zip.and_then(|z| self.zip_record(z)) {
            set(&mut address.region, zip.state.as_str());
            if address.city.is_empty() {
                address.city.push_str(zip.city.as_str());
            }
        }
        address
    }

    /// Places `out` at the place of ZIP `zip5` that its address's city names, on `date`;
    /// `false` when the ZIP has none by that name. Out of the way of the usual lookup: few
    /// ZIPs have such places.
    #[cold]
    #[inline(never)]
    fn place_by_named_city(
        &self,
        zip5: u32,
        status: ResolutionStatus,
        date: Date,
        out: &mut Location,
    ) -> bool {
        let Some(c) = self.zip_city(zip5, &out.address.city, date) else {
            return false;
        };
        let (jset, coverage) = (JsetId(c.jset.to_native()), Coverage::from_u8(c.coverage));
        out.place(Some(jset), status, Precision::Postal, coverage);
        true
    }

    /// What decided among the places that share the ZIP code of `location` (resolved on
    /// `date` by this table), or why its answer holds less than one place's taxes:
    /// [`PlaceNote::CityNamed`] when the city the address names chose the place,
    /// [`PlaceNote::SharedPlaces`], [`PlaceNote::SplitCounties`] or
    /// [`PlaceNote::CityNotNamed`] as the ZIP's period says, [`PlaceNote::None`] for a ZIP
    /// one place answers for, or a location a ZIP+4, a street, a region or an IP address
    /// decided. Worked out when asked, from the ZIP's record, so that resolving stays as
    /// short as it was; ask it with the date the location was resolved on.
    pub fn place_note(&self, location: &Location, date: Date) -> PlaceNote {
        let (Some(zip5), Precision::Postal) = (location.zip, location.precision) else {
            return PlaceNote::None;
        };
        if location.source == LocationSource::Address {
            let named = self.zip_city(zip5, &location.address.city, date);
            if named.is_some_and(|c| Some(JsetId(c.jset.to_native())) == location.jset) {
                return PlaceNote::CityNamed;
            }
        }
        self.zip_record(zip5)
            .and_then(|z| zip_period(z, date))
            .filter(|p| Some(JsetId(p.jset.to_native())) == location.jset)
            .map_or(PlaceNote::None, |p| PlaceNote::from_u8(p.note))
    }

    /// The place of ZIP `zip5` that the address's city names, in force on `date`: the city
    /// (upper-cased, as the address used holds it) compared as [`city_key`] writes names.
    /// `None` for a ZIP without such places, an address without a city, or a city the ZIP
    /// does not know. Read only for the few ZIPs shared by places of different taxes (their
    /// ZIP words send every lookup to the record, see `derived::zip_usual`).
    fn zip_city(&self, zip5: u32, city: &str, date: Date) -> Option<&ArchivedZipCity> {
        if city.is_empty() {
            return None;
        }
        let places = self.zip_city_records(zip5);
        if places.is_empty() {
            return None;
        }
        let key = city_key(city);
        places
            .iter()
            .find(|c| c.key.as_str() == key && date.within(c.from.to_native(), c.to.to_native()))
    }

    /// The names of the places that share the ZIP code `location` was resolved in, under
    /// which an address may name them (`BELL`, `BELL GARDENS`, `CUDAHY` in 90201), in force
    /// on `date`, each once, in name order; empty for a ZIP that one place answers for.
    pub fn zip_cities(&self, location: &Location, date: Date) -> Vec<String> {
        let Some(zip) = location.zip else {
            return Vec::new();
        };
        let mut names: Vec<String> = self
            .zip_city_records(zip)
            .iter()
            .filter(|c| date.within(c.from.to_native(), c.to.to_native()))
            .map(|c| c.name.as_str().to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    fn street_jset(&self, zip5: u32, street: &str, number: u32, date: Date) -> Option<JsetId> {
        let ranges = &self.data().streets;
        let start =
            ranges.partition_point(|r| (r.zip5.to_native(), r.street.as_str()) < (zip5, street));
        let end = start
            + ranges[start..].partition_point(|r| {
                r.zip5.to_native() == zip5
                    && r.street.as_str() == street
                    && r.low.to_native() <= number
            });
        let parity_ok = |p: u8| match p {
            b'O' => number % 2 == 1,
            b'E' => number % 2 == 0,
            _ => true,
        };
        ranges[start..end]
            .iter()
            .rev()
            .find(|r| {
                number <= r.high.to_native()
                    && parity_ok(r.parity)
                    && date.within(r.from.to_native(), r.to.to_native())
            })
            .map(|r| JsetId(r.jset.to_native()))
    }

    /// Resolves a US address (`region` its state, upper-cased, or empty): the address used
    /// is written, then a street range decides, else a ZIP+4 range, else the ZIP's own
    /// answer on `date`, else the state (see the module's table).
    ///
    /// An address by ZIP alone (no ZIP+4, no street) takes the ZIP's own answer on `date`
    /// when it has one set for all its days (most): from memory, without reading the ZIP's
    /// record. The record is read when it is needed: to check a region given beside the
    /// ZIP, for any other ZIP, and beside a ZIP+4 or a street, which decide first (a word
    /// read for them would be one more trip to memory, seldom used).
    pub(super) fn resolve_us(
        &self,
        address: &Address,
        region: &str,
        date: Date,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        let postal = trim(&address.postal_code);
        // A line without a street (the usual one of an address given by ZIP) has nothing
        // to parse.
        let no_line1 = trim(&address.line1).is_empty();
        let street_line = if no_line1 {
            StreetLine::default()
        } else {
            parse_street_line(&address.line1)
        };
        let has_street = street_line.number.is_some() && !street_line.street.is_empty();
        write_us_address(&mut out.address, address, region, &street_line);
        if postal.is_empty() {
            let (status, precision) = (ResolutionStatus::PostalOnly, Precision::Province);
            return self.region_location(out, "US", region, status, precision);
        }
        let (zip5, plus4) = parse_us_zip(postal).ok_or_else(|| {
            ResolveError::MalformedPostal(address.postal_code.clone(), "US".into())
        })?;
        let zip4_ranges = plus4.map(|_| self.zip4_ranges_fetched(zip5));
        let by_zip = plus4.is_none() && !has_street;
        let answer = match by_zip.then(|| self.zip_usual(zip5, date)).flatten() {
            Some(usual) if region.is_empty() => ZipAnswer::Usual(usual),
            usual => match self.zip_in_state(zip5, region)? {
                Some(zip) => usual.map_or(ZipAnswer::Record(zip), ZipAnswer::Usual),
                None => {
                    // A well-formed ZIP the table does not know: the state, when given.
                    push_zip_of(&mut out.address.postal_code, postal, zip5, None);
                    let status = ResolutionStatus::PostalFallback1;
                    return self.region_location(out, "US", region, status, Precision::Province);
                }
            },
        };
        // The ZIP's state, and its city when none was given, complete the address when
        // it is asked for (`Table::address_used`).
        out.zip = Some(zip5);
        push_zip_of(&mut out.address.postal_code, postal, zip5, None);
        if has_street && self.place_by_street(&street_line, (zip5, plus4), postal, date, out) {
            return Ok(());
        }
        let status = if no_line1 {
            ResolutionStatus::PostalOnly
        } else {
            ResolutionStatus::PostalFallback1
        };
        if let (Some(p4), Some(ranges)) = (plus4, zip4_ranges) {
            if let Some(jset) = zip4_jset(ranges, p4, date) {
                push_plus4_of(&mut out.address.postal_code, postal, p4);
                out.place(Some(jset), status, Precision::PostalPlus, Coverage::Full);
                return Ok(());
            }
        }
        self.place_by_zip(answer, status, date, out)
    }

    /// The ZIP+4 ranges of `zip5`, asked for all at once before the ZIP's own record is
    /// read: on a large table each is a trip to memory, and they overlap instead of
    /// following each other (the search then finds them in cache).
    #[inline]
    fn zip4_ranges_fetched(&self, zip5: u32) -> &[ArchivedZip4Record] {
        let (start, end) = self.zip4_span(zip5);
        let ranges = &self.data().zip4[start..end];
        crate::lookup::prefetch_slice(ranges);
        ranges
    }

    /// The record of ZIP `zip5`, checked against the state `region` when one is given;
    /// `None` for a ZIP the table does not know.
    fn zip_in_state(
        &self,
        zip5: u32,
        region: &str,
    ) -> Result<Option<&ArchivedZipRecord>, ResolveError> {
        let Some(zip) = self.zip_record(zip5) else {
            return Ok(None);
        };
        if !region.is_empty() && zip.state.as_str() != region {
            return Err(ResolveError::ZipStateMismatch {
                postal: zip_text(zip5, None),
                given: region.to_string(),
                actual: zip.state.as_str().to_string(),
            });
        }
        Ok(Some(zip))
    }

    /// Places `out` by the street range of `street_line` in ZIP `zip` (its ZIP5 and
    /// plus-4), if one is in force on `date`, with the plus-4 of `postal` in the address
    /// used; `false` when none matches.
    fn place_by_street(
        &self,
        street_line: &StreetLine,
        zip: (u32, Option<u16>),
        postal: &str,
        date: Date,
        out: &mut Location,
    ) -> bool {
        let (street, number) = (&street_line.street, street_line.number.unwrap_or(0));
        let Some(jset) = self.street_jset(zip.0, street, number, date) else {
            return false;
        };
        if let Some(p4) = zip.1 {
            push_plus4_of(&mut out.address.postal_code, postal, p4);
        }
        let (status, precision) = (ResolutionStatus::Exact, Precision::Street);
        out.place(Some(jset), status, precision, Coverage::Full);
        true
    }

    /// Places `out` by the ZIP's `answer` on `date`; a ZIP whose record holds no period
    /// that day is answered for its state.
    #[inline]
    fn place_by_zip(
        &self,
        answer: ZipAnswer<'_>,
        status: ResolutionStatus,
        date: Date,
        out: &mut Location,
    ) -> Result<(), ResolveError> {
        let (jset, coverage) = match answer {
            ZipAnswer::Usual(usual) => usual,
            ZipAnswer::Record(zip) => {
                // The city the address names decides among the places sharing the ZIP.
                if !out.address.city.is_empty()
                    && self.place_by_named_city(zip.zip.to_native(), status, date, out)
                {
                    return Ok(());
                }
                match zip_period(zip, date) {
                    Some(p) => (JsetId(p.jset.to_native()), Coverage::from_u8(p.coverage)),
                    // No source says what taxes this ZIP on this date: answer for its
                    // state, and say that this is all the answer covers.
                    None => {
                        let state = zip.state.as_str();
                        return self.region_location(out, "US", state, status, Precision::Province);
                    }
                }
            }
        };
        out.place(Some(jset), status, Precision::Postal, coverage);
        Ok(())
    }
}

#[cfg(test)]
mod text_tests {
    use proptest::prelude::*;

    proptest! {
        /// The ZIP text is what `format!` writes: five digits, zero-padded, then a hyphen
        /// and four for a ZIP+4; appended to what the string held.
        #[test]
        fn zip_text_is_zero_padded_digits(zip5 in 0u32..100_000, plus4 in proptest::option::of(0u16..10_000)) {
            let expected = match plus4 {
                None => format!("{zip5:05}"),
                Some(p) => format!("{zip5:05}-{p:04}"),
            };
            prop_assert_eq!(super::zip_text(zip5, plus4), expected.clone());
            let mut s = String::from("x");
            super::push_zip(&mut s, zip5, plus4);
            prop_assert_eq!(s, format!("x{expected}"));
        }

        /// A ZIP code's text is the same whether copied from the postal code it was parsed
        /// from or written from its numbers: five digits, or nine with a hyphen, a space
        /// or nothing between them; with the plus-4 or without it.
        #[test]
        fn zip_text_from_the_postal_code(zip5 in 0u32..100_000, plus4 in proptest::option::of(0u16..10_000), sep in "[- ]?") {
            let postal = match plus4 {
                None => format!("{zip5:05}"),
                Some(p) => format!("{zip5:05}{sep}{p:04}"),
            };
            let (z, p) = crate::address::parse_us_zip(&postal).unwrap();
            let mut s = String::new();
            super::push_zip_of(&mut s, &postal, z, None);
            prop_assert_eq!(&s, &format!("{zip5:05}"));
            if let Some(p4) = p {
                // The plus-4 appended to the five digits already written, as `resolve`
                // does once a ZIP+4 range or a street matches.
                let mut appended = s.clone();
                super::push_plus4_of(&mut appended, &postal, p4);
                prop_assert_eq!(&appended, &super::zip_text(zip5, plus4));
            }
            s.clear();
            super::push_zip_of(&mut s, &postal, z, p);
            prop_assert_eq!(s, super::zip_text(zip5, plus4));
        }

        /// Upper-casing into a kept string gives `str::to_uppercase`, empty and non-ASCII
        /// text included, whatever the string held before.
        #[test]
        fn set_upper_is_to_uppercase(src in "[a-zA-Z0-9 ßéı-]{0,8}", before in "[a-z]{0,4}") {
            let mut dst = before;
            super::set_upper(&mut dst, &src);
            prop_assert_eq!(dst, src.to_uppercase());
        }
    }

    #[test]
    fn zip_text_by_hand() {
        // The lowest ZIP in use (Holtsville, NY) and the ZIP+4 of the README's examples.
        assert_eq!(super::zip_text(501, None), "00501");
        assert_eq!(super::zip_text(501, Some(1)), "00501-0001");
        assert_eq!(super::zip_text(37203, Some(1234)), "37203-1234");
        // A plus-4 not found at the end of the postal code is written from its number.
        let mut s = String::from("00501");
        super::push_plus4_of(&mut s, "00501", 1);
        assert_eq!(s, "00501-0001");
    }
}
