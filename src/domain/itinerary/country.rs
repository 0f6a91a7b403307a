//! ISO 3166-1 alpha-2 country codes: the 249 officially assigned codes, plus `XK`
//! (Kosovo), the user-assigned code travel systems use.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const CODES: [&str; 250] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "XK", "YE", "YT", "ZA", "ZM", "ZW",
];

/// Whether `code` (upper case) is an assigned alpha-2 code.
pub fn is_country_code(code: &str) -> bool {
    CODES.binary_search(&code).is_ok()
}

/// An assigned alpha-2 code, written in upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CountryCode(&'static str);

impl CountryCode {
    /// The code `text` names, in any case; `None` when it is no assigned code.
    pub fn parse(text: &str) -> Option<CountryCode> {
        let upper = text.to_ascii_uppercase();
        CODES
            .binary_search(&upper.as_str())
            .ok()
            .and_then(|i| CODES.get(i))
            .map(|code| CountryCode(code))
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for CountryCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for CountryCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for CountryCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CountryCode::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("'{text}' is no ISO 3166-1 alpha-2 country code"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_unique_and_known() {
        assert!(
            CODES.windows(2).all(|w| w[0] < w[1]),
            "sorted, no duplicates"
        );
        for code in ["GB", "US", "FR", "JP", "XK", "ZW", "AD"] {
            assert!(is_country_code(code), "{code}");
        }
        for code in ["UK", "XX", "gb", "GBR", "EU", ""] {
            assert!(!is_country_code(code), "{code}");
        }
        assert_eq!(
            CountryCode::parse("gb").map(CountryCode::as_str),
            Some("GB")
        );
        assert_eq!(
            CountryCode::parse("Xk").map(CountryCode::as_str),
            Some("XK")
        );
        for text in ["UK", "GBR", "", " GB"] {
            assert_eq!(CountryCode::parse(text), None, "{text}");
        }
    }
}
