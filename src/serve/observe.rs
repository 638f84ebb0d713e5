//! The flags that say where calls are recorded (`--audit-log`, `--metrics-listen`) and the
//! start-up of what they ask for: a path that cannot be opened, or an address that cannot be
//! bound (or is the MCP listener's own), stops `serve` before it listens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::observe::{Audit, AuditCounters, AuditTarget, Metrics, Observer, Readiness};

/// How long queued audit records may take to be written when ferry stops.
const AUDIT_FINISH: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, ClapArgs)]
pub struct ObserveArgs {
    /// Append one JSON line per tools/call and per refused request to this file (`-`:
    /// stderr); reopened on SIGHUP, for log rotation.
    #[arg(long, env = "FERRY_AUDIT_LOG", value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics, on a listener of their own (for
    /// example 127.0.0.1:9464); it has no authentication.
    #[arg(long, env = "FERRY_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// /readyz also asks that the upstream (every API's, with `apis:`) accepted a TCP
    /// connection within the last --ready-check-interval (checked in the background).
    #[arg(long, env = "FERRY_READY_CHECK_UPSTREAM", requires = "metrics_listen")]
    pub ready_check_upstream: bool,
    /// The upstream readiness interval, in seconds.
    #[arg(long, env = "FERRY_READY_CHECK_INTERVAL", default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub ready_check_interval: u64,
}

/// What the flags set up, before serving starts.
pub struct Observing {
    pub observer: Option<Observer>,
    /// The metrics listener, bound.
    admin: Option<std::net::TcpListener>,
    readiness: Readiness,
    /// Each upstream's host and port, when their readiness is checked.
    upstreams: Vec<(String, u16)>,
}

impl ObserveArgs {
    /// Opens the audit log, makes the metrics and binds their listener, as the flags ask;
    /// `listen` is the MCP listener's address (`None` on stdio), `upstreams` each API's base
    /// URL.
    pub fn start(
        &self,
        listen: Option<SocketAddr>,
        upstreams: &[&str],
    ) -> anyhow::Result<Observing> {
        let mut checked = Vec::new();
        if self.ready_check_upstream {
            if upstreams.is_empty() {
                anyhow::bail!("--ready-check-upstream: no upstream to check");
            }
            for base in upstreams {
                let url = url::Url::parse(base)
                    .with_context(|| format!("--ready-check-upstream: reading {base}"))?;
                let host = url
                    .host_str()
                    .map(|host| host.trim_matches(['[', ']']).to_owned());
                match (host, url.port_or_known_default()) {
                    (Some(host), Some(port)) => checked.push((host, port)),
                    _ => anyhow::bail!("--ready-check-upstream: {base} names no host and port"),
                }
            }
        }
        let interval = Duration::from_secs(self.ready_check_interval);
        let readiness = Readiness::new((!checked.is_empty()).then_some(interval));
        let admin = match self.metrics_listen {
            None => None,
            Some(address) => {
                if let Some(listen) = listen
                    && same_address(address, listen)
                {
                    anyhow::bail!(
                        "--metrics-listen {address} is the MCP listener's address: give metrics an address of their own"
                    );
                }
                let listener = std::net::TcpListener::bind(address)
                    .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
                    .with_context(|| format!("listening for metrics on {address}"))?;
                Some(listener)
            }
        };
        let metrics = admin.as_ref().map(|_| Metrics::new());
        let audit = match &self.audit_log {
            None => None,
            Some(path) => {
                let target = if path.as_os_str() == "-" {
                    AuditTarget::Stderr
                } else {
                    AuditTarget::File(path.clone())
                };
                let counters = AuditCounters {
                    dropped: metrics.as_ref().map(Metrics::audit_dropped),
                    write_errors: metrics.as_ref().map(Metrics::audit_write_errors),
                };
                Some(
                    Audit::open(target, counters)
                        .with_context(|| format!("opening the audit log {}", path.display()))?,
                )
            }
        };
        let observer =
            (audit.is_some() || metrics.is_some()).then(|| Observer::new(audit, metrics));
        Ok(Observing {
            observer,
            admin,
            readiness,
            upstreams: checked,
        })
    }

    /// Whether SIGHUP should reopen a file.
    fn reopens(&self) -> bool {
        self.audit_log
            .as_ref()
            .is_some_and(|path| path.as_os_str() != "-")
    }
}

impl Observing {
    /// Starts what runs beside serving (on the current runtime): the metrics listener (which
    /// accepts the `allowed_hosts` in `Host`, as the MCP listener does), and the audit log's
    /// reopening on SIGHUP.
    pub fn run_beside(
        &mut self,
        args: &ObserveArgs,
        allowed_hosts: &[String],
    ) -> anyhow::Result<()> {
        if let Some(observer) = &self.observer
            && args.reopens()
        {
            tokio::spawn(reopen_on_hangup(observer.clone()));
        }
        if let Some(listener) = self.admin.take() {
            let listener =
                tokio::net::TcpListener::from_std(listener).context("listening for metrics")?;
            let local = listener
                .local_addr()
                .context("reading the metrics address")?;
            let metrics = self.observer.as_ref().and_then(Observer::metrics).cloned();
            let router = crate::transport::admin::router(metrics.clone(), self.readiness.clone());
            let upstreams = std::mem::take(&mut self.upstreams);
            if !upstreams.is_empty() {
                tokio::spawn(self.readiness.clone().watch_upstreams(upstreams));
            }
            let allowed_hosts = allowed_hosts.to_vec();
            tokio::spawn(async move {
                crate::transport::admin::serve(listener, router, metrics, &allowed_hosts).await
            });
            let url = format!("http://{local}{}", crate::transport::admin::METRICS);
            tracing::info!(metrics = %url, "serving metrics");
        }
        Ok(())
    }

    /// What `/readyz` answers from: ready once a catalog is served, its tools counted and
    /// its digest labelled (see `serve::digest_and_drop`).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Writes what the audit log still holds.
    pub fn finish(&self) {
        if let Some(observer) = &self.observer {
            observer.finish(AUDIT_FINISH);
        }
    }
}

/// Two listen addresses that would be one listener: the same port (not 0, which picks a
/// free one) on the same address, or on any address when either is unspecified.
fn same_address(one: SocketAddr, other: SocketAddr) -> bool {
    one.port() != 0
        && one.port() == other.port()
        && (one.ip() == other.ip() || one.ip().is_unspecified() || other.ip().is_unspecified())
}

/// Reopens the audit log at each SIGHUP (a rotation renamed it away).
async fn reopen_on_hangup(observer: Observer) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(hangups) => hangups,
            Err(error) => {
                tracing::warn!(%error, "cannot watch SIGHUP; the audit log is not reopened");
                return;
            }
        };
        while hangups.recv().await.is_some() {
            on_hangup(&observer);
        }
    }
    #[cfg(not(unix))]
    {
        let _ = observer;
    }
}

/// What SIGHUP does: the audit log is reopened.
pub fn on_hangup(observer: &Observer) {
    tracing::info!("SIGHUP: reopening the audit log");
    observer.reopen();
}
