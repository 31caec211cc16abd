//! The usual rules: each jurisdiction's rule keys for the usual tax code
//! ([`GENERAL_MERCHANDISE`]), so that the usual line indexes them instead of searching the
//! jurisdiction's rules again.

use rust_decimal::Decimal;

use crate::lookup::{JurisdictionId, TaxCodeId};
use crate::model::{ArchivedRuleKey, ArchivedTableData};

/// The usual tax code's name: what most lines sell, and what a local-rate cap counts.
pub(crate) const GENERAL_MERCHANDISE: &str = "GENERAL_MERCHANDISE";

/// Each jurisdiction's rule keys for the usual tax code ([`GENERAL_MERCHANDISE`]), found
/// on the jurisdiction's first usual line and kept beside the table
/// (like its ZIP+4 and holiday indexes): what [`ArchivedTableData::search_rule_keys`] would otherwise
/// search for, line after line, jurisdiction after jurisdiction. One slot of about 56
/// bytes a jurisdiction, so the memory is bounded by the table's jurisdictions (under 1 MB
/// for the 16,961 of every state's ZIP5 file), not by its places.
pub(crate) struct UsualRules {
    /// The usual tax code; `None` when the table has no [`GENERAL_MERCHANDISE`] code.
    pub(crate) code: Option<TaxCodeId>,
    /// One slot a jurisdiction, by id.
    pub(crate) slots: Box<[std::sync::OnceLock<UsualRule>]>,
}

impl UsualRules {
    /// The usual code of `data` found, and an empty slot for each of its jurisdictions.
    pub(crate) fn new(data: &ArchivedTableData) -> UsualRules {
        UsualRules {
            code: data.tax_code(GENERAL_MERCHANDISE),
            slots: (0..data.jurisdiction_count())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
        }
    }
}

impl UsualRule {
    /// `jurisdiction`'s keys for `code` in `data`, searched.
    pub(crate) fn search(
        data: &ArchivedTableData,
        jurisdiction: JurisdictionId,
        code: TaxCodeId,
    ) -> UsualRule {
        let (first, keys) = data.search_rule_keys(jurisdiction, code);
        let single = match keys {
            [key] => key.fast_rate().map(|r| (r, key)),
            _ => None,
        };
        UsualRule {
            rate: single.map_or(Decimal::ZERO, |s| s.0 .0),
            mantissa: single.map_or(0, |s| s.0 .1),
            first: first as u32,
            len: keys.len() as u32,
            from: keys.first().map_or(0, |k| k.from.to_native()),
            to: keys.first().map_or(0, |k| k.to.to_native()),
            // The key's own scale, a byte (`fast_rate` only widened it).
            scale: single.map_or(0, |s| s.0 .2 as u8),
            fast: single.is_some(),
        }
    }

    /// Its keys in `data`: the span it names.
    #[inline]
    pub(crate) fn keys<'a>(&self, data: &'a ArchivedTableData) -> (usize, &'a [ArchivedRuleKey]) {
        let (first, len) = (self.first as usize, self.len as usize);
        let keys = data.rule_keys.get(first..first + len);
        (first, keys.unwrap_or_default())
    }
}

/// A jurisdiction's rule keys for the usual code (walking up the taxonomy as
/// [`ArchivedTableData::search_rule_keys`] does): their span, and when there is one key (a jurisdiction
/// whose rate never changed within the table), that key as the integer path reads it, so
/// that a line need not read the key again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UsualRule {
    /// The single key's rate as a decimal (zero when it is not fast, or there are several).
    pub(crate) rate: Decimal,
    /// The single key's rate mantissa (see [`ArchivedRuleKey::fast_rate`]).
    pub(crate) mantissa: i64,
    /// The rule id of the first key.
    pub(crate) first: u32,
    /// How many keys.
    pub(crate) len: u32,
    /// The single key's first and last day in force.
    pub(crate) from: i32,
    pub(crate) to: i32,
    /// The single key's rate scale.
    pub(crate) scale: u8,
    /// Whether the single key is fast (see [`ArchivedRuleKey::fast_rate`]).
    pub(crate) fast: bool,
}
