//! RFC 6902 JSON Patch applied to a record's JSON (docs/api.md, "HTTP"): touching a read-only
//! field is a 400, and the patched document must still be a valid record.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::negotiate::parse_json;
use crate::domain::record::ServerFields;

/// Applies `patch` to `current` and returns the patched record (not yet validated
/// against the record's own rules; the caller does that as for a PUT).
pub fn apply_patch<T: Serialize + DeserializeOwned + ServerFields>(
    current: &T,
    patch: &json_patch::Patch,
) -> Result<T, ApiError> {
    let read_only = T::READ_ONLY_FIELDS;
    let ops = serde_json::to_value(patch).map_err(|e| ApiError::Internal(e.into()))?;
    for (index, op) in ops.as_array().into_iter().flatten().enumerate() {
        if op.get("op").and_then(|v| v.as_str()) == Some("test") {
            continue;
        }
        for pointer in ["path", "from"] {
            if let Some(path) = op.get(pointer).and_then(|v| v.as_str()) {
                let root = path
                    .trim_start_matches('/')
                    .split('/')
                    .next()
                    .unwrap_or_default();
                let is_move_source =
                    pointer == "from" && op.get("op").and_then(|v| v.as_str()) == Some("copy");
                if !is_move_source && read_only.iter().any(|f| f.eq_ignore_ascii_case(root)) {
                    return Err(ApiError::field(
                        format!("[{index}].{pointer}"),
                        format!("'{path}' is read-only and cannot be patched"),
                    ));
                }
            }
        }
    }
    let mut document = serde_json::to_value(current).map_err(|e| ApiError::Internal(e.into()))?;
    json_patch::patch(&mut document, patch).map_err(|e| {
        ApiError::bad_request("patch_failed", format!("the patch cannot be applied: {e}"))
    })?;
    let bytes = serde_json::to_vec(&document).map_err(|e| ApiError::Internal(e.into()))?;
    parse_json(&bytes)
}
