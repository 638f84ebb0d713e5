//! `ferry serve`: load the chosen operations, hold them to the lock with `--locked`, and
//! serve them as the library's assembly does ([`ferry::serve`]), announcing the endpoint to
//! a client with `--client`.

use std::path::Path;
use std::process::ExitCode;

use clap::Args as ClapArgs;

use ferry::catalog::Catalog;
use ferry::clients::{Client, Connection};
use ferry::load::{SourceArgs, lockfile};
use ferry::serve::args::TransportArgs;
use ferry::serve::reload::Reload;
use ferry::serve::serve_catalog;

use super::connect;

#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Refuse to serve a catalog whose tools differ from ferry.lock (beside the curation
    /// file): what was reviewed is what runs.
    #[arg(long)]
    pub locked: bool,
    /// Reload when the curation file or the document's files change (looked at every
    /// second), as on SIGHUP.
    #[arg(long, env = "FERRY_WATCH")]
    pub watch: bool,
    /// Print this client's configuration for this server once it listens (HTTP).
    #[arg(long, value_name = "NAME", value_parser = connect::client_parser(), conflicts_with = "stdio")]
    pub client: Option<Client>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut loaded = ferry::load::load_chosen(&args.source)?;
    let reload = Reload::new(
        &args.source,
        &args.transport,
        args.locked,
        args.watch,
        &loaded,
    );
    // Serving never reads the document again.
    loaded.documents = Vec::new();
    let ferry::load::Loaded {
        catalog,
        diagnostics,
        config,
        ..
    } = loaded;
    if args.locked
        && let Err(error) = lockfile::enforce(&catalog, config.as_deref())
    {
        // Drift is a problem found, as `ferry check --locked` reports it: exit 1.
        if error.is::<lockfile::Drifted>() {
            eprintln!("ferry: {error:#}");
            return Ok(ExitCode::from(1));
        }
        return Err(error);
    }
    let announce = args.client.map(|client| {
        let mut stdio = stdio_args(&args, config.as_deref());
        // Over stdio one endpoint is served: the first, whose URL is announced.
        if let Some(endpoint) = catalog.endpoints.first() {
            stdio.extend(["--endpoint".to_string(), endpoint.id.clone()]);
        }
        let env = secret_variables(&catalog);
        move |endpoint: &str| {
            let connection = Connection {
                name: "ferry".to_string(),
                url: endpoint.to_string(),
                command: connect::this_binary(),
                args: stdio.clone(),
                env: env.clone(),
            };
            eprintln!(
                "\nferry serve: MCP endpoint {endpoint}\n\n{}",
                connect::instructions(&connection, Some(client))
            );
        }
    });
    let announce = announce.as_ref().map(|announce| announce as &dyn Fn(&str));
    serve_catalog(
        catalog,
        &diagnostics,
        &args.transport,
        Some(reload),
        announce,
    )
}

/// The arguments of a `ferry serve --stdio` that serves what `args` serves, for a client that
/// starts ferry itself: the same files, as absolute paths, and the same choices.
fn stdio_args(args: &ServeArgs, config: Option<&Path>) -> Vec<String> {
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string()
    };
    let source = &args.source;
    let mut out = vec!["serve".to_string(), "--stdio".to_string()];
    if let Some(config) = config {
        out.extend(["--config".to_string(), absolute(config)]);
    }
    if let Some(openapi) = &source.openapi {
        let location = if openapi.starts_with("http://") || openapi.starts_with("https://") {
            openapi.clone()
        } else {
            // A document given beside a curation file is read from the curation's folder.
            let folder = config.and_then(Path::parent).unwrap_or(Path::new(""));
            absolute(&folder.join(openapi))
        };
        out.extend(["--openapi".to_string(), location]);
    }
    if let Some(upstream) = &source.upstream {
        out.extend(["--upstream".to_string(), upstream.clone()]);
    }
    if let Some(root) = &source.ref_root {
        out.extend(["--ref-root".to_string(), absolute(root)]);
    }
    for (set, flag) in [
        (source.all, "--all"),
        (source.allow_remote_refs, "--allow-remote-refs"),
        (args.locked, "--locked"),
        (args.watch, "--watch"),
    ] {
        if set {
            out.push(flag.to_string());
        }
    }
    out
}

/// The environment variables serving `catalog` reads at start (its upstream credential's and
/// the confirmation key's): a client that starts ferry must pass them.
fn secret_variables(catalog: &Catalog) -> Vec<String> {
    let mut variables: Vec<String> = catalog
        .apis
        .iter()
        .filter_map(|api| api.upstream_auth.as_ref())
        .flat_map(|auth| auth.env_vars())
        .map(str::to_string)
        .collect();
    variables.extend(catalog.confirm.key_env.iter().cloned());
    variables
}
