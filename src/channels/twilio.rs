//! SMS and voice through Twilio's REST API — the interface most SMS/voice providers
//! imitate: `POST {base}/2010-04-01/Accounts/{sid}/Messages.json` (To, From, Body) and
//! `…/Calls.json` (To, From, Twiml), with HTTP Basic auth (account SID, auth token).
//! The returned `sid` is the provider id.

use std::time::Duration;

use crate::domain::retry::{AttemptOutcome, classify_status};

use super::email::truncate;
use super::{no_answer, retry_after};

const TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone)]
pub struct TwilioConfig {
    pub account_sid: String,
    /// Never logged.
    pub auth_token: String,
    pub from: String,
    /// `https://api.twilio.com` unless pointed elsewhere (tests use a local fake).
    pub base_url: String,
}

pub struct TwilioChannel {
    client: reqwest::Client,
    config: TwilioConfig,
}

impl TwilioChannel {
    pub fn new(config: TwilioConfig) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            // Straight to the provider: an environment proxy would see the auth token.
            .no_proxy()
            .user_agent(super::USER_AGENT)
            .build()?;
        Ok(Self { client, config })
    }

    pub async fn send_sms(&self, to: &str, body: &str) -> AttemptOutcome {
        self.post(
            "Messages.json",
            &[("To", to), ("From", &self.config.from), ("Body", body)],
        )
        .await
    }

    pub async fn call(&self, to: &str, text: &str) -> AttemptOutcome {
        let twiml = format!(
            "<Response><Say>{}</Say></Response>",
            quick_xml::escape::escape(text)
        );
        self.post(
            "Calls.json",
            &[("To", to), ("From", &self.config.from), ("Twiml", &twiml)],
        )
        .await
    }

    async fn post(&self, resource: &str, form: &[(&str, &str)]) -> AttemptOutcome {
        let url = format!(
            "{}/2010-04-01/Accounts/{}/{resource}",
            self.config.base_url.trim_end_matches('/'),
            self.config.account_sid
        );
        let response = self
            .client
            .post(&url)
            .basic_auth(&self.config.account_sid, Some(&self.config.auth_token))
            .form(form)
            .send()
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => return no_answer("Twilio", e),
        };
        let status = response.status();
        let retry_after = retry_after(&response);
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        let sid = body.get("sid").and_then(|s| s.as_str()).map(str::to_string);
        let message = body
            .get("message")
            .and_then(|m| m.as_str())
            .map(|m| format!(": {}", truncate(m, 200)))
            .unwrap_or_default();
        classify_status(
            status.as_u16(),
            sid,
            format!("Twilio answered HTTP {status}{message}"),
            retry_after,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::closed_port;

    #[tokio::test]
    async fn a_provider_that_refuses_the_connection_is_unreachable() {
        let port = closed_port();
        let channel = TwilioChannel::new(TwilioConfig {
            account_sid: "AC1".into(),
            auth_token: "secret".into(),
            from: "+15005550006".into(),
            base_url: format!("http://127.0.0.1:{port}"),
        })
        .expect("config");
        let outcome = channel.send_sms("+15005550007", "SOS").await;
        assert!(
            matches!(&outcome, AttemptOutcome::Unreachable { error } if !error.contains("secret")),
            "{outcome:?}"
        );
    }
}
