//! `ferry demo`: a bundled pets API on loopback, served as MCP tools.

use std::process::ExitCode;

use clap::Args as ClapArgs;

#[derive(Debug, ClapArgs)]
pub struct DemoArgs {
    /// Address for the MCP endpoint.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    todo!("ferry demo")
}
