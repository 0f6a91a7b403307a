//! The wire record: see `mod.rs`.
