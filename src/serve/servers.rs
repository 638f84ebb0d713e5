//! What serving builds from the files, the same at start-up and on every reload: the
//! upstream client, and for each MCP endpoint its authenticator and `Server` ([`build`]), with
//! what every server of the process shares ([`Reporting`]).

use std::sync::Arc;

use anyhow::Context;

use crate::auth::Authenticator;
use crate::catalog::Catalog;
use crate::mcp::confirm::ConfirmKey;
use crate::mcp::{Server, ServerOptions};
use crate::observe::Observer;
use crate::serve::args::TransportArgs;
use crate::transport::http;
use crate::upstream::Upstream;

/// What every server one process builds shares, start-up's and each reload's: where it
/// reports beside the log (the audit log and metrics, the span exporter), the confirmation
/// nonces already answered, and the rate-limit budgets already spent (both in the process,
/// or in the state replicas share with `--state`).
#[derive(Clone)]
pub struct Reporting {
    pub observer: Option<Observer>,
    pub traces: Option<crate::trace::Exporter>,
    /// The confirmation nonces answered in this process, whichever server took them.
    pub confirm_nonces: Arc<crate::mcp::confirm::Nonces>,
    /// The key that seals confirmation state when the curation names none: made once, so a
    /// reload keeps the confirmations already asked for.
    pub confirm_key: ConfirmKey,
    /// Every caller's rate-limit budgets, so that a reload gives nobody a new one.
    pub limiter: Arc<crate::mcp::limit::Limiter>,
}

/// Nothing reported beside the log, and confirmations and budgets held in this process.
impl Default for Reporting {
    fn default() -> Reporting {
        Reporting {
            observer: None,
            traces: None,
            confirm_nonces: Arc::default(),
            confirm_key: ConfirmKey::generate(),
            limiter: Arc::default(),
        }
    }
}

/// Builds everything that serving takes from the files: the upstream client (one, shared by
/// every endpoint), and for each endpoint its authenticator (its signing keys fetched) and
/// server, with the path it is served at. Without `endpoints:`, one server of every tool at
/// [`http::ENDPOINT`]; on stdio, the one endpoint `--endpoint` names. Start-up and every
/// reload build it the same way.
pub async fn build(
    catalog: &Catalog,
    args: &TransportArgs,
    reporting: &Reporting,
) -> anyhow::Result<Vec<(String, Server)>> {
    let upstream = Upstream::new(catalog)
        .context("setting up the upstream client")?
        .with_traces(reporting.traces.clone());
    let ids = || {
        let ids: Vec<&str> = catalog.endpoints.iter().map(|e| e.id.as_str()).collect();
        ids.join(", ")
    };
    let mut servers = Vec::new();
    if catalog.endpoints.is_empty() {
        if args.endpoint.is_some() {
            anyhow::bail!("--endpoint names an endpoint, but the curation lists no `endpoints:`");
        }
        let server = build_server(catalog, upstream, args, reporting).await?;
        servers.push((http::ENDPOINT.to_string(), server));
    } else if args.stdio {
        let Some(id) = &args.endpoint else {
            anyhow::bail!(
                "the curation lists several endpoints ({}): choose the one to serve on stdio with --endpoint ID",
                ids()
            );
        };
        let Some(chosen) = catalog.endpoint(id) else {
            anyhow::bail!("no endpoint {id:?}: the curation lists {}", ids());
        };
        let server = build_server(&chosen, upstream, args, reporting).await?;
        servers.push((http::ENDPOINT.to_string(), server));
    } else {
        if args.endpoint.is_some() {
            anyhow::bail!(
                "--endpoint chooses what stdio serves; over HTTP every endpoint is served"
            );
        }
        for endpoint in &catalog.endpoints {
            let chosen = catalog
                .endpoint(&endpoint.id)
                .context("an endpoint of the catalog")?;
            let reporting = Reporting {
                observer: (reporting.observer.as_ref()).map(|o| o.for_endpoint(&endpoint.id)),
                ..reporting.clone()
            };
            let server = build_server(&chosen, upstream.clone(), args, &reporting)
                .await
                .with_context(|| format!("endpoint {}", endpoint.id))?;
            servers.push((endpoint.path.clone(), server));
        }
    }
    Ok(servers)
}

/// One endpoint's server: `catalog`'s tools, served with its authorization.
async fn build_server(
    catalog: &Catalog,
    upstream: Upstream,
    args: &TransportArgs,
    reporting: &Reporting,
) -> anyhow::Result<Server> {
    let auth = catalog.auth.as_ref();
    let authenticator = if args.stdio {
        if auth.is_some() {
            tracing::info!(
                "auth: applies to HTTP only; on stdio the process's owner is the caller"
            );
        }
        Authenticator::none()
    } else {
        crate::auth::check_exposure(&args.listen.to_string(), auth)?;
        let tool_scopes = auth
            .map(|auth| crate::auth::tool_scopes(catalog, auth))
            .unwrap_or_default();
        Authenticator::new(auth, tool_scopes).context("setting up authorization")?
    };
    authenticator.warm().await;
    let options = ServerOptions {
        authenticator,
        observer: reporting.observer.clone(),
        traces: reporting.traces.clone(),
        confirm_key: Some(confirm_key(catalog)?.unwrap_or_else(|| reporting.confirm_key.clone())),
        confirm_nonces: Arc::clone(&reporting.confirm_nonces),
        limiter: Arc::clone(&reporting.limiter),
        ..ServerOptions::default()
    };
    Ok(Server::new(catalog, Some(upstream), options))
}

/// The key that seals confirmation state: `confirm_key`'s variable, which must be set;
/// without one, `None` (a key generated for this process), with a warning when some tool
/// confirms, since copies of ferry behind one address must share a key.
fn confirm_key(catalog: &Catalog) -> anyhow::Result<Option<ConfirmKey>> {
    let Some(name) = &catalog.confirm.key_env else {
        return Ok(None);
    };
    let value = std::env::var(name)
        .with_context(|| format!("reading the confirmation key from ${name} (`confirm_key`)"))?;
    let key = ConfirmKey::new(value.as_bytes()).with_context(|| {
        format!(
            "the confirmation key in ${name} is shorter than {} bytes: use a long random value, such as `openssl rand -hex 32`",
            ConfirmKey::MIN_LEN
        )
    })?;
    Ok(Some(key))
}
