//! The one place `serve`'s flags (`config::ServeArgs`) become the runtime settings the
//! application takes (`app::AppConfig`): each setting is derived here once, and every
//! contradiction between flags is refused here, before anything is opened.

use std::time::Duration;

use crate::app::AppConfig;
use crate::auth::AuthConfig;
use crate::channels::ChannelsConfig;
use crate::config::{ReportArgs, ServeArgs};
use crate::domain::report::Thresholds;
use crate::http::BodyLimits;
use crate::http::metrics::{MetricsConfig, MetricsToken};
use crate::http::rate_limit::RateLimit;
use crate::listeners::directip_listener::DirectIpConfig;
use crate::server::{ServeConfig, Tls};
use crate::services::ingest::PipelineConfig;
use crate::workers::deliveries::DeliveryWorkerConfig;

/// What `serve`'s flags configure.
pub fn from_args(args: &ServeArgs) -> anyhow::Result<AppConfig> {
    Ok(AppConfig {
        limits: BodyLimits {
            default: args.max_body_bytes,
            ..BodyLimits::default()
        },
        auth: auth(args),
        rate_limit: RateLimit {
            per_second: args.rate_limit_per_second,
            burst: args.rate_limit_burst,
        },
        trusted_proxies: args.trusted_proxies.clone(),
        pipeline: pipeline(args),
        channels: channels(args)?,
        delivery: delivery(args)?,
        reports: report_thresholds(&args.reports),
        serving: ServeConfig {
            header_read_timeout: Duration::from_secs(args.header_read_timeout_seconds),
            idle_timeout: Duration::from_secs(args.idle_timeout_seconds),
            body_read_timeout: Duration::from_secs(args.body_read_timeout_seconds),
            max_connections: args.max_connections,
        },
        tls: tls(args)?,
        metrics: MetricsConfig {
            own_listener: args.metrics_listen.is_some(),
            token: args
                .metrics_token
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(MetricsToken::new),
        },
        audit_retention: Duration::from_secs(u64::from(args.audit_retention_days) * 86_400),
        message_retention: crate::workers::message_retention::MessageRetentionConfig {
            default_days: args
                .message_retention_days
                .and_then(crate::domain::retention::RetentionDays::new),
            ..Default::default()
        },
        directip: directip(args),
        console: crate::http::console::ConsoleConfig::new(Some(&args.map_tile_url))?,
        ..AppConfig::default()
    })
}

fn auth(args: &ServeArgs) -> AuthConfig {
    AuthConfig {
        lockout: crate::domain::lockout::LockoutPolicy {
            threshold: args.lockout_threshold.max(1),
            window: jiff::SignedDuration::from_mins(args.lockout_window_minutes.max(1)),
            duration: jiff::SignedDuration::from_mins(args.lockout_minutes.max(1)),
        },
        cache_ttl: Duration::from_secs(args.credential_cache_seconds),
        max_concurrent_checks: args.max_concurrent_password_checks,
        session_idle: Duration::from_secs(args.session_idle_seconds),
        session_max: Duration::from_secs_f64(args.session_max_hours * 3600.0),
    }
}

/// Escalation and the monitoring minute (shortened by tests only); which channels are
/// usable is derived from `channels` when the app is built, not from the flags a second
/// time.
fn pipeline(args: &ServeArgs) -> PipelineConfig {
    PipelineConfig {
        escalation_after: (args.escalation_after_seconds > 0).then(|| {
            jiff::SignedDuration::from_secs(
                i64::try_from(args.escalation_after_seconds).unwrap_or(i64::MAX),
            )
        }),
        escalation_rounds: i64::from(args.escalation_repeats.max(1)),
        monitoring_minute: args
            .monitoring_minute_ms
            .map_or(PipelineConfig::default().monitoring_minute, |ms| {
                jiff::SignedDuration::from_millis(i64::from(ms))
            }),
        ..PipelineConfig::default()
    }
}

/// The channels the flags configure. Twilio needs all three of its settings, Garmin
/// IPC Inbound both of its own.
fn channels(args: &ServeArgs) -> anyhow::Result<ChannelsConfig> {
    let smtp = args
        .smtp_url
        .clone()
        .filter(|u| !u.trim().is_empty())
        .map(|url| crate::channels::email::SmtpConfig {
            url,
            from: args.smtp_from.clone(),
        });
    let twilio = match (
        &args.twilio_account_sid,
        &args.twilio_auth_token,
        &args.twilio_from,
    ) {
        (Some(sid), Some(token), Some(from)) => Some(crate::channels::twilio::TwilioConfig {
            account_sid: sid.clone(),
            auth_token: token.clone(),
            from: from.clone(),
            base_url: args.twilio_base_url.clone(),
        }),
        (None, None, None) => None,
        _ => anyhow::bail!(
            "Twilio needs --twilio-account-sid, --twilio-auth-token and --twilio-from together"
        ),
    };
    Ok(ChannelsConfig {
        smtp,
        twilio,
        garmin: garmin(args)?,
        allow_private_webhooks: args.allow_private_webhooks,
        push_contact: push_contact(args)?,
    })
}

/// `--push-contact`: a `mailto:` or `https:` URL, as RFC 8292 asks of `sub`.
fn push_contact(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    let Some(contact) = args.push_contact.as_deref().map(str::trim) else {
        return Ok(None);
    };
    match url::Url::parse(contact) {
        Ok(url) if matches!(url.scheme(), "mailto" | "https") => Ok(Some(contact.to_string())),
        _ => anyhow::bail!("--push-contact must be a mailto: or https: URL"),
    }
}

fn garmin(args: &ServeArgs) -> anyhow::Result<Option<crate::channels::garmin::GarminConfig>> {
    let sender = args.garmin_inbound_sender.as_ref().map(|s| s.trim());
    if let Some(sender) = sender
        && !crate::domain::device_protocols::garmin_mt::is_valid_sender(sender)
    {
        anyhow::bail!(
            "--garmin-inbound-sender must be an email address or a phone number (Garmin refuses any other sender)"
        );
    }
    match (&args.garmin_inbound_url, &args.garmin_inbound_token) {
        (Some(url), Some(api_key)) => Ok(Some(crate::channels::garmin::GarminConfig {
            base_url: url.clone(),
            api_key: api_key.clone(),
            sender: sender.map(str::to_string),
        })),
        (None, None) => Ok(None),
        _ => anyhow::bail!(
            "Garmin IPC Inbound needs --garmin-inbound-url and --garmin-inbound-token together"
        ),
    }
}

/// The delivery worker's retry policy, lease and pace.
fn delivery(args: &ServeArgs) -> anyhow::Result<DeliveryWorkerConfig> {
    let seconds = |value: f64, flag: &str| {
        if value.is_finite() && value > 0.0 && value < 1e9 {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(anyhow::anyhow!("{flag} must be a positive number"))
        }
    };
    Ok(DeliveryWorkerConfig {
        retry: crate::domain::retry::RetryPolicy {
            initial: seconds(args.retry_initial_seconds, "--retry-initial-seconds")?,
            max_age: seconds(args.retry_max_hours * 3600.0, "--retry-max-hours")?,
        },
        lease: Duration::from_secs(args.delivery_lease_seconds.max(1)),
        loops: args.delivery_workers,
        batch: u32::from(args.delivery_batch),
        slow_attempts_per_url: usize::from(args.webhook_slow_attempts_per_url),
        ..DeliveryWorkerConfig::default()
    })
}

/// The report thresholds; a non-positive or non-finite value keeps its default.
fn report_thresholds(args: &ReportArgs) -> Thresholds {
    let d = Thresholds::default();
    let pick = |value: f64, default: f64| {
        if value.is_finite() && value > 0.0 {
            value
        } else {
            default
        }
    };
    let weight = |value: f64, default: f64| {
        if value.is_finite() && value >= 0.0 {
            value
        } else {
            default
        }
    };
    Thresholds {
        stop_minutes: pick(args.report_stop_minutes, d.stop_minutes),
        stop_speed_kmh: pick(args.report_stop_speed_kmh, d.stop_speed_kmh),
        default_speed_limit_kmh: pick(args.report_speed_limit_kmh, d.default_speed_limit_kmh),
        acceleration_ms2: pick(args.report_acceleration_ms2, d.acceleration_ms2),
        braking_ms2: pick(args.report_braking_ms2, d.braking_ms2),
        turning_ms2: pick(args.report_turning_ms2, d.turning_ms2),
        score_weights: crate::domain::report::Weights {
            speeding: weight(args.report_weight_speeding, d.score_weights.speeding),
            acceleration: weight(
                args.report_weight_acceleration,
                d.score_weights.acceleration,
            ),
            braking: weight(args.report_weight_braking, d.score_weights.braking),
            turning: weight(args.report_weight_turning, d.score_weights.turning),
        },
    }
}

/// HTTPS on the API's listener: both files, read and checked now, or neither.
fn tls(args: &ServeArgs) -> anyhow::Result<Option<Tls>> {
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Ok(Some(Tls::load(cert, key)?)),
        (None, None) => Ok(None),
        (Some(_), None) => anyhow::bail!(
            "--tls-cert needs --tls-key (SAFETRACK_TLS_KEY): the certificate's private key"
        ),
        (None, Some(_)) => anyhow::bail!(
            "--tls-key needs --tls-cert (SAFETRACK_TLS_CERT): the certificate it is the key of"
        ),
    }
}

/// The DirectIP listener's settings, when both its address and its token are given.
fn directip(args: &ServeArgs) -> Option<DirectIpConfig> {
    let (listen, token) = args.directip_listen.zip(args.directip_token.clone())?;
    Some(DirectIpConfig {
        listen,
        token,
        max_connections: usize::from(args.directip_max_connections),
        read_timeout: Duration::from_secs(args.directip_read_timeout_seconds),
        first_byte_timeout: Duration::from_secs(args.directip_first_byte_timeout_seconds),
        allow: args.directip_allow.clone(),
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::config::Cli;

    fn settings_of(flags: &[&str]) -> anyhow::Result<AppConfig> {
        let cli = Cli::try_parse_from([&["safetrack"], flags].concat()).expect("flags");
        from_args(&cli.serve)
    }

    #[test]
    fn the_delivery_flags_reach_the_worker() {
        let defaults = settings_of(&[]).expect("settings").delivery;
        assert_eq!(
            (
                defaults.batch,
                defaults.loops,
                defaults.slow_attempts_per_url
            ),
            (32, 2, 8)
        );
        assert_eq!(defaults.lease, Duration::from_secs(120));
        let set = settings_of(&[
            "--delivery-batch=200",
            "--delivery-workers=3",
            "--webhook-slow-attempts-per-url=4",
            "--delivery-lease-seconds=30",
        ])
        .expect("settings")
        .delivery;
        assert_eq!(
            (set.batch, set.loops, set.slow_attempts_per_url),
            (200, 3, 4)
        );
        assert_eq!(set.lease, Duration::from_secs(30));
    }

    /// `--allow-private-webhooks` is one setting, read by the webhook check and the
    /// webhook channel alike.
    #[test]
    fn private_webhooks_are_one_setting() {
        let off = settings_of(&[]).expect("settings");
        let on = settings_of(&["--allow-private-webhooks"]).expect("settings");
        assert!(!off.channels.allow_private_webhooks);
        assert!(on.channels.allow_private_webhooks);
    }

    #[test]
    fn tls_needs_both_files() {
        assert!(settings_of(&[]).expect("settings").tls.is_none());
        let alone = settings_of(&["--tls-cert=cert.pem"]).expect_err("cert alone");
        assert!(
            alone.to_string().contains("--tls-cert needs --tls-key"),
            "{alone}"
        );
        let alone = settings_of(&["--tls-key=key.pem"]).expect_err("key alone");
        assert!(
            alone.to_string().contains("--tls-key needs --tls-cert"),
            "{alone}"
        );
    }

    #[test]
    fn half_configured_channels_are_refused() {
        assert!(settings_of(&["--twilio-account-sid=AC1"]).is_err());
        assert!(settings_of(&["--garmin-inbound-url=https://example.com"]).is_err());
        assert!(settings_of(&["--retry-initial-seconds=0"]).is_err());
    }

    /// The hidden test-only `--monitoring-minute-ms` shortens a session minute; without
    /// it a minute is a minute, and a value outside 1 to 60,000 is refused by name.
    #[test]
    fn the_monitoring_minute_is_a_minute_unless_a_test_shortens_it() {
        let minute = |flags: &[&str]| settings_of(flags).expect("settings").pipeline;
        assert_eq!(
            minute(&[]).monitoring_minute,
            jiff::SignedDuration::from_mins(1)
        );
        assert_eq!(
            minute(&["--monitoring-minute-ms=250"]).monitoring_minute,
            jiff::SignedDuration::from_millis(250)
        );
        for bad in ["0", "60001", "-5", "1.5", "soon"] {
            let flag = format!("--monitoring-minute-ms={bad}");
            let refused = Cli::try_parse_from(["safetrack", &flag])
                .expect_err(bad)
                .to_string();
            assert!(refused.contains("--monitoring-minute-ms"), "{refused}");
        }
        let help = <Cli as clap::CommandFactory>::command()
            .render_help()
            .to_string();
        assert!(!help.contains("monitoring-minute"), "hidden: {help}");
    }

    #[test]
    fn a_report_threshold_that_is_no_positive_number_keeps_its_default() {
        let settings = settings_of(&["--report-stop-minutes=-1", "--report-stop-speed-kmh=7"])
            .expect("settings");
        assert_eq!(
            settings.reports.stop_minutes,
            Thresholds::default().stop_minutes
        );
        assert_eq!(settings.reports.stop_speed_kmh, 7.0);
    }
}
