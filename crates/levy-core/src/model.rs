//! The data a table holds, as it is archived with rkyv.
//!
//! These are plain owned structs; [`crate::TableBuilder`] fills them and sorts every index,
//! and [`crate::Table`] reads their archived form in place without deserializing. All
//! indexes are sorted arrays, so a lookup is a binary search over memory that is already
//! mapped and nothing on the lookup path allocates.
//!
//! Decimal values are stored as the 16 bytes of [`rust_decimal::Decimal::serialize`], which is
//! exact for every decimal and costs a few shifts to read back.

use rkyv::{Archive, Deserialize, Serialize};

/// A decimal stored in a table: the 16 bytes of `Decimal::serialize`.
pub type StoredDecimal = [u8; 16];

/// The root of a table's archive.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[rkyv(derive(Debug))]
pub struct TableData {
    /// Every input the table was built from, in the order they were layered.
    pub manifest: Vec<SourceEntry>,
    /// Every jurisdiction; the index into this array is the jurisdiction id.
    pub jurisdictions: Vec<JurisdictionRecord>,
    /// The product tax codes, sorted by name; the index is the tax code id.
    pub tax_codes: Vec<TaxCodeRecord>,
    /// Product categories as the interface names them, sorted by name, each to a tax code.
    pub categories: Vec<CategoryRecord>,
    /// Tax rules sorted by (jurisdiction, tax code, from, order written).
    pub rules: Vec<RuleRecord>,
    /// What the hot path reads of each rule, parallel to `rules`: 24 bytes a rule instead
    /// of some 150, so that finding a jurisdiction's rules for a tax code touches few cache
    /// lines, and a plain rule is taxed in integers.
    pub rule_keys: Vec<RuleKey>,
    /// `rule_start[j]..rule_start[j + 1]` are the rules of jurisdiction `j`.
    pub rule_start: Vec<u32>,
    /// Sales tax holidays, in the order written.
    pub holidays: Vec<HolidayRecord>,
    /// The holidays by place: one key per holiday, sorted by (country, region, from), so
    /// that a calculation finds a region's holidays with one binary search.
    pub holiday_keys: Vec<HolidayKey>,
    /// Jurisdiction sets: `jset_start[s]..jset_start[s + 1]` index into `jset_items`.
    pub jset_start: Vec<u32>,
    /// Flattened jurisdiction ids of every set, each set sorted by level then id.
    pub jset_items: Vec<u32>,
    /// Dense ZIP5 index: `zip5[z]` is an index into `zips`, or `u32::MAX` for an unknown ZIP.
    /// Empty when the table holds no US ZIP codes.
    pub zip5: Vec<u32>,
    /// US ZIP codes with what resolving to them means.
    pub zips: Vec<ZipRecord>,
    /// The places that share a ZIP code with others of different taxes, each under the city
    /// name a buyer may write, sorted by (ZIP, key, from): an address in the ZIP that names
    /// one of them is answered with its set, on the days it is in force. Kept apart from the
    /// ZIP records, which most ZIPs (one place each) would otherwise pay a list for.
    pub zip_cities: Vec<ZipCity>,
    /// ZIP+4 ranges sorted by (zip5, low plus-4).
    pub zip4: Vec<Zip4Record>,
    /// Street address ranges sorted by (zip5, street name, low house number).
    pub streets: Vec<StreetRecord>,
    /// Regions (US states, Canadian provinces, whole countries) sorted by (country, region).
    pub regions: Vec<RegionRecord>,
    /// Non-US postal codes or prefixes sorted by (country, prefix).
    pub postal_prefixes: Vec<PostalPrefixRecord>,
    /// IPv4 ranges sorted by start, not overlapping.
    pub ipv4: Vec<Ipv4Record>,
    /// First-level IPv4 index: `ipv4_top[h]` is the number of ranges whose start's upper
    /// [`TableData::ipv4_top_bits`] bits are below `h` (`2^bits + 1` entries), so that a
    /// lookup searches one block's ranges instead of all of them: 65,537 entries over
    /// 65,536-address blocks (`/16`) for a table of 4,096 ranges or more, 1,048,577 over
    /// 4,096-address blocks (`/20`) from 1,048,576 ranges (a city-level IP database), where
    /// a `/16` block holds dozens of ranges. Empty in a table of fewer than 4,096
    /// ranges, which a plain binary search serves as well.
    pub ipv4_top: Vec<u32>,
    /// How many upper bits of an address [`TableData::ipv4_top`] indexes: 16 or 20 as
    /// `levy build` chooses, 1 to 24 as a builder may ask
    /// ([`crate::TableBuilder::ipv4_index_bits`]), 0 with no index. A table whose index
    /// does not have `2^bits + 1` entries is searched without it.
    pub ipv4_top_bits: u8,
    /// Upper 64 bits of each IPv6 range start, parallel to `ipv6`, for a cheap first search.
    pub ipv6_prefix: Vec<u64>,
    /// IPv6 ranges sorted by start, not overlapping.
    pub ipv6: Vec<Ipv6Record>,
    /// The places IP ranges point to.
    pub ip_locations: Vec<IpLocationRecord>,
    /// The cells of the taxability matrix: how each place treats each product tax code,
    /// each with its source, in the order written.
    pub taxability: Vec<TaxabilityRecord>,
    /// One key per (cell, tax code), sorted by (place, tax code, from): what a calculation
    /// searches to know whether a line's treatment in its place is known.
    pub taxability_keys: Vec<TaxabilityKey>,
    /// Per-order fees on retail deliveries (Colorado's and Minnesota's retail delivery
    /// fees), in the order written: see [`FeeRecord`].
    pub fees: Vec<FeeRecord>,
}

/// A fee charged once per retail delivery into a state, apart from its sales tax. Its
/// amounts are the rules of its own jurisdiction (one per component and period, each with
/// the component's amount as its fee and the component's name as its rate type), which no
/// jurisdiction set holds: they apply to a sale only through this record.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct FeeRecord {
    /// The fee's jurisdiction (its rules are the components).
    pub jurisdiction: u32,
    /// The state it applies in (USPS abbreviation).
    pub region: String,
    /// Whether the delivery's taxable items must total at least `min_taxable` (`true`), or
    /// one taxable item is enough (`false`).
    pub needs_min_taxable: bool,
    /// The least total of taxable items, in major units, before tax.
    pub min_taxable: StoredDecimal,
    /// Whether a buyer exempt from the state's sales tax owes no fee.
    pub exempt_buyers: bool,
    /// The small-seller exemption: 0 none; 1 exempt when the seller's sales in the state in
    /// the previous calendar year are at most `small_seller_amount`; 2 when they are less.
    pub small_seller_rule: u8,
    /// The small-seller threshold, in major units.
    pub small_seller_amount: StoredDecimal,
    /// The first day of the small-seller exemption.
    pub small_seller_from: i32,
    /// Tax codes whose lines neither make a delivery nor count toward `min_taxable` (with
    /// their descendants).
    pub excluded_codes: Vec<u32>,
    /// The periods whose amounts are not known, as (from, to) inclusive: a delivery then is
    /// answered without the fee and says so.
    pub unknown: Vec<(i32, i32)>,
    /// The first day of the fee (of its first period, known or not).
    pub from: i32,
    /// Index into the manifest of the source that wrote it.
    pub source: u32,
}

/// One input of a build.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct SourceEntry {
    /// The kind of input (`zip5`, `sst-rates`, `curated`, ...).
    pub kind: String,
    /// The file name, without the folder it was read from.
    pub name: String,
    /// Lower-case hex SHA-256 of the file's bytes.
    pub sha256: String,
    /// Rows read and used.
    pub rows_read: u64,
    /// Rows skipped as bad or out of scope.
    pub rows_skipped: u64,
    /// The period the input covers, as its publisher states it (for example `2025-12`).
    pub period: String,
    /// The publication the rates of the rules that point here come from, when the input
    /// names it rather than being it (a local rates file's county, district or city source:
    /// `Florida Department of Revenue, Form DR-15DSS ...`); empty for an input that is the
    /// publication itself (a rate file, the CDTFA list).
    pub publication: String,
    /// The last day the input is known to hold what is in force (as [`crate::Date`] days):
    /// the day before its publisher's next edition is due, or as levy sets it where the
    /// publisher does not say (see `levy_build::horizon`). A sale dated after it, taxed by
    /// a rule of this input, is answered at most `PARTIAL` with a [`crate::Stale`] note.
    /// `i32::MAX` (the default): the input makes no claim that ages (a table made by hand,
    /// IP ranges, ZIP-to-county relationships).
    pub horizon: i32,
}

impl Default for SourceEntry {
    /// An entry of no kind, name or period, without a horizon.
    fn default() -> SourceEntry {
        SourceEntry {
            kind: String::new(),
            name: String::new(),
            sha256: String::new(),
            rows_read: 0,
            rows_skipped: 0,
            period: String::new(),
            publication: String::new(),
            horizon: i32::MAX,
        }
    }
}

/// A taxing jurisdiction.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct JurisdictionRecord {
    /// Stable code: FIPS in the US (`47` Tennessee, `47037` Davidson County), ISO 3166
    /// elsewhere (`DE`, `CA-ON`), or a code the source defines for districts.
    pub code: String,
    /// Name, for example `TENNESSEE` or `DAVIDSON`.
    pub name: String,
    /// Level, one of the `level` constants in [`crate::Level`].
    pub level: u8,
    /// ISO 3166-1 alpha-2 country.
    pub country: [u8; 2],
    /// Region (US state, Canadian province) the jurisdiction lies in; empty for countries.
    pub region: String,
    /// The authority that levies the tax, for example `TENNESSEE DEPARTMENT OF REVENUE`.
    pub authority: String,
    /// Tax type, one of [`crate::TaxType`].
    pub tax_type: u8,
}

/// A product tax code.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct TaxCodeRecord {
    /// Name, for example `CLOTHING_GENERAL`.
    pub name: String,
    /// The tax code whose rules apply when a jurisdiction has none for this one, or
    /// `u32::MAX` at the top of the taxonomy.
    pub parent: u32,
    /// One line saying what the code covers.
    pub description: String,
    /// Whether the code is a delivery charge's: it, or a code above it, has a rule that
    /// taxes in proportion to the goods (`RuleRecord::proportional`). A sale's lines of such
    /// codes are not goods when the goods' taxable share is worked out.
    pub delivery: bool,
    /// Whether every place's row of the taxability matrix must say how the code is treated
    /// there. A code without it is treated as its parent everywhere (its parent's cell
    /// covers it); the roots are known everywhere.
    pub matrix: bool,
    /// The term of the Streamlined Sales and Use Tax Agreement's Library of Definitions the
    /// code implements (`Prepared food`); empty for a code beyond it.
    pub sst: String,
}

/// A product category name and the tax code it maps to.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct CategoryRecord {
    /// The category as the interface writes it, for example `CLOTHING`.
    pub name: String,
    /// Tax code id.
    pub tax_code: u32,
}

/// One tax rule: a rate on a band of each unit's price, in force over a date interval.
///
/// For a unit price `u`, the taxable base is the part of `u` between `base_min` and
/// `base_max`, and only when `unit_min <= u < unit_max`; the tax is `rate` times that base,
/// plus `fee` per unit. Tiers, caps and thresholds are data in these fields, not code.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct RuleRecord {
    /// Jurisdiction id.
    pub jurisdiction: u32,
    /// Tax code id the rule is written for.
    pub tax_code: u32,
    /// First day in force.
    pub from: i32,
    /// Last day in force (inclusive).
    pub to: i32,
    /// Rate as a fraction (0.07 for 7%).
    pub rate: StoredDecimal,
    /// Lower edge of the taxed band of the unit price, in major units.
    pub base_min: StoredDecimal,
    /// Upper edge of the taxed band, in major units; `Decimal::MAX` for none.
    pub base_max: StoredDecimal,
    /// The rule applies only to units priced at least this, in major units.
    pub unit_min: StoredDecimal,
    /// The rule applies only to units priced below this, in major units; `Decimal::MAX` for none.
    pub unit_max: StoredDecimal,
    /// A fixed fee per unit, in major units.
    pub fee: StoredDecimal,
    /// Rate type label, for example `GENERAL STATE SALES TAX`.
    pub rate_type: String,
    /// Index into the manifest of the source that wrote the rule.
    pub source: u32,
    /// A delivery charge's rule: the rate applies to the line in proportion to how much of
    /// the sale's goods (its lines without such a rule) the jurisdiction taxes.
    pub proportional: bool,
    /// A per-sale threshold's group, or 0 for a rule without one. The rule applies only when
    /// the sale's lines whose rules in the jurisdiction share the group total at most
    /// `sale_limit` before tax (or, with `sale_above`, more than it).
    pub sale_group: u32,
    /// The per-sale threshold, in major units (zero when `sale_group` is 0).
    pub sale_limit: StoredDecimal,
    /// Whether the rule applies above the threshold rather than at or below it.
    pub sale_above: bool,
}

/// One cell of the taxability matrix: how a place treats some tax codes at some levels over
/// a date interval, and where that comes from.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct TaxabilityRecord {
    /// ISO 3166-1 alpha-2 country of the place.
    pub country: [u8; 2],
    /// The place's region (a US state, a Canadian province); empty for a whole country
    /// (and for Canada's federal GST).
    pub region: String,
    /// Which levels of the place the cell speaks for, as [`crate::TaxabilityLevels`] bits.
    pub levels: u8,
    /// The levels as written (`state`, `local`, `all`, `federal`, `provincial`, `country`,
    /// or the jurisdictions a cell names).
    pub scope: String,
    /// The treatment, one of the [`crate::Treatment`] codes.
    pub treatment: u8,
    /// What the treatment charges, in words (`general rate`, `0%`, `4%`, `general rate on
    /// the part of the unit price above 175`).
    pub summary: String,
    /// The tax codes the cell names.
    pub codes: Vec<u32>,
    /// First day (inclusive).
    pub from: i32,
    /// Last day (inclusive).
    pub to: i32,
    /// The per-sale threshold the cell applies under, in major units; `Decimal::MAX` for
    /// none.
    pub sale_at_most: StoredDecimal,
    /// The rate type label of the rules it wrote.
    pub label: String,
    /// The primary source: statute, regulation or revenue department page.
    pub source: String,
    /// The day the cell was last checked against its source.
    pub as_of: i32,
    /// What the cell does and does not cover.
    pub note: String,
}

/// Where to find a place's cells for a tax code (see [`TableData::taxability_keys`]).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct TaxabilityKey {
    /// The place: country and region packed into one number, big-endian, as the holiday
    /// keys order places (two country bytes, then the region, zero-padded to six).
    pub place: u64,
    /// Tax code id.
    pub tax_code: u32,
    /// First day.
    pub from: i32,
    /// Last day (inclusive).
    pub to: i32,
    /// The levels the cell speaks for.
    pub levels: u8,
    /// The levels whose treatment the cell makes known (no bits for an `unknown` cell).
    pub known: u8,
    /// Index into `taxability`.
    pub cell: u32,
}

/// What the hot path reads of a rule (see [`TableData::rule_keys`]).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct RuleKey {
    /// The rate's mantissa: the rate is `rate_mantissa × 10^-rate_scale`, exactly the stored
    /// decimal (same value, same scale).
    pub rate_mantissa: i64,
    /// Tax code id (as `RuleRecord::tax_code`).
    pub tax_code: u32,
    /// First day in force (as `RuleRecord::from`).
    pub from: i32,
    /// Last day in force, inclusive (as `RuleRecord::to`).
    pub to: i32,
    /// The rate's scale (see `rate_mantissa`).
    pub rate_scale: u8,
    /// Whether the rule is plain (the rate on the whole amount: no band, unit range, fee or
    /// delivery share) with a rate of at most [`crate::MAX_RATE`] and a scale of at most
    /// [`RuleKey::MAX_FAST_SCALE`]: such a rule is taxed in integer arithmetic.
    pub fast: bool,
}

impl RuleKey {
    /// The largest rate scale of a fast rule: the integer path sums taxes at this scale.
    pub const MAX_FAST_SCALE: u8 = 12;
}

/// Where and when a holiday applies (see [`TableData::holiday_keys`]).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct HolidayKey {
    /// ISO 3166-1 alpha-2 country.
    pub country: [u8; 2],
    /// Region, ASCII, padded with zero bytes.
    pub region: [u8; 6],
    /// First day.
    pub from: i32,
    /// Last day (inclusive).
    pub to: i32,
    /// Index into `holidays`.
    pub holiday: u32,
}

/// A sales tax holiday.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct HolidayRecord {
    /// Name, for example `TEXAS SALES TAX HOLIDAY 2025 (CLOTHING)`.
    pub name: String,
    /// Country of the jurisdictions it exempts.
    pub country: [u8; 2],
    /// Region (state) of the jurisdictions it exempts.
    pub region: String,
    /// Whether local jurisdictions of the region are exempt too, not only the state.
    pub include_local: bool,
    /// First day.
    pub from: i32,
    /// Last day (inclusive).
    pub to: i32,
    /// Tax code ids it covers (a code covers its descendants).
    pub tax_codes: Vec<u32>,
    /// Tax code ids it does not cover although a covered code holds them (each with its
    /// descendants): Maryland's holiday covers clothing but not clothing accessories.
    pub exclude_codes: Vec<u32>,
    /// Per-item price cap in major units; `Decimal::MAX` for none.
    pub max_unit: StoredDecimal,
    /// Whether an item priced exactly at the cap qualifies.
    pub cap_inclusive: bool,
}

/// A US ZIP code.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct ZipRecord {
    /// The ZIP code as a number (37203).
    pub zip: u32,
    /// Two-letter state.
    pub state: String,
    /// Primary city, upper case.
    pub city: String,
    /// Estimated population, 0 when unknown.
    pub population: u32,
    /// What taxes the ZIP over time: sorted by `from`, not overlapping. A date no period
    /// covers is answered at the state level (the region's set and coverage).
    pub periods: Vec<ZipPeriod>,
}

/// A place that shares a ZIP code with others of different taxes, by the city name an
/// address gives (see [`TableData::zip_cities`]).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct ZipCity {
    /// The ZIP code as a number.
    pub zip: u32,
    /// The city name as [`crate::address::city_key`] writes it (`BELLGARDENS`): what a
    /// given city is compared with.
    pub key: String,
    /// The city's name as written (`BELL GARDENS`).
    pub name: String,
    /// First day in force.
    pub from: i32,
    /// Last day in force (inclusive).
    pub to: i32,
    /// Jurisdiction set of an address in the ZIP that names this city.
    pub jset: u32,
    /// What the set covers, one of the [`crate::Coverage`] codes.
    pub coverage: u8,
    /// Index into the manifest of the source that wrote it.
    pub source: u32,
}

/// The jurisdictions of a ZIP code over one date interval, from one source.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct ZipPeriod {
    /// First day in force.
    pub from: i32,
    /// Last day in force (inclusive).
    pub to: i32,
    /// Jurisdiction set id.
    pub jset: u32,
    /// What the set covers, one of the [`crate::Coverage`] codes.
    pub coverage: u8,
    /// Why the coverage is what it is, one of the [`crate::PlaceNote`] codes (0: nothing to
    /// add).
    pub note: u8,
    /// Index into the manifest of the source that assigned it.
    pub source: u32,
}

/// A ZIP+4 range.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct Zip4Record {
    /// ZIP5.
    pub zip5: u32,
    /// First plus-4 (inclusive).
    pub low: u16,
    /// Last plus-4 (inclusive).
    pub high: u16,
    /// Jurisdiction set id.
    pub jset: u32,
    /// First day in force.
    pub from: i32,
    /// Last day in force (inclusive).
    pub to: i32,
}

/// A street address range, as the SST boundary files define them.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct StreetRecord {
    /// ZIP5.
    pub zip5: u32,
    /// Normalized street: directional, name and suffix, for example `N MAIN ST`.
    pub street: String,
    /// Lowest house number (inclusive).
    pub low: u32,
    /// Highest house number (inclusive).
    pub high: u32,
    /// `b'O'` odd numbers only, `b'E'` even only, `b'B'` both.
    pub parity: u8,
    /// Jurisdiction set id.
    pub jset: u32,
    /// First day in force.
    pub from: i32,
    /// Last day in force (inclusive).
    pub to: i32,
}

/// A region: a US state, a Canadian province, or a whole country (empty region).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct RegionRecord {
    /// ISO 3166-1 alpha-2.
    pub country: [u8; 2],
    /// ISO 3166-2 subdivision without the country (`TN`, `ON`); empty for the whole country.
    pub region: String,
    /// Name.
    pub name: String,
    /// Jurisdiction set that applies region-wide (the state alone, or the country's VAT).
    pub jset: u32,
    /// The region's most populous postal code, used by `approximate` IP resolution; empty
    /// when unknown.
    pub main_postal: String,
    /// What an answer at the region level covers, one of the [`crate::Coverage`] codes:
    /// `FULL` where no local taxes exist (a VAT country, a province, a state without local
    /// sales taxes), `STATE_ONLY` where they do.
    pub coverage: u8,
    /// The levels (bits `1 << Level`) that the table's places in this region name: what
    /// its sources cover there.
    pub levels: u8,
    /// How an intrastate sale is sourced, one of the [`crate::Sourcing`] codes.
    pub sourcing: u8,
    /// For [`crate::Sourcing::OriginWithUseTax`]: the cap on the local rates, as a fraction.
    pub local_cap: StoredDecimal,
    /// Whether the region lets a seller round a sale's tax once for the whole invoice
    /// ([`crate::Rounding::Invoice`]) rather than line by line.
    pub invoice_rounding: bool,
}

/// A non-US postal code or prefix (a Canadian forward sortation area's first letter, say).
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct PostalPrefixRecord {
    /// ISO 3166-1 alpha-2.
    pub country: [u8; 2],
    /// Normalized prefix (upper case, no spaces).
    pub prefix: String,
    /// Region it lies in.
    pub region: String,
    /// Jurisdiction set, or `u32::MAX` to use the region's.
    pub jset: u32,
}

/// An IPv4 range.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct Ipv4Record {
    /// First address.
    pub start: u32,
    /// Last address (inclusive).
    pub end: u32,
    /// Index into `ip_locations`.
    pub location: u32,
}

/// An IPv6 range.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct Ipv6Record {
    /// First address, as big-endian bytes.
    pub start: [u8; 16],
    /// Last address (inclusive), as big-endian bytes.
    pub end: [u8; 16],
    /// Index into `ip_locations`.
    pub location: u32,
}

/// Where an IP range is.
#[derive(Archive, Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[rkyv(derive(Debug))]
pub struct IpLocationRecord {
    /// ISO 3166-1 alpha-2.
    pub country: [u8; 2],
    /// ISO 3166-2 subdivision without the country; empty when unknown.
    pub region: String,
    /// City; empty when unknown.
    pub city: String,
    /// Postal code as the IP database gives it; empty when unknown.
    pub postal: String,
    /// A postal code near the range's coordinates in its region, used only when a caller
    /// asks to approximate; empty when unknown.
    pub approx_postal: String,
    /// Latitude in millionths of a degree; `i32::MIN` when unknown.
    pub lat_e6: i32,
    /// Longitude in millionths of a degree; `i32::MIN` when unknown.
    pub lon_e6: i32,
}

/// Reads a stored decimal. A malformed value (possible only in a damaged table opened
/// without `verify`) reads as zero rather than panicking.
#[inline]
pub(crate) fn load_decimal(bytes: &[u8; 16]) -> rust_decimal::Decimal {
    let flags = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let scale = (flags >> 16) & 0xff;
    if scale > 28 || flags & 0x7f00_ffff != 0 {
        return rust_decimal::Decimal::ZERO;
    }
    rust_decimal::Decimal::deserialize(*bytes)
}

/// Stores a decimal for a table.
#[inline]
pub(crate) fn store_decimal(d: rust_decimal::Decimal) -> [u8; 16] {
    d.serialize()
}
