//! The operators' listener, apart from the MCP one: `GET /metrics` in the Prometheus text
//! format, `GET /healthz` (200 while the process answers) and `GET /readyz` (200 while
//! [`Readiness`] says so, else 503 with the reason).
//!
//! Served by hyper directly, as the MCP listener is, so that every wait has a deadline: a
//! request head must come within [`HEAD_TIMEOUT`], a connection lasts at most
//! [`CONNECTION_LIMIT`] (a scraper opens another), and at most [`CONNECTIONS`] are served at
//! once.

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
/// histograms folded.
pub async fn serve(listener: tokio::net::TcpListener, router: Router, metrics: Option<Metrics>) {
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
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let mut router = router.clone();
                async move {
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

fn render(metrics: &Metrics) -> Response {
    let mut response = (StatusCode::OK, metrics.render()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}
