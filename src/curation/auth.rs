//! The curation's `auth:` section (who may use ferry) and the per-tool `scopes:` key.
//!
//! ```yaml
//! auth:
//!   default_scopes: [pets:read]          # what a tool without `scopes:` needs
//!   scopes_from_document: true           # ... unless its operation's `security` names some
//!   oauth:
//!     resource: https://mcp.example.com/mcp
//!     issuer: https://auth.example.com
//!     jwks_uri: https://auth.example.com/jwks.json
//! # or
//! auth:
//!   api_keys:
//!     - {subject: ci-bot, sha256: <hex>, scopes: [pets:read]}
//!     - {subject: ops, key: {env: FERRY_OPS_KEY}, scopes: [pets:read, pets:write]}
//! tools:
//!   createPet: {scopes: [pets:write]}
//! ```
//!
//! It also reads the upstream credentials ferry obtains itself (`upstream_auth:` kinds
//! `basic`, `client_credentials` and `token_exchange`) and `upstream_identity:`, the header
//! that names the caller upstream:
//!
//! ```yaml
//! upstream_auth:
//!   client_credentials:
//!     token_url: https://auth.example.com/token
//!     client_id: ferry
//!     client_secret: {env: FERRY_CLIENT_SECRET}
//!     scopes: [pets.read]
//! upstream_identity: {header: X-Ferry-Subject}
//! ```
//!
//! Secrets are never accepted as literals: a key is written as its SHA-256 or named by an
//! environment variable, and so is the introspection client secret.

use serde_json::{Map, Value};
use url::Url;

use super::{env_reference, error, non_empty_string, string_list};
use crate::access::{
    ApiKey, AuthConfig, AuthMode, ClientAuth, DEFAULT_JWKS_MAX_AGE_SECONDS,
    DEFAULT_JWKS_MIN_REFRESH_SECONDS, DEFAULT_LEEWAY_SECONDS, EnvOrLiteral, IntrospectionConfig,
    KeySource, OAuthConfig, OutboundCredential, TokenClientConfig, is_credential_header,
    is_scope_token, is_secure_or_loopback,
};
use crate::diagnostic::{Diagnostic, Location};

/// The top-level key this module owns that is the whole server's: who may call ferry.
pub const SERVER_KEYS: &[&str] = &["auth"];
/// The key this module owns that is each API's: the header that names the caller upstream.
pub const API_KEYS: &[&str] = &["upstream_identity"];

/// The credential kinds under `upstream_auth:` this module parses (beside `api_key` and
/// `bearer`, which the upstream client's parser reads).
pub const UPSTREAM_AUTH_KINDS: &[&str] = &["basic", "client_credentials", "token_exchange"];

/// The tool-entry keys this module owns.
pub const TOOL_KEYS: &[&str] = &["scopes"];

/// Reads the `auth:` value found at `path`, pushing a diagnostic for each problem; `None`
/// when it is unusable (then the caller must not serve without authentication by mistake:
/// the diagnostics are errors).
pub fn parse_auth(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<AuthConfig> {
    let map = as_map(
        value,
        path,
        "a mapping with `api_keys:` or `oauth:`",
        diagnostics,
    )?;
    super::check_keys(
        map,
        path,
        &[&[
            "api_keys",
            "oauth",
            "default_scopes",
            "scopes_from_document",
        ]],
        diagnostics,
    );
    let default_scopes = match map.get("default_scopes") {
        Some(value) => scopes(value, &format!("{path}.default_scopes"), diagnostics)?,
        None => Vec::new(),
    };
    let mode = match (map.get("api_keys"), map.get("oauth")) {
        (Some(_), Some(_)) => {
            diagnostics.push(error(path, "choose one of `api_keys:` and `oauth:`"));
            return None;
        }
        (Some(keys), None) => {
            AuthMode::ApiKeys(api_keys(keys, &format!("{path}.api_keys"), diagnostics)?)
        }
        (None, Some(oauth)) => AuthMode::OAuth(Box::new(oauth_config(
            oauth,
            &format!("{path}.oauth"),
            diagnostics,
        )?)),
        (None, None) => {
            diagnostics.push(error(path, "`auth:` needs `api_keys:` or `oauth:`"));
            return None;
        }
    };
    let scopes_from_document =
        super::bool_at(map, "scopes_from_document", path, diagnostics).unwrap_or(false);
    Some(AuthConfig {
        mode,
        default_scopes,
        scopes_from_document,
    })
}

/// Reads a tool entry's `scopes:` (in `map`, the entry at `path`): `None` when absent or
/// invalid, so the tool falls back to the default.
pub fn parse_tool_scopes(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    scopes(map.get("scopes")?, &format!("{path}.scopes"), diagnostics)
}

/// Reads one `upstream_auth:` credential of a kind in [`UPSTREAM_AUTH_KINDS`]: `kind` is the
/// key, `settings` its value, `path` where that value is (`upstream_auth.basic`).
pub fn parse_upstream_credential(
    kind: &str,
    settings: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<OutboundCredential> {
    let map = as_map(settings, path, "a mapping", diagnostics)?;
    match kind {
        "basic" => {
            super::check_keys(map, path, &[&["username", "password"]], diagnostics);
            let username = match map.get("username") {
                Some(value) => env_or_literal(value, &format!("{path}.username"), diagnostics),
                None => {
                    diagnostics.push(error(path, "missing `username:`"));
                    None
                }
            };
            let password_env = secret_env(map, path, "password", diagnostics);
            Some(OutboundCredential::Basic {
                username: username?,
                password_env: password_env?,
            })
        }
        "client_credentials" => Some(OutboundCredential::ClientCredentials(token_client(
            map,
            path,
            diagnostics,
        )?)),
        "token_exchange" => Some(OutboundCredential::TokenExchange(token_client(
            map,
            path,
            diagnostics,
        )?)),
        _ => {
            diagnostics.push(error(path, format!("unknown credential kind `{kind}`")));
            None
        }
    }
}

/// Reads `upstream_identity: {header: NAME}`: the header that carries the caller's subject
/// (the token's `sub` or the API key's subject) to the upstream.
pub fn parse_upstream_identity(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<http::HeaderName> {
    let map = as_map(value, path, "`{header: NAME}`", diagnostics)?;
    super::check_keys(map, path, &[&["header"]], diagnostics);
    let header_path = format!("{path}.header");
    let Some(name) = map.get("header").and_then(Value::as_str) else {
        diagnostics.push(error(
            path,
            "missing `header:`, the header that names the caller upstream",
        ));
        return None;
    };
    match http::HeaderName::from_bytes(name.as_bytes()) {
        Ok(header) if is_credential_header(&header) => {
            diagnostics.push(error(
                &header_path,
                format!("`{name}` carries credentials; choose another header"),
            ));
            None
        }
        Ok(header) => Some(header),
        Err(_) => {
            diagnostics.push(error(
                &header_path,
                format!("`{name}` is not a valid header name"),
            ));
            None
        }
    }
}

fn token_client(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<TokenClientConfig> {
    let known = [
        "token_url",
        "client_id",
        "client_secret",
        "client_auth",
        "scopes",
        "audience",
        "resource",
    ];
    super::check_keys(map, path, &[&known[..]], diagnostics);
    let token_url = required_url(map, path, "token_url", diagnostics);
    let client_id = match map.get("client_id") {
        Some(value) => env_or_literal(value, &format!("{path}.client_id"), diagnostics),
        None => {
            diagnostics.push(error(path, "missing `client_id:`"));
            None
        }
    };
    let client_secret_env = secret_env(map, path, "client_secret", diagnostics);
    let client_auth = match map.get("client_auth").map(Value::as_str) {
        None | Some(Some("client_secret_basic")) => Some(ClientAuth::Basic),
        Some(Some("client_secret_post")) => Some(ClientAuth::Post),
        Some(_) => {
            diagnostics.push(error(
                &format!("{path}.client_auth"),
                "expected client_secret_basic or client_secret_post",
            ));
            None
        }
    };
    let scopes = match map.get("scopes") {
        Some(value) => scopes(value, &format!("{path}.scopes"), diagnostics),
        None => Some(Vec::new()),
    };
    let audience = optional_string(map, path, "audience", diagnostics);
    let resource = optional_string(map, path, "resource", diagnostics);
    Some(TokenClientConfig {
        token_url: token_url?,
        client_id: client_id?,
        client_secret_env: client_secret_env?,
        client_auth: client_auth?,
        scopes: scopes?,
        audience: audience?,
        resource: resource?,
    })
}

/// A secret's `{env: VAR}` under `key`; a literal is refused.
fn secret_env(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let key_path = format!("{path}.{key}");
    match map.get(key) {
        Some(Value::String(_)) => {
            diagnostics.push(error(
                &key_path,
                "a secret is never written in the file: name its environment variable (`{env: VAR}`)",
            ));
            None
        }
        Some(value) => env_reference(value, &key_path, diagnostics),
        None => {
            diagnostics.push(error(path, format!("missing `{key}: {{env: VAR}}`")));
            None
        }
    }
}

fn env_or_literal(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<EnvOrLiteral> {
    match value {
        Value::String(text) if !text.is_empty() => Some(EnvOrLiteral::Literal(text.clone())),
        _ => env_reference(value, path, diagnostics).map(EnvOrLiteral::Env),
    }
}

fn api_keys(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<ApiKey>> {
    let Some(entries) = value.as_array().filter(|entries| !entries.is_empty()) else {
        diagnostics.push(error(path, "expected a non-empty list of keys"));
        return None;
    };
    let before = diagnostics.len();
    let keys: Vec<ApiKey> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| api_key(entry, &format!("{path}[{index}]"), diagnostics))
        .collect();
    (diagnostics.len() == before).then_some(keys)
}

fn api_key(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<ApiKey> {
    let map = as_map(
        value,
        path,
        "a mapping with `subject:` and `sha256:` or `key:`",
        diagnostics,
    )?;
    super::check_keys(
        map,
        path,
        &[&["subject", "sha256", "key", "scopes"]],
        diagnostics,
    );
    let subject = required_string(map, path, "subject", diagnostics);
    let key = match (map.get("sha256"), map.get("key")) {
        (Some(Value::String(hex)), None) => {
            if crate::access::parse_sha256(hex).is_none() {
                diagnostics.push(error(
                    &format!("{path}.sha256"),
                    "expected the key's SHA-256 as 64 hex digits",
                ));
                None
            } else {
                Some(KeySource::Sha256(hex.to_ascii_lowercase()))
            }
        }
        (Some(value), None) => {
            env_reference(value, &format!("{path}.sha256"), diagnostics).map(KeySource::Sha256Env)
        }
        (None, Some(Value::String(_))) => {
            diagnostics.push(error(
                &format!("{path}.key"),
                "a key is never written in the file: give its SHA-256 (`sha256:`) or an environment variable (`key: {env: VAR}`)",
            ));
            None
        }
        (None, Some(value)) => {
            env_reference(value, &format!("{path}.key"), diagnostics).map(KeySource::KeyEnv)
        }
        (Some(_), Some(_)) => {
            diagnostics.push(error(path, "choose one of `sha256:` and `key:`"));
            None
        }
        (None, None) => {
            diagnostics.push(error(path, "a key needs `sha256:` or `key: {env: VAR}`"));
            None
        }
    };
    let scopes = match map.get("scopes") {
        Some(value) => scopes(value, &format!("{path}.scopes"), diagnostics)?,
        None => Vec::new(),
    };
    Some(ApiKey {
        subject: subject?,
        key: key?,
        scopes,
    })
}

fn oauth_config(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<OAuthConfig> {
    let map = as_map(
        value,
        path,
        "a mapping with `resource:`, `issuer:` and `jwks_uri:`",
        diagnostics,
    )?;
    let known = [
        "resource",
        "issuer",
        "jwks_uri",
        "audiences",
        "leeway_seconds",
        "jwks_min_refresh_seconds",
        "jwks_max_age_seconds",
        "introspection",
    ];
    super::check_keys(map, path, &[&known[..]], diagnostics);
    let before = diagnostics.len();
    let resource = match map.get("resource") {
        Some(value) => absolute_url(value, &format!("{path}.resource"), diagnostics),
        None => {
            diagnostics.push(error(path, "missing `resource:`"));
            None
        }
    };
    let resource = resource.and_then(|resource| {
        if resource.fragment().is_some()
            || resource.query().is_some()
            || !matches!(resource.scheme(), "https" | "http")
        {
            diagnostics.push(error(
                &format!("{path}.resource"),
                "the resource URL is an http(s) URL without query or fragment",
            ));
            return None;
        }
        if resource.scheme() == "http" && !crate::access::is_loopback_host(&resource) {
            diagnostics.push(Diagnostic::warning(
                Location::curation(format!("{path}.resource")),
                "the resource URL is plain http: tokens will cross the network in clear text",
            ));
        }
        Some(resource)
    });
    let issuer = required_string(map, path, "issuer", diagnostics);
    let jwks_uri = optional_url(map, path, "jwks_uri", diagnostics);
    let audiences = match map.get("audiences") {
        Some(value) => string_list(value, &format!("{path}.audiences"), diagnostics)?,
        None => Vec::new(),
    };
    let leeway_seconds = seconds(
        map,
        path,
        "leeway_seconds",
        DEFAULT_LEEWAY_SECONDS,
        300,
        diagnostics,
    );
    let jwks_min_refresh_seconds = seconds(
        map,
        path,
        "jwks_min_refresh_seconds",
        DEFAULT_JWKS_MIN_REFRESH_SECONDS,
        86_400,
        diagnostics,
    );
    let jwks_max_age_seconds = seconds(
        map,
        path,
        "jwks_max_age_seconds",
        DEFAULT_JWKS_MAX_AGE_SECONDS,
        604_800,
        diagnostics,
    );
    let introspection = match map.get("introspection") {
        Some(value) => Some(introspection(
            value,
            &format!("{path}.introspection"),
            diagnostics,
        )?),
        None => None,
    };
    if map.get("jwks_uri").is_none() && introspection.is_none() {
        diagnostics.push(error(
            path,
            "`oauth:` needs `jwks_uri:` (JWT access tokens) or `introspection:` (opaque tokens)",
        ));
    }
    if diagnostics[before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    Some(OAuthConfig {
        resource: resource?,
        issuer: issuer?,
        jwks_uri,
        audiences,
        leeway_seconds,
        jwks_min_refresh_seconds,
        jwks_max_age_seconds,
        introspection,
    })
}

fn introspection(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<IntrospectionConfig> {
    let map = as_map(
        value,
        path,
        "a mapping with `endpoint:`, `client_id:` and `client_secret:`",
        diagnostics,
    )?;
    super::check_keys(
        map,
        path,
        &[&["endpoint", "client_id", "client_secret"]],
        diagnostics,
    );
    let endpoint = required_url(map, path, "endpoint", diagnostics);
    let client_id = required_string(map, path, "client_id", diagnostics);
    let client_secret_env = secret_env(map, path, "client_secret", diagnostics);
    Some(IntrospectionConfig {
        endpoint: endpoint?,
        client_id: client_id?,
        client_secret_env: client_secret_env?,
    })
}

fn required_string(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    if !map.contains_key(key) {
        diagnostics.push(error(path, format!("missing `{key}:`")));
        return None;
    }
    optional_string(map, path, key, diagnostics).flatten()
}

/// `Some(None)` when `key` is absent; `None` (with an error) when it is not a non-empty
/// string.
fn optional_string(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Option<String>> {
    match map.get(key) {
        None => Some(None),
        Some(value) => non_empty_string(value, &format!("{path}.{key}"), diagnostics).map(Some),
    }
}

fn required_url(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Url> {
    if !map.contains_key(key) {
        diagnostics.push(error(path, format!("missing `{key}:`")));
        return None;
    }
    optional_url(map, path, key, diagnostics)
}

/// The URL of something ferry fetches: https, or http to a loopback address.
fn optional_url(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Url> {
    let key_path = format!("{path}.{key}");
    let url = absolute_url(map.get(key)?, &key_path, diagnostics)?;
    if !is_secure_or_loopback(&url) {
        diagnostics.push(error(
            &key_path,
            "expected an https URL (plain http only for loopback addresses)",
        ));
        return None;
    }
    Some(url)
}

fn absolute_url(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Url> {
    let url = value.as_str().and_then(|text| Url::parse(text).ok());
    if url.is_none() {
        diagnostics.push(error(path, "expected an absolute URL"));
    }
    url
}

fn seconds(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    default: u64,
    max: u64,
    diagnostics: &mut Vec<Diagnostic>,
) -> u64 {
    match map.get(key) {
        None => default,
        Some(value) => match value.as_u64().filter(|seconds| *seconds <= max) {
            Some(seconds) => seconds,
            None => {
                diagnostics.push(error(
                    &format!("{path}.{key}"),
                    format!("expected a whole number of seconds from 0 to {max}"),
                ));
                default
            }
        },
    }
}

/// A list of scopes, or `None` when any item is not one: scopes read in part would grant what
/// was not written.
fn scopes(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let before = diagnostics.len();
    let list = string_list(value, path, diagnostics)?;
    if diagnostics.len() > before {
        return None;
    }
    let invalid: Vec<&String> = list.iter().filter(|scope| !is_scope_token(scope)).collect();
    if let Some(scope) = invalid.first() {
        diagnostics.push(error(
            path,
            format!("{scope:?} is not a scope: scopes are printable ASCII without spaces, quotes or backslashes"),
        ));
        return None;
    }
    if list.iter().any(|scope| scope == "offline_access") {
        diagnostics.push(error(
            path,
            "`offline_access` is not a scope a tool can require",
        ));
        return None;
    }
    Some(list)
}

fn as_map<'a>(
    value: &'a Value,
    path: &str,
    expected: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<&'a Map<String, Value>> {
    let map = value.as_object();
    if map.is_none() {
        diagnostics.push(error(path, format!("expected {expected}")));
    }
    map
}
