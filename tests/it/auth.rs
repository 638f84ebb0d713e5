//! Authorization with real cryptography: the test generates RSA, P-256 and Ed25519 keys,
//! serves their JWKS from a local HTTP server, mints tokens, and checks the exact status and
//! `WWW-Authenticate` each one gets.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use expect_test::expect;
use ferry::auth::outbound::{CredentialSource, identity_header};
use ferry::auth::{AuthConfig, Authenticator, Principal, Secret};
use serde_json::{Value, json};

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";

/// A signing key of the test authorization server.
enum TestKey {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
}

impl TestKey {
    fn rsa() -> TestKey {
        TestKey::Rsa(RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("rsa key"))
    }

    fn ec() -> TestKey {
        TestKey::Ec(
            EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_FIXED_SIGNING).expect("ec key"),
        )
    }

    fn ed() -> TestKey {
        TestKey::Ed(Ed25519KeyPair::generate().expect("ed25519 key"))
    }

    fn alg(&self) -> &'static str {
        match self {
            TestKey::Rsa(_) => "RS256",
            TestKey::Ec(_) => "ES256",
            TestKey::Ed(_) => "EdDSA",
        }
    }

    fn jwk(&self, kid: &str) -> Value {
        match self {
            TestKey::Rsa(key) => {
                let public = key.public_key();
                json!({
                    "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                    "n": b64(public.modulus().big_endian_without_leading_zero()),
                    "e": b64(public.exponent().big_endian_without_leading_zero()),
                })
            }
            TestKey::Ec(key) => {
                let point = key.public_key().as_ref();
                json!({"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..65])})
            }
            TestKey::Ed(key) => {
                json!({"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64(key.public_key().as_ref())})
            }
        }
    }

    /// The public key's bytes, as an attacker would use them for an HMAC secret.
    fn public_bytes(&self) -> Vec<u8> {
        match self {
            TestKey::Rsa(key) => key.public_key().as_ref().to_vec(),
            TestKey::Ec(key) => key.public_key().as_ref().to_vec(),
            TestKey::Ed(key) => key.public_key().as_ref().to_vec(),
        }
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            TestKey::Rsa(key) => {
                let mut signature = vec![0; key.public_modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    message,
                    &mut signature,
                )
                .expect("rsa sign");
                signature
            }
            TestKey::Ec(key) => key
                .sign(&SystemRandom::new(), message)
                .expect("ec sign")
                .as_ref()
                .to_vec(),
            TestKey::Ed(key) => key.sign(message).as_ref().to_vec(),
        }
    }

    /// A compact JWS of `claims`, signed with this key under `kid`.
    fn mint(&self, kid: &str, claims: &Value) -> String {
        let header = json!({"alg": self.alg(), "typ": "at+jwt", "kid": kid});
        let message = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        format!("{message}.{}", b64(&self.sign(message.as_bytes())))
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64)
}

fn claims(scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "scope": scope, "iat": now(), "exp": now() + 600})
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

/// A local authorization server publishing a JWKS that tests can change or take down.
struct JwksServer {
    address: SocketAddr,
    state: Arc<JwksState>,
}

#[derive(Default)]
struct JwksState {
    keys: Mutex<Vec<Value>>,
    fetches: AtomicUsize,
    down: AtomicBool,
}

impl JwksServer {
    async fn start(keys: Vec<Value>) -> JwksServer {
        let state = Arc::new(JwksState {
            keys: Mutex::new(keys),
            ..JwksState::default()
        });
        let router = Router::new()
            .route("/jwks.json", get(serve_jwks))
            .with_state(state.clone());
        let address = crate::support::serve_app(router).await;
        JwksServer { address, state }
    }

    fn uri(&self) -> String {
        format!("http://{}/jwks.json", self.address)
    }

    fn fetches(&self) -> usize {
        self.state.fetches.load(Ordering::SeqCst)
    }

    fn publish(&self, keys: Vec<Value>) {
        *self.state.keys.lock().expect("keys lock") = keys;
    }

    fn go_down(&self) {
        self.state.down.store(true, Ordering::SeqCst);
    }
}

async fn serve_jwks(State(state): State<Arc<JwksState>>) -> axum::response::Response {
    state.fetches.fetch_add(1, Ordering::SeqCst);
    if state.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let keys = state.keys.lock().expect("keys lock").clone();
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        json!({"keys": keys}).to_string(),
    )
        .into_response()
}

/// Diagnostics as `ferry check` prints them, one after the other.
fn diagnostics_text(diagnostics: &[ferry::diagnostic::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

fn auth_config(yaml: &str) -> AuthConfig {
    let value: Value = serde_saphyr::from_str(yaml).expect("test YAML parses");
    let mut diagnostics = Vec::new();
    let config = ferry::curation::auth::parse_auth(&value, "auth", &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    config.expect("auth config")
}

/// An OAuth authenticator against `jwks`, with `extra` lines under `oauth:`; `getPet` needs
/// `pets:read` (the default) and `createPet` needs `pets:write`.
fn oauth(jwks: &JwksServer, extra: &str) -> Authenticator {
    let yaml = format!(
        "default_scopes: [pets:read]\noauth:\n  resource: {RESOURCE}\n  issuer: {ISSUER}\n  jwks_uri: {}\n{extra}",
        jwks.uri()
    );
    let tools = [(
        "createPet".to_string(),
        vec![vec!["pets:write".to_string()]],
    )];
    Authenticator::with_env(Some(&auth_config(&yaml)), tools, |_| None).expect("authenticator")
}

/// One line per case: the principal, or the status and `WWW-Authenticate`.
async fn outcome(authenticator: &Authenticator, token: &str) -> String {
    match authenticator
        .authenticate(Some(&format!("Bearer {token}")))
        .await
    {
        Ok(principal) => format!("ok {} [{}]", principal.subject, principal.scopes.join(" ")),
        Err(challenge) => format!(
            "{} {}",
            challenge.status().as_u16(),
            challenge.www_authenticate().unwrap_or("-")
        ),
    }
}

#[tokio::test]
async fn every_token_gets_the_status_and_challenge_it_must() {
    let rsa = TestKey::rsa();
    let ec = TestKey::ec();
    let ed = TestKey::ed();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1"), ec.jwk("ec-1"), ed.jwk("ed-1")]).await;
    let authenticator = oauth(&jwks, "");

    let valid = rsa.mint("rsa-1", &claims("pets:read"));
    let (header, _, signature) = {
        let mut parts = valid.split('.');
        (
            parts.next().unwrap_or_default(),
            parts.next(),
            parts.next().unwrap_or_default(),
        )
    };
    let escalated = b64(claims("pets:read pets:write").to_string().as_bytes());
    let none_header = b64(json!({"alg": "none", "kid": "rsa-1"})
        .to_string()
        .as_bytes());
    let claims_b64 = b64(claims("pets:read").to_string().as_bytes());
    let hmac_header = b64(json!({"alg": "HS256", "kid": "rsa-1"})
        .to_string()
        .as_bytes());
    let hmac_message = format!("{hmac_header}.{claims_b64}");
    let hmac_key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &rsa.public_bytes());
    let hmac_signature = aws_lc_rs::hmac::sign(&hmac_key, hmac_message.as_bytes());

    let cases = [
        ("valid RS256", valid.clone()),
        (
            "valid ES256",
            ec.mint("ec-1", &claims("pets:read pets:write")),
        ),
        ("valid EdDSA", ed.mint("ed-1", &claims("pets:read"))),
        (
            "expired",
            rsa.mint(
                "rsa-1",
                &with(claims("pets:read"), "exp", json!(now() - 3600)),
            ),
        ),
        (
            "expired within leeway",
            rsa.mint("rsa-1", &with(claims("pets:read"), "exp", json!(now() - 5))),
        ),
        (
            "not yet valid",
            rsa.mint(
                "rsa-1",
                &with(claims("pets:read"), "nbf", json!(now() + 3600)),
            ),
        ),
        (
            "wrong issuer",
            rsa.mint(
                "rsa-1",
                &with(
                    claims("pets:read"),
                    "iss",
                    json!("https://evil.example.com"),
                ),
            ),
        ),
        (
            "wrong audience",
            rsa.mint(
                "rsa-1",
                &with(
                    claims("pets:read"),
                    "aud",
                    json!("https://other.example.com/mcp"),
                ),
            ),
        ),
        (
            "no audience",
            rsa.mint("rsa-1", &with(claims("pets:read"), "aud", Value::Null)),
        ),
        ("unknown kid", rsa.mint("rsa-9", &claims("pets:read"))),
        (
            "ES256 token under the RSA kid",
            ec.mint("rsa-1", &claims("pets:read")),
        ),
        ("alg none", format!("{none_header}.{claims_b64}.")),
        (
            "HMAC signed with the public key",
            format!("{hmac_message}.{}", b64(hmac_signature.as_ref())),
        ),
        (
            "tampered payload",
            format!("{header}.{escalated}.{signature}"),
        ),
        (
            "opaque token without introspection",
            "2YotnFZFEjr1zCsicMWpAA".to_string(),
        ),
    ];
    let mut report = String::new();
    for (name, token) in &cases {
        writeln!(report, "{name}: {}", outcome(&authenticator, token).await)
            .expect("write to string");
    }
    let missing = authenticator
        .authenticate(None)
        .await
        .expect_err("no token");
    writeln!(
        report,
        "no token: {} {}",
        missing.status().as_u16(),
        missing.www_authenticate().unwrap_or("-")
    )
    .expect("write to string");
    expect![[r#"
        valid RS256: ok alice [pets:read]
        valid ES256: ok alice [pets:read pets:write]
        valid EdDSA: ok alice [pets:read]
        expired: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token has expired"
        expired within leeway: ok alice [pets:read]
        not yet valid: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token is not valid yet"
        wrong issuer: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token was issued by another authorization server"
        wrong audience: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token was issued for another resource"
        no audience: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token lacks a required claim"
        unknown kid: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token is signed with an unknown key"
        ES256 token under the RSA kid: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token's algorithm does not match its key"
        alg none: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token is malformed"
        HMAC signed with the public key: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token's algorithm does not match its key"
        tampered payload: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token's signature does not verify"
        opaque token without introspection: 401 Bearer error="invalid_token", scope="pets:read pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token is malformed"
        no token: 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="pets:read pets:write"
    "#]]
    .assert_eq(&report);
}

#[tokio::test]
async fn a_token_without_a_tools_scope_gets_403_with_the_scopes_to_step_up_to() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let authenticator = oauth(&jwks, "");
    let reader = authenticator
        .authenticate(Some(&format!(
            "Bearer {}",
            rsa.mint("rsa-1", &claims("pets:read"))
        )))
        .await
        .expect("valid token");
    assert!(authenticator.may_use(&reader, "getPet"));
    assert!(!authenticator.may_use(&reader, "createPet"));
    let refused = authenticator
        .authorize(&reader, "createPet")
        .expect_err("lacks pets:write");
    assert_eq!(refused.status().as_u16(), 403);
    expect![[r#"Bearer error="insufficient_scope", scope="pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token lacks a scope this tool needs""#]]
        .assert_eq(refused.www_authenticate().unwrap_or_default());
    let nobody = authenticator
        .authenticate(Some(&format!(
            "Bearer {}",
            rsa.mint("rsa-1", &with(claims(""), "scope", Value::Null))
        )))
        .await
        .expect("valid token without scopes");
    assert!(
        !authenticator.may_use(&nobody, "getPet"),
        "the default scope applies"
    );
    assert_eq!(authenticator.cache_scope().as_str(), "private");
}

#[tokio::test]
async fn the_validated_token_is_kept_for_token_exchange_only() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let authenticator = oauth(&jwks, "");
    let token = rsa.mint("rsa-1", &claims("pets:read"));
    let principal = authenticator
        .authenticate(Some(&format!("Bearer {token}")))
        .await
        .expect("valid");
    assert_eq!(
        principal.token().map(|secret| secret.expose()),
        Some(token.as_str())
    );
    assert!(!format!("{principal:?}").contains(&token));
}

#[tokio::test]
async fn a_rotated_key_is_fetched_when_its_kid_first_appears() {
    let old = TestKey::rsa();
    let new = TestKey::ec();
    let jwks = JwksServer::start(vec![old.jwk("old")]).await;
    let authenticator = oauth(&jwks, "  jwks_min_refresh_seconds: 0\n");
    authenticator.warm().await;
    assert_eq!(jwks.fetches(), 1);
    jwks.publish(vec![old.jwk("old"), new.jwk("new")]);
    let outcome = outcome(&authenticator, &new.mint("new", &claims("pets:read"))).await;
    assert_eq!(outcome, "ok alice [pets:read]");
    assert_eq!(jwks.fetches(), 2);
}

#[tokio::test]
async fn unknown_kids_cannot_flood_the_key_server() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let authenticator = oauth(&jwks, "");
    authenticator.warm().await;
    let attempts = (0..50).map(|index| {
        let authenticator = authenticator.clone();
        let token = rsa.mint(&format!("made-up-{index}"), &claims("pets:read"));
        tokio::spawn(async move {
            authenticator
                .authenticate(Some(&format!("Bearer {token}")))
                .await
                .is_err()
        })
    });
    for attempt in attempts {
        assert!(attempt.await.expect("task"), "an unknown kid is refused");
    }
    assert_eq!(jwks.fetches(), 1, "within the minimum interval, no refetch");
}

#[tokio::test]
async fn concurrent_first_requests_share_one_jwks_fetch() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let authenticator = oauth(&jwks, "");
    let token = rsa.mint("rsa-1", &claims("pets:read"));
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let authenticator = authenticator.clone();
            let header = format!("Bearer {token}");
            tokio::spawn(async move { authenticator.authenticate(Some(&header)).await.is_ok() })
        })
        .collect();
    for call in calls {
        assert!(call.await.expect("task"));
    }
    assert_eq!(jwks.fetches(), 1);
}

#[tokio::test]
async fn cached_keys_keep_working_while_the_jwks_host_is_down() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    // Keys are stale at once and may be refetched at once: every request tries the host.
    let authenticator = oauth(
        &jwks,
        "  jwks_min_refresh_seconds: 0\n  jwks_max_age_seconds: 0\n",
    );
    authenticator.warm().await;
    jwks.go_down();
    for _ in 0..3 {
        assert_eq!(
            outcome(&authenticator, &rsa.mint("rsa-1", &claims("pets:read"))).await,
            "ok alice [pets:read]"
        );
        tokio::task::yield_now().await;
    }
    let unknown = outcome(&authenticator, &rsa.mint("rsa-2", &claims("pets:read"))).await;
    assert!(unknown.starts_with("401 "), "{unknown}");
    assert!(jwks.fetches() >= 2, "the host was asked again and failed");
}

#[tokio::test]
async fn hmac_keys_in_a_jwks_are_never_used() {
    let secret = b"shared-secret-shared-secret-1234";
    let jwks = JwksServer::start(vec![
        json!({"kty": "oct", "kid": "hmac", "k": b64(secret), "alg": "HS256"}),
    ])
    .await;
    let authenticator = oauth(&jwks, "");
    let header = b64(json!({"alg": "HS256", "kid": "hmac"})
        .to_string()
        .as_bytes());
    let message = format!(
        "{header}.{}",
        b64(claims("pets:read").to_string().as_bytes())
    );
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, secret);
    let token = format!(
        "{message}.{}",
        b64(aws_lc_rs::hmac::sign(&key, message.as_bytes()).as_ref())
    );
    let outcome = outcome(&authenticator, &token).await;
    assert!(
        outcome.ends_with("error_description=\"the token is signed with an unknown key\""),
        "{outcome}"
    );
}

#[tokio::test]
async fn metadata_and_challenges_are_served_over_http() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let authenticator = oauth(&jwks, "");
    let guard = authenticator.clone();
    let protected = get(move |headers: axum::http::HeaderMap| {
        let authenticator = guard.clone();
        async move {
            let header = headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok());
            match authenticator.authenticate(header).await {
                Ok(principal) => principal.subject.into_response(),
                Err(challenge) => ferry::transport::auth::challenge_response(&challenge),
            }
        }
    });
    let router = Router::new()
        .route("/mcp", protected)
        .merge(ferry::transport::auth::metadata_router(&authenticator));
    let address = crate::support::serve_app(router).await;
    let client = reqwest::Client::new();

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = client
            .get(format!("http://{address}{path}"))
            .send()
            .await
            .expect("metadata");
        assert_eq!(response.status(), 200, "{path}");
        let document: Value =
            serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
        expect![[r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],"scopes_supported":["pets:read","pets:write"]}"#]]
            .assert_eq(&document.to_string());
    }

    let anonymous = client
        .get(format!("http://{address}/mcp"))
        .send()
        .await
        .expect("request");
    assert_eq!(anonymous.status(), 401);
    expect![[r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="pets:read pets:write""#]]
        .assert_eq(anonymous.headers()["www-authenticate"].to_str().unwrap_or_default());
    let valid = client
        .get(format!("http://{address}/mcp"))
        .bearer_auth(rsa.mint("rsa-1", &claims("pets:read")))
        .send()
        .await
        .expect("request");
    assert_eq!(valid.status(), 200);
    assert_eq!(valid.text().await.expect("body"), "alice");
}

/// A local RFC 7662 endpoint that knows a few opaque tokens and records how ferry
/// authenticated to it.
async fn introspection_server(seen_authorization: Arc<Mutex<Vec<String>>>) -> SocketAddr {
    let handler = move |headers: axum::http::HeaderMap, body: String| {
        let seen = seen_authorization.clone();
        async move {
            let authorization = headers
                .get("authorization")
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default();
            seen.lock()
                .expect("seen lock")
                .push(authorization.to_string());
            let token = url::form_urlencoded::parse(body.as_bytes())
                .find(|(name, _)| name == "token")
                .map(|(_, value)| value.into_owned())
                .unwrap_or_default();
            let answer = match token.as_str() {
                "opaque-good" => {
                    json!({"active": true, "sub": "bob", "scope": "pets:read", "aud": [RESOURCE], "iss": ISSUER, "exp": now() + 600})
                }
                "opaque-other-resource" => {
                    json!({"active": true, "sub": "bob", "aud": "https://other.example.com", "exp": now() + 600})
                }
                "opaque-expired" => {
                    json!({"active": true, "sub": "bob", "aud": RESOURCE, "exp": now() - 3600})
                }
                _ => json!({"active": false}),
            };
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
        }
    };
    crate::support::serve_app(Router::new().route("/introspect", axum::routing::post(handler)))
        .await
}

#[tokio::test]
async fn opaque_tokens_are_introspected() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let address = introspection_server(seen.clone()).await;
    let yaml = format!(
        "oauth:\n  resource: {RESOURCE}\n  issuer: {ISSUER}\n  introspection:\n    endpoint: http://{address}/introspect\n    client_id: ferry\n    client_secret: {{env: INTROSPECTION_SECRET}}\n"
    );
    let env = |name: &str| (name == "INTROSPECTION_SECRET").then(|| "s3cret".to_string());
    let authenticator =
        Authenticator::with_env(Some(&auth_config(&yaml)), [], env).expect("authenticator");
    let mut report = String::new();
    for token in [
        "opaque-good",
        "opaque-other-resource",
        "opaque-expired",
        "opaque-revoked",
    ] {
        writeln!(report, "{token}: {}", outcome(&authenticator, token).await)
            .expect("write to string");
    }
    expect![[r#"
        opaque-good: ok bob [pets:read]
        opaque-other-resource: 401 Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token was issued for another resource"
        opaque-expired: 401 Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token has expired"
        opaque-revoked: 401 Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token is not active"
    "#]]
    .assert_eq(&report);
    assert_eq!(
        outcome(&authenticator, "opaque-good").await,
        "ok bob [pets:read]"
    );
    assert_eq!(
        seen.lock().expect("seen lock").len(),
        4,
        "an active answer is reused for a while"
    );
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ferry:s3cret")
    );
    assert!(
        seen.lock()
            .expect("seen lock")
            .iter()
            .all(|authorization| *authorization == expected)
    );
}

#[tokio::test]
async fn an_unreachable_introspection_endpoint_is_503_not_a_bad_token() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address")
    };
    let yaml = format!(
        "oauth:\n  resource: {RESOURCE}\n  issuer: {ISSUER}\n  introspection: {{endpoint: 'http://{closed}/introspect', client_id: ferry, client_secret: {{env: S}}}}\n"
    );
    let authenticator =
        Authenticator::with_env(Some(&auth_config(&yaml)), [], |_| Some("s".to_string()))
            .expect("authenticator");
    let refused = authenticator
        .authenticate(Some("Bearer opaque-good"))
        .await
        .expect_err("unreachable");
    assert_eq!(refused.status().as_u16(), 503);
    assert_eq!(refused.www_authenticate(), None);
}

/// A local OAuth token endpoint: counts requests, remembers each form and `Authorization`,
/// and issues `token-N` valid for `lifetime` seconds. It answers after a short pause, so
/// concurrent callers really overlap.
struct TokenEndpoint {
    address: SocketAddr,
    state: Arc<TokenState>,
}

/// The `Authorization` header and the form fields of one token request.
type TokenRequest = (String, Vec<(String, String)>);

struct TokenState {
    issued: AtomicUsize,
    lifetime: u64,
    refuse: bool,
    requests: Mutex<Vec<TokenRequest>>,
}

/// The pool token requests go out on, as the upstream client's would be (plain HTTP here).
fn token_pool() -> ferry::client::Pool {
    ferry::client::Pool::new(std::time::Duration::from_secs(10), None)
}

impl TokenEndpoint {
    async fn start(lifetime: u64, refuse: bool) -> TokenEndpoint {
        let state = Arc::new(TokenState {
            issued: AtomicUsize::new(0),
            lifetime,
            refuse,
            requests: Mutex::new(Vec::new()),
        });
        let router = Router::new()
            .route("/token", axum::routing::post(issue_token))
            .with_state(state.clone());
        TokenEndpoint {
            address: crate::support::serve_app(router).await,
            state,
        }
    }

    fn issued(&self) -> usize {
        self.state.issued.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<TokenRequest> {
        self.state.requests.lock().expect("requests lock").clone()
    }

    fn config(&self, kind: &str, extra: &str) -> ferry::auth::outbound::OutboundCredential {
        let yaml = format!(
            "token_url: http://{}/token\nclient_id: ferry\nclient_secret: {{env: FERRY_CLIENT_SECRET}}\n{extra}",
            self.address
        );
        let value: Value = serde_saphyr::from_str(&yaml).expect("test YAML parses");
        let mut diagnostics = Vec::new();
        let path = format!("upstream_auth.{kind}");
        let config =
            ferry::curation::auth::parse_upstream_credential(kind, &value, &path, &mut diagnostics);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        config.expect("credential config")
    }

    fn source(&self, kind: &str, extra: &str) -> CredentialSource {
        let env = |name: &str| (name == "FERRY_CLIENT_SECRET").then(|| "client-s3cret".to_string());
        CredentialSource::with_env(&self.config(kind, extra), token_pool(), env)
            .expect("credential source")
    }
}

async fn issue_token(
    State(state): State<Arc<TokenState>>,
    headers: axum::http::HeaderMap,
    body: String,
) -> axum::response::Response {
    let authorization = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    state
        .requests
        .lock()
        .expect("requests lock")
        .push((authorization.to_string(), form));
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    if state.refuse {
        let answer =
            json!({"error": "invalid_client", "error_description": "client-s3cret is wrong"});
        return (StatusCode::UNAUTHORIZED, answer.to_string()).into_response();
    }
    let number = state.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let answer = json!({"access_token": format!("token-{number}"), "token_type": "Bearer", "expires_in": state.lifetime});
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

fn form_value<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

async fn authorization(source: &Arc<CredentialSource>, principal: &Principal) -> String {
    let value = source.authorization(principal).await.expect("credential");
    value.to_str().expect("ascii").to_string()
}

#[tokio::test]
async fn client_credentials_fetch_one_token_for_many_concurrent_calls() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    let source = Arc::new(endpoint.source(
        "client_credentials",
        "scopes: [pets.read, pets.write]\naudience: pets-api\n",
    ));
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let source = source.clone();
            tokio::spawn(async move { authorization(&source, &Principal::anonymous()).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.expect("task"), "Bearer token-1");
    }
    assert_eq!(endpoint.issued(), 1);
    let requests = endpoint.requests();
    let (client_auth, form) = &requests[0];
    let expected_basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ferry:client-s3cret")
    );
    assert_eq!(client_auth, &expected_basic);
    assert_eq!(form_value(form, "grant_type"), Some("client_credentials"));
    assert_eq!(form_value(form, "scope"), Some("pets.read pets.write"));
    assert_eq!(form_value(form, "audience"), Some("pets-api"));
    assert_eq!(
        form_value(form, "client_secret"),
        None,
        "the secret goes in the basic header only"
    );
}

#[tokio::test]
async fn a_token_is_refreshed_once_shortly_before_it_expires() {
    let endpoint = TokenEndpoint::start(1, false).await;
    let source =
        Arc::new(endpoint.source("client_credentials", "client_auth: client_secret_post\n"));
    assert_eq!(
        authorization(&source, &Principal::anonymous()).await,
        "Bearer token-1"
    );
    assert_eq!(
        authorization(&source, &Principal::anonymous()).await,
        "Bearer token-1"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let source = source.clone();
            tokio::spawn(async move { authorization(&source, &Principal::anonymous()).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.expect("task"), "Bearer token-2");
    }
    assert_eq!(endpoint.issued(), 2);
    let requests = endpoint.requests();
    assert_eq!(
        requests[0].0, "",
        "client_secret_post sends no Authorization header"
    );
    assert_eq!(
        form_value(&requests[0].1, "client_secret"),
        Some("client-s3cret")
    );
}

#[tokio::test]
async fn a_token_the_upstream_refused_is_replaced() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    let source = Arc::new(endpoint.source("client_credentials", ""));
    let principal = Principal::anonymous();
    let first = source.authorization(&principal).await.expect("first token");
    source.invalidate(&principal, &first);
    assert_eq!(authorization(&source, &principal).await, "Bearer token-2");
    source.invalidate(&principal, &first);
    assert_eq!(
        authorization(&source, &principal).await,
        "Bearer token-2",
        "a stale refusal does not drop the new token"
    );
    assert_eq!(endpoint.issued(), 2);
}

#[tokio::test]
async fn token_exchange_trades_each_callers_token_for_an_upstream_one() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    let source = Arc::new(endpoint.source(
        "token_exchange",
        "audience: pets-api\nresource: https://pets.example.com\n",
    ));
    assert!(source.needs_caller_token());
    let alice =
        Principal::new("alice", ["pets:read"]).with_token(Secret::from("caller-token-alice"));
    let bob = Principal::new("bob", ["pets:read"]).with_token(Secret::from("caller-token-bob"));
    let calls: Vec<_> = (0..20)
        .map(|index| {
            let source = source.clone();
            let principal = if index % 2 == 0 {
                alice.clone()
            } else {
                bob.clone()
            };
            tokio::spawn(async move {
                (
                    principal.subject.clone(),
                    authorization(&source, &principal).await,
                )
            })
        })
        .collect();
    let mut tokens: HashMap<String, String> = HashMap::new();
    for call in calls {
        let (subject, token) = call.await.expect("task");
        let known = tokens.entry(subject).or_insert_with(|| token.clone());
        assert_eq!(*known, token, "one exchanged token per caller");
    }
    assert_eq!(endpoint.issued(), 2, "one exchange per caller");
    assert_ne!(tokens["alice"], tokens["bob"]);
    let requests = endpoint.requests();
    let subject_tokens: Vec<&str> = requests
        .iter()
        .filter_map(|(_, form)| form_value(form, "subject_token"))
        .collect();
    assert!(
        subject_tokens.contains(&"caller-token-alice")
            && subject_tokens.contains(&"caller-token-bob")
    );
    let form = &requests[0].1;
    assert_eq!(
        form_value(form, "grant_type"),
        Some("urn:ietf:params:oauth:grant-type:token-exchange")
    );
    assert_eq!(
        form_value(form, "subject_token_type"),
        Some("urn:ietf:params:oauth:token-type:access_token")
    );
    assert_eq!(
        form_value(form, "requested_token_type"),
        Some("urn:ietf:params:oauth:token-type:access_token")
    );
    assert_eq!(form_value(form, "audience"), Some("pets-api"));
    assert_eq!(
        form_value(form, "resource"),
        Some("https://pets.example.com")
    );

    let key_holder = Principal::new("ci-bot", ["pets:read"]);
    let error = source
        .authorization(&key_holder)
        .await
        .expect_err("no caller token");
    expect!["token exchange needs the caller's OAuth access token, and this caller has none"]
        .assert_eq(&error.to_string());
}

#[tokio::test]
async fn a_refusing_token_endpoint_leaks_no_secret() {
    let endpoint = TokenEndpoint::start(3600, true).await;
    let source = endpoint.source("client_credentials", "");
    let error = source
        .authorization(&Principal::anonymous())
        .await
        .expect_err("refused");
    expect!["the token endpoint refused: 401 Unauthorized (invalid_client)"]
        .assert_eq(&error.to_string());
    let debug = format!("{error:?} {source:?}");
    assert!(!debug.contains("s3cret"), "{debug}");
}

#[tokio::test]
async fn basic_credentials_come_from_the_environment() {
    let value: Value =
        serde_saphyr::from_str("username: {env: PETS_USER}\npassword: {env: PETS_PASSWORD}\n")
            .expect("yaml");
    let mut diagnostics = Vec::new();
    let config = ferry::curation::auth::parse_upstream_credential(
        "basic",
        &value,
        "upstream_auth.basic",
        &mut diagnostics,
    )
    .expect("basic config");
    let env = |name: &str| match name {
        "PETS_USER" => Some("ferry".to_string()),
        "PETS_PASSWORD" => Some("pa:ss".to_string()),
        _ => None,
    };
    let source = Arc::new(CredentialSource::with_env(&config, token_pool(), env).expect("source"));
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ferry:pa:ss")
    );
    assert_eq!(
        authorization(&source, &Principal::anonymous()).await,
        expected
    );
    assert!(!format!("{source:?}").contains("pa:ss"));
    let missing =
        CredentialSource::with_env(&config, token_pool(), |_| None).expect_err("missing env");
    expect!["environment variable PETS_USER is not set (named by upstream_auth.basic)"]
        .assert_eq(&missing.to_string());
}

#[test]
fn the_introspection_secret_is_never_a_literal() {
    let check = |introspection: &str| {
        let yaml = format!(
            "oauth: {{resource: {RESOURCE}, issuer: {ISSUER}, introspection: {introspection}}}"
        );
        let value: Value = serde_saphyr::from_str(&yaml).expect("yaml");
        let mut diagnostics = Vec::new();
        let config = ferry::curation::auth::parse_auth(&value, "auth", &mut diagnostics);
        assert!(config.is_none());
        diagnostics_text(&diagnostics)
    };
    expect![[r#"
        error: a secret is never written in the file: name its environment variable (`{env: VAR}`)
          --> curation:auth.oauth.introspection.client_secret"#]]
    .assert_eq(&check(
        "{endpoint: 'https://auth.example.com/introspect', client_id: ferry, client_secret: hunter2}",
    ));
    expect![[r#"
        error: missing `client_secret: {env: VAR}`
          --> curation:auth.oauth.introspection"#]]
    .assert_eq(&check(
        "{endpoint: 'https://auth.example.com/introspect', client_id: ferry}",
    ));
}

#[test]
fn upstream_secrets_are_never_literals_and_identity_headers_carry_no_credentials() {
    let check = |kind: &str, yaml: &str| {
        let value: Value = serde_saphyr::from_str(yaml).expect("yaml");
        let mut diagnostics = Vec::new();
        let path = format!("upstream_auth.{kind}");
        let _ =
            ferry::curation::auth::parse_upstream_credential(kind, &value, &path, &mut diagnostics);
        diagnostics_text(&diagnostics)
    };
    expect![[r#"
        error: a secret is never written in the file: name its environment variable (`{env: VAR}`)
          --> curation:upstream_auth.basic.password"#]]
    .assert_eq(&check("basic", "username: ferry\npassword: hunter2\n"));
    expect![[r#"
        error: expected an https URL (plain http only for loopback addresses)
          --> curation:upstream_auth.client_credentials.token_url
        error: missing `client_secret: {env: VAR}`
          --> curation:upstream_auth.client_credentials"#]]
    .assert_eq(&check(
        "client_credentials",
        "token_url: http://auth.example.com/token\nclient_id: ferry\n",
    ));

    let identity = |yaml: &str| {
        let value: Value = serde_saphyr::from_str(yaml).expect("yaml");
        let mut diagnostics = Vec::new();
        let header = ferry::curation::auth::parse_upstream_identity(
            &value,
            "upstream_identity",
            &mut diagnostics,
        );
        (
            header.map(|name| name.to_string()),
            diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        identity("header: X-Ferry-Subject"),
        (Some("x-ferry-subject".to_string()), vec![])
    );
    let (header, diagnostics) = identity("header: Authorization");
    assert_eq!(header, None);
    expect![[r#"
        error: `Authorization` carries credentials; choose another header
          --> curation:upstream_identity.header"#]]
    .assert_eq(&diagnostics.join("\n"));
}

#[test]
fn the_identity_header_carries_the_callers_subject() {
    let name = axum::http::HeaderName::from_static("x-ferry-subject");
    let (_, value) = identity_header(&name, &Principal::new("alice@example.com", ["a"]));
    assert_eq!(value, "alice@example.com");
    let (_, value) = identity_header(&name, &Principal::new("zoë\n", ["a"]));
    assert_eq!(value, "zo%C3%AB%0A");
}

const TLS_DATA: &str = "tests/data/tls";

#[tokio::test]
async fn ferry_can_terminate_tls_itself() {
    let config = ferry::transport::tls::server_config(
        std::path::Path::new(&format!("{TLS_DATA}/localhost.crt")),
        std::path::Path::new(&format!("{TLS_DATA}/localhost.key")),
    )
    .expect("test certificate loads");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let listener = ferry::transport::tls::TlsListener::new(tcp, config).expect("listener");
    let port = axum::serve::Listener::local_addr(&listener)
        .expect("address")
        .port();
    let router = Router::new().route("/mcp", get(|| async { "over tls" }));
    tokio::spawn(async move { axum::serve(listener, router).await });

    let ca = std::fs::read(format!("{TLS_DATA}/ca.crt")).expect("test CA");
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&ca).expect("CA parses")])
        .build()
        .expect("client");
    let response = client
        .get(format!("https://localhost:{port}/mcp"))
        .send()
        .await
        .expect("https request");
    assert_eq!(response.version(), reqwest::Version::HTTP_2, "h2 by ALPN");
    assert_eq!(response.text().await.expect("body"), "over tls");

    // A client that does not trust the certificate, and one speaking plain HTTP, get nothing.
    let untrusting = reqwest::Client::builder()
        .tls_certs_only([])
        .build()
        .expect("client");
    assert!(
        untrusting
            .get(format!("https://localhost:{port}/mcp"))
            .send()
            .await
            .is_err()
    );
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/mcp"))
        .send()
        .await;
    assert!(plain.is_err() || plain.is_ok_and(|response| !response.status().is_success()));
    let again = client
        .get(format!("https://localhost:{port}/mcp"))
        .send()
        .await
        .expect("still serving after failed handshakes");
    assert!(again.status().is_success());
}

#[test]
fn unusable_tls_files_are_named_in_the_error() {
    let missing = ferry::transport::tls::server_config(
        std::path::Path::new(&format!("{TLS_DATA}/missing.crt")),
        std::path::Path::new(&format!("{TLS_DATA}/localhost.key")),
    )
    .expect_err("no such file");
    assert!(
        missing
            .to_string()
            .starts_with("cannot read the certificate chain tests/data/tls/missing.crt"),
        "{missing}"
    );
    let mismatched = ferry::transport::tls::server_config(
        std::path::Path::new(&format!("{TLS_DATA}/localhost.crt")),
        std::path::Path::new(&format!("{TLS_DATA}/ca.crt")),
    )
    .expect_err("a certificate is not a key");
    assert!(
        mismatched
            .to_string()
            .starts_with("cannot read the private key"),
        "{mismatched}"
    );
}

#[tokio::test]
async fn a_key_server_never_reached_is_503_not_a_bad_token() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address")
    };
    let yaml = format!(
        "oauth: {{resource: {RESOURCE}, issuer: {ISSUER}, jwks_uri: 'http://{closed}/jwks.json'}}\n"
    );
    let authenticator =
        Authenticator::with_env(Some(&auth_config(&yaml)), [], |_| None).expect("authenticator");
    let token = TestKey::rsa().mint("rsa-1", &claims("pets:read"));
    let refused = authenticator
        .authenticate(Some(&format!("Bearer {token}")))
        .await
        .expect_err("no keys yet");
    assert_eq!(refused.status().as_u16(), 503);
}

/// An upstream client for one `GET /pets` tool on `upstream`, with `upstream_auth:` as
/// written in `auth_yaml` and the caller named in `X-Ferry-Subject`.
fn upstream_client(
    upstream: &crate::upstream::TestUpstream,
    auth_yaml: &str,
) -> (ferry::upstream::Upstream, ferry::catalog::Tool) {
    let value: Value = serde_saphyr::from_str(auth_yaml).expect("test YAML parses");
    let mut diagnostics = Vec::new();
    let auth =
        ferry::curation::call::parse_upstream_auth(&value, "upstream_auth", &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let tool = crate::upstream::tool("listPets", http::Method::GET, "/pets", Vec::new());
    let env = |name: &str| (name == "FERRY_CLIENT_SECRET").then(|| "client-s3cret".to_string());
    let mut catalog = crate::upstream::catalog(&upstream.base, std::slice::from_ref(&tool));
    catalog.apis[0].upstream_auth = auth;
    catalog.apis[0].identity_header = Some(http::HeaderName::from_static("x-ferry-subject"));
    let client = ferry::upstream::Upstream::with_env(&catalog, env).expect("client");
    (client, tool)
}

/// Whether `needle` appears anywhere in what the upstream received.
fn upstream_saw(upstream: &crate::upstream::TestUpstream, needle: &str) -> bool {
    upstream.requests().iter().any(|request| {
        request.uri.contains(needle)
            || String::from_utf8_lossy(&request.body).contains(needle)
            || request
                .headers
                .values()
                .any(|value| String::from_utf8_lossy(value.as_bytes()).contains(needle))
    })
}

#[tokio::test]
async fn the_upstream_sees_ferrys_token_and_the_callers_name_never_the_callers_token() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    let upstream = crate::upstream::TestUpstream::start(|request, _| {
        let status = if request.header("authorization") == Some("Bearer token-1") {
            401
        } else {
            200
        };
        crate::upstream::Reply::Now(crate::upstream::respond(status, &[], "{}"))
    })
    .await;
    let yaml = format!(
        "client_credentials: {{token_url: 'http://{}/token', client_id: ferry, client_secret: {{env: FERRY_CLIENT_SECRET}}}}",
        endpoint.address
    );
    let (client, tool) = upstream_client(&upstream, &yaml);
    let caller_token = "caller-access-token-never-forwarded";
    let alice = Principal::new("alice", ["pets:read"]).with_token(Secret::from(caller_token));

    let first = crate::upstream::served(
        &tool,
        client.call_as(&tool, &serde_json::Map::new(), &alice).await,
    );
    assert!(
        !first.is_error,
        "token-1 was refused, forgotten, and the call sent again with token-2"
    );
    let second = crate::upstream::served(
        &tool,
        client.call_as(&tool, &serde_json::Map::new(), &alice).await,
    );
    assert!(!second.is_error, "token-2 is reused");

    let requests = upstream.requests();
    let sent: Vec<(Option<&str>, Option<&str>)> = requests
        .iter()
        .map(|request| {
            (
                request.header("authorization"),
                request.header("x-ferry-subject"),
            )
        })
        .collect();
    assert_eq!(
        sent,
        [
            (Some("Bearer token-1"), Some("alice")),
            (Some("Bearer token-2"), Some("alice")),
            (Some("Bearer token-2"), Some("alice"))
        ]
    );
    assert_eq!(endpoint.issued(), 2);
    assert!(!upstream_saw(&upstream, caller_token));
    assert!(!upstream_saw(&upstream, "client-s3cret"));
}

#[tokio::test]
async fn a_long_running_operations_polls_send_the_token_its_call_ended_with() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    // token-1 is refused; the 202 that token-2 gets names a job whose status wants token-2.
    let upstream = crate::upstream::TestUpstream::start(|request, _| {
        let reply = match (request.header("authorization"), request.uri.as_str()) {
            (Some("Bearer token-1"), _) => crate::upstream::respond(401, &[], "{}"),
            (Some("Bearer token-2"), "/pets") => {
                crate::upstream::respond(202, &[("location", "/jobs/1"), ("retry-after", "0")], "")
            }
            (Some("Bearer token-2"), "/jobs/1") => crate::upstream::respond(
                200,
                &[("content-type", "application/json")],
                r#"{"done":true}"#,
            ),
            _ => crate::upstream::respond(403, &[], "{}"),
        };
        crate::upstream::Reply::Now(reply)
    })
    .await;
    let yaml = format!(
        "client_credentials: {{token_url: 'http://{}/token', client_id: ferry, client_secret: {{env: FERRY_CLIENT_SECRET}}}}",
        endpoint.address
    );
    let (_, mut tool) = upstream_client(&upstream, &yaml);
    tool.operation_mut().expect("an operation").long_running =
        Some(Box::new(ferry::catalog::LongRunning {
            status: ferry::catalog::long_running::UrlAt::Header(http::header::LOCATION),
            state: None,
            result: ferry::catalog::long_running::ResultAt::Status,
            interval: std::time::Duration::from_millis(10),
            cancel: None,
            inferred: false,
        }));
    let env = |name: &str| (name == "FERRY_CLIENT_SECRET").then(|| "client-s3cret".to_string());
    let mut catalog = crate::upstream::catalog(&upstream.base, std::slice::from_ref(&tool));
    let value: Value = serde_saphyr::from_str(&yaml).expect("test YAML parses");
    let mut diagnostics = Vec::new();
    catalog.apis[0].upstream_auth =
        ferry::curation::call::parse_upstream_auth(&value, "upstream_auth", &mut diagnostics);
    let client = ferry::upstream::Upstream::with_env(&catalog, env).expect("client");
    let alice = Principal::new("alice", ["pets:read"]);
    let operation = tool.operation().expect("an operation");
    let trace = ferry::trace::Context::new(None, None);
    let context = ferry::upstream::CallContext {
        idempotency_key: None,
        trace: &trace,
        progress: None,
    };
    let outcome = ferry::run::follow::call(
        &client,
        (&client.route(operation), operation),
        &serde_json::Map::new(),
        &alice,
        &context,
        false,
        &mut ferry::upstream::CallStats::default(),
    )
    .await;
    let result = crate::upstream::served(&tool, outcome);
    assert!(!result.is_error, "{:?}", result.content);
    let sent: Vec<(String, Option<String>)> = upstream
        .requests()
        .iter()
        .map(|request| {
            let authorization = request.header("authorization").map(str::to_owned);
            (request.uri.clone(), authorization)
        })
        .collect();
    let with = |uri: &str, token: &str| (uri.to_owned(), Some(format!("Bearer {token}")));
    assert_eq!(
        sent,
        [
            with("/pets", "token-1"),
            with("/pets", "token-2"),
            with("/jobs/1", "token-2")
        ],
        "the poll of /jobs/1 sends the token the call ended with"
    );
}

#[tokio::test]
async fn token_exchange_sends_the_upstream_a_token_issued_for_it() {
    let endpoint = TokenEndpoint::start(3600, false).await;
    let upstream = crate::upstream::TestUpstream::start(|_, _| {
        crate::upstream::Reply::Now(crate::upstream::respond(200, &[], "{}"))
    })
    .await;
    let yaml = format!(
        "token_exchange: {{token_url: 'http://{}/token', client_id: ferry, client_secret: {{env: FERRY_CLIENT_SECRET}}, audience: pets-api}}",
        endpoint.address
    );
    let (client, tool) = upstream_client(&upstream, &yaml);
    let caller_token = "caller-access-token-for-ferry-only";
    let alice = Principal::new("alice", ["pets:read"]).with_token(Secret::from(caller_token));
    let result = crate::upstream::served(
        &tool,
        client.call_as(&tool, &serde_json::Map::new(), &alice).await,
    );
    assert!(!result.is_error);
    let requests = upstream.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer token-1"));
    assert!(!upstream_saw(&upstream, caller_token));
    let exchanged = endpoint.requests();
    assert_eq!(
        form_value(&exchanged[0].1, "subject_token"),
        Some(caller_token)
    );

    let without_token = crate::upstream::served(
        &tool,
        client
            .call_as(
                &tool,
                &serde_json::Map::new(),
                &Principal::new("ci-bot", ["pets:read"]),
            )
            .await,
    );
    assert!(without_token.is_error);
    assert_eq!(
        upstream.requests().len(),
        1,
        "nothing is sent without a credential"
    );
}

/// What a caller gets over HTTP: the status, the challenge, and the tool names listed.
async fn ask(url: &str, method: &str, params: Value, authorization: Option<&str>) -> String {
    let (body, headers) = crate::support::modern(method, params);
    let mut headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    if let Some(authorization) = authorization {
        headers.push(("authorization", authorization));
        headers.push(("cookie", "session=caller-session-cookie"));
    }
    let answer = crate::support::post(url, &body, &headers).await;
    let challenge = answer
        .headers
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("-");
    let detail = match answer.status {
        200 if method == "tools/list" => {
            let json = answer.json();
            let names: Vec<&str> = json["result"]["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|tool| tool["name"].as_str())
                .collect();
            format!("{} {}", json["result"]["cacheScope"], names.join(","))
        }
        200 => format!("isError={}", answer.json()["result"]["isError"]),
        _ => String::new(),
    };
    format!("{} {challenge} {detail}", answer.status)
        .trim_end()
        .to_string()
}

/// ferry over HTTP with OAuth against `jwks`, serving `listPets` (needs `pets:read`) and
/// `createPet` (needs `pets:write`) from an upstream that answers every call `200 {"id":1}`.
async fn scoped_pets_server(
    jwks: &JwksServer,
    identity_header: Option<http::HeaderName>,
) -> (crate::upstream::TestUpstream, crate::support::Running) {
    let upstream = crate::upstream::TestUpstream::start(|_, _| {
        crate::upstream::Reply::Now(crate::upstream::respond(
            200,
            &[("content-type", "application/json")],
            r#"{"id":1}"#,
        ))
    })
    .await;
    let list_pets = crate::upstream::tool("listPets", http::Method::GET, "/pets", Vec::new());
    let mut create_pet =
        crate::upstream::tool("createPet", http::Method::POST, "/pets", Vec::new());
    create_pet.scopes = Some(vec!["pets:write".to_string()]);
    let mut catalog = crate::upstream::catalog(&upstream.base, &[create_pet, list_pets]);
    catalog.apis[0].identity_header = identity_header;
    let authenticator = oauth(jwks, "");
    let client = ferry::upstream::Upstream::new(&catalog).expect("client");
    let server = ferry::mcp::Server::new(
        &catalog,
        Some(client),
        ferry::mcp::ServerOptions {
            authenticator,
            ..Default::default()
        },
    );
    let running = crate::support::start(server, Default::default()).await;
    (upstream, running)
}

#[tokio::test]
async fn over_http_callers_list_and_call_only_what_their_scopes_reach() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let (upstream, running) = scoped_pets_server(
        &jwks,
        Some(http::HeaderName::from_static("x-ferry-subject")),
    )
    .await;
    let url = running.url.as_str();
    let reader_token = rsa.mint("rsa-1", &claims("pets:read"));
    let reader = format!("Bearer {reader_token}");
    let writer = format!(
        "Bearer {}",
        rsa.mint("rsa-1", &claims("pets:read pets:write"))
    );
    let call = |name: &str| json!({"name": name, "arguments": {}});

    let mut report = String::new();
    for (who, authorization) in [
        ("nobody", None),
        ("reader", Some(reader.as_str())),
        ("writer", Some(writer.as_str())),
    ] {
        writeln!(
            report,
            "{who} lists: {}",
            ask(url, "tools/list", json!({}), authorization).await
        )
        .expect("write");
        for tool in ["listPets", "createPet"] {
            writeln!(
                report,
                "{who} calls {tool}: {}",
                ask(url, "tools/call", call(tool), authorization).await
            )
            .expect("write");
        }
    }
    expect![[r#"
        nobody lists: 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="pets:read pets:write"
        nobody calls listPets: 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="pets:read pets:write"
        nobody calls createPet: 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="pets:read pets:write"
        reader lists: 200 - "private" listPets
        reader calls listPets: 200 - isError=null
        reader calls createPet: 403 Bearer error="insufficient_scope", scope="pets:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="the token lacks a scope this tool needs"
        writer lists: 200 - "private" createPet,listPets
        writer calls listPets: 200 - isError=null
        writer calls createPet: 200 - isError=null
    "#]]
    .assert_eq(&report);

    assert_eq!(
        ask(url, "tools/list", json!({}), Some(&reader)).await,
        "200 - \"private\" listPets",
        "a list written once for a scope set is served again"
    );

    let requests = upstream.requests();
    assert_eq!(requests.len(), 3, "only permitted calls reach the upstream");
    assert!(
        requests
            .iter()
            .all(|request| request.header("x-ferry-subject") == Some("alice"))
    );
    assert!(
        requests
            .iter()
            .all(|request| request.header("authorization").is_none())
    );
    assert!(!upstream_saw(&upstream, &reader_token));
    assert!(!upstream_saw(&upstream, "caller-session-cookie"));

    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let metadata = reqwest::get(metadata_url).await.expect("metadata");
    assert_eq!(metadata.status(), 200);
}

#[test]
fn the_curation_file_carries_auth_scopes_and_the_identity_header() {
    let text = "auth:\n  default_scopes: [pets:read]\n  api_keys: [{subject: ci-bot, key: {env: CI_KEY}}]\nupstream_identity: {header: X-Ferry-Subject}\ntools:\n  createPet: {scopes: [pets:write]}\n  listPets: {}\n";
    let (curation, diagnostics) =
        ferry::curation::parse(text, "ferry.yaml", std::path::PathBuf::new()).expect("parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(
        curation.auth.map(|auth| auth.default_scopes),
        Some(vec!["pets:read".to_string()])
    );
    assert_eq!(
        curation.upstream_identity.map(|name| name.to_string()),
        Some("x-ferry-subject".to_string())
    );
    let scopes: Vec<Option<Vec<String>>> = curation
        .tools
        .iter()
        .map(|tool| tool.scopes.clone())
        .collect();
    assert_eq!(scopes, [Some(vec!["pets:write".to_string()]), None]);

    let (_, diagnostics) = ferry::curation::parse(
        "tools:\n  createPet: {scopes: [pets:write]}\n",
        "ferry.yaml",
        std::path::PathBuf::new(),
    )
    .expect("parses");
    expect![[r#"
        warning: scopes have no effect without an `auth:` section: every caller reaches every tool
          --> curation:tools.createPet.scopes"#]]
    .assert_eq(&diagnostics_text(&diagnostics));
}

#[tokio::test]
async fn the_rmcp_client_works_with_a_bearer_token_and_is_refused_without() {
    let rsa = TestKey::rsa();
    let jwks = JwksServer::start(vec![rsa.jwk("rsa-1")]).await;
    let (upstream, running) = scoped_pets_server(&jwks, Default::default()).await;

    let token = rsa.mint("rsa-1", &claims("pets:read"));
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            running.url.clone(),
        )
        .auth_header(token.clone());
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    let session = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        (),
        transport,
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("discover with a token");
    let tools = session.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["listPets"]);
    let result = session
        .call_tool(rmcp::model::CallToolRequestParams::new("listPets"))
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true));
    session.cancel().await.expect("close");
    assert!(!upstream_saw(&upstream, &token));

    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(running.url.clone());
    let refused = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        (),
        transport,
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await;
    assert!(refused.is_err(), "no token, no session");
}

/// A fresh directory holding the demo document, its Arazzo workflows and `curation`.
fn demo_files(curation: &str) -> std::path::PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let dir = std::env::temp_dir().join(format!("ferry-auth-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("openapi.yaml"), ferry::demo::OPENAPI).expect("write document");
    std::fs::write(dir.join("pets.arazzo.yaml"), ferry::demo::ARAZZO).expect("write workflows");
    std::fs::write(dir.join("ferry.yaml"), curation).expect("write curation");
    dir
}

#[tokio::test]
async fn ferry_serve_reads_auth_from_the_curation_and_guards_its_endpoint() {
    let pets = ferry::demo::start().await.expect("pets API");
    let curation = ferry::demo::CURATION.replace(
        "    name: create_pet\n",
        "    name: create_pet\n    scopes: [pets:write]\n",
    ) + "auth:\n  api_keys: [{subject: ci-bot, key: {env: FERRY_TEST_CI_KEY}, scopes: [pets:read]}]\n";
    let dir = demo_files(&curation);
    let config = dir.join("ferry.yaml");
    let config = config.to_str().expect("utf-8 path");
    let server = crate::support::ServeProcess::start(
        &[
            "serve",
            "-c",
            config,
            "--upstream",
            &pets,
            "--listen",
            "127.0.0.1:0",
        ],
        &[("FERRY_TEST_CI_KEY", "ci-key-value")],
    )
    .await
    .expect("ferry serve announces its endpoint");
    let url = server.url.clone();
    let anonymous = ask(&url, "tools/list", json!({}), None).await;
    let with_key = ask(&url, "tools/list", json!({}), Some("Bearer ci-key-value")).await;
    let refused = ask(
        &url,
        "tools/call",
        json!({"name": "create_pet", "arguments": {"name": "Rex"}}),
        Some("Bearer ci-key-value"),
    )
    .await;
    drop(server);
    expect![[r#"401 Bearer scope="pets:write""#]].assert_eq(&anonymous);
    expect![[r#"200 - "private" delete_pet,get_pet,list_pets"#]].assert_eq(&with_key);
    expect![[r#"403 Bearer error="insufficient_scope", scope="pets:write", error_description="the token lacks a scope this tool needs""#]]
        .assert_eq(&refused);

    let open = demo_files(ferry::demo::CURATION);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "-c"])
        .arg(open.join("ferry.yaml"))
        .args(["--upstream", &pets, "--listen", "0.0.0.0:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ferry runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(open);
}

#[test]
fn token_exchange_without_oauth_callers_is_an_error_in_the_file() {
    let text = "upstream: https://pets.example.com\nupstream_auth:\n  token_exchange: {token_url: 'https://auth.example.com/token', client_id: ferry, client_secret: {env: S}}\n";
    let (_, diagnostics) =
        ferry::curation::parse(text, "ferry.yaml", std::path::PathBuf::new()).expect("parses");
    expect![[r#"
        error: token exchange trades the caller's OAuth access token: it needs `auth: {oauth: ...}`
          --> curation:upstream_auth.token_exchange"#]]
    .assert_eq(&diagnostics_text(&diagnostics));
}

/// Two endpoints from one process (`endpoints:`): `/mcp/read` serves the pets API's reads
/// to tokens for its own audience, `/mcp/admin` its writes to tokens for another; a token for
/// one is refused by the other with that endpoint's own challenge, and each publishes its own
/// protected resource metadata.
#[tokio::test]
async fn two_endpoints_serve_their_own_tools_to_their_own_audiences() {
    let key = TestKey::ec();
    let jwks = JwksServer::start(vec![key.jwk("k1")]).await;
    let pets = ferry::demo::start().await.expect("pets API");
    let oauth = |resource: &str| {
        format!(
            "{{oauth: {{resource: '{resource}', issuer: '{ISSUER}', jwks_uri: '{}'}}}}",
            jwks.uri()
        )
    };
    let curation = format!(
        "openapi: ./openapi.yaml
upstream: {pets}
tools: {{listPets: {{}}, getPet: {{}}, createPet: {{}}, deletePet: {{}}}}
endpoints:
  read:
    auth: {}
    tools: {{read_only: true}}
  admin:
    path: /mcp/admin
    server: {{name: pets-admin}}
    auth: {}
    tools: {{read_only: false}}
",
        oauth("https://mcp.example.com/mcp/read"),
        oauth("https://mcp.example.com/mcp/admin"),
    );
    let dir = demo_files(&curation);
    let config = dir.join("ferry.yaml");
    let (code, out, err) = {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["tools", "--compact", "--endpoint", "admin", "-c"])
            .arg(&config)
            .output()
            .expect("ferry tools");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "{err}");
    let admin: Vec<String> = serde_json::from_str::<Value>(&out)
        .expect("tools JSON")
        .as_array()
        .expect("a list")
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(admin, ["createPet", "deletePet"]);

    let server = crate::support::ServeProcess::start(
        &[
            "serve",
            "-c",
            config.to_str().expect("utf-8 path"),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    )
    .await
    .expect("ferry serves two endpoints");
    let read_url = server.url.clone();
    assert!(read_url.ends_with("/mcp/read"), "{read_url}");
    let base = read_url.trim_end_matches("/mcp/read").to_string();
    let admin_url = format!("{base}/mcp/admin");
    let token = |audience: &str, scope: &str| {
        let claims = with(
            claims(scope),
            "aud",
            json!(format!("https://mcp.example.com{audience}")),
        );
        format!("Bearer {}", key.mint("k1", &claims))
    };
    let reader = token("/mcp/read", "");
    let admin = token("/mcp/admin", "");
    let mut seen = Vec::new();
    for (label, url, authorization) in [
        ("read, read token", &read_url, &reader),
        ("read, admin token", &read_url, &admin),
        ("admin, admin token", &admin_url, &admin),
        ("admin, read token", &admin_url, &reader),
    ] {
        let answer = ask(url, "tools/list", json!({}), Some(authorization)).await;
        seen.push(format!("{label}: {answer}"));
    }
    expect![[r#"
        read, read token: 200 - "public" getPet,listPets
        read, admin token: 401 Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp/read", error_description="the token was issued for another resource"
        admin, admin token: 200 - "public" createPet,deletePet
        admin, read token: 401 Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp/admin", error_description="the token was issued for another resource""#]]
    .assert_eq(&seen.join("\n"));
    let client = crate::support::client();
    for path in ["/mcp/read", "/mcp/admin"] {
        let metadata: Value = client
            .get(format!("{base}/.well-known/oauth-protected-resource{path}"))
            .send()
            .await
            .expect("metadata")
            .json()
            .await
            .expect("metadata JSON");
        assert_eq!(
            metadata["resource"],
            format!("https://mcp.example.com{path}"),
            "{metadata}"
        );
    }
    // A call through the admin endpoint reaches the pets API; the read endpoint has no such
    // tool.
    let created = ask(
        &admin_url,
        "tools/call",
        json!({"name": "createPet", "arguments": {"name": "Rex", "species": "dog"}}),
        Some(&admin),
    )
    .await;
    assert_eq!(created, "200 - isError=null");
    let (body, headers) = crate::support::modern(
        "tools/call",
        json!({"name": "createPet", "arguments": {"name": "Rex", "species": "dog"}}),
    );
    let mut headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    headers.push(("authorization", &reader));
    let elsewhere = crate::support::post(&read_url, &body, &headers)
        .await
        .json();
    assert!(elsewhere["result"].is_null(), "{elsewhere}");
    assert!(
        elsewhere["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("createPet"),
        "the read endpoint does not serve createPet: {elsewhere}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}
