//! California's CDTFA city and county list: the statewide base split as CDTFA publishes it,
//! each location's district taxes, and every California ZIP placed by its USPS city names
//! and county.

use std::collections::{BTreeMap, HashMap};

use levy_core::{Coverage, Date, Decimal, JurisdictionId, Level, PlaceNote};

use crate::error::BuildError;
use crate::parse::{self, CdtfaKind, Parsed, RowError};

use super::layers::Ctx;
use super::GENERAL;

/// A place name as a key (see [`levy_core::city_key`]): CDTFA's `St. Helena`, `La Cañada
/// Flintridge`, `City of Commerce` and `McFarland` meet USPS's `SAINT HELENA`, `LA CANADA
/// FLINTRIDGE`, `COMMERCE` and `MC FARLAND`; the same key a buyer's city is compared with.
fn place_key(name: &str) -> String {
    levy_core::city_key(name)
}

/// A CDTFA location's claim on a ZIP code.
#[derive(Clone)]
struct Claim {
    /// The location's name as CDTFA writes it (`Bell Gardens`).
    name: String,
    /// The jurisdictions of the location.
    js: Vec<JurisdictionId>,
    /// The location's combined rate.
    rate: Decimal,
}

/// Reads a CDTFA list effective from `from`: the statewide base, each location's district
/// taxes, and every California ZIP placed by its USPS city names and county.
pub(super) fn cdtfa(
    ctx: &mut Ctx,
    parsed: Parsed<parse::CdtfaRow>,
    from: Date,
    source: u32,
    file: &str,
) -> Result<(u64, u64), BuildError> {
    let mut skipped = ctx.bad_rows(file, parsed.errors)?;
    let base = statewide(ctx, from, source, file)?;
    let ca = CaZips::from_usps();
    let mut claims = Claims::default();
    let mut read = 0;
    for (line, row) in parsed.rows {
        let Some(rate) = row.rate else {
            // A county's header row (`Kern County`: "please refer to the applicable tax
            // rates for the unincorporated area and incorporated cities"): its area is its
            // cities' and its unincorporated area's rows.
            skipped += 1;
            claims.noted += 1;
            claims
                .headers
                .push((place_key(&row.county), row.location.clone()));
            continue;
        };
        if rate < base.rate {
            skipped += 1;
            let message = format!("rate {rate} is below California's statewide {}", base.rate);
            ctx.bad(file, RowError { line, message })?;
            continue;
        }
        read += 1;
        let js = location_jurisdictions(ctx, &row, rate, &base, (from, source, file))?;
        let name = row.location.clone();
        claims.claim(&row, Claim { name, js, rate }, &ca);
    }
    let (split_zips, state_only) = place_zips(ctx, &ca, &claims, &base, (from, source, file))?;
    notes(ctx, file, claims, split_zips, state_only);
    Ok((read, skipped))
}

/// California's statewide base as CDTFA publishes its split: the state's jurisdiction and
/// the uniform local (Bradley-Burns) one, and their combined rate.
struct Statewide {
    state: JurisdictionId,
    bb: JurisdictionId,
    rate: Decimal,
}

/// Writes the statewide base's two rates from `from` on, and makes them California's
/// region-level answer.
fn statewide(ctx: &mut Ctx, from: Date, source: u32, file: &str) -> Result<Statewide, BuildError> {
    let split = ctx.ca_base;
    let state = ctx.state("CA")?;
    ctx.rule(
        state,
        GENERAL,
        split.state,
        from,
        Date::MAX,
        Level::State,
        false,
        source,
        file,
    )?;
    let bb = ctx.jur(
        "06:BRADLEY-BURNS",
        "CALIFORNIA UNIFORM LOCAL (BRADLEY-BURNS)",
        Level::County,
        "CA",
    )?;
    ctx.rule(
        bb,
        GENERAL,
        split.uniform_local,
        from,
        Date::MAX,
        Level::County,
        false,
        source,
        file,
    )?;
    let rate = split.state + split.uniform_local;
    // An answer for California as a whole (no ZIP) holds the uniform local part too: it is
    // levied everywhere.
    ctx.b.region_jurisdictions("US", "CA", &[state, bb])?;
    Ok(Statewide { state, bb, rate })
}

/// A California ZIP as USPS names it.
struct UspsZip {
    zip: u32,
    /// Its primary city, upper case.
    city: String,
    /// Its county, upper case, without ` COUNTY`.
    county: String,
}

/// California ZIPs (USPS, from the zipcodes package): primary city, the other city names
/// USPS accepts for the ZIP, and county.
struct CaZips {
    zips: Vec<UspsZip>,
    /// The ZIPs of each primary city name, by [`place_key`].
    by_primary: HashMap<String, Vec<u32>>,
    /// The ZIPs of each other accepted city name, by [`place_key`].
    by_acceptable: HashMap<String, Vec<u32>>,
}

impl CaZips {
    fn from_usps() -> CaZips {
        let mut ca = CaZips {
            zips: Vec::new(),
            by_primary: HashMap::new(),
            by_acceptable: HashMap::new(),
        };
        for z in zipcodes::database().iter().filter(|z| z.state == "CA") {
            let Ok(n) = z.zip_code.parse::<u32>() else {
                continue;
            };
            ca.by_primary.entry(place_key(&z.city)).or_default().push(n);
            for a in &z.acceptable_cities {
                ca.by_acceptable.entry(place_key(a)).or_default().push(n);
            }
            let county = z.county.to_uppercase();
            ca.zips.push(UspsZip {
                zip: n,
                city: z.city.to_uppercase(),
                county: county
                    .strip_suffix(" COUNTY")
                    .unwrap_or(&county)
                    .to_string(),
            });
        }
        ca
    }
}

/// The jurisdictions of a location of combined `rate`: the statewide base's and, above it,
/// its district taxes as one jurisdiction with its rule (`at`: from, source, file).
fn location_jurisdictions(
    ctx: &mut Ctx,
    row: &parse::CdtfaRow,
    rate: Decimal,
    base: &Statewide,
    (from, source, file): (Date, u32, &str),
) -> Result<Vec<JurisdictionId>, BuildError> {
    let name = row.location.to_uppercase();
    let mut js = vec![base.state, base.bb];
    let district = rate - base.rate;
    let kind = match row.kind {
        CdtfaKind::City => "CITY",
        CdtfaKind::County => "COUNTY",
    };
    if !district.is_zero() {
        let code = format!("06:CDTFA:{kind}:{name}");
        let j = ctx.jur(
            &code,
            &format!("{name} DISTRICT TAXES"),
            Level::District,
            "CA",
        )?;
        ctx.rule(
            j,
            GENERAL,
            district,
            from,
            Date::MAX,
            Level::District,
            false,
            source,
            file,
        )?;
        js.push(j);
    }
    Ok(js)
}

/// The locations' claims on ZIP codes, and what the list's rows came to.
#[derive(Default)]
struct Claims {
    /// Per ZIP: the city whose USPS primary name it is.
    primary: HashMap<u32, Claim>,
    /// Per ZIP: cities USPS also accepts there.
    secondary: BTreeMap<u32, Vec<Claim>>,
    /// Each county's unincorporated area, by [`place_key`].
    counties: HashMap<String, Claim>,
    /// County header rows: (county by [`place_key`], location).
    headers: Vec<(String, String)>,
    /// Locations that match no USPS city name or county.
    unlocated: Vec<String>,
    /// Locations with a rate placed.
    placed: usize,
    /// Of them, those placed only by a city name USPS accepts in ZIPs named for another.
    placed_by_other_name: usize,
    /// Rows that carry only a note.
    noted: usize,
}

impl Claims {
    /// Records the claim of location `row` on the ZIPs its name or county places it in.
    fn claim(&mut self, row: &parse::CdtfaRow, claim: Claim, ca: &CaZips) {
        match row.kind {
            CdtfaKind::City => {
                let key = place_key(&row.location);
                let strong = ca.by_primary.get(&key);
                let weak = ca.by_acceptable.get(&key);
                if strong.is_none() && weak.is_none() {
                    self.unlocated.push(row.location.clone());
                    return;
                }
                self.placed += 1;
                if strong.is_none() {
                    self.placed_by_other_name += 1;
                }
                for &z in strong.into_iter().flatten() {
                    self.primary.insert(z, claim.clone());
                }
                for &z in weak.into_iter().flatten() {
                    self.secondary.entry(z).or_default().push(claim.clone());
                }
            }
            CdtfaKind::County => {
                let county = place_key(&row.county);
                if ca.zips.iter().any(|z| place_key(&z.county) == county) {
                    self.placed += 1;
                    self.counties.insert(county, claim);
                } else {
                    self.unlocated.push(row.location.clone());
                }
            }
        }
    }
}

/// Places every California ZIP: its primary city's rate; else its county's unincorporated
/// rate; else the one city USPS also accepts there. Where another location that shares the
/// ZIP has a different rate, the ZIP is split between jurisdictions: the answer says
/// PARTIAL ([`PlaceNote::SharedPlaces`]), and an address that names one of the places
/// gets that place's rate (see [`name_places`]). Answers the ZIPs so split and those left
/// to the statewide base (`STATE_ONLY`).
fn place_zips(
    ctx: &mut Ctx,
    ca: &CaZips,
    claims: &Claims,
    base: &Statewide,
    (from, source, file): (Date, u32, &str),
) -> Result<(Vec<u32>, Vec<u32>), BuildError> {
    let mut split_zips = Vec::new();
    let mut state_only = Vec::new();
    for z in &ca.zips {
        let others = claims
            .secondary
            .get(&z.zip)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let county = claims.counties.get(&place_key(&z.county));
        // A ZIP whose USPS name is no CDTFA city (an unincorporated place such as Castro
        // Valley, or a shared name such as Belvedere Tiburon) takes its county's
        // unincorporated rate; the cities USPS also accepts there make it PARTIAL when
        // their rates differ.
        let chosen = match claims.primary.get(&z.zip) {
            Some(c) => Some(c),
            None => county.or(others.first()),
        };
        let Some(chosen) = chosen else {
            // No CDTFA location for this ZIP's county: the statewide base alone.
            state_only.push(z.zip);
            let (js, days) = (&[base.state, base.bb], (from, Date::MAX));
            ctx.set_zip(
                z.zip,
                "CA",
                &z.city,
                js,
                days,
                Coverage::StateOnly,
                source,
                file,
            )?;
            continue;
        };
        // The places that may tax an address in this ZIP: the chosen one, every city USPS
        // also accepts there, and the county's unincorporated area when the ZIP's primary
        // name is not a CDTFA city.
        let rates = others.iter().map(|c| c.rate).collect::<Vec<_>>();
        let split = !rates.iter().all(|&r| r == chosen.rate);
        let coverage = if split {
            split_zips.push(z.zip);
            Coverage::Partial
        } else {
            Coverage::Full
        };
        let days = (from, Date::MAX);
        ctx.set_zip(
            z.zip, "CA", &z.city, &chosen.js, days, coverage, source, file,
        )?;
        if split {
            // The primary name answers for the ZIP's usual place only when it is that
            // place's (a CDTFA city, or the county's unincorporated area it stands for).
            let usual = claims.primary.contains_key(&z.zip) || county.is_some();
            name_places(ctx, z, usual.then_some(chosen), others, (from, source))?;
        }
    }
    Ok((split_zips, state_only))
}

/// The places of a ZIP shared by places of different rates, under the city names a buyer
/// may write: the ZIP's USPS primary name for its usual place (`usual`, when that name is
/// the place's), and each city USPS also accepts there under its CDTFA name; each with its
/// full rate from `from` on. The ZIP's own answer says it is shared.
fn name_places(
    ctx: &mut Ctx,
    z: &UspsZip,
    usual: Option<&Claim>,
    others: &[Claim],
    (from, source): (Date, u32),
) -> Result<(), BuildError> {
    ctx.b
        .zip_note(z.zip, from, Date::MAX, PlaceNote::SharedPlaces);
    let named = usual
        .map(|c| (z.city.as_str(), c))
        .into_iter()
        .chain(others.iter().map(|c| (c.name.as_str(), c)));
    for (name, claim) in named {
        ctx.b.zip_city(
            z.zip,
            name,
            &claim.js,
            from,
            Date::MAX,
            Coverage::Full,
            source,
        )?;
    }
    Ok(())
}

/// Notes what the list of `file` came to: the locations placed, the rows without a rate,
/// the locations not placed, and the ZIPs split or left to the statewide base.
fn notes(
    ctx: &mut Ctx,
    file: &str,
    mut claims: Claims,
    split_zips: Vec<u32>,
    state_only: Vec<u32>,
) {
    let mut headers_placed = 0usize;
    for (county, location) in std::mem::take(&mut claims.headers) {
        if claims.counties.contains_key(&county) {
            headers_placed += 1;
        } else {
            claims.unlocated.push(location);
        }
    }
    let Claims {
        unlocated,
        placed,
        placed_by_other_name,
        noted,
        ..
    } = claims;
    ctx.summary.notes.push(format!(
        "{file}: {} of {} locations placed: {placed} with a rate ({placed_by_other_name} only \
         by a city name USPS accepts in ZIPs named for another place) and {headers_placed} \
         county header rows, whose area their cities' and unincorporated area's rows cover; \
         {} ZIPs shared by places of different rates answer PARTIAL",
        placed + headers_placed,
        placed + headers_placed + unlocated.len(),
        split_zips.len()
    ));
    if noted > 0 {
        ctx.summary.notes.push(format!(
            "{file}: {noted} rows carry only a note and no rate; skipped"
        ));
    }
    if !unlocated.is_empty() {
        ctx.summary.notes.push(format!(
            "{file}: {} locations match no USPS city name or county: {}",
            unlocated.len(),
            unlocated.join(", ")
        ));
    }
    if !state_only.is_empty() {
        ctx.summary.notes.push(format!(
            "{file}: {} ZIPs lie in no county of the list and answer STATE_ONLY",
            state_only.len()
        ));
    }
}
