use std::net::SocketAddr;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use safetrack::app;
use safetrack::config::{AdminCommand, Cli, Command, LogFormat, ServeArgs};

/// Sustained ingest makes many small JSON and row allocations across threads, on which
/// glibc's malloc spends a large share of the CPU and mimalloc far less.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None => serve(cli.serve).await,
        Some(Command::Serve(args)) => serve(*args).await,
        Some(Command::Migrate(db)) => {
            init_logging(LogFormat::Text);
            app::open_store(&db.url()?).await?;
            print_stdout("migrations applied")
        }
        Some(Command::Admin(AdminCommand::Create(args))) => {
            init_logging(LogFormat::Text);
            let store = app::open_store(&args.database.url()?).await?;
            // The user created here may be the first one: no default admin besides it.
            app::ensure_root_tenant(&store).await?;
            let id = app::create_user(
                &store,
                &args.tenant,
                &args.email,
                &args.password,
                &args.role,
            )
            .await?;
            print_stdout(&format!(
                "created user {id} ({}) in tenant {}",
                args.email, args.tenant
            ))
        }
        Some(Command::Admin(AdminCommand::SetPassword(args))) => {
            init_logging(LogFormat::Text);
            let store = app::open_store(&args.user.database.url()?).await?;
            app::set_password(&store, &args.user.email, &args.password).await?;
            print_stdout(&format!("password of {} set", args.user.email))
        }
        Some(Command::Admin(AdminCommand::Unlock(args))) => {
            init_logging(LogFormat::Text);
            let store = app::open_store(&args.database.url()?).await?;
            app::unlock_user(&store, &args.email).await?;
            print_stdout(&format!("{} unlocked", args.email))
        }
        Some(Command::Backup(args)) => {
            let source = args.database.sqlite_file()?;
            let copy = safetrack::store::backup::backup_sqlite(&source, &args.to).await?;
            print_stdout(&format!(
                "backup of {} written to {} ({} bytes, migration {})",
                source.display(),
                args.to.display(),
                copy.bytes,
                copy.migration
            ))
        }
        Some(Command::Restore(args)) => {
            let copy = safetrack::store::backup::restore_sqlite(&args.from, &args.data_dir).await?;
            print_stdout(&format!(
                "{} restored into {} ({} bytes, migration {}); start the server on it",
                args.from.display(),
                args.data_dir.join("safetrack.db").display(),
                copy.bytes,
                copy.migration
            ))
        }
        Some(Command::Openapi) => {
            print_stdout(&safetrack::http::openapi_document().to_pretty_json()?)
        }
    }
}

/// Writes a line to stdout. A reader that went away (`safetrack openapi | head`) ends the
/// command quietly, as other command-line tools do, instead of a panic.
fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => Ok(written?),
    }
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a terminal: log files and collectors get plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    raise_descriptor_limit();
    // Every contradiction between flags, and TLS files that cannot be served, are refused
    // before the database is opened.
    let settings = safetrack::settings::from_args(&args)?;
    let scheme = if settings.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let store = app::open_store(&args.database.url()?).await?;
    if let Some(created) =
        app::bootstrap(&store, &args.admin_email, args.admin_password.clone()).await?
    {
        // Printed once, to the console only: the one time the generated password is shown.
        print_stdout(&created.announcement(&format!("{scheme}://{}", args.listen)))?;
    }
    let app = app::build_app(store.clone(), settings).await?;
    if let Some(address) = app.directip_addr() {
        if args.directip_listen.is_some_and(|l| l.port() == 0) {
            println!("safetrack directip listening on {address}");
        }
        let allowed = args.directip_allow.iter().map(ToString::to_string);
        let allowed = allowed.collect::<Vec<_>>().join(",");
        tracing::info!(%address, allowed = %if allowed.is_empty() { "any" } else { &allowed }, "DirectIP listening");
    }
    // Before the API's address line: a caller that read that line can read this one.
    let metrics_listener = match args.metrics_listen {
        Some(listen) => Some(bind_announced(listen, "metrics")?),
        None => None,
    };
    let listener = bind_announced(args.listen, "")?;
    tracing::info!(backend = ?store.backend(), "safetrack serving");
    app::serve_with_metrics(listener, metrics_listener, app, app::shutdown_signal()).await?;
    store.close().await;
    Ok(())
}

/// Every connection is a descriptor: the soft limit (often 1,024) goes up to the hard
/// one before anything is opened, and the connection cap is sized from what we got.
fn raise_descriptor_limit() {
    match safetrack::server::raise_descriptor_limit() {
        Ok((before, after)) => tracing::info!(
            soft_before = before.soft,
            soft = after.soft,
            hard = after.hard,
            "file-descriptor limit"
        ),
        Err(e) => tracing::warn!(error = %e, "cannot raise the file-descriptor limit"),
    }
}

/// Binds `listen` for the listener named `what` ("" for the API's). When the system
/// picked the port, stdout is the only way the caller (a test harness, a supervisor)
/// learns it, and learning it from the bound socket has no race.
fn bind_announced(listen: SocketAddr, what: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let listener = safetrack::server::bind(listen)?;
    let address = listener.local_addr()?;
    let name = if what.is_empty() {
        String::new()
    } else {
        format!(" {what}")
    };
    if listen.port() == 0 {
        println!("safetrack{name} listening on {address}");
    }
    tracing::info!(%address, "safetrack{name} listening");
    Ok(listener)
}
