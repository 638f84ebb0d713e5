//! Serving a catalog, as `ferry serve` and `ferry demo` do and tests can: the servers built
//! from it, the HTTP workers or stdio, the reporting beside them, and reloads.
//!
//! This file runs the assembly from its parts, which never import it: [`args`] (the flags),
//! [`servers`] (what is built from the files: one upstream client for the catalog and, for
//! each MCP endpoint, its authenticator and `Server`), [`workers`], [`reload`], and
//! [`observe`] and [`state`] (what is reported, what replicas share). Start-up and every
//! reload build the servers the same way. Over HTTP, every worker thread (`--workers`,
//! default one per core; the main thread is worker 0) runs a single-threaded tokio runtime;
//! one task accepts every connection and `transport::spread` hands them out in turn, so a
//! connection, its calls and their upstream sockets stay on one thread. On SIGINT or SIGTERM
//! every worker lets its requests in flight finish, for at most `--shutdown-timeout`, then
//! drops the connections still open; each keeps its runtime running until all have
//! finished, since a pooled connection may belong to another worker's runtime.

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;

use crate::catalog::Catalog;
use crate::diagnostic::Diagnostic;
use crate::mcp::Serving;
use crate::mcp::confirm::ConfirmKey;
use crate::observe::Observer;
use crate::serve::args::TransportArgs;
use crate::serve::observe::Observing;
use crate::serve::reload::Reload;
use crate::serve::servers::{Reporting, build};
use crate::serve::workers::runtime;
use crate::transport::http::{self, ConnectionLimit, HttpOptions};
use crate::transport::stdio;

pub mod args;
pub mod observe;
pub mod reload;
pub mod servers;
pub mod state;
pub mod workers;

/// Longest time spans still queued at shutdown may take to be sent.
const TRACE_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the process does once start-up is over, as the first request can come: set by the
/// binary (for its allocator's settings), nothing unless set.
static SERVING_BEGINS: OnceLock<fn()> = OnceLock::new();

/// Has `hook` called once serving begins: after the catalog is built, as stdio or the HTTP
/// listener starts taking requests. Only the first hook set is kept.
pub fn when_serving_begins(hook: fn()) {
    let _ = SERVING_BEGINS.set(hook);
}

fn serving_begins() {
    if let Some(hook) = SERVING_BEGINS.get() {
        hook();
    }
}

/// Prints every diagnostic on stderr (from a chosen-only compile: those about what is
/// served); serves `catalog` only when none is an error, reloading it as `reload` says.
/// `announce` is called with the endpoint URL once HTTP is listening.
pub fn serve_catalog(
    catalog: Catalog,
    diagnostics: &[Diagnostic],
    args: &TransportArgs,
    reload: Option<Reload>,
    announce: Option<&dyn Fn(&str)>,
) -> anyhow::Result<ExitCode> {
    for diagnostic in diagnostics {
        eprintln!("{diagnostic}");
    }
    let errors = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .count();
    if errors > 0 {
        eprintln!("ferry: refusing to serve: {errors} error(s) in the catalog");
        return Ok(ExitCode::from(1));
    }
    let runtime = runtime()?;
    let served = runtime.block_on(serve_reloading(catalog, args, announce, reload));
    // Serving has ended: a reload still reading or compiling on a blocking thread is left
    // to the exit rather than waited for.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Serves `catalog` until stdin closes (stdio) or SIGINT/SIGTERM (HTTP), with its inbound
/// authorization (`Catalog::auth`; none allows loopback HTTP only; on stdio nobody is asked:
/// the process's owner is the only caller). `announce` is called with the endpoint URL once
/// HTTP is listening.
pub async fn serve(
    catalog: Catalog,
    args: &TransportArgs,
    announce: Option<&dyn Fn(&str)>,
) -> anyhow::Result<()> {
    serve_reloading(catalog, args, announce, None).await
}

/// [`serve`], with `reload` replacing what is served on SIGHUP (and, watching, when the
/// files change) until serving ends.
async fn serve_reloading(
    catalog: Catalog,
    args: &TransportArgs,
    announce: Option<&dyn Fn(&str)>,
    reload: Option<Reload>,
) -> anyhow::Result<()> {
    let workers = args.worker_count();
    let mut observing = args.observe.start(
        (!args.stdio).then_some(args.listen),
        &catalog
            .apis
            .iter()
            .filter_map(|api| api.upstream.as_deref())
            .collect::<Vec<_>>(),
    )?;
    let (traces, exporting) = match &args.otlp_endpoint {
        Some(endpoint) => {
            let endpoint = crate::trace::Endpoint::parse(endpoint)
                .map_err(|error| anyhow::anyhow!("invalid --otlp-endpoint: {error}"))?;
            let (exporter, exporting) =
                crate::trace::export::start(endpoint.clone(), Default::default())
                    .context("starting the span exporter")?;
            tracing::info!(endpoint = %endpoint.as_str(), "exporting spans over OTLP/HTTP");
            (Some(exporter), Some(exporting))
        }
        None => (None, None),
    };
    let (limiter, confirm_nonces) = args.state.start().await?;
    let reporting = Reporting {
        observer: observing.observer.clone(),
        traces,
        confirm_nonces,
        confirm_key: ConfirmKey::generate(),
        limiter,
    };
    let servers = build(&catalog, args, &reporting).await?;
    tracing::info!(tools = catalog.served_tools(), "catalog ready");
    warn_of_generated_key(&catalog, args);
    let digesting = digest_and_drop(catalog, reporting.observer.clone(), observing.readiness());
    let served: Vec<(String, Serving)> = servers
        .into_iter()
        .map(|(path, server)| (path, Serving::new(Arc::new(server))))
        .collect();
    // SIGHUP is taken over before anything is served, so that none can end the process.
    let reloading = reload.map(|reload| {
        tokio::spawn(reload.run(served.clone(), workers::hangups(), reporting, digesting))
    });
    let served = serve_current(served, args, announce, workers, &mut observing).await;
    if let Some(reloading) = reloading {
        reloading.abort();
    }
    if let Some(exporting) = exporting {
        exporting.shutdown(TRACE_FLUSH_TIMEOUT).await;
    }
    observing.finish();
    served
}

/// Digests `catalog` (for the metrics' tools-served count and label, and the next reload's
/// diff), then drops it: the server holds its own copy of every tool, and this one would only
/// double the memory held while serving. Both are done on another thread, so that neither
/// holds up the first answer (5,000 tools take about 20 ms to digest); `/readyz` turns ready
/// once the metrics are set, so what it says and what they say agree.
fn digest_and_drop(
    catalog: Catalog,
    observer: Option<Observer>,
    readiness: crate::observe::Readiness,
) -> tokio::task::JoinHandle<crate::lock::Digests> {
    tokio::task::spawn_blocking(move || {
        let digests = crate::lock::Digests::new(&catalog);
        if let Some(observer) = observer {
            observer.catalog(digests.tools(), &digests.digest());
        }
        readiness.catalog_loaded();
        digests
    })
}

/// Serves whatever each endpoint's `Serving` of `served` holds when each request comes.
async fn serve_current(
    served: Vec<(String, Serving)>,
    args: &TransportArgs,
    announce: Option<&dyn Fn(&str)>,
    workers: usize,
    observing: &mut Observing,
) -> anyhow::Result<()> {
    if args.stdio {
        observing.run_beside(&args.observe, &args.allowed_hosts)?;
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        let (_, serving) = served.into_iter().next().context("nothing to serve")?;
        serving_begins();
        stdio::serve(serving, input, tokio::io::stdout(), args.body_limit)
            .await
            .context("serving stdio")?;
        return Ok(());
    }
    let listener = std::net::TcpListener::bind(args.listen)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .with_context(|| format!("listening on {}", args.listen))?;
    let local = listener
        .local_addr()
        .context("reading the listen address")?;
    let scheme = if args.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    let urls: Vec<String> = served
        .iter()
        .map(|(path, _)| format!("{scheme}://{local}{path}"))
        .collect();
    let endpoint = urls.first().cloned().context("no endpoint to serve")?;
    observing.run_beside(&args.observe, &args.allowed_hosts)?;
    tracing::info!(%endpoint, workers, "serving MCP over Streamable HTTP");
    for url in &urls[1..] {
        tracing::info!(endpoint = %url, "serving MCP over Streamable HTTP");
    }
    if let Some(announce) = announce {
        announce(&endpoint);
    }
    let options = HttpOptions {
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        body_limit: args.body_limit,
        request_timeout: Duration::from_secs(args.request_timeout),
        header_timeout: Duration::from_secs(args.header_timeout),
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
        connection_limit: ConnectionLimit::new(
            usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        ),
        observer: observing.observer.clone(),
        ..HttpOptions::default()
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(crate::transport::tls::server_config(cert, key).context("setting up TLS")?)
        }
        _ => None,
    };
    serving_begins();
    workers::serve_http(http::Routes::new(served), listener, options, tls, workers).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Says once, at start-up, that confirmations and task ids hold only on this process, where
/// that matters: confirming or long-running tools served over HTTP, where copies may stand
/// behind a load balancer, with no `confirm_key`. A reload keeps the generated key, and
/// stdio has one client, so neither is told.
fn warn_of_generated_key(catalog: &Catalog, args: &TransportArgs) {
    let confirming = catalog
        .tools
        .iter()
        .filter(|tool| tool.confirm.is_some())
        .count();
    if confirming > 0 && catalog.confirm.key_env.is_none() && !args.stdio {
        tracing::warn!(
            tools = confirming,
            "confirming tools are served with a key generated at start-up: a confirmation is \
             valid only on this process, so copies behind a load balancer must share \
             `confirm_key: {{env: VAR}}`"
        );
    }
    let long_running = catalog
        .tools
        .iter()
        .filter_map(|tool| tool.operation())
        .filter(|operation| operation.long_running.is_some())
        .count();
    if long_running > 0 && catalog.confirm.key_env.is_none() && !args.stdio {
        tracing::warn!(
            tools = long_running,
            "long-running tools are served with a key generated at start-up: a task id is \
             valid only on this process, so copies behind a load balancer must share \
             `confirm_key: {{env: VAR}}`"
        );
    }
}
