//! `ferry serve`: compile the chosen operations, refuse to start on errors, then serve the
//! catalog over Streamable HTTP (default) or stdio.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use ferry::auth::{AuthConfig, Authenticator};
use ferry::catalog::Catalog;
use ferry::diagnostic::Diagnostic;
use ferry::mcp::{Server, ServerOptions};
use ferry::transport::http::{self, HttpOptions};
use ferry::transport::stdio;
use ferry::upstream::{Upstream, UpstreamConfig};

use super::SourceArgs;

#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub transport: TransportArgs,
}

/// How the catalog is served; shared with `ferry demo`.
#[derive(Debug, Clone, ClapArgs)]
pub struct TransportArgs {
    /// Serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Address to listen on (HTTP).
    #[arg(long, env = "FERRY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// A host name accepted in the Host header besides localhost, 127.0.0.1, [::1] and the
    /// listen address (repeat, or comma-separate in the variable); for a proxy in front.
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
    /// Longest time one HTTP request may take, upstream call included, in seconds.
    #[arg(long, env = "FERRY_REQUEST_TIMEOUT", default_value_t = 120)]
    pub request_timeout: u64,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key), for deployments without
    /// a proxy in front.
    #[arg(long, env = "FERRY_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "FERRY_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let loaded = super::load_chosen(&args.source)?;
    let config = UpstreamConfig {
        call: loaded.curation.call.clone(),
        auth: loaded.curation.upstream_auth.clone(),
        identity_header: loaded.curation.upstream_identity.clone(),
    };
    serve_catalog(
        loaded.catalog,
        &config,
        loaded.curation.auth.as_ref(),
        &loaded.diagnostics,
        &args.transport,
    )
}

/// Prints every diagnostic on stderr (from a chosen-only compile: those about what is
/// served); serves `catalog` only when none is an error.
pub fn serve_catalog(
    catalog: Catalog,
    config: &UpstreamConfig,
    auth: Option<&AuthConfig>,
    diagnostics: &[Diagnostic],
    args: &TransportArgs,
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
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(serve_with_auth(catalog, config, auth, args, None))?;
    Ok(ExitCode::SUCCESS)
}

/// Serves `catalog` until stdin closes (stdio) or SIGINT/SIGTERM (HTTP). `announce` is called
/// with the endpoint URL once HTTP is listening.
pub async fn serve(
    catalog: Catalog,
    config: &UpstreamConfig,
    args: &TransportArgs,
    announce: Option<&dyn Fn(&str)>,
) -> anyhow::Result<()> {
    serve_with_auth(catalog, config, None, args, announce).await
}

/// [`serve`] with inbound authorization (`auth:`; `None` allows loopback HTTP only). On
/// stdio nobody is asked: the process's owner is the only caller.
pub async fn serve_with_auth(
    catalog: Catalog,
    config: &UpstreamConfig,
    auth: Option<&AuthConfig>,
    args: &TransportArgs,
    announce: Option<&dyn Fn(&str)>,
) -> anyhow::Result<()> {
    let upstream = Upstream::new(&catalog, config).context("setting up the upstream client")?;
    let authenticator = if args.stdio {
        if auth.is_some() {
            tracing::info!(
                "auth: applies to HTTP only; on stdio the process's owner is the caller"
            );
        }
        Authenticator::none()
    } else {
        ferry::auth::check_exposure(&args.listen.to_string(), auth)?;
        let tool_scopes = catalog
            .tools
            .iter()
            .filter_map(|tool| Some((tool.name.clone(), tool.scopes.clone()?)));
        Authenticator::new(auth, tool_scopes).context("setting up authorization")?
    };
    authenticator.warm().await;
    let options = ServerOptions {
        authenticator: authenticator.clone(),
        ..ServerOptions::default()
    };
    let server = Arc::new(Server::new(&catalog, Some(upstream), options));
    tracing::info!(tools = catalog.tools.len(), "catalog ready");
    if args.stdio {
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        stdio::serve(server, input, tokio::io::stdout(), args.body_limit)
            .await
            .context("serving stdio")?;
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let local = listener
        .local_addr()
        .context("reading the listen address")?;
    let scheme = if args.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    let endpoint = format!("{scheme}://{local}{}", http::ENDPOINT);
    tracing::info!(%endpoint, "serving MCP over Streamable HTTP");
    if let Some(announce) = announce {
        announce(&endpoint);
    }
    let options = HttpOptions {
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        body_limit: args.body_limit,
        request_timeout: Duration::from_secs(args.request_timeout),
        authenticator,
        ..HttpOptions::default()
    };
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = ferry::tls::server_config(cert, key).context("setting up TLS")?;
            let listener = ferry::tls::TlsListener::new(listener, tls).context("setting up TLS")?;
            http::serve(server, listener, options, shutdown_signal())
                .await
                .context("serving HTTPS")?;
        }
        _ => http::serve(server, listener, options, shutdown_signal())
            .await
            .context("serving HTTP")?,
    }
    tracing::info!("stopped");
    Ok(())
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
