//! The one way to make tables: [`TableBuilder`].
//!
//! `levy build` feeds it from published files; tests feed it directly. The builder sorts
//! every index and deduplicates jurisdiction sets, so the same calls in the same order give
//! byte-identical output.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;

use crate::date::Date;
use crate::kinds::TaxabilityLevels;
use crate::kinds::{Coverage, Level, PlaceNote, Sourcing, TaxType};
use crate::lookup::JurisdictionId;
use crate::model::store_decimal;
use crate::model::*;
use crate::table::encode;
use crate::taxability::Treatment;

/// Why a table could not be built. Each variant names the offending item.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A name refers to a tax code that was never added. Add it with `tax_code` first.
    #[error("unknown tax code {0:?}")]
    UnknownTaxCode(String),
    /// A tax code was added twice, or its parent chain loops.
    #[error("tax code {0:?}: {1}")]
    BadTaxCode(String, &'static str),
    /// A jurisdiction id that this builder did not hand out.
    #[error("unknown jurisdiction id {0}")]
    UnknownJurisdiction(u32),
    /// A value is out of range (a negative rate, an interval that ends before it starts).
    #[error("invalid {what}: {detail}")]
    Invalid {
        /// What was being added.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// Two IP ranges overlap; sources must not claim the same address twice.
    #[error("IP ranges overlap: {0}")]
    IpOverlap(String),
}

/// A jurisdiction to add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JurisdictionSpec {
    /// Code, unique in the table (FIPS, ISO 3166, or a source-defined district code).
    pub code: String,
    /// Name.
    pub name: String,
    /// Level.
    pub level: Level,
    /// ISO 3166-1 alpha-2 country.
    pub country: String,
    /// Region (state, province); empty for a country.
    pub region: String,
    /// The authority that levies it.
    pub authority: String,
    /// Tax type.
    pub tax_type: TaxType,
}

/// A rule to add. See [`RuleRecord`] for what the fields mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSpec {
    /// Jurisdiction.
    pub jurisdiction: JurisdictionId,
    /// Tax code name.
    pub tax_code: String,
    /// First day in force.
    pub from: Date,
    /// Last day in force (inclusive).
    pub to: Date,
    /// Rate as a fraction.
    pub rate: Decimal,
    /// Taxed band of each unit's price, major units; `None` upper edge for unbounded.
    pub band: (Decimal, Option<Decimal>),
    /// Unit prices the rule applies to, `[min, max)`, major units; `None` for unbounded.
    pub unit_range: (Decimal, Option<Decimal>),
    /// Fixed fee per unit, major units.
    pub fee: Decimal,
    /// Rate type label.
    pub rate_type: String,
    /// Manifest index of the source.
    pub source: u32,
    /// Whether the rate applies in proportion to the taxable share of the sale's goods (a
    /// delivery charge's rule; see [`crate::model::RuleRecord::proportional`]).
    pub proportional: bool,
    /// A per-sale threshold the rule applies under, if any.
    pub sale: Option<SaleCondition>,
}

/// A per-sale threshold: the rule applies only when the sale's lines whose rules in the
/// jurisdiction share `group` total at most `limit` before tax (or, with `above`, more).
/// Ontario's rebate of its part of the HST on prepared food and drinks of $4 or less in one
/// sale is two rules of one group: the federal rate at most $4, the whole HST above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaleCondition {
    /// The group, above 0: the rules written from one cell share it.
    pub group: u32,
    /// The threshold, in major units.
    pub limit: Decimal,
    /// Whether the rule applies above the threshold rather than at or below it.
    pub above: bool,
}

/// A per-order fee on retail deliveries to add (see [`crate::model::FeeRecord`]): its
/// components are rules of `jurisdiction`, added with [`TableBuilder::rule`], each with its
/// amount as the rule's fee; no jurisdiction set should hold `jurisdiction`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeeSpec {
    /// The fee's jurisdiction.
    pub jurisdiction: JurisdictionId,
    /// The state it applies in (USPS abbreviation).
    pub region: String,
    /// The least total of taxable items, in major units, when the fee needs one; `None`
    /// when one taxable item is enough.
    pub min_taxable: Option<Decimal>,
    /// Whether a buyer exempt from the state's sales tax owes no fee.
    pub exempt_buyers: bool,
    /// The small-seller exemption, when the fee has one.
    pub small_seller: Option<SmallSeller>,
    /// Tax codes whose lines neither make a delivery nor count toward the minimum.
    pub excluded_codes: Vec<String>,
    /// Periods whose amounts are not known, inclusive.
    pub unknown: Vec<(Date, Date)>,
    /// The first day of the fee.
    pub from: Date,
    /// Manifest index of the source.
    pub source: u32,
}

/// A fee's small-seller exemption: a seller whose sales in the state in the previous
/// calendar year are at most (or, with `less_than`, below) `amount` owes no fee, from `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallSeller {
    /// The threshold, in major units.
    pub amount: Decimal,
    /// Whether sales must be below the threshold rather than at most it.
    pub less_than: bool,
    /// The first day of the exemption.
    pub from: Date,
}

/// A cell of the taxability matrix to add. See [`TaxabilityRecord`] for what the fields
/// mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaxabilityCellSpec {
    /// ISO 3166-1 alpha-2 country of the place.
    pub country: String,
    /// The place's region; empty for a whole country or Canada's federal tax.
    pub region: String,
    /// The levels of the place it speaks for.
    pub levels: TaxabilityLevels,
    /// The levels as written.
    pub scope: String,
    /// The treatment.
    pub treatment: Treatment,
    /// What the treatment charges, in words.
    pub summary: String,
    /// The tax codes it names.
    pub codes: Vec<String>,
    /// First day.
    pub from: Date,
    /// Last day (inclusive).
    pub to: Date,
    /// The per-sale threshold it applies under, in major units.
    pub sale_at_most: Option<Decimal>,
    /// The rate type label of the rules it writes.
    pub label: String,
    /// The primary source.
    pub source: String,
    /// The day it was last checked against its source.
    pub as_of: Date,
    /// What it does and does not cover.
    pub note: String,
}

impl RuleSpec {
    /// A plain rate on the whole amount, in force from `from` to `to`.
    pub fn flat(
        jurisdiction: JurisdictionId,
        tax_code: &str,
        rate: Decimal,
        from: Date,
        to: Date,
        rate_type: &str,
    ) -> RuleSpec {
        RuleSpec {
            jurisdiction,
            tax_code: tax_code.to_string(),
            from,
            to,
            rate,
            band: (Decimal::ZERO, None),
            unit_range: (Decimal::ZERO, None),
            fee: Decimal::ZERO,
            rate_type: rate_type.to_string(),
            source: 0,
            proportional: false,
            sale: None,
        }
    }
}

/// A sales tax holiday to add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HolidaySpec {
    /// Name.
    pub name: String,
    /// Country.
    pub country: String,
    /// Region (state).
    pub region: String,
    /// Whether local taxes are suspended too.
    pub include_local: bool,
    /// First day.
    pub from: Date,
    /// Last day (inclusive).
    pub to: Date,
    /// Tax code names covered (each with its descendants).
    pub tax_codes: Vec<String>,
    /// Tax code names not covered although under a covered code (each with its
    /// descendants).
    pub exclude_codes: Vec<String>,
    /// Per-item price cap in major units.
    pub max_unit: Option<Decimal>,
    /// Whether an item priced exactly at the cap qualifies.
    pub cap_inclusive: bool,
}

/// Where an IP range is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IpLocationSpec {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// Subdivision without the country.
    pub region: String,
    /// City.
    pub city: String,
    /// Postal code, as the IP database gives it.
    pub postal: String,
    /// A postal code near the range's coordinates, for `approximate` resolution only.
    pub approx_postal: String,
    /// Latitude and longitude in millionths of a degree.
    pub coordinates: Option<(i32, i32)>,
}

/// Builds a table.
#[derive(Debug, Default)]
pub struct TableBuilder {
    manifest: Vec<SourceEntry>,
    jurisdictions: Vec<JurisdictionRecord>,
    jurisdiction_codes: HashMap<String, u32>,
    /// Each code's parent, description and whether it is in the taxability matrix.
    tax_codes: BTreeMap<String, (Option<String>, String, bool, String)>,
    categories: BTreeMap<String, String>,
    rules: Vec<RuleSpec>,
    holidays: Vec<HolidaySpec>,
    taxability: Vec<TaxabilityCellSpec>,
    fees: Vec<FeeSpec>,
    jsets: Vec<Vec<u32>>,
    jset_ids: HashMap<Vec<u32>, u32>,
    zips: BTreeMap<u32, ZipRecord>,
    /// The places a buyer may name in each ZIP (see [`TableData::zip_cities`]).
    zip_cities: BTreeMap<u32, Vec<ZipCity>>,
    zip4: Vec<Zip4Record>,
    streets: Vec<StreetRecord>,
    regions: BTreeMap<([u8; 2], String), RegionRecord>,
    postal: BTreeMap<([u8; 2], String), PostalPrefixRecord>,
    ip_locations: Vec<IpLocationRecord>,
    ip_location_ids: HashMap<IpLocationSpec, u32>,
    ipv4: Vec<Ipv4Record>,
    ipv6: Vec<Ipv6Record>,
    /// The first-level IPv4 index asked for; `None` to choose by the number of ranges.
    ipv4_index_bits: Option<u8>,
}

fn country_code(s: &str) -> Result<[u8; 2], BuildError> {
    let b = s.as_bytes();
    if b.len() == 2 && b.iter().all(u8::is_ascii_uppercase) {
        Ok([b[0], b[1]])
    } else {
        Err(BuildError::Invalid {
            what: "country",
            detail: format!("{s:?} is not ISO 3166-1 alpha-2"),
        })
    }
}

impl TableBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an input in the manifest; returns its index for `RuleSpec::source`.
    pub fn add_source(&mut self, entry: SourceEntry) -> u32 {
        self.manifest.push(entry);
        (self.manifest.len() - 1) as u32
    }

    /// The manifest so far (to update counts after reading).
    pub fn source_mut(&mut self, index: u32) -> Option<&mut SourceEntry> {
        self.manifest.get_mut(index as usize)
    }

    /// Adds a jurisdiction, or returns the existing one with the same code (a later source
    /// may then refine its name and authority, which it overwrites when non-empty).
    pub fn jurisdiction(&mut self, spec: JurisdictionSpec) -> Result<JurisdictionId, BuildError> {
        let country = country_code(&spec.country)?;
        if let Some(&id) = self.jurisdiction_codes.get(&spec.code) {
            let rec = &mut self.jurisdictions[id as usize];
            if !spec.name.is_empty() {
                rec.name = spec.name;
            }
            if !spec.authority.is_empty() {
                rec.authority = spec.authority;
            }
            return Ok(JurisdictionId(id));
        }
        let id = self.jurisdictions.len() as u32;
        self.jurisdiction_codes.insert(spec.code.clone(), id);
        self.jurisdictions.push(JurisdictionRecord {
            code: spec.code,
            name: spec.name,
            level: spec.level as u8,
            country,
            region: spec.region,
            authority: spec.authority,
            tax_type: spec.tax_type as u8,
        });
        Ok(JurisdictionId(id))
    }

    /// Every jurisdiction added so far, with its id, in the order added.
    pub fn jurisdictions(
        &self,
    ) -> impl Iterator<Item = (JurisdictionId, &JurisdictionRecord)> + '_ {
        self.jurisdictions
            .iter()
            .enumerate()
            .map(|(i, j)| (JurisdictionId(i as u32), j))
    }

    /// The manifest so far.
    pub fn sources(&self) -> &[SourceEntry] {
        &self.manifest
    }

    /// The id of a jurisdiction already added, by code.
    pub fn find_jurisdiction(&self, code: &str) -> Option<JurisdictionId> {
        self.jurisdiction_codes
            .get(code)
            .map(|&i| JurisdictionId(i))
    }

    /// Adds a product tax code under `parent` (whose rules it inherits where it has none).
    /// A code with a parent is in the taxability matrix (every place's cells must say how
    /// it is treated there) unless [`TableBuilder::tax_code_outside_matrix`] says otherwise.
    pub fn tax_code(
        &mut self,
        name: &str,
        parent: Option<&str>,
        description: &str,
    ) -> Result<(), BuildError> {
        if name.is_empty() {
            return Err(BuildError::BadTaxCode(name.into(), "empty name"));
        }
        if self.tax_codes.contains_key(name) {
            return Err(BuildError::BadTaxCode(name.into(), "added twice"));
        }
        self.tax_codes.insert(
            name.to_string(),
            (
                parent.map(str::to_string),
                description.to_string(),
                parent.is_some(),
                String::new(),
            ),
        );
        Ok(())
    }

    /// Marks a code added with a parent as outside the taxability matrix: every place
    /// treats it as its parent by definition, so the parent's cell covers it.
    pub fn tax_code_outside_matrix(&mut self, name: &str) -> Result<(), BuildError> {
        match self.tax_codes.get_mut(name) {
            Some(entry) => {
                entry.2 = false;
                Ok(())
            }
            None => Err(BuildError::UnknownTaxCode(name.to_string())),
        }
    }

    /// Names the Streamlined Library of Definitions term a code implements.
    pub fn tax_code_sst(&mut self, name: &str, term: &str) -> Result<(), BuildError> {
        match self.tax_codes.get_mut(name) {
            Some(entry) => {
                entry.3 = term.to_string();
                Ok(())
            }
            None => Err(BuildError::UnknownTaxCode(name.to_string())),
        }
    }

    /// Adds a cell of the taxability matrix (its codes must be added first).
    pub fn taxability_cell(&mut self, spec: TaxabilityCellSpec) -> Result<(), BuildError> {
        country_code(&spec.country)?;
        let bad = |detail: String| {
            Err(BuildError::Invalid {
                what: "taxability cell",
                detail,
            })
        };
        if spec.region.len() > 6 || !spec.region.is_ascii() {
            return bad(format!(
                "region {:?} is not a subdivision code",
                spec.region
            ));
        }
        if spec.from > spec.to {
            return bad(format!("{}..{} ends before it starts", spec.from, spec.to));
        }
        if spec.codes.is_empty() {
            return bad("names no tax code".into());
        }
        if let Some(code) = spec.codes.iter().find(|c| !self.tax_codes.contains_key(*c)) {
            return Err(BuildError::UnknownTaxCode(code.clone()));
        }
        if spec
            .sale_at_most
            .is_some_and(|l| l.is_sign_negative() || l > crate::calc::MAX_RULE_AMOUNT)
        {
            return bad(format!(
                "sale threshold {:?} out of range",
                spec.sale_at_most
            ));
        }
        self.taxability.push(spec);
        Ok(())
    }

    /// Whether a tax code was added.
    pub fn has_tax_code(&self, name: &str) -> bool {
        self.tax_codes.contains_key(name)
    }

    /// Maps a product category name to a tax code (the later call wins).
    pub fn category(&mut self, name: &str, tax_code: &str) {
        self.categories
            .insert(name.to_string(), tax_code.to_string());
    }

    /// Adds a rule.
    pub fn rule(&mut self, spec: RuleSpec) -> Result<(), BuildError> {
        if spec.jurisdiction.0 as usize >= self.jurisdictions.len() {
            return Err(BuildError::UnknownJurisdiction(spec.jurisdiction.0));
        }
        let bad = |detail: String| {
            Err(BuildError::Invalid {
                what: "rule",
                detail,
            })
        };
        if spec.from > spec.to {
            return bad(format!(
                "interval {}..{} ends before it starts",
                spec.from, spec.to
            ));
        }
        if spec.rate.is_sign_negative() || spec.fee.is_sign_negative() {
            return bad(format!("negative rate {} or fee {}", spec.rate, spec.fee));
        }
        if spec.band.0.is_sign_negative() || spec.band.1.is_some_and(|hi| hi < spec.band.0) {
            return bad(format!("band {:?} is empty or negative", spec.band));
        }
        if spec.unit_range.0.is_sign_negative()
            || spec.unit_range.1.is_some_and(|hi| hi < spec.unit_range.0)
        {
            return bad(format!(
                "unit range {:?} is empty or negative",
                spec.unit_range
            ));
        }
        let too_big = |v: &Decimal| *v > crate::calc::MAX_RULE_AMOUNT;
        if let Some(sale) = &spec.sale {
            if sale.group == 0 || sale.limit.is_sign_negative() || too_big(&sale.limit) {
                return bad(format!(
                    "sale threshold {sale:?}: group 0 or limit out of range"
                ));
            }
        }
        if spec.rate > crate::calc::MAX_RATE
            || too_big(&spec.fee)
            || too_big(&spec.band.0)
            || spec.band.1.as_ref().is_some_and(too_big)
            || too_big(&spec.unit_range.0)
            || spec.unit_range.1.as_ref().is_some_and(too_big)
        {
            return bad(format!(
                "rate {} above {} or an amount above {} (band {:?}, unit range {:?}, fee {})",
                spec.rate,
                crate::calc::MAX_RATE,
                crate::calc::MAX_RULE_AMOUNT,
                spec.band,
                spec.unit_range,
                spec.fee
            ));
        }
        self.rules.push(spec);
        Ok(())
    }

    /// The rules added so far, in order.
    pub fn rules(&self) -> &[RuleSpec] {
        &self.rules
    }

    /// Adds a per-order fee on retail deliveries; its components are rules of its
    /// jurisdiction, added apart.
    pub fn fee(&mut self, spec: FeeSpec) -> Result<(), BuildError> {
        if spec.jurisdiction.0 as usize >= self.jurisdictions.len() {
            return Err(BuildError::UnknownJurisdiction(spec.jurisdiction.0));
        }
        let bad = |detail: String| {
            Err(BuildError::Invalid {
                what: "fee",
                detail,
            })
        };
        let too_big = |v: &Decimal| v.is_sign_negative() || *v > crate::calc::MAX_RULE_AMOUNT;
        if spec.min_taxable.as_ref().is_some_and(too_big)
            || spec
                .small_seller
                .as_ref()
                .is_some_and(|s| too_big(&s.amount))
        {
            return bad(format!(
                "an amount out of range: minimum {:?}, small seller {:?}",
                spec.min_taxable, spec.small_seller
            ));
        }
        if spec.unknown.iter().any(|(from, to)| from > to) {
            return bad(format!(
                "an unknown period ends before it starts: {:?}",
                spec.unknown
            ));
        }
        self.fees.push(spec);
        Ok(())
    }

    /// Removes every rule for which `f` is false (a finer source replacing a coarser one).
    pub fn retain_rules(&mut self, f: impl FnMut(&RuleSpec) -> bool) {
        self.rules.retain(f);
    }

    /// Adds a sales tax holiday.
    pub fn holiday(&mut self, spec: HolidaySpec) -> Result<(), BuildError> {
        country_code(&spec.country)?;
        if spec.from > spec.to {
            return Err(BuildError::Invalid {
                what: "holiday",
                detail: format!("{} ends before it starts", spec.name),
            });
        }
        if spec.region.len() > 6 || !spec.region.is_ascii() {
            return Err(BuildError::Invalid {
                what: "holiday",
                detail: format!(
                    "{}: region {:?} is not an ISO 3166-2 subdivision code",
                    spec.name, spec.region
                ),
            });
        }
        if spec
            .max_unit
            .is_some_and(|cap| cap.is_sign_negative() || cap > crate::calc::MAX_RULE_AMOUNT)
        {
            return Err(BuildError::Invalid {
                what: "holiday",
                detail: format!(
                    "{}: cap {:?} is negative or above {}",
                    spec.name,
                    spec.max_unit,
                    crate::calc::MAX_RULE_AMOUNT
                ),
            });
        }
        self.holidays.push(spec);
        Ok(())
    }

    /// The id of the set of these jurisdictions (deduplicated; order does not matter).
    pub fn jset(&mut self, jurisdictions: &[JurisdictionId]) -> Result<u32, BuildError> {
        let mut items: Vec<u32> = Vec::with_capacity(jurisdictions.len());
        for j in jurisdictions {
            if j.0 as usize >= self.jurisdictions.len() {
                return Err(BuildError::UnknownJurisdiction(j.0));
            }
            items.push(j.0);
        }
        items.sort_by_key(|&j| (self.jurisdictions[j as usize].level, j));
        items.dedup();
        if let Some(&id) = self.jset_ids.get(&items) {
            return Ok(id);
        }
        let id = self.jsets.len() as u32;
        self.jset_ids.insert(items.clone(), id);
        self.jsets.push(items);
        Ok(id)
    }

    /// Adds `extra` to every jurisdiction set handed out so far that holds `member`, so that
    /// a tax levied wherever another one is (Tennessee's single article tax beside the state
    /// tax) reaches every ZIP code, ZIP+4 range, street range, region and postal prefix
    /// using those sets, whichever source added them. Set ids do not change. Returns how
    /// many sets gained `extra`.
    pub fn add_to_sets_containing(
        &mut self,
        member: JurisdictionId,
        extra: JurisdictionId,
    ) -> Result<usize, BuildError> {
        for j in [member, extra] {
            if j.0 as usize >= self.jurisdictions.len() {
                return Err(BuildError::UnknownJurisdiction(j.0));
            }
        }
        let mut changed = 0;
        for id in 0..self.jsets.len() {
            let set = &self.jsets[id];
            if !set.contains(&member.0) || set.contains(&extra.0) {
                continue;
            }
            let old = set.clone();
            let mut new = old.clone();
            new.push(extra.0);
            new.sort_by_key(|&j| (self.jurisdictions[j as usize].level, j));
            if self.jset_ids.get(&old) == Some(&(id as u32)) {
                self.jset_ids.remove(&old);
            }
            self.jset_ids.entry(new.clone()).or_insert(id as u32);
            self.jsets[id] = new;
            changed += 1;
        }
        Ok(changed)
    }

    /// Adds or replaces a US ZIP code for every date, with [`Coverage::Full`] (the
    /// jurisdictions given are all that tax it); returns the record as it was before, so
    /// that a layered build can report the refinement.
    pub fn zip(
        &mut self,
        zip: u32,
        state: &str,
        city: &str,
        jurisdictions: &[JurisdictionId],
        population: u32,
    ) -> Result<Option<ZipRecord>, BuildError> {
        let old = self.zips.get(&zip).cloned();
        self.zip_period(
            zip,
            state,
            city,
            jurisdictions,
            Date::MIN,
            Date::MAX,
            Coverage::Full,
            u32::MAX,
        )?;
        if let Some(z) = self.zips.get_mut(&zip) {
            z.population = population;
        }
        Ok(old)
    }

    /// Assigns a US ZIP code to `jurisdictions` from `from` to `to` (inclusive), over
    /// whatever earlier calls assigned for those days: earlier periods are cut to the days
    /// outside `from..=to` and keep answering there. Returns the parts of earlier periods
    /// this one replaced, so that a layered build can report them. The state and city are
    /// the latest given (a city left empty keeps the earlier one).
    #[allow(clippy::too_many_arguments)]
    pub fn zip_period(
        &mut self,
        zip: u32,
        state: &str,
        city: &str,
        jurisdictions: &[JurisdictionId],
        from: Date,
        to: Date,
        coverage: Coverage,
        source: u32,
    ) -> Result<Vec<ZipPeriod>, BuildError> {
        if zip > 99_999 {
            return Err(BuildError::Invalid {
                what: "ZIP",
                detail: format!("{zip} has more than five digits"),
            });
        }
        if from > to {
            return Err(BuildError::Invalid {
                what: "ZIP period",
                detail: format!("ZIP {zip:05}: {from} is after {to}"),
            });
        }
        let jset = self.jset(jurisdictions)?;
        let rec = self.zips.entry(zip).or_insert_with(|| ZipRecord {
            zip,
            ..ZipRecord::default()
        });
        rec.state = state.to_string();
        if !city.is_empty() || rec.city.is_empty() {
            rec.city = city.to_string();
        }
        // The places a buyer may name in the ZIP: on these days this placement decides, so
        // what an earlier call said of them is cut to the days outside.
        if let Some(cities) = self.zip_cities.get_mut(&zip) {
            *cities = std::mem::take(cities)
                .into_iter()
                .flat_map(|c| cut_city(c, from.0, to.0))
                .collect();
        }
        let mut replaced = Vec::new();
        let mut kept = Vec::with_capacity(rec.periods.len() + 2);
        for p in rec.periods.drain(..) {
            if p.to < from.0 || p.from > to.0 {
                kept.push(p);
                continue;
            }
            replaced.push(ZipPeriod {
                from: p.from.max(from.0),
                to: p.to.min(to.0),
                ..p
            });
            if p.from < from.0 {
                kept.push(ZipPeriod {
                    to: from.0 - 1,
                    ..p
                });
            }
            if p.to > to.0 {
                kept.push(ZipPeriod {
                    from: to.0 + 1,
                    ..p
                });
            }
        }
        kept.push(ZipPeriod {
            from: from.0,
            to: to.0,
            jset,
            coverage: coverage as u8,
            note: PlaceNote::None as u8,
            source,
        });
        kept.sort_by_key(|p| p.from);
        rec.periods = kept;
        Ok(replaced)
    }

    /// Writes `note` on the periods of ZIP `zip` that lie within `from..=to` (those a
    /// [`TableBuilder::zip_period`] call for these days made): why their coverage is what it
    /// is. Returns how many periods it marked.
    pub fn zip_note(&mut self, zip: u32, from: Date, to: Date, note: PlaceNote) -> usize {
        let Some(rec) = self.zips.get_mut(&zip) else {
            return 0;
        };
        let mut marked = 0;
        for p in rec
            .periods
            .iter_mut()
            .filter(|p| from.0 <= p.from && p.to <= to.0)
        {
            p.note = note as u8;
            marked += 1;
        }
        marked
    }

    /// Adds a place that shares ZIP `zip` with others of different taxes: an address in the
    /// ZIP that names the city `name` (compared as [`crate::address::city_key`] writes it)
    /// is answered with `jurisdictions` and `coverage` from `from` to `to`, over what the
    /// ZIP's periods say. Call it after the [`TableBuilder::zip_period`] that placed the ZIP
    /// for these days: a later placement of the ZIP cuts the cities it covers. A name given
    /// again for overlapping days replaces the earlier one there.
    #[allow(clippy::too_many_arguments)]
    pub fn zip_city(
        &mut self,
        zip: u32,
        name: &str,
        jurisdictions: &[JurisdictionId],
        from: Date,
        to: Date,
        coverage: Coverage,
        source: u32,
    ) -> Result<(), BuildError> {
        let key = crate::address::city_key(name);
        if key.is_empty() || from > to {
            return Err(BuildError::Invalid {
                what: "ZIP city",
                detail: format!("ZIP {zip:05}: {name:?} from {from} to {to}"),
            });
        }
        let jset = self.jset(jurisdictions)?;
        if !self.zips.contains_key(&zip) {
            return Err(BuildError::Invalid {
                what: "ZIP city",
                detail: format!("ZIP {zip:05} is not placed: place it before naming its cities"),
            });
        }
        let list = self.zip_cities.entry(zip).or_default();
        let mut cities = Vec::with_capacity(list.len() + 1);
        for c in std::mem::take(list) {
            if c.key == key {
                cities.extend(cut_city(c, from.0, to.0));
            } else {
                cities.push(c);
            }
        }
        cities.push(ZipCity {
            zip,
            key,
            name: name.trim().to_uppercase(),
            from: from.0,
            to: to.0,
            jset,
            coverage: coverage as u8,
            source,
        });
        *list = cities;
        Ok(())
    }

    /// The places a buyer may name in ZIP `zip` added so far.
    pub fn zip_cities(&self, zip: u32) -> &[ZipCity] {
        self.zip_cities.get(&zip).map_or(&[], Vec::as_slice)
    }

    /// Renames a jurisdiction (a rate file names its districts by code; a file that places
    /// them knows their names).
    pub fn rename_jurisdiction(&mut self, j: JurisdictionId, name: &str) -> Result<(), BuildError> {
        let rec = self
            .jurisdictions
            .get_mut(j.0 as usize)
            .ok_or(BuildError::UnknownJurisdiction(j.0))?;
        rec.name = name.to_string();
        Ok(())
    }

    /// The ZIP code record added so far, if any.
    pub fn zip_record(&self, zip: u32) -> Option<&ZipRecord> {
        self.zips.get(&zip)
    }

    /// The jurisdictions of a set id handed out by this builder.
    pub fn jset_members(&self, jset: u32) -> Vec<JurisdictionId> {
        self.jsets
            .get(jset as usize)
            .map(|v| v.iter().map(|&j| JurisdictionId(j)).collect())
            .unwrap_or_default()
    }

    /// Adds a ZIP+4 range `zip5-low ..= zip5-high` in force from `from` to `to`.
    pub fn zip4(
        &mut self,
        zip5: u32,
        low: u16,
        high: u16,
        jurisdictions: &[JurisdictionId],
        from: Date,
        to: Date,
    ) -> Result<(), BuildError> {
        if zip5 > 99_999 || low > high || high > 9_999 || from > to {
            return Err(BuildError::Invalid {
                what: "ZIP+4 range",
                detail: format!("{zip5:05}-{low:04}..{high:04} {from}..{to}"),
            });
        }
        let jset = self.jset(jurisdictions)?;
        self.zip4.push(Zip4Record {
            zip5,
            low,
            high,
            jset,
            from: from.0,
            to: to.0,
        });
        Ok(())
    }

    /// Adds a street address range. `street` must already be normalized with
    /// [`crate::normalize_street`]; `parity` is `b'O'`, `b'E'` or `b'B'`.
    #[allow(clippy::too_many_arguments)]
    pub fn street(
        &mut self,
        zip5: u32,
        street: &str,
        low: u32,
        high: u32,
        parity: u8,
        jurisdictions: &[JurisdictionId],
        from: Date,
        to: Date,
    ) -> Result<(), BuildError> {
        if zip5 > 99_999
            || low > high
            || !matches!(parity, b'O' | b'E' | b'B')
            || from > to
            || street.is_empty()
        {
            return Err(BuildError::Invalid {
                what: "street range",
                detail: format!(
                    "{zip5:05} {street:?} {low}..{high} parity {}",
                    parity as char
                ),
            });
        }
        let jset = self.jset(jurisdictions)?;
        self.streets.push(StreetRecord {
            zip5,
            street: street.to_string(),
            low,
            high,
            parity,
            jset,
            from: from.0,
            to: to.0,
        });
        Ok(())
    }

    /// Adds or replaces a region (a state, a province, or a whole country with `region`
    /// empty) and the jurisdictions that tax all of it.
    pub fn region(
        &mut self,
        country: &str,
        region: &str,
        name: &str,
        jurisdictions: &[JurisdictionId],
        main_postal: &str,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        let jset = self.jset(jurisdictions)?;
        self.regions.insert(
            (c, region.to_string()),
            RegionRecord {
                country: c,
                region: region.to_string(),
                name: name.to_string(),
                jset,
                main_postal: main_postal.to_string(),
                coverage: Coverage::Full as u8,
                levels: 0,
                sourcing: Sourcing::Destination as u8,
                local_cap: store_decimal(Decimal::ZERO),
                invoice_rounding: false,
            },
        );
        Ok(())
    }

    /// Sets what an answer at a region's level covers ([`Coverage::Full`] when `region` was
    /// added, which is right for countries and provinces; a US state with local sales taxes
    /// is [`Coverage::StateOnly`]).
    pub fn region_coverage(
        &mut self,
        country: &str,
        region: &str,
        coverage: Coverage,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        match self.regions.get_mut(&(c, region.to_string())) {
            Some(r) => {
                r.coverage = coverage as u8;
                Ok(())
            }
            None => Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region} was not added"),
            }),
        }
    }

    /// Sets how an intrastate sale in a region is sourced, and the cap on local rates for
    /// [`Sourcing::OriginWithUseTax`] (a fraction; ignored otherwise).
    pub fn region_sourcing(
        &mut self,
        country: &str,
        region: &str,
        sourcing: Sourcing,
        local_cap: Decimal,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        if local_cap.is_sign_negative() || local_cap > Decimal::ONE {
            return Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region}: local cap {local_cap} is not a fraction"),
            });
        }
        match self.regions.get_mut(&(c, region.to_string())) {
            Some(r) => {
                r.sourcing = sourcing as u8;
                r.local_cap = store_decimal(local_cap);
                Ok(())
            }
            None => Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region} was not added"),
            }),
        }
    }

    /// Sets whether a region allows a sale's tax to be rounded once per invoice.
    pub fn region_invoice_rounding(
        &mut self,
        country: &str,
        region: &str,
        allowed: bool,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        match self.regions.get_mut(&(c, region.to_string())) {
            Some(r) => {
                r.invoice_rounding = allowed;
                Ok(())
            }
            None => Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region} was not added"),
            }),
        }
    }

    /// The jurisdictions that tax all of a region, if the region was added.
    pub fn region_members(&self, country: &str, region: &str) -> Option<Vec<JurisdictionId>> {
        let c = country_code(country).ok()?;
        let r = self.regions.get(&(c, region.to_string()))?;
        Some(self.jset_members(r.jset))
    }

    /// Replaces the jurisdictions that tax all of a region, keeping its name, main postal
    /// code and coverage.
    pub fn region_jurisdictions(
        &mut self,
        country: &str,
        region: &str,
        jurisdictions: &[JurisdictionId],
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        let jset = self.jset(jurisdictions)?;
        match self.regions.get_mut(&(c, region.to_string())) {
            Some(r) => {
                r.jset = jset;
                Ok(())
            }
            None => Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region} was not added"),
            }),
        }
    }

    /// Sets a region's most populous postal code (for `approximate` IP resolution).
    pub fn region_main_postal(
        &mut self,
        country: &str,
        region: &str,
        postal: &str,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        match self.regions.get_mut(&(c, region.to_string())) {
            Some(r) => {
                r.main_postal = postal.to_string();
                Ok(())
            }
            None => Err(BuildError::Invalid {
                what: "region",
                detail: format!("{country}-{region} was not added"),
            }),
        }
    }

    /// Adds a non-US postal prefix that places an address in `region`, with its own
    /// jurisdictions or (`None`) the region's.
    pub fn postal_prefix(
        &mut self,
        country: &str,
        prefix: &str,
        region: &str,
        jurisdictions: Option<&[JurisdictionId]>,
    ) -> Result<(), BuildError> {
        let c = country_code(country)?;
        let normalized = crate::address::normalize_postal(prefix);
        if normalized.is_empty() {
            return Err(BuildError::Invalid {
                what: "postal prefix",
                detail: format!("{prefix:?} is empty"),
            });
        }
        let jset = match jurisdictions {
            Some(js) => self.jset(js)?,
            None => u32::MAX,
        };
        self.postal.insert(
            (c, normalized.clone()),
            PostalPrefixRecord {
                country: c,
                prefix: normalized,
                region: region.to_string(),
                jset,
            },
        );
        Ok(())
    }

    fn ip_location(&mut self, loc: IpLocationSpec) -> Result<u32, BuildError> {
        let country = country_code(&loc.country)?;
        if let Some(&id) = self.ip_location_ids.get(&loc) {
            return Ok(id);
        }
        let id = self.ip_locations.len() as u32;
        let (lat, lon) = loc.coordinates.unwrap_or((i32::MIN, i32::MIN));
        self.ip_locations.push(IpLocationRecord {
            country,
            region: loc.region.clone(),
            city: loc.city.clone(),
            postal: loc.postal.clone(),
            approx_postal: loc.approx_postal.clone(),
            lat_e6: lat,
            lon_e6: lon,
        });
        self.ip_location_ids.insert(loc, id);
        Ok(id)
    }

    /// Adds an IP place once and returns its id, for [`TableBuilder::ipv4_range_at`] and
    /// [`TableBuilder::ipv6_range_at`]: a database of millions of ranges over far fewer
    /// places passes each place once. An equal place added again gets the same id.
    pub fn ip_place(&mut self, loc: IpLocationSpec) -> Result<u32, BuildError> {
        self.ip_location(loc)
    }

    /// Chooses the first-level IPv4 index ([`TableData::ipv4_top`]) instead of letting the
    /// number of ranges choose it: `bits` upper bits of an address (at most 24, a 64 MiB
    /// index; more is taken as 24), or 0 for none. Answers are the same whatever the index;
    /// only the memory a lookup reads changes.
    pub fn ipv4_index_bits(&mut self, bits: u8) {
        self.ipv4_index_bits = Some(bits.min(24));
    }

    /// Adds an IPv4 range `start..=end` at a place from [`TableBuilder::ip_place`].
    pub fn ipv4_range_at(&mut self, start: u32, end: u32, place: u32) -> Result<(), BuildError> {
        if start > end || place as usize >= self.ip_locations.len() {
            return Err(BuildError::Invalid {
                what: "IPv4 range",
                detail: format!("{start}..{end} at place {place}"),
            });
        }
        self.ipv4.push(Ipv4Record {
            start,
            end,
            location: place,
        });
        Ok(())
    }

    /// Adds an IPv6 range `start..=end` at a place from [`TableBuilder::ip_place`].
    pub fn ipv6_range_at(&mut self, start: u128, end: u128, place: u32) -> Result<(), BuildError> {
        if start > end || place as usize >= self.ip_locations.len() {
            return Err(BuildError::Invalid {
                what: "IPv6 range",
                detail: format!("{start:x}..{end:x} at place {place}"),
            });
        }
        self.ipv6.push(Ipv6Record {
            start: start.to_be_bytes(),
            end: end.to_be_bytes(),
            location: place,
        });
        Ok(())
    }

    /// Adds an IPv4 range `start..=end`.
    pub fn ipv4_range(
        &mut self,
        start: u32,
        end: u32,
        loc: IpLocationSpec,
    ) -> Result<(), BuildError> {
        if start > end {
            return Err(BuildError::Invalid {
                what: "IPv4 range",
                detail: format!("{start}..{end}"),
            });
        }
        let location = self.ip_location(loc)?;
        self.ipv4.push(Ipv4Record {
            start,
            end,
            location,
        });
        Ok(())
    }

    /// Adds an IPv6 range `start..=end`.
    pub fn ipv6_range(
        &mut self,
        start: u128,
        end: u128,
        loc: IpLocationSpec,
    ) -> Result<(), BuildError> {
        if start > end {
            return Err(BuildError::Invalid {
                what: "IPv6 range",
                detail: format!("{start:x}..{end:x}"),
            });
        }
        let location = self.ip_location(loc)?;
        self.ipv6.push(Ipv6Record {
            start: start.to_be_bytes(),
            end: end.to_be_bytes(),
            location,
        });
        Ok(())
    }

    /// Sorts and indexes everything into the archived form.
    pub fn into_data(self) -> Result<TableData, BuildError> {
        let TableBuilder {
            manifest,
            jurisdictions,
            tax_codes,
            categories,
            rules,
            holidays,
            taxability,
            fees,
            jsets,
            zips,
            zip_cities,
            zip4,
            streets,
            mut regions,
            postal,
            ip_locations,
            ipv4,
            ipv6,
            ipv4_index_bits,
            ..
        } = self;
        // Tax codes: ids are positions in name order.
        let names: Vec<&String> = tax_codes.keys().collect();
        let code_id = |name: &str| -> Result<u32, BuildError> {
            names
                .binary_search_by(|n| n.as_str().cmp(name))
                .map(|i| i as u32)
                .map_err(|_| BuildError::UnknownTaxCode(name.to_string()))
        };
        let code_records = tax_code_records(&tax_codes, &rules, &code_id)?;
        let mut category_records = Vec::with_capacity(categories.len());
        for (name, code) in &categories {
            category_records.push(CategoryRecord {
                name: name.clone(),
                tax_code: code_id(code)?,
            });
        }
        let (rule_records, rule_keys, rule_start) =
            rule_records(&rules, jurisdictions.len(), &code_id)?;
        let (holiday_records, holiday_keys) = holiday_records(&holidays, &code_id)?;
        let (taxability_records, taxability_keys) = taxability_data(&taxability, code_id)?;
        let fee_records = fees
            .into_iter()
            .map(|f| fee_record(f, &code_id))
            .collect::<Result<Vec<_>, _>>()?;
        let mut jset_start = Vec::with_capacity(jsets.len() + 1);
        let mut jset_items = Vec::new();
        jset_start.push(0u32);
        for s in &jsets {
            jset_items.extend_from_slice(s);
            jset_start.push(jset_items.len() as u32);
        }
        let places = Places {
            jurisdictions: &jurisdictions,
            jsets: &jsets,
            zips: &zips,
            zip_cities: &zip_cities,
            zip4: &zip4,
            streets: &streets,
        };
        places.region_levels(&mut regions);
        let zip_cities = zip_city_records(zip_cities, &zips, &regions);
        let (zip_records, zip5) = zip_records(zips, &regions);
        let (zip4, streets) = sorted_ranges(zip4, streets);
        let ip = ip_data(ipv4, ipv6, ipv4_index_bits)?;
        Ok(TableData {
            manifest,
            jurisdictions,
            tax_codes: code_records,
            categories: category_records,
            rules: rule_records,
            rule_keys,
            rule_start,
            holidays: holiday_records,
            holiday_keys,
            jset_start,
            jset_items,
            zip5,
            zips: zip_records,
            zip_cities,
            zip4,
            streets,
            regions: regions.into_values().collect(),
            postal_prefixes: postal.into_values().collect(),
            ipv4: ip.ipv4,
            ipv4_top: ip.ipv4_top,
            ipv4_top_bits: ip.ipv4_top_bits,
            ipv6_prefix: ip.ipv6_prefix,
            ipv6: ip.ipv6,
            ip_locations,
            taxability: taxability_records,
            taxability_keys,
            fees: fee_records,
        })
    }

    /// Builds the table file: header and archive. `build_time` is written into the header
    /// as given, so that deterministic builds can pass a time derived from their inputs.
    pub fn build(self, build_time: i64) -> Result<Vec<u8>, BuildError> {
        Ok(encode(&self.into_data()?, build_time))
    }
}

/// The tax codes as records (ids are positions in name order): each with its parent's id,
/// refused when a parent chain loops, and marked a delivery code when it or a code above
/// it has a proportional rule (a delivery charge's).
fn tax_code_records(
    tax_codes: &BTreeMap<String, (Option<String>, String, bool, String)>,
    rules: &[RuleSpec],
    code_id: &impl Fn(&str) -> Result<u32, BuildError>,
) -> Result<Vec<TaxCodeRecord>, BuildError> {
    let mut code_records = Vec::with_capacity(tax_codes.len());
    for (name, (parent, description, matrix, sst)) in tax_codes {
        let parent = match parent {
            Some(p) => code_id(p)?,
            None => u32::MAX,
        };
        code_records.push(TaxCodeRecord {
            name: name.clone(),
            parent,
            description: description.clone(),
            delivery: false,
            matrix: *matrix && parent != u32::MAX,
            sst: sst.clone(),
        });
    }
    // Reject cycles in the taxonomy.
    for (i, rec) in code_records.iter().enumerate() {
        let mut p = rec.parent;
        let mut steps = 0;
        while p != u32::MAX {
            steps += 1;
            if p as usize == i || steps > code_records.len() {
                return Err(BuildError::BadTaxCode(
                    rec.name.clone(),
                    "parent chain loops",
                ));
            }
            p = code_records[p as usize].parent;
        }
    }
    // Delivery codes: those with a proportional rule, and every code below one.
    let mut proportional = vec![false; code_records.len()];
    for r in rules.iter().filter(|r| r.proportional) {
        proportional[code_id(&r.tax_code)? as usize] = true;
    }
    for i in 0..code_records.len() {
        // The chain is loop-free (checked above), so the walk ends.
        let mut c = i as u32;
        while c != u32::MAX {
            if proportional[c as usize] {
                code_records[i].delivery = true;
                break;
            }
            c = code_records[c as usize].parent;
        }
    }
    Ok(code_records)
}

/// The rules as records, sorted by (jurisdiction, code, from) keeping the written order of
/// ties; their compact keys; and each of the `jurisdictions`' first rule.
#[allow(clippy::type_complexity)]
fn rule_records(
    rules: &[RuleSpec],
    jurisdictions: usize,
    code_id: &impl Fn(&str) -> Result<u32, BuildError>,
) -> Result<(Vec<RuleRecord>, Vec<RuleKey>, Vec<u32>), BuildError> {
    let mut rule_records = Vec::with_capacity(rules.len());
    for r in rules {
        rule_records.push(RuleRecord {
            jurisdiction: r.jurisdiction.0,
            tax_code: code_id(&r.tax_code)?,
            from: r.from.0,
            to: r.to.0,
            rate: store_decimal(r.rate),
            base_min: store_decimal(r.band.0),
            base_max: store_decimal(r.band.1.unwrap_or(Decimal::MAX)),
            unit_min: store_decimal(r.unit_range.0),
            unit_max: store_decimal(r.unit_range.1.unwrap_or(Decimal::MAX)),
            fee: store_decimal(r.fee),
            rate_type: r.rate_type.clone(),
            source: r.source,
            proportional: r.proportional,
            sale_group: r.sale.map_or(0, |c| c.group),
            sale_limit: store_decimal(r.sale.map_or(Decimal::ZERO, |c| c.limit)),
            sale_above: r.sale.is_some_and(|c| c.above),
        });
    }
    rule_records.sort_by_key(|r| (r.jurisdiction, r.tax_code, r.from));
    let rule_keys = rule_records.iter().map(rule_key).collect();
    let mut rule_start = vec![0u32; jurisdictions + 1];
    for r in &rule_records {
        rule_start[r.jurisdiction as usize + 1] += 1;
    }
    for i in 1..rule_start.len() {
        rule_start[i] += rule_start[i - 1];
    }
    Ok((rule_records, rule_keys, rule_start))
}

/// The holidays as records, in the order written, and their keys sorted by place.
fn holiday_records(
    holidays: &[HolidaySpec],
    code_id: &impl Fn(&str) -> Result<u32, BuildError>,
) -> Result<(Vec<HolidayRecord>, Vec<HolidayKey>), BuildError> {
    let mut holiday_records = Vec::with_capacity(holidays.len());
    for h in holidays {
        let mut codes = Vec::with_capacity(h.tax_codes.len());
        for c in &h.tax_codes {
            codes.push(code_id(c)?);
        }
        let exclude = h
            .exclude_codes
            .iter()
            .map(|c| code_id(c))
            .collect::<Result<Vec<_>, _>>()?;
        holiday_records.push(HolidayRecord {
            name: h.name.clone(),
            country: country_code(&h.country)?,
            region: h.region.clone(),
            include_local: h.include_local,
            from: h.from.0,
            to: h.to.0,
            tax_codes: codes,
            exclude_codes: exclude,
            max_unit: store_decimal(h.max_unit.unwrap_or(Decimal::MAX)),
            cap_inclusive: h.cap_inclusive,
        });
    }
    let mut holiday_keys: Vec<HolidayKey> = holiday_records
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut region = [0u8; 6];
            region[..h.region.len()].copy_from_slice(h.region.as_bytes());
            HolidayKey {
                country: h.country,
                region,
                from: h.from,
                to: h.to,
                holiday: i as u32,
            }
        })
        .collect();
    holiday_keys.sort_by_key(|k| (k.country, k.region, k.from, k.holiday));
    Ok((holiday_records, holiday_keys))
}

/// The places a builder holds, as the regions' levels are found from them.
struct Places<'a> {
    jurisdictions: &'a [JurisdictionRecord],
    jsets: &'a [Vec<u32>],
    zips: &'a BTreeMap<u32, ZipRecord>,
    zip_cities: &'a BTreeMap<u32, Vec<ZipCity>>,
    zip4: &'a [Zip4Record],
    streets: &'a [StreetRecord],
}

impl Places<'_> {
    /// The levels of the jurisdictions of set `jset`, as bits.
    fn levels_of(&self, jset: u32) -> u8 {
        self.jsets.get(jset as usize).map_or(0, |members| {
            members.iter().fold(0u8, |acc, &j| {
                acc | self
                    .jurisdictions
                    .get(j as usize)
                    .map_or(0, |r| 1u8 << (r.level & 7))
            })
        })
    }

    /// Writes what each region's places name: the levels of its own set and, for a US
    /// state, of every set a ZIP, ZIP+4 or street range of the state points to.
    fn region_levels(&self, regions: &mut BTreeMap<([u8; 2], String), RegionRecord>) {
        let mut state_levels: HashMap<String, u8> = HashMap::new();
        for z in self.zips.values() {
            let bits = z
                .periods
                .iter()
                .map(|p| p.jset)
                .chain(
                    self.zip_cities
                        .get(&z.zip)
                        .into_iter()
                        .flatten()
                        .map(|c| c.jset),
                )
                .fold(0, |acc, jset| acc | self.levels_of(jset));
            *state_levels.entry(z.state.clone()).or_default() |= bits;
        }
        let zip_state: HashMap<u32, &str> = self
            .zips
            .values()
            .map(|z| (z.zip, z.state.as_str()))
            .collect();
        let mut extra: Vec<(String, u8)> = Vec::new();
        for (zip5, jset) in self
            .zip4
            .iter()
            .map(|z| (z.zip5, z.jset))
            .chain(self.streets.iter().map(|s| (s.zip5, s.jset)))
        {
            if let Some(state) = zip_state.get(&zip5) {
                extra.push((state.to_string(), self.levels_of(jset)));
            }
        }
        for (state, bits) in extra {
            *state_levels.entry(state).or_default() |= bits;
        }
        for ((country, region), r) in regions.iter_mut() {
            r.levels = self.levels_of(r.jset);
            if country == b"US" {
                r.levels |= state_levels.get(region).copied().unwrap_or(0);
            }
        }
    }
}

/// The places a buyer may name in each ZIP, as one list sorted by (ZIP, key, from); in a
/// state whose region-level answer is complete, each is complete too.
fn zip_city_records(
    cities: BTreeMap<u32, Vec<ZipCity>>,
    zips: &BTreeMap<u32, ZipRecord>,
    regions: &BTreeMap<([u8; 2], String), RegionRecord>,
) -> Vec<ZipCity> {
    let mut out: Vec<ZipCity> = Vec::new();
    for (zip, mut list) in cities {
        let complete = zips.get(&zip).is_some_and(|z| {
            regions
                .get(&(*b"US", z.state.clone()))
                .is_some_and(|r| r.coverage == Coverage::Full as u8)
        });
        if complete {
            for c in &mut list {
                c.coverage = Coverage::Full as u8;
            }
        }
        list.sort_by(|a, b| (&a.key, a.from).cmp(&(&b.key, b.from)));
        out.extend(list);
    }
    out
}

/// A ZIP's city cut to the days outside `from..=to`: none, one or two pieces.
fn cut_city(c: ZipCity, from: i32, to: i32) -> Vec<ZipCity> {
    if c.to < from || c.from > to {
        return vec![c];
    }
    let mut out = Vec::new();
    if c.from < from {
        out.push(ZipCity {
            to: from - 1,
            ..c.clone()
        });
    }
    if c.to > to {
        out.push(ZipCity { from: to + 1, ..c });
    }
    out
}

/// The ZIP records, by ZIP code, and the dense index of them (empty without ZIPs). A ZIP of
/// a state whose region-level answer is complete (a state without local taxes) is complete
/// whatever its source said.
fn zip_records(
    mut zips: BTreeMap<u32, ZipRecord>,
    regions: &BTreeMap<([u8; 2], String), RegionRecord>,
) -> (Vec<ZipRecord>, Vec<u32>) {
    for z in zips.values_mut() {
        let complete = regions
            .get(&(*b"US", z.state.clone()))
            .is_some_and(|r| r.coverage == Coverage::Full as u8);
        if complete {
            for p in &mut z.periods {
                p.coverage = Coverage::Full as u8;
            }
        }
    }
    let zip_records: Vec<ZipRecord> = zips.into_values().collect();
    let zip5 = if zip_records.is_empty() {
        Vec::new()
    } else {
        let mut dense = vec![u32::MAX; 100_000];
        for (i, z) in zip_records.iter().enumerate() {
            dense[z.zip as usize] = i as u32;
        }
        dense
    };
    (zip_records, zip5)
}

/// The ZIP+4 ranges sorted by (ZIP5, low, from) and the street ranges by (ZIP5, street,
/// low, from).
fn sorted_ranges(
    mut zip4: Vec<Zip4Record>,
    mut streets: Vec<StreetRecord>,
) -> (Vec<Zip4Record>, Vec<StreetRecord>) {
    zip4.sort_by_key(|z| (z.zip5, z.low, z.from));
    streets.sort_by(|a, b| {
        (a.zip5, &a.street, a.low, a.from).cmp(&(b.zip5, &b.street, b.low, b.from))
    });
    (zip4, streets)
}

/// A table's IP ranges, sorted, with their indexes.
struct IpData {
    ipv4: Vec<Ipv4Record>,
    ipv4_top: Vec<u32>,
    ipv4_top_bits: u8,
    ipv6_prefix: Vec<u64>,
    ipv6: Vec<Ipv6Record>,
}

/// Sorts the IP ranges, refuses overlapping ones, and indexes them: the first-level IPv4
/// index (`index_bits` wide, or as [`ipv4_index_bits_for`] chooses) and the IPv6 prefixes.
fn ip_data(
    mut ipv4: Vec<Ipv4Record>,
    mut ipv6: Vec<Ipv6Record>,
    index_bits: Option<u8>,
) -> Result<IpData, BuildError> {
    ipv4.sort_by_key(|r| r.start);
    for w in ipv4.windows(2) {
        if w[1].start <= w[0].end {
            return Err(BuildError::IpOverlap(format!(
                "{} overlaps {}",
                std::net::Ipv4Addr::from(w[1].start),
                std::net::Ipv4Addr::from(w[0].end)
            )));
        }
    }
    ipv6.sort_by_key(|r| r.start);
    for w in ipv6.windows(2) {
        if w[1].start <= w[0].end {
            return Err(BuildError::IpOverlap(format!(
                "{} overlaps {}",
                std::net::Ipv6Addr::from(w[1].start),
                std::net::Ipv6Addr::from(w[0].end)
            )));
        }
    }
    let ipv4_top_bits = index_bits.unwrap_or_else(|| ipv4_index_bits_for(ipv4.len()));
    let ipv4_top = ipv4_index(&ipv4, ipv4_top_bits);
    let ipv6_prefix = ipv6
        .iter()
        .map(|r| u64::from_be_bytes(r.start[..8].try_into().expect("8 bytes")))
        .collect();
    Ok(IpData {
        ipv4,
        ipv4_top,
        ipv4_top_bits,
        ipv6_prefix,
        ipv6,
    })
}

/// The matrix's cells as records, and their keys sorted by (place, tax code, from, cell).
fn taxability_data(
    cells: &[TaxabilityCellSpec],
    code_id: impl Fn(&str) -> Result<u32, BuildError>,
) -> Result<(Vec<TaxabilityRecord>, Vec<TaxabilityKey>), BuildError> {
    let mut records = Vec::with_capacity(cells.len());
    let mut keys = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let country = country_code(&c.country)?;
        let codes = c
            .codes
            .iter()
            .map(|n| code_id(n))
            .collect::<Result<Vec<u32>, _>>()?;
        let place = crate::derived::place_key(country, c.region.as_bytes());
        let known = if c.treatment == Treatment::Unknown {
            0
        } else {
            c.levels.0
        };
        for &code in &codes {
            keys.push(TaxabilityKey {
                place,
                tax_code: code,
                from: c.from.0,
                to: c.to.0,
                levels: c.levels.0,
                known,
                cell: i as u32,
            });
        }
        records.push(TaxabilityRecord {
            country,
            region: c.region.clone(),
            levels: c.levels.0,
            scope: c.scope.clone(),
            treatment: c.treatment as u8,
            summary: c.summary.clone(),
            codes,
            from: c.from.0,
            to: c.to.0,
            sale_at_most: store_decimal(c.sale_at_most.unwrap_or(Decimal::MAX)),
            label: c.label.clone(),
            source: c.source.clone(),
            as_of: c.as_of.0,
            note: c.note.clone(),
        });
    }
    keys.sort_by_key(|k| (k.place, k.tax_code, k.from, k.cell));
    Ok((records, keys))
}

/// The fewest IPv4 ranges for which a table carries the first-level index
/// ([`TableData::ipv4_top`]).
const IPV4_INDEX_MIN: usize = 4096;

/// The fewest IPv4 ranges for which the index is over `/20` blocks rather than `/16`.
const IPV4_FINE_INDEX_MIN: usize = 1 << 20;

/// The first-level IPv4 index a table of `ranges` ranges carries: none below some thousands
/// of ranges (a binary search over all of them reads as few cache lines); `/16` blocks,
/// 256 KB, up to a million; `/20` blocks, 4 MB, beyond, where a `/16` block would hold
/// dozens of ranges (DB-IP City Lite: 3.7 million) and its search several cache lines.
fn ipv4_index_bits_for(ranges: usize) -> u8 {
    match ranges {
        n if n < IPV4_INDEX_MIN => 0,
        n if n < IPV4_FINE_INDEX_MIN => 16,
        _ => 20,
    }
}

/// The index of `ipv4` (sorted by start) over its upper `bits` bits: `2^bits + 1` counts,
/// the `h`-th the number of ranges starting in a block below `h`. Empty for 0 bits.
fn ipv4_index(ipv4: &[Ipv4Record], bits: u8) -> Vec<u32> {
    if bits == 0 {
        return Vec::new();
    }
    let bits = u32::from(bits.min(24));
    let blocks = 1u32 << bits;
    let mut top = Vec::with_capacity(blocks as usize + 1);
    let mut i = 0;
    for h in 0..=blocks {
        while i < ipv4.len() && ipv4[i].start >> (32 - bits) < h {
            i += 1;
        }
        top.push(i as u32);
    }
    top
}

/// What the hot path reads of a rule (see [`RuleKey`]).
fn rule_key(r: &RuleRecord) -> RuleKey {
    let rate = crate::model::load_decimal(&r.rate);
    let none = crate::model::store_decimal(Decimal::MAX);
    let plain = r.base_min == [0; 16]
        && r.unit_min == [0; 16]
        && r.fee == [0; 16]
        && r.base_max == none
        && r.unit_max == none
        && !r.proportional
        && r.sale_group == 0;
    let mantissa = i64::try_from(rate.mantissa()).ok();
    let scale = rate.scale();
    RuleKey {
        rate_mantissa: mantissa.unwrap_or(0),
        tax_code: r.tax_code,
        from: r.from,
        to: r.to,
        rate_scale: scale as u8,
        fast: plain
            && mantissa.is_some()
            && scale <= u32::from(RuleKey::MAX_FAST_SCALE)
            && rate.abs() <= crate::calc::MAX_RATE,
    }
}

/// A fee's record: its codes by id, its decimals stored.
fn fee_record(
    f: FeeSpec,
    code_id: &dyn Fn(&str) -> Result<u32, BuildError>,
) -> Result<crate::model::FeeRecord, BuildError> {
    let (rule, amount, from) = match f.small_seller {
        None => (0, Decimal::ZERO, Date::MAX),
        Some(s) => (if s.less_than { 2 } else { 1 }, s.amount, s.from),
    };
    Ok(crate::model::FeeRecord {
        jurisdiction: f.jurisdiction.0,
        region: f.region,
        needs_min_taxable: f.min_taxable.is_some(),
        min_taxable: store_decimal(f.min_taxable.unwrap_or_default()),
        exempt_buyers: f.exempt_buyers,
        small_seller_rule: rule,
        small_seller_amount: store_decimal(amount),
        small_seller_from: from.0,
        excluded_codes: f
            .excluded_codes
            .iter()
            .map(|c| code_id(c))
            .collect::<Result<_, _>>()?,
        unknown: f.unknown.iter().map(|(a, b)| (a.0, b.0)).collect(),
        from: f.from.0,
        source: f.source,
    })
}

#[cfg(test)]
mod ipv4_index_tests {
    #[test]
    fn the_index_follows_the_number_of_ranges() {
        // By the thresholds: none under 4,096 ranges, /16 up to 2^20 - 1, /20 from 2^20.
        assert_eq!(super::ipv4_index_bits_for(4_095), 0);
        assert_eq!(super::ipv4_index_bits_for(4_096), 16);
        assert_eq!(super::ipv4_index_bits_for((1 << 20) - 1), 16);
        assert_eq!(super::ipv4_index_bits_for(1 << 20), 20);
        assert_eq!(super::ipv4_index_bits_for(6_324_784), 20);
    }

    #[test]
    fn an_index_that_does_not_match_its_bits_is_not_used() {
        // 5,000 ranges of 256 addresses, one every 65,536 (range i starts at i << 16 and has
        // postal code i), with a /16 index; then the same data with the index's bits or
        // length damaged. Each must answer every range's first and last address, and the
        // gap after it, as the intact table does, without reading out of bounds.
        let mut b = super::TableBuilder::new();
        b.tax_code("GENERAL_MERCHANDISE", None, "Goods").unwrap();
        for i in 0..5_000u32 {
            let place = super::IpLocationSpec {
                country: "US".into(),
                region: "TN".into(),
                city: String::new(),
                postal: i.to_string(),
                approx_postal: String::new(),
                coordinates: None,
            };
            b.ipv4_range(i << 16, (i << 16) | 0xFF, place).unwrap();
        }
        let data = b.into_data().unwrap();
        assert_eq!(data.ipv4_top_bits, 16);
        let mut damaged = Vec::new();
        for bits in [0u8, 20, 25, 40, 255] {
            let mut d = data.clone();
            d.ipv4_top_bits = bits;
            damaged.push(d);
        }
        let mut short = data.clone();
        short.ipv4_top.pop();
        damaged.push(short);
        let open = |d: &super::TableData| {
            crate::Table::from_bytes(&crate::table::encode(d, 0)).expect("opens")
        };
        let intact = open(&data);
        let answer = |t: &crate::Table<crate::AlignedBytes>, ip: u32| {
            t.lookup_ip(std::net::IpAddr::V4(ip.into()))
                .map(|p| p.postal().to_string())
        };
        for d in &damaged {
            let t = open(d);
            for i in (0..5_000u32).step_by(7) {
                let start = i << 16;
                assert_eq!(answer(&t, start), Some(i.to_string()));
                assert_eq!(answer(&t, start | 0xFF), Some(i.to_string()));
                assert_eq!(answer(&t, start | 0x100), None);
                assert_eq!(answer(&t, start | 0x100), answer(&intact, start | 0x100));
            }
        }
    }
}
