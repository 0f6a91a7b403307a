//! Backups of the embedded SQLite database (DESIGN §15): `safetrack backup` and
//! `safetrack restore`, offline commands beside a running server.
//!
//! A copy is SQLite's `VACUUM INTO` on a read-only connection: one read transaction, so
//! the copy is the database at one moment while the server goes on writing (WAL readers
//! never block the writer). Both commands write beside the target under a dot-name and
//! rename only a complete, checked copy, so the target name never holds half a file —
//! not even after a `kill -9`.

use std::path::{Path, PathBuf};

use sqlx::{AnyConnection, Connection, Row};

use super::SQLITE_MIGRATIONS;

/// What a finished backup or restore says to the operator.
#[derive(Debug)]
pub struct CopySummary {
    pub bytes: u64,
    /// The newest migration the copy has applied.
    pub migration: i64,
}

/// Copies the SQLite database at `source` to `to` while it may be in use.
pub async fn backup_sqlite(source: &Path, to: &Path) -> anyhow::Result<CopySummary> {
    if !source.is_file() {
        anyhow::bail!("no SQLite database at {}", source.display());
    }
    refuse_existing(to, "the backup file")?;
    let mut conn = open_read_only(source).await?;
    // The source is the live database: its level is whatever this build or an older
    // one migrated it to, never checked against this build here (restore checks).
    migration_level(&mut conn, source).await?;
    let summary = copy_into(&mut conn, to).await;
    conn.close().await.ok();
    summary
}

/// Installs the backup `from` as the database of `data_dir` (`safetrack.db`), which must
/// not hold one yet: the file is checked whole and its migrations must be this build's.
pub async fn restore_sqlite(from: &Path, data_dir: &Path) -> anyhow::Result<CopySummary> {
    if !from.is_file() {
        anyhow::bail!("no backup file at {}", from.display());
    }
    let target = data_dir.join("safetrack.db");
    for suffix in ["", "-wal", "-shm"] {
        let mut file = target.clone().into_os_string();
        file.push(suffix);
        if Path::new(&file).exists() {
            anyhow::bail!(
                "{} already holds a database ({}): stop the server and move it away first; nothing was changed",
                data_dir.display(),
                Path::new(&file).display()
            );
        }
    }
    std::fs::create_dir_all(data_dir)
        .map_err(|e| anyhow::anyhow!("cannot create data dir {}: {e}", data_dir.display()))?;
    let mut conn = open_read_only(from).await?;
    let checked = check_backup(&mut conn, from).await;
    let summary = match checked {
        Ok(()) => copy_into(&mut conn, &target).await,
        Err(e) => Err(e),
    };
    conn.close().await.ok();
    summary
}

fn refuse_existing(path: &Path, what: &str) -> anyhow::Result<()> {
    if path.exists() {
        anyhow::bail!(
            "{what} {} already exists: choose another name; nothing was changed",
            path.display()
        );
    }
    Ok(())
}

async fn open_read_only(path: &Path) -> anyhow::Result<AnyConnection> {
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}?mode=ro", path.display());
    let mut conn = AnyConnection::connect(&url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
    sqlx::query("PRAGMA busy_timeout = 10000")
        .execute(&mut conn)
        .await?;
    Ok(conn)
}

/// The newest migration applied to the database `conn` reads; an error when it is not
/// SQLite at all or has no migrations table (not a safetrack database).
async fn migration_level(conn: &mut AnyConnection, path: &Path) -> anyhow::Result<i64> {
    let row = sqlx::query("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "{} is not a safetrack SQLite database (no migrations table: {e})",
                path.display()
            )
        })?;
    let level: Option<i64> = row.try_get(0)?;
    level.ok_or_else(|| anyhow::anyhow!("{} has no migrations applied", path.display()))
}

/// The whole file is sound, and every migration it applied is one of this build's, with
/// the same checksum (an older level is fine: the server migrates it on start).
async fn check_backup(conn: &mut AnyConnection, path: &Path) -> anyhow::Result<()> {
    let integrity = sqlx::query("PRAGMA integrity_check")
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| anyhow::anyhow!("{} is not a sound SQLite database: {e}", path.display()))?;
    let problems: Vec<String> = integrity
        .iter()
        .filter_map(|row| row.try_get::<String, _>(0).ok())
        .filter(|line| line != "ok")
        .collect();
    if !problems.is_empty() {
        anyhow::bail!(
            "{} failed SQLite's integrity check: {}",
            path.display(),
            problems.join("; ")
        );
    }
    let level = migration_level(conn, path).await?;
    let applied = sqlx::query("SELECT version, checksum FROM _sqlx_migrations WHERE success = 1")
        .fetch_all(&mut *conn)
        .await?;
    let known = SQLITE_MIGRATIONS
        .iter()
        .map(|m| m.version)
        .max()
        .unwrap_or(0);
    for row in applied {
        let version: i64 = row.try_get(0)?;
        let checksum: Vec<u8> = row.try_get(1)?;
        match SQLITE_MIGRATIONS.iter().find(|m| m.version == version) {
            None if version > known => anyhow::bail!(
                "{} was written by a newer safetrack (migration {level}; this build knows up to {known}): restore it with that release",
                path.display()
            ),
            None => anyhow::bail!(
                "{} applied migration {version}, which this build does not have",
                path.display()
            ),
            Some(ours) if *ours.checksum != checksum[..] => anyhow::bail!(
                "{}'s migration {version} differs from this build's: it was written by another build",
                path.display()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// `VACUUM INTO` a dot-name beside `target`, checked, synced and renamed into place;
/// the partial file is removed on any failure.
async fn copy_into(conn: &mut AnyConnection, target: &Path) -> anyhow::Result<CopySummary> {
    let partial = partial_name(target)?;
    let _ = std::fs::remove_file(&partial);
    let written = async {
        sqlx::query("VACUUM INTO ?")
            .bind(partial.display().to_string())
            .execute(&mut *conn)
            .await
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", partial.display()))?;
        let mut copy = open_read_only(&partial).await?;
        let migration = migration_level(&mut copy, &partial).await;
        copy.close().await.ok();
        let migration = migration?;
        std::fs::File::open(&partial)?.sync_all()?;
        refuse_existing(target, "the file")?;
        std::fs::rename(&partial, target)?;
        sync_parent(target)?;
        let bytes = std::fs::metadata(target)?.len();
        anyhow::Ok(CopySummary { bytes, migration })
    }
    .await;
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// `.NAME.partial-PID` in the target's directory (a rename within one file system).
fn partial_name(target: &Path) -> anyhow::Result<PathBuf> {
    let name = target
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{} names no file", target.display()))?;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!("the directory {} does not exist", dir.display());
    }
    let mut partial = std::ffi::OsString::from(".");
    partial.push(name);
    partial.push(format!(".partial-{}", std::process::id()));
    Ok(dir.join(partial))
}

/// The rename is durable only once the directory entry is.
fn sync_parent(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::File::open(dir)?.sync_all(),
        _ => std::fs::File::open(".")?.sync_all(),
    }
}
