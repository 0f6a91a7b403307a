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

/// Stored settings with secret `password` and these URLs.
fn kept(password: &str, urls: &[&str]) -> WebhookSettings {
    WebhookSettings {
        password: Some(password.into()),
        ..settings(urls)
    }
}

fn fields(s: WebhookSettings, stored: Option<&str>) -> Vec<String> {
    s.validated(stored.map(|p| kept(p, &[])).as_ref(), false)
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
        "64:ff9b::7f00:1",
        "64:ff9b::c0a8:101",
        "64:ff9b::a9fe:a9fe",
        // NAT64's local-use prefix and Teredo, whatever they carry.
        "64:ff9b:1::808:808",
        "64:ff9b:1:ffff::1",
        "2001::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "2001:db8::1",
        "100::1",
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
        "64:ff9b:2::1",
        "2001:470::1",
        "2001:4860::1",
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
        .validated(Some(&kept("old", &[])), false)
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
        .validated(Some(&kept("stored-secret", &[])), false)
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

#[test]
fn nat64_and_teredo_literals_are_refused_when_saving() {
    for bad in [
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::a00:1]/",
        "http://[64:ff9b:1::808:808]/",
        "http://[2001::1]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    ] {
        assert!(check_webhook_url(bad, false).is_err(), "{bad}");
        assert!(check_webhook_url(bad, true).is_ok(), "{bad}");
    }
    assert!(check_webhook_url("http://[64:ff9b::808:808]/", false).is_ok());
}

fn hmac(urls: &[&str], password: Option<&str>) -> WebhookSettings {
    WebhookSettings {
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
        authentication: Some("HmacSha256".into()),
        ..stored
    };
    let check = |s: WebhookSettings| s.validated(Some(&stored), false);
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
    let none = WebhookSettings {
        authentication: Some("None".into()),
        ..settings(&["https://evil.example.net/"])
    };
    assert!(check(none).is_ok());
    let bearer = WebhookSettings {
        authentication: Some("Bearer".into()),
        ..settings(&["https://evil.example.net/"])
    };
    assert_eq!(check(bearer).unwrap_err().0[0].field, "Password");
    // Nothing stored: nothing to keep, the type's own rule answers.
    let fresh = hmac(&["https://evil.example.net/"], None).validated(None, false);
    assert_eq!(fresh.unwrap_err().0[0].field, "Password");
}

#[test]
fn origins_as_readers_see_them() {
    assert_eq!(
        url_origin("https://hooks.example.com/in?token=s3cret").as_deref(),
        Some("https://hooks.example.com:443")
    );
    assert_eq!(
        url_origin("http://u:p@HOOKS.example.com:8080/x#f").as_deref(),
        Some("http://hooks.example.com:8080")
    );
    assert_eq!(
        url_origin("http://[::1]:9000/x").as_deref(),
        Some("http://[::1]:9000")
    );
    assert_eq!(url_origin("not a url"), None);
    assert_eq!(url_origin("mailto:ops@example.com"), None);
}
