//! The flags `ferry serve` and `ferry demo` take to serve a catalog (`TransportArgs`): how it
//! is carried (HTTP or stdio), how requests are bounded, TLS, workers, and, flattened in, what
//! is reported (`serve::observe`) and where shared state lives (`serve::state`).

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::serve::observe::ObserveArgs;
use crate::serve::state::StateArgs;
use crate::transport::http::ConnectionLimit;

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
    pub observe: ObserveArgs,
    #[command(flatten)]
    pub state: StateArgs,
    /// Export spans (each MCP request, each upstream attempt) over OTLP/HTTP to this
    /// collector URL, as http://127.0.0.1:4318/v1/traces.
    // Read as text and checked by `serve`: clap would echo a refused value, credentials
    // and all.
    #[arg(long, env = "FERRY_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

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
