//! `ferry demo`: a bundled pets API on loopback, served as MCP tools.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args as ClapArgs;

use super::serve::{TransportArgs, runtime, serve};

#[derive(Debug, ClapArgs)]
pub struct DemoArgs {
    #[command(flatten)]
    pub transport: TransportArgs,
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
        let announce = |endpoint: &str| eprintln!("{}", announcement(endpoint));
        serve(catalog, &args.transport, Some(&announce)).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What `ferry demo` tells the user once it listens: the endpoint and a client configuration.
fn announcement(endpoint: &str) -> String {
    let config = serde_json::json!({
        "mcpServers": {
            "ferry-pets": { "type": "http", "url": endpoint }
        }
    });
    let config = serde_json::to_string_pretty(&config).unwrap_or_default();
    format!(
        "\nferry demo: a pets API served as MCP tools\n\n  MCP endpoint: {endpoint}\n\n\
         Client configuration (paste into your MCP client's settings):\n\n{config}\n\n\
         Stop with Ctrl-C.\n"
    )
}
