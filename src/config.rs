//! Command line and environment configuration. Every flag has a `SAFETRACK_*`
//! environment fallback; `safetrack serve --help` lists them, the README's table too.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::domain::ids::TenantCode;

/// The first administrator's login when `--admin-email` is not given.
pub const DEFAULT_ADMIN_EMAIL: &str = "admin@safetrack.local";

#[derive(Debug, Parser)]
#[command(
    name = "safetrack",
    version,
    about = "Multi-tenant safety and tracking platform"
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `safetrack` with no subcommand is `safetrack serve`.
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (the default).
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit.
    Migrate(DatabaseArgs),
    /// Manage users from the command line.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Print the OpenAPI document.
    Openapi,
    /// Copy the SQLite database while the server runs (PostgreSQL: `pg_dump`, see the
    /// README).
    Backup(BackupArgs),
    /// Install a backup as the SQLite database of an empty data dir.
    Restore(RestoreArgs),
}

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// The file to write; it must not exist. It appears only once complete.
    #[arg(long)]
    pub to: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file (`safetrack backup --to`).
    #[arg(long)]
    pub from: PathBuf,
    /// The data dir to install it in; it must hold no database yet.
    #[arg(long, env = "SAFETRACK_DATA_DIR")]
    pub data_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a user in an existing tenant.
    Create(AdminCreateArgs),
    /// Set a user's password, offline (the operator who cannot log in any more). On
    /// SQLite, stop the server first.
    SetPassword(AdminSetPasswordArgs),
    /// End a user's lockout after failed logins, for every client address, offline.
    Unlock(AdminUserArgs),
}

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Directory of the embedded SQLite database (`safetrack.db`).
    #[arg(long, env = "SAFETRACK_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Database URL (`sqlite://…` or `postgres://…`); overrides --data-dir.
    #[arg(long, env = "SAFETRACK_DATABASE_URL")]
    pub database_url: Option<String>,
}

impl DatabaseArgs {
    /// The URL to connect to: the explicit one, or the SQLite file in the data dir.
    pub fn url(&self) -> anyhow::Result<String> {
        if let Some(url) = &self.database_url {
            return Ok(url.clone());
        }
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            anyhow::anyhow!("cannot create data dir {}: {e}", self.data_dir.display())
        })?;
        let file = self.data_dir.join("safetrack.db");
        Ok(format!("sqlite://{}?mode=rwc", file.display()))
    }

    /// The SQLite file these arguments name (nothing is created). A PostgreSQL URL is
    /// refused: its backups are `pg_dump`'s.
    pub fn sqlite_file(&self) -> anyhow::Result<PathBuf> {
        let Some(url) = &self.database_url else {
            return Ok(self.data_dir.join("safetrack.db"));
        };
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            anyhow::bail!(
                "safetrack backup copies SQLite databases; back up PostgreSQL with pg_dump (README, Backups)"
            );
        }
        let Some(path) = url.strip_prefix("sqlite:") else {
            anyhow::bail!("unsupported database URL: safetrack backup reads sqlite://…");
        };
        let path = path.trim_start_matches("//");
        let path = path.split('?').next().unwrap_or_default();
        if path.is_empty() {
            anyhow::bail!("the database URL names no file");
        }
        Ok(PathBuf::from(path))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on. With port 0 the system picks a free port, and the bound address
    /// is printed on stdout as `safetrack listening on <address>`.
    #[arg(long, env = "SAFETRACK_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Serve HTTPS directly on --listen (HTTP/1.1 only over TLS, no plain HTTP there):
    /// the certificate in this PEM file, then any intermediates. Needs --tls-key. Read
    /// once at start-up (restart to load a renewed certificate). Without both, plain
    /// HTTP, e.g. behind a TLS-terminating proxy (see --trusted-proxy).
    #[arg(long, env = "SAFETRACK_TLS_CERT", value_name = "PEM_FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert's certificate (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC).
    #[arg(long, env = "SAFETRACK_TLS_KEY", value_name = "PEM_FILE")]
    pub tls_key: Option<PathBuf>,
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Login of the first administrator, created only when the database has no user
    /// (given later, it is ignored with a warning).
    #[arg(
        long,
        env = "SAFETRACK_ADMIN_EMAIL",
        default_value = DEFAULT_ADMIN_EMAIL
    )]
    pub admin_email: String,
    /// Password of the first administrator; generated and printed once when unset. Used
    /// only on the first start (given later, it is ignored with a warning; see `safetrack
    /// admin set-password`).
    #[arg(long, env = "SAFETRACK_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: Option<String>,
    /// Largest request body in bytes (user bodies allow 4 MiB for the photo).
    #[arg(long, env = "SAFETRACK_MAX_BODY_BYTES", default_value_t = 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Failed logins within the window that lock an account.
    #[arg(long, env = "SAFETRACK_LOCKOUT_THRESHOLD", default_value_t = 5)]
    pub lockout_threshold: u32,
    /// Window for counting failed logins, in minutes.
    #[arg(long, env = "SAFETRACK_LOCKOUT_WINDOW_MINUTES", default_value_t = 15)]
    pub lockout_window_minutes: i64,
    /// How long a lockout lasts, in minutes.
    #[arg(long, env = "SAFETRACK_LOCKOUT_MINUTES", default_value_t = 15)]
    pub lockout_minutes: i64,
    /// How long verified credentials are cached, in seconds (0 disables the cache).
    #[arg(long, env = "SAFETRACK_CREDENTIAL_CACHE_SECONDS", default_value_t = 60)]
    pub credential_cache_seconds: u64,
    /// Requests per second each client address may make to /V2 (0: no limit).
    #[arg(long, env = "SAFETRACK_RATE_LIMIT_PER_SECOND", default_value_t = 0)]
    pub rate_limit_per_second: u32,
    /// Requests a client may make at once above the sustained rate.
    #[arg(long, env = "SAFETRACK_RATE_LIMIT_BURST", default_value_t = 100)]
    pub rate_limit_burst: u32,
    /// Allow webhook URLs on loopback, private, link-local or unspecified addresses
    /// (and `localhost`). Off by default: webhooks must not reach the server's own network.
    #[arg(long, env = "SAFETRACK_ALLOW_PRIVATE_WEBHOOKS")]
    pub allow_private_webhooks: bool,
    /// A reverse proxy whose `X-Forwarded-For` header names the client (repeat the flag,
    /// or comma-separate in the env var). Without it the TCP peer is the client: lockout
    /// and rate limits key on that address.
    #[arg(
        long = "trusted-proxy",
        env = "SAFETRACK_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// An open Warning or High alert that nobody acknowledged this long after it was
    /// raised notifies the tenant's escalation contacts, and again every as long
    /// (0: no escalation).
    #[arg(
        long,
        env = "SAFETRACK_ESCALATION_AFTER_SECONDS",
        default_value_t = 300
    )]
    pub escalation_after_seconds: u64,
    /// Escalation rounds in all.
    #[arg(long, env = "SAFETRACK_ESCALATION_REPEATS", default_value_t = 3)]
    pub escalation_repeats: u32,
    /// SMTP server for e-mail deliveries: `smtp://host:port` (plain),
    /// `smtp://host:587?tls=required` (STARTTLS), `smtps://user:password@host` (TLS).
    /// Without it e-mail deliveries are recorded `NotConfigured`.
    #[arg(long, env = "SAFETRACK_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Sender of e-mail deliveries.
    #[arg(
        long,
        env = "SAFETRACK_SMTP_FROM",
        default_value = "safetrack <alerts@safetrack.local>"
    )]
    pub smtp_from: String,
    /// Twilio account SID for SMS and voice deliveries (with --twilio-auth-token and
    /// --twilio-from; without them SMS and voice are recorded `NotConfigured`).
    #[arg(long, env = "SAFETRACK_TWILIO_ACCOUNT_SID")]
    pub twilio_account_sid: Option<String>,
    /// Twilio auth token.
    #[arg(long, env = "SAFETRACK_TWILIO_AUTH_TOKEN", hide_env_values = true)]
    pub twilio_auth_token: Option<String>,
    /// The number SMS and calls come from (E.164).
    #[arg(long, env = "SAFETRACK_TWILIO_FROM")]
    pub twilio_from: Option<String>,
    /// Base URL of the Twilio REST API (or of a provider that imitates it).
    #[arg(
        long,
        env = "SAFETRACK_TWILIO_BASE_URL",
        default_value = "https://api.twilio.com"
    )]
    pub twilio_base_url: String,
    /// Wait after a delivery's first failed attempt; attempt n waits this × 4^(n−1),
    /// ±20 %, at most 10 hours.
    #[arg(long, env = "SAFETRACK_RETRY_INITIAL_SECONDS", default_value_t = 5.0)]
    pub retry_initial_seconds: f64,
    /// A delivery still failing this many hours after it was queued is `Expired`.
    #[arg(long, env = "SAFETRACK_RETRY_MAX_HOURS", default_value_t = 24.0)]
    pub retry_max_hours: f64,
    /// How long a claimed delivery stays with the process that claimed it; a process
    /// that dies leaves its claims to others after this.
    #[arg(long, env = "SAFETRACK_DELIVERY_LEASE_SECONDS", default_value_t = 120)]
    pub delivery_lease_seconds: u64,
    /// Delivery worker loops in this process, plus one that sends only what a matched
    /// notification sends (e-mail, SMS, voice, MT and its EventNotification webhooks) so
    /// a webhook backlog never delays them (0: this process only accepts and queues;
    /// other processes on the same PostgreSQL send).
    #[arg(long, env = "SAFETRACK_DELIVERY_WORKERS", default_value_t = 2)]
    pub delivery_workers: usize,
    /// Deliveries a worker loop claims and attempts at once per step: each step is two
    /// write transactions (claim, settle), so on SQLite, where they queue with ingest on
    /// the one writer, a larger step leaves ingest more of it.
    #[arg(long, env = "SAFETRACK_DELIVERY_BATCH", default_value_t = 32,
        value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub delivery_batch: u16,
    /// Webhook attempts to one URL still running after 2 s, in this process, from which on
    /// no more of its deliveries are claimed until some end (a hanging receiver cannot
    /// take every claim; a receiver that answers in time is never held to it).
    #[arg(long, env = "SAFETRACK_WEBHOOK_SLOW_ATTEMPTS_PER_URL", default_value_t = 8,
        value_parser = clap::value_parser!(u16).range(1..))]
    pub webhook_slow_attempts_per_url: u16,
    /// Password verifications (Argon2) running at once, across Basic logins and sessions
    /// (0: one per core). Past it a login is answered 429 with `Retry-After` at once,
    /// never queued, so a burst of guesses cannot take the memory or the cores.
    #[arg(
        long,
        env = "SAFETRACK_MAX_CONCURRENT_PASSWORD_CHECKS",
        default_value_t = 0
    )]
    pub max_concurrent_password_checks: usize,
    /// A browser session unused this many seconds ends (`POST /auth/session`).
    #[arg(long, env = "SAFETRACK_SESSION_IDLE_SECONDS", default_value_t = 1800,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub session_idle_seconds: u64,
    /// A browser session ends this many hours after it was opened, used or not
    /// (fractions allowed: 0.5 is 30 minutes).
    #[arg(long, env = "SAFETRACK_SESSION_MAX_HOURS", default_value_t = 12.0,
        value_parser = session_hours)]
    pub session_max_hours: f64,
    /// A connection must send a request's headers within this many seconds of opening
    /// (or of its previous response), else it is closed.
    #[arg(
        long,
        env = "SAFETRACK_HEADER_READ_TIMEOUT_SECONDS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub header_read_timeout_seconds: u64,
    /// An idle keep-alive connection (no request in flight) is closed after this many
    /// seconds. Server-Sent Event streams are in flight, never idle.
    #[arg(
        long,
        env = "SAFETRACK_IDLE_TIMEOUT_SECONDS",
        default_value_t = 60,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub idle_timeout_seconds: u64,
    /// A request's whole body must arrive within this many seconds of its headers, else
    /// it is answered 408 and its connection closed (one deadline for the whole body, not
    /// per read: a trickle cannot stretch it). Requests without a body, such as event
    /// streams, have none.
    #[arg(
        long,
        env = "SAFETRACK_BODY_READ_TIMEOUT_SECONDS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub body_read_timeout_seconds: u64,
    /// Connections served at once; further ones wait in the listen backlog (0: sized from
    /// the file-descriptor limit, leaving room for the database and outbound channels).
    #[arg(long, env = "SAFETRACK_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,
    /// Serve `/metrics` on this address of its own instead of the API's listener.
    #[arg(long, env = "SAFETRACK_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Require `Authorization: Bearer <this>` on `/metrics`.
    #[arg(long, env = "SAFETRACK_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Days an audit log entry is kept; older ones are pruned by a background worker.
    #[arg(
        long,
        env = "SAFETRACK_AUDIT_RETENTION_DAYS",
        default_value_t = 365,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub audit_retention_days: u32,
    /// Days an MO message is kept where its tenant (or an ancestor) sets no
    /// `MessageRetentionDays` property; without it, kept for ever.
    #[arg(
        long,
        env = "SAFETRACK_MESSAGE_RETENTION_DAYS",
        value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::domain::retention::MAX_DAYS))
    )]
    pub message_retention_days: Option<u32>,
    /// Listen for Iridium SBD DirectIP MO messages (TCP) on this address; off without it.
    /// Needs --directip-token.
    #[arg(long, env = "SAFETRACK_DIRECTIP_LISTEN", requires = "directip_token")]
    pub directip_listen: Option<SocketAddr>,
    /// The API token the DirectIP listener stores messages with: its tenant's subtree is
    /// where devices are looked up.
    #[arg(long, env = "SAFETRACK_DIRECTIP_TOKEN", hide_env_values = true)]
    pub directip_token: Option<String>,
    /// DirectIP connections served at once; further ones wait in the listen backlog.
    #[arg(long, env = "SAFETRACK_DIRECTIP_MAX_CONNECTIONS", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub directip_max_connections: u16,
    /// A DirectIP connection must deliver its whole message within this many seconds.
    #[arg(long, env = "SAFETRACK_DIRECTIP_READ_TIMEOUT_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub directip_read_timeout_seconds: u64,
    /// A DirectIP connection that sends nothing within this many seconds is closed; until
    /// its first byte it holds none of the --directip-max-connections slots.
    #[arg(long, env = "SAFETRACK_DIRECTIP_FIRST_BYTE_TIMEOUT_SECONDS", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub directip_first_byte_timeout_seconds: u64,
    /// Source addresses or CIDR networks DirectIP connections are taken from (repeat the
    /// flag, or comma-separate; Iridium's gateways send from known ranges); others are
    /// closed at once, unread. Without it every source is served.
    #[arg(
        long = "directip-allow",
        env = "SAFETRACK_DIRECTIP_ALLOW",
        value_delimiter = ','
    )]
    pub directip_allow: Vec<crate::listeners::allowed_source::AllowedSource>,
    /// Base URL of Garmin's IPC Inbound API: the tenant's "Inbound URL" (Portal Connect,
    /// Inbound Settings) with `/api/`, e.g. `https://ipcinbound.inreachapp.com/api/`. MT
    /// messages for devices with an `IridiumImei` and `DeviceType` starting with `InReach`
    /// are sent there. Without it they stay queued.
    #[arg(long, env = "SAFETRACK_GARMIN_INBOUND_URL")]
    pub garmin_inbound_url: Option<String>,
    /// Garmin IPC Inbound API key (Portal Connect, Inbound Settings, Generate API Key),
    /// sent as `X-API-Key`.
    #[arg(long, env = "SAFETRACK_GARMIN_INBOUND_TOKEN", hide_env_values = true)]
    pub garmin_inbound_token: Option<String>,
    /// The sender of MT texts to inReach devices that name none (`Parameters.Sender`): an
    /// email address or phone number (Garmin refuses any other). Without it such texts fail.
    #[arg(long, env = "SAFETRACK_GARMIN_INBOUND_SENDER")]
    pub garmin_inbound_sender: Option<String>,
    /// Web Push: the contact push services are given in the VAPID token's `sub` claim
    /// (`mailto:ops@example.com` or an https URL). Without it the token names none (some
    /// push services, Apple's among them, then refuse the pushes).
    #[arg(long, env = "SAFETRACK_PUSH_CONTACT")]
    pub push_contact: Option<String>,
    /// A map tile URL template for the operator console (`https://…/{z}/{x}/{y}.png`);
    /// empty: the bundled world outline only, and the console asks nothing of any other
    /// server.
    #[arg(long, env = "SAFETRACK_MAP_TILE_URL", default_value = "")]
    pub map_tile_url: String,
    /// Log format.
    #[arg(long, env = "SAFETRACK_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Tests only: a monitoring session's minute lasts this many milliseconds, so the
    /// timers of a real process fire within seconds (docs/monitoring.md, "Timers").
    #[arg(long, hide = true, env = "SAFETRACK_MONITORING_MINUTE_MS",
        value_parser = clap::value_parser!(u16).range(1..=60_000))]
    pub monitoring_minute_ms: Option<u16>,
    #[command(flatten)]
    pub reports: ReportArgs,
}

#[derive(Debug, Clone, Args)]
pub struct AdminCreateArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Login e-mail of the new user.
    #[arg(long)]
    pub email: String,
    /// Password (at least 10 characters).
    #[arg(long, env = "SAFETRACK_NEW_USER_PASSWORD", hide_env_values = true)]
    pub password: String,
    /// Tenant code the user belongs to.
    #[arg(long, default_value = "1000")]
    pub tenant: TenantCode,
    /// Administrator, Manager, User or ReadOnly.
    #[arg(long, default_value = "Administrator")]
    pub role: String,
}

#[derive(Debug, Clone, Args)]
pub struct AdminSetPasswordArgs {
    #[command(flatten)]
    pub user: AdminUserArgs,
    /// The new password (at least 10 characters). The environment variable keeps it out
    /// of the shell's history and the process list.
    #[arg(long, env = "SAFETRACK_NEW_USER_PASSWORD", hide_env_values = true)]
    pub password: String,
}

#[derive(Debug, Clone, Args)]
pub struct AdminUserArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Login e-mail of the user.
    #[arg(long)]
    pub email: String,
}

/// A positive number of hours, at most a year.
fn session_hours(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(hours) if hours > 0.0 && hours <= 8760.0 => Ok(hours),
        _ => Err(format!(
            "'{text}' is not a number of hours above 0 and at most 8760"
        )),
    }
}

/// Report thresholds (docs/reports.md); `settings` reads them into `Thresholds`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A stop at least this long (minutes) ends a trip.
    #[arg(long, env = "SAFETRACK_REPORT_STOP_MINUTES", default_value_t = 5.0)]
    pub report_stop_minutes: f64,
    /// Slower than this (km/h, between consecutive positions) counts as stopped.
    #[arg(long, env = "SAFETRACK_REPORT_STOP_SPEED_KMH", default_value_t = 3.0)]
    pub report_stop_speed_kmh: f64,
    /// Speed limit (km/h) of devices without a `SpeedLimitKmh` tag.
    #[arg(
        long,
        env = "SAFETRACK_REPORT_SPEED_LIMIT_KMH",
        default_value_t = 100.0
    )]
    pub report_speed_limit_kmh: f64,
    /// Harsh acceleration above this (m/s²).
    #[arg(long, env = "SAFETRACK_REPORT_ACCELERATION_MS2", default_value_t = 3.0)]
    pub report_acceleration_ms2: f64,
    /// Harsh braking above this deceleration (m/s²).
    #[arg(long, env = "SAFETRACK_REPORT_BRAKING_MS2", default_value_t = 3.0)]
    pub report_braking_ms2: f64,
    /// Harsh turning above this lateral acceleration (m/s²).
    #[arg(long, env = "SAFETRACK_REPORT_TURNING_MS2", default_value_t = 4.0)]
    pub report_turning_ms2: f64,
    /// Score points per Speeding violation per 100 km.
    #[arg(long, env = "SAFETRACK_REPORT_WEIGHT_SPEEDING", default_value_t = 5.0)]
    pub report_weight_speeding: f64,
    /// Score points per Acceleration violation per 100 km.
    #[arg(
        long,
        env = "SAFETRACK_REPORT_WEIGHT_ACCELERATION",
        default_value_t = 2.0
    )]
    pub report_weight_acceleration: f64,
    /// Score points per Braking violation per 100 km.
    #[arg(long, env = "SAFETRACK_REPORT_WEIGHT_BRAKING", default_value_t = 3.0)]
    pub report_weight_braking: f64,
    /// Score points per Turning violation per 100 km.
    #[arg(long, env = "SAFETRACK_REPORT_WEIGHT_TURNING", default_value_t = 2.0)]
    pub report_weight_turning: f64,
}
