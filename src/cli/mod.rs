//! Command-line arguments and the commands behind them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args as ClapArgs, Parser, Subcommand};
use ferry::catalog::{self, Catalog};
use ferry::curation::{self, Curation};
use ferry::diagnostic::{Diagnostic, Location};
use ferry::openapi::{self, Document};

mod add;
mod connect;
mod demo;
mod diff;
mod discovery;
mod init;
mod lock;
mod observe;
mod reload;
mod report;
mod serve;
mod state;

/// `ferry --version`: the version, and the MCP revisions it serves.
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (MCP {})",
        env!("CARGO_PKG_VERSION"),
        ferry::mcp::SUPPORTED_VERSIONS.join(", ")
    )
});

#[derive(Debug, Parser)]
#[command(
    name = "ferry",
    version = VERSION.as_str(),
    about = "Serve an HTTP API's OpenAPI operations as MCP tools",
    after_help = EXAMPLES
)]
pub struct Args {
    /// More log output on stderr (repeat for more); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// How log lines on stderr are written.
    #[arg(long, global = true, value_enum, env = "FERRY_LOG_FORMAT", default_value_t = LogFormat::Text, help_heading = GLOBAL)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// The heading of the options every command takes, listed after each command's own.
const GLOBAL: &str = "Global options";

/// `ferry --help`'s closing lines: the commands in the order a first use runs them.
const EXAMPLES: &str = "\
Examples:
  ferry demo                        serve a bundled pets API, no network needed
  ferry init openapi.json           start here: write ferry.yaml, every operation off
  ferry check                       after switching some on: every problem, and what each becomes
  ferry serve --client claude-code  serve them on http://127.0.0.1:8080/mcp, and say how to connect";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report every problem in the document and curation, and what each operation becomes.
    Check(CheckArgs),
    /// Print the tools array `tools/list` serves (pretty-printed; --compact: its bytes).
    Tools(ToolsArgs),
    /// Write a starter curation file listing every operation, all switched off.
    Init(InitArgs),
    /// Write ferry.lock: what the catalog serves now, for `check --locked` and `serve --locked`.
    Lock(LockArgs),
    /// Show how two curation files (or two documents) differ in the tools they serve.
    Diff(diff::DiffArgs),
    /// Serve the catalog over MCP (Streamable HTTP, or stdio with --stdio).
    Serve(serve::ServeArgs),
    /// Serve a bundled pets API as MCP tools, on loopback, with no network or files needed.
    ///
    /// A small pets API (list, get, add and remove pets; a missing pet is an RFC 9457
    /// problem) runs inside ferry on a loopback port of its own, and its curated catalog is
    /// served as `ferry serve` would: the tools list_pets, get_pet, create_pet and delete_pet,
    /// and the composite tool add_pet_and_confirm (an Arazzo workflow). The pets are kept in
    /// memory and reset when the demo stops.
    Demo(demo::DemoArgs),
}

/// Where the document and curation come from; shared by every command that compiles.
#[derive(Debug, Clone, ClapArgs)]
pub struct SourceArgs {
    /// The curation file (default: ferry.yaml, when it exists).
    #[arg(long, short = 'c', env = "FERRY_CONFIG")]
    pub config: Option<PathBuf>,
    /// The OpenAPI document (path or http(s) URL); replaces the one the curation names.
    #[arg(long, env = "FERRY_OPENAPI")]
    pub openapi: Option<String>,
    /// The upstream base URL; replaces the curation's and the document's.
    #[arg(long, env = "FERRY_UPSTREAM")]
    pub upstream: Option<String>,
    /// Choose every operation of the document.
    #[arg(long)]
    pub all: bool,
    /// Follow the document's http(s) `$ref`s (and a fetched document's relative ones).
    #[arg(long, env = "FERRY_ALLOW_REMOTE_REFS")]
    pub allow_remote_refs: bool,
    /// The directory local `$ref`s may reach (default: the document's own directory).
    #[arg(long, env = "FERRY_REF_ROOT")]
    pub ref_root: Option<PathBuf>,
}

#[derive(Debug, ClapArgs)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also fail on annotations asserted by the curation but not justified by the method.
    #[arg(long)]
    pub strict: bool,
    /// Fail when the catalog has drifted from ferry.lock (beside the curation file), or
    /// there is no lock.
    #[arg(long)]
    pub locked: bool,
    /// Which operations the text report lists: the served tools and those that could not be
    /// (default, with one line counting the operations off), or all, served, off, problems.
    /// The JSON report always lists every operation.
    #[arg(long, value_enum)]
    pub operations: Option<Operations>,
}

/// The operations `ferry check` lists in its text report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Operations {
    /// Every operation of the document.
    All,
    /// The tools served.
    Served,
    /// The operations off: not chosen, switched off, or excluded by a tag.
    Off,
    /// The chosen operations that could not be tools (ineligible, or a name collision).
    Problems,
}

#[derive(Debug, ClapArgs)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the array exactly as `tools/list` serves it, byte for byte, on one line.
    #[arg(long)]
    pub compact: bool,
    /// Print what this endpoint (under the curation's `endpoints:`) serves; every tool by
    /// default.
    #[arg(long, value_name = "ID")]
    pub endpoint: Option<String>,
}

#[derive(Debug, ClapArgs)]
pub struct LockArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Where to write the lock [default: ferry.lock beside the curation file].
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, its fields as keys.
    Json,
}

#[derive(Debug, ClapArgs)]
pub struct InitArgs {
    /// The OpenAPI document to list.
    pub openapi: String,
    /// An Arazzo document whose workflows to list too, all off, under `workflows:`.
    #[arg(long, value_name = "FILE")]
    pub arazzo: Option<PathBuf>,
    /// Where to write the curation file.
    #[arg(long, short = 'o', default_value = "ferry.yaml")]
    pub output: PathBuf,
    /// Add the document as the API with this id to the existing curation file (--output)
    /// under `apis:`, instead of writing a new file.
    #[arg(long, value_name = "ID")]
    pub add: Option<String>,
}

/// Logs go to stderr only (stdout belongs to the stdio transport), as text or one JSON object
/// per line: `ferry=info` (`-v` debug, `-vv` trace; `RUST_LOG` overrides). `info` is the
/// lifecycle (catalog ready, listening, shutting down, retries, a refused scope); `warn` what
/// an operator should look at (upstream failures and timeouts, a body cut at the cap, keys not
/// refreshed); `error` ferry's own fault; `debug` a refused argument (by name), a call over a
/// rate limit or a token.
pub fn init_logging(verbose: u8, format: LogFormat) {
    let default = match verbose {
        0 => "ferry=info",
        1 => "ferry=debug",
        _ => "ferry=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A client may close our stderr; a log line that cannot be written is dropped
        // rather than reported on that same stderr (which would panic).
        .log_internal_errors(false);
    match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => builder.json().with_current_span(false).init(),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Check(check) => report::check(&check),
        Command::Tools(tools) => report::tools(&tools),
        Command::Init(args) => init::init(&args),
        Command::Lock(lock) => lock::run(&lock),
        Command::Diff(diff) => diff::run(&diff),
        Command::Serve(serve) => serve::run(serve),
        Command::Demo(demo) => demo::run(demo),
    }
}

/// What a compiling command works from: the compiled catalog and every problem found.
pub struct Loaded {
    pub catalog: Catalog,
    pub diagnostics: Vec<Diagnostic>,
    /// The curation as read, flags applied: serving needs its upstream settings.
    pub curation: Curation,
    /// The documents it was compiled from, each beside its API's id (empty for the one API
    /// of a file without `apis:`), for the lock (which records their files); a command that
    /// does not need them empties the list as soon as it can, since they can be larger than
    /// the catalog.
    pub documents: Vec<(String, Document)>,
    /// The curation file read, when there was one.
    pub config: Option<PathBuf>,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Reads the curation and the document the arguments name, and compiles them, judging every
/// operation (for `ferry check`).
pub fn load_catalog(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile)
}

/// [`load_catalog`] for `ferry check`'s report, without a lock to compare with: every
/// tool's input schema is dropped as soon as it is measured (see [`catalog::compile_report`]).
pub fn load_report(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_report)
}

/// [`load_catalog`] building only the chosen operations: the same tools and errors, faster,
/// for the commands that serve or print what is served.
pub fn load_chosen(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_chosen)
}

/// [`load_chosen`], compiling on the calling thread alone (see
/// [`catalog::compile_chosen_alone`]).
pub fn load_chosen_alone(source: &SourceArgs) -> anyhow::Result<Loaded> {
    load(source, catalog::compile_chosen_alone)
}

/// The signature of [`catalog::compile`], [`catalog::compile_chosen`] (and `_alone`) and
/// [`catalog::compile_report`].
type Compile = fn(&Document, &Curation) -> (Catalog, Vec<Diagnostic>);

/// The curation file the arguments name: `--config`, else ferry.yaml when there is one and
/// no `--openapi` was given.
pub fn config_path(source: &SourceArgs) -> Option<PathBuf> {
    match &source.config {
        Some(path) => Some(path.clone()),
        None if source.openapi.is_none() && Path::new(DEFAULT_CONFIG).exists() => {
            Some(PathBuf::from(DEFAULT_CONFIG))
        }
        None => None,
    }
}

fn load(source: &SourceArgs, compile: Compile) -> anyhow::Result<Loaded> {
    let config = config_path(source);
    let (mut curation, mut diagnostics) = match &config {
        Some(path) => curation::read(path)
            .with_context(|| format!("reading curation file {}", path.display()))?,
        None => (Curation::default(), Vec::new()),
    };
    if !curation.apis.is_empty() {
        for (flag, given) in [
            ("--openapi", source.openapi.is_some()),
            ("--upstream", source.upstream.is_some()),
        ] {
            if given {
                anyhow::bail!(
                    "{flag} names one API's, but {} lists several under `apis:`: set it in the API's entry",
                    config
                        .as_deref()
                        .unwrap_or(Path::new(DEFAULT_CONFIG))
                        .display()
                );
            }
        }
    }
    if source.openapi.is_some() {
        curation.openapi = source.openapi.clone();
        if config.is_none() {
            curation.dir = PathBuf::new();
        }
    }
    if source.upstream.is_some() {
        curation.upstream = source.upstream.clone();
    }
    curation.all |= source.all;
    if curation.apis.is_empty() && curation.openapi.is_none() {
        // The curation's own problems may be why it names no document: show them first.
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        anyhow::bail!(
            "no OpenAPI document: no {DEFAULT_CONFIG} here; run `ferry init DOC` to write one from your OpenAPI document, or pass --config FILE or --openapi DOC"
        );
    }
    let options = openapi::LoadOptions {
        allow_remote: source.allow_remote_refs,
        root_dir: source.ref_root.clone(),
        ..openapi::LoadOptions::default()
    };
    let mut parts = Vec::new();
    let mut documents = Vec::new();
    let mut api_curations = Vec::new();
    for part in curation.api_curations() {
        // An API without a document was reported when the file was read.
        let Some(location) = &part.openapi else {
            continue;
        };
        let document = load_document(location, &part, &options).map_err(|error| {
            match part.api_id.as_str() {
                "" => error,
                id => error.context(format!("API {id}")),
            }
        })?;
        let (catalog, found) = compile_api(&document, &part, compile, &options);
        diagnostics.extend(
            found
                .into_iter()
                .map(|found| found.within_api(&part.api_id)),
        );
        parts.push(catalog);
        documents.push((part.api_id.clone(), document));
        api_curations.push(part);
    }
    if parts.is_empty() {
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        anyhow::bail!("no API of the curation file could be read: see the errors above");
    }
    let (mut catalog, found) = catalog::join(&curation, parts);
    diagnostics.extend(found);
    if !curation.apis.is_empty() {
        let apis: Vec<catalog::WorkflowSource<'_>> = api_curations
            .iter()
            .zip(&documents)
            .map(|(curation, (_, document))| catalog::WorkflowSource { curation, document })
            .collect();
        diagnostics.extend(add_workflows(&mut catalog, &apis, &curation, &options));
    }
    // The whole list's budgets, once every tool, composite ones too, is known.
    diagnostics.extend(catalog::trim::catalog_budget(&catalog, &curation));
    diagnostics.extend(catalog::endpoints::resolve(&mut catalog, &curation));
    diagnostics.sort_by_key(|d| d.severity);
    Ok(Loaded {
        catalog,
        diagnostics,
        curation,
        documents,
        config,
    })
}

/// One API's catalog: its document compiled by `compile` with its part of the curation, and
/// the workflows it chooses added.
fn compile_api(
    document: &Document,
    curation: &Curation,
    compile: Compile,
    options: &openapi::LoadOptions,
) -> (Catalog, Vec<Diagnostic>) {
    let (mut catalog, mut diagnostics) = compile(document, curation);
    let api = catalog::WorkflowSource { curation, document };
    diagnostics.extend(add_workflows(&mut catalog, &[api], curation, options));
    diagnostics.extend(catalog::add_discovery(&mut catalog, document, curation));
    (catalog, diagnostics)
}

/// The composite tools `curation`'s `workflows:` chooses, added to `catalog`, their steps
/// calling `apis`: one API's, or at the top of a file with `apis:`, any of them.
fn add_workflows(
    catalog: &mut Catalog,
    apis: &[catalog::WorkflowSource<'_>],
    curation: &Curation,
    options: &openapi::LoadOptions,
) -> Vec<Diagnostic> {
    let Some(workflows) = &curation.workflows else {
        return Vec::new();
    };
    let path = curation.dir.join(&workflows.document);
    match openapi::load_file(&path, options) {
        Ok(file) => catalog::add_workflows_over(catalog, apis, curation, &file),
        Err(error) => vec![Diagnostic::error(
            Location::curation("workflows.document"),
            format!("cannot load the Arazzo document: {error}"),
        )],
    }
}

/// The curation file read when none is named.
pub const DEFAULT_CONFIG: &str = "ferry.yaml";

fn load_document(
    location: &str,
    curation: &Curation,
    options: &openapi::LoadOptions,
) -> anyhow::Result<Document> {
    if location.starts_with("http://") || location.starts_with("https://") {
        // Unless remote references are allowed, only the document itself is fetched.
        return openapi::load_url_blocking(location, options)
            .with_context(|| format!("loading OpenAPI document {location}"));
    }
    let path = curation.dir.join(location);
    openapi::load_with(&path, options)
        .with_context(|| format!("loading OpenAPI document {}", path.display()))
}
