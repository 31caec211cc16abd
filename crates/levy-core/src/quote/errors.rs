//! What the front door refuses, and the one list of kinds each front translates: the
//! interface's error types and `LevyStatus` in C, Python's exceptions and the batch's error
//! column, the CLI's message.

use crate::calc::CalcError;
use crate::money::Currency;
use crate::resolve::ResolveError;

macro_rules! quote_kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// The kind of a refused sale, with a stable name (`UNSUPPORTED_LOCATION`): one list
        /// that every front maps to its own error form. Resolution kinds are named as the
        /// interface names its error types.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum QuoteErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl QuoteErrorKind {
            /// Every kind, in the order of the list.
            pub const ALL: &'static [QuoteErrorKind] = &[$(QuoteErrorKind::$variant,)*];

            /// The kind's stable name.
            pub fn name(self) -> &'static str {
                match self {
                    $(QuoteErrorKind::$variant => $name,)*
                }
            }
        }
    };
}

quote_kinds! {
    /// The sale names neither an address nor an IP address: nothing says where it is taxed.
    NoPlace = "NO_PLACE",
    /// The country is not an ISO 3166-1 alpha-2 code.
    InvalidCountryCode = "INVALID_COUNTRY_CODE",
    /// The postal code cannot be one of the country's (a US ZIP given with country `CA`).
    MalformedAddress = "MALFORMED_ADDRESS",
    /// The postal code lies in another state or province than the one given.
    ZipStateMismatch = "ZIP_STATE_MISMATCH",
    /// The table covers no jurisdiction of the place.
    UnsupportedLocation = "UNSUPPORTED_LOCATION",
    /// The IP address is not IPv4 or IPv6 text.
    InvalidIpFormat = "INVALID_IP_FORMAT",
    /// The IP address resolves to no country.
    IpResolutionFailed = "IP_RESOLUTION_FAILED",
    /// A US IP address resolves to no postal code.
    IpResolutionInsufficientUs = "IP_RESOLUTION_INSUFFICIENT_US",
    /// A Canadian IP address resolves to no province.
    IpResolutionInsufficientCa = "IP_RESOLUTION_INSUFFICIENT_CA",
    /// The address the goods ship from cannot be resolved.
    OriginUnresolved = "ORIGIN_UNRESOLVED",
    /// A line's quantity is out of range.
    InvalidQuantity = "INVALID_QUANTITY",
    /// A line's amount is negative, too large or finer than the currency's minor unit.
    InvalidAmount = "INVALID_AMOUNT",
    /// A line's product category or tax code is not one of the table's.
    UnknownProduct = "UNKNOWN_PRODUCT",
    /// The currency is not an active ISO 4217 code.
    UnknownCurrency = "UNKNOWN_CURRENCY",
    /// The sale's currency is not the place's, a rule of the place has an amount in the
    /// place's currency, and no exchange rate was given.
    ExchangeRateRequired = "EXCHANGE_RATE_REQUIRED",
    /// The exchange rate given is not a positive number.
    InvalidExchangeRate = "INVALID_EXCHANGE_RATE",
    /// The day of the sale is not a day (`YYYY-MM-DD`).
    InvalidDate = "INVALID_DATE",
    /// The sale is dated before the first day the table holds its place's state or
    /// country tax: what was due then is not in the table.
    DateBeforeTable = "DATE_BEFORE_TABLE",
    /// The IP resolution mode or the rounding is not one levy knows.
    InvalidOption = "INVALID_OPTION",
}

impl std::fmt::Display for QuoteErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl QuoteErrorKind {
    /// The kind of a resolution error.
    pub fn of_resolve(e: &ResolveError) -> QuoteErrorKind {
        match e {
            ResolveError::InvalidCountry(_) => QuoteErrorKind::InvalidCountryCode,
            ResolveError::MalformedPostal(..) => QuoteErrorKind::MalformedAddress,
            ResolveError::ZipStateMismatch { .. } => QuoteErrorKind::ZipStateMismatch,
            ResolveError::Unsupported(_) => QuoteErrorKind::UnsupportedLocation,
            ResolveError::InvalidIp(_) => QuoteErrorKind::InvalidIpFormat,
            ResolveError::IpResolutionFailed(_) => QuoteErrorKind::IpResolutionFailed,
            ResolveError::IpInsufficientUs(_) => QuoteErrorKind::IpResolutionInsufficientUs,
            ResolveError::IpInsufficientCa(_) => QuoteErrorKind::IpResolutionInsufficientCa,
        }
    }

    /// The kind of a calculation error.
    pub fn of_calc(e: &CalcError) -> QuoteErrorKind {
        match e {
            CalcError::Quantity { .. } => QuoteErrorKind::InvalidQuantity,
            CalcError::Amount { .. } => QuoteErrorKind::InvalidAmount,
            CalcError::TaxCode { .. } => QuoteErrorKind::UnknownProduct,
        }
    }
}

/// Why the front door refused a sale. [`QuoteError::kind`] names it for every front.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuoteError {
    /// Neither an address nor an IP address: give the buyer's address (or its country
    /// alone), or the IP address of the device that bought.
    #[error("the sale has neither an address nor an IP address: give the buyer's address or IP")]
    NoPlace,
    /// The buyer's place could not be resolved: the address's error when an address was
    /// given (the IP, the fallback, failed too or was not given), else the IP's.
    #[error("{}", place_message(.address.as_deref(), .ip.as_deref()))]
    Place {
        /// Why the address failed, when one was given.
        address: Option<Box<ResolveError>>,
        /// Why the IP address failed, when one was given and tried.
        ip: Option<Box<ResolveError>>,
    },
    /// The address the goods ship from could not be resolved: correct it, or leave it out
    /// to tax the sale at the destination.
    #[error("origin address: {} ({})", .0, .0.error_type())]
    Origin(ResolveError),
    /// The sale itself: a line's amount, quantity or tax code.
    #[error("{0}")]
    Sale(CalcError),
    /// The sale is in `sale`, the place's currency is `place`, and a rule of the place has
    /// an amount in `place` (a band, a threshold, a cap or a fee): give the exchange rate
    /// from `sale` to `place`, or sell in `place`.
    #[error(
        "the sale is in {sale} but the place's rules have amounts in {place}: give the \
         exchange rate (1 {sale} = RATE {place}) or sell in {place}"
    )]
    ExchangeRateRequired {
        /// The sale's currency.
        sale: Currency,
        /// The place's currency.
        place: Currency,
    },
    /// The sale's currency is not the place's, a rule of the place has an amount, and levy
    /// does not know the currency of `country`: sell in the place's currency.
    #[error(
        "the place's rules have amounts in the currency of {country}, which levy does not \
         know: sell in that currency"
    )]
    PlaceCurrencyUnknown {
        /// The place's country.
        country: String,
    },
    /// The exchange rate is zero or negative: give the price of one unit of the sale's
    /// currency in the place's (`0.0067` for JPY to USD).
    #[error("exchange rate {0} must be a positive number (1 unit of the sale's currency in the place's)")]
    InvalidExchangeRate(rust_decimal::Decimal),
    /// The sale is dated before the first day the table holds the place's state or country
    /// tax (`jurisdiction`'s first rule): the table cannot say what was due then. Date the
    /// sale within the table, or build a table from sources that reach back to it.
    #[error(
        "the sale is dated {date}, before {first}, the first day the table holds \
         {jurisdiction}'s tax: it cannot say what was due then"
    )]
    BeforeTable {
        /// The state's or country's jurisdiction name.
        jurisdiction: String,
        /// Its first day in the table.
        first: crate::Date,
        /// The sale's day.
        date: crate::Date,
    },
}

fn place_message(address: Option<&ResolveError>, ip: Option<&ResolveError>) -> String {
    match (address, ip) {
        (Some(a), Some(i)) => format!(
            "address: {a} ({}); ip: {i} ({})",
            a.error_type(),
            i.error_type()
        ),
        (Some(e), None) | (None, Some(e)) => format!("{e} ({})", e.error_type()),
        (None, None) => "the place could not be resolved".to_string(),
    }
}

impl QuoteError {
    /// The kind: the address's resolution error for a place whose address failed (the IP
    /// being only the fallback), else the IP's.
    pub fn kind(&self) -> QuoteErrorKind {
        match self {
            QuoteError::NoPlace => QuoteErrorKind::NoPlace,
            QuoteError::Place { address, ip } => address
                .as_deref()
                .or(ip.as_deref())
                .map_or(QuoteErrorKind::NoPlace, QuoteErrorKind::of_resolve),
            QuoteError::Origin(_) => QuoteErrorKind::OriginUnresolved,
            QuoteError::Sale(e) => QuoteErrorKind::of_calc(e),
            QuoteError::ExchangeRateRequired { .. } | QuoteError::PlaceCurrencyUnknown { .. } => {
                QuoteErrorKind::ExchangeRateRequired
            }
            QuoteError::InvalidExchangeRate(_) => QuoteErrorKind::InvalidExchangeRate,
            QuoteError::BeforeTable { .. } => QuoteErrorKind::DateBeforeTable,
        }
    }

    /// The resolution error that decided a refused place (the address's, else the IP's).
    pub fn resolve_error(&self) -> Option<&ResolveError> {
        match self {
            QuoteError::Place { address, ip } => address.as_deref().or(ip.as_deref()),
            QuoteError::Origin(e) => Some(e),
            _ => None,
        }
    }
}

/// A front's reading of a sale's text refused: the kind and what is wrong, for the fronts
/// that read text (the CLI, the Python package) through the `read` functions of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    /// The kind.
    pub kind: QuoteErrorKind,
    /// What is wrong, naming the value.
    pub message: String,
}

impl InputError {
    pub(crate) fn new(kind: QuoteErrorKind, message: impl Into<String>) -> InputError {
        InputError {
            kind,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_name_and_every_resolve_error_a_kind_of_its_type() {
        let mut seen = std::collections::BTreeSet::new();
        for k in QuoteErrorKind::ALL {
            assert!(seen.insert(k.name()), "{} twice", k.name());
        }
        // A resolution error's kind is named as the interface names its type.
        for (e, t) in [
            (
                ResolveError::InvalidCountry("X".into()),
                "INVALID_COUNTRY_CODE",
            ),
            (
                ResolveError::MalformedPostal("1".into(), "CA".into()),
                "MALFORMED_ADDRESS",
            ),
            (
                ResolveError::Unsupported("US-XX".into()),
                "UNSUPPORTED_LOCATION",
            ),
            (ResolveError::InvalidIp("x".into()), "INVALID_IP_FORMAT"),
            (
                ResolveError::IpResolutionFailed("x".into()),
                "IP_RESOLUTION_FAILED",
            ),
            (
                ResolveError::IpInsufficientUs("x".into()),
                "IP_RESOLUTION_INSUFFICIENT_US",
            ),
            (
                ResolveError::IpInsufficientCa("x".into()),
                "IP_RESOLUTION_INSUFFICIENT_CA",
            ),
        ] {
            assert_eq!(QuoteErrorKind::of_resolve(&e).name(), t);
            assert_eq!(e.error_type(), t);
        }
    }

    #[test]
    fn a_place_refused_is_the_address_kind_when_both_failed() {
        let e = QuoteError::Place {
            address: Some(Box::new(ResolveError::Unsupported("US-XX".into()))),
            ip: Some(Box::new(ResolveError::InvalidIp("nope".into()))),
        };
        assert_eq!(e.kind(), QuoteErrorKind::UnsupportedLocation);
        assert!(e.to_string().contains("address: ") && e.to_string().contains("ip: "));
    }
}
