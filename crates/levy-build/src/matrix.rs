//! The taxability matrix in `data/taxability/`: how each place treats each product tax code,
//! one file per place, each cell with its source (the grammar is
//! `data/taxability/README.md`).
//!
//! [`load`] reads and checks the files; the curated rules then compile them: a US state's
//! cells become rules over the state's jurisdictions in the builder (the same rewriting
//! that `us-rules.toml` uses, see `Curated::apply_rules`), Canada's and each country's
//! become each code's rates period by period over the jurisdiction's general rates
//! ([`Matrix::apply_rates`]), and every cell, `unknown` ones included, is recorded in the
//! table so that a calculation knows when a product's treatment in a place is not known
//! ([`Matrix::record`]).

use std::borrow::Cow;
use std::collections::BTreeSet;

use levy_core::{
    Date, Decimal, JurisdictionId, RuleSpec, SaleCondition, TableBuilder, TaxabilityCellSpec,
    TaxabilityLevels, Treatment,
};
use serde::Deserialize;

use crate::curated::{
    amount, date, invalid, nonempty, optional_interval, parse_toml, part, percent, CuratedError,
    Part, PartRate, PartRow, Scope, Taxonomy, GENERAL,
};

/// The folder of the matrix inside a data folder.
pub const DIR: &str = "taxability";

/// The label a `taxable` cell's rules keep: the general rule's own, period by period.
const KEEP_LABEL: &str = "";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    place: String,
    name: String,
    #[allow(dead_code)] // for readers of the file; levy does not use it
    matrix: Option<String>,
    #[serde(default)]
    cell: Vec<CellRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CellRow {
    codes: Vec<String>,
    level: Option<String>,
    applies_to: Option<Vec<String>>,
    treatment: String,
    rate: Option<String>,
    parts: Option<Vec<PartRow>>,
    sale_at_most: Option<String>,
    from: Option<toml::value::Datetime>,
    to: Option<toml::value::Datetime>,
    label: Option<String>,
    source: String,
    as_of: toml::value::Datetime,
    #[serde(default)]
    note: String,
}

/// Which folder a file is in: what its places and levels are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Folder {
    /// `us/`: a state; levels `state`, `local`, `all` (or `applies_to`).
    Us,
    /// `ca/`: Canada (`federal`) or a province (`provincial`).
    Ca,
    /// `intl/`: a country (`country`).
    Intl,
}

/// One checked cell.
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    /// `cell[3]`, for messages.
    pub(crate) key: String,
    /// The tax codes it names (`*` expanded).
    pub(crate) codes: Vec<String>,
    /// For a US cell: the jurisdictions of the state it writes rules for.
    pub(crate) scopes: Vec<Scope>,
    /// The levels as written.
    pub(crate) scope_text: String,
    /// The levels whose treatment it makes known.
    pub(crate) levels: TaxabilityLevels,
    pub(crate) treatment: Treatment,
    /// The rule lines it writes (none for `unknown`).
    pub(crate) parts: Vec<Part>,
    pub(crate) sale_at_most: Option<Decimal>,
    /// The per-sale threshold group of its rules (0 without a threshold).
    pub(crate) group: u32,
    pub(crate) from: Date,
    pub(crate) to: Date,
    /// The rate type of its rules; empty for a `taxable` cell without a label, whose rules
    /// keep the general rules' own.
    pub(crate) label: String,
    pub(crate) summary: String,
    pub(crate) source: String,
    pub(crate) as_of: Date,
    pub(crate) note: String,
}

impl Cell {
    /// Whether the cell is in force on `day`.
    fn on(&self, day: Date) -> bool {
        self.from <= day && day <= self.to
    }
}

/// One place's file, checked.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    /// The path inside the data folder (`taxability/us/TN.toml`).
    pub(crate) file: String,
    pub(crate) folder: Folder,
    /// ISO 3166-1 alpha-2.
    pub(crate) country: String,
    /// The state or province; empty for a country and for Canada's federal file.
    pub(crate) region: String,
    pub(crate) cells: Vec<Cell>,
}

/// The whole matrix.
#[derive(Clone, Debug, Default)]
pub(crate) struct Matrix {
    pub(crate) places: Vec<Place>,
    /// `(file, text's SHA-256)` of every file read, in path order.
    pub(crate) files: Vec<(String, String)>,
}

/// The places the other curated files define, that a matrix file may be for.
pub(crate) struct Known<'a> {
    /// US states, DC and Puerto Rico by abbreviation.
    pub(crate) states: BTreeSet<&'a str>,
    /// Canadian provinces and territories by code.
    pub(crate) provinces: BTreeSet<&'a str>,
    /// VAT and GST countries by code.
    pub(crate) countries: BTreeSet<&'a str>,
}

/// Reads and checks the matrix files, given as `(path inside the data folder, text)`.
pub(crate) fn load(
    files: &[(String, Cow<'_, str>)],
    tax: &Taxonomy,
    known: &Known<'_>,
) -> Result<Matrix, CuratedError> {
    let mut m = Matrix::default();
    let mut group = 0u32;
    for (path, text) in files {
        let place = load_file(path, text, tax, known, &mut group)?;
        m.files
            .push((path.clone(), crate::curated::sha256_hex(text)));
        m.places.push(place);
    }
    Ok(m)
}

/// The folder and place a file's path names (`taxability/us/TN.toml`).
fn place_of(f: &str, known: &Known<'_>) -> Result<(Folder, String, String), CuratedError> {
    let rest = f.strip_prefix(DIR).and_then(|r| r.strip_prefix('/'));
    let parts: Vec<&str> = rest.map(|r| r.split('/').collect()).unwrap_or_default();
    let bad = || {
        invalid(
            f,
            "file",
            "a matrix file is taxability/us/<state>.toml, taxability/ca/<CA or province>.toml \
             or taxability/intl/<country>.toml",
        )
    };
    let [folder, name] = parts.as_slice() else {
        return Err(bad());
    };
    let stem = name.strip_suffix(".toml").ok_or_else(bad)?;
    match *folder {
        "us" if known.states.contains(stem) => Ok((Folder::Us, "US".into(), stem.into())),
        "ca" if stem == "CA" => Ok((Folder::Ca, "CA".into(), String::new())),
        "ca" if known.provinces.contains(stem) => Ok((Folder::Ca, "CA".into(), stem.into())),
        "intl" if known.countries.contains(stem) => Ok((Folder::Intl, stem.into(), String::new())),
        "us" | "ca" | "intl" => Err(invalid(
            f,
            "file",
            format!("{stem:?} is not a place that us-states.toml, canada.toml or countries.toml defines"),
        )),
        _ => Err(bad()),
    }
}

fn load_file(
    f: &str,
    text: &str,
    tax: &Taxonomy,
    known: &Known<'_>,
    group: &mut u32,
) -> Result<Place, CuratedError> {
    let (folder, country, region) = place_of(f, known)?;
    let mf: MatrixFile = parse_toml(f, text)?;
    let want = if region.is_empty() {
        country.clone()
    } else {
        format!("{country}-{region}")
    };
    if mf.place != want {
        return Err(invalid(
            f,
            "place",
            format!("{:?}: this file's place is {want:?}", mf.place),
        ));
    }
    nonempty(f, "name", &mf.name)?;
    let mut cells = Vec::with_capacity(mf.cell.len());
    let mut stars = Vec::new();
    for (i, row) in mf.cell.iter().enumerate() {
        let key = format!("cell[{i}]");
        let cell = cell(f, &key, row, folder, &region, tax, group)?;
        if row.codes.len() == 1 && row.codes[0] == "*" {
            stars.push(cells.len());
        }
        cells.push(cell);
    }
    // `*`: every matrix code no other cell of the same levels names.
    for &i in &stars {
        let levels = cells[i].levels;
        let named: BTreeSet<&str> = cells
            .iter()
            .enumerate()
            .filter(|&(j, c)| j != i && c.levels.0 & levels.0 != 0)
            .flat_map(|(_, c)| c.codes.iter().map(String::as_str))
            .collect();
        let codes: Vec<String> = tax
            .matrix_codes()
            .filter(|c| !named.contains(c))
            .map(str::to_string)
            .collect();
        cells[i].codes = codes;
    }
    local_by_parts(&mut cells);
    overlaps(f, &cells)?;
    Ok(Place {
        file: f.to_string(),
        folder,
        country,
        region,
        cells,
    })
}

/// The kinds of local jurisdiction a US cell names when it names them by kind alone
/// (`county`, `city`, `district`): bits 1, 2 and 4; `None` for any other cell.
fn local_kinds(c: &Cell) -> Option<u8> {
    let mut bits = 0u8;
    for s in &c.scopes {
        bits |= match s {
            Scope::County => 1,
            Scope::City => 2,
            Scope::District => 4,
            _ => return None,
        };
    }
    (bits != 0).then_some(bits)
}

/// Cells that name local jurisdictions by kind make the local level known together: a
/// cell counts as knowing it when, for each of its codes, the cells of the same days that
/// name the code by kind cover counties, cities and districts (a rate for the counties and
/// cities, another for the districts: Virginia's food).
fn local_by_parts(cells: &mut [Cell]) {
    let kinds: Vec<Option<u8>> = cells.iter().map(local_kinds).collect();
    let mut known = vec![false; cells.len()];
    for (i, c) in cells.iter().enumerate() {
        if kinds[i].is_none() {
            continue;
        }
        known[i] = c.codes.iter().all(|code| {
            let covered = cells
                .iter()
                .zip(&kinds)
                .filter(|(o, k)| k.is_some() && o.from == c.from && o.to == c.to)
                .filter(|(o, _)| o.codes.contains(code))
                .fold(0u8, |acc, (_, k)| acc | k.unwrap_or(0));
            covered == 7
        });
    }
    for (c, k) in cells.iter_mut().zip(known) {
        if k {
            c.levels = TaxabilityLevels(c.levels.0 | TaxabilityLevels::LOWER.0);
        }
    }
}

/// Two cells of one file may not give one code at one level on one day (a cell with a
/// per-sale threshold may lie over one without; cells naming different kinds of local
/// jurisdiction, counties and districts say, speak for different jurisdictions).
fn overlaps(f: &str, cells: &[Cell]) -> Result<(), CuratedError> {
    /// One code at one level over some days, as a cell gives it.
    struct Span<'a> {
        code: &'a str,
        bit: u8,
        sale: bool,
        from: Date,
        to: Date,
        key: &'a str,
        kinds: Option<u8>,
    }
    let mut spans: Vec<Span<'_>> = Vec::new();
    for c in cells {
        let kinds = local_kinds(c);
        for code in &c.codes {
            for bit in [TaxabilityLevels::UPPER.0, TaxabilityLevels::LOWER.0] {
                if c.levels.0 & bit == 0 {
                    continue;
                }
                let sale = c.sale_at_most.is_some();
                let apart =
                    |other: Option<u8>| matches!((kinds, other), (Some(a), Some(b)) if a & b == 0);
                if let Some(other) = spans.iter().find(|s| {
                    s.code == code
                        && s.bit == bit
                        && s.sale == sale
                        && !(c.to < s.from || s.to < c.from)
                        && !apart(s.kinds)
                }) {
                    return Err(invalid(
                        f,
                        &c.key,
                        format!("{code} is also given by {} on the same days", other.key),
                    ));
                }
                spans.push(Span {
                    code,
                    bit,
                    sale,
                    from: c.from,
                    to: c.to,
                    key: &c.key,
                    kinds,
                });
            }
        }
    }
    Ok(())
}

/// The levels a folder's `level` names.
fn levels_of(
    f: &str,
    key: &str,
    folder: Folder,
    region: &str,
    level: &str,
) -> Result<(TaxabilityLevels, Vec<Scope>), CuratedError> {
    let up = TaxabilityLevels::UPPER;
    let low = TaxabilityLevels::LOWER;
    let ok = match (folder, level) {
        (Folder::Us, "state") => Some((up, vec![Scope::State])),
        (Folder::Us, "local") => Some((low, vec![Scope::Local])),
        (Folder::Us, "all") => Some((TaxabilityLevels::ALL, vec![Scope::StateAll, Scope::Local])),
        (Folder::Ca, "federal") if region.is_empty() => Some((up, Vec::new())),
        (Folder::Ca, "provincial") if !region.is_empty() => Some((low, Vec::new())),
        (Folder::Intl, "country") => Some((up, Vec::new())),
        _ => None,
    };
    ok.ok_or_else(|| {
        let allowed = match folder {
            Folder::Us => "state, local or all",
            Folder::Ca if region.is_empty() => "federal",
            Folder::Ca => "provincial",
            Folder::Intl => "country",
        };
        invalid(
            f,
            format!("{key}.level"),
            format!("{level:?}: this file's levels are {allowed}"),
        )
    })
}

/// A US cell's `applies_to`, in `us-rules.toml`'s grammar: the scopes, and the levels it
/// makes known (the state's own with "state" or "state_all", the local with "local"; cells
/// naming "county", "city" and "district" among them make the local level known together,
/// see [`local_by_parts`]).
fn applies_to(
    f: &str,
    key: &str,
    list: &[String],
) -> Result<(TaxabilityLevels, Vec<Scope>), CuratedError> {
    let mut scopes = Vec::new();
    let mut levels = 0u8;
    for a in list {
        match a.as_str() {
            "state" => {
                scopes.push(Scope::State);
                levels |= TaxabilityLevels::UPPER.0;
            }
            "state_all" => {
                scopes.push(Scope::StateAll);
                levels |= TaxabilityLevels::UPPER.0;
            }
            "local" => {
                scopes.push(Scope::Local);
                levels |= TaxabilityLevels::LOWER.0;
            }
            "county" => scopes.push(Scope::County),
            "city" => scopes.push(Scope::City),
            "district" => scopes.push(Scope::District),
            "" => return Err(invalid(f, format!("{key}.applies_to"), "empty entry")),
            code => scopes.push(Scope::Code(code.to_string())),
        }
    }
    if scopes.is_empty() {
        return Err(invalid(
            f,
            format!("{key}.applies_to"),
            "names no jurisdiction",
        ));
    }
    Ok((TaxabilityLevels(levels), scopes))
}

/// Validates one cell of a place's matrix file (at `key`), `group` the last per-sale
/// threshold group handed out: where it applies, which codes, how it treats them, when,
/// and its source.
fn cell(
    f: &str,
    key: &str,
    row: &CellRow,
    folder: Folder,
    region: &str,
    tax: &Taxonomy,
    group: &mut u32,
) -> Result<Cell, CuratedError> {
    let (levels, scopes, scope_text) = cell_where(f, key, row, folder, region)?;
    let star = cell_codes(f, key, row, tax)?;
    let treatment = cell_treatment(f, key, row, star)?;
    let parts = cell_parts(f, key, row, treatment)?;
    let sale_at_most = match &row.sale_at_most {
        Some(s) => Some(amount(f, &format!("{key}.sale_at_most"), s)?),
        None => None,
    };
    let group = match sale_at_most {
        Some(_) => {
            *group += 1;
            *group
        }
        None => 0,
    };
    let (from, to) = optional_interval(f, key, &row.from, &row.to)?;
    nonempty(f, &format!("{key}.source"), &row.source)?;
    let as_of = date(f, &format!("{key}.as_of"), &row.as_of)?;
    let label = cell_label(f, key, row, treatment, &parts)?;
    Ok(Cell {
        key: key.to_string(),
        codes: if star { Vec::new() } else { row.codes.clone() },
        scopes,
        scope_text,
        levels,
        treatment,
        summary: summary(treatment, &parts),
        parts,
        sale_at_most,
        group,
        from,
        to,
        label,
        source: row.source.trim().to_string(),
        as_of,
        note: row.note.trim().to_string(),
    })
}

/// Where a cell applies: its `level`, or in `us/` the jurisdictions it names
/// (`applies_to`), as levels, scopes and the text written.
fn cell_where(
    f: &str,
    key: &str,
    row: &CellRow,
    folder: Folder,
    region: &str,
) -> Result<(TaxabilityLevels, Vec<Scope>, String), CuratedError> {
    match (&row.level, &row.applies_to) {
        (Some(level), None) => {
            let (l, s) = levels_of(f, key, folder, region, level)?;
            Ok((l, s, level.clone()))
        }
        (None, Some(list)) if folder == Folder::Us => {
            let (l, s) = applies_to(f, key, list)?;
            Ok((l, s, list.join(", ")))
        }
        (None, Some(_)) => Err(invalid(
            f,
            format!("{key}.applies_to"),
            "only a US state's cells name jurisdictions",
        )),
        _ => Err(invalid(
            f,
            key,
            "give `level` (or, in us/, `applies_to`), not both",
        )),
    }
}

/// Checks the codes a cell names: known, no root, none twice; or `["*"]`, every code
/// (answered `true`).
fn cell_codes(f: &str, key: &str, row: &CellRow, tax: &Taxonomy) -> Result<bool, CuratedError> {
    let star = row.codes.len() == 1 && row.codes[0] == "*";
    if row.codes.is_empty() {
        return Err(invalid(f, format!("{key}.codes"), "names no tax code"));
    }
    if star {
        return Ok(true);
    }
    for c in &row.codes {
        tax.known(f, &format!("{key}.codes"), c)?;
        if tax.is_root(c) {
            return Err(invalid(
                f,
                format!("{key}.codes"),
                format!("{c} is a root of the taxonomy, known everywhere: leave it out"),
            ));
        }
    }
    let unique: BTreeSet<&String> = row.codes.iter().collect();
    if unique.len() != row.codes.len() {
        return Err(invalid(f, format!("{key}.codes"), "names a code twice"));
    }
    Ok(false)
}

/// A cell's treatment, with the fields that go with it: `rate` with `rate`, `parts` with
/// `parts`, and every code (`star`) only exempt.
fn cell_treatment(
    f: &str,
    key: &str,
    row: &CellRow,
    star: bool,
) -> Result<Treatment, CuratedError> {
    let treatment = Treatment::parse(&row.treatment).ok_or_else(|| {
        invalid(
            f,
            format!("{key}.treatment"),
            format!(
                "{:?} is not taxable, exempt, rate, parts or unknown",
                row.treatment
            ),
        )
    })?;
    if star && treatment != Treatment::Exempt {
        return Err(invalid(
            f,
            format!("{key}.codes"),
            "[\"*\"] is only for a level with no tax at all (treatment = \"exempt\")",
        ));
    }
    if row.rate.is_some() != (treatment == Treatment::Rate) {
        return Err(invalid(
            f,
            format!("{key}.rate"),
            "`rate` goes with treatment = \"rate\", and only with it",
        ));
    }
    if row.parts.is_some() != (treatment == Treatment::Parts) {
        return Err(invalid(
            f,
            format!("{key}.parts"),
            "`parts` go with treatment = \"parts\", and only with them",
        ));
    }
    Ok(treatment)
}

/// The rule parts a cell's treatment writes: the general rate, nothing, a rate of its own,
/// its own parts, or none for an unknown cell (which must say why).
fn cell_parts(
    f: &str,
    key: &str,
    row: &CellRow,
    treatment: Treatment,
) -> Result<Vec<Part>, CuratedError> {
    let general = |scale| Part {
        rate: PartRate::General,
        scale,
        proportional: false,
        band: (Decimal::ZERO, None),
        units: (Decimal::ZERO, None),
        fee: Decimal::ZERO,
    };
    let fixed = |r| Part {
        rate: PartRate::Fixed(r),
        ..general(Decimal::ONE)
    };
    Ok(match treatment {
        Treatment::Taxable => vec![general(Decimal::ONE)],
        Treatment::Exempt => vec![fixed(Decimal::ZERO)],
        Treatment::Rate => {
            let r = row.rate.as_deref().unwrap_or_default();
            vec![fixed(percent(f, &format!("{key}.rate"), r)?)]
        }
        Treatment::Parts => {
            let rows = row.parts.as_deref().unwrap_or_default();
            if rows.is_empty() {
                return Err(invalid(f, format!("{key}.parts"), "no parts"));
            }
            rows.iter()
                .enumerate()
                .map(|(n, p)| part(f, &format!("{key}.parts[{n}]"), p))
                .collect::<Result<_, _>>()?
        }
        Treatment::Unknown => {
            nonempty(f, &format!("{key}.note"), &row.note)
                .map_err(|_| invalid(f, format!("{key}.note"), "an unknown cell says why"))?;
            Vec::new()
        }
    })
}

/// The rate type label of the rules a cell writes: its own `label`, else one that says
/// what its treatment does (the general rules' own for a cell at the general rate).
fn cell_label(
    f: &str,
    key: &str,
    row: &CellRow,
    treatment: Treatment,
    parts: &[Part],
) -> Result<String, CuratedError> {
    Ok(match (&row.label, treatment) {
        (Some(l), _) => {
            nonempty(f, &format!("{key}.label"), l)?;
            l.clone()
        }
        (None, Treatment::Taxable | Treatment::Unknown) => KEEP_LABEL.to_string(),
        (None, Treatment::Exempt) => "EXEMPT".to_string(),
        (None, Treatment::Rate) => "RATE OF ITS OWN".to_string(),
        (None, Treatment::Parts) if parts.iter().any(|p| p.proportional) => {
            "DELIVERY, IN PROPORTION TO TAXABLE GOODS".to_string()
        }
        (None, Treatment::Parts) if parts.iter().all(|p| p.rate == PartRate::General) => {
            KEEP_LABEL.to_string()
        }
        (None, Treatment::Parts) => "SPECIAL TREATMENT".to_string(),
    })
}

/// What a cell charges, in words, for `levy taxability`.
fn summary(treatment: Treatment, parts: &[Part]) -> String {
    let pct = |r: Decimal| format!("{}%", (r * Decimal::from(100)).normalize());
    match treatment {
        Treatment::Taxable => "general rate".into(),
        Treatment::Exempt => "not taxed".into(),
        Treatment::Unknown => "not known".into(),
        Treatment::Rate | Treatment::Parts => parts
            .iter()
            .map(|p| {
                let mut s = match p.rate {
                    PartRate::General => "general rate".to_string(),
                    PartRate::Fixed(r) => pct(r),
                };
                if p.scale != Decimal::ONE {
                    s += &format!(" on {} of the price", pct(p.scale));
                }
                match p.band {
                    (lo, None) if lo.is_zero() => {}
                    (lo, None) => s += &format!(" on the part of each item's price above {lo}"),
                    (lo, Some(hi)) => {
                        s += &format!(" on the part of each item's price from {lo} to {hi}")
                    }
                }
                match p.units {
                    (lo, None) if lo.is_zero() => {}
                    (lo, None) => s += &format!(", items priced {lo} or more"),
                    (lo, Some(hi)) if lo.is_zero() => s += &format!(", items priced below {hi}"),
                    (lo, Some(hi)) => s += &format!(", items priced from {lo} to below {hi}"),
                }
                if !p.fee.is_zero() {
                    s += &format!(", plus {} per item", p.fee);
                }
                if p.proportional {
                    s += ", in proportion to the taxable goods of the sale";
                }
                s
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The tax codes from `code` up to the root, nearest first.
fn chain<'a>(tax: &'a Taxonomy, code: &'a str) -> Vec<&'a str> {
    let mut out = vec![code];
    let mut cur = code;
    while let Some(p) = tax.parent(cur) {
        if out.len() > 64 {
            break;
        }
        out.push(p);
        cur = p;
    }
    out
}

/// Which side of a per-sale threshold a rate is worked out for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// At or below: a cell with a threshold applies.
    AtMost,
    /// Above: cells with a threshold do not.
    Above,
}

/// How one level treats a code on a day: the nearest code of its chain that the level's
/// cells give on that day (a cell with a threshold only on the `AtMost` side, and before a
/// cell without one), skipping `unknown` cells. `None`: no cell; the general rate applies.
fn level_cell<'a>(cells: &[&'a Cell], chain: &[&str], day: Date, side: Side) -> Option<&'a Cell> {
    for code in chain {
        let mut found: Option<&Cell> = None;
        for c in cells {
            if !c.on(day) || c.treatment == Treatment::Unknown || !c.codes.iter().any(|x| x == code)
            {
                continue;
            }
            match (c.sale_at_most.is_some(), side) {
                (true, Side::Above) => continue,
                (true, Side::AtMost) => return Some(c),
                (false, _) => found = found.or(Some(c)),
            }
        }
        if found.is_some() {
            return found;
        }
    }
    None
}

/// One rule line worked out for a day: what a [`RuleSpec`] holds but its code and days.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    rate: Decimal,
    band: (Decimal, Option<Decimal>),
    units: (Decimal, Option<Decimal>),
    fee: Decimal,
    proportional: bool,
    label: String,
}

impl Line {
    /// The whole price at `rate`.
    fn flat(rate: Decimal, label: &str) -> Line {
        Line {
            rate,
            band: (Decimal::ZERO, None),
            units: (Decimal::ZERO, None),
            fee: Decimal::ZERO,
            proportional: false,
            label: label.to_string(),
        }
    }

    fn is_flat(&self) -> bool {
        self.band == (Decimal::ZERO, None)
            && self.units == (Decimal::ZERO, None)
            && self.fee.is_zero()
    }
}

/// The lines a level's cell gives where the level's general rate is `general` (labelled
/// `general_label`): the general rate without a cell (or with a `taxable` one), nothing
/// taxed for `exempt`, each part otherwise.
fn level_lines(cell: Option<&Cell>, general: Decimal, general_label: &str) -> Vec<Line> {
    let label = label_of(cell, general_label);
    match cell.map(|c| c.treatment) {
        Some(Treatment::Exempt) => vec![Line::flat(Decimal::ZERO, &label)],
        Some(Treatment::Rate | Treatment::Parts) => cell
            .map(|c| c.parts.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|p| Line {
                rate: match p.rate {
                    PartRate::Fixed(r) => r,
                    PartRate::General => general,
                } * p.scale,
                band: p.band,
                units: p.units,
                fee: p.fee,
                proportional: p.proportional,
                label: label.clone(),
            })
            .collect(),
        _ => vec![Line::flat(general, &label)],
    }
}

/// What one day gives a code on one side of a threshold: its lines, and the threshold
/// group that decided them.
struct Day {
    lines: Vec<Line>,
    group: Option<u32>,
}

/// A general rate in force over an interval, with its rule's label.
#[derive(Clone, Debug)]
struct GeneralPeriod {
    from: Date,
    to: Date,
    rate: Decimal,
    label: String,
}

/// The general-merchandise periods of `j` as the builder holds them.
fn general_periods(b: &TableBuilder, j: JurisdictionId) -> Vec<GeneralPeriod> {
    let mut out: Vec<GeneralPeriod> = b
        .rules()
        .iter()
        .filter(|r| r.jurisdiction == j && r.tax_code == GENERAL)
        .map(|r| GeneralPeriod {
            from: r.from,
            to: r.to,
            rate: r.rate,
            label: r.rate_type.clone(),
        })
        .collect();
    out.sort_by_key(|p| p.from);
    out
}

fn general_on(periods: &[GeneralPeriod], day: Date) -> Option<&GeneralPeriod> {
    periods.iter().find(|p| p.from <= day && day <= p.to)
}

/// How the rates of one jurisdiction are made from the cells: one level (a country's VAT,
/// Canada's GST, a province's own tax) or two (an HST: the federal part, then the
/// provincial part over the HST's general rate less the federal one).
struct RatePlan<'a> {
    jurisdiction: JurisdictionId,
    /// The jurisdiction's general periods.
    general: Vec<GeneralPeriod>,
    /// The cells of the jurisdiction's own level.
    own: Vec<&'a Cell>,
    /// For an HST: the federal cells and the GST's general periods.
    federal: Option<(Vec<&'a Cell>, Vec<GeneralPeriod>)>,
    /// The manifest index of the matrix.
    source: u32,
}

impl RatePlan<'_> {
    /// Every code the plan's cells name.
    fn codes(&self) -> BTreeSet<String> {
        self.own
            .iter()
            .chain(self.federal.iter().flat_map(|(c, _)| c.iter()))
            .filter(|c| c.treatment != Treatment::Unknown)
            .flat_map(|c| c.codes.iter().cloned())
            .collect()
    }

    /// The days on which something may change: every period's and cell's first day and the
    /// day after its last.
    fn breaks(&self) -> Vec<Date> {
        let mut days = vec![Date::MIN];
        let mut add = |from: Date, to: Date| {
            days.push(from);
            if to < Date::MAX {
                days.push(Date(to.0 + 1));
            }
        };
        for p in &self.general {
            add(p.from, p.to);
        }
        for c in &self.own {
            add(c.from, c.to);
        }
        if let Some((cells, periods)) = &self.federal {
            for c in cells {
                add(c.from, c.to);
            }
            for p in periods {
                add(p.from, p.to);
            }
        }
        days.sort_unstable();
        days.dedup();
        days
    }

    /// The lines of `chain[0]` on `day` on one side of any threshold (see [`Day`]).
    fn day(&self, chain: &[&str], day: Date, side: Side) -> Option<Day> {
        let general = general_on(&self.general, day)?;
        let own = level_cell(&self.own, chain, day, side);
        let group = own.filter(|c| c.group != 0).map(|c| c.group);
        let Some((fed_cells, fed_periods)) = &self.federal else {
            return Some(Day {
                lines: level_lines(own, general.rate, &general.label),
                group,
            });
        };
        // An HST: the GST's part, then the province's over what remains of the HST.
        let fed_general = general_on(fed_periods, day).map_or(Decimal::ZERO, |p| p.rate);
        let fed = level_cell(fed_cells, chain, day, side);
        let group = group.or(fed.filter(|c| c.group != 0).map(|c| c.group));
        if fed.is_some_and(|c| c.treatment == Treatment::Exempt) {
            // A supply zero-rated for the GST is zero-rated for the whole HST.
            return Some(Day {
                lines: level_lines(fed, Decimal::ZERO, &general.label),
                group,
            });
        }
        let fed_lines = level_lines(fed, fed_general, &general.label);
        let own_lines = level_lines(own, general.rate - fed_general, &general.label);
        let lines = match (fed_lines.as_slice(), own_lines.as_slice()) {
            // One rate on the whole price at each level (the usual): one HST rule.
            ([f], [o]) if f.is_flat() && o.is_flat() => {
                let label = match (own, fed) {
                    (Some(c), _) if c.treatment != Treatment::Taxable => o.label.clone(),
                    (_, Some(_)) => f.label.clone(),
                    _ => general.label.clone(),
                };
                vec![Line {
                    rate: f.rate + o.rate,
                    proportional: f.proportional || o.proportional,
                    label,
                    ..Line::flat(Decimal::ZERO, "")
                }]
            }
            // Bands or price ranges at a level: its lines beside the other level's.
            _ => fed_lines.into_iter().chain(own_lines).collect(),
        };
        Some(Day { lines, group })
    }

    /// The rules of `code`: its lines period by period over every day any period covers,
    /// with the lines of both sides of a threshold, each in its group, where they differ.
    fn rules(&self, tax: &Taxonomy, code: &str) -> Vec<RuleSpec> {
        let chain = chain(tax, code);
        let breaks = self.breaks();
        // The rules of the latest stretch, to extend while nothing changes.
        let mut out: Vec<RuleSpec> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for (i, &from) in breaks.iter().enumerate() {
            let to = breaks.get(i + 1).map_or(Date::MAX, |n| Date(n.0 - 1));
            let Some(low) = self.day(&chain, from, Side::AtMost) else {
                open.clear();
                continue;
            };
            let high = self.day(&chain, from, Side::Above);
            let mut stretch: Vec<(Line, Option<SaleCondition>)> = Vec::new();
            match (low.group, high) {
                (Some(g), Some(high)) if high.lines != low.lines => {
                    let limit = self.threshold(g);
                    let side = |above| {
                        Some(SaleCondition {
                            group: g,
                            limit,
                            above,
                        })
                    };
                    stretch.extend(low.lines.into_iter().map(|l| (l, side(false))));
                    stretch.extend(high.lines.into_iter().map(|l| (l, side(true))));
                }
                _ => stretch.extend(low.lines.into_iter().map(|l| (l, None))),
            }
            let same = open.len() == stretch.len()
                && open.iter().zip(&stretch).all(|(&k, (l, sale))| {
                    let r = &out[k];
                    r.to.0 + 1 == from.0
                        && r.rate == l.rate
                        && r.band == l.band
                        && r.unit_range == l.units
                        && r.fee == l.fee
                        && r.proportional == l.proportional
                        && r.rate_type == l.label
                        && r.sale == *sale
                });
            if same {
                for &k in &open {
                    out[k].to = to;
                }
                continue;
            }
            open.clear();
            for (l, sale) in stretch {
                let mut r = RuleSpec::flat(self.jurisdiction, code, l.rate, from, to, &l.label);
                r.band = l.band;
                r.unit_range = l.units;
                r.fee = l.fee;
                r.proportional = l.proportional;
                r.source = self.source;
                r.sale = sale;
                open.push(out.len());
                out.push(r);
            }
        }
        out
    }

    /// The threshold of the cell of `group`.
    fn threshold(&self, group: u32) -> Decimal {
        self.own
            .iter()
            .chain(self.federal.iter().flat_map(|(c, _)| c.iter()))
            .find(|c| c.group == group)
            .and_then(|c| c.sale_at_most)
            .unwrap_or(Decimal::ZERO)
    }
}

/// A cell's label for its rules, or the general rule's when it keeps it.
fn label_of(cell: Option<&Cell>, general: &str) -> String {
    match cell {
        Some(c) if !c.label.is_empty() => c.label.clone(),
        _ => general.to_string(),
    }
}

/// A place's cells.
fn cells_of(p: &Place) -> Vec<&Cell> {
    p.cells.iter().collect()
}

impl Matrix {
    /// The places of `folder`.
    fn places(&self, folder: Folder) -> impl Iterator<Item = &Place> + '_ {
        self.places.iter().filter(move |p| p.folder == folder)
    }

    /// The US state cells as `us-rules.toml` modifiers would give them: for each cell that
    /// writes rules and each of its codes, `(state, code, scopes, from, to, label, parts,
    /// per-sale threshold)`.
    pub(crate) fn us_rules(&self) -> impl Iterator<Item = (&Place, &Cell, &str)> + '_ {
        self.places(Folder::Us).flat_map(|p| {
            p.cells
                .iter()
                .filter(|c| c.treatment != Treatment::Unknown)
                .flat_map(move |c| c.codes.iter().map(move |code| (p, c, code.as_str())))
        })
    }

    /// Whether the matrix writes rules for `code` in the US state `abbr`.
    pub(crate) fn names_us(&self, abbr: &str, code: &str) -> bool {
        self.us_rules()
            .any(|(p, _, c)| p.region == abbr && c == code)
    }

    /// Writes the rates of Canada's and every country's codes from their cells: each code a
    /// cell names gets its rate period by period over the jurisdiction's general rates,
    /// replacing what the jurisdiction held for it. Returns `(rules added, rules removed)`.
    pub(crate) fn apply_rates(
        &self,
        b: &mut TableBuilder,
        tax: &Taxonomy,
        source: u32,
    ) -> Result<(usize, usize), CuratedError> {
        let mut plans: Vec<(String, RatePlan<'_>)> = Vec::new();
        let federal = self.places(Folder::Ca).find(|p| p.region.is_empty());
        let gst = b.find_jurisdiction("CA");
        if let (Some(fed), Some(gst)) = (federal, gst) {
            plans.push((
                fed.file.clone(),
                RatePlan {
                    jurisdiction: gst,
                    general: general_periods(b, gst),
                    own: cells_of(fed),
                    federal: None,
                    source,
                },
            ));
        }
        for p in self.places(Folder::Ca).filter(|p| !p.region.is_empty()) {
            let Some(j) = b.find_jurisdiction(&format!("CA-{}", p.region)) else {
                // A province without a tax of its own: its cells only record that.
                continue;
            };
            // An HST province's set holds no GST beside it.
            let hst = !b
                .region_members("CA", &p.region)
                .is_some_and(|set| set.iter().any(|x| Some(*x) == gst));
            let federal = match (hst, federal, gst) {
                (true, Some(fed), Some(gst)) => Some((cells_of(fed), general_periods(b, gst))),
                (true, None, Some(gst)) => Some((Vec::new(), general_periods(b, gst))),
                _ => None,
            };
            plans.push((
                p.file.clone(),
                RatePlan {
                    jurisdiction: j,
                    general: general_periods(b, j),
                    own: cells_of(p),
                    federal,
                    source,
                },
            ));
        }
        for p in self.places(Folder::Intl) {
            let Some(j) = b.find_jurisdiction(&p.country) else {
                continue;
            };
            plans.push((
                p.file.clone(),
                RatePlan {
                    jurisdiction: j,
                    general: general_periods(b, j),
                    own: cells_of(p),
                    federal: None,
                    source,
                },
            ));
        }
        let (mut added, mut removed) = (0, 0);
        for (file, plan) in &plans {
            let codes = plan.codes();
            let mut rules = Vec::new();
            for code in &codes {
                rules.extend(plan.rules(tax, code));
            }
            let before = b.rules().len();
            b.retain_rules(|r| {
                !(r.jurisdiction == plan.jurisdiction && codes.contains(&r.tax_code))
            });
            removed += before - b.rules().len();
            for r in rules {
                b.rule(r).map_err(|e| CuratedError::Build {
                    file: file.clone(),
                    key: "cells".into(),
                    source: e,
                })?;
                added += 1;
            }
        }
        Ok((added, removed))
    }

    /// Records every cell in the table, so that calculations know what is known and `levy
    /// taxability` can print it.
    pub(crate) fn record(&self, b: &mut TableBuilder) -> Result<usize, CuratedError> {
        let mut n = 0;
        for p in &self.places {
            for c in &p.cells {
                if c.codes.is_empty() {
                    continue;
                }
                b.taxability_cell(TaxabilityCellSpec {
                    country: p.country.clone(),
                    region: p.region.clone(),
                    levels: c.levels,
                    scope: c.scope_text.clone(),
                    treatment: c.treatment,
                    summary: c.summary.clone(),
                    codes: c.codes.clone(),
                    from: c.from,
                    to: c.to,
                    sale_at_most: c.sale_at_most,
                    label: c.label.clone(),
                    source: c.source.clone(),
                    as_of: c.as_of,
                    note: c.note.clone(),
                })
                .map_err(|e| CuratedError::Build {
                    file: p.file.clone(),
                    key: c.key.clone(),
                    source: e,
                })?;
                n += 1;
            }
        }
        Ok(n)
    }
}
