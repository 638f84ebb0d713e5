//! `ferry diff`: what changes in the served tools between two curation files (against the
//! same document) or two documents (against the same curation), for review before a reload
//! or a deploy.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use ferry::lock::{self, Change, Digests};
use serde_json::json;

use ferry::load::{Loaded, SourceArgs, load_chosen};

use super::Format;

/// The version of `ferry diff --format json`'s shape; bumped only on a breaking change.
const DIFF_FORMAT_VERSION: u32 = 1;

#[derive(Debug, ClapArgs)]
pub struct DiffArgs {
    /// The old curation file (an OpenAPI document with --documents).
    pub old: String,
    /// The new curation file (an OpenAPI document with --documents).
    pub new: String,
    /// OLD and NEW are OpenAPI documents, both compiled with the curation --config names
    /// (default: ferry.yaml, when it exists).
    #[arg(long)]
    pub documents: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Exit code 0 when both serve the same, 1 when they differ, 2 when either cannot be
/// compiled (its errors on stderr) or read.
pub fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let side = |file: &str| {
        let mut source = args.source.clone();
        if args.documents {
            source.openapi = Some(file.to_string());
        } else {
            source.config = Some(file.into());
        }
        source
    };
    let old = load_chosen(&side(&args.old))?;
    let new = load_chosen(&side(&args.new))?;
    let mut broken = false;
    for (file, loaded) in [(&args.old, &old), (&args.new, &new)] {
        if loaded.has_errors() {
            broken = true;
            for diagnostic in loaded.diagnostics.iter().filter(|d| d.is_error()) {
                eprintln!("{file}: {diagnostic}");
            }
        }
    }
    if broken {
        eprintln!(
            "ferry: cannot compare catalogs with errors: fix them, then run `ferry diff` again"
        );
        return Ok(ExitCode::from(2));
    }
    let changes = changes(&old, &new);
    let text = match args.format {
        Format::Json => {
            let mut report = json!({
                "version": DIFF_FORMAT_VERSION,
                "same": changes.is_empty(),
                "tools": {"old": old.catalog.tools.len(), "new": new.catalog.tools.len()},
                "changes": changes,
            });
            // Composite tools are counted apart, where there are any.
            let composite = |catalog: &ferry::catalog::Catalog| {
                catalog
                    .tools
                    .iter()
                    .filter(|tool| tool.workflow().is_some())
                    .count()
            };
            let (before, after) = (composite(&old.catalog), composite(&new.catalog));
            if before + after > 0 {
                report["workflows"] = json!({"old": before, "new": after});
            }
            let mut text = serde_json::to_string_pretty(&report)?;
            text.push('\n');
            text
        }
        Format::Text => text(&changes, new.catalog.tools.len()),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if changes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What differs between two loaded catalogs, tools and server-wide settings.
fn changes(old: &Loaded, new: &Loaded) -> Vec<Change> {
    lock::diff(&Digests::new(&old.catalog), &Digests::new(&new.catalog))
}

/// One change a line, then a summary.
pub fn text(changes: &[Change], tools: usize) -> String {
    let mut text: String = changes.iter().map(|change| format!("{change}\n")).collect();
    let count = |kind: fn(&Change) -> bool| changes.iter().filter(|c| kind(c)).count();
    if changes.is_empty() {
        text.push_str(&format!("no change: the same {tools} tools and settings\n"));
    } else {
        text.push_str(&format!(
            "{} added, {} removed, {} changed, {} settings changed\n",
            count(|c| matches!(c, Change::ToolAdded { .. })),
            count(|c| matches!(c, Change::ToolRemoved { .. })),
            count(|c| matches!(c, Change::ToolChanged { .. })),
            count(|c| matches!(c, Change::SettingChanged { .. })),
        ));
    }
    text
}
