//! What the test binaries share (`tests/api/`, `tests/browser/`), each naming it with
//! `#[path = "../harness/mod.rs"] mod harness;` (a folder without a `main.rs`, so cargo
//! makes no binary of it): a fresh database per test (`database`), the real binary
//! started on it (`binary`), the console's npm packages (`console`). What only one
//! binary uses stays in that binary.

pub mod binary;
pub mod console;
pub mod database;
