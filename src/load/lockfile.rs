//! The lock beside a curation file, read: `ferry check` reports the drift from it,
//! `ferry serve --locked` (and each reload) refuses to serve past it.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::catalog::Catalog;
use crate::diagnostic::{Diagnostic, Location};
use crate::lock::{self, Lock};
use crate::openapi::Document;

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
    let text = match crate::file::read_text(path, MAX_LOCK_BYTES) {
        Ok(text) => text,
        Err(crate::file::FileError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    lock::from_text(&text)
        .map(Some)
        .map_err(|message| anyhow::anyhow!("{}: {message}", path.display()))
}

pub fn curation_bytes(config: Option<&Path>) -> anyhow::Result<Option<Vec<u8>>> {
    config
        .map(|path| {
            crate::file::read(path, crate::curation::MAX_CURATION_BYTES)
                .with_context(|| format!("reading {}", path.display()))
        })
        .transpose()
}
