//! `taxonomy.toml`: the tax codes, their tree and the categories that alias them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use levy_core::TableBuilder;
use serde::Deserialize;

use super::values::{build_error, invalid, nonempty, parse_toml};
use super::{Curated, CuratedError, CuratedStats, FILES, GENERAL};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaxonomyFile {
    #[serde(default)]
    code: Vec<CodeRow>,
    #[serde(default)]
    categories: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeRow {
    name: String,
    parent: Option<String>,
    description: String,
    /// The Streamlined Library of Definitions term the code implements.
    #[serde(default)]
    sst: String,
    /// Whether every place's matrix row must address the code (default: it has a parent).
    matrix: Option<bool>,
}

/// A tax code.
#[derive(Clone, Debug)]
pub(super) struct Code {
    pub(super) name: String,
    pub(super) parent: Option<String>,
    pub(super) description: String,
    /// The Streamlined Library of Definitions term it implements; empty for none.
    pub(super) sst: String,
    /// Whether every place's matrix row must address it.
    pub(super) matrix: bool,
}

/// What the taxonomy gives the other files' validators: the tax codes and aliases.
pub(crate) struct Taxonomy {
    pub(super) codes: Vec<Code>,
    pub(super) aliases: Vec<(String, String)>,
    pub(super) names: BTreeSet<String>,
}

impl Taxonomy {
    /// Whether `code` is `ancestor` or lies below it.
    pub(super) fn within(&self, code: &str, ancestor: &str) -> bool {
        let mut cur = Some(code);
        // The taxonomy was checked for loops; the bound is a second guard.
        for _ in 0..=self.codes.len() {
            match cur {
                Some(c) if c == ancestor => return true,
                Some(c) => {
                    cur = self
                        .codes
                        .iter()
                        .find(|x| x.name == c)
                        .and_then(|x| x.parent.as_deref())
                }
                None => return false,
            }
        }
        false
    }

    /// The parent of `code`, if it has one.
    pub(crate) fn parent(&self, code: &str) -> Option<&str> {
        self.codes
            .iter()
            .find(|c| c.name == code)
            .and_then(|c| c.parent.as_deref())
    }

    /// Whether `code` is a root (no parent).
    pub(crate) fn is_root(&self, code: &str) -> bool {
        self.codes
            .iter()
            .any(|c| c.name == code && c.parent.is_none())
    }

    /// The codes every place's matrix row must address, in file order.
    pub(crate) fn matrix_codes(&self) -> impl Iterator<Item = &str> + '_ {
        self.codes
            .iter()
            .filter(|c| c.matrix)
            .map(|c| c.name.as_str())
    }

    /// Checks that `code` is a tax code of the taxonomy.
    pub(crate) fn known(&self, file: &str, key: &str, code: &str) -> Result<(), CuratedError> {
        if self.names.contains(code) {
            Ok(())
        } else {
            Err(invalid(
                file,
                key,
                format!("unknown tax code {code:?} (see taxonomy.toml)"),
            ))
        }
    }
}

/// Validates `taxonomy.toml`: unique codes, known parents without loops, the general code
/// defined, aliases to known codes.
pub(super) fn taxonomy(text: &str) -> Result<Taxonomy, CuratedError> {
    let f = FILES[0];
    let tax: TaxonomyFile = parse_toml(f, text)?;
    let mut names = BTreeSet::new();
    for (i, c) in tax.code.iter().enumerate() {
        nonempty(f, format!("code[{i}].name").as_str(), &c.name)?;
        if !names.insert(c.name.clone()) {
            return Err(invalid(f, format!("code[{}]", c.name), "listed twice"));
        }
    }
    let mut codes = Vec::with_capacity(tax.code.len());
    for c in &tax.code {
        if let Some(p) = &c.parent {
            if !names.contains(p) {
                return Err(invalid(
                    f,
                    format!("code[{}].parent", c.name),
                    format!("unknown tax code {p:?}"),
                ));
            }
        }
        if c.parent.is_none() && c.matrix == Some(true) {
            return Err(invalid(
                f,
                format!("code[{}].matrix", c.name),
                "a root is known everywhere and is never in the matrix",
            ));
        }
        codes.push(Code {
            name: c.name.clone(),
            parent: c.parent.clone(),
            description: c.description.clone(),
            sst: c.sst.clone(),
            matrix: c.parent.is_some() && c.matrix.unwrap_or(true),
        });
    }
    // Reject loops now rather than at build time, naming the code.
    let parents: HashMap<&str, &str> = codes
        .iter()
        .filter_map(|c| c.parent.as_deref().map(|p| (c.name.as_str(), p)))
        .collect();
    for c in &codes {
        let mut cur = c.name.as_str();
        for step in 0..=codes.len() {
            match parents.get(cur) {
                Some(p) => cur = p,
                None => break,
            }
            if step == codes.len() {
                return Err(invalid(
                    f,
                    format!("code[{}].parent", c.name),
                    "parent chain loops",
                ));
            }
        }
    }
    if !names.contains(GENERAL) {
        return Err(invalid(f, "code", format!("{GENERAL} must be defined")));
    }
    let mut aliases = Vec::new();
    for (alias, code) in &tax.categories {
        if !names.contains(code) {
            return Err(invalid(
                f,
                format!("categories.{alias}"),
                format!("unknown tax code {code:?}"),
            ));
        }
        aliases.push((alias.clone(), code.clone()));
    }
    Ok(Taxonomy {
        codes,
        aliases,
        names,
    })
}

impl Curated {
    /// Adds the tax codes (each with a category of its name) and the categories that alias
    /// them.
    pub(super) fn apply_taxonomy(
        &self,
        b: &mut TableBuilder,
        stats: &mut CuratedStats,
    ) -> Result<(), CuratedError> {
        for c in &self.codes {
            if b.has_tax_code(&c.name) {
                continue;
            }
            let key = format!("code[{}]", c.name);
            b.tax_code(&c.name, c.parent.as_deref(), &c.description)
                .map_err(build_error(FILES[0], &key))?;
            if !c.matrix {
                b.tax_code_outside_matrix(&c.name)
                    .map_err(build_error(FILES[0], &key))?;
            }
            if !c.sst.is_empty() {
                b.tax_code_sst(&c.name, &c.sst)
                    .map_err(build_error(FILES[0], &key))?;
            }
            b.category(&c.name, &c.name);
            stats.tax_codes += 1;
            stats.categories += 1;
        }
        for (alias, code) in &self.aliases {
            b.category(alias, code);
            stats.categories += 1;
        }
        Ok(())
    }
}
