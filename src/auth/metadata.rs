//! RFC 9728 protected resource metadata: where clients learn which authorization server
//! issues tokens for this server. Built from the configured resource URL only, never from
//! request headers, so a proxy or a forged `Host` cannot redirect clients elsewhere.

use serde_json::{Value, json};
use url::Url;

/// Where clients look for the metadata first when a resource URL has no path, and last when
/// it has one.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata's URL and path for `resource`: the well-known path plus the resource's own
/// path (`https://host/mcp` → `https://host/.well-known/oauth-protected-resource/mcp`).
pub(crate) fn location(resource: &Url) -> (String, String) {
    let suffix = resource.path().trim_end_matches('/');
    let path = format!("{WELL_KNOWN}{suffix}");
    (
        format!("{}{path}", resource.origin().ascii_serialization()),
        path,
    )
}

pub(crate) fn document(resource: &Url, issuer: &str, scopes_supported: &[String]) -> Value {
    let mut document = json!({
        "resource": super::canonical_resource(resource),
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
    });
    if !scopes_supported.is_empty() {
        document["scopes_supported"] = json!(scopes_supported);
    }
    document
}
