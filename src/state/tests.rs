use std::time::Duration;

use super::{OnFailure, Options, StartError, client, hex, micros, subject_key};

fn options(url: &str) -> Options {
    Options {
        url: url.into(),
        password: None,
        ca_certificates: None,
        prefix: super::DEFAULT_PREFIX.into(),
        timeout: Duration::from_millis(100),
        on_failure: OnFailure::Closed,
    }
}

fn refusal(url: &str) -> String {
    match client(&options(url)) {
        Err(StartError::Url(text)) => text,
        Err(other) => panic!("{url}: not a URL refusal: {other}"),
        Ok(_) => panic!("{url}: accepted"),
    }
}

#[test]
fn a_password_in_the_url_is_refused_without_repeating_it() {
    let text = refusal("redis://ferry:hunter2hunter2@127.0.0.1:6379");
    assert!(text.contains("FERRY_STATE_PASSWORD"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn only_redis_urls_are_taken() {
    assert!(refusal("http://127.0.0.1:6379").contains("redis://"));
    assert!(refusal("127.0.0.1:6379").contains("not a URL"));
    assert!(refusal("redis://127.0.0.1:6379/?protocol=resp3").contains("no query"));
    let mut plain = options("redis://127.0.0.1:6379");
    plain.ca_certificates = Some(Vec::new());
    assert!(matches!(client(&plain), Err(StartError::Url(text)) if text.contains("rediss://")));
}

#[test]
fn a_url_with_a_user_and_database_is_taken() {
    let mut with_password = options("redis://ferry@127.0.0.1:6390/3");
    with_password.password = Some("secret".into());
    let client = client(&with_password).expect("a client");
    let info = client.get_connection_info();
    assert_eq!(info.addr().to_string(), "127.0.0.1:6390");
    assert_eq!(info.redis_settings().username(), Some("ferry"));
    assert_eq!(info.redis_settings().password(), Some("secret"));
    assert_eq!(info.redis_settings().db(), 3);
}

#[test]
fn keys_name_subjects_by_a_digest() {
    let key = subject_key("alice@example.com");
    assert_eq!(key.len(), 32);
    assert!(key.bytes().all(|byte| byte.is_ascii_hexdigit()));
    assert!(!key.contains("alice"));
    assert_ne!(key, subject_key("bob"));
    assert_eq!(hex(&[0x00, 0xab, 0x10]), "00ab10");
}

#[test]
fn intervals_are_whole_microseconds_at_least_one() {
    assert_eq!(micros(2_000_000_000), 2_000_000);
    assert_eq!(micros(1_999), 1);
    assert_eq!(micros(0), 1);
}

#[test]
fn options_never_print_the_password() {
    let mut with_password = options("redis://127.0.0.1:6379");
    with_password.password = Some("hunter2hunter2".into());
    let printed = format!("{with_password:?}");
    assert!(!printed.contains("hunter2"), "{printed}");
}
