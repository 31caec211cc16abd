//! What a build reports: the rows it skipped, the conflicts between and within sources,
//! and the summary of the whole.

use std::collections::BTreeMap;

use levy_core::model::SourceEntry;

/// A row that was skipped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BadRow {
    /// The file it is in.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// The kinds of conflict between and within sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum ConflictKind {
    /// A later source replaced an earlier source's rule with a different rate.
    RuleReplaced,
    /// One source wrote two rules for the same jurisdiction, code and date; the first wins.
    DuplicateRule,
    /// A ZIP code was assigned other jurisdictions by a later row or source.
    ZipReassigned,
    /// A ZIP code appears in two states' tables; the USPS state's row is kept.
    ZipInTwoStates,
    /// An IP range overlapped an earlier one, which was cut.
    IpRangeReplaced,
}

/// A conflict, reported in the build summary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// Kind.
    pub kind: ConflictKind,
    /// The file whose row caused it.
    pub file: String,
    /// What happened.
    pub detail: String,
}

/// What a build did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// The manifest, in layering order.
    #[serde(skip)]
    pub sources: Vec<SourceEntry>,
    /// Rows skipped as bad.
    pub bad_rows: Vec<BadRow>,
    /// Conflicts between and within sources.
    pub conflicts: Vec<Conflict>,
    /// ZIP5 rows whose components were repaired (see the module docs).
    pub repaired_rows: u64,
    /// Other things worth knowing (rows without a rate, places not located).
    pub notes: Vec<String>,
    /// Header build time written.
    pub build_time: i64,
    /// Content hash of the table, hex.
    pub table_hash: String,
}

impl Summary {
    /// A short text report: sources, counts of bad rows and conflicts by kind, with the
    /// first few of each.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for e in &self.sources {
            let _ = writeln!(
                s,
                "  {:<15} {:<40} read {:>7}  skipped {:>5}  period {}",
                e.kind, e.name, e.rows_read, e.rows_skipped, e.period
            );
        }
        let _ = writeln!(s, "bad rows: {}", self.bad_rows.len());
        for b in self.bad_rows.iter().take(10) {
            let _ = writeln!(s, "  {}:{}: {}", b.file, b.line, b.message);
        }
        let mut by_kind: BTreeMap<ConflictKind, Vec<&Conflict>> = BTreeMap::new();
        for c in &self.conflicts {
            by_kind.entry(c.kind).or_default().push(c);
        }
        let _ = writeln!(s, "conflicts: {}", self.conflicts.len());
        for (k, list) in by_kind {
            let _ = writeln!(s, "  {k:?}: {}", list.len());
            for c in list.iter().take(5) {
                let _ = writeln!(s, "    {}: {}", c.file, c.detail);
            }
        }
        if self.repaired_rows > 0 {
            let _ = writeln!(
                s,
                "ZIP5 rows with repaired components: {}",
                self.repaired_rows
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        let _ = writeln!(
            s,
            "build time {}  table {}",
            self.build_time, self.table_hash
        );
        s
    }
}

/// A built table and what the build did.
#[derive(Debug)]
pub struct BuildReport {
    /// The table file's bytes.
    pub bytes: Vec<u8>,
    /// Summary.
    pub summary: Summary,
}
