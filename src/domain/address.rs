//! Messaging addresses: an e-mail address or a phone number, plain (`ops@example.com`,
//! `+447700900123`) or with the `mail:`/`sms:` prefix the spec writes them with
//! (docs/api.md, "HTTP"). One parser, so contact entries, `MessagingAddress` recipients and the
//! delivery code agree on what an address is.

use super::validation::{is_email, is_phone};

const MAIL: &str = "mail:";
const SMS: &str = "sms:";

/// Where a message to an address goes, with the bare address (prefix removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactAddress {
    /// An e-mail address, e.g. `ops@example.com`.
    Email(String),
    /// An international phone number as written (starts with `+`), e.g. `+44 7700 900123`.
    Phone(String),
}

impl ContactAddress {
    /// Reads a contact entry's address: plain or prefixed (`mail:` + e-mail, `sms:` +
    /// phone). Surrounding white space is ignored. The error is a sentence for the client.
    pub fn parse(text: &str) -> Result<ContactAddress, String> {
        let text = text.trim();
        if text.starts_with(MAIL) || text.starts_with(SMS) {
            return Self::parse_prefixed(text);
        }
        if is_email(text) {
            Ok(ContactAddress::Email(text.to_string()))
        } else if is_phone(text) {
            Ok(ContactAddress::Phone(text.to_string()))
        } else {
            Err(format!(
                "'{text}' is neither an e-mail address nor a phone number starting with + \
                 (plain or with the mail:/sms: prefix)"
            ))
        }
    }

    /// Reads an address that must carry its prefix (a `MessagingAddress` recipient).
    pub fn parse_prefixed(text: &str) -> Result<ContactAddress, String> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix(MAIL) {
            if is_email(rest) {
                Ok(ContactAddress::Email(rest.to_string()))
            } else if is_phone(rest) {
                Err(format!(
                    "'{rest}' after mail: is a phone number; use the sms: prefix for phones"
                ))
            } else {
                Err(format!(
                    "'{rest}' after mail: is not a valid e-mail address"
                ))
            }
        } else if let Some(rest) = text.strip_prefix(SMS) {
            if is_phone(rest) {
                Ok(ContactAddress::Phone(rest.to_string()))
            } else if is_email(rest) {
                Err(format!(
                    "'{rest}' after sms: is an e-mail address; use the mail: prefix for e-mail"
                ))
            } else {
                Err(format!(
                    "'{rest}' after sms: must start with + and a country code, followed by digits"
                ))
            }
        } else {
            Err("must start with mail: (an e-mail address) or sms: (a phone number)".into())
        }
    }

    /// The address without any prefix.
    pub fn address(&self) -> &str {
        match self {
            ContactAddress::Email(a) | ContactAddress::Phone(a) => a,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ContactAddress::{self, Email, Phone};

    fn email(a: &str) -> ContactAddress {
        Email(a.into())
    }

    fn phone(a: &str) -> ContactAddress {
        Phone(a.into())
    }

    #[test]
    fn plain_and_prefixed_forms() {
        for (text, expected) in [
            ("ops@example.com", email("ops@example.com")),
            ("mail:ops@example.com", email("ops@example.com")),
            ("+441234567890", phone("+441234567890")),
            ("sms:+441234567890", phone("+441234567890")),
            ("sms:+44 20 7946 0958", phone("+44 20 7946 0958")),
            (" mail:ops@example.com ", email("ops@example.com")),
        ] {
            assert_eq!(ContactAddress::parse(text), Ok(expected.clone()), "{text}");
        }
        assert_eq!(
            ContactAddress::parse("mail:ops@example.com")
                .unwrap()
                .address(),
            "ops@example.com"
        );
    }

    #[test]
    fn mismatched_and_broken_forms_say_why() {
        let cases = [
            ("mail:+441234567890", "use the sms: prefix"),
            ("sms:a@b.co", "use the mail: prefix"),
            ("mail:", "is not a valid e-mail address"),
            ("sms:", "must start with +"),
            ("mail:nobody", "is not a valid e-mail address"),
            ("sms:07700900123", "must start with +"),
            ("nowhere", "neither an e-mail address nor a phone number"),
            ("07700900123", "neither"),
            ("", "neither"),
        ];
        for (text, expected) in cases {
            let error = ContactAddress::parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn messaging_addresses_need_the_prefix() {
        assert_eq!(
            ContactAddress::parse_prefixed("sms:+447700900123"),
            Ok(phone("+447700900123"))
        );
        for text in ["ops@example.com", "+447700900123", "tel:+447700900123"] {
            let error = ContactAddress::parse_prefixed(text).unwrap_err();
            assert!(
                error.starts_with("must start with mail:"),
                "{text}: {error}"
            );
        }
        assert!(
            ContactAddress::parse_prefixed("mail:+447700900123")
                .unwrap_err()
                .contains("sms:")
        );
    }
}
