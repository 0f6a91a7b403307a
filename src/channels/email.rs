//! E-mail over SMTP (lettre): `--smtp-url` names the server (`smtp://host:port`,
//! `smtps://user:pass@host`, `smtp://host?tls=required`), `--smtp-from` the sender.

use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::domain::retry::AttemptOutcome;

/// How long one SMTP conversation may take.
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct SmtpConfig {
    /// May carry credentials: never logged.
    pub url: String,
    pub from: String,
}

pub struct EmailChannel {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl EmailChannel {
    pub fn new(config: &SmtpConfig) -> anyhow::Result<Self> {
        // lettre's URL errors do not echo the URL, so the password stays out of the message.
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&config.url)
            .map_err(|e| anyhow::anyhow!("--smtp-url: {e}"))?
            .timeout(Some(TIMEOUT))
            .build();
        let from = config
            .from
            .parse::<Mailbox>()
            .map_err(|e| anyhow::anyhow!("--smtp-from {:?}: {e}", config.from))?;
        Ok(Self { transport, from })
    }

    pub async fn send(&self, to: &str, subject: &str, body: &str) -> AttemptOutcome {
        let to = match to.parse::<Mailbox>() {
            Ok(to) => to,
            Err(e) => {
                return AttemptOutcome::Permanent {
                    error: format!("not a deliverable address: {e}"),
                };
            }
        };
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(body.to_string());
        let message = match message {
            Ok(m) => m,
            Err(e) => {
                return AttemptOutcome::Permanent {
                    error: format!("cannot build the message: {e}"),
                };
            }
        };
        match self.transport.send(message).await {
            Ok(response) => {
                let text: Vec<&str> = response.message().collect();
                let text = text.join(" ");
                AttemptOutcome::Sent {
                    provider_id: Some(format!("{} {}", response.code(), truncate(&text, 200))),
                }
            }
            Err(e) if e.is_permanent() => AttemptOutcome::Permanent {
                error: format!("SMTP: {e}"),
            },
            Err(e) if no_connection(&e) => AttemptOutcome::Unreachable {
                error: format!("SMTP: {e}"),
            },
            Err(e) => AttemptOutcome::Retryable {
                error: format!("SMTP: {e}"),
                retry_after: None,
            },
        }
    }
}

pub(super) fn truncate(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}

/// Whether the SMTP server could not be reached at all (lettre does not say so itself: its
/// connection error wraps the socket's).
fn no_connection(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    let mut source = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::HostUnreachable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::AddrNotAvailable
            );
        }
        source = err.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::closed_port;

    #[tokio::test]
    async fn a_server_that_refuses_the_connection_is_unreachable() {
        let channel = EmailChannel::new(&SmtpConfig {
            url: format!("smtp://127.0.0.1:{}", closed_port()),
            from: "alerts@safetrack.test".into(),
        })
        .expect("config");
        let outcome = channel.send("ops@example.com", "SOS", "help").await;
        assert!(
            matches!(outcome, AttemptOutcome::Unreachable { .. }),
            "{outcome:?}"
        );
    }
}
