//! The query parameters of `GET /itineraries` and `GET /itinerariesList`, read from
//! text so that each bad value is a 400 naming its parameter — and so that `pnrNumber`
//! can make every other filter parameter irrelevant, bad values included.

use jiff::Timestamp;

use super::times::parse_utc;
use super::{ApprovalState, pnr_key};
use crate::domain::validation::{ValidationErrors, Validator};

pub const DEFAULT_PAGE_SIZE: i64 = 100;
pub const MAX_PAGE_SIZE: i64 = 1000;

/// The parameters as sent (absent or blank values count as not given).
#[derive(Debug, Clone, Default)]
pub struct RawFilter<'a> {
    pub start_date: Option<&'a str>,
    pub end_date: Option<&'a str>,
    pub approval_state: Option<&'a str>,
    pub subtenants: Option<&'a str>,
    pub by_traveler_only: Option<&'a str>,
    pub pnr_number: Option<&'a str>,
}

/// Which itineraries a listing returns (before the caller's role narrows it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListFilter {
    /// Itineraries whose [Start, End] overlaps [from, to] (bounds inclusive); an
    /// itinerary without segments overlaps no window.
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub approval_state: Option<ApprovalState>,
    /// The path tenant's descendants too.
    pub subtenants: bool,
    /// Only the caller's own: created by the caller or naming the caller as a traveler.
    pub by_traveler_only: bool,
    /// Exactly this PNR (upper case); the other fields are then left at their defaults.
    pub pnr: Option<String>,
}

fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// A typed parameter's value: absent is `None`; present but empty (`?startDate=`) is
/// no value of its type, so a 400 naming it rather than a silently ignored filter.
fn typed<'a>(v: &mut Validator, name: &str, value: Option<&'a str>) -> Option<&'a str> {
    match value.map(str::trim) {
        Some("") => {
            v.add(name, "is empty: give a value or leave the parameter out");
            None
        }
        other => other,
    }
}

fn boolean(v: &mut Validator, name: &str, value: Option<&str>) -> bool {
    match typed(v, name, value) {
        None => false,
        Some(t) if t.eq_ignore_ascii_case("true") => true,
        Some(t) if t.eq_ignore_ascii_case("false") => false,
        Some(t) => {
            v.add(name, format!("'{t}' is not true or false"));
            false
        }
    }
}

impl ListFilter {
    pub fn parse(raw: &RawFilter<'_>) -> Result<ListFilter, ValidationErrors> {
        // The contract: with a PNR "all other parameters are ignored", malformed or not.
        if let Some(pnr) = given(raw.pnr_number) {
            return Ok(ListFilter {
                pnr: Some(pnr_key(pnr)),
                ..ListFilter::default()
            });
        }
        let mut v = Validator::new();
        let mut time = |name: &str, value: Option<&str>| {
            typed(&mut v, name, value).and_then(|t| match parse_utc(t) {
                Ok(ts) => Some(ts),
                Err(message) => {
                    v.add(name, message);
                    None
                }
            })
        };
        let from = time("startDate", raw.start_date);
        let to = time("endDate", raw.end_date);
        if let (Some(f), Some(t)) = (from, to)
            && t < f
        {
            v.add("endDate", "must not be before startDate");
        }
        let approval_state = match typed(&mut v, "approvalState", raw.approval_state) {
            None => None,
            Some(t) => match t.parse::<i64>() {
                Ok(-1) => None,
                Ok(code) => match ApprovalState::from_code(code) {
                    Some(state) => Some(state),
                    None => {
                        v.add("approvalState", "must be -1 (any), 0, 1 or 2");
                        None
                    }
                },
                Err(_) => {
                    v.add("approvalState", "must be -1 (any), 0, 1 or 2");
                    None
                }
            },
        };
        let subtenants = boolean(&mut v, "subtenants", raw.subtenants);
        let by_traveler_only = boolean(&mut v, "byTravelerOnly", raw.by_traveler_only);
        v.finish()?;
        Ok(ListFilter {
            from,
            to,
            approval_state,
            subtenants,
            by_traveler_only,
            pnr: None,
        })
    }
}

/// `page` (from 1) and `pageSize` (1 to 1,000) of `itinerariesList`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: i64,
    pub size: i64,
}

impl PageRequest {
    pub fn parse(page: Option<&str>, size: Option<&str>) -> Result<PageRequest, ValidationErrors> {
        let mut v = Validator::new();
        let mut number =
            |name: &str, value: Option<&str>, default: i64, max: i64| match given(value) {
                None => default,
                Some(t) => match t.parse::<i32>() {
                    Ok(n) if n >= 1 && i64::from(n) <= max => i64::from(n),
                    _ => {
                        v.add(
                            name,
                            if max == i64::from(i32::MAX) {
                                format!("must be a whole number of at least 1 (got '{t}')")
                            } else {
                                format!("must be a whole number from 1 to {max} (got '{t}')")
                            },
                        );
                        default
                    }
                },
            };
        let page = number("page", page, 1, i64::from(i32::MAX));
        let size = number("pageSize", size, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
        v.finish()?;
        Ok(PageRequest { page, size })
    }

    pub fn offset(self) -> i64 {
        (self.page - 1) * self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(err: ValidationErrors) -> Vec<String> {
        err.0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(
            ListFilter::parse(&RawFilter::default()).unwrap(),
            ListFilter::default()
        );
        let f = ListFilter::parse(&RawFilter {
            start_date: Some("2026-07-01"),
            end_date: Some("2026-07-31T23:59:59Z"),
            approval_state: Some("1"),
            subtenants: Some("TRUE"),
            by_traveler_only: Some("false"),
            pnr_number: Some(""),
        })
        .unwrap();
        assert_eq!(f.from.unwrap().to_string(), "2026-07-01T00:00:00Z");
        assert_eq!(f.approval_state, Some(ApprovalState::Approved));
        assert!(f.subtenants && !f.by_traveler_only);
        let any = ListFilter::parse(&RawFilter {
            approval_state: Some("-1"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(any.approval_state, None);
    }

    #[test]
    fn bad_values_are_named() {
        let err = ListFilter::parse(&RawFilter {
            start_date: Some("yesterday"),
            approval_state: Some("3"),
            subtenants: Some("yes"),
            by_traveler_only: Some("1"),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            fields(err),
            ["startDate", "approvalState", "subtenants", "byTravelerOnly"]
        );
        let err = ListFilter::parse(&RawFilter {
            start_date: Some("2026-08-01"),
            end_date: Some("2026-07-01"),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(fields(err), ["endDate"]);
    }

    #[test]
    fn pnr_makes_the_rest_irrelevant() {
        let f = ListFilter::parse(&RawFilter {
            pnr_number: Some(" x7k2qp"),
            approval_state: Some("banana"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(f.pnr.as_deref(), Some("X7K2QP"));
        assert_eq!(f.approval_state, None);
    }

    #[test]
    fn paging() {
        assert_eq!(
            PageRequest::parse(None, None).unwrap(),
            PageRequest { page: 1, size: 100 }
        );
        assert_eq!(
            PageRequest::parse(Some("3"), Some("10")).unwrap().offset(),
            20
        );
        for (page, size, bad) in [
            (Some("0"), None, "page"),
            (Some("x"), None, "page"),
            (Some("2147483648"), None, "page"),
            (None, Some("0"), "pageSize"),
            (None, Some("1001"), "pageSize"),
        ] {
            assert_eq!(fields(PageRequest::parse(page, size).unwrap_err()), [bad]);
        }
    }
}
