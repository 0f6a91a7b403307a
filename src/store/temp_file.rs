//! A fresh SQLite file for store unit tests, removed (with its WAL) on drop.

pub(super) struct TempSqliteFile {
    path: std::path::PathBuf,
}

impl TempSqliteFile {
    pub(super) fn new(prefix: &str) -> Self {
        let name = format!("{prefix}-{}.db", uuid::Uuid::new_v4().simple());
        Self {
            path: std::env::temp_dir().join(name),
        }
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The URL that opens (and creates) it.
    pub(super) fn url(&self) -> String {
        format!("sqlite://{}?mode=rwc", self.path.display())
    }
}

impl Drop for TempSqliteFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut file = self.path.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
}
