//! Who may use ferry, and with what: inbound authentication (none, static API keys, or
//! OAuth 2.1 resource server), per-tool scopes, and the credentials ferry itself presents
//! upstream ([`outbound`]).
//!
//! The transport asks an [`Authenticator`] about every request before dispatch:
//! [`Authenticator::authenticate`] turns the `Authorization` header into a [`Principal`] or a
//! [`Challenge`] (401), [`Authenticator::authorize`] refuses a tool the principal lacks a
//! scope for (403), and [`Authenticator::may_use`] filters `tools/list`. The caller's token
//! stays inside the [`Principal`]; it is never forwarded upstream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use url::Url;

mod challenge;
mod introspection;
mod jwks;
mod metadata;
pub mod outbound;
mod principal;
mod scopes;
mod secret;

pub use crate::access::{
    ApiKey, AuthConfig, AuthMode, DEFAULT_JWKS_MAX_AGE_SECONDS, DEFAULT_JWKS_MIN_REFRESH_SECONDS,
    DEFAULT_LEEWAY_SECONDS, IntrospectionConfig, KeySource, OAuthConfig, canonical_resource,
    is_loopback_host, is_scope_token, is_secure_or_loopback,
};
pub use challenge::{Challenge, ChallengeKind};
pub use metadata::WELL_KNOWN as METADATA_ROOT_PATH;
pub use principal::Principal;
pub use scopes::{CacheScope, ToolScopes, tool_scopes};
pub use secret::Secret;

use challenge::ChallengeParams;
use introspection::Introspector;
use jwks::JwksCache;

use crate::client::{Pool, Tls};

/// Longest a connection to the authorization server (its keys, its introspection) may take
/// to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a fetch from the authorization server may take, connecting included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an [`Authenticator`] could not be built from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("environment variable {variable} is not set (named by {location})")]
    MissingEnv { variable: String, location: String },
    #[error("environment variable {variable} does not hold a SHA-256 in hex (named by {location})")]
    BadHashEnv { variable: String, location: String },
    #[error("{0} must be https, or http to a loopback address")]
    InsecureUrl(String),
    #[error(transparent)]
    Tls(#[from] crate::client::TlsError),
}

/// Refusal to serve without authentication on an address others can reach.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing to listen on {listen} without authentication: add an `auth:` section to the curation \
     (`auth: {{api_keys: [{{subject: NAME, sha256: HEX, scopes: [...]}}]}}` or \
     `auth: {{oauth: {{resource: URL, issuer: URL, jwks_uri: URL}}}}`), or listen on 127.0.0.1"
)]
pub struct ExposureError {
    pub listen: String,
}

/// Checks that ferry does not serve without authentication beyond loopback. `listen` is the
/// listen address as given (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`, `0.0.0.0:80`).
pub fn check_exposure(listen: &str, auth: Option<&AuthConfig>) -> Result<(), ExposureError> {
    if auth.is_some() || is_loopback_listen(listen) {
        return Ok(());
    }
    Err(ExposureError {
        listen: listen.to_string(),
    })
}

/// Decides, on every request, who the caller is and which tools they reach.
#[derive(Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

struct Inner {
    mode: Mode,
    tool_scopes: ToolScopes,
    /// The scopes a 401 asks for: every scope a tool needs.
    scopes_supported: Vec<String>,
}

enum Mode {
    None,
    ApiKeys(Vec<StoredKey>),
    OAuth(Box<OAuth>),
}

struct StoredKey {
    digest: [u8; 32],
    /// Who presents this key: built once at start, cloned per request.
    principal: Principal,
}

struct OAuth {
    resource: Url,
    issuer: String,
    audiences: Vec<String>,
    leeway: u64,
    jwks: Option<Arc<JwksCache>>,
    introspector: Option<Introspector>,
    /// The checks for each algorithm a JWKS key may have, built once: the algorithm comes
    /// from the key, never from the token.
    validations: Vec<(jsonwebtoken::Algorithm, jsonwebtoken::Validation)>,
    metadata_url: String,
    metadata_path: String,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match &self.inner.mode {
            Mode::None => "none",
            Mode::ApiKeys(_) => "api_keys",
            Mode::OAuth(_) => "oauth",
        };
        f.debug_struct("Authenticator")
            .field("mode", &mode)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// No authentication: every caller is [`Principal::anonymous`] and reaches every tool.
    pub fn none() -> Authenticator {
        Authenticator {
            inner: Arc::new(Inner {
                mode: Mode::None,
                tool_scopes: ToolScopes::default(),
                scopes_supported: Vec::new(),
            }),
        }
    }

    /// Builds the authenticator for `config` (`None`: no authentication), reading the
    /// environment variables it names. `tool_scopes` holds the tools with scopes of their
    /// own (see [`ToolScopes::new`]); the others need the configured default.
    pub fn new(
        config: Option<&AuthConfig>,
        tool_scopes: impl IntoIterator<Item = (String, Vec<Vec<String>>)>,
    ) -> Result<Authenticator, AuthError> {
        Authenticator::with_env(config, tool_scopes, |name| std::env::var(name).ok())
    }

    /// [`Authenticator::new`] with the environment given as a function, for tests.
    pub fn with_env(
        config: Option<&AuthConfig>,
        tool_scopes: impl IntoIterator<Item = (String, Vec<Vec<String>>)>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Authenticator, AuthError> {
        let Some(config) = config else {
            return Ok(Authenticator::none());
        };
        let tool_scopes = ToolScopes::new(config.default_scopes.clone(), tool_scopes);
        let mode = match &config.mode {
            AuthMode::ApiKeys(keys) => Mode::ApiKeys(stored_keys(keys, &env)?),
            AuthMode::OAuth(oauth) => Mode::OAuth(Box::new(build_oauth(oauth, &env)?)),
        };
        let scopes_supported = tool_scopes.all();
        Ok(Authenticator {
            inner: Arc::new(Inner {
                mode,
                tool_scopes,
                scopes_supported,
            }),
        })
    }

    pub fn is_enabled(&self) -> bool {
        !matches!(self.inner.mode, Mode::None)
    }

    /// Fetches the signing keys ahead of the first request (OAuth with a JWKS only). A failure
    /// is logged, not fatal: the keys are fetched again on demand.
    pub async fn warm(&self) {
        if let Mode::OAuth(oauth) = &self.inner.mode
            && let Some(jwks) = &oauth.jwks
        {
            jwks.warm().await;
        }
    }

    /// [`Authenticator::authenticate`] for an HTTP request's headers. More than one
    /// `Authorization` header, or one that is not text, is a malformed token.
    // Out of line, so that a caller that boxes its future has it written in the box
    // (`crate::boxed`).
    #[inline(never)]
    pub async fn authenticate_headers(
        &self,
        headers: &http::HeaderMap,
    ) -> Result<Principal, Challenge> {
        if !self.is_enabled() {
            return Ok(Principal::anonymous());
        }
        let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
        match (values.next(), values.next()) {
            (None, _) => self.authenticate(None).await,
            (Some(value), None) => match value.to_str() {
                Ok(text) => self.authenticate(Some(text)).await,
                Err(_) => Err(self.invalid_token("the Authorization header is not a bearer token")),
            },
            (Some(_), Some(_)) => Err(self.invalid_token("more than one Authorization header")),
        }
    }

    /// Who sent a request with this `Authorization` header value, or why it is refused.
    pub async fn authenticate(
        &self,
        authorization_header: Option<&str>,
    ) -> Result<Principal, Challenge> {
        match &self.inner.mode {
            Mode::None => Ok(Principal::anonymous()),
            Mode::ApiKeys(keys) => {
                let token = self.presented_token(authorization_header)?;
                match find_key(keys, token) {
                    Some(key) => Ok(key.principal.clone()),
                    None => Err(self.invalid_token("unknown key")),
                }
            }
            Mode::OAuth(oauth) => {
                let token = self.presented_token(authorization_header)?;
                self.validate_oauth(oauth, token).await
            }
        }
    }

    /// Refuses (403) a call to `tool` that needs a scope `principal` lacks.
    pub fn authorize(&self, principal: &Principal, tool: &str) -> Result<(), Challenge> {
        if self.may_use(principal, tool) {
            return Ok(());
        }
        // The challenge names one set that would do: the first alternative.
        let required = self.inner.tool_scopes.required(tool);
        Err(self.challenge(
            ChallengeKind::InsufficientScope,
            Some("the token lacks a scope this tool needs"),
            required.first().map_or(&[][..], Vec::as_slice),
        ))
    }

    /// Whether `principal` reaches `tool`: it holds every scope of one of the alternatives
    /// the tool needs.
    pub fn may_use(&self, principal: &Principal, tool: &str) -> bool {
        match self.inner.mode {
            Mode::None => true,
            _ => self
                .inner
                .tool_scopes
                .required(tool)
                .iter()
                .any(|scopes| principal.has_scopes(scopes)),
        }
    }

    /// `private` when the tool list differs between callers (some tool needs a scope).
    pub fn cache_scope(&self) -> CacheScope {
        match self.inner.mode {
            Mode::None => CacheScope::Public,
            _ if self.inner.tool_scopes.any() => CacheScope::Private,
            _ => CacheScope::Public,
        }
    }

    /// The RFC 9728 protected resource metadata URL (OAuth only).
    pub fn metadata_url(&self) -> Option<&str> {
        self.oauth().map(|oauth| oauth.metadata_url.as_str())
    }

    /// The path the metadata is served at: `/.well-known/oauth-protected-resource` plus the
    /// resource URL's path (OAuth only).
    pub fn metadata_path(&self) -> Option<&str> {
        self.oauth().map(|oauth| oauth.metadata_path.as_str())
    }

    /// The RFC 9728 protected resource metadata document (OAuth only).
    pub fn metadata_document(&self) -> Option<Value> {
        self.oauth().map(|oauth| {
            metadata::document(&oauth.resource, &oauth.issuer, &self.inner.scopes_supported)
        })
    }

    fn oauth(&self) -> Option<&OAuth> {
        match &self.inner.mode {
            Mode::OAuth(oauth) => Some(oauth),
            _ => None,
        }
    }

    /// The bearer token of an `Authorization` header, or the challenge for its absence or
    /// shape.
    fn presented_token<'a>(&self, header: Option<&'a str>) -> Result<&'a str, Challenge> {
        match bearer_token(header) {
            BearerToken::Absent => Err(self.challenge(ChallengeKind::Missing, None, &[])),
            BearerToken::Malformed => {
                Err(self.invalid_token("the Authorization header is not a bearer token"))
            }
            BearerToken::Token(token) => Ok(token),
        }
    }

    async fn validate_oauth(&self, oauth: &OAuth, token: &str) -> Result<Principal, Challenge> {
        let claims = if let Some(jwks) = oauth.jwks.as_ref().filter(|_| looks_like_jwt(token)) {
            self.validate_jwt(oauth, jwks, token).await?
        } else if let Some(introspector) = &oauth.introspector {
            self.introspect(oauth, introspector, token).await?
        } else {
            return Err(self.invalid_token("the token is malformed"));
        };
        let Some(subject) = ["sub", "client_id"]
            .iter()
            .find_map(|name| claims.get(*name).and_then(Value::as_str))
        else {
            return Err(self.invalid_token("the token names no subject"));
        };
        Ok(Principal::new(subject, token_scopes(&claims)).with_token(Secret::new(token)))
    }

    async fn validate_jwt(
        &self,
        oauth: &OAuth,
        jwks: &Arc<JwksCache>,
        token: &str,
    ) -> Result<Map<String, Value>, Challenge> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| self.invalid_token("the token is malformed"))?;
        let key = match jwks.find(header.kid.as_deref()).await {
            jwks::Lookup::Found(key) => key,
            jwks::Lookup::Unknown => {
                return Err(self.invalid_token("the token is signed with an unknown key"));
            }
            jwks::Lookup::Unavailable => {
                return Err(self.challenge(ChallengeKind::Unavailable, None, &[]));
            }
        };
        let Some((_, validation)) = oauth
            .validations
            .iter()
            .find(|(algorithm, _)| *algorithm == key.algorithm)
        else {
            return Err(self.invalid_token("the token's algorithm does not match its key"));
        };
        match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, validation) {
            Ok(data) => Ok(data.claims),
            Err(error) => {
                tracing::debug!(error = ?error.kind(), "refused a JWT");
                Err(self.invalid_token(jwt_error_description(error.kind())))
            }
        }
    }

    async fn introspect(
        &self,
        oauth: &OAuth,
        introspector: &Introspector,
        token: &str,
    ) -> Result<Map<String, Value>, Challenge> {
        let claims = match introspector.introspect_cached(token).await {
            Ok(Some(claims)) => claims,
            Ok(None) => return Err(self.invalid_token("the token is not active")),
            Err(error) => {
                tracing::warn!(%error, "cannot introspect a token");
                return Err(self.challenge(ChallengeKind::Unavailable, None, &[]));
            }
        };
        let now = unix_now();
        let number = |name: &str| claims.get(name).and_then(Value::as_u64);
        if number("exp").is_some_and(|exp| exp.saturating_add(oauth.leeway) < now) {
            return Err(self.invalid_token("the token has expired"));
        }
        if number("nbf").is_some_and(|nbf| nbf > now.saturating_add(oauth.leeway)) {
            return Err(self.invalid_token("the token is not valid yet"));
        }
        if let Some(issuer) = claims.get("iss")
            && issuer.as_str() != Some(oauth.issuer.as_str())
        {
            return Err(self.invalid_token("the token was issued by another authorization server"));
        }
        // RFC 8707: a token must name this resource; one without an audience might be meant
        // for any resource, so it is refused too.
        let audience_ok = match claims.get("aud") {
            Some(Value::String(audience)) => oauth.audiences.contains(audience),
            Some(Value::Array(audiences)) => audiences
                .iter()
                .filter_map(Value::as_str)
                .any(|audience| oauth.audiences.iter().any(|ours| ours == audience)),
            _ => false,
        };
        if !audience_ok {
            return Err(self.invalid_token("the token was issued for another resource"));
        }
        Ok(claims)
    }

    fn invalid_token(&self, description: &str) -> Challenge {
        self.challenge(ChallengeKind::InvalidToken, Some(description), &[])
    }

    fn challenge(
        &self,
        kind: ChallengeKind,
        description: Option<&str>,
        scopes: &[String],
    ) -> Challenge {
        let scopes = match kind {
            ChallengeKind::InsufficientScope => scopes,
            _ => self.inner.scopes_supported.as_slice(),
        };
        Challenge::new(
            kind,
            ChallengeParams {
                description,
                scopes,
                resource_metadata: self.metadata_url(),
            },
        )
    }
}

enum BearerToken<'a> {
    Absent,
    Malformed,
    Token(&'a str),
}

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1). Another scheme
/// counts as no token: the client has not tried bearer authentication yet.
fn bearer_token(header: Option<&str>) -> BearerToken<'_> {
    let Some(header) = header else {
        return BearerToken::Absent;
    };
    let header = header.trim();
    let Some((scheme, token)) = header.split_once(' ') else {
        return if header.eq_ignore_ascii_case("bearer") {
            BearerToken::Malformed
        } else {
            BearerToken::Absent
        };
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return BearerToken::Absent;
    }
    let token = token.trim_start();
    let token68 = |byte: u8| byte.is_ascii_alphanumeric() || b"-._~+/=".contains(&byte);
    if token.is_empty() || !token.bytes().all(token68) {
        return BearerToken::Malformed;
    }
    BearerToken::Token(token)
}

/// Hashes the presented key and compares it with every stored hash in constant time, so the
/// time taken says nothing about how much of a hash matched.
fn find_key<'a>(keys: &'a [StoredKey], presented: &str) -> Option<&'a StoredKey> {
    let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
    let mut found = None;
    for key in keys {
        if constant_time_eq(&key.digest, &digest) && found.is_none() {
            found = Some(key);
        }
    }
    found
}

fn constant_time_eq(left: &[u8; 32], right: &[u8; 32]) -> bool {
    let difference = left
        .iter()
        .zip(right)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

fn stored_keys(
    keys: &[ApiKey],
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<StoredKey>, AuthError> {
    keys.iter()
        .enumerate()
        .map(|(index, key)| {
            let location = format!("auth.api_keys[{index}]");
            let read = |variable: &str| {
                env(variable).ok_or_else(|| AuthError::MissingEnv {
                    variable: variable.to_string(),
                    location: location.clone(),
                })
            };
            let digest = match &key.key {
                KeySource::Sha256(hex) => crate::access::parse_sha256(hex),
                KeySource::Sha256Env(variable) => {
                    crate::access::parse_sha256(read(variable)?.trim())
                }
                KeySource::KeyEnv(variable) => {
                    Some(Sha256::digest(read(variable)?.as_bytes()).into())
                }
            };
            let digest = digest.ok_or_else(|| AuthError::BadHashEnv {
                variable: match &key.key {
                    KeySource::Sha256Env(variable) | KeySource::KeyEnv(variable) => {
                        variable.clone()
                    }
                    KeySource::Sha256(_) => "sha256".to_string(),
                },
                location: location.clone(),
            })?;
            Ok(StoredKey {
                digest,
                principal: Principal::new(key.subject.clone(), key.scopes.iter().cloned()),
            })
        })
        .collect()
}

fn build_oauth(
    config: &OAuthConfig,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<OAuth, AuthError> {
    // TLS is set up (the platform's trust store read) only when the keys or introspection
    // are fetched over HTTPS.
    let secure = config
        .jwks_uri
        .iter()
        .chain(
            config
                .introspection
                .as_ref()
                .map(|introspection| &introspection.endpoint),
        )
        .any(|url| url.scheme() == "https");
    let tls = if secure { Some(Tls::platform()?) } else { None };
    let client = Pool::new(CONNECT_TIMEOUT, tls);
    let jwks = match &config.jwks_uri {
        Some(uri) if !is_secure_or_loopback(uri) => {
            return Err(AuthError::InsecureUrl("auth.oauth.jwks_uri".to_string()));
        }
        Some(uri) => Some(Arc::new(JwksCache::new(
            uri.clone(),
            client.clone(),
            Duration::from_secs(config.jwks_min_refresh_seconds),
            Duration::from_secs(config.jwks_max_age_seconds),
        ))),
        None => None,
    };
    let introspector = match &config.introspection {
        Some(introspection) if !is_secure_or_loopback(&introspection.endpoint) => {
            return Err(AuthError::InsecureUrl(
                "auth.oauth.introspection.endpoint".to_string(),
            ));
        }
        Some(introspection) => {
            let secret =
                env(&introspection.client_secret_env).ok_or_else(|| AuthError::MissingEnv {
                    variable: introspection.client_secret_env.clone(),
                    location: "auth.oauth.introspection.client_secret".to_string(),
                })?;
            Some(Introspector::new(
                introspection.endpoint.clone(),
                introspection.client_id.clone(),
                Secret::from(secret),
                client,
            ))
        }
        None => None,
    };
    let audiences = if config.audiences.is_empty() {
        // A root resource is written both ways in the wild (`https://host`, `https://host/`).
        let canonical = canonical_resource(&config.resource);
        let written = config.resource.to_string();
        if canonical == written {
            vec![written]
        } else {
            vec![canonical, written]
        }
    } else {
        config.audiences.clone()
    };
    let (metadata_url, metadata_path) = metadata::location(&config.resource);
    let validations = [
        jsonwebtoken::Algorithm::RS256,
        jsonwebtoken::Algorithm::ES256,
        jsonwebtoken::Algorithm::EdDSA,
    ]
    .into_iter()
    .map(|algorithm| {
        let mut validation = jsonwebtoken::Validation::new(algorithm);
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = config.leeway_seconds;
        (algorithm, validation)
    })
    .collect();
    Ok(OAuth {
        resource: config.resource.clone(),
        issuer: config.issuer.clone(),
        audiences,
        leeway: config.leeway_seconds,
        jwks,
        introspector,
        validations,
        metadata_url,
        metadata_path,
    })
}

/// Three base64url segments: a JWS in compact form.
fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

/// Granted scopes: `scope` (space-separated, RFC 9068 and RFC 7662), or `scp` (a list or a
/// string, as some servers write it).
fn token_scopes(claims: &Map<String, Value>) -> Vec<String> {
    let split = |text: &str| {
        text.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => split(scope),
        (_, Some(Value::String(scp))) => split(scp),
        (_, Some(Value::Array(scp))) => scp
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn jwt_error_description(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token was issued for another resource",
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server",
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
        _ => "the token is malformed",
    }
}

fn is_loopback_listen(listen: &str) -> bool {
    if let Ok(address) = listen.parse::<SocketAddr>() {
        return address.ip().is_loopback();
    }
    let host = listen.rsplit_once(':').map_or(listen, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests;
