//! Closed sets of names (a delivery's channel and status, an alert's status, a
//! severity, an MT message's type…): each is an enum whose text — what the API sends and
//! the database stores — is written once, in its `closed_set!` declaration. Records on
//! the wire keep the text; services, workers and the store hold the enum, parsed at the
//! edge (`FromStr`) and printed back with `Display` (or `as_str` inside SQL).

use std::fmt;

/// A text that names no member of a closed set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotInSet {
    /// The set's name (`Channel`, `DeliveryStatus`, …).
    pub set: &'static str,
    pub text: String,
    /// Its members' texts, for the message.
    pub members: &'static [&'static str],
}

impl fmt::Display for NotInSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is no {}: must be one of {}",
            self.text,
            self.set,
            self.members.join(", ")
        )
    }
}

impl std::error::Error for NotInSet {}

/// Declares a closed set: the enum (`Copy`, comparable, hashable), `ALL` and `NAMES` in
/// declaration order, `as_str`, `Display`, `FromStr` (exact text, case-sensitive) and
/// serde as the text.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant ),+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every member's text, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The text the API sends and the database stores.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The member a client's text names in any letter case, with spaces around
            /// (for the sets the API promised to read leniently; the others never call it).
            #[allow(dead_code)]
            pub fn parse_any_case(text: &str) -> Option<Self> {
                let text = text.trim();
                Self::ALL
                    .iter()
                    .copied()
                    .find(|member| member.as_str().eq_ignore_ascii_case(text))
            }

            /// The text as an SQL string literal (`'Pending'`), for statements whose
            /// predicate must read as a partial index's does (a bound parameter would not
            /// let the planner prove the index applies).
            pub const fn sql(self) -> &'static str {
                match self {
                    $($name::$variant => concat!("'", $text, "'")),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::domain::closed_set::NotInSet;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::domain::closed_set::NotInSet {
                        set: stringify!($name),
                        text: text.to_string(),
                        members: $name::NAMES,
                    }),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use closed_set;

#[cfg(test)]
mod tests {
    closed_set! {
        /// A set for the tests.
        pub enum Light {
            Red = "Red",
            /// Amber's text differs from its name.
            Amber = "Orange",
        }
    }

    #[test]
    fn members_print_parse_and_serialise_as_their_text() {
        for light in Light::ALL {
            assert_eq!(light.to_string().parse::<Light>(), Ok(*light));
            let json = serde_json::to_value(light).unwrap();
            assert_eq!(json, serde_json::json!(light.as_str()));
            assert_eq!(serde_json::from_value::<Light>(json).unwrap(), *light);
        }
        assert_eq!(Light::Amber.to_string(), "Orange");
        assert_eq!(Light::Amber.sql(), "'Orange'");
        assert_eq!(Light::NAMES, ["Red", "Orange"]);
        let wrong = "red".parse::<Light>().unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "'red' is no Light: must be one of Red, Orange"
        );
        assert!(serde_json::from_str::<Light>("\"Amber\"").is_err());
    }
}
