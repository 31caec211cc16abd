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
