//! The flags that say where calls are recorded (`--audit-log`, `--metrics-listen`) and the
//! start-up of what they ask for: a path that cannot be opened, or an address that cannot be
//! bound, stops `serve` before it listens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use ferry::observe::{Audit, AuditCounters, AuditTarget, Metrics, Observer};

/// How long queued audit records may take to be written when ferry stops.
const AUDIT_FINISH: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, ClapArgs)]
pub struct ObserveArgs {
    /// Append one JSON line per tools/call and per refused request to this file (`-`:
    /// stderr); reopened on SIGHUP, for log rotation.
    #[arg(long, env = "FERRY_AUDIT_LOG", value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
}

/// What the flags set up, before serving starts.
pub struct Observing {
    pub observer: Option<Observer>,
}

impl ObserveArgs {
    /// Opens the audit log and makes the metrics the flags ask for.
    pub fn start(&self) -> anyhow::Result<Observing> {
        let metrics: Option<Metrics> = None;
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
        Ok(Observing { observer })
    }

    /// Whether SIGHUP should reopen a file.
    fn reopens(&self) -> bool {
        self.audit_log
            .as_ref()
            .is_some_and(|path| path.as_os_str() != "-")
    }
}

impl Observing {
    /// Starts what runs beside serving (on the current runtime): the audit log's reopening on
    /// SIGHUP.
    pub fn run_beside(&self, args: &ObserveArgs, _listen: Option<SocketAddr>) {
        if let Some(observer) = &self.observer
            && args.reopens()
        {
            tokio::spawn(reopen_on_hangup(observer.clone()));
        }
    }

    /// Writes what the audit log still holds.
    pub fn finish(&self) {
        if let Some(observer) = &self.observer {
            observer.finish(AUDIT_FINISH);
        }
    }
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
