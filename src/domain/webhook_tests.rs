use super::*;

fn entry(url: &str) -> WebhookUrl {
    WebhookUrl {
        url: Some(url.into()),
        device: true,
        ..Default::default()
    }
}

fn settings(urls: &[&str]) -> WebhookSettings {
    WebhookSettings {
        urls: urls.iter().map(|u| entry(u)).collect(),
        ..Default::default()
    }
}

fn fields(s: WebhookSettings, stored: Option<&str>) -> Vec<String> {
    s.validated(stored, false)
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| e.field)
        .collect()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn private_addresses() {
    for private in [
        "127.0.0.1",
        "127.9.9.9",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "255.255.255.255",
        "224.0.0.1",
        "::1",
        "::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:10.1.2.3",
        "::127.0.0.1",
        "64:ff9b::a00:1",
        "2002:c0a8:101::1",
        "ff02::1",
    ] {
        assert!(is_private_address(ip(private)), "{private}");
    }
    for public in [
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "93.184.216.34",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ] {
        assert!(!is_private_address(ip(public)), "{public}");
    }
}

#[test]
fn local_hostnames() {
    assert!(is_local_hostname("localhost"));
    assert!(is_local_hostname("LOCALHOST."));
    assert!(is_local_hostname("api.localhost"));
    assert!(!is_local_hostname("localhost.example.com"));
    assert!(!is_local_hostname("example.com"));
}

#[test]
fn webhook_urls() {
    assert!(check_webhook_url("https://hooks.example.com/x?y=1", false).is_ok());
    assert!(check_webhook_url("http://8.8.8.8:8080/", false).is_ok());
    for bad in [
        "ftp://example.com/",
        "example.com/hook",
        "/relative",
        "http://127.0.0.1/",
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://localhost:8080/",
        "http://foo.localhost/",
        // Other spellings of 127.0.0.1 that URL parsers normalise.
        "http://2130706433/",
        "http://0x7f.1/",
        "http://[::ffff:7f00:1]/",
        "http://user:pw@example.com/",
        "javascript:alert(1)",
    ] {
        assert!(check_webhook_url(bad, false).is_err(), "{bad}");
    }
    assert!(check_webhook_url("http://127.0.0.1:9000/", true).is_ok());
    assert!(check_webhook_url("http://localhost/", true).is_ok());
    assert!(check_webhook_url("ftp://127.0.0.1/", true).is_err());
}

#[test]
fn empty_settings_are_valid() {
    let stored = WebhookSettings::default().validated(None, false).unwrap();
    assert_eq!(stored.authentication.as_deref(), Some("None"));
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
    let missing = WebhookSettings {
        urls: vec![WebhookUrl::default()],
        ..Default::default()
    };
    assert_eq!(fields(missing, None), ["Urls[0].Url"]);
}

#[test]
fn credentials_per_type() {
    let with = |auth: &str, user: Option<&str>, password: Option<&str>| WebhookSettings {
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
    assert_eq!(basic.authentication.as_deref(), Some("Basic"));
    assert_eq!(basic.password.as_deref(), Some("secret"));
    // Bearer and HMAC do not keep a Username; None keeps nothing.
    let bearer = with("Bearer", Some("hook"), Some("token"))
        .validated(None, false)
        .unwrap();
    assert!(bearer.username.is_none());
    let none = with("None", Some("hook"), Some("x"))
        .validated(Some("old"), false)
        .unwrap();
    assert!(none.username.is_none() && none.password.is_none());
}

#[test]
fn null_password_keeps_the_stored_secret() {
    let switch = WebhookSettings {
        authentication: Some("Bearer".into()),
        ..Default::default()
    };
    let stored = switch
        .clone()
        .validated(Some("stored-secret"), false)
        .unwrap();
    assert_eq!(stored.password.as_deref(), Some("stored-secret"));
    // The stored secret is checked against the new type's rules too.
    let hmac = WebhookSettings {
        authentication: Some("HmacSha256".into()),
        password: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(fields(hmac, Some("short")), ["Password"]);
    assert!(stored.public().password.is_none());
}
