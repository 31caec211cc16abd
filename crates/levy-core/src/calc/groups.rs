//! The per-sale threshold groups: how a line's rules whose threshold is the sale's total
//! are decided, on a first pass that notes the groups and a second that knows their totals.

use rust_decimal::Decimal;

/// How a line's rules with a per-sale threshold are decided.
pub(super) enum SaleGroups<'a> {
    /// The first pass over line `line`: every threshold is taken as met (the rule for "at
    /// most" applies, the one for "above" does not), and each group a rule names is noted
    /// in `seen` with the line, for the second pass.
    First {
        /// The (line, group) pairs noted so far.
        seen: &'a mut Vec<(usize, u32)>,
        /// The line being taxed.
        line: usize,
    },
    /// The second pass: each group's total before tax, in major units.
    Totals(&'a [(u32, Decimal)]),
    /// No rule with a per-sale threshold is expected (delivery charges); one found is
    /// decided as in the first pass.
    None,
}

impl SaleGroups<'_> {
    pub(super) fn first(seen: &mut Vec<(usize, u32)>, line: usize) -> SaleGroups<'_> {
        SaleGroups::First { seen, line }
    }

    /// Whether a rule of `group` whose threshold is `limit` applies (`above`: only above it).
    pub(super) fn applies(&mut self, group: u32, limit: Decimal, above: bool) -> bool {
        match self {
            SaleGroups::First { seen, line } => {
                // The line's own pairs are the last ones noted.
                let noted = seen
                    .iter()
                    .rev()
                    .take_while(|(l, _)| l == line)
                    .any(|&(_, g)| g == group);
                if !noted {
                    seen.push((*line, group));
                }
                !above
            }
            SaleGroups::Totals(totals) => {
                let total = totals
                    .iter()
                    .find(|(g, _)| *g == group)
                    .map_or(Decimal::ZERO, |&(_, t)| t);
                (total > limit) == above
            }
            SaleGroups::None => !above,
        }
    }
}
