//! MT messages to Garmin inReach devices through Garmin's IPC Inbound REST API
//! (`--garmin-inbound-url`, `--garmin-inbound-token`). A `Garmin` delivery's body is the
//! MT message (`GarminMt`, written when it is queued); the request is built by
//! `domain::gateways::garmin` (`inbound_text`, `inbound_location_request`,
//! `inbound_tracking_interval`) and POSTed as JSON. The answer classifies like any
//! provider's: 2xx sent, 408/429/5xx retried, other 4xx permanent; an MT message Garmin
//! cannot carry (a type it has no request for, text over 160 characters) is permanent.

use std::time::Duration;

use crate::domain::gateways::garmin_mt::GarminMt;
use crate::domain::retry::{AttemptOutcome, classify_status, parse_retry_after};
use crate::domain::time::now;

use super::email::truncate;

const TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone)]
pub struct GarminConfig {
    /// The Inbound base URL (`https://…/IPCInbound/V1/`).
    pub base_url: String,
    /// `user:password` for HTTP Basic, else sent as `X-API-Key`. Never logged.
    pub credential: String,
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
            .and_then(|mt| mt.request(imei))
        {
            Ok(request) => request,
            Err(error) => return AttemptOutcome::Permanent { error },
        };
        let url = format!(
            "{}/{}",
            self.config.base_url.trim_end_matches('/'),
            request.path
        );
        let mut builder = self.client.post(&url).json(&request.body);
        builder = match self.config.credential.split_once(':') {
            Some((user, password)) => builder.basic_auth(user, Some(password)),
            None => builder.header("X-API-Key", &self.config.credential),
        };
        let response = match builder.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => {
                return AttemptOutcome::Unreachable {
                    error: format!("Garmin IPC Inbound: {}", e.without_url()),
                };
            }
            Err(e) => {
                return AttemptOutcome::Retryable {
                    error: format!("Garmin IPC Inbound: {}", e.without_url()),
                    retry_after: None,
                };
            }
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, now()));
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
    use crate::domain::gateways::garmin_mt::DEFAULT_SENDER;

    fn mt(kind: &str, message: Option<&str>, parameters: serde_json::Value) -> GarminMt {
        GarminMt {
            mt_message_id: 1,
            device_id: "d".into(),
            r#type: kind.into(),
            message: message.map(str::to_string),
            parameters: parameters.as_object().cloned().unwrap_or_default(),
            queued_at: "2026-03-01T10:00:00Z".parse().unwrap(),
        }
    }

    #[test]
    fn each_type_has_its_request() {
        let imei = "300434030112330";
        let text = mt("Text", Some("Come back"), serde_json::json!({}))
            .request(imei)
            .unwrap();
        assert_eq!(text.path, "Messaging.svc/Message");
        assert_eq!(text.body["Messages"][0]["Sender"], DEFAULT_SENDER);
        let located = mt("LocationRequest", None, serde_json::json!({}))
            .request(imei)
            .unwrap();
        assert_eq!(located.path, "Location.svc/LocationRequest");
        let interval = mt(
            "ReportingFrequency",
            None,
            serde_json::json!({"Interval": "10"}),
        )
        .request(imei)
        .unwrap();
        assert_eq!(interval.body["Devices"][0]["Interval"], 10);
        assert!(
            mt("ReportingFrequency", None, serde_json::json!({}))
                .request(imei)
                .is_err()
        );
        assert!(
            mt("Call", None, serde_json::json!({}))
                .request(imei)
                .is_err()
        );
        let long = "x".repeat(161);
        assert!(
            mt("Text", Some(&long), serde_json::json!({}))
                .request(imei)
                .is_err()
        );
    }

    #[tokio::test]
    async fn an_inbound_api_that_refuses_the_connection_is_unreachable() {
        let channel = GarminChannel::new(GarminConfig {
            base_url: format!("http://127.0.0.1:{}/IPCInbound/V1/", closed_port()),
            credential: "user:secret".into(),
        })
        .unwrap();
        let body =
            serde_json::to_string(&mt("LocationRequest", None, serde_json::json!({}))).unwrap();
        let outcome = channel.send("300434030112330", &body).await;
        assert!(
            matches!(&outcome, AttemptOutcome::Unreachable { error } if !error.contains("secret")),
            "{outcome:?}"
        );
    }
}
