//! Deliveries never go through a proxy named in the server's environment: the
//! private-address check examines the address connected to, which with a proxy would be
//! the proxy's. The real binary runs with `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY`
//! (both spellings) pointing at a local listener; the webhook and the Twilio request
//! still reach their receivers directly and the listener sees no connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::alerts::sos_message;
use crate::backend_fn_tests;
use crate::common::{ADMIN_EMAIL, ADMIN_PASSWORD, Backend, Client, TestDatabase};
use crate::durability::start_with_env;
use crate::mo_messages::DEVICE;
use crate::peers::Receiver;

backend_fn_tests!(deliveries_ignore_proxies_in_the_environment);

/// A listener that counts the connections it is offered and answers none of them.
async fn proxy() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (address, connections)
}

async fn deliveries_ignore_proxies_in_the_environment(backend: Backend) {
    let Some(database) = TestDatabase::create(backend).await else {
        return;
    };
    let (proxy, connections) = proxy().await;
    let hooks = Receiver::start().await;
    let twilio = Receiver::start().await;
    let mut env = vec![("NO_PROXY", ""), ("no_proxy", "")];
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
        env.push((name, proxy.as_str()));
    }
    let lower = ["https_proxy", "http_proxy", "all_proxy"];
    for name in lower {
        env.push((name, proxy.as_str()));
    }
    let server = start_with_env(
        &database.url,
        &[
            "--allow-private-webhooks",
            "--twilio-account-sid",
            "AC0123456789abcdef",
            "--twilio-auth-token",
            "twilio-token-secret",
            "--twilio-from",
            "+15005550006",
            "--twilio-base-url",
            &twilio.base,
        ],
        &env,
    )
    .await;
    let admin = Client::new(&server.base, Some((ADMIN_EMAIL, ADMIN_PASSWORD)));
    let setup = [
        (
            "/V2/1000/webhooks",
            json!({"Urls": [{"Url": format!("{}/hook", hooks.base), "MoMessage": true}]}),
            true,
        ),
        (
            "/V2/1000/devices",
            json!({"DeviceId": DEVICE, "DeviceType": "InReach"}),
            false,
        ),
        (
            "/V2/1000/eventnotifications",
            json!({"NotificationName": "SOS", "EventsExpression": "Emergency", "Severity": "2",
                   "Recipients": [{"Type": "MessagingAddress",
                                   "MessagingAddress": "sms:+447700900123"}]}),
            false,
        ),
    ];
    for (path, body, put) in setup {
        let response = if put {
            admin.put(path, &body).await
        } else {
            admin.post(path, &body).await
        };
        assert_eq!(response.status(), StatusCode::OK, "{path}");
    }
    let sos = sos_message(1, "2026-03-01T10:00:00Z", 51.5, -0.12);
    let response = admin
        .post(
            &format!("/V2/1000/devices/{DEVICE}/momessages"),
            &json!([sos]),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let webhook = hooks.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(webhook[0].path, "/hook");
    let sms = twilio.wait_for(1, Duration::from_secs(20)).await;
    assert!(sms[0].path.ends_with("/Messages.json"), "{}", sms[0].path);
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the proxy was used");
    drop(server);
}
