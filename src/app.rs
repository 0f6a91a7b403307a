//! Wiring: open the store, bootstrap the root tenant and first administrator, build the
//! application state and serve with graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::auth::{AuthConfig, Authenticator, hash_password};
use crate::channels::{Channels, ChannelsConfig};
use crate::domain::access::Role;
use crate::domain::ids::{TenantCode, UserId};
use crate::domain::tenant::{TenantFields, root_tenant_code};
use crate::domain::user::User;
use crate::http::metrics::MetricsConfig;
use crate::http::paging::TokenSigner;
use crate::http::rate_limit::RateLimit;
use crate::http::records::user::UserRecord;
use crate::http::{self, AppState, BodyLimits};
use crate::server::ServeConfig;
use crate::services::ingest::{Pipeline, PipelineConfig};
use crate::services::stream::EventHub;
use crate::store::{NewUser, Store, StreamFeed};
use crate::workers::deliveries::DeliveryWorkerConfig;

mod running;

pub use running::{serve, serve_with_metrics};

/// How often SQLite's write-ahead log is copied into the database file (when anything
/// was written): short enough that the log stays a few megabytes under the heaviest
/// ingest, long enough that each copy is a large sequential one.
const LOG_CHECKPOINT_INTERVAL: Duration = Duration::from_millis(250);

/// Connects and applies migrations.
pub async fn open_store(url: &str) -> anyhow::Result<Store> {
    let store = Store::connect(url).await?;
    store.migrate().await?;
    Ok(store)
}

/// Credentials of an administrator created at bootstrap.
pub struct Bootstrapped {
    pub email: String,
    /// Set when the password was generated (and must be shown once).
    pub generated_password: Option<String>,
}

impl Bootstrapped {
    /// What the console shows once: the login, the generated password if any, and two
    /// ways to change it that work as written (`base`: where the server listens).
    pub fn announcement(&self, base: &str) -> String {
        let email = &self.email;
        let Some(password) = &self.generated_password else {
            return format!("Created administrator {email} in tenant 1000");
        };
        let patch = r#"[{"op":"replace","path":"/Password","value":"NEW-PASSWORD"}]"#;
        format!(
            "Created administrator {email} in tenant 1000 with password: {password} (shown once).\n\
             Change it with:\n  \
             curl -u '{email}:{password}' -X PATCH -H 'Content-Type: application/json-patch+json' \
             -d '{patch}' {base}/V2/1000/users/{email}\n\
             or, with the server stopped:\n  \
             safetrack admin set-password --email {email} --password NEW-PASSWORD"
        )
    }
}

/// Creates the root tenant `1000` if missing, and the first administrator when the
/// database has no user at all. Otherwise `--admin-email`/`--admin-password` (anything
/// but the defaults) have nothing to do, and a warning says so: the operator who relies
/// on them would otherwise only meet a 401.
pub async fn bootstrap(
    store: &Store,
    admin_email: &str,
    admin_password: Option<String>,
) -> anyhow::Result<Option<Bootstrapped>> {
    ensure_root_tenant(store).await?;
    if store.count_users().await? > 0 {
        let ignored = [
            (
                admin_password.is_some(),
                "--admin-password (SAFETRACK_ADMIN_PASSWORD)",
            ),
            (
                admin_email != crate::config::DEFAULT_ADMIN_EMAIL,
                "--admin-email (SAFETRACK_ADMIN_EMAIL)",
            ),
        ];
        for (_, flag) in ignored.iter().filter(|(given, _)| *given) {
            tracing::warn!(
                "{flag} ignored: the database already has users, and the first administrator \
                 is created only on the first start. To set a password: safetrack admin \
                 set-password --email <login> (server stopped), or PATCH /Password as an \
                 administrator"
            );
        }
        return Ok(None);
    }
    let (password, generated) = match admin_password {
        Some(p) => (p, false),
        None => (generate_password(), true),
    };
    create_user(
        store,
        &root_tenant_code(),
        admin_email,
        &password,
        Role::Administrator.as_str(),
    )
    .await?;
    Ok(Some(Bootstrapped {
        email: admin_email.to_string(),
        generated_password: generated.then_some(password),
    }))
}

/// Creates the root tenant `1000` if it does not exist yet.
pub async fn ensure_root_tenant(store: &Store) -> anyhow::Result<()> {
    let root = TenantFields {
        description: "Root".into(),
        ..Default::default()
    };
    store.ensure_root_tenant(&root_tenant_code(), &root).await?;
    Ok(())
}

/// Creates a user from the command line, with the same validation as the API.
pub async fn create_user(
    store: &Store,
    tenant: &TenantCode,
    email: &str,
    password: &str,
    role: &str,
) -> anyhow::Result<UserId> {
    let user = UserRecord {
        username: Some(email.to_string()),
        password: Some(password.to_string()),
        user_role_id: Some(role.to_string()),
        is_approved: true,
        is_portal_enabled: true,
        ..Default::default()
    };
    let mut user = user.validated(true).map_err(|e| {
        anyhow::anyhow!(
            "invalid user: {}",
            e.0.iter()
                .map(|f| format!("{} {}", f.field, f.message))
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    let Some(node) = store.tenant_node(tenant).await? else {
        anyhow::bail!("tenant {tenant} does not exist");
    };
    user.password = None;
    let password_hash = hash_password(password.to_string()).await?;
    let id = store
        .create_user(
            NewUser {
                tenant_code: node.code,
                user,
                password_hash,
            },
            None,
        )
        .await?;
    Ok(id)
}

/// Sets a user's password from the command line, with the API's password policy.
pub async fn set_password(store: &Store, email: &str, password: &str) -> anyhow::Result<()> {
    if let Err(message) = crate::domain::password::check_policy(password) {
        anyhow::bail!("invalid password: Password {message}");
    }
    let hash = hash_password(password.to_string()).await?;
    if !store
        .set_password_hash(&User::username_key(email), &hash)
        .await?
    {
        anyhow::bail!("no user {email}");
    }
    Ok(())
}

/// Ends a user's lockout from the command line.
pub async fn unlock_user(store: &Store, email: &str) -> anyhow::Result<()> {
    if !store.unlock_user(&User::username_key(email)).await? {
        anyhow::bail!("no user {email}");
    }
    Ok(())
}

fn generate_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut rng = rand::thread_rng();
    (0..20)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Runtime settings of the HTTP application (from `serve`'s flags: `settings::from_args`).
#[derive(Debug, Clone)]
pub struct AppConfig {
    pub limits: BodyLimits,
    pub auth: AuthConfig,
    pub rate_limit: RateLimit,
    /// Proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Escalation (the channel flags in it are derived from `channels`).
    pub pipeline: PipelineConfig,
    /// SMTP, Twilio and webhook delivery (`--smtp-url`, `--twilio-*`), and whether
    /// webhook URLs may name private addresses (`--allow-private-webhooks`).
    pub channels: ChannelsConfig,
    /// Retry policy, lease and pace of the delivery worker.
    pub delivery: DeliveryWorkerConfig,
    /// How often idle workers look for due work (the check-in scheduler at least every
    /// 5 seconds, as promised).
    pub worker_interval: Duration,
    /// Report thresholds (`--report-*`).
    pub reports: crate::domain::report::Thresholds,
    /// Connection timeouts and cap (`--header-read-timeout-seconds`, …).
    pub serving: ServeConfig,
    /// HTTPS served directly on the API's listener (`--tls-cert`, `--tls-key`); plain
    /// HTTP without.
    pub tls: Option<crate::server::Tls>,
    /// Where `/metrics` is served and its token (`--metrics-listen`, `--metrics-token`).
    pub metrics: MetricsConfig,
    /// How long audit log entries are kept (`--audit-retention-days`).
    pub audit_retention: Duration,
    /// How long MO messages are kept when their tenants do not say
    /// (`--message-retention-days`), and how often the pruner looks.
    pub message_retention: crate::workers::message_retention::MessageRetentionConfig,
    /// The Iridium DirectIP listener (`--directip-*`); none by default.
    pub directip: Option<crate::listeners::directip_listener::DirectIpConfig>,
    /// The operator console's tile server (`--map-tile-url`).
    pub console: http::console::ConsoleConfig,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            limits: BodyLimits::default(),
            auth: AuthConfig::default(),
            rate_limit: RateLimit::default(),
            trusted_proxies: Vec::new(),
            pipeline: PipelineConfig::default(),
            channels: ChannelsConfig::default(),
            delivery: DeliveryWorkerConfig::default(),
            worker_interval: Duration::from_secs(1),
            reports: crate::domain::report::Thresholds::default(),
            serving: ServeConfig::default(),
            tls: None,
            metrics: MetricsConfig::default(),
            audit_retention: Duration::from_secs(365 * 86_400),
            message_retention: Default::default(),
            directip: None,
            console: http::console::ConsoleConfig::default(),
        }
    }
}

/// The HTTP application, the background workers that run beside it, and the live
/// event hub `serve` closes when shutdown begins (open streams would otherwise hold
/// graceful shutdown up for ever).
pub struct App {
    pub router: axum::Router,
    /// `/metrics` when it has a listener of its own (`serve_with_metrics`).
    pub metrics_router: Option<axum::Router>,
    serving: ServeConfig,
    tls: Option<crate::server::Tls>,
    pub hub: Arc<EventHub>,
    store: Store,
    pipeline: Arc<Pipeline>,
    pipeline_config: PipelineConfig,
    worker_interval: Duration,
    audit_retention: Duration,
    message_retention: crate::workers::message_retention::MessageRetentionConfig,
    channels: Arc<Channels>,
    delivery: DeliveryWorkerConfig,
    /// The stream announcements this process hears (every process's on PostgreSQL),
    /// listened to from here on; taken by the relay.
    stream_feed: Option<StreamFeed>,
    /// The DirectIP listener, bound, with its settings.
    directip: Option<(
        TcpListener,
        crate::listeners::directip_listener::DirectIpConfig,
    )>,
    auth: Arc<Authenticator>,
}

impl App {
    /// The address the DirectIP listener is bound to (its port when `--directip-listen`
    /// asked for port 0).
    pub fn directip_addr(&self) -> Option<std::net::SocketAddr> {
        self.directip
            .as_ref()
            .and_then(|(listener, _)| listener.local_addr().ok())
    }
}

pub async fn build_app(store: Store, mut config: AppConfig) -> anyhow::Result<App> {
    // The offline places' index (~0.1 s to build) is ready before the first alert needs it.
    std::thread::spawn(crate::domain::place::warm);
    let store = store.with_monitoring_minute(config.pipeline.monitoring_minute);
    let secret = store.server_secret().await?;
    // Generated at first start (Web Push); the handlers and the Push channel read it.
    let vapid = Arc::new(store.vapid_key().await?);
    let hub = Arc::new(EventHub::default());
    let channels = Arc::new(Channels::new(&config.channels, vapid)?);
    // A delivery on a channel this server cannot use is recorded NotConfigured at once.
    config.pipeline.email = config.channels.email();
    config.pipeline.sms = config.channels.phone();
    config.pipeline.voice = config.channels.phone();
    let pipeline = Pipeline::new(store.clone(), hub.clone(), config.pipeline);
    let auth = Arc::new(Authenticator::new(store.clone(), config.auth, &secret));
    let directip = match config.directip {
        Some(directip) => Some((crate::server::bind(directip.listen)?, directip)),
        None => None,
    };
    let state = AppState {
        pipeline: pipeline.clone(),
        auth: auth.clone(),
        paging: Arc::new(TokenSigner::new(&secret)),
        allow_private_webhooks: config.channels.allow_private_webhooks,
        store: store.clone(),
        reports: crate::services::reports::ReportService::new(store.clone(), config.reports),
    };
    let trusted = http::client_address::TrustedProxies(Arc::new(config.trusted_proxies));
    // Listening before the server answers: nothing committed after start-up is missed.
    let stream_feed = Some(store.stream_feed().await?);
    crate::services::stream::load_recent(&store, &hub).await?;
    let routers = http::router(
        state,
        config.limits,
        config.rate_limit,
        trusted,
        &config.metrics,
        config.console.clone(),
    );
    Ok(App {
        router: routers.api,
        metrics_router: routers.metrics,
        serving: config.serving,
        tls: config.tls,
        hub,
        store,
        pipeline,
        pipeline_config: config.pipeline,
        worker_interval: config.worker_interval,
        audit_retention: config.audit_retention,
        message_retention: config.message_retention,
        channels,
        delivery: config.delivery,
        stream_feed,
        directip,
        auth,
    })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
