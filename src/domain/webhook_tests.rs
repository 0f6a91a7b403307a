use super::*;

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
