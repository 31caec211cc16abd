//! Money: ISO 4217 currencies, minor units, and the one rounding rule.
//!
//! Every amount that crosses levy's interface is a [`Decimal`] counted in the currency's
//! smallest unit (cents for USD, yen for JPY, fils for KWD). Inside a calculation the
//! per-jurisdiction tax is kept unrounded (`tax_due_decimal`); the line's tax is rounded
//! exactly once, by [`round_minor`], half away from zero, to a whole number of minor units.
//! Order totals are sums of rounded lines and are never recomputed from rates.

use rust_decimal::{Decimal, RoundingStrategy};

/// An ISO 4217 currency that levy knows the minor unit of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Currency {
    code: &'static str,
    minor_units: u8,
}

/// ISO 4217 active codes and their minor units (the standard's "E" column).
static CURRENCIES: phf::Map<&'static str, u8> = phf::phf_map! {
    "AED" => 2, "AFN" => 2, "ALL" => 2, "AMD" => 2, "ANG" => 2, "AOA" => 2, "ARS" => 2,
    "AUD" => 2, "AWG" => 2, "AZN" => 2, "BAM" => 2, "BBD" => 2, "BDT" => 2, "BGN" => 2,
    "BHD" => 3, "BIF" => 0, "BMD" => 2, "BND" => 2, "BOB" => 2, "BRL" => 2, "BSD" => 2,
    "BTN" => 2, "BWP" => 2, "BYN" => 2, "BZD" => 2, "CAD" => 2, "CDF" => 2, "CHF" => 2,
    "CLP" => 0, "CNY" => 2, "COP" => 2, "CRC" => 2, "CUP" => 2, "CVE" => 2, "CZK" => 2,
    "DJF" => 0, "DKK" => 2, "DOP" => 2, "DZD" => 2, "EGP" => 2, "ERN" => 2, "ETB" => 2,
    "EUR" => 2, "FJD" => 2, "FKP" => 2, "GBP" => 2, "GEL" => 2, "GHS" => 2, "GIP" => 2,
    "GMD" => 2, "GNF" => 0, "GTQ" => 2, "GYD" => 2, "HKD" => 2, "HNL" => 2, "HTG" => 2,
    "HUF" => 2, "IDR" => 2, "ILS" => 2, "INR" => 2, "IQD" => 3, "IRR" => 2, "ISK" => 0,
    "JMD" => 2, "JOD" => 3, "JPY" => 0, "KES" => 2, "KGS" => 2, "KHR" => 2, "KMF" => 0,
    "KPW" => 2, "KRW" => 0, "KWD" => 3, "KYD" => 2, "KZT" => 2, "LAK" => 2, "LBP" => 2,
    "LKR" => 2, "LRD" => 2, "LSL" => 2, "LYD" => 3, "MAD" => 2, "MDL" => 2, "MGA" => 2,
    "MKD" => 2, "MMK" => 2, "MNT" => 2, "MOP" => 2, "MRU" => 2, "MUR" => 2, "MVR" => 2,
    "MWK" => 2, "MXN" => 2, "MYR" => 2, "MZN" => 2, "NAD" => 2, "NGN" => 2, "NIO" => 2,
    "NOK" => 2, "NPR" => 2, "NZD" => 2, "OMR" => 3, "PAB" => 2, "PEN" => 2, "PGK" => 2,
    "PHP" => 2, "PKR" => 2, "PLN" => 2, "PYG" => 0, "QAR" => 2, "RON" => 2, "RSD" => 2,
    "RUB" => 2, "RWF" => 0, "SAR" => 2, "SBD" => 2, "SCR" => 2, "SDG" => 2, "SEK" => 2,
    "SGD" => 2, "SHP" => 2, "SLE" => 2, "SOS" => 2, "SRD" => 2, "SSP" => 2, "STN" => 2,
    "SVC" => 2, "SYP" => 2, "SZL" => 2, "THB" => 2, "TJS" => 2, "TMT" => 2, "TND" => 3,
    "TOP" => 2, "TRY" => 2, "TTD" => 2, "TWD" => 2, "TZS" => 2, "UAH" => 2, "UGX" => 0,
    "USD" => 2, "UYU" => 2, "UZS" => 2, "VES" => 2, "VND" => 0, "VUV" => 0, "WST" => 2,
    "XAF" => 0, "XCD" => 2, "XOF" => 0, "XPF" => 0, "YER" => 2, "ZAR" => 2, "ZMW" => 2,
    "ZWG" => 2,
};

impl Currency {
    /// US dollars, the currency of every US table.
    pub const USD: Currency = Currency {
        code: "USD",
        minor_units: 2,
    };

    /// Looks a currency up by its ISO 4217 alphabetic code (upper case, as the interface
    /// sends it). `None` for a code that is not an active ISO 4217 currency.
    pub fn from_code(code: &str) -> Option<Currency> {
        CURRENCIES
            .get_entry(code)
            .map(|(code, &minor_units)| Currency { code, minor_units })
    }

    /// The ISO 4217 alphabetic code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// How many decimal places the smallest unit is (2 for USD, 0 for JPY, 3 for KWD).
    pub fn minor_units(&self) -> u32 {
        u32::from(self.minor_units)
    }

    /// Converts an amount in minor units to major units, exactly (1234 cents -> 12.34).
    pub fn to_major(&self, minor: Decimal) -> Decimal {
        let mut major = minor;
        // Dividing by a power of ten only moves the scale; it cannot lose digits unless the
        // scale would pass 28, in which case the exact quotient is still taken.
        if major.scale() + self.minor_units() <= 28 {
            major
                .set_scale(major.scale() + self.minor_units())
                .expect("scale within 28");
            major
        } else {
            minor / Decimal::from(10u64.pow(self.minor_units()))
        }
    }

    /// Converts an amount in major units to minor units (12.34 -> 1234), exactly.
    pub fn to_minor(&self, major: Decimal) -> Decimal {
        let (scale, n) = (major.scale(), self.minor_units());
        if major.is_zero() {
            Decimal::ZERO
        } else if scale >= n {
            // Multiplying by 10^n only lowers the scale: no digit changes, no multiplication.
            let mut minor = major;
            minor
                .set_scale(scale - n)
                .expect("a smaller scale is valid");
            minor
        } else {
            major * Decimal::from(10u64.pow(n))
        }
    }

    /// Every currency levy knows, in no particular order.
    pub fn all() -> impl Iterator<Item = Currency> {
        CURRENCIES
            .entries()
            .map(|(code, &minor_units)| Currency { code, minor_units })
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code)
    }
}

/// The one rounding rule: an amount in minor units, rounded half away from zero to a whole
/// number of minor units (0.5 cent -> 1 cent, -0.5 cent -> -1 cent).
///
/// This is the only function in levy that rounds money.
pub fn round_minor(amount_minor: Decimal) -> Decimal {
    amount_minor
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn minor_units_follow_iso_4217() {
        // ISO 4217 list one: JPY has 0 decimals, USD 2, KWD 3.
        assert_eq!(Currency::from_code("JPY").unwrap().minor_units(), 0);
        assert_eq!(Currency::from_code("USD").unwrap().minor_units(), 2);
        assert_eq!(Currency::from_code("KWD").unwrap().minor_units(), 3);
        assert_eq!(Currency::from_code("usd"), None);
        assert_eq!(Currency::from_code("XXX"), None);
    }

    #[test]
    fn conversions_are_exact() {
        let usd = Currency::USD;
        assert_eq!(usd.to_major(d("1234")), d("12.34"));
        assert_eq!(usd.to_minor(d("12.34")), d("1234"));
        let kwd = Currency::from_code("KWD").unwrap();
        assert_eq!(kwd.to_major(d("1")), d("0.001"));
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_minor(d("0.5")), d("1"));
        assert_eq!(round_minor(d("0.49999")), d("0"));
        assert_eq!(round_minor(d("-0.5")), d("-1"));
        assert_eq!(round_minor(d("7.125")), d("7"));
    }
}
