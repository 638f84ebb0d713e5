//! Whether ferry is ready for calls, as `/readyz` reports it: a catalog is loaded and, when
//! asked, the upstream accepted a TCP connection within the last check interval. The upstream
//! is checked in the background (every half interval, each attempt with half an interval as
//! its deadline), never on a request's path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// Shared readiness; cheap to clone.
#[derive(Debug, Clone)]
pub struct Readiness(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    catalog: AtomicBool,
    /// The check interval, when the upstream is checked.
    interval: Option<Duration>,
    /// When the readiness was made: the clock `connected_ms` counts from.
    origin: Instant,
    /// Milliseconds after `origin` (plus one, so 0 is never) of the last accepted connection.
    connected_ms: AtomicU64,
}

impl Readiness {
    /// `interval`: check that the upstream accepts connections, at this interval.
    pub fn new(interval: Option<Duration>) -> Readiness {
        Readiness(Arc::new(Inner {
            catalog: AtomicBool::new(false),
            interval,
            origin: Instant::now(),
            connected_ms: AtomicU64::new(0),
        }))
    }

    /// A catalog is loaded and served.
    pub fn catalog_loaded(&self) {
        self.0.catalog.store(true, Ordering::Release);
    }

    /// `Ok` when ready; otherwise why not.
    pub fn check(&self) -> Result<(), &'static str> {
        if !self.0.catalog.load(Ordering::Acquire) {
            return Err("no catalog loaded");
        }
        let Some(interval) = self.0.interval else {
            return Ok(());
        };
        let connected = self.0.connected_ms.load(Ordering::Acquire);
        if connected == 0 {
            return Err("the upstream has not accepted a connection yet");
        }
        let since = self.0.origin + Duration::from_millis(connected - 1);
        if since.elapsed() > interval {
            return Err("the upstream accepted no connection in the last interval");
        }
        Ok(())
    }

    /// Checks, for as long as the future is polled, that every `host:port` of `upstreams`
    /// (each API's upstream) accepts a connection: ready when each did in the last round.
    pub async fn watch_upstreams(self, upstreams: Vec<(String, u16)>) {
        let Some(interval) = self.0.interval else {
            return;
        };
        let half = interval / 2;
        let mut ticks = tokio::time::interval(half);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = vec![false; upstreams.len()];
        loop {
            ticks.tick().await;
            let mut all = true;
            for ((host, port), failing) in upstreams.iter().zip(&mut failing) {
                let port = *port;
                let attempt = tokio::time::timeout(
                    half,
                    tokio::net::TcpStream::connect((host.as_str(), port)),
                )
                .await;
                match attempt {
                    Ok(Ok(_connection)) => {
                        if *failing {
                            tracing::info!(%host, port, "upstream accepts connections again");
                            *failing = false;
                        }
                    }
                    Ok(Err(error)) => {
                        all = false;
                        if !*failing {
                            tracing::warn!(%host, port, %error, "readiness: the upstream refused a connection");
                            *failing = true;
                        }
                    }
                    Err(_) => {
                        all = false;
                        if !*failing {
                            tracing::warn!(%host, port, timeout_ms = half.as_millis() as u64, "readiness: no connection to the upstream in time");
                            *failing = true;
                        }
                    }
                }
            }
            if all {
                let ms = u64::try_from(self.0.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.0
                    .connected_ms
                    .store(ms.saturating_add(1), Ordering::Release);
            }
        }
    }
}
