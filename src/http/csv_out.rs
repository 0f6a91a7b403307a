//! CSV rendering of list responses: one row per record, one column per top-level field
//! (in order of first appearance); nested values are written as JSON text.

use serde_json::Value;

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
        let record: Vec<String> = columns
            .iter()
            .map(|c| match row.get(c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            })
            .collect();
        writer.write_record(&record)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}
