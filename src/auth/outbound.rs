//! Credentials ferry presents to the upstream on its own behalf: HTTP basic, OAuth 2.0 client
//! credentials, and RFC 8693 token exchange of the caller's validated token, plus an optional
//! header naming the caller. The caller's own `Authorization` header and cookies are never
//! among them: the upstream sees ferry's credential, or a token issued for the upstream.
//!
//! Tokens are cached until shortly before they expire. When a token must be fetched, one
//! request goes to the token endpoint and every concurrent caller waits for its answer
//! (per caller token, for token exchange).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue};
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

pub use crate::access::{
    ClientAuth, EnvOrLiteral, OutboundCredential, TokenClientConfig, is_credential_header,
};

use super::Principal;
use super::introspection::basic_authorization;
use super::secret::Secret;
use crate::client::{self, Failure, Pool};

/// Why a credential could not be built at start.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("environment variable {variable} is not set (named by {location})")]
    MissingEnv { variable: String, location: String },
    #[error(
        "environment variable {variable} holds a value that cannot be sent in a header (named by {location})"
    )]
    InvalidEnv { variable: String, location: String },
    #[error("{0} must be https, or http to a loopback address")]
    InsecureUrl(String),
}

/// Why no credential could be attached to a call. The messages name no secret; the
/// upstream call fails as a gateway fault.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("cannot reach the token endpoint: {0}")]
    Request(#[from] Failure),
    #[error("the token endpoint refused: {status}{}", oauth_error.as_deref().map(|code| format!(" ({code})")).unwrap_or_default())]
    Refused {
        status: http::StatusCode,
        oauth_error: Option<String>,
    },
    #[error("the token endpoint's answer has no usable bearer access_token")]
    Shape,
    #[error("token exchange needs the caller's OAuth access token, and this caller has none")]
    NoCallerToken,
}

/// What the upstream client asks for on every call: the `Authorization` value to attach now,
/// for this principal.
pub struct CredentialSource {
    kind: SourceKind,
}

enum SourceKind {
    Static(HeaderValue),
    ClientCredentials(TokenClient),
    TokenExchange(TokenClient),
}

impl std::fmt::Debug for CredentialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            SourceKind::Static(_) => "basic",
            SourceKind::ClientCredentials(_) => "client_credentials",
            SourceKind::TokenExchange(_) => "token_exchange",
        };
        f.debug_struct("CredentialSource")
            .field("kind", &kind)
            .finish_non_exhaustive()
    }
}

impl CredentialSource {
    /// Reads the secrets `config` names from the environment. `client` is the pool token
    /// requests go out on (the upstream client's own will do).
    pub fn new(
        config: &OutboundCredential,
        client: Pool,
    ) -> Result<CredentialSource, OutboundError> {
        CredentialSource::with_env(config, client, |name| std::env::var(name).ok())
    }

    /// [`CredentialSource::new`] with the environment given as a function, for tests.
    pub fn with_env(
        config: &OutboundCredential,
        client: Pool,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<CredentialSource, OutboundError> {
        let kind = match config {
            OutboundCredential::Basic {
                username,
                password_env,
            } => {
                let location = "upstream_auth.basic";
                let username = resolve(username, &env, location)?;
                let password = read_env(password_env, &env, location)?;
                let mut value =
                    HeaderValue::from_str(&basic_authorization_plain(&username, &password))
                        .map_err(|_| OutboundError::InvalidEnv {
                            variable: password_env.clone(),
                            location: location.to_string(),
                        })?;
                value.set_sensitive(true);
                SourceKind::Static(value)
            }
            OutboundCredential::ClientCredentials(config) => SourceKind::ClientCredentials(
                TokenClient::new(config, client, &env, "upstream_auth.client_credentials")?,
            ),
            OutboundCredential::TokenExchange(config) => SourceKind::TokenExchange(
                TokenClient::new(config, client, &env, "upstream_auth.token_exchange")?,
            ),
        };
        Ok(CredentialSource { kind })
    }

    /// Whether this credential is made from the caller's token (token exchange): then the
    /// inbound side must be OAuth.
    pub fn needs_caller_token(&self) -> bool {
        matches!(self.kind, SourceKind::TokenExchange(_))
    }

    /// The `Authorization` header value to send upstream now on behalf of `principal`
    /// (marked sensitive, so it is left out of HTTP debug output).
    pub async fn authorization(
        &self,
        principal: &Principal,
    ) -> Result<HeaderValue, CredentialError> {
        match &self.kind {
            SourceKind::Static(value) => Ok(value.clone()),
            SourceKind::ClientCredentials(client) => {
                client
                    .cached(CacheKey::Shared, || client.client_credentials())
                    .await
            }
            SourceKind::TokenExchange(client) => {
                let subject_token = principal.token().ok_or(CredentialError::NoCallerToken)?;
                let key =
                    CacheKey::Caller(Sha256::digest(subject_token.expose().as_bytes()).into());
                client.cached(key, || client.exchange(subject_token)).await
            }
        }
    }

    /// Forgets a token the upstream refused (401), so the next call fetches a new one. A
    /// token already replaced by another caller is left alone.
    pub fn invalidate(&self, principal: &Principal, rejected: &HeaderValue) {
        let (client, key) = match &self.kind {
            SourceKind::Static(_) => return,
            SourceKind::ClientCredentials(client) => (client, CacheKey::Shared),
            SourceKind::TokenExchange(client) => match principal.token() {
                Some(token) => (
                    client,
                    CacheKey::Caller(Sha256::digest(token.expose().as_bytes()).into()),
                ),
                None => return,
            },
        };
        client.invalidate(&key, rejected);
    }
}

/// The header naming the caller upstream (`upstream_identity: {header: NAME}`), with the
/// principal's subject as its value; control and non-ASCII characters are percent-encoded.
pub fn identity_header(name: &HeaderName, principal: &Principal) -> (HeaderName, HeaderValue) {
    let encoded =
        percent_encoding::utf8_percent_encode(&principal.subject, percent_encoding::CONTROLS)
            .to_string();
    let value =
        HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static("unknown"));
    (name.clone(), value)
}

/// Time before expiry at which a cached token is replaced, at most.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);
/// Lifetime assumed when the token endpoint does not say (`expires_in` absent).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// Exchanged tokens kept at most, one per caller token.
const MAX_CACHED_CALLERS: usize = 4096;
/// Largest token endpoint answer accepted.
const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

#[derive(Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    Shared,
    /// SHA-256 of the caller's token: the token itself is never a map key.
    Caller([u8; 32]),
}

struct CachedToken {
    value: HeaderValue,
    refresh_at: Instant,
}

/// One slot per cache key: the token, and the gate that makes one caller fetch while the
/// others wait.
#[derive(Default)]
struct Slot {
    token: RwLock<Option<CachedToken>>,
    fetching: tokio::sync::Mutex<()>,
}

struct TokenClient {
    token_url: Url,
    client_id: String,
    client_secret: Secret,
    client_auth: ClientAuth,
    scopes: Vec<String>,
    audience: Option<String>,
    resource: Option<String>,
    client: Pool,
    slots: Mutex<HashMap<CacheKey, Arc<Slot>>>,
}

impl TokenClient {
    fn new(
        config: &TokenClientConfig,
        client: Pool,
        env: &impl Fn(&str) -> Option<String>,
        location: &str,
    ) -> Result<TokenClient, OutboundError> {
        if !super::is_secure_or_loopback(&config.token_url) {
            return Err(OutboundError::InsecureUrl(format!("{location}.token_url")));
        }
        Ok(TokenClient {
            token_url: config.token_url.clone(),
            client_id: resolve(&config.client_id, env, location)?,
            client_secret: Secret::from(read_env(&config.client_secret_env, env, location)?),
            client_auth: config.client_auth,
            scopes: config.scopes.clone(),
            audience: config.audience.clone(),
            resource: config.resource.clone(),
            client,
            slots: Mutex::new(HashMap::new()),
        })
    }

    fn slot(&self, key: &CacheKey) -> Arc<Slot> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !slots.contains_key(key) && slots.len() >= MAX_CACHED_CALLERS {
            let now = Instant::now();
            slots.retain(|_, slot| slot.fresh_at(now).is_some());
            if slots.len() >= MAX_CACHED_CALLERS {
                slots.clear();
            }
        }
        slots.entry(key.clone()).or_default().clone()
    }

    /// The cached token for `key`, or a new one from `fetch`; concurrent callers of one key
    /// share one fetch.
    async fn cached<F, Fut>(&self, key: CacheKey, fetch: F) -> Result<HeaderValue, CredentialError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(String, Duration), CredentialError>>,
    {
        let slot = self.slot(&key);
        if let Some(value) = slot.fresh_at(Instant::now()) {
            return Ok(value);
        }
        let _gate = slot.fetching.lock().await;
        if let Some(value) = slot.fresh_at(Instant::now()) {
            return Ok(value);
        }
        let (token, lifetime) = fetch().await?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| CredentialError::Shape)?;
        value.set_sensitive(true);
        let margin = REFRESH_MARGIN.min(lifetime / 10);
        let refresh_at = Instant::now() + lifetime.saturating_sub(margin);
        *slot
            .token
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(CachedToken {
            value: value.clone(),
            refresh_at,
        });
        Ok(value)
    }

    fn invalidate(&self, key: &CacheKey, rejected: &HeaderValue) {
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(key)
            .cloned();
        if let Some(slot) = slot {
            let mut token = slot
                .token
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if token
                .as_ref()
                .is_some_and(|cached| cached.value == rejected)
            {
                *token = None;
            }
        }
    }

    async fn client_credentials(&self) -> Result<(String, Duration), CredentialError> {
        let mut form = vec![("grant_type", "client_credentials".to_string())];
        self.common_parameters(&mut form);
        self.request(form).await
    }

    async fn exchange(
        &self,
        subject_token: &Secret,
    ) -> Result<(String, Duration), CredentialError> {
        const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_string(),
            ),
            ("subject_token", subject_token.expose().to_string()),
            ("subject_token_type", ACCESS_TOKEN.to_string()),
            ("requested_token_type", ACCESS_TOKEN.to_string()),
        ];
        self.common_parameters(&mut form);
        self.request(form).await
    }

    fn common_parameters(&self, form: &mut Vec<(&'static str, String)>) {
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        form.extend(
            self.audience
                .iter()
                .map(|audience| ("audience", audience.clone())),
        );
        form.extend(
            self.resource
                .iter()
                .map(|resource| ("resource", resource.clone())),
        );
    }

    async fn request(
        &self,
        mut form: Vec<(&'static str, String)>,
    ) -> Result<(String, Duration), CredentialError> {
        let mut request = client::Request::to(http::Method::POST, &self.token_url)?;
        let headers = &mut request.headers;
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        match self.client_auth {
            ClientAuth::Basic => {
                let mut value = HeaderValue::from_str(&basic_authorization(
                    &self.client_id,
                    self.client_secret.expose(),
                ))
                .map_err(|_| CredentialError::Shape)?;
                value.set_sensitive(true);
                headers.insert(http::header::AUTHORIZATION, value);
            }
            ClientAuth::Post => {
                form.push(("client_id", self.client_id.clone()));
                form.push(("client_secret", self.client_secret.expose().to_string()));
            }
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        request.body = Some(body.into());
        let response = self.client.send(&request, MAX_TOKEN_RESPONSE_BYTES).await?;
        if response.truncated {
            return Err(CredentialError::Shape);
        }
        let status = response.status;
        let answer: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
        if !status.is_success() {
            // Only the RFC 6749 error code is kept: descriptions may echo what was sent.
            let oauth_error = answer
                .get("error")
                .and_then(Value::as_str)
                .filter(|code| {
                    code.bytes()
                        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
                })
                .map(str::to_string);
            tracing::warn!(token_url = %self.token_url, %status, oauth_error, "token request refused");
            return Err(CredentialError::Refused {
                status,
                oauth_error,
            });
        }
        let token_type = answer
            .get("token_type")
            .and_then(Value::as_str)
            .unwrap_or("Bearer");
        let token = answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|token| !token.is_empty());
        let (Some(token), true) = (token, token_type.eq_ignore_ascii_case("bearer")) else {
            return Err(CredentialError::Shape);
        };
        let lifetime = answer
            .get("expires_in")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIFETIME, Duration::from_secs);
        tracing::debug!(token_url = %self.token_url, lifetime_s = lifetime.as_secs(), "fetched an upstream token");
        Ok((token.to_string(), lifetime))
    }
}

impl Slot {
    /// The cached token, while it is not yet due for refresh at `now`.
    fn fresh_at(&self, now: Instant) -> Option<HeaderValue> {
        let token = self
            .token
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        token
            .as_ref()
            .filter(|cached| now < cached.refresh_at)
            .map(|cached| cached.value.clone())
    }
}

/// `Basic base64(user:password)` as RFC 7617 has it (no form encoding, unlike OAuth clients).
fn basic_authorization_plain(username: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"))
    )
}

fn read_env(
    variable: &str,
    env: &impl Fn(&str) -> Option<String>,
    location: &str,
) -> Result<String, OutboundError> {
    env(variable)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| OutboundError::MissingEnv {
            variable: variable.to_string(),
            location: location.to_string(),
        })
}

fn resolve(
    value: &EnvOrLiteral,
    env: &impl Fn(&str) -> Option<String>,
    location: &str,
) -> Result<String, OutboundError> {
    match value {
        EnvOrLiteral::Literal(text) => Ok(text.clone()),
        EnvOrLiteral::Env(variable) => read_env(variable, env, location),
    }
}
