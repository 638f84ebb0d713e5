//! Command-line arguments and the commands behind them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Parser, Subcommand};
use ferry::load::SourceArgs;

mod add;
mod connect;
mod demo;
mod diff;
mod discovery;
mod init;
mod lock;
mod report;
mod serve;

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
