//! Unit tests of inbound authorization that need no network: configuration, API keys,
//! challenges, scopes, metadata and the loopback rule; and the size caps of what the
//! authorization server answers, against a loopback server. JWTs against a live JWKS are in
//! `tests/it/auth.rs`.

use expect_test::{Expect, expect};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::*;
use crate::curation::auth::{parse_auth, parse_tool_scopes};
use crate::diagnostic::Diagnostic;

fn parse(yaml: &str) -> (Option<AuthConfig>, Vec<Diagnostic>) {
    let value: Value = serde_saphyr::from_str(yaml).expect("test YAML parses");
    let mut diagnostics = Vec::new();
    let config = parse_auth(&value, "auth", &mut diagnostics);
    (config, diagnostics)
}

fn check_diagnostics(yaml: &str, expect: Expect) {
    let (_, diagnostics) = parse(yaml);
    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    expect.assert_eq(&text.join("\n"));
}

fn hex_sha256(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn api_key_authenticator(env: &[(&str, &str)]) -> Authenticator {
    let yaml = format!(
        "api_keys:\n  - {{subject: ci-bot, sha256: {}, scopes: [pets:read]}}\n  - {{subject: ops, key: {{env: OPS_KEY}}, scopes: [pets:read, pets:write]}}\n  - {{subject: audit, sha256: {{env: AUDIT_HASH}}}}\n",
        hex_sha256("ci-secret")
    );
    let (config, diagnostics) = parse(&yaml);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let tools = [
        (
            "createPet".to_string(),
            vec![vec!["pets:write".to_string()]],
        ),
        ("ping".to_string(), vec![]),
    ];
    Authenticator::with_env(config.as_ref(), tools, |name| {
        env.iter()
            .find(|(variable, _)| variable == name)
            .map(|(_, value)| value.clone())
    })
    .expect("authenticator builds")
}

fn standard_env() -> [(&'static str, &'static str); 2] {
    [
        ("OPS_KEY", "ops-secret"),
        (
            "AUDIT_HASH",
            "7e1f6a3e3d7ff33b43c5d2ca1d1c0b3c8ab2b0b6d4a1f1a7d1c8f0b6c9e9a3f1",
        ),
    ]
}

#[test]
fn oauth_section_parses_with_defaults() {
    let (config, diagnostics) = parse(
        "default_scopes: [pets:read]\noauth:\n  resource: https://mcp.example.com/mcp\n  issuer: https://auth.example.com\n  jwks_uri: https://auth.example.com/jwks.json\n",
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let config = config.expect("config");
    assert_eq!(config.default_scopes, ["pets:read"]);
    let AuthMode::OAuth(oauth) = config.mode else {
        panic!("expected oauth")
    };
    assert_eq!(oauth.resource.as_str(), "https://mcp.example.com/mcp");
    assert_eq!(oauth.leeway_seconds, DEFAULT_LEEWAY_SECONDS);
    assert_eq!(
        oauth.jwks_min_refresh_seconds,
        DEFAULT_JWKS_MIN_REFRESH_SECONDS
    );
    assert_eq!(oauth.jwks_max_age_seconds, DEFAULT_JWKS_MAX_AGE_SECONDS);
    assert!(oauth.audiences.is_empty());
    assert!(oauth.introspection.is_none());
}

#[test]
fn auth_section_problems_are_all_reported_with_their_paths() {
    check_diagnostics(
        "oauth:\n  resource: https://mcp.example.com/mcp#frag\n  jwks_uri: http://auth.example.com/jwks.json\n  leeway: 5\n",
        expect![[r#"
            error: unknown key `leeway` (expected one of: resource, issuer, jwks_uri, audiences, leeway_seconds, jwks_min_refresh_seconds, jwks_max_age_seconds, introspection)
              --> curation:auth.oauth.leeway
            error: the resource URL is an http(s) URL without query or fragment
              --> curation:auth.oauth.resource
            error: missing `issuer:`
              --> curation:auth.oauth
            error: expected an https URL (plain http only for loopback addresses)
              --> curation:auth.oauth.jwks_uri"#]],
    );
}

#[test]
fn jwks_over_plain_http_is_allowed_for_loopback_only() {
    let (config, diagnostics) = parse(
        "oauth: {resource: http://127.0.0.1:8080/mcp, issuer: http://127.0.0.1:9000, jwks_uri: http://127.0.0.1:9000/jwks}\n",
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(config.is_some());
    check_diagnostics(
        "oauth: {resource: https://mcp.example.com/mcp, issuer: https://a.example.com, jwks_uri: http://10.0.0.1/jwks}\n",
        expect![[r#"
            error: expected an https URL (plain http only for loopback addresses)
              --> curation:auth.oauth.jwks_uri"#]],
    );
}

#[test]
fn a_resource_is_never_fetched_so_plain_http_to_another_host_only_warns() {
    let yaml = "oauth: {resource: http://mcp.example.com/mcp, issuer: https://a.example.com, jwks_uri: https://a.example.com/jwks}\n";
    let (config, _) = parse(yaml);
    assert!(config.is_some(), "a warning does not refuse the section");
    check_diagnostics(
        yaml,
        expect![[r#"
            warning: the resource URL is plain http: tokens will cross the network in clear text
              --> curation:auth.oauth.resource"#]],
    );
    check_diagnostics(
        "oauth: {resource: mcp, issuer: https://a.example.com, jwks_uri: https://a.example.com/jwks}\n",
        expect![[r#"
            error: expected an absolute URL
              --> curation:auth.oauth.resource"#]],
    );
    check_diagnostics(
        "oauth: {issuer: https://a.example.com, jwks_uri: https://a.example.com/jwks}\n",
        expect![[r#"
            error: missing `resource:`
              --> curation:auth.oauth"#]],
    );
}

#[test]
fn literal_keys_are_refused_in_the_file() {
    check_diagnostics(
        "api_keys:\n  - {subject: ci-bot, key: hunter2}\n  - {subject: x, sha256: abc}\n  - {sha256: {env: H}}\n",
        expect![[r#"
            error: a key is never written in the file: give its SHA-256 (`sha256:`) or an environment variable (`key: {env: VAR}`)
              --> curation:auth.api_keys[0].key
            error: expected the key's SHA-256 as 64 hex digits
              --> curation:auth.api_keys[1].sha256
            error: missing `subject:`
              --> curation:auth.api_keys[2]"#]],
    );
}

#[test]
fn both_modes_at_once_are_refused() {
    check_diagnostics(
        "api_keys: []\noauth: {}\n",
        expect![[r#"
            error: choose one of `api_keys:` and `oauth:`
              --> curation:auth"#]],
    );
}

#[test]
fn scopes_must_be_scope_tokens() {
    check_diagnostics(
        "default_scopes: [\"pets read\"]\napi_keys: [{subject: a, sha256: {env: H}}]\n",
        expect![[r#"
            error: "pets read" is not a scope: scopes are printable ASCII without spaces, quotes or backslashes
              --> curation:auth.default_scopes"#]],
    );
    let tool: Value = serde_json::json!({"scopes": ["pets:write", "offline_access"]});
    let mut diagnostics = Vec::new();
    let scopes = parse_tool_scopes(
        tool.as_object().expect("object"),
        "tools.createPet",
        &mut diagnostics,
    );
    assert_eq!(scopes, None);
    expect![[r#"
        error: `offline_access` is not a scope a tool can require
          --> curation:tools.createPet.scopes"#]]
    .assert_eq(&diagnostics[0].to_string());
}

#[tokio::test]
async fn api_keys_authenticate_by_hash_and_env() {
    let authenticator = api_key_authenticator(&standard_env());
    let ci = authenticator
        .authenticate(Some("Bearer ci-secret"))
        .await
        .expect("ci key");
    assert_eq!(
        (ci.subject.as_str(), ci.scopes.as_slice()),
        ("ci-bot", &["pets:read".to_string()][..])
    );
    assert!(
        ci.token().is_none(),
        "an API key is not a token to exchange"
    );
    let ops = authenticator
        .authenticate(Some("bearer ops-secret"))
        .await
        .expect("ops key from env");
    assert_eq!(ops.subject, "ops");
    let refused = authenticator
        .authenticate(Some("Bearer wrong"))
        .await
        .expect_err("unknown key");
    assert_eq!(refused.status(), http::StatusCode::UNAUTHORIZED);
    expect![[
        r#"Bearer error="invalid_token", scope="pets:write", error_description="unknown key""#
    ]]
    .assert_eq(refused.www_authenticate().unwrap_or_default());
    let missing = authenticator
        .authenticate(None)
        .await
        .expect_err("no header");
    expect![[r#"Bearer scope="pets:write""#]]
        .assert_eq(missing.www_authenticate().unwrap_or_default());
    let basic = authenticator
        .authenticate(Some("Basic Y2k6c2VjcmV0"))
        .await
        .expect_err("not bearer");
    assert_eq!(basic.kind(), ChallengeKind::Missing);
}

#[test]
fn a_missing_environment_variable_is_named_without_any_value() {
    let yaml = "api_keys: [{subject: ops, key: {env: OPS_KEY}}]";
    let (config, _) = parse(yaml);
    let error = Authenticator::with_env(config.as_ref(), [], |_| None).expect_err("missing env");
    expect!["environment variable OPS_KEY is not set (named by auth.api_keys[0])"]
        .assert_eq(&error.to_string());
}

#[tokio::test]
async fn scopes_decide_which_tools_a_principal_reaches() {
    let authenticator = api_key_authenticator(&standard_env());
    let ci = authenticator
        .authenticate(Some("Bearer ci-secret"))
        .await
        .expect("ci key");
    let ops = authenticator
        .authenticate(Some("Bearer ops-secret"))
        .await
        .expect("ops key");
    assert!(authenticator.may_use(&ci, "ping"));
    assert!(
        authenticator.may_use(&ci, "getPet"),
        "no default scope: tools without scopes are open"
    );
    assert!(!authenticator.may_use(&ci, "createPet"));
    assert!(authenticator.may_use(&ops, "createPet"));
    let refused = authenticator
        .authorize(&ci, "createPet")
        .expect_err("lacks pets:write");
    assert_eq!(refused.status(), http::StatusCode::FORBIDDEN);
    expect![[r#"Bearer error="insufficient_scope", scope="pets:write", error_description="the token lacks a scope this tool needs""#]]
        .assert_eq(refused.www_authenticate().unwrap_or_default());
    assert_eq!(authenticator.cache_scope(), CacheScope::Private);
}

#[test]
fn without_scopes_the_tool_list_stays_public() {
    let (config, _) = parse("api_keys: [{subject: a, key: {env: K}}]");
    let authenticator =
        Authenticator::with_env(config.as_ref(), [], |_| Some("k".to_string())).expect("builds");
    assert_eq!(authenticator.cache_scope(), CacheScope::Public);
    assert_eq!(Authenticator::none().cache_scope(), CacheScope::Public);
}

#[tokio::test]
async fn without_authentication_everyone_is_anonymous_and_reaches_everything() {
    let authenticator = Authenticator::new(
        None,
        [(
            "createPet".to_string(),
            vec![vec!["pets:write".to_string()]],
        )],
    )
    .expect("none");
    let principal = authenticator
        .authenticate(Some("Bearer whatever"))
        .await
        .expect("anonymous");
    assert_eq!(principal, Principal::anonymous());
    assert!(authenticator.authorize(&principal, "createPet").is_ok());
    let mut headers = http::HeaderMap::new();
    for value in ["Bearer one", "Bearer two"] {
        headers.append(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static(value),
        );
    }
    headers.append(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_bytes(b"Bearer \xff").expect("opaque header value"),
    );
    assert_eq!(
        authenticator.authenticate_headers(&headers).await,
        Ok(Principal::anonymous()),
        "headers are not looked at without authentication"
    );
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_bytes(b"Bearer \xff").expect("opaque header value"),
    );
    assert_eq!(
        authenticator.authenticate_headers(&headers).await,
        Ok(Principal::anonymous())
    );
}

#[test]
fn default_scopes_apply_to_tools_without_their_own() {
    let scopes = ToolScopes::new(
        vec!["pets:read".into()],
        [
            ("admin".into(), vec![vec!["admin".into()]]),
            ("open".into(), vec![]),
            (
                "either".into(),
                vec![vec!["a".into()], vec!["b".into(), "c".into()]],
            ),
        ],
    );
    assert_eq!(scopes.required("getPet"), [vec!["pets:read"]]);
    assert_eq!(scopes.required("admin"), [vec!["admin"]]);
    assert_eq!(scopes.required("open"), [Vec::<String>::new()]);
    assert_eq!(scopes.required("either"), [vec!["a"], vec!["b", "c"]]);
    assert_eq!(scopes.all(), ["a", "admin", "b", "c", "pets:read"]);
}

#[test]
fn bearer_header_parsing_follows_rfc_6750() {
    let kind = |header: Option<&str>| match bearer_token(header) {
        BearerToken::Absent => "absent".to_string(),
        BearerToken::Malformed => "malformed".to_string(),
        BearerToken::Token(token) => format!("token {token}"),
    };
    assert_eq!(kind(None), "absent");
    assert_eq!(kind(Some("Basic abc")), "absent");
    assert_eq!(kind(Some("Bearer")), "malformed");
    assert_eq!(kind(Some("Bearer a b")), "malformed");
    assert_eq!(kind(Some("Bearer a\"b")), "malformed");
    assert_eq!(kind(Some("BEARER abc.def-_~+/=")), "token abc.def-_~+/=");
}

#[test]
fn metadata_url_is_the_well_known_path_plus_the_resource_path() {
    let url = |resource: &str| metadata::location(&Url::parse(resource).expect("url"));
    assert_eq!(
        url("https://mcp.example.com/public/mcp"),
        (
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp".to_string(),
            "/.well-known/oauth-protected-resource/public/mcp".to_string()
        )
    );
    assert_eq!(
        url("https://mcp.example.com/").1,
        "/.well-known/oauth-protected-resource"
    );
    assert_eq!(
        url("http://127.0.0.1:8080/mcp").0,
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
    );
}

#[test]
fn metadata_document_names_resource_issuer_and_scopes() {
    let (config, _) = parse(
        "default_scopes: [pets:read]\noauth: {resource: https://mcp.example.com/mcp, issuer: https://auth.example.com, jwks_uri: https://auth.example.com/jwks}\n",
    );
    let tools = [(
        "createPet".to_string(),
        vec![vec!["pets:write".to_string()]],
    )];
    let authenticator = Authenticator::with_env(config.as_ref(), tools, |_| None).expect("builds");
    let document = authenticator
        .metadata_document()
        .expect("oauth has metadata");
    expect![[r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],"scopes_supported":["pets:read","pets:write"]}"#]]
        .assert_eq(&document.to_string());
    assert_eq!(
        authenticator.metadata_path(),
        Some("/.well-known/oauth-protected-resource/mcp")
    );
}

#[test]
fn serving_without_authentication_is_only_allowed_on_loopback() {
    for listen in [
        "127.0.0.1:8080",
        "[::1]:8080",
        "localhost:8080",
        "127.0.0.2:1",
    ] {
        assert!(check_exposure(listen, None).is_ok(), "{listen}");
    }
    for listen in [
        "0.0.0.0:8080",
        "[::]:8080",
        "192.168.1.10:80",
        "example.com:80",
    ] {
        assert!(check_exposure(listen, None).is_err(), "{listen}");
    }
    let (config, _) = parse("api_keys: [{subject: a, key: {env: K}}]");
    assert!(check_exposure("0.0.0.0:8080", config.as_ref()).is_ok());
    let error = check_exposure("0.0.0.0:8080", None).expect_err("exposed");
    expect!["refusing to listen on 0.0.0.0:8080 without authentication: add an `auth:` section to the curation (`auth: {api_keys: [{subject: NAME, sha256: HEX, scopes: [...]}]}` or `auth: {oauth: {resource: URL, issuer: URL, jwks_uri: URL}}`), or listen on 127.0.0.1"]
        .assert_eq(&error.to_string());
}

#[test]
fn secrets_do_not_show_in_debug_output() {
    let secret = Secret::from("s3cret-value");
    assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
    let principal = Principal::new("alice", ["a"]).with_token(secret);
    assert!(!format!("{principal:?}").contains("s3cret"));
}

#[test]
fn constant_time_comparison_matches_only_equal_digests() {
    let a = [7u8; 32];
    let mut b = a;
    assert!(constant_time_eq(&a, &b));
    b[31] ^= 1;
    assert!(!constant_time_eq(&a, &b));
}

#[test]
fn a_root_resource_is_canonical_without_its_trailing_slash() {
    let (config, _) = parse(
        "oauth: {resource: 'https://mcp.example.com/', issuer: https://auth.example.com, jwks_uri: https://auth.example.com/jwks}\n",
    );
    let authenticator = Authenticator::with_env(config.as_ref(), [], |_| None).expect("builds");
    let document = authenticator.metadata_document().expect("metadata");
    assert_eq!(document["resource"], "https://mcp.example.com");
    assert_eq!(
        authenticator.metadata_url(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    let Mode::OAuth(oauth) = &authenticator.inner.mode else {
        panic!("expected oauth")
    };
    assert_eq!(
        oauth.audiences,
        ["https://mcp.example.com", "https://mcp.example.com/"]
    );
}

#[tokio::test]
async fn request_headers_carry_exactly_one_authorization() {
    let authenticator = api_key_authenticator(&standard_env());
    let mut headers = http::HeaderMap::new();
    assert_eq!(
        authenticator
            .authenticate_headers(&headers)
            .await
            .expect_err("none")
            .kind(),
        ChallengeKind::Missing
    );
    headers.append(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("Bearer ci-secret"),
    );
    let principal = authenticator
        .authenticate_headers(&headers)
        .await
        .expect("one key");
    assert_eq!(principal.subject, "ci-bot");
    headers.append(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("Bearer ops-secret"),
    );
    let refused = authenticator
        .authenticate_headers(&headers)
        .await
        .expect_err("two headers");
    assert_eq!(refused.kind(), ChallengeKind::InvalidToken);
}

#[test]
fn the_key_servers_cache_control_can_shorten_how_long_keys_stay_fresh() {
    let max_age = |value: &str| {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_str(value).expect("header"),
        );
        jwks::cache_max_age(&headers).map(|age| age.as_secs())
    };
    assert_eq!(max_age("public, max-age=120"), Some(120));
    assert_eq!(max_age("Max-Age=\"60\", must-revalidate"), Some(60));
    assert_eq!(max_age("no-store"), Some(0));
    assert_eq!(max_age("public"), None);
    assert_eq!(jwks::cache_max_age(&http::HeaderMap::new()), None);
}

/// Issue 11: with `scopes_from_document`, a tool needs the OAuth 2 / OpenID Connect scopes its
/// operation's security requirements name (any one alternative, each whole); a curation
/// `scopes:` still wins, and an operation asking only for an API key needs the default.
#[test]
fn scopes_from_the_document_are_alternatives_and_the_curation_still_wins() {
    let document = crate::openapi::Document::from_value(serde_json::json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "components": {"securitySchemes": {
            "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://a.example/.well-known/openid-configuration"},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        }},
        "security": [{"oauth": ["pets:read"]}],
        "paths": {
            "/pets": {
                "get": {"operationId": "listPets"},
                "post": {"operationId": "createPet", "security": [
                    {"oauth": ["pets:write", "pets:admin"]},
                    {"oidc": ["pets:owner"], "key": []},
                ]},
            },
            "/ping": {"get": {"operationId": "ping", "security": [{"key": []}]}},
            "/admin": {"get": {"operationId": "admin"}},
        },
    }))
    .expect("document");
    let curation = crate::curation::Curation {
        all: true,
        tools: vec![crate::curation::ToolEntry {
            selector: "admin".into(),
            enabled: true,
            scopes: Some(vec!["root".into()]),
            ..Default::default()
        }],
        ..Default::default()
    };
    let (catalog, diagnostics) = crate::catalog::compile(&document, &curation);
    assert!(
        !diagnostics.iter().any(Diagnostic::is_error),
        "{diagnostics:?}"
    );
    let (config, _) = parse(
        "default_scopes: [base]\nscopes_from_document: true\napi_keys: [{subject: a, sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"}]\n",
    );
    let config = config.expect("auth config");
    let authenticator =
        Authenticator::with_env(Some(&config), tool_scopes(&catalog, &config), |_| None)
            .expect("builds");
    let may = |scopes: &[&str], tool: &str| {
        authenticator.may_use(&Principal::new("a", scopes.iter().copied()), tool)
    };
    assert!(may(&["pets:read"], "listPets"));
    assert!(!may(&["base"], "listPets"));
    assert!(may(&["pets:write", "pets:admin"], "createPet"));
    assert!(may(&["pets:owner"], "createPet"));
    assert!(!may(&["pets:write"], "createPet"), "each alternative whole");
    assert!(may(&["base"], "ping"), "an API key alone asks for no scope");
    assert!(!may(&[], "ping"));
    assert!(may(&["root"], "admin"), "the curation's scopes win");
    assert!(!may(&["pets:read"], "admin"));
    let challenge = authenticator
        .authorize(&Principal::new("a", ["pets:write"]), "createPet")
        .expect_err("403");
    assert!(
        format!("{challenge:?}").contains("pets:admin pets:write"),
        "{challenge:?}"
    );
    // Off, the document's requirements are not read.
    let (config, _) = parse(
        "default_scopes: [base]\napi_keys: [{subject: a, sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"}]\n",
    );
    let config = config.expect("auth config");
    assert_eq!(
        tool_scopes(&catalog, &config),
        [("admin".to_string(), vec![vec!["root".to_string()]])]
    );
}

/// A server on loopback that answers every request with `body` (JSON), as a key server, token
/// endpoint or introspection endpoint would; its base URL.
async fn answering(body: String) -> Url {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let answer: Arc<[u8]> = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
    .into();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                let _ = stream.write_all(&answer).await;
            });
        }
    });
    Url::parse(&base).expect("URL")
}

/// `{"<field>": <value>, "pad": "…"}`, padded to `size` bytes.
fn padded(field: &str, value: &str, size: usize) -> String {
    let start = format!("{{\"{field}\":{value},\"pad\":\"");
    format!("{start}{}\"}}", "x".repeat(size - start.len() - 2))
}

#[tokio::test]
async fn answers_of_the_authorization_server_are_read_up_to_their_size_caps() {
    let pool = Pool::new(CONNECT_TIMEOUT, None);
    // Signing keys: up to a mebibyte.
    for (size, fetched) in [(1 << 20, true), ((1 << 20) + 1, false)] {
        let base = answering(padded("keys", "[]", size)).await;
        let jwks = Arc::new(JwksCache::new(
            base.join("/jwks").expect("URL"),
            pool.clone(),
            Duration::ZERO,
            Duration::from_secs(60),
        ));
        let lookup = jwks.find(Some("any")).await;
        let unknown = matches!(lookup, jwks::Lookup::Unknown);
        let unavailable = matches!(lookup, jwks::Lookup::Unavailable);
        assert!(if fetched { unknown } else { unavailable }, "{size} bytes");
    }
    // Introspection: up to 64 KiB.
    for (size, read) in [(64 * 1024, true), (64 * 1024 + 1, false)] {
        let base = answering(padded("active", "false", size)).await;
        let introspector = Introspector::new(
            base.join("/introspect").expect("URL"),
            "ferry".to_owned(),
            Secret::from("s3cret"),
            pool.clone(),
        );
        let answer = introspector.introspect("token").await;
        assert_eq!(answer.is_ok(), read, "{size} bytes: {answer:?}");
    }
    // The token endpoint: up to 64 KiB.
    let yaml = "{token_url: TOKEN_URL, client_id: ferry, client_secret: {env: SECRET}}";
    for (size, read) in [(64 * 1024, true), (64 * 1024 + 1, false)] {
        let base = answering(padded("access_token", "\"t0ken\"", size)).await;
        let config: Value = serde_saphyr::from_str(
            &yaml.replace("TOKEN_URL", base.join("/token").expect("URL").as_str()),
        )
        .expect("YAML");
        let mut diagnostics = Vec::new();
        let config = crate::curation::auth::parse_upstream_credential(
            "client_credentials",
            &config,
            "upstream_auth.client_credentials",
            &mut diagnostics,
        )
        .expect("a credential");
        let source = outbound::CredentialSource::with_env(&config, pool.clone(), |_| {
            Some("s3cret".to_owned())
        })
        .expect("source");
        let value = source.authorization(&Principal::anonymous()).await;
        assert_eq!(value.is_ok(), read, "{size} bytes: {value:?}");
    }
}
