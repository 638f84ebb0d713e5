//! Command-line arguments and the commands behind them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Parser, Subcommand};

mod demo;
mod serve;

#[derive(Debug, Parser)]
#[command(name = "ferry", version, about = "Serve an HTTP API's OpenAPI operations as MCP tools")]
pub struct Args {
    /// More log output on stderr (repeat for more); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report every problem in the document and curation, and what each operation becomes.
    Check(CheckArgs),
    /// Print the tools array exactly as `tools/list` serves it.
    Tools(SourceArgs),
    /// Write a starter curation file listing every operation, all switched off.
    Init(InitArgs),
    /// Serve the catalog over MCP (Streamable HTTP, or stdio with --stdio).
    Serve(serve::ServeArgs),
    /// Run a bundled example API and serve a curated catalog of it.
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, ClapArgs)]
pub struct InitArgs {
    /// The OpenAPI document to list.
    pub openapi: String,
    /// Where to write the curation file.
    #[arg(long, short = 'o', default_value = "ferry.yaml")]
    pub output: PathBuf,
}

pub fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "ferry=info",
        1 => "ferry=debug",
        _ => "ferry=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Check(check) => {
            let _ = check;
            todo!("ferry check")
        }
        Command::Tools(source) => {
            let _ = source;
            todo!("ferry tools")
        }
        Command::Init(init) => {
            let _ = init;
            todo!("ferry init")
        }
        Command::Serve(serve) => serve::run(serve),
        Command::Demo(demo) => demo::run(demo),
    }
}
