//! RFC 9728 protected resource metadata: where clients learn which authorization server
//! issues tokens for this server. Built from the configured resource URL only, never from
//! request headers, so a proxy or a forged `Host` cannot redirect clients elsewhere.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use serde_json::{Value, json};
use url::Url;

/// The root well-known path; a resource's own metadata path starts with it.
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

/// Serves `document` at `path`, and at the root well-known path when that differs (clients
/// try the path-suffixed URL first, then the root).
pub(crate) fn router<S: Clone + Send + Sync + 'static>(path: &str, document: &Value) -> Router<S> {
    let body = Bytes::from(document.to_string());
    let handler = move || {
        let body = body.clone();
        async move { response(body) }
    };
    let mut router = Router::new().route(path, get(handler.clone()));
    if path != WELL_KNOWN {
        router = router.route(WELL_KNOWN, get(handler));
    }
    router
}

/// Whether the metadata whose own path is `metadata_path` is served at `path`.
pub(crate) fn serves(metadata_path: &str, path: &str) -> bool {
    path == metadata_path || path == WELL_KNOWN
}

/// The metadata document as served: JSON, cacheable for an hour, readable from any origin.
pub(crate) fn response(body: Bytes) -> axum::response::Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
            (
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            ),
        ],
        body,
    )
        .into_response()
}
