//! Continuation paging (docs/api.md, "HTTP"): while more records exist the response carries
//! `X-CONTINUATIONTOKEN`; the client echoes it in the request header of the same name.
//!
//! A token names the listing it belongs to and where the last page ended (a
//! `Cursor`: an id, or a (time, id) pair), and is signed with the server secret: a forged
//! token, or one from another listing, is a 400. Records are paged in cursor order, so
//! records added between pages appear exactly once.

use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::error::ApiError;
use super::negotiate::{RecordList, Representable};

pub const CONTINUATION_HEADER: &str = "x-continuationtoken";

pub struct TokenSigner {
    key: Vec<u8>,
}

/// A position in a listing's order, as a token carries it.
pub trait Cursor: Sized {
    fn encode(&self) -> String;
    fn decode(text: &str) -> Option<Self>;
}

impl Cursor for i64 {
    fn encode(&self) -> String {
        self.to_string()
    }
    fn decode(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

/// Where the next page starts.
#[derive(Debug, Clone, Copy)]
pub struct PageRequest<C> {
    /// Return records strictly after this (`None`: from the start).
    pub after: Option<C>,
    pub size: u32,
}

impl TokenSigner {
    pub fn new(secret: &[u8]) -> Self {
        Self {
            key: secret.to_vec(),
        }
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .expect("HMAC accepts keys of any length");
        mac.update(b"continuation\0");
        mac.update(payload.as_bytes());
        mac
    }

    pub fn issue<C: Cursor>(&self, listing: &str, after: &C) -> String {
        let payload = format!("{listing}|{}", after.encode());
        let tag = self.mac(&payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Where the token continues, if it is genuine and belongs to `listing`.
    pub fn verify<C: Cursor>(&self, listing: &str, token: &str) -> Result<C, ApiError> {
        let invalid = || {
            ApiError::bad_request(
                "invalid_continuation_token",
                "X-CONTINUATIONTOKEN is not a token this listing issued",
            )
        };
        let (payload, tag) = token.trim().split_once('.').ok_or_else(invalid)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        let payload = String::from_utf8(payload).map_err(|_| invalid())?;
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| invalid())?;
        let (token_listing, after) = payload.rsplit_once('|').ok_or_else(invalid)?;
        if token_listing != listing {
            return Err(invalid());
        }
        C::decode(after).ok_or_else(invalid)
    }

    /// Reads the paging request: the continuation header (if any) and `pageSize`.
    pub fn page_request<C: Cursor>(
        &self,
        headers: &HeaderMap,
        listing: &str,
        page_size: Option<u32>,
        max: u32,
    ) -> Result<PageRequest<C>, ApiError> {
        let size = match page_size {
            None => max,
            Some(n) if (1..=max).contains(&n) => n,
            Some(_) => {
                return Err(ApiError::field(
                    "pageSize",
                    format!("must be between 1 and {max}"),
                ));
            }
        };
        let after = match headers.get(CONTINUATION_HEADER) {
            None => None,
            Some(v) => {
                let token = v.to_str().map_err(|_| {
                    ApiError::bad_request("invalid_continuation_token", "token is not text")
                })?;
                if token.is_empty() {
                    None
                } else {
                    Some(self.verify(listing, token)?)
                }
            }
        };
        Ok(PageRequest { after, size })
    }
}

/// One page of records plus the token for the next, if any.
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

impl<T> Page<T> {
    /// `fetched` holds up to `size + 1` records: the extra one only says more exist.
    pub fn from_fetched<C: Cursor>(
        mut fetched: Vec<T>,
        request: PageRequest<C>,
        signer: &TokenSigner,
        listing: &str,
        cursor_of: impl Fn(&T) -> C,
    ) -> Self {
        let more = fetched.len() > request.size as usize;
        fetched.truncate(request.size as usize);
        let next = if more {
            fetched
                .last()
                .map(|last| signer.issue(listing, &cursor_of(last)))
        } else {
            None
        };
        Page {
            items: fetched,
            next,
        }
    }
}

impl<T: Representable> IntoResponse for Page<T> {
    fn into_response(self) -> Response {
        let mut response = RecordList(self.items).into_response();
        if let Some(token) = self.next
            && let Ok(v) = HeaderValue::from_str(&token)
        {
            response.headers_mut().insert(CONTINUATION_HEADER, v);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_bound_to_listing_and_secret() {
        let signer = TokenSigner::new(b"secret");
        let token = signer.issue("users:1000:false", &42i64);
        assert_eq!(
            signer.verify::<i64>("users:1000:false", &token).unwrap(),
            42
        );
        assert!(signer.verify::<i64>("users:1001:false", &token).is_err());
        assert!(
            TokenSigner::new(b"other")
                .verify::<i64>("users:1000:false", &token)
                .is_err()
        );
        assert!(signer.verify::<i64>("users:1000:false", "garbage").is_err());
        let forged = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode("users:1000:false|1"),
            token.split_once('.').unwrap().1
        );
        assert!(signer.verify::<i64>("users:1000:false", &forged).is_err());
    }
}
