//! MT messages to Garmin inReach devices through Garmin's IPC Inbound REST API
//! (`--garmin-inbound-url`, `--garmin-inbound-token`, `--garmin-inbound-sender`). A
//! `Garmin` delivery's body is the MT message (`GarminMt`, written when it is queued);
//! the request is built by `domain::device_protocols::garmin_mt` (paths, bodies and limits from
//! Garmin's IPC Inbound guide v3.1.1) and POSTed as JSON with the API key in `X-API-Key`,
//! as the guide's "Authentication" says. The answer classifies like any provider's: 2xx
//! sent, 408/429/5xx retried (429 after its `Retry-After`), other 4xx permanent (401/403 a
//! missing or wrong key, 422 what Garmin refuses); an MT message Garmin cannot carry (a
//! type it has no request for, text over 160 characters, no valid sender) is permanent.

use std::time::Duration;

use crate::domain::device_protocols::garmin_mt::GarminMt;
use crate::domain::retry::{AttemptOutcome, classify_status};

use super::email::truncate;
use super::{no_answer, retry_after};

const TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone)]
pub struct GarminConfig {
    /// The Inbound base URL (`https://ipcinbound.inreachapp.com/api/`: the tenant's
    /// "Inbound URL" with `/api/`).
    pub base_url: String,
    /// The IPC Inbound API key, sent as `X-API-Key`. Never logged.
    pub api_key: String,
    /// A text's sender when the MT message names none (`Parameters.Sender`): an email
    /// address or phone number, as Garmin requires.
    pub sender: Option<String>,
}

pub struct GarminChannel {
    client: reqwest::Client,
    config: GarminConfig,
}

impl GarminChannel {
    pub fn new(config: GarminConfig) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            // Straight to Garmin: an environment proxy would see the credential.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(super::USER_AGENT)
            .build()?;
        Ok(Self { client, config })
    }

    /// Sends the MT message in `body` (a `GarminMt`) to the device `imei`.
    pub async fn send(&self, imei: &str, body: &str) -> AttemptOutcome {
        let request = match serde_json::from_str::<GarminMt>(body)
            .map_err(|e| format!("the delivery's MT message cannot be read: {e}"))
            .and_then(|mt| mt.request(imei, self.config.sender.as_deref()))
        {
            Ok(request) => request,
            Err(error) => return AttemptOutcome::Permanent { error },
        };
        let url = format!(
            "{}/{}",
            self.config.base_url.trim_end_matches('/'),
            request.path
        );
        let sent = self
            .client
            .post(&url)
            .header("X-API-Key", &self.config.api_key)
            .json(&request.body)
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) => return no_answer("Garmin IPC Inbound", e),
        };
        let status = response.status();
        let retry_after = retry_after(&response);
        let text = response.text().await.unwrap_or_default();
        let detail = if text.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", truncate(text.trim(), 200))
        };
        classify_status(
            status.as_u16(),
            None,
            format!("Garmin IPC Inbound answered HTTP {status}{detail}"),
            retry_after,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::closed_port;

    #[tokio::test]
    async fn an_inbound_api_that_refuses_the_connection_is_unreachable() {
        let channel = GarminChannel::new(GarminConfig {
            base_url: format!("http://127.0.0.1:{}/api/", closed_port()),
            api_key: "secret-key".into(),
            sender: None,
        })
        .unwrap();
        let body = serde_json::to_string(&GarminMt {
            mt_message_id: crate::domain::ids::MtMessageId::new(1),
            device_id: crate::domain::ids::DeviceId::from_store("d".into()),
            r#type: crate::domain::mt_message::MtType::LocationRequest,
            message: None,
            parameters: serde_json::Map::new(),
            queued_at: "2026-03-01T10:00:00Z".parse().unwrap(),
        })
        .unwrap();
        let outcome = channel.send("300434030112330", &body).await;
        assert!(
            matches!(&outcome, AttemptOutcome::Unreachable { error } if !error.contains("secret")),
            "{outcome:?}"
        );
    }
}
