//! CSV rendering of list responses: one row per record, one column per top-level field
//! (in order of first appearance); nested values are written as JSON text. Text that a
//! spreadsheet would run as a formula is written as text (`text_cell`).

use serde_json::Value;

/// A text cell as written to CSV: one starting with `=`, `+`, `-`, `@`, tab or carriage
/// return gets a leading `'`, so spreadsheets show it rather than evaluate it (OWASP's
/// CSV injection rule) — unless the whole cell is a plain number (`-0.12`, `+44`), which
/// no spreadsheet runs and which a tracking report's users expect to stay a number.
pub fn text_cell(text: &str) -> String {
    let risky = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && !is_plain_number(text) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

/// An optional sign, then digits with at most a decimal point and an exponent.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && unsigned.parse::<f64>().is_ok()
}

/// One cell: null as empty, text through `text_cell`, anything else as its JSON.
pub fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => text_cell(s),
        Some(other) => other.to_string(),
    }
}

pub fn to_csv(value: &Value) -> anyhow::Result<String> {
    let empty = Vec::new();
    let rows = value.as_array().unwrap_or(&empty);
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        if let Value::Object(fields) = row {
            for key in fields.keys() {
                if !columns.contains(key) {
                    columns.push(key.clone());
                }
            }
        }
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&columns)?;
    for row in rows {
        let record: Vec<String> = columns.iter().map(|c| cell(row.get(c))).collect();
        writer.write_record(&record)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formula_cells_become_text() {
        for (given, written) in [
            ("=1+2", "'=1+2"),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-", "'-"),
            ("+", "'+"),
            ("-inf", "'-inf"),
            ("-NaN", "'-NaN"),
            ("-1e5x", "'-1e5x"),
            ("-0x10", "'-0x10"),
            // Plain numbers stay numbers.
            ("-0.12", "-0.12"),
            ("+44", "+44"),
            ("-1e-5", "-1e-5"),
            ("-.5", "-.5"),
            // Anything else as it is.
            ("Van 3 = blue", "Van 3 = blue"),
            ("", ""),
            ("'=already", "'=already"),
        ] {
            assert_eq!(text_cell(given), written, "{given:?}");
        }
    }

    #[test]
    fn numbers_and_nested_values_are_not_prefixed() {
        assert_eq!(cell(Some(&json!(-0.12))), "-0.12");
        assert_eq!(cell(Some(&json!(-3))), "-3");
        assert_eq!(cell(Some(&json!(null))), "");
        assert_eq!(cell(Some(&json!(["=x"]))), "[\"=x\"]");
        let csv = to_csv(&json!([{"A": "=1+2", "B": -1, "C": "-1"}])).unwrap();
        assert_eq!(csv, "A,B,C\n'=1+2,-1,-1\n");
    }
}
