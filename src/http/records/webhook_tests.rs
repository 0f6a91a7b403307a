use super::*;

fn entry(url: &str) -> WebhookUrlRecord {
    WebhookUrlRecord {
        url: Some(url.into()),
        device: true,
        ..Default::default()
    }
}

fn settings(urls: &[&str]) -> WebhookSettingsRecord {
    WebhookSettingsRecord {
        urls: urls.iter().map(|u| entry(u)).collect(),
        ..Default::default()
    }
}

/// Stored settings with secret `password` and these URLs.
fn kept(password: &str, urls: &[&str]) -> WebhookSettings {
    WebhookSettings {
        urls: urls
            .iter()
            .map(|u| WebhookUrl {
                url: u.to_string(),
                device: true,
                event_notification: false,
                mo_message: false,
                mt_message: false,
                tenant: false,
                user: false,
            })
            .collect(),
        password: Some(password.into()),
        ..WebhookSettings::none()
    }
}

fn fields(s: WebhookSettingsRecord, stored: Option<&str>) -> Vec<String> {
    s.validated(stored.map(|p| kept(p, &[])).as_ref(), false)
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| e.field)
        .collect()
}

#[test]
fn wire_form_matches_the_domain_form() {
    let stored = WebhookSettings {
        authentication: Authentication::Basic,
        username: Some("hook".into()),
        etag: Some("W/\"1\"".into()),
        ..kept("secret", &["https://a.example.com/h"])
    };
    let domain = serde_json::to_string(&stored).expect("serialises");
    assert!(!domain.contains("secret"), "{domain}");
    let wire: WebhookSettingsRecord =
        serde_json::from_str(&domain).expect("reads as the wire record");
    assert_eq!(serde_json::to_string(&wire).expect("serialises"), domain);
    assert_eq!(WebhookSettingsRecord::from(&stored), wire);
    assert_eq!(
        domain,
        r#"{"Urls":[{"Url":"https://a.example.com/h","Device":true,"EventNotification":false,"MoMessage":false,"MtMessage":false,"Tenant":false,"User":false}],"Authentication":"Basic","Username":"hook","Password":null}"#
    );
    let back: WebhookSettings = serde_json::from_str(&domain).expect("a stored document");
    assert_eq!(back.urls, stored.urls);
    assert_eq!(back.password, None);
}

#[test]
fn empty_settings_are_valid() {
    let stored = WebhookSettingsRecord::default()
        .validated(None, false)
        .unwrap();
    assert_eq!(stored.authentication, Authentication::None);
    assert!(stored.urls.is_empty());
}

#[test]
fn at_most_ten_distinct_urls() {
    let urls: Vec<String> = (0..11)
        .map(|i| format!("https://example.com/{i}"))
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    assert_eq!(fields(settings(&refs), None), ["Urls"]);
    // Equal after normalisation (case of the host, default port).
    let dup = settings(&["https://Example.com:443/a", "https://example.com/a"]);
    assert_eq!(fields(dup, None), ["Urls[1].Url"]);
    let missing = WebhookSettingsRecord {
        urls: vec![WebhookUrlRecord::default()],
        ..Default::default()
    };
    assert_eq!(fields(missing, None), ["Urls[0].Url"]);
}

#[test]
fn credentials_per_type() {
    let with = |auth: &str, user: Option<&str>, password: Option<&str>| WebhookSettingsRecord {
        authentication: Some(auth.into()),
        username: user.map(Into::into),
        password: password.map(Into::into),
        ..Default::default()
    };
    assert_eq!(
        fields(with("Basic", None, None), None),
        ["Username", "Password"]
    );
    assert_eq!(
        fields(with("Basic", Some("a:b"), Some("pw")), None),
        ["Username"]
    );
    assert_eq!(fields(with("Bearer", None, None), None), ["Password"]);
    assert_eq!(
        fields(with("HmacSha256", None, Some("too-short")), None),
        ["Password"]
    );
    assert_eq!(
        fields(with("Bearer", None, Some("a\nb")), None),
        ["Password"]
    );
    assert_eq!(fields(with("Digest", None, None), None), ["Authentication"]);

    let basic = with("basic", Some("hook"), Some("secret"))
        .validated(None, false)
        .unwrap();
    assert_eq!(basic.authentication, Authentication::Basic);
    assert_eq!(basic.password.as_deref(), Some("secret"));
    // Bearer and HMAC do not keep a Username; None keeps nothing.
    let bearer = with("Bearer", Some("hook"), Some("token"))
        .validated(None, false)
        .unwrap();
    assert!(bearer.username.is_none());
    let none = with("None", Some("hook"), Some("x"))
        .validated(Some(&kept("old", &[])), false)
        .unwrap();
    assert!(none.username.is_none() && none.password.is_none());
}

#[test]
fn null_password_keeps_the_stored_secret() {
    let switch = WebhookSettingsRecord {
        authentication: Some("Bearer".into()),
        ..Default::default()
    };
    let stored = switch
        .clone()
        .validated(Some(&kept("stored-secret", &[])), false)
        .unwrap();
    assert_eq!(stored.password.as_deref(), Some("stored-secret"));
    // The stored secret is checked against the new type's rules too.
    let hmac = WebhookSettingsRecord {
        authentication: Some("HmacSha256".into()),
        password: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(fields(hmac, Some("short")), ["Password"]);
    assert!(WebhookSettingsRecord::from(&stored).password.is_none());
}

fn hmac(urls: &[&str], password: Option<&str>) -> WebhookSettingsRecord {
    WebhookSettingsRecord {
        authentication: Some("HmacSha256".into()),
        password: password.map(Into::into),
        ..settings(urls)
    }
}

#[test]
fn a_kept_secret_stays_with_the_origins_it_was_sent_to() {
    let stored = kept(
        "sixteen-chars!!!",
        &["https://a.example.com/x?t=1", "http://b.example.com:8080/"],
    );
    let stored = WebhookSettings {
        authentication: Authentication::HmacSha256,
        ..stored
    };
    let check = |s: WebhookSettingsRecord| s.validated(Some(&stored), false);
    // The same origins, however written, with other paths: kept.
    let same = check(hmac(
        &[
            "https://A.example.com:443/other",
            "http://b.example.com:8080/y",
        ],
        None,
    ))
    .unwrap();
    assert_eq!(same.password.as_deref(), Some("sixteen-chars!!!"));
    assert!(check(hmac(&[], Some(""))).is_ok());
    // Another scheme, host or port: the secret must come again.
    for moved in [
        "http://a.example.com/x?t=1",
        "https://evil.example.net/x?t=1",
        "https://a.example.com:8443/x",
        "http://b.example.com/",
        "https://x.a.example.com/",
    ] {
        let errors = check(hmac(&["https://a.example.com/", moved], None)).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["Password"], "{moved}");
        assert!(errors.0[0].message.contains("Urls[1].Url"), "{moved}");
        // Given again, it may go anywhere.
        assert!(check(hmac(&[moved], Some("another-sixteen!!"))).is_ok());
    }
    // None keeps no secret, so any origin will do; Basic and Bearer keep it like HMAC.
    let none = WebhookSettingsRecord {
        authentication: Some("None".into()),
        ..settings(&["https://evil.example.net/"])
    };
    assert!(check(none).is_ok());
    let bearer = WebhookSettingsRecord {
        authentication: Some("Bearer".into()),
        ..settings(&["https://evil.example.net/"])
    };
    assert_eq!(check(bearer).unwrap_err().0[0].field, "Password");
    // Nothing stored: nothing to keep, the type's own rule answers.
    let fresh = hmac(&["https://evil.example.net/"], None).validated(None, false);
    assert_eq!(fresh.unwrap_err().0[0].field, "Password");
}
