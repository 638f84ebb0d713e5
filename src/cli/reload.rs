//! Reloading what `ferry serve` serves without a restart, and without risk: on SIGHUP the
//! files are read, compiled and checked again exactly as at start-up (`--locked` included). Any error keeps
//! the catalog served now (every diagnostic is logged and the reload counted as failed);
//! otherwise everything built from the files (the `Server` with its tools, the upstream
//! client, the authenticator) is swapped in whole, and the diff is logged. Calls in flight
//! finish on the server they began with.
//!
//! What the command line decides is not reloaded: the listen address, TLS files, workers
//! and the other transport flags.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use ferry::diagnostic::{Diagnostic, Severity};
use ferry::lock::{self, Change};
use ferry::mcp::Serving;

use tokio::sync::watch;

use super::serve::{ServeArgs, TransportArgs, build, upstream_config};
use super::{Loaded, SourceArgs, diff, load_chosen};

/// What a reload reads again, and what is served now.
pub struct Reload {
    source: SourceArgs,
    locked: bool,
    transport: TransportArgs,
    /// The server-wide settings of the catalog served now, for the diff.
    settings: BTreeMap<String, String>,
    /// [`lock::digest`] of the catalog served now.
    digest: String,
}

impl Reload {
    /// For the catalog `loaded` from `args`.
    pub fn new(args: &ServeArgs, loaded: &Loaded) -> Reload {
        let settings = diff::settings(&loaded.catalog, &loaded.curation);
        let digest = lock::digest(&loaded.catalog.tools, &settings);
        record_catalog(&digest, None, loaded.catalog.tools.len());
        Reload {
            source: args.source.clone(),
            locked: args.locked,
            transport: args.transport.clone(),
            settings,
            digest,
        }
    }

    /// Reloads into `serving` on every SIGHUP `hangups` counts, until dropped.
    pub async fn run(mut self, serving: Serving, mut hangups: watch::Receiver<u64>) {
        while hangups.changed().await.is_ok() {
            self.reload(&serving, "SIGHUP").await;
        }
    }

    /// Reads, compiles and checks the files again, and serves them when nothing is wrong.
    async fn reload(&mut self, serving: &Serving, cause: &'static str) {
        tracing::info!(cause, "reloading the catalog");
        match self.try_reload(serving).await {
            Ok(()) => metrics::counter!("ferry_reloads_total", "result" => "ok").increment(1),
            Err(error) => {
                tracing::error!(
                    cause,
                    error = %format!("{error:#}"),
                    "reload failed; still serving the catalog loaded before"
                );
                metrics::counter!("ferry_reloads_total", "result" => "failed").increment(1);
            }
        }
    }

    async fn try_reload(&mut self, serving: &Serving) -> anyhow::Result<()> {
        let (source, locked) = (self.source.clone(), self.locked);
        // Reading and compiling block: off the thread that serves requests.
        let mut loaded = tokio::task::spawn_blocking(move || {
            let loaded = load_chosen(&source)?;
            if locked {
                super::lock::enforce(&loaded.catalog, &loaded.curation, loaded.config.as_deref())?;
            }
            anyhow::Ok(loaded)
        })
        .await
        .context("reading the files")??;
        loaded.document = None;
        let errors = log_diagnostics(&loaded.diagnostics);
        if errors > 0 {
            anyhow::bail!("{errors} error(s) in the catalog");
        }
        let server = build(
            &loaded.catalog,
            &upstream_config(&loaded.curation),
            loaded.curation.auth.as_ref(),
            &self.transport,
        )
        .await?;
        let settings = diff::settings(&loaded.catalog, &loaded.curation);
        let digest = lock::digest(&loaded.catalog.tools, &settings);
        let changes = lock::diff(
            serving.load().tools(),
            &self.settings,
            &loaded.catalog.tools,
            &settings,
        );
        // Who reaches which tool follows `auth:` too, and with it each caller's list.
        let tools_changed = changes.iter().any(|change| match change {
            Change::SettingChanged { setting } => setting == "auth",
            _ => true,
        });
        serving.replace(Arc::new(server), tools_changed);
        for change in &changes {
            tracing::info!(%change, "catalog changed");
        }
        tracing::info!(
            tools = loaded.catalog.tools.len(),
            changes = changes.len(),
            %digest,
            "catalog reloaded"
        );
        record_catalog(&digest, Some(&self.digest), loaded.catalog.tools.len());
        self.settings = settings;
        self.digest = digest;
        Ok(())
    }
}

/// Logs each diagnostic of a reload, errors at `error` and warnings at `warn`; returns how
/// many are errors.
fn log_diagnostics(diagnostics: &[Diagnostic]) -> usize {
    let mut errors = 0;
    for diagnostic in diagnostics {
        let location = &diagnostic.location;
        let operations = diagnostic.operations.join(", ");
        match diagnostic.severity {
            Severity::Error => {
                errors += 1;
                tracing::error!(%location, operations, problem = %diagnostic.message, "reload: error in the catalog");
            }
            Severity::Warning => {
                tracing::warn!(%location, operations, problem = %diagnostic.message, "reload: warning");
            }
        }
    }
    errors
}

/// The catalog facts a scrape sees: how many tools are served, and which catalog (its
/// digest as the label of an info gauge, the one it replaced set to 0).
fn record_catalog(digest: &str, replaced: Option<&str>, tools: usize) {
    metrics::gauge!("ferry_tools_served").set(tools as f64);
    if let Some(replaced) = replaced.filter(|replaced| *replaced != digest) {
        metrics::gauge!("ferry_catalog_info", "digest" => replaced.to_string()).set(0.0);
    }
    metrics::gauge!("ferry_catalog_info", "digest" => digest.to_string()).set(1.0);
}
