//! `ferry demo`: a bundled pets API on loopback, served as MCP tools.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args as ClapArgs;

use ferry::clients::{Client, Connection};

use super::connect;
use ferry::serve::args::TransportArgs;
use ferry::serve::serve;
use ferry::serve::workers::runtime;

#[derive(Debug, ClapArgs)]
pub struct DemoArgs {
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Print this client's configuration for the demo once it listens [default: the Claude
    /// Code command]
    #[arg(long, value_name = "NAME", value_parser = connect::client_parser(), conflicts_with = "stdio")]
    pub client: Option<Client>,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let upstream = ferry::demo::start()
            .await
            .context("starting the pets API")?;
        tracing::info!(%upstream, "pets API listening");
        let (catalog, diagnostics) = ferry::demo::catalog(&upstream)?;
        for diagnostic in &diagnostics {
            eprintln!("{diagnostic}");
        }
        if diagnostics.iter().any(|diagnostic| diagnostic.is_error()) {
            anyhow::bail!("the bundled demo catalog has errors");
        }
        // Only HTTP announces: on stdio `serve` has no endpoint and never calls it.
        let announce = |endpoint: &str| eprintln!("{}", announcement(endpoint, args.client));
        serve(catalog, &args.transport, Some(&announce)).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What `ferry demo` tells the user once it listens: the endpoint and how to connect
/// `client` (see [`connect::instructions`]). A client that starts ferry itself runs
/// `ferry demo --stdio`.
fn announcement(endpoint: &str, client: Option<Client>) -> String {
    let connection = Connection {
        name: "ferry-pets".to_string(),
        url: endpoint.to_string(),
        command: connect::this_binary(),
        args: vec!["demo".to_string(), "--stdio".to_string()],
        env: Vec::new(),
    };
    format!(
        "\nferry demo: a pets API served as MCP tools\n\n  MCP endpoint: {endpoint}\n\n{}\n\
         Stop with Ctrl-C.\n",
        connect::instructions(&connection, client)
    )
}
