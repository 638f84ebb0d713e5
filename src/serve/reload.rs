//! Reloading what `ferry serve` serves without a restart, and without risk: on SIGHUP, and
//! with `--watch` when the curation file or the document's files change, the files are read,
//! compiled and checked again exactly as at start-up (`--locked` included). Any error keeps
//! the catalog served now (every diagnostic is logged and the reload counted as failed);
//! otherwise everything built from the files (the `Server` with its tools, the upstream
//! client, the authenticator) is swapped in whole, and the diff is logged. Calls in flight
//! finish on the server they began with.
//!
//! What the command line decides is not reloaded: the listen address, TLS files, workers
//! and the other transport flags.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use tokio::sync::watch;

use crate::diagnostic::{Diagnostic, Severity};
use crate::load::{Loaded, SourceArgs, load_chosen_alone, lockfile};
use crate::lock::{self, Change, Digests};
use crate::mcp::Serving;
use crate::serve::args::TransportArgs;
use crate::serve::servers::{Reporting, build};

/// How often `--watch` looks at the files. A change is reloaded once the files have looked
/// the same at two looks in a row, so a save written in several steps is one reload.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(1);

/// What a reload reads again, and what is served now.
pub struct Reload {
    source: SourceArgs,
    locked: bool,
    transport: TransportArgs,
    watch: bool,
    /// What the diff compares of the catalog served now: start-up's is digested off the path
    /// to the first answer, and given to [`Reload::run`].
    digests: Digests,
    /// The curation file and the document's local files, as last read.
    files: Vec<PathBuf>,
    /// What `files` looked like just before they were last read.
    seen: Look,
}

impl Reload {
    /// For the catalog `loaded` from `source` (its document still held, to name its files),
    /// served over `transport`, held to its lock when `locked`, its files watched when
    /// `watch`. Called at once after loading: a change made since is seen by the first look.
    pub fn new(
        source: &SourceArgs,
        transport: &TransportArgs,
        locked: bool,
        watch: bool,
        loaded: &Loaded,
    ) -> Reload {
        let files = watched(source, loaded);
        Reload {
            source: source.clone(),
            locked,
            transport: transport.clone(),
            watch,
            digests: Digests::default(),
            seen: look(&files),
            files,
        }
    }

    /// Reloads into `served` (each endpoint's path and server) on every SIGHUP `hangups`
    /// counts and, watching, on every settled change of the files, until dropped. `digested`
    /// digests what is served now.
    pub async fn run(
        mut self,
        served: Vec<(String, Serving)>,
        mut hangups: watch::Receiver<u64>,
        reporting: Reporting,
        digested: tokio::task::JoinHandle<Digests>,
    ) {
        self.digests = match digested.await {
            Ok(digests) => digests,
            // Without them every tool of the next reload is told as added; it is served
            // all the same.
            Err(error) => {
                tracing::error!(%error, "could not digest the catalog served");
                Digests::default()
            }
        };
        let mut signals = true;
        if self.watch {
            tracing::info!(
                files = self.files.len(),
                interval_ms = WATCH_INTERVAL.as_millis() as u64,
                "watching the curation and document files"
            );
        }
        let mut ticks = tokio::time::interval(WATCH_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // What the files looked like at the last look, when that differed from `seen`.
        let mut changing = None;
        loop {
            tokio::select! {
                changed = hangups.changed(), if signals => {
                    if changed.is_err() {
                        signals = false;
                        continue;
                    }
                    self.reload(&served, "SIGHUP", &reporting).await;
                    changing = None;
                }
                _ = ticks.tick(), if self.watch => {
                    let now = looks(&self.files).await;
                    if now == self.seen {
                        changing = None;
                    } else if changing.as_ref() == Some(&now) {
                        self.reload(&served, "files changed", &reporting).await;
                        changing = None;
                    } else {
                        changing = Some(now);
                    }
                }
                else => return,
            }
        }
    }

    /// Reads, compiles and checks the files again, and serves them when nothing is wrong.
    /// What the files look like is taken first, so that a save made while they are read is
    /// a change still to reload.
    async fn reload(
        &mut self,
        served: &[(String, Serving)],
        cause: &'static str,
        reporting: &Reporting,
    ) {
        let observer = reporting.observer.as_ref();
        tracing::info!(cause, "reloading the catalog");
        let before = (self.files.clone(), looks(&self.files).await);
        let reloaded = self.try_reload(served, reporting).await;
        if let Some(observer) = observer {
            observer.reloaded(reloaded.is_ok());
        }
        match reloaded {
            Ok(()) => {}
            Err(error) => {
                tracing::error!(
                    cause,
                    error = %format!("{error:#}"),
                    "reload failed; still serving the catalog loaded before"
                );
            }
        }
        self.seen = if before.0 == self.files {
            before.1
        } else {
            looks(&self.files).await
        };
    }

    async fn try_reload(
        &mut self,
        served: &[(String, Serving)],
        reporting: &Reporting,
    ) -> anyhow::Result<()> {
        let observer = reporting.observer.as_ref();
        let (source, locked) = (self.source.clone(), self.locked);
        // Reading, compiling, digesting and dropping the document block: off the thread that
        // serves requests.
        let (loaded, files, digests) = tokio::task::spawn_blocking(move || {
            // On one thread: the server goes on serving meanwhile, and loses one core at most.
            let mut loaded = load_chosen_alone(&source)?;
            if locked {
                lockfile::enforce(&loaded.catalog, loaded.config.as_deref())?;
            }
            let files = watched(&source, &loaded);
            loaded.documents = Vec::new();
            let clean = !loaded
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.severity == Severity::Error);
            let digests = clean.then(|| Digests::new(&loaded.catalog));
            anyhow::Ok((loaded, files, digests))
        })
        .await
        .context("reading the files")??;
        // A curation that now names another document is watched with it, even when it does
        // not compile: fixing it is a change too.
        self.files = files;
        let errors = log_diagnostics(&loaded.diagnostics);
        // Digested only when no diagnostic is an error: the same test `errors` counts.
        let Some(digests) = digests else {
            anyhow::bail!("{errors} error(s) in the catalog");
        };
        let servers = build(&loaded.catalog, &self.transport, reporting).await?;
        // Listeners route by path: a reload swaps what each endpoint serves, every one of
        // them or none, but cannot add, remove or move one.
        let now: Vec<&str> = servers.iter().map(|(path, _)| path.as_str()).collect();
        let before: Vec<&str> = served.iter().map(|(path, _)| path.as_str()).collect();
        if now != before {
            anyhow::bail!(
                "the endpoints changed (now {}, serving {}): restart ferry to serve them",
                now.join(", "),
                before.join(", ")
            );
        }
        // The catalog the server was built from goes on a blocking thread too.
        tokio::task::spawn_blocking(move || drop(loaded));
        let changes = lock::diff(&self.digests, &digests);
        // Who reaches which tool follows `auth:` too, and with it each caller's list.
        let tools_changed = changes.iter().any(|change| match change {
            Change::SettingChanged { setting } => {
                setting == "auth" || setting.starts_with("endpoints.")
            }
            _ => true,
        });
        for ((_, serving), (_, server)) in served.iter().zip(servers) {
            serving.replace(Arc::new(server), tools_changed);
        }
        let digest = digests.digest();
        for change in &changes {
            tracing::info!(%change, "catalog changed");
        }
        tracing::info!(
            tools = digests.tools(),
            changes = changes.len(),
            %digest,
            "catalog reloaded"
        );
        if let Some(observer) = observer {
            observer.catalog(digests.tools(), &digest);
        }
        self.digests = digests;
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

/// The files a change of which is a reason to reload: the curation file, each API's
/// document (unless fetched over http(s)) and every local file it refers to.
fn watched(source: &SourceArgs, loaded: &Loaded) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = loaded.config.iter().cloned().collect();
    for (part, (_, document)) in loaded
        .curation
        .api_curations()
        .iter()
        .filter(|part| part.openapi.is_some())
        .zip(&loaded.documents)
    {
        let Some(location) = &part.openapi else {
            continue;
        };
        if is_remote(location) {
            continue;
        }
        let root_file = part.dir.join(location);
        let root = source
            .ref_root
            .clone()
            .or_else(|| root_file.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        if !files.contains(&root_file) {
            files.push(root_file);
        }
        for file in &document.files {
            if !file.name.is_empty() && !is_remote(&file.name) {
                let path = root.join(&file.name);
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
    }
    // The Arazzo documents: each API's, and the one a file with `apis:` names at its top.
    let curations = loaded.curation.api_curations();
    let top = (!loaded.curation.apis.is_empty()).then_some(&loaded.curation);
    for curation in curations.iter().chain(top) {
        if let Some(workflows) = &curation.workflows
            && !is_remote(&workflows.document)
        {
            let path = curation.dir.join(&workflows.document);
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

fn is_remote(location: &str) -> bool {
    location.starts_with("http://") || location.starts_with("https://")
}

/// What each file looks like: its size and modification time, or nothing when it cannot be
/// read (gone, say).
type Look = Vec<Option<(u64, SystemTime)>>;

fn look(files: &[PathBuf]) -> Look {
    files
        .iter()
        .map(|file| {
            let metadata = std::fs::metadata(file).ok()?;
            Some((metadata.len(), metadata.modified().ok()?))
        })
        .collect()
}

/// [`look`], off the thread that serves requests.
async fn looks(files: &[PathBuf]) -> Look {
    let files = files.to_vec();
    tokio::task::spawn_blocking(move || look(&files))
        .await
        .unwrap_or_default()
}
