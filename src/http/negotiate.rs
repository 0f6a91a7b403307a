//! Content negotiation, in one place (docs/api.md, "HTTP").
//!
//! In: `Body<T>` reads JSON (`application/json`, `text/json`, `application/*+json`,
//! `text/plain` and `application/json-patch+json` holding JSON) or XML (`application/xml`,
//! `text/xml`, `application/*+xml`); anything else is a 415.
//!
//! Out: handlers always produce JSON through `Record`/`RecordList`; the `negotiate`
//! middleware then renders what `Accept` asked for (JSON, XML, text/plain, text/json,
//! text/xml, octet-stream, and CSV for lists), answers 406 when nothing acceptable can be
//! produced, answers `If-None-Match` with 304, and scopes the `IEEE754Compatible` flag.

use axum::body::{Body as AxumBody, Bytes};
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::{ApiError, field_of};
use super::extract::unquote_etag;
use super::strict_records::StrictRecords;
use super::xml;
use crate::domain::serde_util;

/// A record type as the API names it; the XML root element and CSV/list naming use it.
pub trait Representable: Serialize {
    const NAME: &'static str;

    /// The record version, sent as the `ETag` header (see `domain::record`).
    fn etag(&self) -> Option<&str> {
        None
    }
}

/// What the middleware needs to know to render a JSON body differently.
#[derive(Clone, Copy)]
struct Shape {
    name: &'static str,
    list: bool,
}

/// One record, as 200 with its version (`Representable::etag`) as the `ETag` header.
pub struct Record<T>(pub T);

/// A list of records.
pub struct RecordList<T>(pub Vec<T>);

/// 200 with no body (the contract's "no content").
pub struct EmptyOk;

/// 200 with no body and a `Location` header naming the created record.
pub struct OkWithLocation(pub String);

fn json_response<T: Serialize>(value: &T, shape: Shape) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                bytes,
            )
                .into_response();
            response.extensions_mut().insert(shape);
            response
        }
        Err(e) => ApiError::Internal(e.into()).into_response(),
    }
}

impl<T: Representable> IntoResponse for Record<T> {
    fn into_response(self) -> Response {
        let mut response = json_response(
            &self.0,
            Shape {
                name: T::NAME,
                list: false,
            },
        );
        if let Some(etag) = self.0.etag()
            && let Ok(v) = HeaderValue::from_str(&format!("\"{etag}\""))
        {
            response.headers_mut().insert(header::ETAG, v);
        }
        response
    }
}

impl<T: Representable> IntoResponse for RecordList<T> {
    fn into_response(self) -> Response {
        json_response(
            &self.0,
            Shape {
                name: T::NAME,
                list: true,
            },
        )
    }
}

impl IntoResponse for EmptyOk {
    fn into_response(self) -> Response {
        StatusCode::OK.into_response()
    }
}

impl IntoResponse for OkWithLocation {
    fn into_response(self) -> Response {
        match HeaderValue::from_str(&self.0) {
            Ok(v) => (StatusCode::OK, [(header::LOCATION, v)]).into_response(),
            Err(_) => StatusCode::OK.into_response(),
        }
    }
}

// ---- input ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputFormat {
    Json,
    Xml,
}

fn input_format(headers: &HeaderMap) -> Result<InputFormat, ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        // No Content-Type: the contract's default, JSON.
        return Ok(InputFormat::Json);
    };
    let text = value.to_str().unwrap_or_default();
    let essence = text
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/json" | "text/json" | "text/plain" | "application/json-patch+json" => {
            Ok(InputFormat::Json)
        }
        "application/xml" | "text/xml" => Ok(InputFormat::Xml),
        e if e.starts_with("application/") && e.ends_with("+json") => Ok(InputFormat::Json),
        e if e.starts_with("application/") && e.ends_with("+xml") => Ok(InputFormat::Xml),
        _ => Err(ApiError::UnsupportedMediaType(format!(
            "Content-Type '{text}' is not supported; send application/json or application/xml"
        ))),
    }
}

/// A request body in any supported input format, deserialised into `T`.
pub struct Body<T>(pub T);

/// The request body's bytes (413 past the endpoint's limit, 408 past the server's body
/// deadline).
async fn body_bytes<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state)
        .await
        .map_err(|rejection| {
            if let Some(timeout) = crate::server::body_timeout(&rejection) {
                ApiError::RequestTimeout(timeout.to_string())
            } else if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::body_too_large("the request body is larger than this endpoint accepts")
            } else {
                ApiError::bad_request("unreadable_body", rejection.body_text())
            }
        })
}

fn parse_body<T: DeserializeOwned>(format: InputFormat, bytes: &[u8]) -> Result<T, ApiError> {
    match format {
        InputFormat::Json => parse_json(bytes),
        InputFormat::Xml => xml::from_xml(bytes),
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let format = input_format(request.headers())?;
        let bytes = body_bytes(request, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request(
                "missing_body",
                "a request body is required",
            ));
        }
        parse_body(format, &bytes).map(Body)
    }
}

/// `Option<Body<T>>`: an optional body. No body, or one of only whitespace, is `None`
/// whatever its `Content-Type` says; anything else is read as `Body<T>` reads it.
impl<S: Send + Sync, T: DeserializeOwned> OptionalFromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let format = input_format(request.headers());
        let bytes = body_bytes(request, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        parse_body(format?, &bytes).map(|t| Some(Body(t)))
    }
}

/// Parses JSON, reporting syntax errors with their position and type errors with the
/// path of the offending field. An array where a record is expected, at any depth, is
/// refused (`StrictRecords`).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let result: Result<T, _> = serde_path_to_error::deserialize(StrictRecords(&mut deserializer));
    let value = result.map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::bad_request(
                "malformed_json",
                format!("the body is not valid JSON: {inner}"),
            );
        }
        ApiError::field(
            field_of(&e.path().to_string(), &inner.to_string()),
            strip_position(&inner.to_string()),
        )
    })?;
    deserializer.end().map_err(|e| {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })?;
    if has_nul_escape(bytes) {
        return Err(ApiError::field(
            nul_field(bytes),
            "must not contain the NUL character (U+0000)",
        ));
    }
    Ok(value)
}

/// Whether a JSON text holds the NUL character, which it can only write as `\u0000`.
/// No text may hold one, as in XML (where it is not well-formed) and PostgreSQL (whose
/// text type cannot store it): refused on every input, on both backends alike.
fn has_nul_escape(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.iter().position(|&b| b == b'\\') {
        if rest.get(at + 1..at + 6) == Some(b"u0000".as_slice()) {
            return true;
        }
        // Skip the escaped character, so that `\\u0000` (a backslash, then text) is not one.
        rest = rest.get(at + 2..).unwrap_or_default();
    }
    false
}

/// The path of the first key or string value holding NUL, as serde names fields.
fn nul_field(bytes: &[u8]) -> String {
    fn find(value: &serde_json::Value, path: &str) -> Option<String> {
        match value {
            serde_json::Value::String(s) if s.contains('\0') => Some(path.to_string()),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| find(item, &format!("{path}[{i}]"))),
            serde_json::Value::Object(fields) => fields.iter().find_map(|(key, item)| {
                let field = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if key.contains('\0') {
                    Some(field)
                } else {
                    find(item, &field)
                }
            }),
            _ => None,
        }
    }
    serde_json::from_slice(bytes)
        .ok()
        .and_then(|value| find(&value, ""))
        .filter(|field| !field.is_empty())
        .unwrap_or_else(|| "body".into())
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

// ---- output --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    Json,
    TextJson,
    TextPlain,
    OctetStream,
    Xml,
    TextXml,
    Csv,
}

impl OutputFormat {
    fn content_type(self) -> &'static str {
        match self {
            OutputFormat::Json => "application/json",
            OutputFormat::TextJson => "text/json",
            OutputFormat::TextPlain => "text/plain; charset=utf-8",
            OutputFormat::OctetStream => "application/octet-stream",
            OutputFormat::Xml => "application/xml",
            OutputFormat::TextXml => "text/xml",
            OutputFormat::Csv => "text/csv; charset=utf-8",
        }
    }

    fn is_json(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::TextJson)
    }
}

struct Preference {
    /// Acceptable formats in order of preference; CSV only helps list responses.
    formats: Vec<OutputFormat>,
    ieee754: bool,
}

fn media_format(essence: &str) -> Option<Vec<OutputFormat>> {
    use OutputFormat::*;
    Some(match essence {
        "*/*" | "application/*" | "application/json" | "application/problem+json" => vec![Json],
        "text/json" => vec![TextJson],
        "text/plain" => vec![TextPlain],
        "text/*" => vec![TextPlain, TextXml, TextJson],
        "application/octet-stream" => vec![OctetStream],
        "application/xml" => vec![Xml],
        "text/xml" => vec![TextXml],
        "text/csv" => vec![Csv],
        e if e.starts_with("application/") && e.ends_with("+json") => vec![Json],
        e if e.starts_with("application/") && e.ends_with("+xml") => vec![Xml],
        _ => return None,
    })
}

/// How a handler that writes a list itself, row by row (reports), renders it: the
/// format `Accept` prefers (the middleware has already refused an unsatisfiable one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// The JSON array, with this content type.
    Json(&'static str),
    /// `ArrayOf<Name>` of `<Name>` elements, with this content type.
    Xml(&'static str),
    Csv,
}

pub fn stream_format(headers: &HeaderMap) -> StreamFormat {
    let format = parse_accept(headers)
        .formats
        .first()
        .copied()
        .unwrap_or(OutputFormat::Json);
    match format {
        OutputFormat::Xml | OutputFormat::TextXml => StreamFormat::Xml(format.content_type()),
        OutputFormat::Csv => StreamFormat::Csv,
        other => StreamFormat::Json(other.content_type()),
    }
}

fn has_ieee754(params: &str) -> bool {
    params.split(';').any(|p| {
        let mut kv = p.splitn(2, '=');
        let k = kv.next().unwrap_or_default().trim();
        let v = kv.next().unwrap_or_default().trim().trim_matches('"');
        k.eq_ignore_ascii_case("IEEE754Compatible") && v.eq_ignore_ascii_case("true")
    })
}

fn parse_accept(headers: &HeaderMap) -> Preference {
    let mut ieee754 = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().contains("json") && has_ieee754(ct));
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Preference {
            formats: vec![OutputFormat::Json],
            ieee754,
        };
    };
    let mut ranges: Vec<(f32, usize, Vec<OutputFormat>)> = Vec::new();
    for (index, range) in accept.split(',').enumerate() {
        let (essence, params) = range.split_once(';').unwrap_or((range, ""));
        let essence = essence.trim().to_ascii_lowercase();
        let q = params
            .split(';')
            .find_map(|p| p.trim().strip_prefix("q="))
            .and_then(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if q <= 0.0 {
            continue;
        }
        if let Some(formats) = media_format(&essence) {
            if formats.iter().any(|f| f.is_json()) && has_ieee754(params) {
                ieee754 = true;
            }
            ranges.push((q, index, formats));
        }
    }
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    Preference {
        formats: ranges.into_iter().flat_map(|r| r.2).collect(),
        ieee754,
    }
}

pub async fn negotiate(request: Request, next: Next) -> Response {
    let preference = parse_accept(request.headers());
    if preference.formats.is_empty() {
        return ApiError::NotAcceptable(
            "none of the media types in Accept can be produced; use application/json, \
             application/xml, text/plain, text/json, text/xml, application/octet-stream or text/csv"
                .into(),
        )
        .into_response();
    }
    let is_get = request.method() == Method::GET;
    let if_none_match = request.headers().get(header::IF_NONE_MATCH).cloned();

    let response = serde_util::with_ieee754_compatible(preference.ieee754, next.run(request)).await;

    let Some(shape) = response.extensions().get::<Shape>().copied() else {
        return response;
    };
    if is_get
        && let (Some(inm), Some(etag)) = (if_none_match, response.headers().get(header::ETAG))
        && etag_matches(&inm, etag)
    {
        let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
        not_modified
            .headers_mut()
            .insert(header::ETAG, etag.clone());
        return not_modified;
    }
    let format = preference
        .formats
        .iter()
        .copied()
        .find(|f| shape.list || *f != OutputFormat::Csv);
    let Some(format) = format else {
        return ApiError::NotAcceptable("text/csv is only produced for lists".into())
            .into_response();
    };
    render(response, shape, format, preference.ieee754).await
}

fn etag_matches(if_none_match: &HeaderValue, etag: &HeaderValue) -> bool {
    let (Ok(inm), Ok(etag)) = (if_none_match.to_str(), etag.to_str()) else {
        return false;
    };
    inm.trim() == "*"
        || inm
            .split(',')
            .any(|candidate| unquote_etag(candidate) == unquote_etag(etag))
}

async fn render(response: Response, shape: Shape, format: OutputFormat, ieee754: bool) -> Response {
    let (mut parts, body) = response.into_parts();
    let content_type = if format.is_json() && ieee754 {
        format!("{}; IEEE754Compatible=true", format.content_type())
    } else {
        format.content_type().to_string()
    };
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        parts.headers.insert(header::CONTENT_TYPE, v);
    }
    let body = match format {
        OutputFormat::Json
        | OutputFormat::TextJson
        | OutputFormat::TextPlain
        | OutputFormat::OctetStream => body,
        OutputFormat::Xml | OutputFormat::TextXml | OutputFormat::Csv => {
            let bytes = match axum::body::to_bytes(body, usize::MAX).await {
                Ok(b) => b,
                Err(e) => {
                    return ApiError::Internal(anyhow::anyhow!("reading body: {e}"))
                        .into_response();
                }
            };
            let value: serde_json::Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(e) => return ApiError::Internal(e.into()).into_response(),
            };
            let converted = if format == OutputFormat::Csv {
                super::csv_out::to_csv(&value)
            } else {
                xml::to_xml(shape.name, shape.list, &value)
            };
            match converted {
                Ok(text) => AxumBody::from(text),
                Err(e) => return ApiError::Internal(e).into_response(),
            }
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, body)
}
