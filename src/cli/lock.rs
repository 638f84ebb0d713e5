//! `ferry lock`, and holding `ferry check --locked` and `ferry serve --locked` to the lock.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use ferry::lock;

use ferry::load::load_catalog;
use ferry::load::lockfile::{curation_bytes, path_for};

use super::LockArgs;

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
