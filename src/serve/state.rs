//! The flags that say where the state replicas share is kept (`--state` and its companions),
//! and its start-up: a URL ferry will not use, a password Redis refuses or a permission its
//! user lacks stops `serve` before it listens; a Redis that cannot be reached does not.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::mcp::confirm::Nonces;
use crate::mcp::limit::Limiter;
use crate::state::{self, OnFailure, Options};

/// The variable the shared state's password is read from: never the command line, where any
/// user of the machine may read it.
pub const PASSWORD_VARIABLE: &str = "FERRY_STATE_PASSWORD";
/// The largest CA file read.
const MAX_CA_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, ClapArgs)]
pub struct StateArgs {
    /// Keep rate-limit budgets and spent confirmation nonces in Redis, shared by every
    /// replica given the same URL: redis://[USER@]HOST[:PORT][/DB], or rediss:// for TLS. The
    /// password is read from $FERRY_STATE_PASSWORD, never from the URL. The user needs
    /// `+evalsha +script|load +get +set +time` on keys `~PREFIX*`. Without it, both stay in
    /// this process.
    // Read as text and checked by `state::connect`: clap would echo a refused value.
    #[arg(long = "state", env = "FERRY_STATE", value_name = "URL")]
    pub state: Option<String>,
    /// PEM certificates to trust for a rediss:// --state instead of the system's.
    #[arg(
        long = "state-ca-file",
        env = "FERRY_STATE_CA_FILE",
        value_name = "PATH",
        requires = "state"
    )]
    pub state_ca_file: Option<PathBuf>,
    /// Put before every key ferry writes in the shared state, so that deployments can share
    /// one Redis.
    #[arg(long, env = "FERRY_STATE_PREFIX", default_value = state::DEFAULT_PREFIX)]
    pub state_prefix: String,
    /// Longest one round trip to the shared state may take, in milliseconds; past it the
    /// failure rules apply.
    #[arg(long, env = "FERRY_STATE_TIMEOUT_MS", default_value_t = state::DEFAULT_TIMEOUT.as_millis() as u64,
        value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub state_timeout_ms: u64,
    /// What a rate-limited call does when the shared state does not answer in time: `closed`
    /// refuses it, `open` lets it through. A confirmation is refused either way.
    #[arg(long, env = "FERRY_STATE_ON_FAILURE", value_enum, default_value_t = FailureRule::Closed)]
    pub state_on_failure: FailureRule,
}

/// `--state-on-failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailureRule {
    Open,
    Closed,
}

impl StateArgs {
    /// The rate limiter and the confirmation nonces every server of this process shares: in
    /// the process, or in the shared state (connected, and checked, here). Must be called in
    /// the runtime that serves: the connection to Redis is driven there.
    pub async fn start(&self) -> anyhow::Result<(Arc<Limiter>, Arc<Nonces>)> {
        let Some(url) = &self.state else {
            return Ok((Arc::default(), Arc::default()));
        };
        let ca_certificates = self
            .state_ca_file
            .as_deref()
            .map(|path| {
                crate::file::read(path, MAX_CA_BYTES)
                    .with_context(|| format!("reading --state-ca-file {}", path.display()))
            })
            .transpose()?;
        let options = Options {
            url: url.clone(),
            password: std::env::var(PASSWORD_VARIABLE).ok(),
            ca_certificates,
            prefix: self.state_prefix.clone(),
            timeout: Duration::from_millis(self.state_timeout_ms),
            on_failure: match self.state_on_failure {
                FailureRule::Open => OnFailure::Open,
                FailureRule::Closed => OnFailure::Closed,
            },
        };
        let on_failure = options.on_failure;
        let shared = state::connect(options)
            .await
            .context("setting up the shared state (--state)")?;
        tracing::info!(
            redis = %shared.address(),
            prefix = %self.state_prefix,
            on_failure = on_failure.as_str(),
            "rate-limit budgets and confirmation nonces are shared through Redis"
        );
        Ok((
            Arc::new(Limiter::shared_by(shared.clone())),
            Arc::new(Nonces::shared_by(shared)),
        ))
    }
}
