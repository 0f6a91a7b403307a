//! Writing a report as it is computed: the rows arrive on a channel from the report
//! service and are rendered in the negotiated format (JSON array, CSV with a header row,
//! or XML like every other list) and sent in chunks. Nothing holds the whole report. A
//! failure after the first byte cannot change the status any more: the body is cut off
//! (the client sees an incomplete response, never a short but well-formed one). CSV
//! cells are written as every CSV list writes them (`csv_out::cell`: formulas as text).

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, StreamExt};
use serde_json::Value;

use crate::domain::report::ReportKind;
use crate::domain::report::rows::ReportRow;
use crate::http::csv_out;
use crate::http::negotiate::StreamFormat;
use crate::http::xml;
use crate::services::reports::ReportRows;

/// Rows rendered per chunk written.
const CHUNK_ROWS: usize = 64;

/// The CSV columns of a row type: its fields, in order.
fn columns<R: ReportRow>() -> Vec<String> {
    match serde_json::to_value(R::default()) {
        Ok(Value::Object(fields)) => fields.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

fn csv_line(values: &[String]) -> std::io::Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.write_record(values)?;
    writer
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// Renders one row (after the first when `first` is false).
fn render<R: ReportRow>(
    format: StreamFormat,
    columns: &[String],
    row: &R,
    first: bool,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    match format {
        StreamFormat::Json(_) => {
            if !first {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, row)?;
        }
        StreamFormat::Csv => {
            let value = serde_json::to_value(row)?;
            let values: Vec<String> = columns
                .iter()
                .map(|c| csv_out::cell(value.get(c)))
                .collect();
            out.extend(csv_line(&values)?);
        }
        StreamFormat::Xml(_) => {
            let value = serde_json::to_value(row)?;
            let element = xml::element_to_xml(R::NAME, &value)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            out.extend(element.into_bytes());
        }
    }
    Ok(())
}

/// The response that streams `first` and then the rows `rows` delivers, in `format`. A
/// failure among them is logged with the report's name and the request id, and cuts the
/// body off.
pub fn stream<R: ReportRow>(
    kind: ReportKind,
    format: StreamFormat,
    first: Option<R>,
    rows: ReportRows<R>,
    request_id: Option<String>,
) -> Response {
    let columns = columns::<R>();
    let (content_type, head, tail) = frame::<R>(format, &columns);
    let mut first_rendered = true;
    let body = stream::iter(first.map(Ok))
        .chain(rows)
        .ready_chunks(CHUNK_ROWS)
        .map(move |batch| {
            let mut out = Vec::new();
            for row in batch {
                match row {
                    Ok(row) => {
                        render(format, &columns, &row, first_rendered, &mut out)?;
                        first_rendered = false;
                    }
                    Err(failure) => {
                        tracing::error!(
                            request_id = request_id.as_deref().unwrap_or("-"),
                            report = kind.name(),
                            error = %failure,
                            "report failed while streaming"
                        );
                        return Err(std::io::Error::other("the report failed"));
                    }
                }
            }
            Ok(Bytes::from(out))
        });
    let chunks = stream::once(async move { Ok::<_, std::io::Error>(Bytes::from(head)) })
        .chain(body)
        .chain(stream::once(async move { Ok(Bytes::from(tail)) }));
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        Body::from_stream(chunks),
    )
        .into_response()
}

/// The content type, and what comes before the first row and after the last.
fn frame<R: ReportRow>(
    format: StreamFormat,
    columns: &[String],
) -> (&'static str, Vec<u8>, Vec<u8>) {
    let root = format!("ArrayOf{}", R::NAME);
    match format {
        StreamFormat::Json(ct) => (ct, b"[".to_vec(), b"]".to_vec()),
        StreamFormat::Xml(ct) => (
            ct,
            format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><{root}>").into_bytes(),
            format!("</{root}>").into_bytes(),
        ),
        StreamFormat::Csv => (
            "text/csv; charset=utf-8",
            csv_line(columns).unwrap_or_default(),
            Vec::new(),
        ),
    }
}
