//! Outbound channels: how a claimed delivery reaches a person or a system (SMTP, Twilio,
//! webhooks). Each attempt answers an `AttemptOutcome`; what follows from it (retry,
//! expiry) is the domain's `RetryPolicy`, and recording it is the delivery worker's.
//! Channels know nothing of the database or of HTTP requests into the server.

pub mod email;
pub mod garmin;
pub mod push;
pub mod twilio;
pub mod webhook;

use crate::domain::delivery::Channel;
use crate::domain::retry::AttemptOutcome;
use email::{EmailChannel, SmtpConfig};
use garmin::{GarminChannel, GarminConfig};
use push::PushChannel;
use twilio::{TwilioChannel, TwilioConfig};
use webhook::{WebhookAuth, WebhookChannel};

pub const USER_AGENT: &str = concat!("safetrack/", env!("CARGO_PKG_VERSION"));

/// Which channels the server is configured with (`serve` flags).
#[derive(Debug, Clone, Default)]
pub struct ChannelsConfig {
    pub smtp: Option<SmtpConfig>,
    pub twilio: Option<TwilioConfig>,
    /// Garmin IPC Inbound (MT messages to inReach devices).
    pub garmin: Option<GarminConfig>,
    pub allow_private_webhooks: bool,
    /// The VAPID `sub` claim of Web Pushes (`--push-contact`).
    pub push_contact: Option<String>,
}

pub struct Channels {
    email: Option<EmailChannel>,
    twilio: Option<TwilioChannel>,
    garmin: Option<GarminChannel>,
    webhook: WebhookChannel,
    push: PushChannel,
}

/// What an attempt needs besides the delivery row: the tenant's webhook authentication
/// (webhook deliveries only; `None` when the URL is no longer configured).
pub struct Attempt<'a> {
    pub channel: Channel,
    pub target: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub body: &'a str,
    pub event_id: Option<&'a str>,
    pub webhook_auth: Option<&'a WebhookAuth>,
}

impl Channels {
    /// The channels of `config`; Web Push signs with the server's VAPID key.
    pub fn new(
        config: &ChannelsConfig,
        vapid: std::sync::Arc<crate::domain::vapid::VapidKey>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            push: PushChannel::new(vapid, config.push_contact.clone())?,
            email: config.smtp.as_ref().map(EmailChannel::new).transpose()?,
            twilio: config.twilio.clone().map(TwilioChannel::new).transpose()?,
            garmin: config.garmin.clone().map(GarminChannel::new).transpose()?,
            webhook: WebhookChannel::new(config.allow_private_webhooks)?,
        })
    }

    pub async fn attempt(&self, a: Attempt<'_>) -> AttemptOutcome {
        let Some(target) = a.target else {
            return AttemptOutcome::Permanent {
                error: "the delivery has no address".into(),
            };
        };
        match a.channel {
            Channel::Email => match &self.email {
                Some(email) => email.send(target, a.subject.unwrap_or(""), a.body).await,
                None => AttemptOutcome::NotConfigured,
            },
            Channel::Sms => match &self.twilio {
                Some(twilio) => twilio.send_sms(target, a.body).await,
                None => AttemptOutcome::NotConfigured,
            },
            Channel::Voice => match &self.twilio {
                Some(twilio) => twilio.call(target, a.body).await,
                None => AttemptOutcome::NotConfigured,
            },
            Channel::Webhook => match a.webhook_auth {
                Some(auth) => {
                    self.webhook
                        .send(target, a.event_id.unwrap_or(""), a.body, auth)
                        .await
                }
                None => AttemptOutcome::Permanent {
                    error: "the URL is no longer in the tenant's webhook settings".into(),
                },
            },
            Channel::Garmin => match &self.garmin {
                Some(garmin) => garmin.send(target, a.body).await,
                None => AttemptOutcome::NotConfigured,
            },
            // MT deliveries are queued for the device in the transaction that made them.
            Channel::Mt => AttemptOutcome::Sent { provider_id: None },
            // Pushes need their subscription: the delivery worker sends them (`push`).
            Channel::Push => AttemptOutcome::Permanent {
                error: "a push is sent with its subscription".into(),
            },
        }
    }
}

impl Channels {
    /// Web Push, which the delivery worker drives with the subscription it looked up.
    pub fn push(&self) -> &PushChannel {
        &self.push
    }
}

impl ChannelsConfig {
    pub fn email(&self) -> bool {
        self.smtp.is_some()
    }

    /// SMS and voice share the Twilio account.
    pub fn phone(&self) -> bool {
        self.twilio.is_some()
    }
}

/// A local port nothing listens on (bound, then let go): a receiver that is down.
#[cfg(test)]
pub(crate) fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The wait an answer's `Retry-After` asks for (seconds or an HTTP date), if any.
fn retry_after(response: &reqwest::Response) -> Option<std::time::Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| crate::domain::retry::parse_retry_after(v, crate::domain::time::now()))
}

/// A request to a provider (`peer`) that got no answer: no connection at all is an
/// unreachable receiver, anything else (a timeout, a broken exchange) retryable. The URL
/// is left out of the error: it is the provider's, not the delivery's.
fn no_answer(peer: &str, e: reqwest::Error) -> AttemptOutcome {
    let unreachable = e.is_connect();
    let error = format!("{peer}: {}", e.without_url());
    if unreachable {
        AttemptOutcome::Unreachable { error }
    } else {
        AttemptOutcome::Retryable {
            error,
            retry_after: None,
        }
    }
}
