//! `ferry serve`: compile the catalog, refuse to start on errors, then serve it.

use std::process::ExitCode;

use clap::Args as ClapArgs;

use super::SourceArgs;

#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Address to listen on.
    #[arg(long, env = "FERRY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    todo!("ferry serve")
}
