//! Inbound authorization as configured: the `auth:` section of the curation, parsed by
//! [`crate::curation::auth`] and turned into a running [`super::Authenticator`].
//!
//! Secrets are never written here: a key is stored as its SHA-256, or named by the
//! environment variable that holds it, and read when the server starts.

use url::Url;

/// The `auth:` section. Its absence means no authentication, which is allowed only on a
/// loopback listen address (see [`super::check_exposure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    pub mode: AuthMode,
    /// Scopes a tool needs when its own entry names none (`default_scopes:`); empty means
    /// such tools need no scope.
    pub default_scopes: Vec<String>,
    /// A tool without `scopes:` of its own needs the OAuth 2 / OpenID Connect scopes its
    /// operation's security requirements name (any one alternative, each whole), when the
    /// document names any (`scopes_from_document: true`).
    pub scopes_from_document: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMode {
    /// Static bearer keys (`api_keys:`).
    ApiKeys(Vec<ApiKey>),
    /// ferry as an OAuth 2.1 resource server (`oauth:`).
    OAuth(Box<OAuthConfig>),
}

/// One static key: who holds it and what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub subject: String,
    pub key: KeySource,
    pub scopes: Vec<String>,
}

/// Where a key's SHA-256 comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The hash itself, 64 lowercase hex digits (`sha256: <hex>`).
    Sha256(String),
    /// An environment variable holding the hash in hex (`sha256: {env: VAR}`).
    Sha256Env(String),
    /// An environment variable holding the key itself, hashed at start (`key: {env: VAR}`).
    KeyEnv(String),
}

/// The resource server settings (`oauth:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// This server's public resource URL: the audience tokens must carry, and the base of
    /// the protected resource metadata URL. Never guessed from request headers.
    pub resource: Url,
    /// The authorization server's issuer identifier, compared with `iss`.
    pub issuer: String,
    /// Where the issuer's signing keys are published; `None` when every token is
    /// introspected. Plain `http` only for loopback hosts.
    pub jwks_uri: Option<Url>,
    /// Accepted `aud` values; default: the resource URL alone.
    pub audiences: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub leeway_seconds: u64,
    /// The shortest time between two JWKS fetches caused by unknown `kid`s, in seconds
    /// (default 10), so a flood of made-up key ids cannot flood the key server.
    pub jwks_min_refresh_seconds: u64,
    /// How long fetched keys are fresh before a background refresh, in seconds (default 300).
    pub jwks_max_age_seconds: u64,
    /// RFC 7662 introspection for tokens that are not JWTs.
    pub introspection: Option<IntrospectionConfig>,
}

/// RFC 7662 token introspection (`oauth.introspection:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntrospectionConfig {
    /// Plain `http` only for loopback hosts.
    pub endpoint: Url,
    pub client_id: String,
    /// The environment variable holding the client secret.
    pub client_secret_env: String,
}

/// Defaults of the optional `oauth:` keys.
pub const DEFAULT_LEEWAY_SECONDS: u64 = 30;
pub const DEFAULT_JWKS_MIN_REFRESH_SECONDS: u64 = 10;
pub const DEFAULT_JWKS_MAX_AGE_SECONDS: u64 = 300;

/// Whether `url` may be fetched: `https`, or `http` to a loopback host.
pub fn is_secure_or_loopback(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => is_loopback_host(url),
        _ => false,
    }
}

/// Whether `url`'s host is `localhost` or a loopback IP address.
pub fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `scope` is a valid OAuth scope token (RFC 6749 §3.3): printable ASCII without
/// space, `"` or `\`, so it can be written inside a quoted header parameter as it is.
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|byte| matches!(byte, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// The resource URL in MCP's canonical form: as parsed, without the trailing `/` that a
/// URL with an empty path gets (`https://mcp.example.com/` → `https://mcp.example.com`).
pub fn canonical_resource(resource: &Url) -> String {
    let text = resource.as_str();
    if resource.path() == "/" && resource.query().is_none() && resource.fragment().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text.to_string()
    }
}
