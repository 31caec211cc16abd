//! Small closed vocabularies: jurisdiction levels and tax types.

/// The level of a jurisdiction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// A country (VAT, GST).
    Country = 0,
    /// A US state.
    State = 1,
    /// A province or territory (Canada).
    Province = 2,
    /// A county.
    County = 3,
    /// A city or town.
    City = 4,
    /// A special taxing district (transit, stadium, resort, ...).
    District = 5,
}

impl Level {
    /// The name the interface uses in `tax_authority_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Country => "COUNTRY",
            Level::State => "STATE",
            Level::Province => "PROVINCE",
            Level::County => "COUNTY",
            Level::City => "CITY",
            Level::District => "DISTRICT",
        }
    }

    /// Parses the interface's name.
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "COUNTRY" => Level::Country,
            "STATE" => Level::State,
            "PROVINCE" => Level::Province,
            "COUNTY" => Level::County,
            "CITY" => Level::City,
            "DISTRICT" => Level::District,
            _ => return None,
        })
    }

    pub(crate) fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Country,
            1 => Level::State,
            2 => Level::Province,
            3 => Level::County,
            4 => Level::City,
            _ => Level::District,
        }
    }

    /// Whether this is a local level (below state or province).
    pub fn is_local(self) -> bool {
        matches!(self, Level::County | Level::City | Level::District)
    }
}

/// The kind of tax a jurisdiction levies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TaxType {
    /// Sales tax.
    Sales = 0,
    /// Use tax.
    Use = 1,
    /// Value added tax.
    Vat = 2,
    /// Goods and services tax (including Canada's HST and QST, which file like it).
    Gst = 3,
}

impl TaxType {
    /// The name the interface uses in `tax_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaxType::Sales => "SALES",
            TaxType::Use => "USE",
            TaxType::Vat => "VAT",
            TaxType::Gst => "GST",
        }
    }

    /// Parses the interface's name.
    pub fn parse(s: &str) -> Option<TaxType> {
        Some(match s {
            "SALES" => TaxType::Sales,
            "USE" => TaxType::Use,
            "VAT" => TaxType::Vat,
            "GST" => TaxType::Gst,
            _ => return None,
        })
    }

    pub(crate) fn from_u8(v: u8) -> TaxType {
        match v {
            1 => TaxType::Use,
            2 => TaxType::Vat,
            3 => TaxType::Gst,
            _ => TaxType::Sales,
        }
    }
}

/// How much of the tax due at a place the table knows: whether the local jurisdictions
/// (county, city, district) of the resolved place are in the answer.
///
/// levy never passes a state-only answer off as a complete one: every [`crate::Location`]
/// and [`crate::Calculation`] carries its coverage, and the interfaces report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Coverage {
    /// Only the state or province: local taxes may be due that the table does not hold.
    StateOnly = 0,
    /// Some local levels are known, others may apply (county rates placed without city or
    /// district boundaries, for example).
    Partial = 1,
    /// Every jurisdiction that taxes the place is in the answer (which includes places that
    /// levy no local tax at all).
    Full = 2,
}

impl Coverage {
    /// The name the interfaces use: `FULL`, `PARTIAL` or `STATE_ONLY`.
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::Full => "FULL",
            Coverage::Partial => "PARTIAL",
            Coverage::StateOnly => "STATE_ONLY",
        }
    }

    /// Parses the interface's name.
    pub fn parse(s: &str) -> Option<Coverage> {
        Some(match s {
            "FULL" => Coverage::Full,
            "PARTIAL" => Coverage::Partial,
            "STATE_ONLY" => Coverage::StateOnly,
            _ => return None,
        })
    }

    /// Reads a stored code; an unknown code (a damaged table) reads as the least coverage,
    /// never as more than the table knows.
    pub(crate) fn from_u8(v: u8) -> Coverage {
        match v {
            2 => Coverage::Full,
            1 => Coverage::Partial,
            _ => Coverage::StateOnly,
        }
    }
}
