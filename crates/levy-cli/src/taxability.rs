//! `levy taxability`: the taxability matrix a table carries, cell by cell with each source,
//! so that an auditor can check any answer without reading TOML; and the overview pages
//! (`--markdown DIR`), one per place, that the README links.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use levy_core::{AnyTable, Date, TaxCodeId, TaxabilityCell, Treatment};

/// Arguments of `levy taxability`.
#[derive(Debug, Args)]
pub struct TaxabilityArgs {
    /// A table built with `levy build`; the embedded default when absent.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// A place: a US state (`TN`), `US-TN`, `CA`, a province (`CA-ON`) or a country (`DE`).
    #[arg(long, value_name = "PLACE")]
    pub state: Option<String>,
    /// A tax code or product category: each place's treatment of it.
    #[arg(long, value_name = "CODE")]
    pub code: Option<String>,
    /// Only the cells in force on this day (YYYY-MM-DD).
    #[arg(long)]
    pub date: Option<String>,
    /// Print JSON: one object per cell.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Write one Markdown page per place, and an index (`README.md`), into DIR.
    #[arg(long, value_name = "DIR")]
    pub markdown: Option<PathBuf>,
}

/// A place as the matrix names it, split: `US-TN` is ("US", "TN"); `TN` is a US state;
/// `CA` and `DE` are whole countries.
fn parse_place(s: &str) -> (String, String) {
    let s = s.trim().to_ascii_uppercase();
    match s.split_once('-') {
        Some((c, r)) => (c.to_string(), r.to_string()),
        // Two letters that are a US state abbreviation read as the state; `CA` is Canada.
        None if s.len() == 2 && s != "CA" && levy_build::states::by_abbr(&s).is_some() => {
            ("US".into(), s)
        }
        None => (s, String::new()),
    }
}

/// The place a cell is of, as the matrix names it.
fn place_of(c: &TaxabilityCell<'_>) -> (String, String) {
    (c.country().to_string(), c.region().to_string())
}

fn place_label(country: &str, region: &str) -> String {
    if region.is_empty() {
        country.to_string()
    } else {
        format!("{country}-{region}")
    }
}

/// The days a cell holds, in words.
fn days(c: &TaxabilityCell<'_>) -> String {
    let (from, to) = c.interval();
    match (from == Date::MIN, to == Date::MAX) {
        (true, true) => "always".into(),
        (false, true) => format!("from {from}"),
        (true, false) => format!("until {to}"),
        (false, false) => format!("{from} to {to}"),
    }
}

/// What a cell charges, with its per-sale threshold.
fn charges(c: &TaxabilityCell<'_>) -> String {
    let mut s = format!("{}: {}", c.treatment().as_str(), c.summary());
    if let Some(limit) = c.sale_at_most() {
        let _ = write!(
            s,
            " (when the sale's lines of these codes total at most {limit})"
        );
    }
    s
}

fn code_names(table: &AnyTable, c: &TaxabilityCell<'_>) -> Vec<String> {
    c.codes()
        .filter_map(|id| table.tax_code_name(id))
        .map(str::to_string)
        .collect()
}

/// Runs `levy taxability`; returns what to print.
pub fn run(args: &TaxabilityArgs) -> Result<String, String> {
    let owned = crate::calc::open_table(args.table.as_deref())?;
    let table: &AnyTable = owned.as_ref().unwrap_or_else(|| levy_data::default_table());
    let date = match &args.date {
        Some(d) => Some(crate::calc::date_or_today(Some(d))?),
        None => None,
    };
    let place = args.state.as_deref().map(parse_place);
    let code = match &args.code {
        Some(name) => {
            let upper = name.trim().to_ascii_uppercase();
            Some(
                table
                    .tax_code(&upper)
                    .or_else(|| table.category(&upper))
                    .ok_or_else(|| {
                        format!("unknown tax code or category {name:?} (see `levy taxability` for the codes)")
                    })?,
            )
        }
        None => None,
    };
    if table.taxability_cells().next().is_none() {
        return Err(
            "this table carries no taxability matrix: every product's treatment is \
                    unknown in it (build one with the curated data: `levy build` without \
                    --no-curated)"
                .into(),
        );
    }
    if let Some(dir) = &args.markdown {
        return write_markdown(table, dir, date);
    }
    match code {
        Some(code) => by_code(table, code, place.as_ref(), date, args.json),
        None => by_cell(table, place.as_ref(), date, args.json),
    }
}

/// Every place with cells, in order, with its name.
fn places(table: &AnyTable) -> Vec<(String, String, String)> {
    let mut seen: BTreeMap<(String, String), ()> = BTreeMap::new();
    for c in table.taxability_cells() {
        seen.insert(place_of(&c), ());
    }
    seen.into_keys()
        .map(|(country, region)| {
            let name = table
                .region(&country, &region)
                .map(|(_, n)| n.to_string())
                .unwrap_or_default();
            (country, region, name)
        })
        .collect()
}

fn cell_json(table: &AnyTable, c: &TaxabilityCell<'_>) -> serde_json::Value {
    let (from, to) = c.interval();
    let (country, region) = place_of(c);
    serde_json::json!({
        "place": place_label(&country, &region),
        "level": c.scope(),
        "codes": code_names(table, c),
        "treatment": c.treatment().as_str(),
        "summary": c.summary(),
        "from": (from != Date::MIN).then(|| from.to_string()),
        "to": (to != Date::MAX).then(|| to.to_string()),
        "sale_at_most": c.sale_at_most().map(|d| d.to_string()),
        "label": c.label(),
        "source": c.source(),
        "as_of": c.as_of().to_string(),
        "note": c.note(),
    })
}

/// Every cell (of one place, in force on one day), each with its source.
fn by_cell(
    table: &AnyTable,
    place: Option<&(String, String)>,
    date: Option<Date>,
    json: bool,
) -> Result<String, String> {
    let in_force = |c: &TaxabilityCell<'_>| {
        let (from, to) = c.interval();
        date.is_none_or(|d| from <= d && d <= to)
    };
    let cells: Vec<TaxabilityCell<'_>> = table
        .taxability_cells()
        .filter(|c| place.is_none_or(|p| place_of(c) == *p))
        .filter(in_force)
        .collect();
    if let (Some((country, region)), true) = (place, cells.is_empty()) {
        return Err(format!(
            "no cells for {} in this table's matrix{}",
            place_label(country, region),
            date.map(|d| format!(" on {d}")).unwrap_or_default()
        ));
    }
    if json {
        let all: Vec<serde_json::Value> = cells.iter().map(|c| cell_json(table, c)).collect();
        return serde_json::to_string_pretty(&all)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    let mut out = String::new();
    let mut last = None;
    for c in &cells {
        let p = place_of(c);
        if last.as_ref() != Some(&p) {
            let name = table
                .region(&p.0, &p.1)
                .map(|(_, n)| n.to_string())
                .unwrap_or_default();
            let _ = writeln!(out, "{}  {name}", place_label(&p.0, &p.1));
            last = Some(p);
        }
        let _ = writeln!(
            out,
            "  {:<10} {}  [{}]",
            c.scope(),
            code_names(table, c).join(", "),
            days(c)
        );
        let _ = writeln!(out, "             {}", charges(c));
        let _ = writeln!(
            out,
            "             source: {} (as of {})",
            c.source(),
            c.as_of()
        );
        if !c.note().is_empty() {
            let _ = writeln!(out, "             note: {}", c.note());
        }
    }
    Ok(out)
}

/// Each place's treatment of one code.
fn by_code(
    table: &AnyTable,
    code: TaxCodeId,
    place: Option<&(String, String)>,
    date: Option<Date>,
    json: bool,
) -> Result<String, String> {
    let name = table.tax_code_name(code).unwrap_or("?").to_string();
    let mut out = String::new();
    let mut rows: Vec<serde_json::Value> = Vec::new();
    for (country, region, place_name) in places(table) {
        if place.is_some_and(|p| *p != (country.clone(), region.clone())) {
            continue;
        }
        let label = place_label(&country, &region);
        let answer = table.taxability_answer(&country, &region, code, date);
        match answer {
            Some((via, cells)) if !cells.is_empty() => {
                let via_name = table.tax_code_name(via).unwrap_or("?");
                let _ = writeln!(
                    out,
                    "{label}  {place_name}{}",
                    if via == code {
                        String::new()
                    } else {
                        format!("  (as {via_name})")
                    }
                );
                for c in &cells {
                    let _ = writeln!(out, "  {:<10} {}  [{}]", c.scope(), charges(c), days(c));
                    let _ = writeln!(
                        out,
                        "             source: {} (as of {})",
                        c.source(),
                        c.as_of()
                    );
                    if !c.note().is_empty() {
                        let _ = writeln!(out, "             note: {}", c.note());
                    }
                    let mut v = cell_json(table, c);
                    v["code"] = serde_json::Value::String(name.clone());
                    rows.push(v);
                }
            }
            _ if table.tax_code_parent(code).is_none() => {
                let _ = writeln!(
                    out,
                    "{label}  {place_name}\n  {name} is a root of the taxonomy: known everywhere"
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{label}  {place_name}\n  not in the matrix{}: a sale of {name} here is answered at the rule the code inherits, with coverage PARTIAL",
                    date.map(|d| format!(" on {d}")).unwrap_or_default()
                );
                rows.push(serde_json::json!({
                    "place": label, "code": name, "treatment": null,
                }));
            }
        }
    }
    if json {
        return serde_json::to_string_pretty(&rows)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    if out.is_empty() {
        return Err("no place of this table's matrix matches --state".into());
    }
    Ok(out)
}

/// Escapes a cell's text for a Markdown table.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Refuses to write `file` when something other than a regular file is there: a symbolic
/// link (planted in the folder, it would have levy write wherever it points), a folder, a
/// FIFO.
fn refuse_other_than_a_file(file: &std::path::Path) -> Result<(), String> {
    match std::fs::symlink_metadata(file) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{}: is a symbolic link; levy taxability writes its pages as files of their own \
             and never through a link: remove it, or write into another folder",
            file.display()
        )),
        Ok(m) if !m.is_file() => Err(format!(
            "{}: is not a regular file; remove it, or write into another folder",
            file.display()
        )),
        _ => Ok(()),
    }
}

/// Writes `text` as `file`, never through a link: into a new file beside it (created new,
/// which no link can stand for), renamed over `file` (which replaces what is there and
/// writes through nothing), so that a link planted after the check is replaced too.
fn write_page(file: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    refuse_other_than_a_file(file)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = file.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| format!("{}: {e}", file.display()))
}

/// Writes `DIR/<PLACE>.md` for every place and `DIR/README.md` listing them. Nothing is
/// written when any of them is a symbolic link or other than a regular file.
fn write_markdown(
    table: &AnyTable,
    dir: &std::path::Path,
    date: Option<Date>,
) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    refuse_other_than_a_file(&dir.join("README.md"))?;
    for (country, region, _) in places(table) {
        refuse_other_than_a_file(&dir.join(format!("{}.md", place_label(&country, &region))))?;
    }
    let mut index = String::from(
        "# Taxability by place\n\nGenerated by `levy taxability --markdown` from the table's \
         taxability matrix (`data/taxability/`): each place's treatment of each product tax \
         code, with the source of every cell. A code a place's page does not list is not in \
         its matrix: levy answers it at the rule the code inherits and says so (coverage \
         `PARTIAL`).\n\n| place | name | cells | codes not known |\n|---|---|---:|---:|\n",
    );
    let matrix_codes: Vec<TaxCodeId> = (0..table.tax_code_count() as u32)
        .map(TaxCodeId)
        .filter(|&c| table.tax_code_in_matrix(c))
        .collect();
    let mut written = 0;
    for (country, region, name) in places(table) {
        let label = place_label(&country, &region);
        let cells: Vec<TaxabilityCell<'_>> = table
            .taxability_cells()
            .filter(|c| place_of(c) == (country.clone(), region.clone()))
            .filter(|c| {
                let (from, to) = c.interval();
                date.is_none_or(|d| from <= d && d <= to)
            })
            .collect();
        let unknown: Vec<&str> = matrix_codes
            .iter()
            .filter(|&&code| {
                table
                    .taxability_answer(&country, &region, code, date)
                    .is_none_or(|(_, cs)| cs.iter().all(|c| c.treatment() == Treatment::Unknown))
            })
            .filter_map(|&c| table.tax_code_name(c))
            .collect();
        let mut page = format!("# {label}: {name}\n\n");
        let _ = writeln!(
            page,
            "| codes | level | treatment | days | source | as of | note |\n|---|---|---|---|---|---|---|"
        );
        for c in &cells {
            let _ = writeln!(
                page,
                "| {} | {} | {} | {} | {} | {} | {} |",
                md(&code_names(table, c).join(", ")),
                md(c.scope()),
                md(&charges(c)),
                md(&days(c)),
                md(c.source()),
                c.as_of(),
                md(c.note())
            );
        }
        if !unknown.is_empty() {
            let _ = writeln!(
                page,
                "\nNot known here (no cell, or only `unknown` ones): {}.",
                unknown.join(", ")
            );
        }
        let file = dir.join(format!("{label}.md"));
        write_page(&file, &page)?;
        let _ = writeln!(
            index,
            "| [{label}]({label}.md) | {} | {} | {} |",
            md(&name),
            cells.len(),
            unknown.len()
        );
        written += 1;
    }
    let file = dir.join("README.md");
    write_page(&file, &index)?;
    Ok(format!(
        "wrote {written} place pages and README.md into {}\n",
        dir.display()
    ))
}
