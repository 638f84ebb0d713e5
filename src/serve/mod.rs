//! Serving a catalog, as `ferry serve` and `ferry demo` do and tests can: the servers built
//! from it, the HTTP workers or stdio, the reporting beside them, and reloads.
//!
//! [`build`] makes one upstream client for the catalog and, for each MCP endpoint, its
//! authenticator and `Server`; start-up and every reload ([`reload`]) build them the same
//! way. Over HTTP, every worker thread (`--workers`, default one per core; the main thread is
//! worker 0) runs a single-threaded tokio runtime; one task accepts every connection and
//! `transport::spread` hands them out in turn, so a connection, its calls and their upstream
//! sockets stay on one thread ([`workers`]). On SIGINT or SIGTERM every worker lets its
//! requests in flight finish, for at most `--shutdown-timeout`, then drops the connections
//! still open; each keeps its runtime running until all have finished, since a pooled
//! connection may belong to another worker's runtime.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::auth::Authenticator;
use crate::catalog::Catalog;
use crate::diagnostic::Diagnostic;
use crate::mcp::confirm::ConfirmKey;
use crate::mcp::{Server, ServerOptions, Serving};
use crate::observe::Observer;
use crate::transport::http::{self, ConnectionLimit, HttpOptions};
use crate::transport::stdio;
use crate::upstream::Upstream;

pub mod observe;
pub mod reload;
pub mod state;
pub mod workers;

use observe::Observing;
use reload::Reload;

/// How the catalog is served; shared with `ferry demo`.
#[derive(Debug, Clone, ClapArgs)]
pub struct TransportArgs {
    /// Serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// On stdio, the endpoint (under the curation's `endpoints:`) whose tools to serve.
    #[arg(long, value_name = "ID")]
    pub endpoint: Option<String>,
    /// Address to listen on (HTTP).
    #[arg(long, env = "FERRY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// A host name accepted in the Host header besides localhost, 127.0.0.1, [::1] and the
    /// listen address (repeat, or comma-separate in the variable); for a proxy in front. The
    /// metrics listener accepts these, localhost and any IP address.
    #[arg(
        long = "allowed-host",
        env = "FERRY_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// An Origin accepted besides loopback ones, as scheme://host[:port] (repeat, or
    /// comma-separate in the variable). Requests without Origin are always accepted.
    #[arg(
        long = "allowed-origin",
        env = "FERRY_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// Largest request body (HTTP) or line (stdio), in bytes.
    #[arg(long, env = "FERRY_BODY_LIMIT", default_value_t = 4 * 1024 * 1024)]
    pub body_limit: usize,
    /// Longest time one HTTP request may take, upstream call included, and a write to a
    /// client that does not read may make no progress, in seconds.
    #[arg(long, env = "FERRY_REQUEST_TIMEOUT", default_value_t = 120)]
    pub request_timeout: u64,
    /// Longest time a client may take to send a request's head, and an HTTP connection may go
    /// without a request in flight (an open subscription stream is one), in seconds; slower
    /// and idle connections are closed.
    #[arg(long, env = "FERRY_HEADER_TIMEOUT", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,
    /// Connections served at once (HTTP); further ones wait to be accepted.
    #[arg(long, env = "FERRY_MAX_CONNECTIONS", default_value_t = ConnectionLimit::DEFAULT as u64,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// On SIGINT or SIGTERM, longest time requests in flight may take to finish (HTTP), in
    /// seconds; connections still open then are dropped.
    #[arg(long, env = "FERRY_SHUTDOWN_TIMEOUT", default_value_t = 30)]
    pub shutdown_timeout: u64,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key), for deployments without
    /// a proxy in front.
    #[arg(long, env = "FERRY_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "FERRY_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Threads serving HTTP, each with its own connections [default: one per core].
    #[arg(long, env = "FERRY_WORKERS")]
    pub workers: Option<NonZeroUsize>,
    #[command(flatten)]
    pub observe: observe::ObserveArgs,
    #[command(flatten)]
    pub state: state::StateArgs,
    /// Export spans (each MCP request, each upstream attempt) over OTLP/HTTP to this
    /// collector URL, as http://127.0.0.1:4318/v1/traces.
    // Read as text and checked by `serve`: clap would echo a refused value, credentials
    // and all.
    #[arg(long, env = "FERRY_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// Longest time spans still queued at shutdown may take to be sent.
const TRACE_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

impl TransportArgs {
    /// How many threads serve: `--workers`, else one per core the process may use; stdio
    /// has one.
    pub fn worker_count(&self) -> usize {
        if self.stdio {
            return 1;
        }
        self.workers
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get)
    }
}

/// The runtime `serve` runs on: single-threaded, since HTTP spreads over threads of its own
/// (see [`workers`]).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
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

/// What every server one process builds shares, start-up's and each reload's: where it
/// reports beside the log (the audit log and metrics, the span exporter), the confirmation
/// nonces already answered, and the rate-limit budgets already spent (both in the process,
/// or in the state replicas share with `--state`).
#[derive(Clone)]
pub struct Reporting {
    pub observer: Option<Observer>,
    pub traces: Option<crate::trace::Exporter>,
    /// The confirmation nonces answered in this process, whichever server took them.
    pub confirm_nonces: Arc<crate::mcp::confirm::Nonces>,
    /// The key that seals confirmation state when the curation names none: made once, so a
    /// reload keeps the confirmations already asked for.
    pub confirm_key: ConfirmKey,
    /// Every caller's rate-limit budgets, so that a reload gives nobody a new one.
    pub limiter: Arc<crate::mcp::limit::Limiter>,
}

/// Nothing reported beside the log, and confirmations and budgets held in this process.
impl Default for Reporting {
    fn default() -> Reporting {
        Reporting {
            observer: None,
            traces: None,
            confirm_nonces: Arc::default(),
            confirm_key: ConfirmKey::generate(),
            limiter: Arc::default(),
        }
    }
}

/// Builds everything that serving takes from the files: the upstream client (one, shared by
/// every endpoint), and for each endpoint its authenticator (its signing keys fetched) and
/// server, with the path it is served at. Without `endpoints:`, one server of every tool at
/// [`http::ENDPOINT`]; on stdio, the one endpoint `--endpoint` names. Start-up and every
/// reload build it the same way.
pub async fn build(
    catalog: &Catalog,
    args: &TransportArgs,
    reporting: &Reporting,
) -> anyhow::Result<Vec<(String, Server)>> {
    let upstream = Upstream::new(catalog)
        .context("setting up the upstream client")?
        .with_traces(reporting.traces.clone());
    let ids = || {
        let ids: Vec<&str> = catalog.endpoints.iter().map(|e| e.id.as_str()).collect();
        ids.join(", ")
    };
    let mut servers = Vec::new();
    if catalog.endpoints.is_empty() {
        if args.endpoint.is_some() {
            anyhow::bail!("--endpoint names an endpoint, but the curation lists no `endpoints:`");
        }
        let server = build_server(catalog, upstream, args, reporting).await?;
        servers.push((http::ENDPOINT.to_string(), server));
    } else if args.stdio {
        let Some(id) = &args.endpoint else {
            anyhow::bail!(
                "the curation lists several endpoints ({}): choose the one to serve on stdio with --endpoint ID",
                ids()
            );
        };
        let Some(chosen) = catalog.endpoint(id) else {
            anyhow::bail!("no endpoint {id:?}: the curation lists {}", ids());
        };
        let server = build_server(&chosen, upstream, args, reporting).await?;
        servers.push((http::ENDPOINT.to_string(), server));
    } else {
        if args.endpoint.is_some() {
            anyhow::bail!(
                "--endpoint chooses what stdio serves; over HTTP every endpoint is served"
            );
        }
        for endpoint in &catalog.endpoints {
            let chosen = catalog
                .endpoint(&endpoint.id)
                .context("an endpoint of the catalog")?;
            let reporting = Reporting {
                observer: (reporting.observer.as_ref()).map(|o| o.for_endpoint(&endpoint.id)),
                ..reporting.clone()
            };
            let server = build_server(&chosen, upstream.clone(), args, &reporting)
                .await
                .with_context(|| format!("endpoint {}", endpoint.id))?;
            servers.push((endpoint.path.clone(), server));
        }
    }
    Ok(servers)
}

/// One endpoint's server: `catalog`'s tools, served with its authorization.
async fn build_server(
    catalog: &Catalog,
    upstream: Upstream,
    args: &TransportArgs,
    reporting: &Reporting,
) -> anyhow::Result<Server> {
    let auth = catalog.auth.as_ref();
    let authenticator = if args.stdio {
        if auth.is_some() {
            tracing::info!(
                "auth: applies to HTTP only; on stdio the process's owner is the caller"
            );
        }
        Authenticator::none()
    } else {
        crate::auth::check_exposure(&args.listen.to_string(), auth)?;
        let tool_scopes = auth
            .map(|auth| crate::auth::tool_scopes(catalog, auth))
            .unwrap_or_default();
        Authenticator::new(auth, tool_scopes).context("setting up authorization")?
    };
    authenticator.warm().await;
    let options = ServerOptions {
        authenticator,
        observer: reporting.observer.clone(),
        traces: reporting.traces.clone(),
        confirm_key: Some(confirm_key(catalog)?.unwrap_or_else(|| reporting.confirm_key.clone())),
        confirm_nonces: Arc::clone(&reporting.confirm_nonces),
        limiter: Arc::clone(&reporting.limiter),
        ..ServerOptions::default()
    };
    Ok(Server::new(catalog, Some(upstream), options))
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

/// The key that seals confirmation state: `confirm_key`'s variable, which must be set;
/// without one, `None` (a key generated for this process), with a warning when some tool
/// confirms, since copies of ferry behind one address must share a key.
fn confirm_key(catalog: &Catalog) -> anyhow::Result<Option<ConfirmKey>> {
    let Some(name) = &catalog.confirm.key_env else {
        return Ok(None);
    };
    let value = std::env::var(name)
        .with_context(|| format!("reading the confirmation key from ${name} (`confirm_key`)"))?;
    let key = ConfirmKey::new(value.as_bytes()).with_context(|| {
        format!(
            "the confirmation key in ${name} is shorter than {} bytes: use a long random value, such as `openssl rand -hex 32`",
            ConfirmKey::MIN_LEN
        )
    })?;
    Ok(Some(key))
}
