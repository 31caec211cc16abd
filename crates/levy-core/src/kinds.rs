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

/// Which address decides a state's taxes for a sale that ships from a place in the same
/// state (an intrastate sale). A sale between states, or between countries, is always taxed
/// at the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Sourcing {
    /// Every jurisdiction of the buyer's place.
    Destination = 0,
    /// Every jurisdiction of the seller's place (Ohio, Pennsylvania, Utah, ...).
    Origin = 1,
    /// The state, county and city taxes of the seller's place and the district taxes of the
    /// buyer's (California).
    ModifiedOrigin = 2,
    /// Every jurisdiction of the seller's place (local sales taxes), and then the buyer's
    /// local jurisdictions that the seller's place lacks (local use taxes), city before
    /// county before district, each in full or not at all, while the local rates stay within
    /// the state's cap (Texas: 2%).
    OriginWithUseTax = 3,
}

impl Sourcing {
    /// The name the interfaces use: `DESTINATION`, `ORIGIN`, `MODIFIED_ORIGIN` or
    /// `ORIGIN_WITH_USE_TAX`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sourcing::Destination => "DESTINATION",
            Sourcing::Origin => "ORIGIN",
            Sourcing::ModifiedOrigin => "MODIFIED_ORIGIN",
            Sourcing::OriginWithUseTax => "ORIGIN_WITH_USE_TAX",
        }
    }

    /// Parses the interface's name or the curated file's (`origin_with_use_tax`).
    pub fn parse(s: &str) -> Option<Sourcing> {
        Some(match s.to_ascii_uppercase().as_str() {
            "DESTINATION" => Sourcing::Destination,
            "ORIGIN" => Sourcing::Origin,
            "MODIFIED_ORIGIN" => Sourcing::ModifiedOrigin,
            "ORIGIN_WITH_USE_TAX" => Sourcing::OriginWithUseTax,
            _ => return None,
        })
    }

    /// Reads a stored code; an unknown code (a damaged table) reads as destination.
    pub(crate) fn from_u8(v: u8) -> Sourcing {
        match v {
            1 => Sourcing::Origin,
            2 => Sourcing::ModifiedOrigin,
            3 => Sourcing::OriginWithUseTax,
            _ => Sourcing::Destination,
        }
    }
}

/// Which address decided a jurisdiction entry of a calculation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sourced {
    /// The buyer's (the ship-to address).
    Destination,
    /// The seller's (the ship-from address).
    Origin,
}

impl Sourced {
    /// `DESTINATION` or `ORIGIN`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sourced::Destination => "DESTINATION",
            Sourced::Origin => "ORIGIN",
        }
    }
}

/// How a sale's tax is rounded to whole minor units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// Each line's tax is rounded half up on its own (the default, allowed everywhere).
    #[default]
    Line,
    /// The sale's tax is rounded once, half up, and shared out to the lines by largest
    /// remainder so that they add up to it; only where the state allows it (the
    /// Streamlined Sales Tax states, SSUTA s. 324) and only for amounts excluding tax.
    Invoice,
}

impl Rounding {
    /// `LINE` or `INVOICE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rounding::Line => "LINE",
            Rounding::Invoice => "INVOICE",
        }
    }

    /// Parses `line` or `invoice` in any case.
    pub fn parse(s: &str) -> Option<Rounding> {
        match s.trim().to_ascii_uppercase().as_str() {
            "LINE" => Some(Rounding::Line),
            "INVOICE" => Some(Rounding::Invoice),
            _ => None,
        }
    }
}

/// Why an answer by ZIP code covers what it covers, when the ZIP alone does not settle it:
/// what decided among the places that share the ZIP, or why the answer holds less than one
/// place's taxes. Every [`crate::Location`] carries one ([`PlaceNote::None`] for most).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum PlaceNote {
    /// Nothing to add: one place answers for the ZIP (or a street or ZIP+4 range decided).
    #[default]
    None = 0,
    /// The city named in the address decided among the places that share the ZIP: its
    /// taxes are the answer (Bell in 90201, which it shares with Bell Gardens and Cudahy).
    CityNamed = 1,
    /// The ZIP is shared by places whose taxes differ and the address named none that the
    /// table knows there: the answer is the ZIP's usual place (in California the USPS
    /// primary city), which may not be the buyer's. Naming the city decides.
    SharedPlaces = 2,
    /// The ZIP lies in several counties whose taxes differ: the answer holds the state and
    /// only the local taxes common to all of them (a district over every one), or the state
    /// alone when none is; which county taxes the address is not known from the ZIP.
    SplitCounties = 3,
    /// A city levies a tax in part or all of the ZIP that applies only where the address
    /// names that city (Milwaukee's): the answer, for an address that names no such city,
    /// does not hold it.
    CityNotNamed = 4,
}

impl PlaceNote {
    /// The name the interfaces use: `NONE`, `CITY_NAMED`, `SHARED_PLACES`, `SPLIT_COUNTIES`
    /// or `CITY_NOT_NAMED`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlaceNote::None => "NONE",
            PlaceNote::CityNamed => "CITY_NAMED",
            PlaceNote::SharedPlaces => "SHARED_PLACES",
            PlaceNote::SplitCounties => "SPLIT_COUNTIES",
            PlaceNote::CityNotNamed => "CITY_NOT_NAMED",
        }
    }

    /// What the note means, in one sentence for a receipt or a log.
    pub fn describe(self) -> &'static str {
        match self {
            PlaceNote::None => "",
            PlaceNote::CityNamed => {
                "the city named in the address decided among the places that share its ZIP code"
            }
            PlaceNote::SharedPlaces => {
                "the ZIP code is shared by places whose taxes differ and the address names none \
                 of them: the answer is the ZIP code's usual place; name the city to decide"
            }
            PlaceNote::SplitCounties => {
                "the ZIP code lies in several counties whose taxes differ: the answer holds the \
                 state and only the local taxes common to all of them"
            }
            PlaceNote::CityNotNamed => {
                "a city tax applies in part of this ZIP code only where the address names the \
                 city, and it names none: that tax is not in the answer"
            }
        }
    }

    /// Parses the interface's name.
    pub fn parse(s: &str) -> Option<PlaceNote> {
        Some(match s {
            "NONE" => PlaceNote::None,
            "CITY_NAMED" => PlaceNote::CityNamed,
            "SHARED_PLACES" => PlaceNote::SharedPlaces,
            "SPLIT_COUNTIES" => PlaceNote::SplitCounties,
            "CITY_NOT_NAMED" => PlaceNote::CityNotNamed,
            _ => return None,
        })
    }

    /// Reads a stored code; an unknown code (a damaged table) reads as no note.
    pub(crate) fn from_u8(v: u8) -> PlaceNote {
        match v {
            1 => PlaceNote::CityNamed,
            2 => PlaceNote::SharedPlaces,
            3 => PlaceNote::SplitCounties,
            4 => PlaceNote::CityNotNamed,
            _ => PlaceNote::None,
        }
    }
}

/// The levels of a place a cell speaks for, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TaxabilityLevels(pub u8);

impl TaxabilityLevels {
    /// The level's name for a place of `country`: `state` or `local` in the US, `federal`
    /// or `provincial` in Canada, `country` elsewhere (`all` for both levels).
    pub fn name(self, country: &str) -> &'static str {
        match (country, self.0) {
            (_, 3) => "all",
            ("US", 1) => "state",
            ("US", _) => "local",
            ("CA", 1) => "federal",
            ("CA", _) => "provincial",
            _ => "country",
        }
    }

    /// The place's own tax: a US state's, Canada's federal GST, a country's VAT or GST.
    pub const UPPER: TaxabilityLevels = TaxabilityLevels(1);
    /// The taxes below it: a US state's county, city and district taxes; a Canadian
    /// province's own tax (PST, RST, QST) or the provincial part of its HST.
    pub const LOWER: TaxabilityLevels = TaxabilityLevels(2);
    /// Both.
    pub const ALL: TaxabilityLevels = TaxabilityLevels(3);

    /// Whether every level of `other` is in `self`.
    pub fn contains(self, other: TaxabilityLevels) -> bool {
        self.0 & other.0 == other.0
    }
}
