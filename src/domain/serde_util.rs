//! Small serde helpers shared by records.

use serde::{Deserialize, Deserializer};

/// `null` (or absent, with `#[serde(default)]`) becomes the type's default, e.g. an empty map.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
