//! The operator console's folder and its npm packages, for the front end's own checks
//! (`tests/api/console.rs`, `tests/api/openapi.rs`) and the browser suites
//! (`tests/browser/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn console_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("console")
}

/// The console's npm packages (build.rs installed them with the build; again if removed).
pub fn npm_installed() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if !console_dir()
            .join("node_modules/.package-lock.json")
            .exists()
        {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(console_dir())
                .status()
                .expect("npm ci");
            assert!(status.success(), "npm ci failed");
        }
    });
}
