//! The HTTP workers: one single-threaded runtime per thread, connections handed out in turn,
//! and the signals that stop them (SIGINT, SIGTERM) and reload them (SIGHUP).

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::{mpsc, watch};

use crate::transport::http::{self, HttpOptions};
use crate::transport::spread::{Share, spread};

/// Serves HTTP on `workers` threads, each running a single-threaded runtime: the calling
/// thread accepts connections and hands them out in turn, and a connection, its calls and
/// their upstream sockets stay on the thread it was handed to, so no call moves between
/// threads. The calling thread is worker 0 and watches for SIGINT/SIGTERM; on either, every
/// worker lets its requests in flight finish, for at most the shutdown timeout.
pub(super) async fn serve_http(
    server: http::Routes,
    listener: std::net::TcpListener,
    options: HttpOptions,
    tls: Option<Arc<rustls::ServerConfig>>,
    workers: usize,
) -> anyhow::Result<()> {
    let (stop, stopping) = watch::channel(false);
    let stop = Arc::new(stop);
    // A worker that finished keeps its runtime running until all have: a connection pooled
    // by one runtime (to an authorization server, say) may serve another's request till then.
    let (finished, mut all_finished) = mpsc::channel::<()>(1);
    let (release, released) = watch::channel(false);
    let listener = tokio::net::TcpListener::from_std(listener).context("listening")?;
    let (accept, shares) = spread(listener, workers).context("listening")?;
    let mut shares = shares.into_iter();
    let first = shares.next().context("no worker to serve")?;
    let mut threads = Vec::with_capacity(workers.saturating_sub(1));
    for (index, listener) in (1..).zip(shares) {
        let runtime = runtime()?;
        let (server, options, tls) = (server.clone(), options.clone(), tls.clone());
        let (stop, mut stopping) = (Arc::clone(&stop), stopping.clone());
        let (finished, mut released) = (finished.clone(), released.clone());
        let thread = std::thread::Builder::new()
            .name(format!("ferry-worker-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let shutdown = async move {
                        let _ = stopping.wait_for(|stop| *stop).await;
                    };
                    let served = serve_listener(server, listener, options, tls, shutdown).await;
                    if let Err(error) = &served {
                        tracing::error!(worker = index, error = %format!("{error:#}"), "worker stopped; stopping the others");
                        stop.send_replace(true);
                    }
                    drop(finished);
                    let _ = released.wait_for(|released| *released).await;
                    served
                })
            })
            .context("starting a worker thread")?;
        threads.push(thread);
    }
    drop(finished);
    let accepting = tokio::spawn(accept);
    let shutdown = {
        let (stop, mut stopping) = (Arc::clone(&stop), stopping.clone());
        async move {
            tokio::select! {
                () = shutdown_signal() => {}
                _ = stopping.wait_for(|stop| *stop) => {}
            }
            stop.send_replace(true);
        }
    };
    let mut result = serve_listener(server, first, options, tls, shutdown).await;
    // Worker 0 may also have stopped by failing; the others stop with it.
    stop.send_replace(true);
    accepting.abort();
    // Every worker drops its sender once it has finished serving; then all may end.
    while all_finished.recv().await.is_some() {}
    release.send_replace(true);
    for thread in threads {
        let served = thread
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("a worker thread panicked")));
        if result.is_ok() {
            result = served;
        }
    }
    result
}

/// Serves one worker's share of the connections, with TLS when `tls` is given.
async fn serve_listener(
    server: http::Routes,
    listener: Share,
    options: HttpOptions,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    match tls {
        Some(tls) => {
            let listener =
                crate::transport::tls::TlsListener::new(listener, tls).context("setting up TLS")?;
            http::serve(server, listener, options, shutdown)
                .await
                .context("serving HTTPS")
        }
        None => http::serve(server, listener, options, shutdown)
            .await
            .context("serving HTTP"),
    }
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot watch SIGTERM");
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            _ = interrupt => {}
            () = terminate => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    tracing::info!("shutting down: letting requests in flight finish");
}

/// Every SIGHUP, counted: each listener (a reload, a log file reopened for rotation) calls
/// this once and waits for the count to change. From the first call on, SIGHUP no longer
/// ends the process. Must be called inside a runtime.
pub fn hangups() -> watch::Receiver<u64> {
    let (count, counted) = watch::channel(0);
    #[cfg(unix)]
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(mut signal) => {
            tokio::spawn(async move {
                while signal.recv().await.is_some() {
                    count.send_modify(|count| *count += 1);
                    if count.is_closed() {
                        break;
                    }
                }
            });
        }
        Err(error) => tracing::warn!(%error, "cannot watch SIGHUP"),
    }
    #[cfg(not(unix))]
    drop(count);
    counted
}

/// The runtime serving runs on, each worker's: single-threaded, since HTTP spreads over
/// threads of its own ([`serve_http`]).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}
