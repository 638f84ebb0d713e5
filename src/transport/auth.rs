//! What `auth` decided, on the wire: a [`Challenge`] as a response with its
//! `WWW-Authenticate` (and `Retry-After`), and the RFC 9728 protected resource metadata as
//! routes.

use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use http::{HeaderValue, header};

use crate::auth::{Authenticator, Challenge, METADATA_ROOT_PATH};

/// The response refusing a request with `challenge`: its status, `WWW-Authenticate` and,
/// when trying again soon may work, `Retry-After`.
pub fn challenge_response(challenge: &Challenge) -> Response {
    let mut response = challenge.status().into_response();
    add_challenge(&mut response, challenge);
    response
}

/// Adds `challenge`'s `WWW-Authenticate` (and `Retry-After`, when trying again soon may work)
/// to `response`.
pub(crate) fn add_challenge(response: &mut Response, challenge: &Challenge) {
    if let Some(value) = challenge
        .www_authenticate()
        .and_then(|value| HeaderValue::from_str(value).ok())
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    if let Some(seconds) = challenge.retry_after() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
}

/// Routes serving `authenticator`'s protected resource metadata at its path, and at the
/// root well-known path when that differs (clients try the path-suffixed URL first, then
/// the root); empty without OAuth. Merge into the HTTP router.
pub fn metadata_router<S: Clone + Send + Sync + 'static>(
    authenticator: &Authenticator,
) -> Router<S> {
    let (Some(path), Some(document)) = (
        authenticator.metadata_path(),
        authenticator.metadata_document(),
    ) else {
        return Router::new();
    };
    let body = Bytes::from(document.to_string());
    let handler = move || {
        let body = body.clone();
        async move { metadata(body) }
    };
    let mut router = Router::new().route(path, get(handler.clone()));
    if path != METADATA_ROOT_PATH {
        router = router.route(METADATA_ROOT_PATH, get(handler));
    }
    router
}

/// The answer to a GET of `path` when `authenticator` serves its protected resource metadata
/// there (OAuth only), at its own path or the root well-known one: for a router that asks
/// whichever authenticator is current, since a reload may change it.
pub fn metadata_response(authenticator: &Authenticator, path: &str) -> Option<Response> {
    let own = authenticator.metadata_path()?;
    if path != own && path != METADATA_ROOT_PATH {
        return None;
    }
    let document = authenticator.metadata_document()?;
    Some(metadata(Bytes::from(document.to_string())))
}

/// The metadata document as served: JSON, cacheable for an hour, readable from any origin.
fn metadata(body: Bytes) -> Response {
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
