//! Access as configured: who may call ferry (the `auth:` section) and the credential ferry
//! presents upstream (`upstream_auth:`), as the curation wrote them. A leaf: `curation`
//! reads these, the catalog carries them, `auth` and `upstream` build the running parts
//! from them.
//!
//! Secrets are never written here: a key is stored as its SHA-256, or named by the
//! environment variable that holds it, and read when the server starts.

use http::HeaderName;
use url::Url;

use crate::parameter::ParameterLocation;

/// The `auth:` section. Its absence means no authentication, which is allowed only on a
/// loopback listen address (see `auth::check_exposure`).
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

/// 64 hex digits (either case) as 32 bytes.
pub fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (index, pair) in bytes.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        digest[index] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(digest)
}

/// An upstream credential as configured (a kind under `upstream_auth:`); the secrets are
/// named by environment variables and read when the [`CredentialSource`] is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboundCredential {
    /// `basic: {username: NAME | {env: VAR}, password: {env: VAR}}`.
    Basic {
        username: EnvOrLiteral,
        password_env: String,
    },
    /// `client_credentials: {token_url, client_id, client_secret: {env: VAR}, scopes, audience, resource}`.
    ClientCredentials(TokenClientConfig),
    /// `token_exchange: {token_url, client_id, client_secret: {env: VAR}, audience, resource, scopes}`.
    TokenExchange(TokenClientConfig),
}

impl OutboundCredential {
    /// The environment variables this credential reads.
    pub fn env_vars(&self) -> Vec<&str> {
        let mut names = Vec::new();
        let (username, secret, client_id) = match self {
            OutboundCredential::Basic {
                username,
                password_env,
            } => (Some(username), password_env, None),
            OutboundCredential::ClientCredentials(config)
            | OutboundCredential::TokenExchange(config) => {
                (None, &config.client_secret_env, Some(&config.client_id))
            }
        };
        for value in [username, client_id].into_iter().flatten() {
            if let EnvOrLiteral::Env(name) = value {
                names.push(name.as_str());
            }
        }
        names.push(secret.as_str());
        names
    }
}

/// A value that is not secret but may still come from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvOrLiteral {
    Literal(String),
    Env(String),
}

/// How ferry reaches an OAuth token endpoint as a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenClientConfig {
    /// Plain `http` only for loopback hosts.
    pub token_url: Url,
    pub client_id: EnvOrLiteral,
    pub client_secret_env: String,
    /// `client_secret_basic` (default) or `client_secret_post`.
    pub client_auth: ClientAuth,
    /// Scopes to ask for; none by default.
    pub scopes: Vec<String>,
    /// RFC 8693 `audience`: the upstream's name at the authorization server.
    pub audience: Option<String>,
    /// RFC 8707 `resource`: the upstream's URL.
    pub resource: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    #[default]
    Basic,
    Post,
}

/// Credentials ferry sends to the upstream on every call (`upstream_auth`). The secrets
/// themselves are read from the environment when the client is built, never stored here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamAuth {
    /// `api_key: {in: header|query|cookie, name: X-Api-Key, env: VAR}`.
    ApiKey {
        location: ParameterLocation,
        name: String,
        env: String,
    },
    /// `bearer: {env: VAR}`: `Authorization: Bearer <value>`.
    Bearer { env: String },
    /// `basic`, `client_credentials` or `token_exchange`: a credential ferry obtains (or
    /// builds) itself, parsed and run by `auth::outbound`.
    Obtained(OutboundCredential),
}

impl UpstreamAuth {
    /// The environment variables this credential reads.
    pub fn env_vars(&self) -> Vec<&str> {
        match self {
            UpstreamAuth::ApiKey { env, .. } | UpstreamAuth::Bearer { env } => vec![env.as_str()],
            UpstreamAuth::Obtained(credential) => credential.env_vars(),
        }
    }
}

/// Headers that carry credentials and must never be used to name the caller.
pub fn is_credential_header(name: &HeaderName) -> bool {
    [
        http::header::AUTHORIZATION,
        http::header::PROXY_AUTHORIZATION,
        http::header::COOKIE,
    ]
    .contains(name)
}
