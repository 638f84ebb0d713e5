//! `ferry lock`, and holding `ferry check --locked` and `ferry serve --locked` to the lock.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use ferry::catalog::Catalog;
use ferry::diagnostic::{Diagnostic, Location};
use ferry::lock::{self, Lock};
use ferry::openapi::Document;

use super::{LockArgs, load_catalog};

pub fn run(args: &LockArgs) -> anyhow::Result<ExitCode> {
    let loaded = load_catalog(&args.source)?;
    if loaded.has_errors() {
        for diagnostic in loaded.diagnostics.iter().filter(|d| d.is_error()) {
            eprintln!("{diagnostic}");
        }
        bail!(
            "not writing a lock for a catalog with errors: fix them, then run `ferry lock` again"
        );
    }
    let curation = curation_bytes(loaded.config.as_deref())?;
    if loaded.documents.is_empty() {
        bail!("the documents were not kept for the lock");
    }
    let lock = lock::lock(&loaded.catalog, &loaded.documents, curation.as_deref());
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| path_for(loaded.config.as_deref()));
    write_atomically(&path, lock::to_text(&lock).as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    let composite = lock
        .tools
        .values()
        .filter(|tool| matches!(tool.source, ferry::catalog::Source::Workflow(_)))
        .count();
    let composite = match composite {
        0 => String::new(),
        count => format!(", {count} of them composite"),
    };
    eprintln!(
        "wrote {} with {} tools of {} operations{composite}",
        path.display(),
        lock.tools.len(),
        lock.operations.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Where the lock of a curation file lives: beside it, or in the working directory when
/// there is no curation file.
pub fn path_for(config: Option<&Path>) -> PathBuf {
    match config.and_then(Path::parent) {
        Some(dir) => dir.join(lock::LOCK_FILE),
        None => PathBuf::from(lock::LOCK_FILE),
    }
}

/// For `ferry check`: the drift from the lock beside the curation, as warnings, and whether
/// there was any. `required` (`--locked`): a missing lock is an error too.
pub fn check(
    catalog: &Catalog,
    documents: &[(String, Document)],
    config: Option<&Path>,
    required: bool,
) -> anyhow::Result<(Vec<Diagnostic>, bool)> {
    let path = path_for(config);
    let Some(lock) = read(&path)? else {
        if required {
            let message = format!(
                "--locked, but there is no {}: write it with `ferry lock`",
                path.display()
            );
            return Ok((vec![Diagnostic::error(Location::General, message)], true));
        }
        return Ok((Vec::new(), false));
    };
    let mut diagnostics: Vec<Diagnostic> = lock::drift(&lock, catalog, true)
        .into_iter()
        .map(|drift| {
            Diagnostic::warning(
                Location::General,
                format!(
                    "drift from {}: {drift} (if that is intended, run `ferry lock` to accept it)",
                    path.display()
                ),
            )
        })
        .collect();
    let drifted = !diagnostics.is_empty();
    let bytes = curation_bytes(config)?;
    let changed = match documents {
        [] => Vec::new(),
        documents => lock::changed_files(&lock, documents, bytes.as_deref()),
    };
    if !changed.is_empty() {
        diagnostics.push(Diagnostic::warning(
            Location::General,
            format!(
                "changed since {} was written: {} (run `ferry lock` once the change is reviewed)",
                path.display(),
                changed.join(", ")
            ),
        ));
    }
    if lock.ferry != env!("CARGO_PKG_VERSION") {
        diagnostics.push(Diagnostic::warning(
            Location::General,
            format!(
                "{} was written by ferry {}, this is {}: request digests may differ for that reason alone",
                path.display(),
                lock.ferry,
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    Ok((diagnostics, drifted))
}

/// For `ferry serve --locked`: refuses a catalog whose tools, or whose upstream and
/// authorization settings, differ from the lock's.
pub fn enforce(catalog: &Catalog, config: Option<&Path>) -> anyhow::Result<()> {
    let path = path_for(config);
    let Some(lock) = read(&path)? else {
        bail!(
            "--locked, but there is no {}: write it with `ferry lock`",
            path.display()
        );
    };
    let drift = lock::drift(&lock, catalog, false);
    if drift.is_empty() {
        return Ok(());
    }
    for drift in &drift {
        eprintln!("drift from {}: {drift}", path.display());
    }
    Err(anyhow::Error::new(Drifted {
        lock: path.display().to_string(),
        ways: drift.len(),
    }))
}

/// The catalog differs from its lock: a problem found (exit 1), as `ferry check --locked`
/// says it, not a failure to run.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing to serve: the catalog differs from {lock} in {ways} ways; review them with `ferry check`, then run `ferry lock` again"
)]
pub struct Drifted {
    lock: String,
    ways: usize,
}

/// The largest lock read: a digest set per tool, about half a kilobyte each.
const MAX_LOCK_BYTES: u64 = 64 * 1024 * 1024;

fn read(path: &Path) -> anyhow::Result<Option<Lock>> {
    let text = match ferry::file::read_text(path, MAX_LOCK_BYTES) {
        Ok(text) => text,
        Err(ferry::file::FileError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    lock::from_text(&text)
        .map(Some)
        .map_err(|message| anyhow::anyhow!("{}: {message}", path.display()))
}

fn curation_bytes(config: Option<&Path>) -> anyhow::Result<Option<Vec<u8>>> {
    config
        .map(|path| {
            ferry::file::read(path, ferry::curation::MAX_CURATION_BYTES)
                .with_context(|| format!("reading {}", path.display()))
        })
        .transpose()
}

/// Writes `bytes` to `path` whole or not at all: into a new file beside it, synced, then
/// renamed over it. A symlink at `path` is refused rather than followed or replaced.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(metadata) = std::fs::symlink_metadata(path)
        && metadata.file_type().is_symlink()
    {
        bail!("it is a symlink; ferry writes a lock only as a plain file");
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| lock::LOCK_FILE.to_string());
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // `create_new` never follows or replaces what is already there, so a file by that name
    // that ferry did not make is left alone: only one it created is removed on failure.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .with_context(|| format!("creating {}", temporary.display()))?;
    let written = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)?;
        // The rename is durable once the folder is synced.
        std::fs::File::open(&dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(Into::into)
}
