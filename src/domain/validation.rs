//! Field-level validation shared by every record: each check appends to a list so a
//! request learns about every offending field at once, not just the first.

use serde::Serialize;

/// One offending field and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Accumulates field errors; `finish()` turns a non-empty list into an error.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Validator {
    errors: Vec<FieldError>,
}

/// A record failed validation; carries every offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("validation failed: {0:?}")]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }
}

impl Validator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn finish(self) -> Result<(), ValidationErrors> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationErrors(self.errors))
        }
    }

    /// A required string: present and, after trimming, not empty.
    pub fn required<'a>(&mut self, field: &str, value: Option<&'a str>) -> Option<&'a str> {
        match value {
            Some(v) if !v.trim().is_empty() => Some(v),
            Some(_) => {
                self.add(field, "must not be empty");
                None
            }
            None => {
                self.add(field, "is required");
                None
            }
        }
    }

    /// Length in characters (not bytes), inclusive bounds.
    pub fn length(&mut self, field: &str, value: Option<&str>, min: usize, max: usize) {
        if let Some(v) = value {
            let n = v.chars().count();
            if n < min || n > max {
                self.add(
                    field,
                    format!("must be between {min} and {max} characters (got {n})"),
                );
            }
        }
    }

    pub fn email(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value
            && !is_email(v)
        {
            self.add(field, format!("'{v}' is not a valid e-mail address"));
        }
    }

    /// A semicolon-separated list of e-mail addresses (empty entries are ignored).
    pub fn email_list(&mut self, field: &str, value: Option<&str>) {
        let Some(v) = value else { return };
        for part in v.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            if !is_email(part) {
                self.add(field, format!("'{part}' is not a valid e-mail address"));
            }
        }
    }

    pub fn time_zone(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value
            && !v.is_empty()
            && crate::domain::time::resolve_time_zone(v).is_none()
        {
            self.add(
                field,
                format!("'{v}' is not a known IANA or Windows time zone id"),
            );
        }
    }

    /// A culture tag such as `en-GB`; the empty string means the invariant culture.
    pub fn culture(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value
            && !v.is_empty()
            && language_tags::LanguageTag::parse(v).is_err()
        {
            self.add(
                field,
                format!("'{v}' is not a well-formed culture name (e.g. en-GB)"),
            );
        }
    }

    /// International phone number: `+`, a country code, then digits (spaces, dashes,
    /// dots and parentheses are tolerated as separators).
    pub fn phone(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value
            && !v.is_empty()
            && !is_phone(v)
        {
            self.add(
                field,
                format!("'{v}' must start with + and a country code, followed by digits"),
            );
        }
    }

    /// One of a fixed set of values (exact match).
    pub fn one_of(&mut self, field: &str, value: Option<&str>, allowed: &[&str]) {
        if let Some(v) = value
            && !allowed.contains(&v)
        {
            self.add(field, format!("must be one of {}", allowed.join(", ")));
        }
    }
}

pub fn is_email(v: &str) -> bool {
    // RFC 5322 syntax via the crate, plus a dotted domain: `a@b` is legal but never what
    // a user of this platform means.
    email_address::EmailAddress::is_valid(v)
        && v.rsplit_once('@')
            .is_some_and(|(_, domain)| domain.contains('.') && !domain.ends_with('.'))
}

pub fn is_phone(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('+') else {
        return false;
    };
    let digits: String = rest
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let valid_chars = digits.chars().all(|c| c.is_ascii_digit());
    // E.164: at most 15 digits; a country code plus a subscriber number needs at least 7.
    valid_chars && (7..=15).contains(&digits.len()) && !digits.starts_with('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert!(is_email("jane@example.com"));
        assert!(!is_email("jane@example"));
        assert!(!is_email("not-an-email"));
        assert!(!is_email("a b@example.com"));
    }

    #[test]
    fn phones() {
        assert!(is_phone("+44 20 7946 0958"));
        assert!(is_phone("+1-555-0100-123"));
        assert!(!is_phone("020 7946 0958"));
        assert!(!is_phone("+0123456789"));
        assert!(!is_phone("+44abc"));
    }

    #[test]
    fn validator_collects_every_error() {
        let mut v = Validator::new();
        v.required("A", None);
        v.email("B", Some("x"));
        v.length("C", Some("abc"), 1, 2);
        let err = v.finish().unwrap_err();
        assert_eq!(err.0.len(), 3);
    }
}
