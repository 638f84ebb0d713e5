//! The operators' listener, apart from the MCP one: `GET /metrics` in the Prometheus text
//! format, `GET /healthz` (200 while the process answers) and `GET /readyz` (200 while
//! [`Readiness`] says so, else 503 with the reason).
//!
//! Served by hyper directly, as the MCP listener is, so that every wait has a deadline: a
//! request head must come within [`HEAD_TIMEOUT`], a connection lasts at most
//! [`CONNECTION_LIMIT`] (a scraper opens another), and at most [`CONNECTIONS`] are served at
//! once.
//!
//! Its `Host` is checked as the MCP listener's is, against DNS rebinding (a page in a browser
//! on the same machine whose name was made to resolve here): a request is answered only when
//! every authority it names is `localhost`, an IP address (a scraper reaching a pod or host
//! by address; no rebinding page can have an address for its origin's name) or one of the
//! `--allowed-host` names; anything else is 403.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::sync::Semaphore;

use crate::observe::{Metrics, Readiness};

/// The path metrics are served at.
pub const METRICS: &str = "/metrics";

const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECTION_LIMIT: Duration = Duration::from_secs(60);
const CONNECTIONS: usize = 32;
/// How often histograms fold their recent samples in, scraped or not.
const UPKEEP: Duration = Duration::from_secs(5);

/// The routes of the operators' listener.
pub fn router(metrics: Option<Metrics>, readiness: Readiness) -> Router {
    let mut router = Router::new()
        .route("/healthz", get(|| async { (StatusCode::OK, "ok\n") }))
        .route(
            "/readyz",
            get(move || {
                let readiness = readiness.clone();
                async move {
                    match readiness.check() {
                        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
                        Err(why) => (
                            StatusCode::SERVICE_UNAVAILABLE,
                            format!("not ready: {why}\n"),
                        ),
                    }
                }
            }),
        );
    if let Some(metrics) = metrics {
        router = router.route(
            METRICS,
            get(move || {
                let metrics = metrics.clone();
                async move { render(&metrics) }
            }),
        );
    }
    router
}

/// Serves `router` on `listener` for as long as the future is polled, and keeps `metrics`'
/// histograms folded. `allowed_hosts`: names accepted in `Host` besides `localhost` and IP
/// addresses.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    metrics: Option<Metrics>,
    allowed_hosts: &[String],
) {
    let allowed_hosts: Arc<[String]> = allowed_hosts
        .iter()
        .map(|host| host.to_ascii_lowercase())
        .collect();
    if let Some(metrics) = metrics {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(UPKEEP);
            loop {
                ticks.tick().await;
                metrics.upkeep();
            }
        });
    }
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let (io, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::debug!(%error, "metrics listener: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (builder, router) = (Arc::clone(&builder), router.clone());
        let allowed_hosts = Arc::clone(&allowed_hosts);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let mut router = router.clone();
                let allowed = host_allowed(&request, &allowed_hosts);
                async move {
                    if !allowed {
                        return Ok((StatusCode::FORBIDDEN, "host not allowed\n").into_response());
                    }
                    let Ok(response) = tower_service::Service::call(&mut router, request).await;
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = builder.serve_connection(TokioIo::new(io), service);
            let _ = tokio::time::timeout(CONNECTION_LIMIT, connection).await;
            drop(permit);
        });
    }
}

/// Whether every authority `request` names (its one `Host`, its target's) is `localhost`, an
/// IP address, or one of `allowed`.
fn host_allowed<B>(request: &hyper::Request<B>, allowed: &[String]) -> bool {
    let name_allowed = |authority: &str| {
        super::http::host_of(authority).is_some_and(|name| {
            name.eq_ignore_ascii_case("localhost")
                || name.parse::<std::net::IpAddr>().is_ok()
                || name
                    .strip_prefix('[')
                    .and_then(|name| name.strip_suffix(']'))
                    .is_some_and(|name| name.parse::<std::net::Ipv6Addr>().is_ok())
                || allowed.iter().any(|host| host.eq_ignore_ascii_case(name))
        })
    };
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() || (host.is_none() && request.uri().authority().is_none()) {
        return false;
    }
    request
        .uri()
        .authority()
        .is_none_or(|authority| name_allowed(authority.as_str()))
        && host.is_none_or(|host| host.to_str().is_ok_and(name_allowed))
}

fn render(metrics: &Metrics) -> Response {
    let mut response = (StatusCode::OK, metrics.render()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}
